use super::binned::BinnedAtom;
use super::bit_sums::BitSums;
use super::counted_scan::{value_range, Counting, ValueTable, MAX_COUNTED_SPAN, TABLE_COPIES};
use super::criterion::{NodeTargets, SplitCriterion};
use super::pair_counts::pair_amounts;
use super::projection::NodeProjector;
use super::scan::{table_width, NodeScan};
use super::sort::{sort_generally, sort_whole_offsets, sort_whole_values};
use super::whole_counts::counts_exactly;
use crate::atoms::AtomSet;
use crate::data::{Feature, Rows};

/// How a node may be split.
#[derive(Debug, Clone, Copy)]
pub struct SplitRule {
    /// Fewest samples either child may hold.
    pub min_samples_leaf: usize,
    /// Least weight either child may hold (besides some weight, always).
    pub min_weight_leaf: f64,
    /// [`Rows::whole_values`](crate::data::Rows::whole_values) of X, where its sums
    /// [stay exact](crate::data::sums_stay_exact) for the weights of the node's atoms:
    /// only where it is known that projections on atoms with whole weights are exact
    /// whole numbers.
    /// Then an atom taking few distinct values on a node is counted by value instead of
    /// sorted.
    pub whole_range: Option<(f32, f32)>,
    /// Whether X may hold missing values (NaN), so that projections may be missing.
    /// Without them the search never looks for missing projections.
    pub missing_values: bool,
    /// Most bins a node's projections on one atom are counted in, equal widths over
    /// their range at that node; thresholds are then searched between bins only.
    /// Bins count where X has no missing values and the node holds enough samples for
    /// counting its bins to beat ordering its values; elsewhere, and with `None`, every
    /// threshold between distinct values is searched. Whole projections spanning at
    /// most this many values are counted by value, exactly, as without bins.
    pub max_bins: Option<usize>,
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
    /// Whether samples whose projection is missing go left (`Some(true)`) or right,
    /// as learned from the node's samples; `None` when none of them had a missing
    /// projection.
    pub missing_left: Option<bool>,
}

/// Buffers reused across nodes so that the search allocates nothing once warm.
#[derive(Debug, Default)]
pub struct SplitScratch {
    projector: NodeProjector,
    /// Projections, atom after atom.
    values: Vec<f32>,
    /// One atom's sort keys ([`position_key`](super::scan::position_key)).
    keys: Vec<u64>,
    sort_buffer: Vec<u64>,
    left: Vec<f64>,
    right: Vec<f64>,
    by_value: ValueTable,
}

impl SplitScratch {
    /// The projections of the last [`best_split`]'s node samples on its atom `atom`,
    /// in the order of its `samples`: [`Atom::project`](crate::atoms::Atom::project)'s
    /// values bit for bit, so that a tree sends its samples to the children without
    /// projecting them again. Valid only until the scratch is lent to another search.
    pub(crate) fn projections(&self, atom: usize, n_samples: usize) -> &[f32] {
        &self.values[atom * n_samples..(atom + 1) * n_samples]
    }
}

/// Counting by value beats sorting while the table of (value, entry) sums stays below
/// this many entries per node sample.
const COUNTING_ENTRIES_PER_SAMPLE: usize = 4;

/// Where entries are whole ([`counts_exactly`]), counting them by value in integers
/// beats sorting while the table of (value, entry) sums stays below this many entries
/// per node sample.
const WHOLE_COUNTING_ENTRIES_PER_SAMPLE: usize = 8;

/// Whole projections whose range spans at most this many values per node sample are
/// put in order by counting sort rather than by radix or comparison sort.
const SORT_BY_COUNTING_SPAN_PER_SAMPLE: usize = 8;

