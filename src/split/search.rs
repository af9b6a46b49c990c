use serde::{Deserialize, Serialize};

use super::projection::{key_value, project_sort_keys};
use super::sort::sort_by_value;
use crate::atoms::AtomSet;
use crate::data::{Feature, Rows};

/// The impurity a split decreases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Criterion {
    /// Gini impurity, `sum_k p_k (1 - p_k)`.
    Gini,
    /// Shannon entropy in bits.
    Entropy,
}

impl Criterion {
    /// Per class, the contribution of weighted count `c` to a side's running sum.
    #[inline(always)]
    fn term(self, c: f64) -> f64 {
        match self {
            Criterion::Gini => c * c,
            Criterion::Entropy => {
                if c > 0.0 {
                    c * c.log2()
                } else {
                    0.0
                }
            }
        }
    }

    /// Weighted impurity `W * I` of a side with total weight `w` and running sum `s`.
    #[inline(always)]
    fn cost(self, w: f64, s: f64) -> f64 {
        match self {
            Criterion::Gini => w - s / w,
            Criterion::Entropy => w * w.log2() - s,
        }
    }

    /// Weighted impurity `W * I(S)` of a node with class weights `counts`.
    pub fn node_cost(self, counts: &[f64]) -> f64 {
        let total: f64 = counts.iter().sum();
        if total <= 0.0 {
            return 0.0;
        }
        self.cost(total, counts.iter().map(|&c| self.term(c)).sum())
    }
}

/// The samples a tree learns from, by local id: the row of X each stands for, its
/// class and its weight (sample weight times bootstrap count).
#[derive(Debug, Default, Clone)]
pub struct LocalSamples {
    /// Row of X of each local sample.
    pub row_of: Vec<u32>,
    /// Class index of each local sample.
    pub class_of: Vec<u32>,
    /// Weight of each local sample.
    pub weight_of: Vec<f64>,
}

/// How a node may be split.
#[derive(Debug, Clone, Copy)]
pub struct SplitRule {
    /// Impurity to decrease.
    pub criterion: Criterion,
    /// Fewest samples either child may hold.
    pub min_samples_leaf: usize,
}

/// The best split found at a node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitCandidate {
    /// Index of the atom in the node's [`AtomSet`].
    pub atom: usize,
    /// Samples with projection `<= threshold` go left.
    pub threshold: f32,
    /// Weighted impurity decrease `W I(S) - W_L I(L) - W_R I(R)`.
    pub impurity_decrease: f64,
}

/// Buffers reused across nodes so that the search allocates nothing once warm.
#[derive(Debug, Default)]
pub struct SplitScratch {
    keys: Vec<u64>,
    sort_buffer: Vec<u64>,
    left: Vec<f64>,
    right: Vec<f64>,
}

