use serde::{Deserialize, Serialize};

use super::projection::{key_value, sort_key, NodeProjector};
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
    /// [`Rows::whole_range`] of X for the weights of the node's atoms: only where it
    /// is known that projections on atoms with whole weights are exact whole numbers.
    /// Then an atom taking few distinct values on a node is counted by value instead of
    /// sorted.
    pub whole_range: Option<(f32, f32)>,
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
    projector: NodeProjector,
    /// Class and weight of each node sample, in node order.
    classes: Vec<u32>,
    weights: Vec<f64>,
    /// Projections, atom after atom.
    values: Vec<f32>,
    /// One atom's sort keys ([`position_key`]).
    keys: Vec<u64>,
    sort_buffer: Vec<u64>,
    left: Vec<f64>,
    right: Vec<f64>,
    by_value: ValueTable,
}

/// Per whole value of a projection: how many samples take it, and their weight per class.
#[derive(Debug, Default)]
struct ValueTable {
    /// Per node sample, the offset of its value above the lowest.
    offsets: Vec<u32>,
    /// Per value, how many samples take it; when sorting by counting, where its keys
    /// start.
    counts: Vec<u32>,
    class_weights: Vec<f64>,
}

/// Counting by value beats sorting while the table of (value, class) weights stays
/// below this many entries per node sample.
const COUNTING_ENTRIES_PER_SAMPLE: usize = 4;

/// Whole projections whose range spans at most this many values per node sample are
/// put in order by counting sort rather than by radix or comparison sort.
const SORT_BY_COUNTING_SPAN_PER_SAMPLE: usize = 8;

/// Most distinct values counted: offsets below 2^23 convert from f32 by one addition.
const MAX_COUNTED_SPAN: usize = 1 << 23;

/// Copies of the counting table that consecutive samples take turns adding into.
const TABLE_COPIES: usize = 4;

/// The sort key of a projected value for the sample at `position` in the node.
#[inline(always)]
fn position_key(value: f32, position: u32) -> u64 {
    (sort_key(value) as u64) << 32 | position as u64
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
    let min_leaf = rule.min_samples_leaf.max(1);
    if n < 2 * min_leaf {
        return None;
    }
    scratch.classes.clear();
    scratch.weights.clear();
    for &sample in samples {
        scratch.classes.push(local.class_of[sample as usize]);
        scratch.weights.push(local.weight_of[sample as usize]);
    }
    let criterion = rule.criterion;
    let node_total: f64 = node_counts.iter().sum();
    let node_sum: f64 = node_counts.iter().map(|&c| criterion.term(c)).sum();
    let node = NodeScan {
        classes: &scratch.classes,
        weights: &scratch.weights,
        counts: node_counts,
        total: node_total,
        sum: node_sum,
        cost: criterion.cost(node_total, node_sum),
        criterion,
        min_leaf,
    };
    let mut best = None;

    // Projections are kept as f32 (half the memory of every atom's sort keys) and keyed
    // one atom at a time where they need sorting. Whole values (whole-weight atoms on
    // whole-valued X) are counted where an atom takes few enough values for the node's
    // size, or put in order by counting sort where they span few values per sample.
    let table_entries = |span: usize| span * (node_counts.len() + 1) * TABLE_COPIES;
    let values = &mut scratch.values;
    scratch
        .projector
        .project(rows, &local.row_of, samples, atoms, values);
    for atom in 0..atoms.len() {
        let values = &values[atom * n..(atom + 1) * n];
        let keys = &mut scratch.keys;
        if rule.whole_range.is_some() && atoms.get(atom).has_integer_weights() {
            let (low, high) = values
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(v), hi.max(v))
                });
            if low == high {
                continue; // constant along this atom
            }
            // Projections are whole here unless X changed since its range was taken
            // (another thread writing it): then the tree may be wrong, but a span
            // that is NaN or too wide is sorted generally, and every offset stays
            // inside its table.
            let width = high - low;
            if width < MAX_COUNTED_SPAN as f32 {
                let span = width as usize + 1;
                let table = &mut scratch.by_value;
                if table_entries(span) <= COUNTING_ENTRIES_PER_SAMPLE * n {
                    node.scan_counted(values, low, span, atom, table, &mut scratch.left, &mut best);
                    continue;
                }
                if span <= SORT_BY_COUNTING_SPAN_PER_SAMPLE * n {
                    sort_whole_values(values, low, span, table, keys);
                    node.scan_sorted(keys, atom, &mut scratch.left, &mut scratch.right, &mut best);
                    continue;
                }
            }
        }
        sort_generally(values, keys, &mut scratch.sort_buffer);
        node.scan_sorted(keys, atom, &mut scratch.left, &mut scratch.right, &mut best);
    }
    best.map(|(_, candidate)| candidate)
}

