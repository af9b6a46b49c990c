//! One fit's rounds: the gradients of the loss at the current scores, a fresh draw
//! of atoms binned once for the round, one tree per output fitted to them (the
//! outputs' trees in parallel), the trees' values added to every row's scores, until
//! the rounds run out or the held-out loss stops improving.

use std::sync::Mutex;

use rayon::prelude::*;

use super::binning::BinnedAtoms;
use super::grow::{grow_tree, BoostTreeSettings, GrowScratch};
use super::loss::{BoostTargets, Loss, Sampled, RUNAWAY_SPREAD};
use super::model::{add_largest_leaf_values, tree_value, Booster};
use super::params::BoostParams;
use super::roots::RootHistograms;
use crate::atoms::AtomSet;
use crate::data::{Feature, Rows};
use crate::error::{invalid, try_filled, MorfError, Result};
use crate::rng::Rng;
use crate::runtime::control::{check_cancel, TreeCounter};
use crate::runtime::FitControl;
use crate::tree::Tree;

/// Outputs (classes) whose trees grow together from root histograms built together:
/// enough trees for the threads to share, and an even number, as roots are built two
/// outputs at a time.
const OUTPUTS_PER_BATCH: usize = 16;

/// Random streams of round `r` are `ROUND_STREAMS * r + offset`, one offset per use.
const ROUND_STREAMS: u64 = 4;
const ROWS_STREAM: u64 = 0;
const ATOMS_STREAM: u64 = 1;
const EDGES_STREAM: u64 = 2;

/// Rows walked together when adding a round's trees to rows outside its sample.
const WALK_CHUNK: usize = 512;

/// The baseline's scores for each of `n_samples` rows, row after row; sized by
/// samples times outputs (classes), so OutOfMemory when too many.
fn baseline_scores(baseline: &[f64], n_samples: usize) -> Result<Vec<f64>> {
    let mut raw = try_filled(n_samples, baseline.len(), 0.0, "the raw scores")?;
    for (r, b) in raw.iter_mut().zip(baseline.iter().cycle()) {
        *r = *b;
    }
    Ok(raw)
}

/// An empty vector with room for `len` values, or OutOfMemory.
fn reserved<T>(len: usize, what: &'static str) -> Result<Vec<T>> {
    let mut values = Vec::new();
    values
        .try_reserve_exact(len)
        .map_err(|_| MorfError::OutOfMemory {
            what,
            bytes: len as u128 * std::mem::size_of::<T>() as u128,
        })?;
    Ok(values)
}

/// What every round of one fit shares.
pub(super) struct Training<'a> {
    pub(super) params: &'a BoostParams,
    pub(super) loss: Loss,
    pub(super) targets: BoostTargets<'a>,
    pub(super) weights: &'a [f64],
    pub(super) n_atoms: usize,
    pub(super) tree_settings: BoostTreeSettings,
    pub(super) n_features: usize,
    /// Whether X holds missing values.
    pub(super) missing: bool,
}

