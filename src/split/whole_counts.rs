//! The scan of whole projections counted by value in integers, for criteria whose
//! costs are exact on whole entries ([`SplitCriterion::SQUARED_TERMS`]: Gini, with
//! bootstrap counts as weights). Per value, each entry's sum is a `u32`, one copy of
//! the table instead of [`NodeScan::scan_counted`]'s `f64` copies: small enough for
//! the large nodes whose projections span thousands of values, where it takes the
//! place of sorting. The sides' sums of squares are kept up to date in integers as
//! values move left; every cost it computes is the sorted scan's bit for bit, so it
//! chooses the same split.

use super::counted_scan::{count_values, whole_offsets, ValueTable};
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

/// Class sums moved together in the boundary walk: each value's row of the table is
/// padded to a multiple of this many entries, read and added lane by lane.
const LANES: usize = 4;

/// One group of [`LANES`] class sums, as `f64`: every sum here is a whole number
/// below 2^53 (see [`MAX_EXACT_WEIGHT`]), so `f64` lanes add and multiply them exactly,
/// in any order, without the conversions of integer lanes.
pub(super) type Lanes = [f64; LANES];

impl<C: SplitCriterion> NodeScan<'_, C> {
    /// For projections (in node order) that are whole numbers in `low..low + span`, on
    /// a node that [`counts_exactly`] (its weights in `table.whole_amounts`): sums each
    /// value's class weights in `u32`, then scans the boundaries between present values
    /// in ascending order, as [`NodeScan::scan_sorted`] would, with the same costs.
    ///
    /// The left side's sum of squares is kept up to date as values move left (a square
    /// changes by `(s + a)^2 - s^2 = a (2 s + a)`), and the right side's follows from
    /// it: `sum (T - s)^2 = sum T^2 - 2 sum T s + sum s^2`, with `sum T s` kept up to
    /// date too. Exact whole numbers throughout, so the costs are the sorted scan's.
    pub(super) fn scan_whole_counts(
        &self,
        values: &[f32],
        low: f32,
        span: usize,
        atom: usize,
        table: &mut ValueTable,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        whole_offsets(values, low, span, &mut table.offsets);
        self.scan_whole_offsets(low, span, atom, table, best);
    }

    /// [`Self::scan_whole_counts`] of the values at `low` plus each sample's offset,
    /// already in `table.offsets` (each below `span`).
    pub(super) fn scan_whole_offsets(
        &self,
        low: f32,
        span: usize,
        atom: usize,
        table: &mut ValueTable,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        let n_samples = table.offsets.len();
        if table.whole_pairs.len() == n_samples {
            self.scan_pairs(low, span, atom, table, best);
            return;
        }
        let criterion = self.criterion;
        let node = self.node;
        let n_entries = criterion.n_entries();
        let n_lanes = n_entries.div_ceil(LANES);
        let stride = n_lanes * LANES;
        let table_len = span * stride;
        let copies = table_copies(table_len, n_samples);
        table.whole_sums.clear();
        table.whole_sums.resize(table_len * copies, 0);
        // Presence apart, stored rather than added: runs of equal values (a background
        // pixel) would otherwise wait on each other's read-modify-write.
        table.present.clear();
        table.present.resize(span, 0);
        // Slices, not the vectors: their addresses stay in registers while bytes are
        // stored (a byte store might otherwise have changed a vector's address).
        let (sums, present) = (&mut table.whole_sums[..], &mut table.present[..]);
        let fill = match copies {
            4 => fill_whole_sums::<4, true, u32>,
            2 => fill_whole_sums::<2, true, u32>,
            _ => fill_whole_sums::<1, true, u32>,
        };
        fill(
            sums,
            present,
            stride,
            &table.offsets,
            &node.classes,
            &table.whole_amounts,
        );
        let sums = &sums[..table_len];
        // Sample counts matter only to keep `min_samples_leaf` samples on each side;
        // otherwise a value is present when a sample takes it.
        let count_samples = self.min_leaf > 1;
        if count_samples {
            count_values(&table.offsets, span, &mut table.counts);
        }
        let counts = &table.counts;
        // The present values in ascending order, listed without a branch per value.
        table.present_offsets.clear();
        table.present_offsets.resize(span, 0);
        let order = &mut table.present_offsets[..];
        let mut n_present = 0;
        for (offset, &is_present) in present.iter().enumerate() {
            // `n_present <= offset`: in bounds.
            order[n_present] = offset as u32;
            n_present += is_present as usize;
        }

        let (left, totals) = (&mut table.whole_left, &mut table.whole_totals);
        left.clear();
        left.resize(n_lanes, [0.0; LANES]);
        totals.clear();
        totals.resize(n_lanes, [0.0; LANES]);
        for (entry, &sum) in node.sums.iter().enumerate() {
            totals[entry / LANES][entry % LANES] = sum;
        }
        // Every sum of entries is at most 2^26: every square, sum of squares and sum of
        // products below is an exact whole number (below 2^53).
        let total_squares: f64 = node.sums.iter().map(|&sum| sum * sum).sum();
        let mut side = WholeLeft::default();
        let walk = WholeWalk {
            total_squares,
            count_samples,
            n_samples,
            atom,
        };
        for (i, &offset) in order[..n_present].iter().enumerate() {
            let offset = offset as usize;
            if i > 0 {
                let left_sums = left.iter().flatten().take(n_entries).copied();
                let below = order[i - 1] as f32;
                let threshold = || midpoint(low + below, low + offset as f32);
                if !self.offer_whole_boundary(&walk, &side, left_sums, threshold, best) {
                    break; // the right side only shrinks from here
                }
            }
            let moved = move_left(left, totals, &sums[offset * stride..][..stride]);
            side.squares += moved[0];
            side.cross += moved[1];
            side.weight += moved[2];
            if count_samples {
                side.n += counts[offset] as usize;
            }
        }
    }

    /// Offers the boundary of a walk over whole sums whose left side (its entries'
    /// sums `left_sums`) is `side`, at `threshold`, where both sides may be children;
    /// `false` once too few samples are left for the right side, which only shrinks.
    #[inline(always)]
    pub(super) fn offer_whole_boundary(
        &self,
        walk: &WholeWalk,
        side: &WholeLeft,
        left_sums: impl Iterator<Item = f64> + Clone,
        threshold: impl FnOnce() -> f32,
        best: &mut Option<(f64, SplitCandidate)>,
    ) -> bool {
        let (criterion, node) = (self.criterion, self.node);
        if walk.count_samples && walk.n_samples - side.n < self.min_leaf {
            return false;
        }
        let right_weight = node.weight - side.weight;
        let right_sums = node
            .sums
            .iter()
            .zip(left_sums.clone())
            .map(|(&total, sum)| total - sum);
        if (!walk.count_samples || side.n >= self.min_leaf)
            && self.heavy_enough(side.weight)
            && self.heavy_enough(right_weight)
            && criterion.allows_side(node, left_sums)
            && criterion.allows_side(node, right_sums)
        {
            let right_squares = (walk.total_squares + side.squares) - 2.0 * side.cross;
            let children_cost = criterion.cost(side.weight, side.squares)
                + criterion.cost(right_weight, right_squares);
            self.offer(children_cost, walk.atom, threshold, None, best);
        }
        true
    }
}

