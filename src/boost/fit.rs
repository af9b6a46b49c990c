//! Where a boosted fit starts: the checks of X, targets, weights and parameters, the
//! held-out samples for early stopping, and the rounds ([`super::rounds`]) run on X's
//! rows or their byte copy, from scratch or after a previous model's rounds.

use ndarray::ArrayView2;

use super::checks::{check_model_size, check_targets};
use super::grow::BoostTreeSettings;
use super::loss::BoostTargets;
use super::model::Booster;
use super::params::BoostParams;
use super::rounds::Training;
use super::split::SplitLimits;
use super::target_scale::Scaled;
use crate::atoms::AtomKind;
use crate::data::check_sample_weight;
use crate::data::{Feature, Rows};
use crate::error::{invalid, MorfError, Result};
use crate::rng::Rng;
use crate::runtime::workers::with_threads;
use crate::runtime::FitControl;
use crate::tree::TreeLimits;

/// The stream that picks the held-out samples, apart from every round's.
const VALIDATION_STREAM: u64 = u64::MAX;

impl Booster {
    /// Trains a boosted model on `x` (samples in rows, NaN for a missing value) for
    /// `targets`, with optional non-negative `sample_weight` (a sample of weight 0 is
    /// left out).
    pub fn fit<T: Feature>(
        params: &BoostParams,
        x: ArrayView2<'_, T>,
        targets: BoostTargets<'_>,
        sample_weight: Option<&[f64]>,
    ) -> Result<Booster> {
        Booster::fit_with(params, x, targets, sample_weight, &FitControl::new())
    }

    /// [`Booster::fit`] with progress reports (a tree at a time, `n_estimators` times
    /// the trees per round in all; fewer when early stopping stops) and cancellation
    /// (checked before every node), as [`Forest::fit_with`](crate::Forest::fit_with)
    /// offers them. Neither changes the model.
    pub fn fit_with<T: Feature>(
        params: &BoostParams,
        x: ArrayView2<'_, T>,
        targets: BoostTargets<'_>,
        sample_weight: Option<&[f64]>,
        control: &FitControl<'_>,
    ) -> Result<Booster> {
        Booster::fit_from(None, params, x, targets, sample_weight, control)
    }

    /// This model with more rounds, up to `params.n_estimators` in all (scikit-learn's
    /// `warm_start`): given the data, targets, weights and parameters of the fit
    /// that made it (`random_state` included), the result is bit for bit the model
    /// that fit would have made with `params.n_estimators` rounds, and only the new
    /// rounds are trained. A model that early stopping stopped stays as it is, as it
    /// would have stopped there in the longer fit too.
    ///
    /// ```
    /// use ndarray::array;
    /// use morf_rs::{BoostParams, BoostTargets, Booster, FitControl};
    ///
    /// let x = array![[0.0f32, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]];
    /// let targets = BoostTargets::Classes { labels: &[0, 1, 0, 1], n_classes: 2 };
    /// let params = |n_estimators| BoostParams {
    ///     n_estimators,
    ///     min_samples_leaf: 1,
    ///     ..BoostParams::default()
    /// };
    /// let first = Booster::fit(&params(5), x.view(), targets, None)?;
    /// let more = first.fit_more(&params(8), x.view(), targets, None, &FitControl::new())?;
    /// assert_eq!(more, Booster::fit(&params(8), x.view(), targets, None)?);
    /// # Ok::<(), morf_rs::MorfError>(())
    /// ```
    pub fn fit_more<T: Feature>(
        &self,
        params: &BoostParams,
        x: ArrayView2<'_, T>,
        targets: BoostTargets<'_>,
        sample_weight: Option<&[f64]>,
        control: &FitControl<'_>,
    ) -> Result<Booster> {
        if params.n_estimators < self.n_rounds() {
            return Err(invalid(
                "n_estimators",
                format!(
                    "must be at least the {} rounds already trained to add rounds",
                    self.n_rounds()
                ),
            ));
        }
        Booster::fit_from(Some(self), params, x, targets, sample_weight, control)
    }