/// Finds the (atom, threshold) with the largest decrease of `criterion` over all
/// `atoms`, considering only thresholds between distinct values that leave at least
/// `min_samples_leaf` samples and `min_weight_leaf` weight (and some weight) on each
/// side. `samples` are the node's local samples (rows `row_of[sample]` of `rows`) and
/// `node` their targets in the same order ([`SplitCriterion::gather`]). Ties keep the
/// earliest atom and the leftmost threshold. `None` when no atom separates the
/// samples.
///
/// With `rule.missing_values`, a projection touching a missing value is missing, and
/// missing projections go to the side that decreases the criterion most
/// ([`SplitCandidate::missing_left`]).
#[allow(clippy::too_many_arguments)]
pub fn best_split<C: SplitCriterion, T: Feature>(
    criterion: &C,
    rows: &Rows<'_, T>,
    row_of: &[u32],
    samples: &[u32],
    node: &NodeTargets,
    atoms: &AtomSet,
    rule: SplitRule,
    scratch: &mut SplitScratch,
) -> Option<SplitCandidate> {
    // Compiled twice: X without missing values never pays for them.
    if rule.missing_values {
        search::<C, T, true>(criterion, rows, row_of, samples, node, atoms, rule, scratch)
    } else {
        search::<C, T, false>(criterion, rows, row_of, samples, node, atoms, rule, scratch)
    }
}

