//! The scan of whole projections counted by value in integers, for criteria whose
//! costs are exact on whole entries ([`SplitCriterion::SQUARED_TERMS`]: Gini, with
//! bootstrap counts as weights). Per value, each entry's sum is a `u32`, one copy of
//! the table instead of [`NodeScan::scan_counted`]'s `f64` copies: small enough for
//! the large nodes whose projections span thousands of values, where it takes the
//! place of sorting. The sides' sums of squares are kept up to date in integers as
//! values move left; every cost it computes is the sorted scan's bit for bit, so it
//! chooses the same split.

use super::counted_scan::{whole_offsets, ValueTable};
use super::criterion::{NodeTargets, SplitCriterion};
use super::scan::{midpoint, NodeScan};
use super::search::SplitCandidate;

/// The heaviest node whose whole entries give exact costs: every sum of entries is at
/// most 2^26, so squares and their sums stay below 2^53.
const MAX_EXACT_WEIGHT: f64 = (1u64 << 26) as f64;

/// Whether [`NodeScan::scan_whole_counts`] may scan `node`: the criterion's terms are
/// squares, each sample's one entry is its class, of its weight, and every weight of
/// the node is a whole number, the node weighing at most [`MAX_EXACT_WEIGHT`]. Where it
/// may, `amounts` holds the weights as `u32`, converted once for all the node's atoms.
pub(super) fn counts_exactly<C: SplitCriterion>(
    node: &NodeTargets,
    amounts: &mut Vec<u32>,
) -> bool {
    // Adding and taking away 2^52 rounds a non-negative f64 below it to a whole number.
    const ROUNDING: f64 = (1u64 << 52) as f64;
    let exact = C::SQUARED_TERMS && C::CLASS_ENTRIES && node.weight <= MAX_EXACT_WEIGHT;
    if !exact {
        return false;
    }
    let mut whole = true;
    amounts.clear();
    amounts.extend(node.weights.iter().map(|&weight| {
        whole &= weight >= 0.0 && (weight + ROUNDING) - ROUNDING == weight;
        // At most 2^26 where whole: exact.
        weight as u32
    }));
    whole
}

/// The two sides of a boundary as whole values move left: per entry the sums of each
/// side, and each side's sum of squared sums (its terms), all exact integers.
struct WholeSides<'s> {
    left: &'s mut [u64],
    right: &'s mut [u64],
    left_squares: u64,
    right_squares: u64,
}

impl WholeSides<'_> {
    /// Moves a value's sums of entries from the right to the left. A square changes by
    /// `(s + a)^2 - s^2 = a (2 s + a)`: no sum of squares is worked out again.
    #[inline(always)]
    fn move_left(&mut self, value_sums: &[u32]) {
        for ((left, right), &amount) in self
            .left
            .iter_mut()
            .zip(self.right.iter_mut())
            .zip(value_sums)
        {
            let amount = amount as u64;
            self.left_squares += amount * (2 * *left + amount);
            self.right_squares -= amount * (2 * *right - amount);
            *left += amount;
            *right -= amount;
        }
    }
}

