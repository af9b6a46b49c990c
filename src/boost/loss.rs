//! What is minimised: per sample, the loss of its raw scores, their gradients and
//! hessians, the starting scores, and how raw scores become predictions.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Samples per parallel task when computing gradients or losses.
const ROWS_PER_TASK: usize = 4096;

/// Smallest probability a log loss reads, as scikit-learn clips it.
const PROBABILITY_FLOOR: f64 = 1e-15;

/// Log-loss scores further apart than this come only from Newton steps run away: a
/// probability rounds to exactly 0 or 1 in `f64` once scores are about 37 apart, where
/// its gradient vanishes, so no sound step carries a score much further. A leaf of
/// samples the model is sure of has hessians near 0, and a few samples it is wrongly
/// sure of give it a step of their gradients over that near-zero sum; the samples
/// that step sends the wrong way feed larger steps in the next rounds.
pub(crate) const RUNAWAY_SPREAD: f64 = 1e3;

/// The loss a model minimises, fixed by the kind of target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Loss {
    /// Half the squared error; one raw score per sample, the prediction itself.
    SquaredError,
    /// Log loss of two classes; one raw score per sample, the log-odds of class 1.
    BinaryLogLoss,
    /// Log loss of `n_classes >= 3` classes through softmax; one raw score per class.
    /// One class is this loss with `n_classes == 1`: its probability is always 1, its
    /// gradients 0, so the model is the constant that predicts it.
    MultinomialLogLoss {
        /// Number of classes.
        n_classes: usize,
    },
}

/// What a sample must be predicted as: its class, or its value.
#[derive(Debug, Clone, Copy)]
pub enum BoostTargets<'a> {
    /// Class indices in `[0, n_classes)`.
    Classes {
        /// One class index per sample.
        labels: &'a [u32],
        /// Number of classes (at least 1).
        n_classes: usize,
    },
    /// Real values (regression).
    Values(&'a [f64]),
}

impl BoostTargets<'_> {
    /// Number of samples.
    pub fn len(&self) -> usize {
        match self {
            BoostTargets::Classes { labels, .. } => labels.len(),
            BoostTargets::Values(values) => values.len(),
        }
    }

    /// Whether there is no sample.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The loss that fits these targets.
    pub fn loss(&self) -> Loss {
        match *self {
            BoostTargets::Classes { n_classes: 2, .. } => Loss::BinaryLogLoss,
            BoostTargets::Classes { n_classes, .. } => Loss::MultinomialLogLoss { n_classes },
            BoostTargets::Values(_) => Loss::SquaredError,
        }
    }
}

/// The samples a loss is evaluated on: target and weight per sample, in a chosen
/// order of rows.
pub(crate) struct Sampled<'a> {
    pub targets: BoostTargets<'a>,
    pub weights: &'a [f64],
    /// The rows, indices into `targets`, `weights` and the raw scores.
    pub rows: &'a [u32],
}

impl Loss {
    /// Raw scores per sample (trees per round).
    pub fn n_outputs(self) -> usize {
        match self {
            Loss::SquaredError | Loss::BinaryLogLoss => 1,
            Loss::MultinomialLogLoss { n_classes } => n_classes,
        }
    }

    /// The constant raw scores that minimise the loss before any tree: the weighted
    /// mean, the log-odds, or the log class priors (as scikit-learn starts).
    pub(crate) fn baseline(self, data: &Sampled<'_>) -> Vec<f64> {
        let total: f64 = data.rows.iter().map(|&r| data.weights[r as usize]).sum();
        match (self, data.targets) {
            (Loss::SquaredError, BoostTargets::Values(y)) => {
                let sum: f64 = data
                    .rows
                    .iter()
                    .map(|&r| data.weights[r as usize] * y[r as usize])
                    .sum();
                vec![sum / total]
            }
            (_, BoostTargets::Classes { labels, n_classes }) => {
                let mut priors = vec![0.0; n_classes];
                for &r in data.rows {
                    priors[labels[r as usize] as usize] += data.weights[r as usize];
                }
                let clip = |p: f64| (p / total).clamp(PROBABILITY_FLOOR, 1.0 - PROBABILITY_FLOOR);
                if self == Loss::BinaryLogLoss {
                    let p = clip(priors[1]);
                    vec![(p / (1.0 - p)).ln()]
                } else if n_classes == 1 {
                    // The log prior of the only class, ln 1, unclipped.
                    vec![0.0]
                } else {
                    priors.iter().map(|&p| clip(p).ln()).collect()
                }
            }
            _ => unreachable!("the loss follows from the targets"),
        }
    }

