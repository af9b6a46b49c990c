//! Training: every isolation tree grown in parallel on its own subsample, from its
//! own random streams.

use std::ops::Range;

use ndarray::ArrayView2;
use rayon::prelude::*;

use super::features::{tree_sampler, validate_max_features};
use super::grow::grow_isolation_tree;
use super::subsample::RowDraw;
use super::{IsolationForest, IsolationParams, AUTO_MAX_SAMPLES, MAX_ISOLATION_TREES};
use crate::data::{Feature, Rows};
use crate::error::{invalid, MorfError, Result};
use crate::forest::MAX_FEATURES;
use crate::rng::Rng;
use crate::runtime::control::{is_cancelled, FitControl, TreeCounter};
use crate::runtime::workers::with_threads;
use crate::tree::Tree;

impl IsolationParams {
    /// Checks the settings that do not depend on the data.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_ISOLATION_TREES).contains(&self.n_estimators) {
            return Err(invalid(
                "n_estimators",
                format!(
                    "must be in [1, {MAX_ISOLATION_TREES}], got {}",
                    self.n_estimators
                ),
            ));
        }
        if self.max_samples == Some(0) {
            return Err(invalid("max_samples", "must be at least 1, got 0"));
        }
        Ok(())
    }

    /// Rows each tree grows on for `n_samples` rows of X (of positive weight).
    pub fn resolved_max_samples(&self, n_samples: usize) -> usize {
        self.max_samples.unwrap_or(AUTO_MAX_SAMPLES).min(n_samples)
    }
}

impl IsolationForest {
    /// Trains an isolation forest on the rows of `x` (NaN marks a missing value).
    pub fn fit<T: Feature>(params: &IsolationParams, x: ArrayView2<'_, T>) -> Result<Self> {
        Self::fit_with(params, x, None, &FitControl::new())
    }

    /// [`fit`](IsolationForest::fit) with optional `sample_weight` (one non-negative
    /// weight per row: each tree draws its rows in proportion to them, as
    /// scikit-learn's `IsolationForest` does; weight 0 is as if the row were absent),
    /// reporting progress to and stopping on request of `control`
    /// ([`MorfError::Cancelled`]).
    ///
    /// Tree `i` draws its rows (then, with [`IsolationParams::max_features`], its
    /// features) from stream `2 i` and its atoms and thresholds from stream `2 i + 1`
    /// of `params.random_state`, so the forest is the same, bit for bit, whatever the
    /// number of threads, and [`with_more_trees`](IsolationForest::with_more_trees)
    /// grows the trees a larger fit would have.
    pub fn fit_with<T: Feature>(
        params: &IsolationParams,
        x: ArrayView2<'_, T>,
        sample_weight: Option<&[f64]>,
        control: &FitControl<'_>,
    ) -> Result<Self> {
        let training = Training::new(params, x, sample_weight)?;
        let trees = training.grow(0..params.n_estimators, control)?;
        Ok(IsolationForest {
            n_features: training.rows.n_features,
            max_samples: training.max_samples,
            trees,
            scoring: Default::default(),
        })
    }

    /// This forest with trees added up to `params.n_estimators`: the trees a fit of
    /// that many on the same `x`, `sample_weight` and `params` grows after this
    /// forest's (scikit-learn's `warm_start`). The rows per tree must stay this
    /// forest's [`max_samples`](IsolationForest::max_samples), since scores divide by
    /// their average path length.
    pub fn with_more_trees<T: Feature>(
        &self,
        params: &IsolationParams,
        x: ArrayView2<'_, T>,
        sample_weight: Option<&[f64]>,
        control: &FitControl<'_>,
    ) -> Result<Self> {
        let n_fitted = self.trees.len();
        if params.n_estimators < n_fitted {
            return Err(invalid(
                "n_estimators",
                format!(
                    "must be at least the {n_fitted} trees already grown to add trees, \
                     got {}",
                    params.n_estimators
                ),
            ));
        }
        let training = Training::new(params, x, sample_weight)?;
        if training.rows.n_features != self.n_features {
            return Err(invalid(
                "X",
                format!(
                    "has {} features, but the forest to add trees to was grown on {}",
                    training.rows.n_features, self.n_features
                ),
            ));
        }
        if training.max_samples != self.max_samples {
            return Err(invalid(
                "max_samples",
                format!(
                    "trees to add would grow on {} rows each, but the forest's grew on \
                     {}; scores average path lengths over one subsample size",
                    training.max_samples, self.max_samples
                ),
            ));
        }
        let mut trees = self.trees.clone();
        trees.extend(training.grow(n_fitted..params.n_estimators, control)?);
        Ok(IsolationForest {
            trees,
            scoring: Default::default(),
            ..*self
        })
    }
}

/// What every tree of a fit shares: the checked data, rows and settings.
struct Training<'p, 'x, T: Feature> {
    params: &'p IsolationParams,
    rows: Rows<'x, T>,
    row_draw: RowDraw,
    max_samples: usize,
}

impl<'p, 'x, T: Feature> Training<'p, 'x, T> {
    fn new(
        params: &'p IsolationParams,
        x: ArrayView2<'x, T>,
        sample_weight: Option<&[f64]>,
    ) -> Result<Self> {
        params.validate()?;
        let rows = Rows::from_view(x)?;
        let (n_samples, n_features) = (rows.n_samples, rows.n_features);
        if n_samples > u32::MAX as usize || n_features > MAX_FEATURES {
            return Err(invalid(
                "X",
                "at most 2^32 - 1 samples and features are supported",
            ));
        }
        rows.check_values()?;
        params.atoms.validate(n_features)?;
        validate_max_features(&params.atoms, params.max_features, n_features)?;
        let row_draw = RowDraw::new(n_samples, sample_weight)?;
        let max_samples = params.resolved_max_samples(row_draw.n_rows());
        Ok(Training {
            params,
            rows,
            row_draw,
            max_samples,
        })
    }

    /// Trees `range` of the forest, grown in parallel.
    fn grow(&self, range: Range<usize>, control: &FitControl<'_>) -> Result<Vec<Tree>> {
        let params = self.params;
        // scikit-learn's limit: the depth of a balanced tree of max_samples leaves.
        let depth_limit = (self.max_samples.max(2) as f64).log2().ceil() as usize;
        let cancel = control.cancel_flag();
        let counter = TreeCounter::new(control, range.len());
        let n_features = self.rows.n_features;
        with_threads(params.n_threads, || {
            range
                .into_par_iter()
                .map(|t| {
                    if is_cancelled(cancel) {
                        return Err(MorfError::Cancelled);
                    }
                    let seed = params.random_state;
                    let mut draws = Rng::new(seed, 2 * t as u64);
                    let row_of = self.row_draw.draw(&mut draws, self.max_samples);
                    let mut sampler =
                        tree_sampler(&params.atoms, n_features, params.max_features, &mut draws);
                    let mut rng = Rng::new(seed, 2 * t as u64 + 1);
                    let tree = grow_isolation_tree(
                        &self.rows,
                        &row_of,
                        &mut *sampler,
                        &mut rng,
                        depth_limit,
                    );
                    counter.tree_done();
                    Ok(tree)
                })
                .collect::<Result<Vec<_>>>()
        })
    }
}
