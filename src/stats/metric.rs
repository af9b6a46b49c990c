//! The metrics a test compares forests by, as treeple's `treeple.stats` defines them,
//! computed on averaged posteriors.

use std::cmp::Ordering;

use ndarray::{ArrayView1, ArrayView2};

use crate::error::{invalid, MorfError, Result};

/// Largest false-positive rate at which [`Metric::SensitivityAt98`] reads the
/// true-positive rate (98 % specificity).
const MAX_FALSE_POSITIVE_RATE: f64 = 0.02;

/// What a forest's posteriors are scored against: the training targets.
#[derive(Debug, Clone, Copy)]
pub enum Truth<'a> {
    /// Class indices in `0..n_classes`, one per row (classification forests).
    Classes(ArrayView1<'a, u32>),
    /// Target values, one row per sample (regression forests).
    Values(ArrayView2<'a, f64>),
}

impl Truth<'_> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Truth::Classes(y) => y.len(),
            Truth::Values(y) => y.nrows(),
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A score of averaged posteriors against the truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// `"s@98"`: the sensitivity at 98 % specificity, the largest true-positive rate
    /// of the ROC curve of the class-1 probability at a false-positive rate of at most
    /// 0.02 (binary classification).
    SensitivityAt98,
    /// `"auc"`: the area under the ROC curve of the class-1 probability (binary).
    Auc,
    /// `"mi"`: mutual information (nats), the entropy of the classes minus the mean
    /// entropy of the posteriors.
    MutualInformation,
    /// `"cond_entropy"`: the mean entropy of the posteriors (nats), H(Y | X).
    ConditionalEntropy,
    /// `"balanced_accuracy"`: the mean over the classes present of the share of their
    /// rows whose most probable class (the first, on ties) is theirs.
    BalancedAccuracy,
    /// `"mse"`: mean squared error of the predicted values (regression).
    MeanSquaredError,
    /// `"mae"`: mean absolute error of the predicted values (regression).
    MeanAbsoluteError,
}

/// Every metric with its name.
const NAMES: [(&str, Metric); 7] = [
    ("s@98", Metric::SensitivityAt98),
    ("auc", Metric::Auc),
    ("mi", Metric::MutualInformation),
    ("cond_entropy", Metric::ConditionalEntropy),
    ("balanced_accuracy", Metric::BalancedAccuracy),
    ("mse", Metric::MeanSquaredError),
    ("mae", Metric::MeanAbsoluteError),
];

impl Metric {
    /// The metric of this name (`"s@98"`, `"auc"`, `"mi"`, `"cond_entropy"`,
    /// `"balanced_accuracy"`, `"mse"`, `"mae"`).
    pub fn from_name(name: &str) -> Result<Metric> {
        NAMES
            .iter()
            .find(|(known, _)| *known == name)
            .map(|&(_, metric)| metric)
            .ok_or_else(|| {
                let names: Vec<&str> = NAMES.iter().map(|(known, _)| *known).collect();
                invalid(
                    "metric",
                    format!("must be one of {}, got {name:?}", names.join(", ")),
                )
            })
    }

