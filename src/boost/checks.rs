//! What a boosting fit's targets and sizes must satisfy before anything is allocated
//! or trained: labels within their classes, values whose residuals fit float32
//! gradients, and a model of at most [`MAX_BOOSTED_TREES`] trees.

use super::loss::{BoostTargets, Loss};
use super::params::{BoostParams, MAX_BOOSTED_TREES};
use crate::error::{invalid, MorfError, Result};

/// Labels within their classes (at least one), or finite values, one per sample.
pub(super) fn check_targets(targets: BoostTargets<'_>, n_samples: usize) -> Result<()> {
    if targets.len() != n_samples {
        return Err(MorfError::ShapeMismatch {
            what: "number of targets in y (one per row of X)",
            expected: n_samples,
            got: targets.len(),
        });
    }
    match targets {
        BoostTargets::Classes { labels, n_classes } => {
            if n_classes == 0 {
                return Err(invalid(
                    "n_classes",
                    "classification needs at least 1 class, got 0",
                ));
            }
            if let Some((index, &label)) = labels
                .iter()
                .enumerate()
                .find(|(_, &l)| l as usize >= n_classes)
            {
                return Err(MorfError::LabelOutOfRange {
                    label,
                    index,
                    n_classes,
                });
            }
        }
        BoostTargets::Values(values) => {
            if let Some(index) = values.iter().position(|v| !v.is_finite()) {
                return Err(invalid(
                    "y",
                    format!("targets must be finite, y[{index}] = {}", values[index]),
                ));
            }
            // Gradients are float32 and summed over up to every sample: residuals from
            // the mean must keep those sums finite. A residual is at most the span of y
            // plus the rounding of the mean (n ulps of the largest |y|). Both ends are
            // finite here, so the bound is a number, +inf at worst.
            let low = values.iter().copied().fold(f64::INFINITY, f64::min);
            let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let rounding = n_samples as f64 * f64::EPSILON * low.abs().max(high.abs());
            let largest_residual = f32::MAX as f64 / n_samples as f64;
            if (high - low) + rounding > largest_residual {
                return Err(invalid(
                    "y",
                    format!(
                        "targets in [{low:e}, {high:e}] are too large for the float32 \
                         gradients of {n_samples} samples (residuals from their mean must \
                         stay below {largest_residual:.1e}); divide y by a constant such \
                         as its largest absolute value and multiply the predictions back"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// At most [`MAX_BOOSTED_TREES`] trees in all, one per class and round.
pub(super) fn check_model_size(params: &BoostParams, loss: Loss) -> Result<()> {
    let n_trees = params.n_estimators.saturating_mul(loss.n_outputs());
    if n_trees > MAX_BOOSTED_TREES {
        return Err(invalid(
            "n_estimators",
            format!(
                "{} rounds of {} trees (one per class for three classes or more) is \
                 {n_trees} trees, more than the {MAX_BOOSTED_TREES} a model may hold; use \
                 fewer rounds or fewer classes",
                params.n_estimators,
                loss.n_outputs()
            ),
        ));
    }
    Ok(())
}
