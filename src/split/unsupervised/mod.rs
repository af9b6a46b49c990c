//! Unsupervised split search: each candidate atom's projected values are ranked as two
//! clusters on either side of every threshold by an [`UnsupervisedCriterion`]. The
//! criteria read only the first two moments of each side, so one ordered pass per atom
//! ranks every threshold: a sorted scan, moving a sample at a time to the left, or,
//! for whole projections spanning few values, a counted one, moving a value at a time.

mod criteria;
mod fast_bic;
mod logarithm;

pub(crate) use criteria::AtomCosts;
pub use criteria::{Moments, TwoMeans, UnsupervisedCriterion};
pub use fast_bic::FastBic;

use criteria::LeftSides;
use fast_bic::FastBicLogs;

use super::counted_scan::{value_range, whole_offsets, MAX_COUNTED_SPAN};
use super::projection::NodeProjector;
use super::scan::midpoint;
use super::search::SplitCandidate;
use super::sort::sort_by_value;
use super::sort::{key_value, sort_key};
use crate::atoms::AtomSet;
use crate::data::{Feature, Rows};

/// Whole projections spanning at most this many values per node sample are counted by
/// value instead of sorted. The count visits a word of bits per 64 values and only the
/// values taken, so a wide span costs little: 32 took 13% fewer instructions than 8
/// (MORF two-means on Fashion-MNIST 2,000), 128 no fewer than 32.
const COUNTED_SPAN_PER_SAMPLE: usize = 32;

/// Whole numbers up to this magnitude are exact in f64, and so are sums of them.
const EXACT_F64_INTEGERS: f64 = (1u64 << 53) as f64;

/// Buffers reused across nodes so that the search allocates nothing once warm.
#[derive(Debug, Default)]
pub struct UnsupervisedScratch {
    projector: NodeProjector,
    values: Vec<f32>,
    /// The node samples' weights, in their order.
    weights: Vec<f64>,
    keys: Vec<u64>,
    sort_buffer: Vec<u64>,
    by_value: ValueCounts,
    thresholds: Thresholds,
    logs: FastBicLogs,
}

impl UnsupervisedScratch {
    /// The projections of the last [`best_unsupervised_split`]'s node samples on its
    /// atom `atom`, in the order of its `samples`:
    /// [`Atom::project`](crate::atoms::Atom::project)'s values bit for bit, so that a
    /// tree sends its samples to the children without projecting them again. Valid
    /// only until the scratch is lent to another search.
    pub(crate) fn projections(&self, atom: usize, n_samples: usize) -> &[f32] {
        &self.values[atom * n_samples..(atom + 1) * n_samples]
    }
}

/// Per whole value of the atom counted, the weight and number of samples taking it,
/// and the values some sample takes. The tables are all zero between scans, each
/// scan clearing only the entries it wrote, so that a node of few samples spanning
/// many values does not clear them all.
#[derive(Debug, Default)]
struct ValueCounts {
    /// Each sample's value less the lowest, in the samples' order.
    offsets: Vec<u32>,
    weights: Vec<f64>,
    counts: Vec<u32>,
    /// A bit per offset, set where some sample takes it.
    taken: Vec<u64>,
    /// The offsets (values less the lowest) that some sample takes, ascending.
    present: Vec<u32>,
}

/// An atom's thresholds waiting for their costs, which are worked out together
/// ([`AtomCosts::children_costs`]).
#[derive(Debug, Default)]
struct Thresholds {
    lefts: LeftSides,
    /// The children's cost at each threshold of `lefts`.
    costs: Vec<f64>,
    /// For the sorted scan, the sorted position each threshold follows.
    after: Vec<u32>,
}

/// The best split found so far: its decrease and where it lies.
type Best = Option<(f64, SplitCandidate)>;

/// Keeps the split of `atom` at `threshold()` if it decreases the cost more than the
/// best so far (so ties keep the earliest atom and the leftmost threshold). The
/// threshold is worked out only for a split kept: most are not.
#[inline(always)]
fn offer(best: &mut Best, decrease: f64, atom: usize, threshold: impl FnOnce() -> f32) {
    if best.is_none_or(|(best_decrease, _)| decrease > best_decrease) {
        *best = Some((
            decrease,
            SplitCandidate {
                atom,
                threshold: threshold(),
                impurity_decrease: decrease,
                missing_left: None,
            },
        ));
    }
}