/// [`best_split`] for X that may hold missing values (`MISSING`) or not.
#[allow(clippy::too_many_arguments)]
fn search<C: SplitCriterion, T: Feature, const MISSING: bool>(
    criterion: &C,
    rows: &Rows<'_, T>,
    row_of: &[u32],
    samples: &[u32],
    node: &NodeTargets,
    atoms: &AtomSet,
    rule: SplitRule,
    scratch: &mut SplitScratch,
) -> Option<SplitCandidate> {
    let n = samples.len();
    let min_leaf = rule.min_samples_leaf.max(1);
    if n < 2 * min_leaf {
        return None;
    }
    let scan = NodeScan::new(criterion, node, min_leaf, rule.min_weight_leaf);
    let mut best = None;

    // Projections are kept as f32 (half the memory of every atom's sort keys) and keyed
    // one atom at a time where they need sorting. Whole values (whole-weight atoms on
    // whole-valued X) are counted where an atom takes few enough values for the node's
    // size, or put in order by counting sort where they span few values per sample.
    // Missing values are not whole: X with them is always sorted.
    let table_entries = |span: usize| span * (table_width(criterion) + 1) * TABLE_COPIES;
    let whole_entries = counts_exactly::<C>(node, &mut scratch.by_value.whole_amounts);
    scratch.by_value.whole_pairs.clear();
    if whole_entries {
        pair_amounts(node, criterion.n_entries(), &mut scratch.by_value);
    }
    // How `span` values (or bins) are counted on this node, if counting beats ordering.
    let counting = |span: usize| {
        if whole_entries && span * criterion.n_entries() <= WHOLE_COUNTING_ENTRIES_PER_SAMPLE * n {
            Some(Counting::Whole)
        } else if table_entries(span) <= COUNTING_ENTRIES_PER_SAMPLE * n {
            Some(Counting::Counted)
        } else {
            None
        }
    };
    if !MISSING && rule.whole_range.is_some() {
        if let Some(bits) = rows.bits() {
            // Whole projections spanning fewer values than the bins are counted
            // exactly rather than binned: so are all of an atom's with fewer cells.
            let exact = |bit_sums: &&mut BitSums| {
                rule.max_bins
                    .is_none_or(|bins| bit_sums.most_cells() < bins)
            };
            if let Some(bit_sums) = scratch.projector.bit_sums(rows, atoms).filter(exact) {
                bit_sums.gather(bits, row_of, samples);
                for atom in 0..atoms.len() {
                    let table = &mut scratch.by_value;
                    let (low, span, (lowest, highest)) = bit_sums.offsets(atom, &mut table.offsets);
                    // Counted over the values any sample may take, but counted or sorted
                    // as the values the node's samples take decide, as elsewhere: sums
                    // that are not whole depend on the order of their additions.
                    if lowest == highest {
                        continue; // constant along this atom
                    }
                    let taken = (highest - lowest) as usize + 1;
                    match counting(taken) {
                        Some(Counting::Whole) => {
                            scan.scan_whole_offsets(low, span, atom, table, &mut best);
                        }
                        Some(Counting::Counted) => {
                            let left = &mut scratch.left;
                            scan.scan_counted_offsets(low, span, atom, table, left, &mut best);
                        }
                        None => {
                            let values = &mut scratch.values;
                            values.resize(n, 0.0);
                            bit_sums.values(atom, values);
                            let keys = &mut scratch.keys;
                            if taken <= SORT_BY_COUNTING_SPAN_PER_SAMPLE * n {
                                sort_whole_offsets(values, span, table, keys);
                            } else {
                                sort_generally::<false>(values, keys, &mut scratch.sort_buffer);
                            }
                            let (left, right) = (&mut scratch.left, &mut scratch.right);
                            scan.scan_sorted::<false>(keys, atom, left, right, &mut best);
                        }
                    }
                }
                // The chosen atom's projections, where `SplitScratch::projections`
                // finds them; the other atoms' are not needed.
                if let Some((_, candidate)) = &best {
                    let values = &mut scratch.values;
                    values.resize(values.len().max(atoms.len() * n), 0.0);
                    bit_sums.values(candidate.atom, &mut values[candidate.atom * n..][..n]);
                }
                return best.map(|(_, candidate)| candidate);
            }
        }
    }
    let values = &mut scratch.values;
    scratch
        .projector
        .project(rows, row_of, samples, atoms, values);
    for atom in 0..atoms.len() {
        let values = &values[atom * n..(atom + 1) * n];
        let keys = &mut scratch.keys;
        let whole = !MISSING && rule.whole_range.is_some() && atoms.get(atom).has_integer_weights();
        let binned = if MISSING { None } else { rule.max_bins };
        let range = (whole || binned.is_some()).then(|| value_range(values));
        if let Some((low, high)) = range {
            if low == high {
                continue; // constant along this atom
            }
            if let Some(bins) = binned {
                let width = high - low;
                // Whole values spanning at most `bins` values are counted exactly below;
                // a range too wide or too narrow for a finite scale is sorted, and so
                // are fewer samples than bins: their exact search is as short, and
                // finer (on the seed experiments, half the accuracy bins cost).
                let in_bins = n >= bins
                    && (bins as f32 / width).is_finite()
                    && width.is_finite()
                    && !(whole && width < bins as f32);
                // Too few samples for counting: ordering them is cheaper.
                if let Some(counting) = counting(bins).filter(|_| in_bins) {
                    let atom = BinnedAtom {
                        values,
                        low,
                        width,
                        atom,
                    };
                    scan.scan_binned(
                        atom,
                        bins,
                        counting,
                        &mut scratch.by_value,
                        &mut scratch.left,
                        &mut best,
                    );
                    continue;
                }
            }
        }
        if let (true, Some((low, high))) = (whole, range) {
            // Projections are whole here unless X changed since its range was taken
            // (another thread writing it): then the tree may be wrong, but a span
            // that is NaN or too wide is sorted generally, and every offset stays
            // inside its table.
            let width = high - low;
            if width < MAX_COUNTED_SPAN as f32 {
                let span = width as usize + 1;
                let table = &mut scratch.by_value;
                match counting(span) {
                    Some(Counting::Whole) => {
                        scan.scan_whole_counts(values, low, span, atom, table, &mut best);
                        continue;
                    }
                    Some(Counting::Counted) => {
                        let left = &mut scratch.left;
                        scan.scan_counted(values, low, span, atom, table, left, &mut best);
                        continue;
                    }
                    None => {}
                }
                if span <= SORT_BY_COUNTING_SPAN_PER_SAMPLE * n {
                    sort_whole_values(values, low, span, table, keys);
                    scan.scan_sorted::<false>(
                        keys,
                        atom,
                        &mut scratch.left,
                        &mut scratch.right,
                        &mut best,
                    );
                    continue;
                }
            }
        }
        sort_generally::<MISSING>(values, keys, &mut scratch.sort_buffer);
        scan.scan_sorted::<MISSING>(keys, atom, &mut scratch.left, &mut scratch.right, &mut best);
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests;
