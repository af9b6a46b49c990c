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
                // Each row's softmax once (its exponentials are most of this pass), its
                // classes' gradients written into their outputs' chunks of the task.
                let tasks = output_chunks(gradients, hessians);
                tasks
                    .into_par_iter()
                    .zip(data.rows.par_chunks(ROWS_PER_TASK))
                    .for_each(|((mut g, mut h), rows)| {
                        let mut probabilities = vec![0.0; n_classes];
                        for (i, &row) in rows.iter().enumerate() {
                            let row = row as usize;
                            let scores = &raw[row * n_classes..(row + 1) * n_classes];
                            softmax(scores, &mut probabilities);
                            let w = data.weights[row];
                            for (k, &p) in probabilities.iter().enumerate() {
                                let is_k = f64::from(labels[row] as usize == k);
                                g[k][i] = (w * (p - is_k)) as f32;
                                h[k][i] = (w * p * (1.0 - p)) as f32;
                            }
                        }
                    });
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
            Loss::MultinomialLogLoss { .. } => softmax(raw, out),
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

/// Writes `softmax(scores)` into `out`, each value as `softmax_at` gives it.
fn softmax(scores: &[f64], out: &mut [f64]) {
    let max = scores.iter().fold(f64::NEG_INFINITY, |m, &z| m.max(z));
    let mut total = 0.0;
    for (o, &z) in out.iter_mut().zip(scores) {
        *o = (z - max).exp();
        total += *o;
    }
    out.iter_mut().for_each(|o| *o /= total);
}

/// Per task of `ROWS_PER_TASK` samples, every output's chunk of the gradients and of
/// the hessians, so that one task writes all outputs of its samples.
type OutputChunks<'a> = Vec<(Vec<&'a mut [f32]>, Vec<&'a mut [f32]>)>;

fn output_chunks<'a>(
    gradients: &'a mut [Vec<f32>],
    hessians: &'a mut [Vec<f32>],
) -> OutputChunks<'a> {
    let n_tasks = gradients
        .first()
        .map_or(0, |g| g.len().div_ceil(ROWS_PER_TASK));
    let mut tasks: OutputChunks<'a> = (0..n_tasks).map(|_| (Vec::new(), Vec::new())).collect();
    for (g, h) in gradients.iter_mut().zip(hessians.iter_mut()) {
        for ((task, g), h) in tasks
            .iter_mut()
            .zip(g.chunks_mut(ROWS_PER_TASK))
            .zip(h.chunks_mut(ROWS_PER_TASK))
        {
            task.0.push(g);
            task.1.push(h);
        }
    }
    tasks
}

#[cfg(test)]
mod tests;