/// Offers the thresholds of one atom, threshold `k` at `threshold(k)` leaving children
/// that cost `costs[k]`: the same split as offering each in turn (the largest
/// decrease, the leftmost of equal ones), found by a pass that vectorises and a search
/// for where the largest lies, rather than a branch on the best so far per threshold.
#[inline(always)]
fn offer_thresholds(
    best: &mut Best,
    node_cost: f64,
    costs: &[f64],
    atom: usize,
    threshold: impl Fn(usize) -> f32,
) {
    const LANES: usize = 4;
    /// Each lane's largest decrease over `costs`, and whether one was NaN.
    #[inline(always)]
    fn fold(node_cost: f64, costs: &[f64], largest: &mut [f64; LANES], unordered: &mut bool) {
        for (lane, &cost) in largest.iter_mut().zip(costs) {
            let decrease = node_cost - cost;
            *unordered |= decrease.is_nan();
            *lane = if decrease > *lane { decrease } else { *lane };
        }
    }
    let mut largest = [f64::NEG_INFINITY; LANES];
    let mut unordered = false;
    let chunks = costs.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        fold(node_cost, chunk, &mut largest, &mut unordered);
    }
    fold(node_cost, rest, &mut largest, &mut unordered);
    let largest = largest.into_iter().fold(f64::NEG_INFINITY, f64::max);
    // A first decrease of NaN is kept where there is no best yet, and none after it:
    // in turn, as offering each would.
    if unordered {
        for (k, &cost) in costs.iter().enumerate() {
            offer(best, node_cost - cost, atom, || threshold(k));
        }
        return;
    }
    // None only where min_samples_leaf leaves no threshold.
    if let Some(k) = costs.iter().position(|&cost| node_cost - cost == largest) {
        offer(best, largest, atom, || threshold(k));
    }
}

/// The centre that whole projections' moments are taken about: the whole number
/// nearest their mean, from the lowest value `low`, their total weight and the
/// weighted sum of their offsets above `low` (all exact). Deviations from it are whole,
/// so every sum of moments within 2^53 is exact, in whatever order it is added up.
#[inline(always)]
fn whole_centre(low: f32, weight: f64, offset_sum: f64) -> f64 {
    low as f64 + (offset_sum / weight).round()
}

/// Finds the (atom, threshold) of largest decrease by `criterion` over all `atoms`,
/// between distinct projected values, leaving at least `min_samples_leaf`
/// samples on each side. `samples` are the node's local samples (rows
/// `row_of[sample]` of `rows`, whole, positive weights `weight_of[sample]`). `whole_values`
/// says that projections on atoms of whole weights are exact whole numbers (whole X
/// whose sums stay within 2^24): their moments are then summed exactly, and counted by
/// value where they span few values. Ties keep the earliest atom and the leftmost
/// threshold. `None` when no atom separates the samples. The projections must not be
/// missing (NaN).
#[allow(clippy::too_many_arguments)]
pub fn best_unsupervised_split<C: AtomCosts, T: Feature>(
    criterion: &C,
    rows: &Rows<'_, T>,
    row_of: &[u32],
    weight_of: &[f64],
    samples: &[u32],
    atoms: &AtomSet,
    min_samples_leaf: usize,
    whole_values: bool,
    scratch: &mut UnsupervisedScratch,
) -> Option<SplitCandidate> {
    let n = samples.len();
    let min_leaf = min_samples_leaf.max(1);
    if n < 2 * min_leaf {
        return None;
    }
    let values = &mut scratch.values;
    scratch
        .projector
        .project(rows, row_of, samples, atoms, values);
    // The node's weights in its samples' order, read once here rather than through
    // the samples for each atom.
    let weights = &mut scratch.weights;
    weights.clear();
    weights.extend(samples.iter().map(|&s| weight_of[s as usize]));
    let weights = &weights[..];
    let node_weight: f64 = weights.iter().sum();
    criterion.start_node(&mut scratch.logs, node_weight, weights);
    let mut best: Best = None;
    for atom in 0..atoms.len() {
        let values = &values[atom * n..(atom + 1) * n];
        let whole = whole_values && atoms.get(atom).has_integer_weights();
        if whole {
            let (low, high) = value_range(values);
            if low == high {
                continue; // constant along this atom
            }
            // Every sum of squared offsets stays exact below this span.
            let span = (high as f64 - low as f64) + 1.0;
            if span <= (COUNTED_SPAN_PER_SAMPLE * n).min(MAX_COUNTED_SPAN) as f64
                && node_weight * span * span <= EXACT_F64_INTEGERS
            {
                let counted = CountedAtom {
                    values,
                    low,
                    span: span as usize,
                };
                counted.scan(
                    criterion,
                    weights,
                    min_leaf,
                    atom,
                    &mut scratch.by_value,
                    &mut scratch.thresholds,
                    &mut scratch.logs,
                    &mut best,
                );
                continue;
            }
        }
        let sorted = SortedAtom { values, whole };
        let (keys, sort_buffer) = (&mut scratch.keys, &mut scratch.sort_buffer);
        sorted.scan(
            criterion,
            weights,
            min_leaf,
            atom,
            keys,
            sort_buffer,
            &mut scratch.thresholds,
            &mut scratch.logs,
            &mut best,
        );
    }
    best.map(|(_, candidate)| candidate)
}