impl Training<'_> {
    /// Trains on X (`rows`, or an exact copy of it).
    pub(super) fn run<S: Feature>(
        &self,
        rows: &Rows<'_, S>,
        train_rows: &[u32],
        validation_rows: &[u32],
        previous: Option<&Booster>,
        control: &FitControl<'_>,
    ) -> Result<Booster> {
        let k_out = self.loss.n_outputs();
        let (train, validation) = (self.sampled(train_rows), self.sampled(validation_rows));
        let (mut model, mut raw) = match previous {
            None => self.first_model(rows, &train, &validation)?,
            Some(previous) => self.continued_model(previous, rows, !validation_rows.is_empty())?,
        };
        let first_round = model.n_rounds();
        if self.should_stop(&model.validation_loss) {
            return Ok(model);
        }
        // Sized by samples times outputs (classes): reserved up front so that too many
        // fails cleanly with OutOfMemory rather than aborting mid-fit.
        let per_output = |what| -> Result<Vec<Vec<f32>>> {
            (0..k_out)
                .map(|_| reserved(train_rows.len(), what))
                .collect()
        };
        let (mut gradients, mut hessians) = (per_output("gradients")?, per_output("hessians")?);
        let mut values = (0..k_out)
            .map(|_| reserved(train_rows.len(), "leaf values per sample"))
            .collect::<Result<Vec<Vec<f64>>>>()?;
        let n_left_out = train_rows.len() - self.round_size(train_rows.len());
        let mut added = reserved(
            n_left_out.max(validation_rows.len()).saturating_mul(k_out),
            "raw scores added to rows outside a round",
        )?;
        let mut bounds = model.raw_score_bounds();

        let seed = self.params.random_state;
        let cancel = control.cancel_flag();
        let counter = TreeCounter::new(control, (self.params.n_estimators - first_round) * k_out);
        let mut sampler = self.params.atoms.sampler(self.n_features);
        let mut binned = BinnedAtoms::default();
        let mut roots = RootHistograms::default();
        let scratches = Mutex::new(Vec::<GrowScratch>::new());
        let (mut round_rows, mut left_out) = (Vec::new(), Vec::new());
        for round in first_round..self.params.n_estimators {
            let stream = |offset| Rng::new(seed, ROUND_STREAMS * round as u64 + offset);
            self.draw_rows(
                train_rows,
                &mut stream(ROWS_STREAM),
                &mut round_rows,
                &mut left_out,
            );
            self.loss.gradients(
                &self.sampled(&round_rows),
                &raw,
                &mut gradients,
                &mut hessians,
            );
            let mut atoms = AtomSet::default();
            sampler.sample_node(&mut stream(ATOMS_STREAM), self.n_atoms, &mut atoms);
            let max_bins = self.params.max_bins;
            binned.bin(
                rows,
                &round_rows,
                atoms,
                max_bins,
                self.missing,
                &mut stream(EDGES_STREAM),
            );

            // Outputs a batch at a time, so that the root histograms held at once do
            // not grow with the number of classes.
            let mut trees: Vec<Tree> = Vec::with_capacity(k_out);
            for batch in (0..k_out).step_by(OUTPUTS_PER_BATCH) {
                let batch = batch..(batch + OUTPUTS_PER_BATCH).min(k_out);
                let (g, h) = (&gradients[batch.clone()], &hessians[batch.clone()]);
                roots.build(&binned, g, h);
                let grown: Vec<Tree> = values[batch]
                    .par_iter_mut()
                    .zip(roots.per_output_mut().par_iter_mut())
                    .zip(g.par_iter().zip(h.par_iter()))
                    .map(|((values, root), (g, h))| {
                        let mut scratch = scratches
                            .lock()
                            .expect("no panics")
                            .pop()
                            .unwrap_or_default();
                        let tree = grow_tree(
                            &binned,
                            g,
                            h,
                            root,
                            &self.tree_settings,
                            &mut scratch,
                            values,
                            cancel,
                        );
                        scratches.lock().expect("no panics").push(scratch);
                        counter.tree_done();
                        tree
                    })
                    .collect();
                trees.extend(grown);
            }
            check_cancel(cancel)?;
            add_largest_leaf_values(&mut bounds, &trees);
            if !bounds.iter().all(|b| b.is_finite()) {
                return Err(invalid(
                    "learning_rate",
                    format!(
                        "round {} gave leaf values whose sum overflows or is NaN: the raw \
                         scores run away with learning_rate={}; use a smaller learning_rate \
                         (typically 0.01 to 1)",
                        round + 1,
                        self.params.learning_rate
                    ),
                ));
            }
            for (p, &row) in round_rows.iter().enumerate() {
                for (k, values) in values.iter().enumerate() {
                    raw[row as usize * k_out + k] += values[p];
                }
            }
            self.add_trees(rows, &trees, &left_out, &mut raw, &mut added);
            self.add_trees(rows, &trees, validation_rows, &mut raw, &mut added);
            if let Some(spread) = self.loss.largest_spread(&raw) {
                if spread > RUNAWAY_SPREAD {
                    return Err(self.runaway(round, spread));
                }
            }
            model.trees.extend(trees);

            model.train_loss.push(self.loss.mean_loss(&train, &raw));
            if !validation_rows.is_empty() {
                let loss = self.loss.mean_loss(&validation, &raw);
                model.validation_loss.push(loss);
            }
            if self.should_stop(&model.validation_loss) {
                break;
            }
        }
        Ok(model)
    }

    /// A model of no rounds, and every row's raw scores: the baseline.
    fn first_model<S: Feature>(
        &self,
        rows: &Rows<'_, S>,
        train: &Sampled<'_>,
        validation: &Sampled<'_>,
    ) -> Result<(Booster, Vec<f64>)> {
        let baseline = self.loss.baseline(train);
        let raw = baseline_scores(&baseline, rows.n_samples)?;
        let mut model = Booster {
            n_features: self.n_features,
            loss: self.loss,
            baseline,
            trees: Vec::new(),
            train_loss: vec![self.loss.mean_loss(train, &raw)],
            validation_loss: Vec::new(),
            scoring: Default::default(),
        };
        if !validation.rows.is_empty() {
            model
                .validation_loss
                .push(self.loss.mean_loss(validation, &raw));
        }
        Ok((model, raw))
    }

    /// `previous`, to be trained further, and every row's raw scores under it, summed
    /// tree after tree from the baseline as the rounds summed them.
    fn continued_model<S: Feature>(
        &self,
        previous: &Booster,
        rows: &Rows<'_, S>,
        holds_out: bool,
    ) -> Result<(Booster, Vec<f64>)> {
        if previous.n_features != self.n_features || previous.loss != self.loss {
            return Err(invalid(
                "warm_start",
                format!(
                    "rounds can only be added on the data of the first fit: the model has \
                     {} features and loss {:?}, X has {} features and y gives loss {:?}",
                    previous.n_features, previous.loss, self.n_features, self.loss
                ),
            ));
        }
        if previous.validation_loss.is_empty() == holds_out {
            return Err(invalid(
                "early_stopping",
                "must be as in the fit that trained the model for rounds to be added",
            ));
        }
        let k_out = self.loss.n_outputs();
        let mut raw = baseline_scores(&previous.baseline, rows.n_samples)?;
        let layout = previous.scoring_layout();
        let cancel = &crate::runtime::control::NEVER_CANCELLED;
        raw.par_chunks_mut(WALK_CHUNK * k_out)
            .enumerate()
            .for_each(|(chunk, raw)| {
                let start = chunk * WALK_CHUNK;
                let chunk_rows = rows.slice(start..start + raw.len() / k_out);
                layout.add_leaf_values(0..previous.trees.len(), k_out, &chunk_rows, raw, cancel);
            });
        // Its scoring layout covers its trees only: the rounds to come would be missing.
        let model = Booster {
            scoring: Default::default(),
            ..previous.clone()
        };
        Ok((model, raw))
    }

    /// The samples at `rows` with their targets and weights.
    fn sampled<'b>(&'b self, rows: &'b [u32]) -> Sampled<'b> {
        Sampled {
            targets: self.targets,
            weights: self.weights,
            rows,
        }
    }

    /// The error of a fit whose round `round` (from 0) left log-loss scores `spread`
    /// apart (above [`RUNAWAY_SPREAD`]).
    fn runaway(&self, round: usize, spread: f64) -> MorfError {
        let params = self.params;
        let subsample = if params.subsample < 1.0 {
            format!(", or subsample=1.0 (not {})", params.subsample)
        } else {
            String::new()
        };
        invalid(
            "learning_rate",
            format!(
                "round {} ran away: its leaf values left raw scores {spread:.3e} apart, \
                 where probabilities are 0 or 1 beyond about 37 (Newton steps on leaves \
                 of samples the model is already sure of, whose hessians are near 0, \
                 overshoot); use a learning_rate below {}, an l2_regularization of \
                 about 1 (not {}){subsample}",
                round + 1,
                params.learning_rate,
                params.l2_regularization,
            ),
        )
    }

    /// The round's sample (`subsample` of the training rows, ascending) and the
    /// training rows left out of it.
    fn draw_rows(
        &self,
        train_rows: &[u32],
        rng: &mut Rng,
        drawn: &mut Vec<u32>,
        left_out: &mut Vec<u32>,
    ) {
        drawn.clear();
        drawn.extend_from_slice(train_rows);
        left_out.clear();
        if self.params.subsample < 1.0 {
            let size = self.round_size(train_rows.len());
            rng.choose_into_prefix(drawn, size);
            left_out.extend_from_slice(&drawn[size..]);
            drawn.truncate(size);
            drawn.sort_unstable();
            left_out.sort_unstable();
        }
    }

    /// Rows in a round's sample out of `n_train` training rows.
    fn round_size(&self, n_train: usize) -> usize {
        if self.params.subsample < 1.0 {
            ((self.params.subsample * n_train as f64).round() as usize).max(1)
        } else {
            n_train
        }
    }

    /// Adds the leaf values of one round's trees to the raw scores of `rows`, through
    /// `added`, a buffer reserved for the most rows outside a round.
    fn add_trees<S: Feature>(
        &self,
        x: &Rows<'_, S>,
        trees: &[Tree],
        rows: &[u32],
        raw: &mut [f64],
        added: &mut Vec<f64>,
    ) {
        let k_out = trees.len();
        added.clear();
        added.resize(rows.len() * k_out, 0.0);
        added
            .par_chunks_mut(WALK_CHUNK * k_out)
            .zip(rows.par_chunks(WALK_CHUNK))
            .for_each(|(added, rows)| {
                for (out, &row) in added.chunks_exact_mut(k_out).zip(rows) {
                    let x = x.row(row as usize);
                    for (o, tree) in out.iter_mut().zip(trees) {
                        *o = tree_value(tree, tree.leaf_of(x));
                    }
                }
            });
        for (&row, added) in rows.iter().zip(added.chunks_exact(k_out)) {
            for (k, &a) in added.iter().enumerate() {
                raw[row as usize * k_out + k] += a;
            }
        }
    }

    /// scikit-learn's rule: stop when none of the last `n_iter_no_change` losses is
    /// below the one before them by more than `tol`.
    fn should_stop(&self, losses: &[f64]) -> bool {
        let Some(stopping) = &self.params.early_stopping else {
            return false;
        };
        let recent = stopping.n_iter_no_change;
        if losses.len() <= recent {
            return false;
        }
        let reference = losses[losses.len() - recent - 1];
        !losses[losses.len() - recent..]
            .iter()
            .any(|&loss| loss < reference - stopping.tol)
    }
}