/// The left side of a walk over whole sums: its weight, its entries' sum of squares,
/// their sum of products with the node's sums, and its samples (counted only where
/// `min_samples_leaf` needs them). Exact whole numbers below 2^53.
#[derive(Debug, Default)]
pub(super) struct WholeLeft {
    pub(super) weight: f64,
    pub(super) squares: f64,
    pub(super) cross: f64,
    pub(super) n: usize,
}

/// What stays the same along one atom's walk over whole sums.
pub(super) struct WholeWalk {
    /// The node's entries' sum of squares.
    pub(super) total_squares: f64,
    pub(super) count_samples: bool,
    pub(super) n_samples: usize,
    pub(super) atom: usize,
}

/// Copies of a value table filled side by side, the samples taking turns, for a table
/// of `table_len` sums and `n_samples` samples: where consecutive samples share a value
/// and class (binary X, few bins, a background pixel), each one's addition would wait
/// on the one before; copies let them run together. Only where the table is small
/// beside the node, since the copies are added together afterwards.
pub(super) fn table_copies(table_len: usize, n_samples: usize) -> usize {
    if 4 * table_len <= n_samples {
        4
    } else if 2 * table_len <= n_samples {
        2
    } else {
        1
    }
}

/// Adds each sample's whole `amount` at its value (`offset`) and class in `sums`
/// (rows of `stride` sums; without `CLASSES`, every class is 0 and `present` is left
/// to the caller), sample `i` into copy
/// `i % COPIES` of the table (each `sums.len() / COPIES` long), marks the values taken
/// in `present`, then adds the copies into the first. Sums of whole numbers that do
/// not overflow: the same table in whatever order they are added.
#[inline(always)]
pub(super) fn fill_whole_sums<const COPIES: usize, const CLASSES: bool, S>(
    sums: &mut [S],
    present: &mut [u8],
    stride: usize,
    offsets: &[u32],
    classes: &[u32],
    amounts: &[S],
) where
    S: Copy + std::ops::AddAssign,
{
    let table_len = sums.len() / COPIES;
    let class = |i: usize| if CLASSES { classes[i] as usize } else { 0 };
    let whole_turns = offsets.len() / COPIES * COPIES;
    let turns = offsets[..whole_turns]
        .chunks_exact(COPIES)
        .zip(amounts[..whole_turns].chunks_exact(COPIES))
        .enumerate();
    for (turn, (offsets, amounts)) in turns {
        for copy in 0..COPIES {
            let offset = offsets[copy] as usize;
            let class = class(turn * COPIES + copy);
            sums[copy * table_len + offset * stride + class] += amounts[copy];
            if CLASSES {
                present[offset] = 1;
            }
        }
    }
    for i in whole_turns..offsets.len() {
        let offset = offsets[i] as usize;
        sums[offset * stride + class(i)] += amounts[i];
        if CLASSES {
            present[offset] = 1;
        }
    }
    let (first, others) = sums.split_at_mut(table_len);
    for copy in others.chunks_exact(table_len) {
        for (sum, &more) in first.iter_mut().zip(copy) {
            *sum += more;
        }
    }
}

