//! The forest: trees trained in parallel, averaged posteriors, importances, saving.

use std::ops::Range;

use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::atoms::AtomKind;
use crate::data::{Feature, Rows, RunningSums};
use crate::error::{invalid, MorfError, Result};
use crate::params::ForestParams;
use crate::rng::Rng;
use crate::split::{LocalSamples, SplitRule, SplitScratch};
use crate::tree::{grow_tree, GrowSettings, SearchRows, Tree, TreeStats};

/// Bytes that open every saved forest.
const MAGIC: &[u8; 4] = b"MORF";
/// Version of the saved layout; bumped whenever it changes.
pub const FORMAT_VERSION: u16 = 2;
/// Oldest version still read. Version 2 only appended `Node::SplitOnFeature`, so a
/// version 1 forest is a valid version 2 forest.
const OLDEST_READABLE_VERSION: u16 = 1;
/// Rows scored together: enough to amortise walking each tree, few enough to keep the
/// rows in cache.
const SCORE_CHUNK: usize = 128;

/// Mean leaf depth of the first round of trees from which, when X holds whole numbers,
/// the remaining trees search splits on a compact copy of X (its bytes, or its running
/// sums): a copy pays off where trees are deep, so that every row is read at many levels.
const COPY_MIN_LEAF_DEPTH: f64 = 8.0;

/// Mean run length of patch atoms from which splits are searched through running sums:
/// a run costs two reads there instead of one per cell.
const RUNNING_SUMS_MIN_RUN_LENGTH: f64 = 4.0;

/// A trained forest of classification trees.
///
/// ```
/// use ndarray::array;
/// use morf_rs::{AtomKind, Forest, ForestParams, Patches};
///
/// // Four 1-D signals of 6 samples; class 1 has its bump on the right.
/// let x = array![
///     [1.0f32, 1.0, 0.0, 0.0, 0.0, 0.0],
///     [0.0, 1.0, 1.0, 0.0, 0.0, 0.0],
///     [0.0, 0.0, 0.0, 1.0, 1.0, 0.0],
///     [0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
/// ];
/// let y = [0, 0, 1, 1];
/// let params = ForestParams {
///     n_estimators: 10,
///     atoms: AtomKind::Patches(Patches::new(vec![6], vec![1], vec![3])),
///     ..ForestParams::default()
/// };
/// let forest = Forest::fit(&params, x.view(), &y, 2, None)?;
/// let proba = forest.predict_proba(x.view(), 1)?;
/// assert_eq!(proba.dim(), (4, 2));
/// let restored = Forest::from_bytes(&forest.to_bytes())?;
/// assert_eq!(restored.predict(x.view(), 1)?, forest.predict(x.view(), 1)?);
/// # Ok::<(), morf_rs::MorfError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forest {
    n_features: usize,
    n_classes: usize,
    trees: Vec<Tree>,
}

