//! The forest similarity of samples from their leaves: counted tree by tree over the
//! members of each leaf, so the work is the sum of the squared leaf sizes, not n^2
//! per tree.

use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

use crate::error::{invalid, try_filled, Result};
use crate::runtime::workers::with_threads;

/// Rows of the result each parallel task fills.
const ROWS_PER_TASK: usize = 64;

/// The samples of each leaf of one tree, grouped: `members[starts[l]..starts[l + 1]]`
/// are the samples in the `l`-th leaf met, and `group_of[i]` is sample `i`'s group.
struct LeafGroups {
    starts: Vec<usize>,
    members: Vec<u32>,
    group_of: Vec<u32>,
}

impl LeafGroups {
    /// Groups the samples by their leaf in `column` (a leaf id per sample).
    fn new<L: Copy + Ord>(column: impl Iterator<Item = L>, n: usize) -> LeafGroups {
        let mut order: Vec<(L, u32)> = column.zip(0u32..).collect();
        order.sort_unstable();
        let mut starts = Vec::new();
        let mut members = Vec::with_capacity(n);
        let mut group_of = vec![0u32; n];
        for (i, &(leaf, sample)) in order.iter().enumerate() {
            if i == 0 || order[i - 1].0 != leaf {
                starts.push(i);
            }
            members.push(sample);
            group_of[sample as usize] = (starts.len() - 1) as u32;
        }
        starts.push(n);
        LeafGroups {
            starts,
            members,
            group_of,
        }
    }

    /// The samples sharing sample `i`'s leaf, `i` among them.
    fn with(&self, i: usize) -> &[u32] {
        let group = self.group_of[i] as usize;
        &self.members[self.starts[group]..self.starts[group + 1]]
    }
}

/// Adds to `counts[j - first]`, for every sample `j` from `first` on that `counts`
/// covers, the number of trees of `groups` in which `j` shares sample `i`'s leaf.
fn count_shared_leaves(groups: &[LeafGroups], i: usize, first: usize, counts: &mut [u32]) {
    for tree in groups {
        for &j in tree.with(i) {
            // Samples before `first` wrap around past the end of `counts`.
            if let Some(count) = counts.get_mut((j as usize).wrapping_sub(first)) {
                *count += 1;
            }
        }
    }
}

/// The samples grouped by leaf in each tree of `leaves` (samples, trees), on
/// `n_threads` threads; an error where there is no sample or no tree.
fn leaf_groups<L: Copy + Ord + Sync>(
    leaves: ArrayView2<'_, L>,
    n_threads: usize,
) -> Result<Vec<LeafGroups>> {
    let (n, n_trees) = leaves.dim();
    if n == 0 || n_trees == 0 {
        return Err(invalid(
            "leaves",
            format!("needs at least one sample and one tree, got shape ({n}, {n_trees})"),
        ));
    }
    with_threads(n_threads, || {
        Ok((0..n_trees)
            .into_par_iter()
            .map(|t| LeafGroups::new(leaves.column(t).iter().copied(), n))
            .collect())
    })
}

/// The share of trees in which each pair of samples reach the same leaf, from `leaves`
/// of shape (samples, trees) as [`Inspect::apply`](crate::Inspect::apply)
/// gives them (or ids of any integer type: only which samples share an id matters);
/// shape (samples, samples). The counts are whole numbers, so the result is
/// the same for any `n_threads` (0: every core).
pub fn similarity_from_leaves<L: Copy + Ord + Sync>(
    leaves: ArrayView2<'_, L>,
    n_threads: usize,
) -> Result<Array2<f64>> {
    let groups = leaf_groups(leaves, n_threads)?;
    let (n, n_trees) = leaves.dim();
    let mut counts = try_filled(n, n, 0u32, "the similarity matrix")?;
    with_threads(n_threads, || {
        counts
            .par_chunks_mut(ROWS_PER_TASK * n)
            .enumerate()
            .for_each(|(task, rows)| {
                for (k, row) in rows.chunks_exact_mut(n).enumerate() {
                    count_shared_leaves(&groups, task * ROWS_PER_TASK + k, 0, row);
                }
            });
        Ok(())
    })?;
    // Allocated fallibly as the counts were: it is twice their size.
    let mut shares = try_filled(n, n, 0.0f64, "the similarity matrix")?;
    for (share, count) in shares.iter_mut().zip(counts) {
        *share = count as f64 / n_trees as f64;
    }
    Ok(Array2::from_shape_vec((n, n), shares).expect("n * n shares"))
}