/// Writes the [`position_key`]s of `values` (in node order) into `keys`, sorted.
fn sort_generally(values: &[f32], keys: &mut Vec<u64>, sort_buffer: &mut Vec<u64>) {
    keys.clear();
    keys.extend(
        values
            .iter()
            .enumerate()
            .map(|(position, &value)| position_key(value, position as u32)),
    );
    sort_by_value(keys, sort_buffer);
}

/// What the scans of one node share: its samples' classes and weights in node order,
/// and its totals.
struct NodeScan<'a> {
    classes: &'a [u32],
    weights: &'a [f64],
    counts: &'a [f64],
    total: f64,
    sum: f64,
    cost: f64,
    criterion: Criterion,
    min_leaf: usize,
}

impl NodeScan<'_> {
    /// Keeps the split below `below` (and above it, `above`) when its children's cost
    /// beats `best`'s; strictly, so that earlier candidates win ties.
    #[inline(always)]
    fn offer(
        &self,
        children_cost: f64,
        atom: usize,
        below: f32,
        above: f32,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        if best.is_none_or(|(cost, _)| children_cost < cost) {
            *best = Some((
                children_cost,
                SplitCandidate {
                    atom,
                    threshold: midpoint(below, above),
                    impurity_decrease: self.cost - children_cost,
                },
            ));
        }
    }

    /// Scans keys of [`position_key`], sorted, left to right, moving one sample at a
    /// time to the left side.
    fn scan_sorted(
        &self,
        keys: &[u64],
        atom: usize,
        left: &mut Vec<f64>,
        right: &mut Vec<f64>,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        let n = keys.len();
        if keys[0] >> 32 == keys[n - 1] >> 32 {
            return; // constant along this atom
        }
        let criterion = self.criterion;
        left.clear();
        left.resize(self.counts.len(), 0.0);
        right.clear();
        right.extend_from_slice(self.counts);
        let (mut left_weight, mut left_sum) = (0.0f64, 0.0f64);
        let (mut right_weight, mut right_sum) = (self.total, self.sum);

        for i in 0..n - self.min_leaf {
            let position = keys[i] as u32 as usize;
            let class = self.classes[position] as usize;
            let weight = self.weights[position];
            let old_left = left[class];
            let old_right = right[class];
            left[class] = old_left + weight;
            right[class] = old_right - weight;
            left_sum += criterion.term(old_left + weight) - criterion.term(old_left);
            right_sum += criterion.term(old_right - weight) - criterion.term(old_right);
            left_weight += weight;
            right_weight -= weight;

            if i + 1 < self.min_leaf || keys[i] >> 32 == keys[i + 1] >> 32 {
                continue;
            }
            if left_weight <= 0.0 || right_weight <= 0.0 {
                continue;
            }
            let children_cost =
                criterion.cost(left_weight, left_sum) + criterion.cost(right_weight, right_sum);
            let below = key_value((keys[i] >> 32) as u32);
            let above = key_value((keys[i + 1] >> 32) as u32);
            self.offer(children_cost, atom, below, above, best);
        }
    }

    /// For projections (in node order) that are whole numbers in `low..low + span`:
    /// sums the class weights of each value, then scans the boundaries between present
    /// values in ascending order, as [`Self::scan_sorted`] would, without sorting.
    #[allow(clippy::too_many_arguments)]
    fn scan_counted(
        &self,
        values: &[f32],
        low: f32,
        span: usize,
        atom: usize,
        table: &mut ValueTable,
        left: &mut Vec<f64>,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        let n_classes = self.counts.len();
        let offsets = &mut table.offsets;
        whole_offsets(values, low, span, offsets);
        // Sample counts matter only to keep `min_samples_leaf` samples on each side;
        // otherwise a value is present when its weight (always positive) is.
        let count_samples = self.min_leaf > 1;
        // Consecutive samples add into different copies of the table, so that runs of
        // equal values do not wait on each other's read-modify-write.
        let counts = &mut table.counts;
        counts.clear();
        let class_weights = &mut table.class_weights;
        class_weights.clear();
        class_weights.resize(span * n_classes * TABLE_COPIES, 0.0);
        for (position, &offset) in offsets.iter().enumerate() {
            let class = self.classes[position] as usize;
            let entry = (offset as usize * n_classes + class) * TABLE_COPIES;
            class_weights[entry + position % TABLE_COPIES] += self.weights[position];
        }
        if count_samples {
            counts.resize(span * TABLE_COPIES, 0);
            for (position, &offset) in offsets.iter().enumerate() {
                counts[offset as usize * TABLE_COPIES + position % TABLE_COPIES] += 1;
            }
            for entry in 0..span {
                counts[entry] = counts[entry * TABLE_COPIES..][..TABLE_COPIES].iter().sum();
            }
        }
        for entry in 0..span * n_classes {
            class_weights[entry] = class_weights[entry * TABLE_COPIES..][..TABLE_COPIES]
                .iter()
                .sum();
        }
        let class_weights = &class_weights[..span * n_classes];

        let criterion = self.criterion;
        left.clear();
        left.resize(n_classes, 0.0);
        let (mut left_n, mut left_weight) = (0usize, 0.0f64);
        let mut previous: Option<usize> = None;
        for (offset, weights) in class_weights.chunks_exact(n_classes).enumerate() {
            let weight: f64 = weights.iter().sum();
            if weight <= 0.0 {
                continue;
            }
            if let Some(below) = previous {
                if count_samples && values.len() - left_n < self.min_leaf {
                    break; // the right side only shrinks from here
                }
                let right_weight = self.total - left_weight;
                let enough_left = !count_samples || left_n >= self.min_leaf;
                if enough_left && right_weight > 0.0 {
                    let left_sum: f64 = left.iter().map(|&c| criterion.term(c)).sum();
                    let right_sum: f64 = left
                        .iter()
                        .zip(self.counts)
                        .map(|(&l, &c)| criterion.term(c - l))
                        .sum();
                    let children_cost = criterion.cost(left_weight, left_sum)
                        + criterion.cost(right_weight, right_sum);
                    let (below, above) = (low + below as f32, low + offset as f32);
                    self.offer(children_cost, atom, below, above, best);
                }
            }
            for (l, &w) in left.iter_mut().zip(weights) {
                *l += w;
            }
            left_weight += weight;
            if count_samples {
                left_n += counts[offset] as usize;
            }
            previous = Some(offset);
        }
    }
}

