//! Where do an atom's bin edges go? At quantiles of a sample of its projections,
//! taken from the sample's distinct values and their counts: sorted, or, for whole
//! numbers in a short range, counted (the same values and counts, so the same edges).

use super::binning::MAX_EDGES;
use crate::split::{key_value, midpoint, sort_by_value, sort_key};

/// The number of whole numbers from `low` to `high`, less one.
pub(super) fn span(low: i32, high: i32) -> usize {
    (high as i64 - low as i64) as usize
}

/// Whole-valued projections are counted rather than sorted to set the edges when
/// their range spans at most this many values per edge sample.
const COUNTED_SPAN_PER_SAMPLE: usize = 2;

/// What a task setting the edges of a group of atoms reuses.
#[derive(Debug, Default)]
pub(super) struct EdgeScratch {
    /// One atom's projections on the edge sample, which the caller writes.
    pub values: Vec<f32>,
    /// Sort keys of one atom's projections on the edge sample, and the sort's buffer.
    keys: Vec<u64>,
    sort_buffer: Vec<u64>,
    /// Per whole number of an atom's range, its count in the edge sample.
    counts: Vec<u32>,
    /// One atom's distinct projections on the edge sample, ascending, with counts.
    runs: Vec<(f32, u32)>,
}

/// Writes into `edges` the edges of an atom from `scratch.values`, its projections on
/// the edge sample (whole numbers from `range.0` to `range.1` where `range` is given),
/// and returns their number: counted where the range is short, sorted otherwise.
pub(super) fn place_edges(
    range: Option<(i32, i32)>,
    max_bins: usize,
    edges: &mut [f32; MAX_EDGES],
    scratch: &mut EdgeScratch,
) -> usize {
    let EdgeScratch {
        values,
        keys,
        sort_buffer,
        counts,
        runs,
    } = scratch;
    let counted = range.is_some_and(|(low, high)| {
        span(low, high) <= COUNTED_SPAN_PER_SAMPLE * values.len()
            && runs_by_counting(values, low, high, counts, runs)
    });
    if !counted {
        keys.clear();
        keys.extend(
            values
                .iter()
                .filter(|v| !v.is_nan())
                .map(|&v| (sort_key(v) as u64) << 32),
        );
        sort_by_value(keys, sort_buffer);
        runs_of_sorted_keys(keys, runs);
    }
    quantile_edges(runs, max_bins, edges)
}

/// Writes into `runs` the distinct values of `keys`, the sorted
/// [`sort_key`]s of a
/// sample of projections (in their high halves), ascending, each with its count.
pub(super) fn runs_of_sorted_keys(keys: &[u64], runs: &mut Vec<(f32, u32)>) {
    runs.clear();
    for &key in keys {
        let value = key_value((key >> 32) as u32);
        match runs.last_mut() {
            Some((last, count)) if last.to_bits() == value.to_bits() => *count += 1,
            _ => runs.push((value, 1)),
        }
    }
}

/// Writes into `runs` what [`runs_of_sorted_keys`] would for `values`, whole numbers
/// from `low` to `high`, by counting each number rather than sorting; false (and
/// `runs` unspecified) if a value lies outside.
pub(super) fn runs_by_counting(
    values: &[f32],
    low: i32,
    high: i32,
    counts: &mut Vec<u32>,
    runs: &mut Vec<(f32, u32)>,
) -> bool {
    counts.clear();
    counts.resize(span(low, high) + 1, 0);
    for &value in values {
        debug_assert_eq!(value, value.trunc());
        match counts.get_mut((value as i32).wrapping_sub(low) as usize) {
            Some(count) => *count += 1,
            None => return false,
        }
    }
    runs.clear();
    runs.extend(
        (low..=high)
            .zip(counts.iter())
            .filter(|&(_, &count)| count > 0)
            .map(|(value, &count)| (value as f32, count)),
    );
    true
}

