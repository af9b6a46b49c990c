//! Scoring: path lengths summed over the trees through the shared scoring engine
//! ([`crate::scoring`]), and the anomaly scores they give.

use ndarray::{Array1, ArrayView2, ArrayViewMut1};

use super::{average_path_length, IsolationForest};
use crate::data::Feature;
use crate::error::{invalid, try_filled, Result};
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::score_row_chunks;
use crate::scoring::ScoringTrees;
use crate::tree::Tree;

/// Isolation trees laid out for scoring, each leaf's slot the index of its path length.
#[derive(Debug, Clone)]
pub(super) struct IsolationScoring {
    pub(super) layout: ScoringTrees,
    path_lengths: Vec<f64>,
}

impl IsolationScoring {
    fn new(trees: &[Tree], n_features: usize) -> IsolationScoring {
        let mut path_lengths = Vec::new();
        let layout = ScoringTrees::new(trees, n_features, |t, id| {
            path_lengths.push(trees[t].leaf_values(id).map_or(0.0, |values| values[0]));
            (path_lengths.len() - 1) as u32
        });
        IsolationScoring {
            layout,
            path_lengths,
        }
    }
}

/// What is written per row: the mean path length, or the anomaly score from it.
#[derive(Clone, Copy)]
enum Output {
    MeanPathLength,
    AnomalyScore,
}

impl IsolationForest {
    pub(super) fn scoring_layout(&self) -> &IsolationScoring {
        self.scoring
            .get_or_init(|| IsolationScoring::new(&self.trees, self.n_features))
    }

    /// Per row of `x`, its anomaly score `2^(-E[h] / c(psi))` in (0, 1] (scikit-learn's
    /// `-score_samples`): the mean over trees of its path length `h` (the depth of its
    /// leaf plus [`average_path_length`] of the training rows the leaf held), over the
    /// average path length of the rows each tree grew on. A forest grown on one row
    /// per tree scores every row 0.5, as scikit-learn's does. Rows are scored on the
    /// threads of `options`, which may also cancel the call.
    pub fn anomaly_scores<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array1<f64>> {
        let mut scores = Array1::from(try_filled(x.nrows(), 1, 0.0, "the scores")?);
        self.anomaly_scores_into(x, scores.view_mut(), options)?;
        Ok(scores)
    }

    /// [`anomaly_scores`](IsolationForest::anomaly_scores) written into `out`, one
    /// value per row.
    pub fn anomaly_scores_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut1<'_, f64>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        self.score_into(x, out, options, Output::AnomalyScore)
    }

    /// Per row of `x`, its path length averaged over the trees, `E[h]`.
    pub fn mean_path_lengths<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array1<f64>> {
        let mut lengths = Array1::from(try_filled(x.nrows(), 1, 0.0, "the path lengths")?);
        self.score_into(x, lengths.view_mut(), options, Output::MeanPathLength)?;
        Ok(lengths)
    }

    fn score_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut1<'_, f64>,
        options: &ScoreOptions<'_>,
        output: Output,
    ) -> Result<()> {
        if out.len() != x.nrows() {
            return Err(invalid(
                "out",
                format!(
                    "must hold one value per row of X ({}), got {}",
                    x.nrows(),
                    out.len()
                ),
            ));
        }
        let out = out
            .into_slice()
            .ok_or_else(|| invalid("out", "must be contiguous"))?;
        let scoring = self.scoring_layout();
        let n_trees = self.trees.len();
        // scikit-learn divides the summed path lengths by this once.
        let denominator = n_trees as f64 * average_path_length(self.max_samples);
        let cancel = options.cancel_flag();
        options.install(x.nrows(), |threads| {
            score_row_chunks(
                self.n_features,
                x,
                out,
                1,
                scoring.layout.chunk_rows(),
                threads,
                cancel,
                |_, rows, out| {
                    out.fill(0.0);
                    scoring
                        .layout
                        .visit_leaves(0..n_trees, rows, cancel, |leaf| {
                            let length = scoring.path_lengths[leaf.slot as usize];
                            leaf.for_each_row(|r| out[r] += length);
                        });
                    for value in out.iter_mut() {
                        *value = match output {
                            Output::MeanPathLength => *value / n_trees as f64,
                            Output::AnomalyScore if denominator > 0.0 => {
                                (-*value / denominator).exp2()
                            }
                            Output::AnomalyScore => 0.5,
                        };
                    }
                },
            )
        })?
    }
}