impl Forest {
    /// Trains a forest on `x` (samples in rows) with class indices `y` in
    /// `[0, n_classes)` and optional non-negative `sample_weight`.
    pub fn fit<T: Feature>(
        params: &ForestParams,
        x: ArrayView2<'_, T>,
        y: &[u32],
        n_classes: usize,
        sample_weight: Option<&[f64]>,
    ) -> Result<Forest> {
        params.validate()?;
        let rows = Rows::from_view(x)?;
        let (n_samples, n_features) = (rows.n_samples, rows.n_features);
        if n_samples > u32::MAX as usize || n_features > u32::MAX as usize {
            return Err(invalid(
                "X",
                "at most 2^32 - 1 samples and features are supported",
            ));
        }
        if y.len() != n_samples {
            return Err(MorfError::ShapeMismatch {
                what: "number of labels in y (one per row of X)",
                expected: n_samples,
                got: y.len(),
            });
        }
        if n_classes == 0 {
            return Err(invalid("n_classes", "must be at least 1"));
        }
        if let Some((index, &label)) = y.iter().enumerate().find(|(_, &l)| l as usize >= n_classes)
        {
            return Err(MorfError::LabelOutOfRange {
                label,
                index,
                n_classes,
            });
        }
        let weights = check_sample_weight(sample_weight, n_samples)?;
        rows.check_finite()?;
        params.atoms.validate(n_features)?;
        let axis_aligned = params.atoms == AtomKind::AxisAligned;
        let n_atoms = params.max_features.resolve(n_features, axis_aligned)?;
        let n_estimation = honest_size(params.honest_fraction, n_samples)?;

        let settings = GrowSettings {
            rule: SplitRule {
                criterion: params.criterion,
                min_samples_leaf: params.min_samples_leaf,
                whole_range: rows.whole_range(),
            },
            max_depth: params.max_depth.unwrap_or(usize::MAX),
            min_samples_split: params.min_samples_split,
            min_impurity_decrease: params.min_impurity_decrease,
            n_atoms,
            n_classes,
        };
        if let Some(max_samples) = params.max_samples {
            max_samples.resolve(n_samples - n_estimation)?;
        }
        let job = TrainingJob {
            params,
            y,
            weights: &weights,
            settings,
            n_estimation,
        };
        let whole_range = settings.rule.whole_range;
        let byte_valued =
            matches!(whole_range, Some((low, high)) if low >= 0.0 && high <= u8::MAX as f32);
        let long_runs = matches!(
            &params.atoms,
            AtomKind::Patches(patches) if patches.mean_run_length() >= RUNNING_SUMS_MIN_RUN_LENGTH
        );
        let running_sums = whole_range.is_some() && long_runs;
        let trees = with_threads(params.n_threads, || {
            let all = 0..params.n_estimators;
            if !byte_valued && !running_sums {
                return Ok(job.grow_range(&rows, SearchRows::direct(&rows), all));
            }
            // The first round of trees, one per thread, tells whether trees are deep.
            let first_round = rayon::current_num_threads().min(params.n_estimators);
            let mut trees = job.grow_range(&rows, SearchRows::direct(&rows), 0..first_round);
            let mean_leaf_depth = trees
                .iter()
                .map(|tree| tree.stats().mean_leaf_depth)
                .sum::<f64>()
                / first_round as f64;
            let rest = first_round..params.n_estimators;
            trees.extend(if mean_leaf_depth < COPY_MIN_LEAF_DEPTH {
                job.grow_range(&rows, SearchRows::direct(&rows), rest)
            } else if running_sums {
                match rows.running_sums() {
                    RunningSums::Bytes(sums) => {
                        job.grow_range(&rows, SearchRows::running_sums(&sums), rest)
                    }
                    RunningSums::Floats(sums) => {
                        job.grow_range(&rows, SearchRows::running_sums(&sums), rest)
                    }
                }
            } else {
                // The same projections from a quarter of the memory traffic.
                job.grow_range(&rows, SearchRows::direct(&rows.to_bytes()), rest)
            });
            Ok(trees)
        })?;
        Ok(Forest {
            n_features,
            n_classes,
            trees,
        })
    }

    /// Number of features the forest was trained on.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// The trees.
    pub fn trees(&self) -> &[Tree] {
        &self.trees
    }

