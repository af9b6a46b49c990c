//! What the trees learn to predict, checked once per fit.

use ndarray::ArrayView2;

use super::MAX_CLASSES;
use crate::error::{invalid, MorfError, Result};
use crate::split::{Criterion, LocalSamples};
use crate::tree::HonestPrior;
use crate::tree::Task;

/// What the trees learn to predict.
#[derive(Debug, Clone, Copy)]
pub enum Targets<'a> {
    /// A class index in `[0, n_classes)` per sample (classification).
    Classes {
        /// Class index of each sample.
        labels: &'a [u32],
        /// Number of classes.
        n_classes: usize,
    },
    /// Finite target values, one row per sample and one column per output
    /// (regression; scikit-learn's multi-output y).
    Values(ArrayView2<'a, f64>),
}

impl Targets<'_> {
    /// Checks the targets against the number of samples, the criterion and the
    /// honest prior, and says what a forest of them predicts.
    pub(crate) fn check(
        &self,
        n_samples: usize,
        criterion: Criterion,
        prior: HonestPrior,
        honest: bool,
    ) -> Result<Task> {
        let n_given = match self {
            Targets::Classes { labels, .. } => labels.len(),
            Targets::Values(values) => values.nrows(),
        };
        if n_given != n_samples {
            return Err(MorfError::ShapeMismatch {
                what: "number of targets in y (one per row of X)",
                expected: n_samples,
                got: n_given,
            });
        }
        let task = match *self {
            Targets::Classes { labels, n_classes } => {
                if !(1..=MAX_CLASSES).contains(&n_classes) {
                    return Err(invalid(
                        "n_classes",
                        format!(
                            "must be in 1..={MAX_CLASSES} (each leaf stores a distribution \
                             over all classes), got {n_classes}"
                        ),
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
                Task::Classification { n_classes }
            }
            Targets::Values(values) => {
                if !(1..=MAX_CLASSES).contains(&values.ncols()) {
                    return Err(invalid(
                        "y",
                        format!(
                            "needs 1 to {MAX_CLASSES} outputs (each leaf stores a value per \
                             output), got {}",
                            values.ncols()
                        ),
                    ));
                }
                if let Some(((row, column), _)) =
                    values.indexed_iter().find(|(_, v)| !v.is_finite())
                {
                    return Err(invalid(
                        "y",
                        format!(
                            "contains NaN or infinity (first at row {row}, output {column}); \
                             remove those samples or impute their targets"
                        ),
                    ));
                }
                check_target_sizes(&values)?;
                Task::Regression {
                    n_outputs: values.ncols(),
                }
            }
        };
        let regression = matches!(task, Task::Regression { .. });
        if criterion.is_regression() != regression {
            let needs = if regression {
                "SquaredError or Poisson for target values"
            } else {
                "Gini or Entropy for classes"
            };
            return Err(invalid(
                "criterion",
                format!("{criterion:?} does not fit these targets: use {needs}"),
            ));
        }
        if let (Criterion::Poisson, Targets::Values(values)) = (criterion, self) {
            check_poisson_targets(values)?;
        }
        if regression && honest && prior == HonestPrior::Uniform {
            return Err(invalid(
                "honest_prior",
                "Uniform is a class distribution; for target values use Empirical or Ignore",
            ));
        }
        Ok(task)
    }

    /// Appends the target of sample `row` to `local` (its class, or its values).
    #[inline]
    pub(crate) fn push_target(&self, row: usize, local: &mut LocalSamples) {
        match self {
            Targets::Classes { labels, .. } => local.class_of.push(labels[row]),
            Targets::Values(values) => local.values_of.extend(values.row(row).iter()),
        }
    }
}

/// The largest `|y|` whose squares, summed over the weight of a node's samples, stay
/// finite `f64` numbers (2^480, about 3e144), and the smallest nonzero one whose squares
/// stay normal ones: beyond either, the split search's costs overflow or vanish, and a
/// tree would learn nothing without saying so.
const LARGEST_TARGET: f64 = 3.1217485503159922e144;
const SMALLEST_TARGET: f64 = 1.0 / LARGEST_TARGET;

/// Refuses targets whose squared errors a split search cannot hold in `f64`.
fn check_target_sizes(values: &ArrayView2<'_, f64>) -> Result<()> {
    let largest = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if largest > LARGEST_TARGET {
        return Err(invalid(
            "y",
            format!(
                "targets as large as {largest:e} overflow the squared errors trees split \
                 on (|y| must stay below {LARGEST_TARGET:.1e}); divide y by a constant such \
                 as its largest absolute value and multiply the predictions back"
            ),
        ));
    }
    if largest > 0.0 && largest < SMALLEST_TARGET {
        return Err(invalid(
            "y",
            format!(
                "targets no larger than {largest:e} vanish in the squared errors trees split \
                 on (the largest |y| must be at least {SMALLEST_TARGET:.1e}); divide y by \
                 its largest absolute value and multiply the predictions back"
            ),
        ));
    }
    Ok(())
}

/// Poisson deviance needs counts or rates: no negative value, and some positive one
/// (scikit-learn's rule, over all outputs together).
fn check_poisson_targets(values: &ArrayView2<'_, f64>) -> Result<()> {
    if let Some(((row, column), value)) = values.indexed_iter().find(|(_, &v)| v < 0.0) {
        return Err(invalid(
            "y",
            format!(
                "Some value(s) of y are negative which is not allowed for Poisson \
                 regression (first at row {row}, output {column}: {value})"
            ),
        ));
    }
    if values.sum() <= 0.0 {
        return Err(invalid(
            "y",
            "Sum of y is not strictly positive which is necessary for Poisson regression",
        ));
    }
    Ok(())
}