impl<C: SplitCriterion> NodeScan<'_, C> {
    /// For projections (in node order) that are whole numbers in `low..low + span`, on
    /// a node that [`counts_exactly`] (its weights in `table.whole_amounts`): sums each
    /// value's class weights and weight in `u32`,
    /// then scans the boundaries between present values in ascending order, as
    /// [`NodeScan::scan_sorted`] would, with the same costs.
    pub(super) fn scan_whole_counts(
        &self,
        values: &[f32],
        low: f32,
        span: usize,
        atom: usize,
        table: &mut ValueTable,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        let criterion = self.criterion;
        let node = self.node;
        let n_entries = criterion.n_entries();
        whole_offsets(values, low, span, &mut table.offsets);
        let sums = &mut table.whole_sums;
        sums.clear();
        sums.resize(span * n_entries, 0);
        // Each value's weight apart, so that absent values are passed over at one read.
        let weights = &mut table.whole_weights;
        weights.clear();
        weights.resize(span, 0);
        // Each sample's one entry, its class, of its whole weight (`counts_exactly`).
        let samples = table
            .offsets
            .iter()
            .zip(&node.classes)
            .zip(&table.whole_amounts);
        for ((&offset, &class), &amount) in samples {
            sums[offset as usize * n_entries + class as usize] += amount;
            weights[offset as usize] += amount;
        }
        // Sample counts matter only to keep `min_samples_leaf` samples on each side;
        // otherwise a value is present when its weight (a positive whole) is.
        let count_samples = self.min_leaf > 1;
        let counts = &mut table.counts;
        if count_samples {
            counts.clear();
            counts.resize(span, 0);
            for &offset in &table.offsets {
                counts[offset as usize] += 1;
            }
        }

        // Every sum of entries is at most 2^26: the conversions are exact, and so is
        // every square and sum of squares (below 2^53), as in `f64`.
        let (left, right) = (&mut table.whole_left, &mut table.whole_right);
        left.clear();
        left.resize(n_entries, 0);
        right.clear();
        right.extend(node.sums.iter().map(|&sum| sum as u64));
        let right_squares = right.iter().map(|&sum| sum * sum).sum();
        let mut sides = WholeSides {
            left,
            right,
            left_squares: 0,
            right_squares,
        };
        let n_samples = values.len();
        let (mut left_n, mut left_weight) = (0usize, 0u64);
        let mut previous: Option<usize> = None;
        for (offset, &weight) in weights.iter().enumerate() {
            if weight == 0 {
                continue;
            }
            if let Some(below) = previous {
                if count_samples && n_samples - left_n < self.min_leaf {
                    break; // the right side only shrinks from here
                }
                let left_weight = left_weight as f64;
                let right_weight = node.weight - left_weight;
                if (!count_samples || left_n >= self.min_leaf)
                    && self.heavy_enough(left_weight)
                    && self.heavy_enough(right_weight)
                    && criterion.allows_side(node, sides.left.iter().map(|&sum| sum as f64))
                    && criterion.allows_side(node, sides.right.iter().map(|&sum| sum as f64))
                {
                    let children_cost = criterion.cost(left_weight, sides.left_squares as f64)
                        + criterion.cost(right_weight, sides.right_squares as f64);
                    let threshold = || midpoint(low + below as f32, low + offset as f32);
                    self.offer(children_cost, atom, threshold, None, best);
                }
            }
            sides.move_left(&sums[offset * n_entries..][..n_entries]);
            left_weight += weight as u64;
            if count_samples {
                left_n += counts[offset] as usize;
            }
            previous = Some(offset);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::class_criteria::{Entropy, Gini};
    use super::super::criterion::LocalSamples;
    use super::super::sort::sort_whole_values;
    use super::*;

    /// The best split of one atom's whole `values` by the sorted scan and by the
    /// counted scan of whole entries, as (children's cost, candidate) bits.
    fn both_scans<C: SplitCriterion>(
        criterion: &C,
        node: &NodeTargets,
        values: &[f32],
        min_leaf: usize,
        min_weight: f64,
    ) -> [Option<(u64, u32, u64)>; 2] {
        let scan = NodeScan::new(criterion, node, min_leaf, min_weight);
        let low = values.iter().copied().fold(f32::INFINITY, f32::min);
        let high = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let span = (high - low) as usize + 1;
        let (table, keys) = (&mut ValueTable::default(), &mut Vec::new());
        assert!(counts_exactly::<C>(node, &mut table.whole_amounts));
        let (left, right) = (&mut Vec::new(), &mut Vec::new());
        let bits = |best: Option<(f64, SplitCandidate)>| {
            best.map(|(cost, c)| {
                assert_eq!(c.atom, 3);
                assert_eq!(c.missing_left, None);
                (
                    cost.to_bits(),
                    c.threshold.to_bits(),
                    c.impurity_decrease.to_bits(),
                )
            })
        };
        let mut sorted = None;
        sort_whole_values(values, low, span, table, keys);
        scan.scan_sorted::<false>(keys, 3, left, right, &mut sorted);
        let mut counted = None;
        scan.scan_whole_counts(values, low, span, 3, table, &mut counted);
        [bits(sorted), bits(counted)]
    }

    proptest! {
        #[test]
        fn whole_counts_choose_the_sorted_scans_split_bit_for_bit(
            n in prop_oneof![2usize..24, 2usize..400],
            n_classes in 1usize..12,
            spread in prop::sample::select(vec![3usize, 40, 2000]),
            offset in prop::sample::select(vec![0.0f32, -1000.0, 70_000.0]),
            max_weight in 1usize..4,
            min_leaf in 1usize..5,
            min_weight_fraction in prop::sample::select(vec![0.0, 0.2]),
            seed in any::<u64>(),
        ) {
            let mut rng = crate::rng::Rng::new(seed, 0);
            // Classes drawn from fewer at times, so that nodes are nearly pure.
            let used_classes = 1 + rng.below(n_classes);
            let local = LocalSamples {
                row_of: (0..n as u32).collect(),
                class_of: (0..n).map(|_| rng.below(used_classes) as u32).collect(),
                weight_of: (0..n).map(|_| (1 + rng.below(max_weight)) as f64).collect(),
                values_of: Vec::new(),
            };
            let samples: Vec<u32> = (0..n as u32).collect();
            let values: Vec<f32> = (0..n).map(|_| offset + rng.below(spread) as f32).collect();
            let mut node = NodeTargets::default();
            let gini = Gini { n_classes };
            gini.gather(&local, &samples, &mut node);
            prop_assert!(counts_exactly::<Gini>(&node, &mut Vec::new()));
            let min_weight = min_weight_fraction * node.weight;
            let [sorted, counted] = both_scans(&gini, &node, &values, min_leaf, min_weight);
            prop_assert_eq!(sorted, counted);
        }
    }

    #[test]
    fn only_exact_criteria_on_whole_weights_are_counted() {
        let local = LocalSamples {
            row_of: vec![0, 1, 2],
            class_of: vec![0, 1, 1],
            weight_of: vec![1.0, 2.0, 3.0],
            values_of: Vec::new(),
        };
        let mut node = NodeTargets::default();
        let gini = Gini { n_classes: 2 };
        gini.gather(&local, &[0, 1, 2], &mut node);
        let mut amounts = Vec::new();
        assert!(counts_exactly::<Gini>(&node, &mut amounts));
        assert_eq!(amounts, [1, 2, 3]);
        let entropy = Entropy { n_classes: 2 };
        entropy.gather(&local, &[0, 1, 2], &mut node);
        assert!(!counts_exactly::<Entropy>(&node, &mut amounts));
        let fractional = LocalSamples {
            weight_of: vec![1.0, 2.5, 3.0],
            ..local.clone()
        };
        gini.gather(&fractional, &[0, 1, 2], &mut node);
        assert!(!counts_exactly::<Gini>(&node, &mut amounts));
        let heavy = LocalSamples {
            weight_of: vec![1.0, 2.0, MAX_EXACT_WEIGHT],
            ..local
        };
        gini.gather(&heavy, &[0, 1, 2], &mut node);
        assert!(!counts_exactly::<Gini>(&node, &mut amounts));
    }
}
