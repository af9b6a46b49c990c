//! The Coleman (MIGHT / CoMIGHT) test: the trees of a forest grown on X and of one
//! grown with some columns permuted, pooled and shuffled into two halves many times
//! for the null distribution of their metric difference.

use ndarray::ArrayView3;
use rayon::prelude::*;

use super::metric::{Metric, Truth};
use crate::error::{invalid, MorfError, Result};
use crate::rng::Rng;
use crate::runtime::workers::with_threads;

/// Most shuffles a test draws (the null distribution takes 8 bytes each).
pub const MAX_REPEATS: usize = 100_000_000;

/// The outcome of [`coleman_test`].
#[derive(Debug, Clone, PartialEq)]
pub struct ColemanTest {
    /// How much better the forest grown on X scores than the permuted one: the
    /// metric of the first minus that of the second (the reverse for metrics where
    /// lower is better), each forest's out-of-bag posteriors averaged over its trees.
    pub statistic: f64,
    /// The same difference for each shuffle of the pooled trees into two halves.
    pub null_distribution: Vec<f64>,
    /// `(1 + #(null >= statistic)) / (1 + n_repeats)`.
    pub pvalue: f64,
}

/// One tree's out-of-bag posteriors: the rows it scored and its values for them.
struct TreeVotes {
    rows: Vec<u32>,
    values: Vec<f64>,
}

/// The Coleman test of the per-tree out-of-bag posteriors `original` (a forest grown
/// on X) and `permuted` (one grown with the tested columns of X permuted), each of
/// shape (trees, rows, classes or outputs) with NaN where a tree did not score a row
/// ([`Forest::oob_tree_posteriors`](crate::Forest::oob_tree_posteriors)), scored by
/// `metric` against `truth`.
///
/// Each forest's posterior for a row is the mean over its trees that scored the row;
/// rows that none scored are left out of its metric. The null distribution shuffles
/// the pooled trees into two halves `n_repeats` times (shuffle `r` from stream `r`
/// of `seed`), so it is the same for any number of threads `n_threads` (0: every
/// core). Nothing is grown again.
///
/// ```
/// use ndarray::{array, Array3};
/// use morf_rs::stats::{coleman_test, Metric, Truth};
///
/// let y = array![0u32, 1, 0, 1];
/// // Two trees each; the first forest puts more weight on the true class.
/// let mut original = Array3::from_elem((2, 4, 2), f64::NAN);
/// let mut permuted = original.clone();
/// for t in 0..2 {
///     for (row, &class) in y.iter().enumerate() {
///         let p1 = if class == 1 { 0.9 } else { 0.1 };
///         original[[t, row, 1]] = p1;
///         original[[t, row, 0]] = 1.0 - p1;
///         permuted[[t, row, 0]] = 0.5;
///         permuted[[t, row, 1]] = 0.5;
///     }
/// }
/// let truth = Truth::Classes(y.view());
/// let test = coleman_test(&truth, original.view(), permuted.view(), Metric::Auc, 100, 7, 1)?;
/// assert_eq!(test.statistic, 0.5);
/// assert_eq!(test.null_distribution.len(), 100);
/// # Ok::<(), morf_rs::MorfError>(())
/// ```
pub fn coleman_test(
    truth: &Truth<'_>,
    original: ArrayView3<'_, f64>,
    permuted: ArrayView3<'_, f64>,
    metric: Metric,
    n_repeats: usize,
    seed: u64,
    n_threads: usize,
) -> Result<ColemanTest> {
    if original.dim() != permuted.dim() {
        return Err(invalid(
            "posteriors",
            format!(
                "both forests' posteriors must have one shape (trees, rows, width), got \
                 {:?} and {:?}",
                original.dim(),
                permuted.dim()
            ),
        ));
    }
    let (n_trees, n_rows, width) = original.dim();
    if n_trees == 0 || width == 0 {
        return Err(invalid(
            "posteriors",
            "need at least one tree and one class or output",
        ));
    }
    if n_rows != truth.len() {
        return Err(MorfError::ShapeMismatch {
            what: "number of rows of the posteriors",
            expected: truth.len(),
            got: n_rows,
        });
    }
    if n_repeats == 0 || n_repeats > MAX_REPEATS {
        return Err(invalid(
            "n_repeats",
            format!("must be in 1..={MAX_REPEATS}, got {n_repeats}"),
        ));
    }
    metric.check(truth, width)?;
    if original
        .iter()
        .chain(permuted.iter())
        .any(|v| v.is_infinite())
    {
        return Err(invalid(
            "posteriors",
            "must be finite, or NaN where a tree did not score a row",
        ));
    }
    let pooled: Vec<TreeVotes> = original
        .outer_iter()
        .chain(permuted.outer_iter())
        .map(|tree| {
            let mut votes = TreeVotes {
                rows: Vec::new(),
                values: Vec::new(),
            };
            for (row, values) in tree.outer_iter().enumerate() {
                if values.iter().all(|v| !v.is_nan()) {
                    votes.rows.push(row as u32);
                    votes.values.extend(values.iter());
                }
            }
            votes
        })
        .collect();
    let halves = Halves {
        truth,
        pooled: &pooled,
        n_rows,
        width,
        metric,
    };
    let mut scratch = Scratch::default();
    let in_order: Vec<usize> = (0..2 * n_trees).collect();
    let statistic = halves.difference(&in_order, &mut scratch)?;
    let null_distribution = with_threads(n_threads, || {
        (0..n_repeats)
            .into_par_iter()
            .map_init(Scratch::default, |scratch, repeat| {
                let mut order = in_order.clone();
                Rng::new(seed, repeat as u64).choose_into_prefix(&mut order, n_trees);
                halves.difference(&order, scratch)
            })
            .collect::<Result<Vec<f64>>>()
    })?;
    let as_large = null_distribution
        .iter()
        .filter(|&&d| d >= statistic)
        .count();
    Ok(ColemanTest {
        statistic,
        pvalue: (1 + as_large) as f64 / (1 + n_repeats) as f64,
        null_distribution,
    })
}