/// Finds the (atom, threshold) with the largest impurity decrease over all `atoms`,
/// considering only thresholds between distinct values that leave at least
/// `min_samples_leaf` samples (and some weight) on each side. Ties keep the earliest
/// atom and the leftmost threshold. `None` when no atom separates the samples.
pub fn best_split<T: Feature>(
    rows: &Rows<'_, T>,
    local: &LocalSamples,
    samples: &[u32],
    node_counts: &[f64],
    atoms: &AtomSet,
    rule: SplitRule,
    scratch: &mut SplitScratch,
) -> Option<SplitCandidate> {
    let n = samples.len();
    let criterion = rule.criterion;
    let min_leaf = rule.min_samples_leaf.max(1);
    if n < 2 * min_leaf {
        return None;
    }
    let node_total: f64 = node_counts.iter().sum();
    let node_sum: f64 = node_counts.iter().map(|&c| criterion.term(c)).sum();
    let node_cost = criterion.cost(node_total, node_sum);
    let mut best: Option<(f64, SplitCandidate)> = None;

    project_sort_keys(rows, &local.row_of, samples, atoms, &mut scratch.keys);
    for atom_index in 0..atoms.len() {
        let keys = &mut scratch.keys[atom_index * n..(atom_index + 1) * n];
        sort_by_value(keys, &mut scratch.sort_buffer);
        let keys = &*keys;
        if keys[0] >> 32 == keys[n - 1] >> 32 {
            continue; // constant along this atom
        }
        scratch.left.clear();
        scratch.left.resize(node_counts.len(), 0.0);
        scratch.right.clear();
        scratch.right.extend_from_slice(node_counts);
        let (mut left_weight, mut left_sum) = (0.0f64, 0.0f64);
        let (mut right_weight, mut right_sum) = (node_total, node_sum);

        for i in 0..n - min_leaf {
            let sample = keys[i] as u32 as usize;
            let class = local.class_of[sample] as usize;
            let weight = local.weight_of[sample];
            let old_left = scratch.left[class];
            let old_right = scratch.right[class];
            scratch.left[class] = old_left + weight;
            scratch.right[class] = old_right - weight;
            left_sum += criterion.term(old_left + weight) - criterion.term(old_left);
            right_sum += criterion.term(old_right - weight) - criterion.term(old_right);
            left_weight += weight;
            right_weight -= weight;

            if i + 1 < min_leaf || keys[i] >> 32 == keys[i + 1] >> 32 {
                continue;
            }
            if left_weight <= 0.0 || right_weight <= 0.0 {
                continue;
            }
            let children_cost =
                criterion.cost(left_weight, left_sum) + criterion.cost(right_weight, right_sum);
            if best.is_none_or(|(cost, _)| children_cost < cost) {
                let below = key_value((keys[i] >> 32) as u32);
                let above = key_value((keys[i + 1] >> 32) as u32);
                best = Some((
                    children_cost,
                    SplitCandidate {
                        atom: atom_index,
                        threshold: midpoint(below, above),
                        impurity_decrease: node_cost - children_cost,
                    },
                ));
            }
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// A threshold strictly between `below < above` where possible: the midpoint can round
/// onto `above` (adjacent floats), and then `below` itself still separates them.
#[inline]
fn midpoint(below: f32, above: f32) -> f32 {
    let mid = below * 0.5 + above * 0.5;
    if mid >= above || mid < below {
        below
    } else {
        mid
    }
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;
    use proptest::prelude::*;

    use super::*;

    /// Weighted impurity `W * I` computed from scratch.
    fn weighted_impurity(criterion: Criterion, counts: &[f64]) -> f64 {
        let total: f64 = counts.iter().sum();
        let impurity: f64 = counts
            .iter()
            .filter(|&&c| c > 0.0)
            .map(|&c| {
                let p = c / total;
                match criterion {
                    Criterion::Gini => p * (1.0 - p),
                    Criterion::Entropy => -p * p.log2(),
                }
            })
            .sum();
        total * impurity
    }

    /// The decrease of splitting at `z <= threshold`, if both sides are allowed.
    fn decrease_at(
        values: &[f32],
        local: &LocalSamples,
        n_classes: usize,
        rule: SplitRule,
        threshold: f32,
    ) -> Option<f64> {
        let (mut left, mut right, mut all) = (
            vec![0.0; n_classes],
            vec![0.0; n_classes],
            vec![0.0; n_classes],
        );
        let mut n_left = 0;
        for (i, &z) in values.iter().enumerate() {
            let class = local.class_of[i] as usize;
            let side = if z <= threshold {
                n_left += 1;
                &mut left
            } else {
                &mut right
            };
            side[class] += local.weight_of[i];
            all[class] += local.weight_of[i];
        }
        let n_right = values.len() - n_left;
        let positive = |c: &[f64]| c.iter().sum::<f64>() > 0.0;
        if n_left < rule.min_samples_leaf
            || n_right < rule.min_samples_leaf
            || !positive(&left)
            || !positive(&right)
        {
            return None;
        }
        Some(
            weighted_impurity(rule.criterion, &all)
                - weighted_impurity(rule.criterion, &left)
                - weighted_impurity(rule.criterion, &right),
        )
    }

    proptest! {
        #[test]
        fn finds_the_brute_force_best_split(
            n in 2usize..30,
            n_features in 1usize..4,
            n_classes in 1usize..4,
            min_samples_leaf in 1usize..4,
            entropy in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let mut rng = crate::rng::Rng::new(seed, 0);
            // Few distinct values, so that ties between samples are common.
            let x = Array2::from_shape_fn((n, n_features), |_| rng.below(5) as f32 - 2.0);
            let local = LocalSamples {
                row_of: (0..n as u32).collect(),
                class_of: (0..n).map(|_| rng.below(n_classes) as u32).collect(),
                weight_of: (0..n).map(|_| [0.5, 1.0, 2.0][rng.below(3)]).collect(),
            };
            let rows = Rows::from_view(x.view()).unwrap();
            let mut atoms = AtomSet::default();
            atoms.clear();
            for f in 0..n_features as u32 {
                atoms.push_unit(&mut [f]);
            }
            // An oblique atom too, whose projections are sums.
            atoms.push_pairs(&mut [(0, 1.0), ((n_features - 1) as u32, -1.0)]);
            let mut node_counts = vec![0.0; n_classes];
            for (c, w) in local.class_of.iter().zip(&local.weight_of) {
                node_counts[*c as usize] += w;
            }
            let rule = SplitRule {
                criterion: if entropy { Criterion::Entropy } else { Criterion::Gini },
                min_samples_leaf,
            };
            let samples: Vec<u32> = (0..n as u32).collect();
            let found = best_split(&rows, &local, &samples, &node_counts, &atoms, rule, &mut SplitScratch::default());

            let mut brute_best: Option<f64> = None;
            for a in 0..atoms.len() {
                let values: Vec<f32> = (0..n).map(|i| atoms.get(a).project(rows.row(i))).collect();
                for &t in &values {
                    if let Some(d) = decrease_at(&values, &local, n_classes, rule, t) {
                        brute_best = Some(brute_best.map_or(d, |b: f64| b.max(d)));
                    }
                }
            }
            match (found, brute_best) {
                (None, None) => {}
                (Some(split), Some(best)) => {
                    let values: Vec<f32> = (0..n).map(|i| atoms.get(split.atom).project(rows.row(i))).collect();
                    let achieved = decrease_at(&values, &local, n_classes, rule, split.threshold)
                        .expect("the chosen split is allowed");
                    prop_assert!((achieved - best).abs() < 1e-9 * (1.0 + best.abs()), "achieved {achieved}, best {best}");
                    prop_assert!((split.impurity_decrease - best).abs() < 1e-9 * (1.0 + best.abs()));
                    // The threshold sits strictly below the next value up.
                    prop_assert!(values.iter().any(|&z| z <= split.threshold));
                    prop_assert!(values.iter().any(|&z| z > split.threshold));
                }
                (found, brute) => prop_assert!(false, "engine {found:?}, brute force {brute:?}"),
            }
        }
    }

    #[test]
    fn midpoint_never_rounds_onto_the_upper_value() {
        let below = 1.0f32;
        let above = f32::from_bits(below.to_bits() + 1);
        assert_eq!(midpoint(below, above), below);
        assert_eq!(midpoint(1.0, 2.0), 1.5);
        assert_eq!(midpoint(-3.0, -1.0), -2.0);
    }
}
