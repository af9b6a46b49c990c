//! Training an unsupervised forest: every tree grown in parallel from its own random
//! streams, as a supervised forest's are.

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use ndarray::{aview1, Array2, ArrayView2};
use rayon::prelude::*;

use super::grow::{grow_unsupervised_tree, GrownUnsupervisedTree, TreeRows, UnsupervisedGrowth};
use super::params::{ClusteringCriterion, UnsupervisedParams};
use super::UnsupervisedForest;
use crate::atoms::AtomKind;
use crate::data::{sums_stay_exact, Feature, Rows};
use crate::error::{invalid, MorfError, Result};
use crate::forest::{sampling_sizes, Forest, ForestParams, TreeSample, MAX_FEATURES};
use crate::rng::Rng;
use crate::runtime::control::{FitControl, TreeCounter};
use crate::runtime::options::ScoreOptions;
use crate::runtime::workers::with_threads;
use crate::scoring::Inspect;
use crate::split::{AtomCosts, FastBic, TwoMeans, UnsupervisedScratch};
use crate::tree::{Task, TreeLimits};

impl UnsupervisedForest {
    /// Trains an unsupervised forest on `x` (samples in rows), growing all
    /// `params.n_estimators` trees: [`UnsupervisedForest::fit_with`] without a control.
    pub fn fit<T: Feature>(
        params: &UnsupervisedParams,
        x: ArrayView2<'_, T>,
    ) -> Result<UnsupervisedForest> {
        UnsupervisedForest::fit_with(params, x, &FitControl::new())
    }

    /// Trains an unsupervised forest on `x` (samples in rows, no missing values),
    /// reporting progress to and stopping on request of `control`.
    ///
    /// Tree `t` draws its rows and its atoms from streams derived from
    /// (`params.random_state`, `t`), the very streams of tree `t` of a supervised
    /// forest with the same settings, so the forest is the same bit for bit whatever
    /// the number of threads.
    pub fn fit_with<T: Feature>(
        params: &UnsupervisedParams,
        x: ArrayView2<'_, T>,
        control: &FitControl<'_>,
    ) -> Result<UnsupervisedForest> {
        Ok(UnsupervisedForest::grow(params, x, 0..params.n_estimators, control)?.0)
    }

    /// Trains as [`UnsupervisedForest::fit_with`] does, and gives the id of the leaf
    /// each row of `x` reaches in each tree, shape (samples, trees): what
    /// [`Inspect::apply`] of `x` gives, the input of clustering. Where every tree
    /// holds every row (no bootstrap, no subsample) and their projections are exact
    /// (whole X on atoms of whole weights), the leaves are those the rows were put in
    /// while growing, and no row is walked down the trees again.
    pub fn fit_with_leaves<T: Feature>(
        params: &UnsupervisedParams,
        x: ArrayView2<'_, T>,
        control: &FitControl<'_>,
    ) -> Result<(UnsupervisedForest, Array2<u32>)> {
        let all = 0..params.n_estimators;
        UnsupervisedForest::fit_trees_with_leaves(params, x, all, control)
    }

    /// [`UnsupervisedForest::fit_with_leaves`] growing only trees `trees` (within
    /// `0..params.n_estimators`) of the forest `params` describe: each from the
    /// streams of its own index, so that the shares of one forest grown apart and
    /// merged ([`Forest::merge`]) are the forest grown at once (scikit-learn's
    /// `warm_start` adds trees this way).
    pub fn fit_trees_with_leaves<T: Feature>(
        params: &UnsupervisedParams,
        x: ArrayView2<'_, T>,
        trees: Range<usize>,
        control: &FitControl<'_>,
    ) -> Result<(UnsupervisedForest, Array2<u32>)> {
        if trees.is_empty() || trees.end > params.n_estimators {
            return Err(invalid(
                "trees",
                format!(
                    "{trees:?} is no range of trees within the forest's {}",
                    params.n_estimators
                ),
            ));
        }
        let (forest, training_leaves) = UnsupervisedForest::grow(params, x, trees, control)?;
        let n_samples = x.nrows();
        let leaves = match training_leaves.into_iter().collect::<Option<Vec<_>>>() {
            Some(trees) => {
                let mut leaves = Array2::zeros((n_samples, trees.len()));
                for (mut column, tree) in leaves.columns_mut().into_iter().zip(trees) {
                    column.assign(&aview1(&tree));
                }
                leaves
            }
            None => {
                let options = ScoreOptions::new()
                    .with_threads(params.n_threads)
                    .with_cancel(control.cancel_flag());
                forest.apply(x, &options)?
            }
        };
        Ok((forest, leaves))
    }

