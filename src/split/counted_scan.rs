//! The scan of one atom's whole projections counted by value: each value's sums of
//! entries (and weights) in a table, then the boundaries between present values in
//! ascending order, as the sorted scan would take them, without sorting.

use super::criterion::SplitCriterion;
use super::scan::{midpoint, table_width, NodeScan};
use super::search::SplitCandidate;
use super::whole_counts::Lanes;

/// Per whole value of a projection: how many samples take it, and the sums of their
/// entries (and of their weights, unless entries sum to them).
#[derive(Debug, Default)]
pub(super) struct ValueTable {
    /// Per node sample, the offset of its value above the lowest.
    pub(super) offsets: Vec<u32>,
    /// Per value, how many samples take it; when sorting by counting, where its keys
    /// start.
    pub(super) counts: Vec<u32>,
    sums: Vec<f64>,
    /// Per value, the sums of its whole entries, in rows padded to whole lanes
    /// (`NodeScan::scan_whole_counts`).
    pub(super) whole_sums: Vec<u32>,
    /// Per value, 1 where a sample takes it, and the offsets of those values in order.
    pub(super) present: Vec<u8>,
    pub(super) present_offsets: Vec<u32>,
    /// Per node sample, its whole weight (`counts_exactly`), and for two classes the
    /// same in its class's half of a `u64` (`pair_amounts`), with their sums per value.
    pub(super) whole_amounts: Vec<u32>,
    pub(super) whole_pairs: Vec<u64>,
    pub(super) pair_sums: Vec<u64>,
    /// Per entry, in lanes, the sums of the left side of a boundary and the node's
    /// (`NodeScan::scan_whole_counts`).
    pub(super) whole_left: Vec<Lanes>,
    pub(super) whole_totals: Vec<Lanes>,
}

/// Counts the samples at each of `span` values into `counts`, from their `offsets`.
pub(super) fn count_values(offsets: &[u32], span: usize, counts: &mut Vec<u32>) {
    counts.clear();
    counts.resize(span, 0);
    for &offset in offsets {
        counts[offset as usize] += 1;
    }
}

/// How a node's projections on an atom are counted by value (or by bin), given how the
/// node's entries are summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Counting {
    /// Whole amounts in integers ([`NodeScan::scan_whole_counts`]).
    Whole,
    /// Sums in `f64` ([`NodeScan::scan_counted`]).
    Counted,
}

/// Most distinct values counted: offsets below 2^23 convert from f32 by one addition.
pub(super) const MAX_COUNTED_SPAN: usize = 1 << 23;

/// Copies of the counting table that consecutive samples take turns adding into.
pub(super) const TABLE_COPIES: usize = 4;