    /// A fit from scratch, or continued from `previous`.
    fn fit_from<T: Feature>(
        previous: Option<&Booster>,
        params: &BoostParams,
        x: ArrayView2<'_, T>,
        targets: BoostTargets<'_>,
        sample_weight: Option<&[f64]>,
        control: &FitControl<'_>,
    ) -> Result<Booster> {
        params.validate()?;
        let rows = Rows::from_view(x)?;
        let (n_samples, n_features) = (rows.n_samples, rows.n_features);
        if n_samples > u32::MAX as usize || n_features > u32::MAX as usize {
            return Err(invalid(
                "X",
                "at most 2^32 - 1 samples and features are supported",
            ));
        }
        check_targets(targets, n_samples)?;
        check_model_size(params, targets.loss())?;
        let scaled = Scaled::new(targets, params);
        let (targets, params) = (scaled.targets(targets), scaled.params(params));
        let previous_scaled;
        let previous = match previous {
            Some(model) if scaled.exponent != 0 => {
                previous_scaled = model.clone().rescaled(-scaled.exponent);
                Some(&previous_scaled)
            }
            other => other,
        };
        let weights = check_sample_weight(sample_weight, n_samples)?;
        let missing = rows.check_values()?;
        params.atoms.validate(n_features)?;
        let axis_aligned = params.atoms == AtomKind::AxisAligned;
        let n_atoms = params
            .max_features
            .resolve(n_features, n_samples, axis_aligned)?;
        let weighted: Vec<u32> = (0..n_samples as u32)
            .filter(|&r| weights[r as usize] > 0.0)
            .collect();
        let n_validation = params.validation_count(weighted.len())?;
        let mut rng = Rng::new(params.random_state, VALIDATION_STREAM);
        let (train_rows, validation_rows) = hold_out(targets, weighted, n_validation, &mut rng);
        if train_rows.iter().all(|&r| weights[r as usize] == 0.0) {
            return Err(MorfError::ZeroTotalWeight);
        }
        let tree_settings = BoostTreeSettings {
            limits: TreeLimits::new(params.max_depth, params.max_leaf_nodes),
            split: SplitLimits::boosting(
                params.min_samples_leaf.min(u32::MAX as usize) as u32,
                params.l2_regularization,
            ),
            learning_rate: params.learning_rate,
        };
        // Bytes hold the same values, so projections from them are the same floats.
        let byte_valued = !missing
            && matches!(
                rows.whole_values(),
                Some((low, high)) if low >= 0.0 && high <= u8::MAX as f32
            );
        let training = Training {
            params,
            loss: targets.loss(),
            targets,
            weights: &weights,
            n_atoms,
            tree_settings,
            n_features,
            missing,
        };
        let model = with_threads(params.n_threads, || {
            if byte_valued {
                // The same projections from a quarter of the memory traffic.
                let bytes = rows.to_bytes();
                training.run(&bytes, &train_rows, &validation_rows, previous, control)
            } else {
                training.run(&rows, &train_rows, &validation_rows, previous, control)
            }
        })?;
        Ok(model.rescaled(scaled.exponent))
    }
}

/// Splits `rows` into training and `n_validation` held-out rows, both ascending;
/// for classes, each class is held out in proportion to its size.
fn hold_out(
    targets: BoostTargets<'_>,
    rows: Vec<u32>,
    n_validation: usize,
    rng: &mut Rng,
) -> (Vec<u32>, Vec<u32>) {
    if n_validation == 0 {
        return (rows, Vec::new());
    }
    let mut groups: Vec<Vec<u32>> = match targets {
        BoostTargets::Classes { labels, n_classes } => {
            let mut groups = vec![Vec::new(); n_classes];
            for &r in &rows {
                groups[labels[r as usize] as usize].push(r);
            }
            groups
        }
        BoostTargets::Values(_) => vec![rows.clone()],
    };
    // Each group's share, rounded down, then the rows left over to the groups with
    // the largest remainders (the earliest among equals).
    let n = rows.len();
    let mut quotas: Vec<usize> = groups.iter().map(|g| g.len() * n_validation / n).collect();
    let mut by_remainder: Vec<usize> = (0..groups.len()).collect();
    by_remainder.sort_by_key(|&c| std::cmp::Reverse(groups[c].len() * n_validation % n));
    let short = n_validation - quotas.iter().sum::<usize>();
    for &c in by_remainder.iter().take(short) {
        quotas[c] += 1;
    }
    let (mut train, mut validation) = (Vec::new(), Vec::new());
    for (group, quota) in groups.iter_mut().zip(quotas) {
        rng.choose_into_prefix(group, quota);
        validation.extend_from_slice(&group[..quota]);
        train.extend_from_slice(&group[quota..]);
    }
    train.sort_unstable();
    validation.sort_unstable();
    (train, validation)
}