    /// Mean of the trees' leaf class distributions, one row per sample. Honest trees
    /// whose leaf casts no vote are left out of the mean; a sample no tree votes for
    /// gets the uniform distribution. Rows are scored in parallel on `n_threads`
    /// threads (0: every core).
    pub fn predict_proba<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
    ) -> Result<Array2<f64>> {
        let rows = self.scoring_rows(x)?;
        let n_classes = self.n_classes;
        let mut proba = vec![0.0f64; rows.n_samples * n_classes];
        let score_chunk = |(chunk, out): (usize, &mut [f64])| {
            let first = chunk * SCORE_CHUNK;
            let n_rows = out.len() / n_classes;
            let mut votes = [0u32; SCORE_CHUNK];
            let mut leaves = [0u32; SCORE_CHUNK];
            for tree in &self.trees {
                tree.leaves_of_rows(&rows, first, &mut leaves[..n_rows]);
                for ((row_out, &leaf), row_votes) in
                    out.chunks_exact_mut(n_classes).zip(&leaves).zip(&mut votes)
                {
                    if let Some(posterior) = tree.posterior(leaf as usize) {
                        *row_votes += 1;
                        for (acc, &p) in row_out.iter_mut().zip(posterior) {
                            *acc += p as f64;
                        }
                    }
                }
            }
            for (row_out, &count) in out.chunks_exact_mut(n_classes).zip(&votes[..n_rows]) {
                if count == 0 {
                    row_out.fill(1.0 / n_classes as f64);
                } else {
                    // The sum of `count` stored distributions, not `count` itself: leaf
                    // values are float32, and rows should sum to 1 in float64.
                    let total: f64 = row_out.iter().sum();
                    row_out.iter_mut().for_each(|p| *p /= total);
                }
            }
        };
        let chunks = proba.chunks_mut(SCORE_CHUNK * n_classes).enumerate();
        if n_threads == 1 || rows.n_samples <= SCORE_CHUNK {
            chunks.for_each(score_chunk);
        } else {
            with_threads(n_threads, || {
                proba
                    .par_chunks_mut(SCORE_CHUNK * n_classes)
                    .enumerate()
                    .for_each(score_chunk);
                Ok(())
            })?;
        }
        Ok(Array2::from_shape_vec((rows.n_samples, n_classes), proba)
            .expect("one probability per sample and class"))
    }

    /// The most probable class per sample (the lowest index among ties).
    pub fn predict<T: Feature>(&self, x: ArrayView2<'_, T>, n_threads: usize) -> Result<Vec<u32>> {
        let proba = self.predict_proba(x, n_threads)?;
        Ok(proba
            .rows()
            .into_iter()
            .map(|row| {
                let mut best = 0;
                for (k, &p) in row.iter().enumerate() {
                    if p > row[best] {
                        best = k;
                    }
                }
                best as u32
            })
            .collect())
    }

    /// The id of the leaf each sample reaches in each tree, shape (samples, trees).
    pub fn apply<T: Feature>(&self, x: ArrayView2<'_, T>, n_threads: usize) -> Result<Array2<u32>> {
        let rows = self.scoring_rows(x)?;
        let n_trees = self.trees.len();
        let mut leaves = vec![0u32; rows.n_samples * n_trees];
        let fill = |(chunk, out): (usize, &mut [u32])| {
            let first = chunk * SCORE_CHUNK;
            let n_rows = out.len() / n_trees;
            let mut tree_leaves = [0u32; SCORE_CHUNK];
            for (t, tree) in self.trees.iter().enumerate() {
                tree.leaves_of_rows(&rows, first, &mut tree_leaves[..n_rows]);
                for (row_out, &leaf) in out.chunks_exact_mut(n_trees).zip(&tree_leaves) {
                    row_out[t] = leaf;
                }
            }
        };
        if n_threads == 1 || rows.n_samples <= SCORE_CHUNK {
            leaves
                .chunks_mut(SCORE_CHUNK * n_trees)
                .enumerate()
                .for_each(fill);
        } else {
            with_threads(n_threads, || {
                leaves
                    .par_chunks_mut(SCORE_CHUNK * n_trees)
                    .enumerate()
                    .for_each(fill);
                Ok(())
            })?;
        }
        Ok(Array2::from_shape_vec((rows.n_samples, n_trees), leaves)
            .expect("one leaf per sample and tree"))
    }

    /// The seeds' feature importance (section 3.3): how often each feature takes part
    /// in a chosen split atom, normalised to sum 1 (all zeros when no tree split).
    pub fn split_count_importances(&self) -> Vec<f64> {
        let mut counts = vec![0.0; self.n_features];
        let mut unused = vec![0.0; self.n_features];
        for tree in &self.trees {
            tree.add_importances(&mut counts, &mut unused);
        }
        normalised(counts)
    }

    /// Impurity-weighted importance: each split's weighted impurity decrease shared
    /// equally among its atom's features, normalised per tree, averaged over trees and
    /// normalised to sum 1 (scikit-learn's `feature_importances_` for axis atoms).
    pub fn impurity_importances(&self) -> Vec<f64> {
        let mut total = vec![0.0; self.n_features];
        let mut counts = vec![0.0; self.n_features];
        let mut decreases = vec![0.0; self.n_features];
        for tree in &self.trees {
            decreases.fill(0.0);
            tree.add_importances(&mut counts, &mut decreases);
            for (acc, share) in total.iter_mut().zip(normalised(decreases.clone())) {
                *acc += share;
            }
        }
        normalised(total)
    }

    /// Depth, leaf and node counts of every tree.
    pub fn tree_stats(&self) -> Vec<TreeStats> {
        self.trees.iter().map(Tree::stats).collect()
    }

    /// The forest as compact versioned bytes, for [`Forest::from_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        postcard::to_extend(self, bytes).expect("serialising to memory cannot fail")
    }

    /// Reads a forest saved by [`Forest::to_bytes`], checking that it is whole and
    /// consistent so that scoring it cannot go out of bounds.
    pub fn from_bytes(bytes: &[u8]) -> Result<Forest> {
        let corrupt = |why: &str| MorfError::Deserialize(why.to_string());
        if bytes.len() < 6 || &bytes[..4] != MAGIC {
            return Err(corrupt("not a morf_rs forest (missing header)"));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(MorfError::Deserialize(format!(
                "saved with format version {version}, this build reads versions \
                 {OLDEST_READABLE_VERSION} to {FORMAT_VERSION}"
            )));
        }
        let forest: Forest = postcard::from_bytes(&bytes[6..])
            .map_err(|e| MorfError::Deserialize(format!("damaged data: {e}")))?;
        if forest.trees.is_empty() || forest.n_classes == 0 || forest.n_features == 0 {
            return Err(corrupt("damaged data: empty forest"));
        }
        for tree in &forest.trees {
            tree.check(forest.n_features, forest.n_classes)
                .map_err(corrupt)?;
        }
        Ok(forest)
    }

    fn scoring_rows<'a, T: Feature>(&self, x: ArrayView2<'a, T>) -> Result<Rows<'a, T>> {
        let rows = Rows::from_view(x)?;
        if rows.n_features != self.n_features {
            return Err(MorfError::ShapeMismatch {
                what: "number of features in X (as at fit time)",
                expected: self.n_features,
                got: rows.n_features,
            });
        }
        rows.check_finite()?;
        Ok(rows)
    }
}