impl<C: SplitCriterion> NodeScan<'_, C> {
    /// For projections (in node order) that are whole numbers in `low..low + span`:
    /// sums the entries (and weights) of each value, then scans the boundaries between
    /// present values in ascending order, as [`Self::scan_sorted`] would, without
    /// sorting.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn scan_counted(
        &self,
        values: &[f32],
        low: f32,
        span: usize,
        atom: usize,
        table: &mut ValueTable,
        left: &mut Vec<f64>,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        whole_offsets(values, low, span, &mut table.offsets);
        self.scan_counted_offsets(low, span, atom, table, left, best);
    }

    /// [`Self::scan_counted`] of the values at `low` plus each sample's offset,
    /// already in `table.offsets` (each below `span`).
    pub(super) fn scan_counted_offsets(
        &self,
        low: f32,
        span: usize,
        atom: usize,
        table: &mut ValueTable,
        left: &mut Vec<f64>,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        let criterion = self.criterion;
        let node = self.node;
        let n_entries = criterion.n_entries();
        let width = table_width(criterion);
        let offsets = &table.offsets;
        // Sample counts matter only to keep `min_samples_leaf` samples on each side;
        // otherwise a value is present when its weight (always positive) is.
        let count_samples = self.min_leaf > 1;
        // Consecutive samples add into different copies of the table, so that runs of
        // equal values do not wait on each other's read-modify-write.
        let counts = &mut table.counts;
        counts.clear();
        let sums = &mut table.sums;
        sums.clear();
        sums.resize(span * width * TABLE_COPIES, 0.0);
        for (position, &offset) in offsets.iter().enumerate() {
            let row = offset as usize * width;
            let copy = position % TABLE_COPIES;
            criterion.entries(node, position, |entry, amount| {
                sums[(row + entry) * TABLE_COPIES + copy] += amount;
            });
            if !C::ENTRIES_SUM_TO_WEIGHT {
                sums[(row + n_entries) * TABLE_COPIES + copy] += node.weights[position];
            }
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
        for entry in 0..span * width {
            sums[entry] = sums[entry * TABLE_COPIES..][..TABLE_COPIES].iter().sum();
        }
        let sums = &sums[..span * width];

        let side_terms = |left: &[f64], left_weight: f64, right_weight: f64| {
            let left_terms: f64 = left.iter().map(|&s| criterion.term(s, left_weight)).sum();
            let right_terms: f64 = left
                .iter()
                .zip(&node.sums)
                .map(|(&l, &s)| criterion.term(s - l, right_weight))
                .sum();
            (left_terms, right_terms)
        };
        let present = ValuesPresent {
            sums,
            width,
            counts: count_samples.then_some(&counts[..]),
            n_samples: offsets.len(),
            low,
        };
        self.scan_boundaries(&present, atom, left, best, side_terms);
    }
}

/// Per-value sums of one atom's whole projections, ascending from `low`: `width` per
/// value, the entries' sums and then, where entries do not sum to the weight, the
/// weight; and, where `min_samples_leaf` needs them, the samples per value.
struct ValuesPresent<'a> {
    sums: &'a [f64],
    width: usize,
    counts: Option<&'a [u32]>,
    /// The node's samples.
    n_samples: usize,
    low: f32,
}

impl<C: SplitCriterion> NodeScan<'_, C> {
    /// Scans the boundaries between `present` values in ascending order, moving each
    /// value's sums to the left, and offers every split the limits and the criterion
    /// allow, its children's terms from `side_terms(left, left_weight, right_weight)`.
    #[inline(always)]
    fn scan_boundaries(
        &self,
        present: &ValuesPresent<'_>,
        atom: usize,
        left: &mut Vec<f64>,
        best: &mut Option<(f64, SplitCandidate)>,
        side_terms: impl Fn(&[f64], f64, f64) -> (f64, f64),
    ) {
        let criterion = self.criterion;
        let node = self.node;
        let n_entries = criterion.n_entries();
        let low = present.low;
        left.clear();
        left.resize(n_entries, 0.0);
        let (mut left_n, mut left_weight) = (0usize, 0.0f64);
        let mut previous: Option<usize> = None;
        for (offset, value_sums) in present.sums.chunks_exact(present.width).enumerate() {
            let weight: f64 = if C::ENTRIES_SUM_TO_WEIGHT {
                value_sums.iter().sum()
            } else {
                value_sums[n_entries]
            };
            if weight <= 0.0 {
                continue;
            }
            if let Some(below) = previous {
                if present.counts.is_some() && present.n_samples - left_n < self.min_leaf {
                    break; // the right side only shrinks from here
                }
                let right_weight = node.weight - left_weight;
                let enough_left = present.counts.is_none() || left_n >= self.min_leaf;
                let right = || left.iter().zip(&node.sums).map(|(&l, &s)| s - l);
                if enough_left
                    && self.heavy_enough(left_weight)
                    && self.heavy_enough(right_weight)
                    && criterion.allows_side(node, left.iter().copied())
                    && criterion.allows_side(node, right())
                {
                    let (left_terms, right_terms) = side_terms(left, left_weight, right_weight);
                    let children_cost = criterion.cost(left_weight, left_terms)
                        + criterion.cost(right_weight, right_terms);
                    let threshold = || midpoint(low + below as f32, low + offset as f32);
                    self.offer(children_cost, atom, threshold, None, best);
                }
            }
            for (l, &s) in left.iter_mut().zip(value_sums) {
                *l += s;
            }
            left_weight += weight;
            if let Some(counts) = present.counts {
                left_n += counts[offset] as usize;
            }
            previous = Some(offset);
        }
    }
}