    /// The metric's name.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, metric)| *metric == self)
            .map(|(name, _)| *name)
            .expect("every metric is named")
    }

    /// Whether a larger value is the better one (false for the errors and the
    /// conditional entropy).
    pub fn higher_is_better(self) -> bool {
        !matches!(
            self,
            Metric::ConditionalEntropy | Metric::MeanSquaredError | Metric::MeanAbsoluteError
        )
    }

    /// Checks that the metric suits `truth` and posteriors of `width` classes or
    /// outputs.
    pub(crate) fn check(self, truth: &Truth<'_>, width: usize) -> Result<()> {
        let for_values = matches!(self, Metric::MeanSquaredError | Metric::MeanAbsoluteError);
        match truth {
            Truth::Classes(y) => {
                if for_values {
                    return Err(invalid(
                        "metric",
                        format!(
                            "{:?} scores regression values; for classes use s@98, auc, \
                             mi, cond_entropy or balanced_accuracy",
                            self.name()
                        ),
                    ));
                }
                if matches!(self, Metric::SensitivityAt98 | Metric::Auc) && width != 2 {
                    return Err(invalid(
                        "metric",
                        format!(
                            "{:?} needs two classes, got {width}; use mi, cond_entropy or \
                             balanced_accuracy",
                            self.name()
                        ),
                    ));
                }
                if let Some(&class) = y.iter().find(|&&class| class as usize >= width) {
                    return Err(invalid(
                        "y",
                        format!("class index {class} is not below the {width} classes"),
                    ));
                }
            }
            Truth::Values(y) => {
                if !for_values {
                    return Err(invalid(
                        "metric",
                        format!(
                            "{:?} scores class posteriors; for regression use mse or mae",
                            self.name()
                        ),
                    ));
                }
                if y.ncols() != width {
                    return Err(MorfError::ShapeMismatch {
                        what: "number of outputs of y",
                        expected: width,
                        got: y.ncols(),
                    });
                }
                if y.iter().any(|v| !v.is_finite()) {
                    return Err(invalid("y", "must hold finite values only"));
                }
            }
        }
        Ok(())
    }

    /// The metric of `posteriors` (rows × classes or outputs) against `truth`;
    /// NaN where it is undefined (a class missing for s@98 or auc).
    pub fn score(self, truth: &Truth<'_>, posteriors: ArrayView2<'_, f64>) -> Result<f64> {
        if posteriors.nrows() != truth.len() {
            return Err(MorfError::ShapeMismatch {
                what: "number of rows of the posteriors",
                expected: truth.len(),
                got: posteriors.nrows(),
            });
        }
        let width = posteriors.ncols();
        self.check(truth, width)?;
        if posteriors.iter().any(|v| !v.is_finite()) {
            return Err(invalid("posteriors", "must hold finite values only"));
        }
        let values: Vec<f64> = posteriors.iter().copied().collect();
        let rows: Vec<u32> = (0..truth.len() as u32).collect();
        Ok(self.score_rows(truth, &values, width, &rows, &mut Vec::new()))
    }

    /// The metric of the rows `rows` of `means` (`width` values per row of the
    /// truth), with `order` as scratch space.
    pub(crate) fn score_rows(
        self,
        truth: &Truth<'_>,
        means: &[f64],
        width: usize,
        rows: &[u32],
        order: &mut Vec<(f64, bool)>,
    ) -> f64 {
        let row_means = |row: u32| &means[row as usize * width..][..width];
        let classes = |row: u32| match truth {
            Truth::Classes(y) => y[row as usize] as usize,
            Truth::Values(_) => unreachable!("checked: class metrics score classes"),
        };
        let mean_over_rows = |f: &dyn Fn(u32) -> f64| {
            rows.iter().map(|&row| f(row)).sum::<f64>() / rows.len() as f64
        };
        match self {
            Metric::SensitivityAt98 | Metric::Auc => {
                order.clear();
                order.extend(
                    rows.iter()
                        .map(|&row| (row_means(row)[1], classes(row) == 1)),
                );
                let roc = Roc::new(order);
                if self == Metric::Auc {
                    roc.area()
                } else {
                    roc.best_true_positive_rate(MAX_FALSE_POSITIVE_RATE)
                }
            }
            Metric::MutualInformation | Metric::ConditionalEntropy => {
                let conditional = mean_over_rows(&|row| entropy(row_means(row)));
                if self == Metric::ConditionalEntropy {
                    return conditional;
                }
                let mut counts = vec![0.0; width];
                rows.iter().for_each(|&row| counts[classes(row)] += 1.0);
                entropy(&counts) - conditional
            }
            Metric::BalancedAccuracy => {
                let (mut hits, mut totals) = (vec![0u64; width], vec![0u64; width]);
                for &row in rows {
                    let class = classes(row);
                    totals[class] += 1;
                    hits[class] += u64::from(most_probable(row_means(row)) == class);
                }
                let recalls: Vec<f64> = hits
                    .iter()
                    .zip(&totals)
                    .filter(|(_, &total)| total > 0)
                    .map(|(&hit, &total)| hit as f64 / total as f64)
                    .collect();
                recalls.iter().sum::<f64>() / recalls.len() as f64
            }
            Metric::MeanSquaredError | Metric::MeanAbsoluteError => {
                let Truth::Values(y) = truth else {
                    unreachable!("checked: error metrics score values")
                };
                let loss = |d: f64| {
                    if self == Metric::MeanSquaredError {
                        d * d
                    } else {
                        d.abs()
                    }
                };
                // Per output, then averaged: scikit-learn's 'uniform_average'.
                (0..width)
                    .map(|k| mean_over_rows(&|row| loss(y[[row as usize, k]] - row_means(row)[k])))
                    .sum::<f64>()
                    / width as f64
            }
        }
    }
}