/// The data and settings shared by every tree of one `fit`.
struct TrainingJob<'a> {
    params: &'a ForestParams,
    y: &'a [u32],
    weights: &'a [f64],
    settings: GrowSettings,
    n_estimation: usize,
}

impl TrainingJob<'_> {
    /// Grows trees `range` on X (`rows`), searching splits on `search`, in parallel on
    /// the current thread pool.
    fn grow_range<T: Feature, S: Feature>(
        &self,
        rows: &Rows<'_, T>,
        search: SearchRows<'_, S>,
        range: Range<usize>,
    ) -> Vec<Tree> {
        // Split-search buffers live as long as a worker's run of trees: allocating them
        // per tree maps and faults in fresh pages every time, under a process-wide lock.
        range
            .into_par_iter()
            .map_init(SplitScratch::default, |scratch, t| {
                self.grow(rows, search, t, scratch)
            })
            .collect()
    }

    /// Grows tree `t`. Its rows and its atoms come from two separate streams derived
    /// from (seed, t), so neither depends on thread scheduling or on the other.
    fn grow<T: Feature, S: Feature>(
        &self,
        rows: &Rows<'_, T>,
        search: SearchRows<'_, S>,
        t: usize,
        scratch: &mut SplitScratch,
    ) -> Tree {
        let seed = self.params.random_state;
        let mut row_rng = Rng::new(seed, 2 * t as u64);
        let mut atom_rng = Rng::new(seed, 2 * t as u64 + 1);
        let n_samples = rows.n_samples;

        let mut order: Vec<u32> = (0..n_samples as u32).collect();
        row_rng.choose_into_prefix(&mut order, self.n_estimation);
        let (estimation_rows, pool) = order.split_at_mut(self.n_estimation);

        let mut draws = vec![0u32; n_samples];
        let sample_size = match self.params.max_samples {
            Some(max_samples) => max_samples.resolve(pool.len()).expect("checked in fit"),
            None => pool.len(),
        };
        if self.params.bootstrap {
            for _ in 0..sample_size {
                draws[pool[row_rng.below(pool.len())] as usize] += 1;
            }
        } else {
            let sample_size = sample_size.min(pool.len());
            row_rng.choose_into_prefix(pool, sample_size);
            pool[..sample_size]
                .iter()
                .for_each(|&row| draws[row as usize] = 1);
        }
        let structure = self.local_samples(
            (0..n_samples as u32).filter(|&r| draws[r as usize] > 0),
            &draws,
        );

        let mut sampler = self.params.atoms.sampler(rows.n_features);
        let mut tree = grow_tree(
            search,
            &structure,
            &self.settings,
            sampler.as_mut(),
            &mut atom_rng,
            scratch,
        );
        if self.n_estimation > 0 {
            estimation_rows.sort_unstable();
            estimation_rows
                .iter()
                .for_each(|&row| draws[row as usize] = 1);
            let estimation = self.local_samples(estimation_rows.iter().copied(), &draws);
            let mut empirical = vec![0.0; self.settings.n_classes];
            for part in [&structure, &estimation] {
                for (&class, &weight) in part.class_of.iter().zip(&part.weight_of) {
                    empirical[class as usize] += weight;
                }
            }
            tree.fill_leaves_honestly(rows, &estimation, self.params.honest_prior, &empirical);
        }
        tree
    }

    /// The samples of `rows` with positive weight, each weighted by its draw count.
    fn local_samples(&self, rows: impl Iterator<Item = u32>, draws: &[u32]) -> LocalSamples {
        let mut local = LocalSamples::default();
        for row in rows {
            let weight = self.weights[row as usize] * draws[row as usize] as f64;
            if weight > 0.0 {
                local.row_of.push(row);
                local.class_of.push(self.y[row as usize]);
                local.weight_of.push(weight);
            }
        }
        local
    }
}