    /// Writes, for output `k` and sample `p` (the sample at `data.rows[p]`), the
    /// gradient and hessian of its weighted loss at `raw` into `gradients[k][p]` and
    /// `hessians[k][p]`. `raw` holds `n_outputs` scores per row of the targets.
    pub(crate) fn gradients(
        self,
        data: &Sampled<'_>,
        raw: &[f64],
        gradients: &mut [Vec<f32>],
        hessians: &mut [Vec<f32>],
    ) {
        let n_outputs = self.n_outputs();
        let m = data.rows.len();
        for k in 0..n_outputs {
            gradients[k].resize(m, 0.0);
            hessians[k].resize(m, 0.0);
        }
        match (self, data.targets) {
            (Loss::SquaredError, BoostTargets::Values(y)) => {
                per_sample(data, &mut gradients[0], &mut hessians[0], |row, w, g, h| {
                    *g = (w * (raw[row] - y[row])) as f32;
                    *h = w as f32;
                })
            }
            (Loss::BinaryLogLoss, BoostTargets::Classes { labels, .. }) => {
                per_sample(data, &mut gradients[0], &mut hessians[0], |row, w, g, h| {
                    let p = sigmoid(raw[row]);
                    *g = (w * (p - labels[row] as f64)) as f32;
                    *h = (w * p * (1.0 - p)) as f32;
                })
            }
            (Loss::MultinomialLogLoss { n_classes }, BoostTargets::Classes { labels, .. }) => {
                // One pass per class keeps each output's writes contiguous; the softmax
                // is recomputed per class, cheaper than a buffer of probabilities.
                for k in 0..n_classes {
                    per_sample(data, &mut gradients[k], &mut hessians[k], |row, w, g, h| {
                        let scores = &raw[row * n_classes..(row + 1) * n_classes];
                        let p = softmax_at(scores, k);
                        let is_k = f64::from(labels[row] as usize == k);
                        *g = (w * (p - is_k)) as f32;
                        *h = (w * p * (1.0 - p)) as f32;
                    });
                }
            }
            _ => unreachable!("the loss follows from the targets"),
        }
    }

    /// Weighted mean loss of the samples at `raw`.
    pub(crate) fn mean_loss(self, data: &Sampled<'_>, raw: &[f64]) -> f64 {
        let sum_over = |f: &(dyn Fn(usize) -> f64 + Sync)| -> f64 {
            let chunk_sums: Vec<f64> = data
                .rows
                .par_chunks(ROWS_PER_TASK)
                .map(|rows| {
                    rows.iter()
                        .map(|&r| data.weights[r as usize] * f(r as usize))
                        .sum::<f64>()
                })
                .collect();
            chunk_sums.iter().sum()
        };
        let total: f64 = data.rows.iter().map(|&r| data.weights[r as usize]).sum();
        let sum = match (self, data.targets) {
            (Loss::SquaredError, BoostTargets::Values(y)) => {
                sum_over(&|row| 0.5 * (raw[row] - y[row]).powi(2))
            }
            (Loss::BinaryLogLoss, BoostTargets::Classes { labels, .. }) => sum_over(&|row| {
                // log(1 + e^z) - y z, written to stay finite for large |z|.
                let z = raw[row];
                z.max(0.0) + (-z.abs()).exp().ln_1p() - labels[row] as f64 * z
            }),
            (Loss::MultinomialLogLoss { n_classes }, BoostTargets::Classes { labels, .. }) => {
                sum_over(&|row| {
                    let scores = &raw[row * n_classes..(row + 1) * n_classes];
                    -softmax_at(scores, labels[row] as usize)
                        .max(PROBABILITY_FLOOR)
                        .ln()
                })
            }
            _ => unreachable!("the loss follows from the targets"),
        };
        sum / total
    }