/// The pooled trees and how to score a split of them into halves.
struct Halves<'a, 'y> {
    truth: &'a Truth<'y>,
    pooled: &'a [TreeVotes],
    n_rows: usize,
    width: usize,
    metric: Metric,
}

/// One thread's buffers.
#[derive(Default)]
struct Scratch {
    half: Vec<usize>,
    sums: Vec<f64>,
    counts: Vec<u32>,
    rows: Vec<u32>,
    order: Vec<(f64, bool)>,
}

impl Halves<'_, '_> {
    /// The metric of the first half of `order` minus that of the second (the reverse
    /// where lower is better); each half's trees are summed in ascending order, so
    /// that a split scores the same however it was drawn.
    fn difference(&self, order: &[usize], scratch: &mut Scratch) -> Result<f64> {
        let (first, second) = order.split_at(order.len() / 2);
        let difference = self.score(first, scratch)? - self.score(second, scratch)?;
        Ok(if self.metric.higher_is_better() {
            difference
        } else {
            -difference
        })
    }

    /// The metric of the mean posteriors of `trees`.
    fn score(&self, trees: &[usize], scratch: &mut Scratch) -> Result<f64> {
        let Scratch {
            half,
            sums,
            counts,
            rows,
            order,
        } = scratch;
        half.clear();
        half.extend_from_slice(trees);
        half.sort_unstable();
        sums.clear();
        sums.resize(self.n_rows * self.width, 0.0);
        counts.clear();
        counts.resize(self.n_rows, 0);
        for &t in half.iter() {
            let tree = &self.pooled[t];
            for (&row, values) in tree.rows.iter().zip(tree.values.chunks_exact(self.width)) {
                counts[row as usize] += 1;
                for (sum, &v) in sums[row as usize * self.width..].iter_mut().zip(values) {
                    *sum += v;
                }
            }
        }
        rows.clear();
        for (row, &count) in counts.iter().enumerate() {
            if count > 0 {
                rows.push(row as u32);
                for sum in &mut sums[row * self.width..][..self.width] {
                    *sum /= f64::from(count);
                }
            }
        }
        let score = self
            .metric
            .score_rows(self.truth, sums, self.width, rows, order);
        if score.is_nan() {
            return Err(invalid(
                "posteriors",
                format!(
                    "{} is undefined on the rows that half of the pooled trees scored \
                     out of bag ({} rows): both classes must be among them; use more \
                     trees or samples",
                    self.metric.name(),
                    rows.len()
                ),
            ));
        }
        Ok(score)
    }
}
