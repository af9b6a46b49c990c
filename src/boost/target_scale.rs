//! Regression targets brought near unit size by a power of two for training.
//!
//! Gradient sums and the boundaries' costs (`G² / H`) are `f32`: for targets spread
//! over more than about 1e18 the costs overflow, and for targets spread over less
//! than about 1e-19 they vanish, so that splits were chosen at random or not at all.
//! A squared-error fit on `y · 2^-k` is the fit on `y` with every target, raw score
//! and leaf value times `2^-k` and every loss and gain times `4^-k`, exactly, as long
//! as no value leaves the range of normal floats: the same splits, the same rounding.
//! So training on scaled targets changes no model whose values stayed in range, and
//! gives every other one the model exact arithmetic would.

use super::loss::{BoostTargets, Loss};
use super::model::Booster;
use super::params::BoostParams;
use crate::tree::Leaves;

/// The largest power of two the targets are scaled by either way, a finite `f64`.
/// (A span of doubles is at least `2^-52` of their largest size, so scaled targets
/// stay below `2^54`.)
const MAX_EXPONENT: i32 = 1000;

/// `2^exponent`, exactly, for `|exponent| <= MAX_EXPONENT`.
fn power_of_two(exponent: i32) -> f64 {
    debug_assert!(exponent.abs() <= MAX_EXPONENT);
    2f64.powi(exponent)
}

/// The exponent `k` such that the targets' span (largest less smallest) over `2^k` lies
/// in `[1, 2)`, within `±MAX_EXPONENT`; 0 for constant targets. The targets are finite
/// ([`check_targets`](super::checks)).
pub(super) fn target_exponent(values: &[f64]) -> i32 {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = high - low;
    if !(span > 0.0 && span.is_finite()) {
        return 0;
    }
    (span.log2().floor() as i32).clamp(-MAX_EXPONENT, MAX_EXPONENT)
}

/// The targets a fit trains on, the parameters it trains with and the exponent its
/// model is scaled back by: squared errors on targets over `2^k` (`tol` over `4^k`);
/// classes as they are.
pub(super) struct Scaled {
    /// `k`: the trained model's values are times `2^k` in the targets' units.
    pub exponent: i32,
    values: Vec<f64>,
    params: Option<BoostParams>,
}

impl Scaled {
    /// What a fit for `targets` with `params` trains on.
    pub(super) fn new(targets: BoostTargets<'_>, params: &BoostParams) -> Scaled {
        let exponent = match targets {
            BoostTargets::Values(values) => target_exponent(values),
            BoostTargets::Classes { .. } => 0,
        };
        let (values, params) = match targets {
            BoostTargets::Values(values) if exponent != 0 => {
                let factor = power_of_two(-exponent);
                let mut params = params.clone();
                if let Some(stopping) = &mut params.early_stopping {
                    // Beyond f64 for the tiniest spans: then no improvement counts,
                    // as none can in y's units, where their losses round to 0.
                    if stopping.tol > 0.0 {
                        stopping.tol *= factor * factor;
                    }
                }
                (values.iter().map(|&y| y * factor).collect(), Some(params))
            }
            _ => (Vec::new(), None),
        };
        Scaled {
            exponent,
            values,
            params,
        }
    }

    /// The targets trained on: the scaled values, or `targets` as given.
    pub(super) fn targets<'a>(&'a self, targets: BoostTargets<'a>) -> BoostTargets<'a> {
        match self.exponent {
            0 => targets,
            _ => BoostTargets::Values(&self.values),
        }
    }

    /// The parameters trained with: `tol` scaled as the losses are.
    pub(super) fn params<'a>(&'a self, params: &'a BoostParams) -> &'a BoostParams {
        self.params.as_ref().unwrap_or(params)
    }
}

impl Booster {
    /// This squared-error model in units `2^exponent` times its own: baseline, leaf
    /// values and priors times `2^exponent`, gains and losses times `4^exponent`.
    /// Classifiers are returned as they are.
    pub(super) fn rescaled(self, exponent: i32) -> Booster {
        let mut model = self;
        if exponent == 0 || model.loss != Loss::SquaredError {
            return model;
        }
        let factor = power_of_two(exponent);
        let squared = factor * factor;
        model.baseline.iter_mut().for_each(|b| *b *= factor);
        for loss in model
            .train_loss
            .iter_mut()
            .chain(&mut model.validation_loss)
        {
            *loss *= squared;
        }
        for tree in &mut model.trees {
            tree.impurity_decreases
                .iter_mut()
                .for_each(|g| *g *= squared);
            if let Leaves::Values { means, prior, .. } = &mut tree.leaves {
                means.iter_mut().chain(prior).for_each(|v| *v *= factor);
            }
        }
        model.scoring = Default::default();
        model
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_span_is_brought_into_one_to_two() {
        for (values, expected) in [
            (&[0.0, 1.0][..], 0),
            (&[0.0, 1.5], 0),
            (&[-3.0, 5.0], 3),
            (&[1e20, 1e20 + 2f64.powi(20)], 20),
            (&[0.0, 2f64.powi(-100)], -100),
            (&[7.0, 7.0], 0),
            (&[0.0, f64::MIN_POSITIVE], -MAX_EXPONENT),
        ] {
            assert_eq!(target_exponent(values), expected, "{values:?}");
        }
    }
}
