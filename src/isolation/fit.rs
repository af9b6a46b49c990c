//! Training: every isolation tree grown in parallel on its own subsample, from its
//! own random streams.

use std::collections::HashSet;

use ndarray::ArrayView2;
use rayon::prelude::*;

use super::grow::grow_isolation_tree;
use super::{IsolationForest, IsolationParams, AUTO_MAX_SAMPLES, MAX_ISOLATION_TREES};
use crate::data::{Feature, Rows};
use crate::error::{invalid, MorfError, Result};
use crate::forest::MAX_FEATURES;
use crate::rng::Rng;
use crate::runtime::control::{is_cancelled, FitControl, TreeCounter};
use crate::runtime::workers::with_threads;

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

    /// Rows each tree grows on for `n_samples` rows of X.
    pub fn resolved_max_samples(&self, n_samples: usize) -> usize {
        self.max_samples.unwrap_or(AUTO_MAX_SAMPLES).min(n_samples)
    }
}

impl IsolationForest {
    /// Trains an isolation forest on the rows of `x` (NaN marks a missing value).
    pub fn fit<T: Feature>(params: &IsolationParams, x: ArrayView2<'_, T>) -> Result<Self> {
        Self::fit_with(params, x, &FitControl::new())
    }

    /// [`fit`](IsolationForest::fit), reporting progress to and stopping on request of
    /// `control` ([`MorfError::Cancelled`]).
    ///
    /// Tree `i` draws its rows from stream `2 i` and its atoms and thresholds from
    /// stream `2 i + 1` of `params.random_state`, so the forest is the same, bit for
    /// bit, whatever the number of threads.
    pub fn fit_with<T: Feature>(
        params: &IsolationParams,
        x: ArrayView2<'_, T>,
        control: &FitControl<'_>,
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
        let max_samples = params.resolved_max_samples(n_samples);
        // scikit-learn's limit: the depth of a balanced tree of max_samples leaves.
        let depth_limit = (max_samples.max(2) as f64).log2().ceil() as usize;
        let cancel = control.cancel_flag();
        let counter = TreeCounter::new(control, params.n_estimators);
        let trees = with_threads(params.n_threads, || {
            (0..params.n_estimators)
                .into_par_iter()
                .map(|t| {
                    if is_cancelled(cancel) {
                        return Err(MorfError::Cancelled);
                    }
                    let seed = params.random_state;
                    let row_of =
                        subsample(&mut Rng::new(seed, 2 * t as u64), n_samples, max_samples);
                    let mut sampler = params.atoms.sampler(n_features);
                    let mut rng = Rng::new(seed, 2 * t as u64 + 1);
                    let tree =
                        grow_isolation_tree(&rows, &row_of, &mut *sampler, &mut rng, depth_limit);
                    counter.tree_done();
                    Ok(tree)
                })
                .collect::<Result<Vec<_>>>()
        })?;
        Ok(IsolationForest {
            n_features,
            max_samples,
            trees,
            scoring: Default::default(),
        })
    }
}

/// `k` distinct rows of `0..n`, drawn uniformly without replacement and sorted, so
/// that a tree reads X forwards: Floyd's algorithm, whose work and memory are of `k`
/// whatever `n`.
fn subsample(rng: &mut Rng, n: usize, k: usize) -> Vec<u32> {
    if k == n {
        return (0..n as u32).collect();
    }
    let mut chosen = HashSet::with_capacity(k);
    let mut rows = Vec::with_capacity(k);
    for j in n - k..n {
        let drawn = rng.below(j + 1);
        let row = if chosen.insert(drawn) {
            drawn
        } else {
            chosen.insert(j);
            j
        };
        rows.push(row as u32);
    }
    rows.sort_unstable();
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsamples_are_distinct_rows_each_equally_likely() {
        let (n, k, draws) = (10, 3, 30_000);
        let mut counts = [0usize; 10];
        let mut rng = Rng::new(5, 0);
        for _ in 0..draws {
            let rows = subsample(&mut rng, n, k);
            assert_eq!(rows.len(), k);
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "{rows:?}");
            rows.iter().for_each(|&r| counts[r as usize] += 1);
        }
        let expected = (draws * k / n) as f64;
        for count in counts {
            assert!(
                (count as f64 - expected).abs() < 0.05 * expected,
                "{counts:?}"
            );
        }
    }
}