/// Moves one value's class sums (`row`, padded to whole lanes) from the right side to
/// the left (`left`, whose node totals are `totals`); gives what the left side's sum of
/// squares, its sum of products with the totals and its weight gain. Exact whole
/// numbers throughout (see [`Lanes`]), in whatever order they are added.
#[inline(always)]
fn move_left(left: &mut [Lanes], totals: &[Lanes], row: &[u32]) -> [f64; 3] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        assert!(totals.len() == left.len() && row.len() == LANES * left.len());
        // SAFETY: SSE2 is part of x86-64; every load and store is inside `left`,
        // `totals` (as long as `left`) and `row` (LANES entries per lane group).
        unsafe {
            let (mut squares, mut products, mut weight) =
                (_mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd());
            for (k, (left, total)) in left.iter_mut().zip(totals).enumerate() {
                // At most 2^26: exact through `i32`.
                let amounts = _mm_loadu_si128(row.as_ptr().add(k * LANES) as *const __m128i);
                for (half, amount) in [
                    _mm_cvtepi32_pd(amounts),
                    _mm_cvtepi32_pd(_mm_shuffle_epi32::<0b1110_1110>(amounts)),
                ]
                .into_iter()
                .enumerate()
                {
                    let side = left.as_mut_ptr().add(2 * half);
                    let sum = _mm_loadu_pd(side);
                    let twice = _mm_add_pd(sum, sum);
                    squares = _mm_add_pd(squares, _mm_mul_pd(amount, _mm_add_pd(twice, amount)));
                    let total = _mm_loadu_pd(total.as_ptr().add(2 * half));
                    products = _mm_add_pd(products, _mm_mul_pd(amount, total));
                    weight = _mm_add_pd(weight, amount);
                    _mm_storeu_pd(side, _mm_add_pd(sum, amount));
                }
            }
            let lanes = |v: __m128d| {
                let mut pair = [0.0f64; 2];
                _mm_storeu_pd(pair.as_mut_ptr(), v);
                pair[0] + pair[1]
            };
            [lanes(squares), lanes(products), lanes(weight)]
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut moved = [0.0f64; 3];
        for ((left, total), amounts) in left.iter_mut().zip(totals).zip(row.chunks_exact(LANES)) {
            for lane in 0..LANES {
                let amount = amounts[lane] as f64;
                moved[0] += amount * (2.0 * left[lane] + amount);
                moved[1] += amount * total[lane];
                moved[2] += amount;
                left[lane] += amount;
            }
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::class_criteria::{Entropy, Gini};
    use super::super::counted_scan::value_range;
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
        let (low, high) = value_range(values);
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