/// Unit weights when none are given; otherwise checks they are finite, non-negative
/// and not all zero.
fn check_sample_weight(sample_weight: Option<&[f64]>, n_samples: usize) -> Result<Vec<f64>> {
    let Some(weights) = sample_weight else {
        return Ok(vec![1.0; n_samples]);
    };
    if weights.len() != n_samples {
        return Err(MorfError::ShapeMismatch {
            what: "length of sample_weight (one per row of X)",
            expected: n_samples,
            got: weights.len(),
        });
    }
    if let Some((index, &value)) = weights
        .iter()
        .enumerate()
        .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
    {
        return Err(MorfError::InvalidSampleWeight { index, value });
    }
    if weights.iter().sum::<f64>() <= 0.0 {
        return Err(MorfError::ZeroTotalWeight);
    }
    Ok(weights.to_vec())
}

/// Size of each tree's estimation sample; both parts must keep at least one sample.
fn honest_size(honest_fraction: f64, n_samples: usize) -> Result<usize> {
    if honest_fraction == 0.0 {
        return Ok(0);
    }
    let n_estimation = (honest_fraction * n_samples as f64).round() as usize;
    if n_estimation == 0 || n_estimation >= n_samples {
        return Err(invalid(
            "honest_fraction",
            format!(
                "{honest_fraction} of {n_samples} samples leaves an empty structure or \
                 estimation set; use more samples or a fraction nearer 0.5"
            ),
        ));
    }
    Ok(n_estimation)
}

/// `values` scaled to sum 1, or left as zeros.
fn normalised(mut values: Vec<f64>) -> Vec<f64> {
    let total: f64 = values.iter().sum();
    if total > 0.0 {
        values.iter_mut().for_each(|v| *v /= total);
    }
    values
}

/// Runs `job` in a rayon pool of `n_threads` threads (0: one per core).
fn with_threads<R: Send>(n_threads: usize, job: impl FnOnce() -> Result<R> + Send) -> Result<R> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n_threads)
        .build()
        .map_err(|e| invalid("n_threads", format!("cannot start worker threads: {e}")))?;
    pool.install(job)
}
