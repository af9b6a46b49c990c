//! Whole counts of two classes (`Gini` or entropy over two classes, weights whole): each
//! sample's amount sits in its class's half of a `u64`, so that one addition counts it,
//! and the walk over the values reads both classes' sums from one word. The sums and
//! costs are those of [`NodeScan::scan_whole_offsets`]'s general walk, exact whole
//! numbers, so the split is the same.

use super::counted_scan::{count_values, ValueTable};
use super::criterion::{NodeTargets, SplitCriterion};
use super::scan::{midpoint, NodeScan};
use super::search::SplitCandidate;
use super::whole_counts::{fill_whole_sums, table_copies, WholeLeft, WholeWalk};

/// For a node that [`counts_exactly`](super::whole_counts::counts_exactly) with at most two classes, each sample's amount
/// in the half of a `u64` its class names, so that one addition counts it
/// ([`NodeScan::scan_pairs`]); empty otherwise. Sums of at most 2^26 a half
/// never carry into the other.
pub(super) fn pair_amounts(node: &NodeTargets, n_entries: usize, table: &mut ValueTable) {
    table.whole_pairs.clear();
    if n_entries <= 2 {
        let amounts = node.classes.iter().zip(&table.whole_amounts);
        table
            .whole_pairs
            .extend(amounts.map(|(&class, &amount)| (amount as u64) << (32 * (class & 1))));
    }
}

impl<C: SplitCriterion> NodeScan<'_, C> {
    /// [`Self::scan_whole_offsets`] for two entries (classes) whose amounts are paired
    /// in `table.whole_pairs` ([`pair_amounts`]): one addition a sample into the sums
    /// of each value, whose halves are the two classes' sums, then the boundaries
    /// between present values walked straight from them. The same exact sums and
    /// costs, so the same split.
    pub(super) fn scan_pairs(
        &self,
        low: f32,
        span: usize,
        atom: usize,
        table: &mut ValueTable,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        let node = self.node;
        let n_samples = table.offsets.len();
        let copies = table_copies(span, n_samples);
        table.pair_sums.clear();
        table.pair_sums.resize(span * copies, 0);
        let fill = match copies {
            4 => fill_whole_sums::<4, false, u64>,
            2 => fill_whole_sums::<2, false, u64>,
            _ => fill_whole_sums::<1, false, u64>,
        };
        // Presence is read from the sums: every amount of a node is at least 1 (its
        // weights are positive).
        fill(
            &mut table.pair_sums,
            &mut [],
            1,
            &table.offsets,
            &[],
            &table.whole_pairs,
        );
        let count_samples = self.min_leaf > 1;
        if count_samples {
            count_values(&table.offsets, span, &mut table.counts);
        }
        let counts = &table.counts;
        let totals = [0, 1].map(|entry| node.sums.get(entry).copied().unwrap_or(0.0));
        // Exact whole numbers throughout (see `scan_whole_offsets`).
        let total_squares: f64 = node.sums.iter().map(|&sum| sum * sum).sum();
        let (mut left, mut side) = ([0.0f64; 2], WholeLeft::default());
        let walk = WholeWalk {
            total_squares,
            count_samples,
            n_samples,
            atom,
        };
        let mut below: Option<usize> = None;
        for (offset, &pair) in table.pair_sums[..span].iter().enumerate() {
            if pair == 0 {
                continue;
            }
            if let Some(below) = below {
                let left_sums = left.iter().take(node.sums.len()).copied();
                let threshold = || midpoint(low + below as f32, low + offset as f32);
                if !self.offer_whole_boundary(&walk, &side, left_sums, threshold, best) {
                    break; // the right side only shrinks from here
                }
            }
            for (entry, amount) in [pair as u32, (pair >> 32) as u32].into_iter().enumerate() {
                let amount = amount as f64;
                side.squares += amount * (2.0 * left[entry] + amount);
                side.cross += amount * totals[entry];
                side.weight += amount;
                left[entry] += amount;
            }
            if count_samples {
                side.n += counts[offset] as usize;
            }
            below = Some(offset);
        }
    }
}