/// The distance `1 - share` of every pair of samples `i < j` from their `leaves` (as
/// for [`similarity_from_leaves`]), in SciPy's condensed order: row `i`'s pairs
/// `(i, i + 1), ..., (i, n - 1)`, row after row. Each is `1.0 - s` of the share `s`
/// that [`similarity_from_leaves`] gives, bit for bit, the distance that
/// scikit-learn's `AgglomerativeClustering(metric="precomputed")` reads from
/// `1 - similarity`, in a quarter of the memory of the matrices that route builds.
pub(crate) fn condensed_distances_from_leaves<L: Copy + Ord + Sync>(
    leaves: ArrayView2<'_, L>,
    n_threads: usize,
) -> Result<Vec<f64>> {
    let groups = leaf_groups(leaves, n_threads)?;
    let n = leaves.nrows();
    // `n (n - 1) / 2` pairs, as a product of whole numbers.
    let (halved, other) = if n.is_multiple_of(2) {
        (n / 2, n - 1)
    } else {
        ((n - 1) / 2, n)
    };
    let mut distances = try_filled(halved, other, 0.0, "the distances between samples")?;
    let mut rows = Vec::with_capacity(n);
    let mut rest = distances.as_mut_slice();
    for i in 0..n {
        let (row, tail) = rest.split_at_mut(n - 1 - i);
        rows.push((i, i + 1, row));
        rest = tail;
    }
    fill_distance_rows(&groups, &mut rows, n_threads)?;
    Ok(distances)
}

/// The distance `1 - share` of every pair of samples from their `leaves`, as for
/// [`condensed_distances_from_leaves`], in a square matrix: row `i` holds `i`'s
/// distance to each sample, 0 to itself.
pub(crate) fn square_distances_from_leaves<L: Copy + Ord + Sync>(
    leaves: ArrayView2<'_, L>,
    n_threads: usize,
) -> Result<Vec<f64>> {
    let groups = leaf_groups(leaves, n_threads)?;
    let n = leaves.nrows();
    let mut distances = try_filled(n, n, 0.0, "the distances between samples")?;
    let mut rows: Vec<_> = distances
        .chunks_mut(n)
        .enumerate()
        .map(|(i, row)| (i, 0, row))
        .collect();
    fill_distance_rows(&groups, &mut rows, n_threads)?;
    Ok(distances)
}

/// Fills each of `rows`, `(i, first, row)`, with the distance `1 - share` of sample
/// `i` to each sample from `first` on (as many as `row` holds), over the trees of
/// `groups` (one per tree), on `n_threads` threads.
fn fill_distance_rows(
    groups: &[LeafGroups],
    rows: &mut [(usize, usize, &mut [f64])],
    n_threads: usize,
) -> Result<()> {
    let (n_trees, n) = (
        groups.len(),
        groups.first().map_or(0, |tree| tree.group_of.len()),
    );
    with_threads(n_threads, || {
        rows.par_iter_mut().for_each_init(
            || vec![0u32; n],
            |counts, (i, first, row)| {
                let counts = &mut counts[*first..];
                counts.fill(0);
                count_shared_leaves(groups, *i, *first, counts);
                for (distance, &count) in row.iter_mut().zip(counts.iter()) {
                    *distance = 1.0 - count as f64 / n_trees as f64;
                }
            },
        );
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use ndarray::array;

    use super::*;

    #[test]
    fn shares_count_the_trees_in_which_two_samples_meet() {
        // Three samples, two trees: 0 and 1 meet in both, 1 and 2 in the second.
        let leaves = array![[3u32, 5], [3, 7], [4, 7]];
        let similarity = similarity_from_leaves(leaves.view(), 2).unwrap();
        assert_eq!(
            similarity,
            array![[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]
        );
    }
}