    /// Turns one sample's raw scores into its prediction in place: unchanged for
    /// regression; for classes, into class probabilities, written to `out`.
    pub fn transform(self, raw: &[f64], out: &mut [f64]) {
        match self {
            Loss::SquaredError => out[0] = raw[0],
            Loss::BinaryLogLoss => {
                let p = sigmoid(raw[0]);
                out[0] = 1.0 - p;
                out[1] = p;
            }
            Loss::MultinomialLogLoss { .. } => {
                let max = raw.iter().fold(f64::NEG_INFINITY, |m, &z| m.max(z));
                let mut total = 0.0;
                for (o, &z) in out.iter_mut().zip(raw) {
                    *o = (z - max).exp();
                    total += *o;
                }
                out.iter_mut().for_each(|o| *o /= total);
            }
        }
    }

    /// Width of a prediction: the number of classes, or 1 for regression.
    pub fn n_predicted(self) -> usize {
        match self {
            Loss::SquaredError => 1,
            Loss::BinaryLogLoss => 2,
            Loss::MultinomialLogLoss { n_classes } => n_classes,
        }
    }

    /// For the log losses, the largest spread of the raw scores `raw` (`n_outputs`
    /// per row): a binary score's distance from 0, or the distance between a row's
    /// largest and smallest class score, which is all softmax sees. None for squared
    /// error, whose scores are the predictions themselves.
    pub(crate) fn largest_spread(self, raw: &[f64]) -> Option<f64> {
        match self {
            Loss::SquaredError => None,
            Loss::BinaryLogLoss => Some(raw.iter().fold(0.0, |m, &z| m.max(z.abs()))),
            Loss::MultinomialLogLoss { n_classes } => Some(
                raw.chunks_exact(n_classes)
                    .map(|scores| {
                        let (low, high) = scores
                            .iter()
                            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &z| {
                                (l.min(z), h.max(z))
                            });
                        high - low
                    })
                    .fold(0.0, f64::max),
            ),
        }
    }
}

/// Calls `f(row, weight, gradient, hessian)` for every sample of `data`, in parallel
/// chunks.
fn per_sample(
    data: &Sampled<'_>,
    gradients: &mut [f32],
    hessians: &mut [f32],
    f: impl Fn(usize, f64, &mut f32, &mut f32) + Sync,
) {
    gradients
        .par_chunks_mut(ROWS_PER_TASK)
        .zip(hessians.par_chunks_mut(ROWS_PER_TASK))
        .zip(data.rows.par_chunks(ROWS_PER_TASK))
        .for_each(|((g, h), rows)| {
            for ((g, h), &row) in g.iter_mut().zip(h.iter_mut()).zip(rows) {
                let row = row as usize;
                f(row, data.weights[row], g, h);
            }
        });
}

fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// `softmax(scores)[k]`, shifted by the largest score so that no exponential overflows.
fn softmax_at(scores: &[f64], k: usize) -> f64 {
    let max = scores.iter().fold(f64::NEG_INFINITY, |m, &z| m.max(z));
    let total: f64 = scores.iter().map(|&z| (z - max).exp()).sum();
    (scores[k] - max).exp() / total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_what_the_link_sees() {
        // Softmax: a row's scores apart, whatever their common shift.
        let softmax = Loss::MultinomialLogLoss { n_classes: 3 };
        assert_eq!(
            softmax.largest_spread(&[1.0, 2.0, 4.0, 500.0, 500.5, 499.0]),
            Some(3.0)
        );
        // Binary: the log-odds' distance from even odds.
        assert_eq!(
            Loss::BinaryLogLoss.largest_spread(&[0.5, -7.0, 3.0]),
            Some(7.0)
        );
        assert_eq!(Loss::SquaredError.largest_spread(&[1e9]), None);
    }

    /// Numerical derivatives of `mean_loss` (times the total weight) for one sample.
    fn check_derivatives(loss: Loss, targets: BoostTargets<'_>, raw: &[f64]) {
        let weights = [1.7];
        let rows = [0u32];
        let data = Sampled {
            targets,
            weights: &weights,
            rows: &rows,
        };
        let k_out = loss.n_outputs();
        let mut g = vec![Vec::new(); k_out];
        let mut h = vec![Vec::new(); k_out];
        loss.gradients(&data, raw, &mut g, &mut h);
        let eps = 1e-4;
        for k in 0..k_out {
            let at = |delta: f64| {
                let mut moved = raw.to_vec();
                moved[k] += delta;
                weights[0] * loss.mean_loss(&data, &moved)
            };
            let numeric_g = (at(eps) - at(-eps)) / (2.0 * eps);
            let numeric_h = (at(eps) - 2.0 * at(0.0) + at(-eps)) / (eps * eps);
            assert!(
                (g[k][0] as f64 - numeric_g).abs() < 1e-3,
                "{loss:?} output {k}: gradient {} against {numeric_g}",
                g[k][0]
            );
            assert!(
                (h[k][0] as f64 - numeric_h).abs() < 1e-2,
                "{loss:?} output {k}: hessian {} against {numeric_h}",
                h[k][0]
            );
        }
    }

    #[test]
    fn gradients_and_hessians_are_the_losses_derivatives() {
        check_derivatives(Loss::SquaredError, BoostTargets::Values(&[2.5]), &[0.75]);
        for label in [0u32, 1] {
            let targets = BoostTargets::Classes {
                labels: &[label],
                n_classes: 2,
            };
            check_derivatives(Loss::BinaryLogLoss, targets, &[0.3]);
            check_derivatives(Loss::BinaryLogLoss, targets, &[-2.0]);
        }
        for label in 0u32..3 {
            let targets = BoostTargets::Classes {
                labels: &[label],
                n_classes: 3,
            };
            check_derivatives(targets.loss(), targets, &[0.2, -0.7, 1.1]);
        }
    }

    #[test]
    fn baselines_minimise_the_loss_of_a_constant() {
        let labels = [0u32, 1, 1, 2, 2, 2];
        let weights = [1.0, 2.0, 1.0, 0.5, 0.5, 1.0];
        let rows: Vec<u32> = (0..6).collect();
        for n_classes in [3usize, 2] {
            let labels: Vec<u32> = labels
                .iter()
                .map(|&l| l.min(n_classes as u32 - 1))
                .collect();
            let targets = BoostTargets::Classes {
                labels: &labels,
                n_classes,
            };
            let data = Sampled {
                targets,
                weights: &weights,
                rows: &rows,
            };
            let loss = targets.loss();
            let base = loss.baseline(&data);
            let raw_of = |b: &[f64]| {
                b.iter()
                    .cycle()
                    .take(6 * b.len())
                    .copied()
                    .collect::<Vec<_>>()
            };
            let mut g = vec![Vec::new(); loss.n_outputs()];
            let mut h = vec![Vec::new(); loss.n_outputs()];
            loss.gradients(&data, &raw_of(&base), &mut g, &mut h);
            for gk in &g {
                let total: f32 = gk.iter().sum();
                assert!(total.abs() < 1e-6, "{loss:?}: gradient sum {total}");
            }
        }
        let values = [1.0, 4.0, -2.0, 3.0, 0.0, 1.5];
        let data = Sampled {
            targets: BoostTargets::Values(&values),
            weights: &weights,
            rows: &rows,
        };
        let mean: f64 = values.iter().zip(&weights).map(|(v, w)| v * w).sum::<f64>() / 6.0;
        assert!((Loss::SquaredError.baseline(&data)[0] - mean).abs() < 1e-12);
    }

    #[test]
    fn probabilities_sum_to_one_and_follow_the_scores() {
        let mut out = [0.0; 3];
        Loss::MultinomialLogLoss { n_classes: 3 }.transform(&[1000.0, 999.0, -5.0], &mut out);
        assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(out[0] > out[1] && out[1] > out[2]);
        let mut two = [0.0; 2];
        Loss::BinaryLogLoss.transform(&[0.0], &mut two);
        assert_eq!(two, [0.5, 0.5]);
    }
}