    /// The forest, and per tree the leaf of each row of `x` where the growth knows
    /// it for every row ([`GrownUnsupervisedTree::training_leaves`]).
    fn grow<T: Feature>(
        params: &UnsupervisedParams,
        x: ArrayView2<'_, T>,
        trees: Range<usize>,
        control: &FitControl<'_>,
    ) -> Result<(UnsupervisedForest, Vec<Option<Vec<u32>>>)> {
        let forest_params = params.as_forest_params();
        forest_params.validate()?;
        let rows = Rows::from_view(x)?;
        let (n_samples, n_features) = (rows.n_samples, rows.n_features);
        if n_samples > u32::MAX as usize || n_features > MAX_FEATURES {
            return Err(invalid(
                "X",
                "at most 2^32 - 1 samples and features are supported",
            ));
        }
        if rows.check_values()? {
            return Err(invalid(
                "X",
                "unsupervised forests do not take missing values (NaN); impute them first",
            ));
        }
        params.atoms.validate(n_features)?;
        let n_atoms = params.max_features.resolve(
            n_features,
            n_samples,
            params.atoms == AtomKind::AxisAligned,
        )?;
        sampling_sizes(&forest_params, n_samples)?;
        // Whole-valued X has whole projections on the dictionary's whole weights, exact
        // while they stay within the bound for the weights' size.
        let whole_range = rows.whole_values();
        let max_weight = params.atoms.weight_bounds().max_abs;
        let whole_values =
            whole_range.is_some_and(|range| sums_stay_exact(range, n_features, max_weight));
        let job = UnsupervisedJob {
            params: &forest_params,
            growth: UnsupervisedGrowth {
                limits: TreeLimits::new(params.max_depth, None),
                min_samples_split: params.min_samples_split,
                min_samples_leaf: params.min_samples_leaf,
                n_atoms,
                whole_values,
            },
            cancel: control.cancel_flag(),
            counter: TreeCounter::new(control, trees.len()),
        };
        // X of whole values in 0..=255 (images) is searched through a byte copy: the
        // same projections from a quarter of the memory traffic of float32 rows.
        let byte_valued = matches!(
            whole_range,
            Some((low, high)) if low >= 0.0 && high <= u8::MAX as f32
        );
        // Whole X is taken as rounded to whole numbers, and so are its projections:
        // whole on whole weights, known no finer on others.
        let fast_bic = if whole_range.is_some() {
            FastBic::whole_valued()
        } else {
            FastBic::new()
        };
        let trees = with_threads(params.n_threads, || match (params.criterion, byte_valued) {
            (ClusteringCriterion::TwoMeans, false) => job.grow_trees(&TwoMeans, &rows, trees),
            (ClusteringCriterion::FastBic, false) => job.grow_trees(&fast_bic, &rows, trees),
            (ClusteringCriterion::TwoMeans, true) => {
                job.grow_trees(&TwoMeans, &rows.to_bytes(), trees)
            }
            (ClusteringCriterion::FastBic, true) => {
                job.grow_trees(&fast_bic, &rows.to_bytes(), trees)
            }
        })?;
        let (trees, training_leaves) = trees
            .into_iter()
            .map(|grown| (grown.tree, grown.training_leaves))
            .unzip();
        let task = Task::Regression { n_outputs: 1 };
        let forest = UnsupervisedForest {
            forest: Forest::from_trees(n_features, task, trees),
        };
        Ok((forest, training_leaves))
    }
}

/// The data and settings shared by every tree of one fit.
struct UnsupervisedJob<'a> {
    params: &'a ForestParams,
    growth: UnsupervisedGrowth,
    cancel: &'a AtomicBool,
    counter: TreeCounter<'a>,
}

impl UnsupervisedJob<'_> {
    /// Grows trees `trees` in parallel on the current thread pool; `Err(Cancelled)`
    /// once the cancel flag is set.
    fn grow_trees<C: AtomCosts, T: Feature>(
        &self,
        criterion: &C,
        rows: &Rows<'_, T>,
        trees: Range<usize>,
    ) -> Result<Vec<GrownUnsupervisedTree>> {
        trees
            .into_par_iter()
            .map_init(UnsupervisedScratch::default, |scratch, t| {
                let tree = self.grow(criterion, rows, t, scratch);
                if tree.is_some() {
                    self.counter.tree_done();
                }
                tree.ok_or(MorfError::Cancelled)
            })
            .collect()
    }

    /// Grows tree `t` from its own row and atom streams.
    fn grow<C: AtomCosts, T: Feature>(
        &self,
        criterion: &C,
        rows: &Rows<'_, T>,
        t: usize,
        scratch: &mut UnsupervisedScratch,
    ) -> Option<GrownUnsupervisedTree> {
        let draws = TreeSample::draw(self.params, rows.n_samples, 0, t).draws;
        let mut sample = TreeRows {
            row_of: Vec::new(),
            weight_of: Vec::new(),
        };
        for (row, &count) in draws.iter().enumerate() {
            if count > 0 {
                sample.row_of.push(row as u32);
                sample.weight_of.push(count as f64);
            }
        }
        let mut atom_rng = Rng::new(self.params.random_state, 2 * t as u64 + 1);
        let mut sampler = self.params.atoms.sampler(rows.n_features);
        grow_unsupervised_tree(
            criterion,
            rows,
            &sample,
            &self.growth,
            sampler.as_mut(),
            &mut atom_rng,
            scratch,
            self.cancel,
        )
    }
}