/// One atom's projections, in node order; `whole` when they are exact whole numbers.
struct SortedAtom<'a> {
    values: &'a [f32],
    whole: bool,
}

impl SortedAtom<'_> {
    /// Ranks the thresholds between the atom's distinct values by sorting them and
    /// moving one sample at a time to the left; the thresholds' costs are worked out
    /// together ([`AtomCosts::children_costs`]). `weights` are the samples', in the
    /// order of the values.
    #[allow(clippy::too_many_arguments)]
    fn scan<C: AtomCosts>(
        &self,
        criterion: &C,
        weights: &[f64],
        min_leaf: usize,
        atom: usize,
        keys: &mut Vec<u64>,
        sort_buffer: &mut Vec<u64>,
        thresholds: &mut Thresholds,
        logs: &mut FastBicLogs,
        best: &mut Best,
    ) {
        let (values, n) = (self.values, self.values.len());
        keys.clear();
        keys.extend(
            values
                .iter()
                .enumerate()
                .map(|(position, &value)| (sort_key(value) as u64) << 32 | position as u64),
        );
        sort_by_value(keys, sort_buffer);
        if keys[0] >> 32 == keys[n - 1] >> 32 {
            return; // constant along this atom
        }
        let value_at = |key: u64| values[key as u32 as usize] as f64;
        let weight_of_key = |key: u64| weights[key as u32 as usize];
        // The node's moments about its centre, then each threshold's left side.
        let centre = if self.whole {
            let low = value_at(keys[0]);
            let (weight, offset_sum) = keys.iter().fold((0.0, 0.0), |(w, s), &key| {
                let weight = weight_of_key(key);
                (w + weight, s + weight * (value_at(key) - low))
            });
            whole_centre(low as f32, weight, offset_sum)
        } else {
            let mut sums = Moments::default();
            for &key in keys.iter() {
                sums.add(value_at(key), weight_of_key(key));
            }
            sums.sum / sums.weight
        };
        let mut total = Moments::default();
        for &key in keys.iter() {
            total.add(value_at(key) - centre, weight_of_key(key));
        }
        let terms = criterion.atom_terms(&total);
        let node_cost = criterion.node_cost_of(&terms);
        let Thresholds {
            lefts,
            costs,
            after,
        } = thresholds;
        lefts.clear();
        after.clear();
        let mut left = Moments::default();
        for i in 0..n - 1 {
            let key = keys[i];
            left.add(value_at(key) - centre, weight_of_key(key));
            let (here, next) = (key >> 32, keys[i + 1] >> 32);
            if here == next || i + 1 < min_leaf || n - (i + 1) < min_leaf {
                continue;
            }
            lefts.push(&left, i + 1);
            after.push(i as u32);
        }
        criterion.children_costs(lefts, &total, &terms, logs, costs);
        offer_thresholds(best, node_cost, costs, atom, |k| {
            let i = after[k] as usize;
            let (here, next) = ((keys[i] >> 32) as u32, (keys[i + 1] >> 32) as u32);
            midpoint(key_value(here), key_value(next))
        });
    }
}

/// One atom's whole projections, all in `low..low + span`.
struct CountedAtom<'a> {
    values: &'a [f32],
    low: f32,
    span: usize,
}