/// Writes at most `max_bins - 1` ascending edges into `edges` from `runs`, the
/// distinct values of a sample of projections, ascending, with their counts, and
/// returns their number. Every distinct value gets its own bin when there are at most
/// `max_bins`; otherwise values are grouped greedily into bins of about equal counts,
/// a value never split between bins. Each edge is a midpoint between two sample
/// values.
pub(super) fn quantile_edges(runs: &[(f32, u32)], max_bins: usize, edges: &mut [f32]) -> usize {
    let mut n_edges = 0;
    if runs.len() <= max_bins {
        for (i, pair) in runs.windows(2).enumerate() {
            edges[i] = midpoint(pair[0].0, pair[1].0);
            n_edges += 1;
        }
        return n_edges;
    }
    let n: usize = runs.iter().map(|&(_, count)| count as usize).sum();
    // Greedy: close a bin once it holds its share of what is left, so that a heavy
    // value (many zeros, say) does not starve the bins after it.
    let mut in_bin = 0usize;
    let mut end = 0;
    for (r, &(value, count)) in runs.iter().enumerate() {
        if n_edges + 1 >= max_bins {
            break;
        }
        end += count as usize;
        in_bin += count as usize;
        let bins_left = max_bins - n_edges;
        let share = (n - (end - in_bin)) as f64 / bins_left as f64;
        if end < n && in_bin as f64 >= share {
            edges[n_edges] = midpoint(value, runs[r + 1].0);
            n_edges += 1;
            in_bin = 0;
        }
    }
    n_edges
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::binning::{bin_of, MAX_EDGES};
    use super::*;
    use crate::split::sort_key;

    fn runs_of(values: &[f32]) -> Vec<(f32, u32)> {
        let mut keys: Vec<u64> = values.iter().map(|&v| (sort_key(v) as u64) << 32).collect();
        keys.sort_unstable();
        let mut runs = Vec::new();
        runs_of_sorted_keys(&keys, &mut runs);
        runs
    }

    #[test]
    fn few_distinct_values_get_a_bin_each() {
        let mut edges = [f32::INFINITY; MAX_EDGES];
        let n = quantile_edges(&runs_of(&[3.0, 1.0, 1.0, 2.0, 3.0]), 255, &mut edges);
        assert_eq!(&edges[..n], &[1.5, 2.5]);
    }

    #[test]
    fn many_values_share_bins_of_about_equal_counts() {
        let values: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let mut edges = [f32::INFINITY; MAX_EDGES];
        let n = quantile_edges(&runs_of(&values), 10, &mut edges);
        assert_eq!(n, 9);
        let mut counts = [0; 10];
        for &v in &values {
            counts[bin_of(&edges, v) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (90..=110).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn a_heavy_value_keeps_its_own_bin_and_the_rest_share_the_others() {
        // Half the samples are zero, as pixels of a dark background are.
        let values: Vec<f32> = (0..1000)
            .map(|i| if i < 500 { 0.0 } else { i as f32 })
            .collect();
        let mut edges = [f32::INFINITY; MAX_EDGES];
        let n = quantile_edges(&runs_of(&values), 11, &mut edges);
        assert_eq!(n, 10);
        assert_eq!(edges[0], 250.0); // midpoint of 0 and 500
        let rest: Vec<usize> = (1..n)
            .map(|b| bin_of(&edges, 500.0 + 50.0 * b as f32))
            .map(usize::from)
            .collect();
        assert_eq!(rest, (1..n).map(|b| b + 1).collect::<Vec<_>>());
    }

    proptest! {
        #[test]
        fn counting_whole_values_gives_the_runs_sorting_gives(
            values in prop::collection::vec(-40i32..40, 0..300),
            low_margin in 0i32..5,
            high_margin in 0i32..5,
        ) {
            let values: Vec<f32> = values.iter().map(|&v| v as f32).collect();
            let (mut counts, mut runs) = (Vec::new(), Vec::new());
            let low = values.iter().fold(0.0f32, |a, &b| a.min(b)) as i32 - low_margin;
            let high = values.iter().fold(0.0f32, |a, &b| a.max(b)) as i32 + high_margin;
            prop_assert!(runs_by_counting(&values, low, high, &mut counts, &mut runs));
            prop_assert_eq!(&runs, &runs_of(&values));
            // A value outside the range is refused, not counted elsewhere.
            if let Some(&largest) = values.iter().max_by(|a, b| a.total_cmp(b)) {
                let high = largest as i32 - 1;
                if high >= low {
                    prop_assert!(!runs_by_counting(&values, low, high, &mut counts, &mut runs));
                }
            }
        }
    }
}