/// The smallest and largest of `values` (NaN passed over; infinite and negative
/// infinite when there are none). Of zeros of both signs either may be given:
/// projections, sums from `+0.0`, are never `-0.0`.
pub(crate) fn value_range(values: &[f32]) -> (f32, f32) {
    // `v < low` is false for NaN: a missing value leaves the bounds as they were.
    let fold = |(low, high): (f32, f32), &v: &f32| {
        (
            if v < low { v } else { low },
            if v > high { v } else { high },
        )
    };
    let empty = (f32::INFINITY, f32::NEG_INFINITY);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let chunks = values.chunks_exact(8);
        let rest = chunks.remainder();
        // SAFETY: SSE is part of x86-64; each load reads 4 values inside a chunk of 8.
        let (lows, highs) = unsafe {
            let (mut low_a, mut high_a) = (_mm_set1_ps(empty.0), _mm_set1_ps(empty.1));
            let (mut low_b, mut high_b) = (low_a, high_a);
            for chunk in chunks {
                let a = _mm_loadu_ps(chunk.as_ptr());
                let b = _mm_loadu_ps(chunk.as_ptr().add(4));
                // `minps(x, y)` gives `y` where `x` is NaN, as the fold above.
                low_a = _mm_min_ps(a, low_a);
                low_b = _mm_min_ps(b, low_b);
                high_a = _mm_max_ps(a, high_a);
                high_b = _mm_max_ps(b, high_b);
            }
            let (mut lows, mut highs) = ([0.0f32; 4], [0.0f32; 4]);
            _mm_storeu_ps(lows.as_mut_ptr(), _mm_min_ps(low_a, low_b));
            _mm_storeu_ps(highs.as_mut_ptr(), _mm_max_ps(high_a, high_b));
            (lows, highs)
        };
        let lanes = (
            lows.iter().fold(empty, fold).0,
            highs.iter().fold(empty, fold).1,
        );
        rest.iter().fold(lanes, fold)
    }
    #[cfg(not(target_arch = "x86_64"))]
    values.iter().fold(empty, fold)
}

/// Writes, per whole value in `values` (all in `low..low + span`, `span` at most
/// `MAX_COUNTED_SPAN`), its offset above `low`. Any other value (X changed while the
/// tree grew) gets some offset below `span`: a wrong split at worst, never an index
/// outside the tables.
pub(super) fn whole_offsets(values: &[f32], low: f32, span: usize, offsets: &mut Vec<u32>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_ranges_pass_over_missing_values_wherever_they_lie() {
        let mut rng = crate::rng::Rng::new(5, 0);
        for len in 0..41 {
            for _ in 0..20 {
                let values: Vec<f32> = (0..len)
                    .map(|_| match rng.below(4) {
                        0 => f32::NAN,
                        _ => rng.unit() as f32 * 200.0 - 100.0,
                    })
                    .collect();
                let present = values.iter().filter(|v| !v.is_nan());
                let low = present.clone().copied().fold(f32::INFINITY, f32::min);
                let high = present.copied().fold(f32::NEG_INFINITY, f32::max);
                assert_eq!(value_range(&values), (low, high), "{values:?}");
            }
        }
    }

    #[test]
    fn offsets_of_values_that_are_not_whole_stay_below_the_span() {
        let pool = [0.0f32, 1.0, 2.0, 0.5, f32::NAN, f32::INFINITY, -1e30, -0.0];
        let mut offsets = Vec::new();
        whole_offsets(&pool, 0.0, 3, &mut offsets);
        assert_eq!(&offsets[..3], &[0, 1, 2]);
        assert!(offsets.iter().all(|&offset| offset < 3), "{offsets:?}");
    }
}