impl CountedAtom<'_> {
    /// Ranks the thresholds between the atom's distinct values as the sorted scan
    /// does, from the weight (and, where `min_leaf` needs it, the number) of samples
    /// taking each value: the moments are exact, so the same sums in another order.
    /// Only the values some sample takes are visited after the count, and the
    /// thresholds' costs are worked out together ([`AtomCosts::children_costs`]).
    /// `sample_weights` are the samples', in the order of the values.
    #[allow(clippy::too_many_arguments)]
    fn scan<C: AtomCosts>(
        &self,
        criterion: &C,
        sample_weights: &[f64],
        min_leaf: usize,
        atom: usize,
        by_value: &mut ValueCounts,
        thresholds: &mut Thresholds,
        logs: &mut FastBicLogs,
        best: &mut Best,
    ) {
        let (low, span, n) = (self.low, self.span, self.values.len());
        let count_samples = min_leaf > 1;
        let ValueCounts {
            offsets,
            weights,
            counts,
            taken,
            present,
        } = by_value;
        let Thresholds { lefts, costs, .. } = thresholds;
        let words = span.div_ceil(64);
        if weights.len() < span {
            weights.resize(span, 0.0);
            taken.resize(words, 0);
        }
        if count_samples && counts.len() < span {
            counts.resize(span, 0);
        }
        whole_offsets(self.values, low, span, offsets);
        // Through local slices, which the compiler keeps in registers, where the
        // scratch's vectors would be read again at every write to the table.
        let (table, bits) = (&mut weights[..span], &mut taken[..words]);
        for (&offset, &weight) in offsets.iter().zip(sample_weights) {
            let offset = offset as usize;
            // SAFETY: `whole_offsets` gives offsets below `span`, the length of
            // `table`, and `bits` has a bit for each of them.
            unsafe {
                *table.get_unchecked_mut(offset) += weight;
                *bits.get_unchecked_mut(offset / 64) |= 1 << (offset % 64);
            }
        }
        if count_samples {
            let counts = &mut counts[..span];
            for &offset in offsets.iter() {
                counts[offset as usize] += 1;
            }
        }
        // The taken offsets in order, a word of the bits at a time, with their total
        // weight and weighted sum for the centre.
        present.clear();
        let (mut weight, mut offset_sum) = (0.0, 0.0);
        for (word_index, word) in bits.iter_mut().enumerate() {
            let mut word = std::mem::take(word);
            while word != 0 {
                let offset = (word_index * 64) as u32 + word.trailing_zeros();
                let offset_weight = table[offset as usize];
                weight += offset_weight;
                offset_sum += offset_weight * offset as f64;
                present.push(offset);
                word &= word - 1;
            }
        }
        let centre = whole_centre(low, weight, offset_sum) - low as f64;
        // The left side of the threshold after each taken value but the last, the
        // tables back to zero for the next scan as they are read; the last value
        // completes the node's moments, summed in the same order.
        let (last, before_last) = present.split_last().expect("low and high are taken");
        lefts.resize(before_last.len());
        let (left_weights, left_sums, left_squares, left_samples) = lefts.columns_mut();
        let left_sides = left_weights
            .iter_mut()
            .zip(left_sums)
            .zip(left_squares)
            .zip(left_samples);
        let mut left = Moments::default();
        let mut left_n = 0;
        for (&offset, (((weight, sum), sum_squares), samples)) in before_last.iter().zip(left_sides)
        {
            let offset = offset as usize;
            left.add(offset as f64 - centre, std::mem::take(&mut table[offset]));
            if count_samples {
                left_n += std::mem::take(&mut counts[offset]) as usize;
            }
            (*weight, *sum, *sum_squares, *samples) =
                (left.weight, left.sum, left.sum_squares, left_n);
        }
        let last = *last as usize;
        left.add(last as f64 - centre, std::mem::take(&mut table[last]));
        if count_samples {
            counts[last] = 0;
        }
        let total = left;
        let terms = criterion.atom_terms(&total);
        let node_cost = criterion.node_cost_of(&terms);
        criterion.children_costs(lefts, &total, &terms, logs, costs);
        let threshold = |k: usize| midpoint(low + present[k] as f32, low + present[k + 1] as f32);
        if !count_samples {
            offer_thresholds(best, node_cost, costs, atom, threshold);
            return;
        }
        for (k, &cost) in costs.iter().enumerate() {
            let left_n = lefts.n_samples[k];
            if left_n >= min_leaf && n - left_n >= min_leaf {
                offer(best, node_cost - cost, atom, || threshold(k));
            }
        }
    }
}

#[cfg(test)]
mod tests;
