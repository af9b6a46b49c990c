use serde::{Deserialize, Serialize};

use super::projection::{key_value, project_sort_keys};
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

    for atom_index in 0..atoms.len() {
        project_sort_keys(
            rows,
            &local.row_of,
            samples,
            atoms.get(atom_index),
            &mut scratch.keys,
        );
        scratch.keys.sort_unstable();
        let keys = &scratch.keys;
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