/// Writes, per whole value in `values` (all in `low..low + span`, `span` at most
/// `MAX_COUNTED_SPAN`), its offset above `low`. Any other value (X changed while the
/// tree grew) gets some offset below `span`: a wrong split at worst, never an index
/// outside the tables.
fn whole_offsets(values: &[f32], low: f32, span: usize, offsets: &mut Vec<u32>) {
    // Adding 2^23 puts a whole number below 2^23 in the low mantissa bits: an exact
    // conversion that, unlike `as u32`, needs no range checks and so vectorises, as
    // does the bound.
    const SHIFT: f32 = MAX_COUNTED_SPAN as f32;
    let last = span as u32 - 1;
    offsets.clear();
    offsets.extend(values.iter().map(|&value| {
        ((value - low) + SHIFT)
            .to_bits()
            .wrapping_sub(SHIFT.to_bits())
            .min(last)
    }));
}

/// Writes the [`position_key`]s of whole `values` (in node order, all in
/// `low..low + span`) into `keys` in ascending order of value, by counting sort: one
/// pass to count each value, one to place each key, whatever the number of samples.
fn sort_whole_values(
    values: &[f32],
    low: f32,
    span: usize,
    table: &mut ValueTable,
    keys: &mut Vec<u64>,
) {
    whole_offsets(values, low, span, &mut table.offsets);
    // `starts[v]` becomes the first slot of value `v` in `keys`.
    let starts = &mut table.counts;
    starts.clear();
    starts.resize(span + 1, 0);
    for &offset in &table.offsets {
        starts[offset as usize + 1] += 1;
    }
    for v in 1..=span {
        starts[v] += starts[v - 1];
    }
    keys.clear();
    keys.resize(values.len(), 0);
    for (position, (&offset, &value)) in table.offsets.iter().zip(values).enumerate() {
        let slot = &mut starts[offset as usize];
        keys[*slot as usize] = position_key(value, position as u32);
        *slot += 1;
    }
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
        classes: &[u32],
        weights: &[f64],
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
            let class = classes[i] as usize;
            let side = if z <= threshold {
                n_left += 1;
                &mut left
            } else {
                &mut right
            };
            side[class] += weights[i];
            all[class] += weights[i];
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
            n in 2usize..300,
            not_in_node in 0usize..20,
            n_features in 1usize..4,
            n_classes in 1usize..4,
            min_samples_leaf in 1usize..4,
            entropy in any::<bool>(),
            halves in any::<bool>(),
            far_apart in any::<bool>(),
            count_whole in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let mut rng = crate::rng::Rng::new(seed, 0);
            // Few distinct values, so that ties between samples are common: whole numbers
            // close together (counted, or sorted by counting), far apart (sorted by
            // comparison), or halves (always sorted by comparison).
            let scale = match (halves, far_apart) {
                (true, _) => 0.5,
                (false, false) => 1.0,
                (false, true) => 1000.0,
            };
            let n_local = n + not_in_node;
            let x = Array2::from_shape_fn((n_local, n_features), |_| (rng.below(5) as f32 - 2.0) * scale);
            // Local samples stand for shuffled rows, and the node holds some of them in
            // shuffled order, so that rows, local ids and node positions all differ.
            let mut row_of: Vec<u32> = (0..n_local as u32).collect();
            let mut samples = row_of.clone();
            for order in [&mut row_of, &mut samples] {
                for i in (1..n_local).rev() {
                    order.swap(i, rng.below(i + 1));
                }
            }
            samples.truncate(n);
            let local = LocalSamples {
                row_of,
                class_of: (0..n_local).map(|_| rng.below(n_classes) as u32).collect(),
                weight_of: (0..n_local).map(|_| [0.5, 1.0, 2.0][rng.below(3)]).collect(),
            };
            let rows = Rows::from_view(x.view()).unwrap();
            prop_assert_eq!(rows.whole_range(3).is_some(), !halves || x.iter().all(|v| v.fract() == 0.0));
            let mut atoms = AtomSet::default();
            atoms.clear();
            for f in 0..n_features as u32 {
                atoms.push_unit(&mut [f]);
            }
            // An oblique atom too, whose projections are sums.
            atoms.push_pairs(&mut [(0, 1.0), ((n_features - 1) as u32, -1.0)]);
            // Whole weights beyond ±1 keep projections whole; a fractional one does not.
            atoms.push_pairs(&mut [(0, 2.0), ((n_features - 1) as u32, -3.0)]);
            atoms.push_pairs(&mut [((n_features - 1) as u32, 0.5)]);
            let classes: Vec<u32> = samples.iter().map(|&s| local.class_of[s as usize]).collect();
            let weights: Vec<f64> = samples.iter().map(|&s| local.weight_of[s as usize]).collect();
            let mut node_counts = vec![0.0; n_classes];
            for (&c, &w) in classes.iter().zip(&weights) {
                node_counts[c as usize] += w;
            }
            let rule = SplitRule {
                criterion: if entropy { Criterion::Entropy } else { Criterion::Gini },
                min_samples_leaf,
                whole_range: rows.whole_range(3).filter(|_| count_whole),
            };
            let found = best_split(&rows, &local, &samples, &node_counts, &atoms, rule, &mut SplitScratch::default());

            let projections = |a: usize| -> Vec<f32> {
                samples
                    .iter()
                    .map(|&s| atoms.get(a).project(rows.row(local.row_of[s as usize] as usize)))
                    .collect()
            };
            let mut brute_best: Option<f64> = None;
            for a in 0..atoms.len() {
                let values = projections(a);
                for &t in &values {
                    if let Some(d) = decrease_at(&values, &classes, &weights, n_classes, rule, t) {
                        brute_best = Some(brute_best.map_or(d, |b: f64| b.max(d)));
                    }
                }
            }
            match (found, brute_best) {
                (None, None) => {}
                (Some(split), Some(best)) => {
                    let values = projections(split.atom);
                    let achieved = decrease_at(&values, &classes, &weights, n_classes, rule, split.threshold)
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
    fn projections_that_are_not_whole_after_all_stay_inside_the_tables() {
        // X written by another thread after its whole range was taken: the rule says
        // the projections are whole, and they are not. A wrong split is acceptable,
        // an index out of bounds is not.
        let pool = [
            0.0f32,
            1.0,
            2.0,
            0.5,
            2.75,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e30,
            -1e30,
            8_388_607.0,
            -0.0,
        ];
        let mut rng = crate::rng::Rng::new(9, 0);
        for _ in 0..2000 {
            let n = 2 + rng.below(40);
            let x = Array2::from_shape_fn((n, 2), |_| pool[rng.below(pool.len())]);
            let rows = Rows::from_view(x.view()).unwrap();
            let local = LocalSamples {
                row_of: (0..n as u32).collect(),
                class_of: (0..n).map(|i| (i % 3) as u32).collect(),
                weight_of: vec![1.0; n],
            };
            let samples: Vec<u32> = (0..n as u32).collect();
            let mut node_counts = vec![0.0; 3];
            for &class in &local.class_of {
                node_counts[class as usize] += 1.0;
            }
            let mut atoms = AtomSet::default();
            atoms.clear();
            atoms.push_unit(&mut [0]);
            atoms.push_unit(&mut [0, 1]);
            let rule = SplitRule {
                criterion: Criterion::Gini,
                min_samples_leaf: 1 + rng.below(2),
                whole_range: Some((0.0, 2.0)),
            };
            let mut scratch = SplitScratch::default();
            best_split(
                &rows,
                &local,
                &samples,
                &node_counts,
                &atoms,
                rule,
                &mut scratch,
            );
        }
        let mut offsets = Vec::new();
        whole_offsets(&pool, 0.0, 3, &mut offsets);
        assert_eq!(&offsets[..3], &[0, 1, 2]);
        assert!(offsets.iter().all(|&offset| offset < 3), "{offsets:?}");
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