/// Index of the largest value, the first on ties (numpy's argmax).
fn most_probable(values: &[f64]) -> usize {
    let mut best = 0;
    for (k, &v) in values.iter().enumerate().skip(1) {
        if v > values[best] {
            best = k;
        }
    }
    best
}

/// Entropy in nats of the distribution proportional to `weights` (scipy's
/// `entropy`: zero weights add nothing).
fn entropy(weights: &[f64]) -> f64 {
    let total: f64 = weights.iter().sum();
    -weights
        .iter()
        .filter(|&&w| w > 0.0)
        .map(|&w| {
            let p = w / total;
            p * p.ln()
        })
        .sum::<f64>()
}

/// The ROC curve of scores against positive labels, one point per distinct score
/// (scikit-learn's `roc_curve` with `drop_intermediate=False`).
struct Roc {
    /// Cumulative (false positives, true positives) after each distinct score,
    /// highest score first.
    points: Vec<(u64, u64)>,
    negatives: u64,
    positives: u64,
}

impl Roc {
    /// Sorts `scored` (score, positive) by decreasing score.
    fn new(scored: &mut [(f64, bool)]) -> Roc {
        scored.sort_unstable_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(Ordering::Equal));
        let mut points = Vec::new();
        let (mut fp, mut tp) = (0u64, 0u64);
        for (i, &(score, positive)) in scored.iter().enumerate() {
            if positive {
                tp += 1;
            } else {
                fp += 1;
            }
            if scored.get(i + 1).is_none_or(|next| next.0 != score) {
                points.push((fp, tp));
            }
        }
        Roc {
            points,
            negatives: fp,
            positives: tp,
        }
    }

    /// The largest true-positive rate at a false-positive rate of at most
    /// `max_rate` (the curve starts at (0, 0)); NaN without both labels.
    fn best_true_positive_rate(&self, max_rate: f64) -> f64 {
        if self.negatives == 0 || self.positives == 0 {
            return f64::NAN;
        }
        let within = self
            .points
            .iter()
            .take_while(|&&(fp, _)| fp as f64 / self.negatives as f64 <= max_rate)
            .last();
        within.map_or(0.0, |&(_, tp)| tp as f64 / self.positives as f64)
    }

    /// The area under the curve (ties count half); NaN without both labels.
    fn area(&self) -> f64 {
        if self.negatives == 0 || self.positives == 0 {
            return f64::NAN;
        }
        let mut twice_area = 0u128;
        let (mut fp_before, mut tp_before) = (0u64, 0u64);
        for &(fp, tp) in &self.points {
            twice_area += u128::from(fp - fp_before) * u128::from(tp + tp_before);
            (fp_before, tp_before) = (fp, tp);
        }
        twice_area as f64 / (2.0 * self.negatives as f64 * self.positives as f64)
    }
}
