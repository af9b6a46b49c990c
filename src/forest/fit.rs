//! Training: every tree grown in parallel from its own random streams.

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use ndarray::ArrayView2;
use rayon::prelude::*;

use super::bag::{sampling_sizes, TreeSample};
use super::params::ForestParams;
use super::{Forest, Targets, MAX_FEATURES};
use crate::atoms::AtomKind;
use crate::data::check_sample_weight;
use crate::data::{sums_stay_exact, Feature, Rows, RunningSums};
use crate::error::{invalid, MorfError, Result};
use crate::rng::Rng;
use crate::runtime::control::{FitControl, TreeCounter};
use crate::runtime::workers::with_threads;
use crate::split::{
    Criterion, Entropy, Gini, LocalSamples, NodeTargets, Poisson, SplitCriterion, SplitRule,
    SplitScratch, SquaredError,
};
use crate::tree::Task;
use crate::tree::{grow_tree, GrowSettings, SearchRows, Tree, TreeLimits};

/// Levels still to grow (the first round's mean leaf depth times the trees left) from
/// which, when X holds whole numbers, the remaining trees search splits on a compact
/// copy of X (its bytes, or its running sums): the copy reads X once, and pays off
/// where every row will be read at many levels, deep trees or many shallow ones.
const COPY_MIN_LEVELS: f64 = 8.0;

/// Cells a node's atoms read per feature of X (atoms times their mean cells over the
/// features) from which splits on byte-valued X are searched through running sums
/// rather than through its bytes: atoms overlapping this much are projected from a
/// column block of the bytes, where running sums read a run in two cells; sparser
/// atoms read a run of bytes in one load (as the projector decides,
/// `TERMS_PER_FEATURE_FOR_COLUMNS`).
const RUNNING_SUMS_MIN_OVERLAP_ON_BYTES: f64 = 2.0;

/// Mean run length of atoms ([`AtomKind::mean_run_length`]) from which splits are searched through running sums:
/// a run costs two reads there instead of one per cell.
const RUNNING_SUMS_MIN_RUN_LENGTH: f64 = 4.0;

impl Forest {
    /// Trains a forest on `x` (samples in rows) with class indices `y` in
    /// `[0, n_classes)` and optional non-negative `sample_weight`: the classification
    /// shorthand of [`Forest::fit_with`], growing all `params.n_estimators` trees.
    pub fn fit<T: Feature>(
        params: &ForestParams,
        x: ArrayView2<'_, T>,
        y: &[u32],
        n_classes: usize,
        sample_weight: Option<&[f64]>,
    ) -> Result<Forest> {
        let targets = Targets::Classes {
            labels: y,
            n_classes,
        };
        let all = 0..params.n_estimators;
        Forest::fit_with(params, x, targets, sample_weight, all, &FitControl::new())
    }

    /// Trains trees `trees` (a non-empty range of tree indices) of the forest that
    /// `params` describes, on `x` (samples in rows), `targets` (classes for the Gini and
    /// entropy criteria, values for squared error) and optional non-negative
    /// `sample_weight`, reporting progress to and stopping on request of `control`.
    ///
    /// Tree `i` draws only from random streams derived from (`params.random_state`,
    /// `i`), so the trees of `a..b` are the very trees that `0..n` (with `a <= b <= n`)
    /// would hold at those positions, whatever the number of threads: growing a forest
    /// range by range (more trees later, or parts on several machines) and putting the
    /// trees together in order gives the forest grown at once, bit for bit.
    ///
    /// A cancelled fit returns [`MorfError::Cancelled`] within a small fraction of a
    /// second of the flag being set; one that is not cancelled returns exactly the
    /// trees it would without `control`.
    pub fn fit_with<T: Feature>(
        params: &ForestParams,
        x: ArrayView2<'_, T>,
        targets: Targets<'_>,
        sample_weight: Option<&[f64]>,
        trees: Range<usize>,
        control: &FitControl<'_>,
    ) -> Result<Forest> {
        params.validate()?;
        if trees.is_empty() {
            return Err(invalid(
                "trees",
                format!("the range of trees to grow is empty: {trees:?}"),
            ));
        }
        let rows = Rows::from_view(x)?;
        let (n_samples, n_features) = (rows.n_samples, rows.n_features);
        if n_samples > u32::MAX as usize || n_features > MAX_FEATURES {
            return Err(invalid(
                "X",
                "at most 2^32 - 1 samples and features are supported",
            ));
        }
        let task = targets.check(
            n_samples,
            params.criterion,
            params.honest_prior,
            params.honest_fraction > 0.0,
        )?;
        if params.balanced_classes_per_tree && matches!(task, Task::Regression { .. }) {
            return Err(invalid(
                "balanced_classes_per_tree",
                "balances the classes of each tree's sample; regression targets have none",
            ));
        }
        let weights = check_sample_weight(sample_weight, n_samples)?;
        let missing_values = rows.check_values()?;
        params.atoms.validate(n_features)?;
        let axis_aligned = params.atoms == AtomKind::AxisAligned;
        let n_atoms = params
            .max_features
            .resolve(n_features, n_samples, axis_aligned)?;
        let n_estimation = sampling_sizes(params, n_samples)?;
        // Whole-valued X has whole projections on the dictionary's whole weights; they
        // are exact (so counted by value, or read through running sums, with the same
        // result) while they stay within the bound for the weights' size.
        let bounds = params.atoms.weight_bounds();
        let whole_values = rows.whole_values();
        let exact_for = |max_weight| {
            whole_values.filter(|&range| sums_stay_exact(range, n_features, max_weight))
        };

        let settings = GrowSettings {
            rule: SplitRule {
                min_samples_leaf: params.min_samples_leaf,
                min_weight_leaf: 0.0, // set per tree from its sample's weight
                whole_range: exact_for(bounds.max_abs),
                missing_values,
                max_bins: params.max_bins,
            },
            limits: TreeLimits::new(params.max_depth, params.max_leaf_nodes),
            min_samples_split: params.min_samples_split,
            min_impurity_decrease: params.min_impurity_decrease,
            min_weight_fraction_leaf: params.min_weight_fraction_leaf,
            n_atoms,
            ccp_alpha: params.ccp_alpha,
        };
        let job = TrainingJob {
            params,
            targets,
            task,
            weights: &weights,
            settings,
            n_estimation,
            cancel: control.cancel_flag(),
            counter: TreeCounter::new(control, trees.len()),
        };
        let search_copy = SearchCopy::choose(params, whole_values, exact_for, n_atoms, n_features);
        let width = task.width();
        let trees = with_threads(params.n_threads, || match params.criterion {
            Criterion::Gini => {
                job.grow_trees(&Gini { n_classes: width }, &rows, search_copy, trees)
            }
            Criterion::Entropy => {
                job.grow_trees(&Entropy { n_classes: width }, &rows, search_copy, trees)
            }
            Criterion::SquaredError => job.grow_trees(
                &SquaredError { n_outputs: width },
                &rows,
                search_copy,
                trees,
            ),
            Criterion::Poisson => {
                job.grow_trees(&Poisson { n_outputs: width }, &rows, search_copy, trees)
            }
        })?;
        Ok(Forest::from_trees(n_features, task, trees))
    }
}

/// The compact copy of X that trees search splits on once the first trees prove deep:
/// each gives the same projections as X, from less memory traffic.
#[derive(Debug, Clone, Copy, PartialEq)]
enum SearchCopy {
    /// None: X itself.
    Direct,
    /// X's values as bytes.
    Bytes,
    /// The running sums of X's rows, read through atoms rewritten for them.
    RunningSums,
    /// X's bytes, held as bits too ([`Rows::with_bits`]).
    Bits,
}

impl SearchCopy {
    /// The copy for atoms of `params` on X whose values, if whole, lie in
    /// `whole_values`; `exact_for(max_weight)` is that range where sums with weights
    /// of magnitude up to `max_weight` stay exact.
    fn choose(
        params: &ForestParams,
        whole_values: Option<(f32, f32)>,
        exact_for: impl Fn(u32) -> Option<(f32, f32)>,
        n_atoms: usize,
        n_features: usize,
    ) -> SearchCopy {
        let bounds = params.atoms.weight_bounds();
        let atoms = &params.atoms;
        let byte_valued = holds_bytes(exact_for(bounds.max_abs));
        // Pooled atoms read X itself: their shifts have no running-sum form, and
        // they are not projected through bits.
        let pools = atoms.pools();
        let binary = matches!(whole_values, Some((low, high)) if low >= 0.0 && high <= 1.0);
        // Atoms of weights ±1 (cells, sparse combinations, patches, edges) are masks
        // over a binary row's words.
        let in_masks = bounds.max_abs == 1;
        if byte_valued && binary && in_masks && !pools {
            return SearchCopy::Bits;
        }
        let long_runs = atoms.mean_run_length() >= RUNNING_SUMS_MIN_RUN_LENGTH;
        let overlap = atoms
            .mean_cells()
            .map(|cells| n_atoms as f64 * cells / n_features as f64);
        let bytes_are_faster = byte_valued
            && overlap.is_some_and(|overlap| overlap < RUNNING_SUMS_MIN_OVERLAP_ON_BYTES);
        if long_runs && !bytes_are_faster && !pools && exact_for(bounds.spread).is_some() {
            SearchCopy::RunningSums
        } else if byte_valued {
            SearchCopy::Bytes
        } else {
            SearchCopy::Direct
        }
    }
}

/// Whether whole values within `range` (X's, if whole) all fit in a byte.
fn holds_bytes(range: Option<(f32, f32)>) -> bool {
    matches!(range, Some((low, high)) if low >= 0.0 && high <= u8::MAX as f32)
}

/// The data and settings shared by every tree of one `fit`.
struct TrainingJob<'a, 't> {
    params: &'a ForestParams,
    targets: Targets<'t>,
    task: Task,
    weights: &'a [f64],
    settings: GrowSettings,
    n_estimation: usize,
    cancel: &'a AtomicBool,
    counter: TreeCounter<'a>,
}

impl TrainingJob<'_, '_> {
    /// Grows trees `trees` on X (`rows`) with `criterion`, in parallel on the current
    /// thread pool, searching splits on the compact copy of X `copy` once the first
    /// trees prove deep; `Err(Cancelled)` once the cancel flag is set.
    fn grow_trees<C: SplitCriterion, T: Feature>(
        &self,
        criterion: &C,
        rows: &Rows<'_, T>,
        copy: SearchCopy,
        trees: Range<usize>,
    ) -> Result<Vec<Tree>> {
        if copy == SearchCopy::Direct {
            return self.grow_range(criterion, rows, SearchRows::direct(rows), trees);
        }
        // The first round of trees, one per thread, tells whether trees are deep.
        let first_round = trees.start..trees.end.min(trees.start + rayon::current_num_threads());
        let rest = first_round.end..trees.end;
        let mut grown = self.grow_range(criterion, rows, SearchRows::direct(rows), first_round)?;
        let mean_leaf_depth = grown
            .iter()
            .map(|tree| tree.stats().mean_leaf_depth)
            .sum::<f64>()
            / grown.len() as f64;
        let levels_left = mean_leaf_depth * rest.len() as f64;
        grown.extend(if levels_left < COPY_MIN_LEVELS {
            self.grow_range(criterion, rows, SearchRows::direct(rows), rest)
        } else {
            match copy {
                SearchCopy::Direct => {
                    self.grow_range(criterion, rows, SearchRows::direct(rows), rest)
                }
                SearchCopy::RunningSums => match rows.running_sums() {
                    RunningSums::Bytes(sums) => {
                        self.grow_range(criterion, rows, SearchRows::running_sums(&sums), rest)
                    }
                    RunningSums::Floats(sums) => {
                        self.grow_range(criterion, rows, SearchRows::running_sums(&sums), rest)
                    }
                },
                // The same projections from a quarter of the memory traffic.
                SearchCopy::Bytes => {
                    self.grow_range(criterion, rows, SearchRows::direct(&rows.to_bytes()), rest)
                }
                SearchCopy::Bits => {
                    let bits = rows.to_bytes().with_bits();
                    self.grow_range(criterion, rows, SearchRows::direct(&bits), rest)
                }
            }
        }?);
        Ok(grown)
    }

    /// Grows trees `range` on X (`rows`), searching splits on `search`, in parallel on
    /// the current thread pool; `Err(Cancelled)` once the cancel flag is set.
    fn grow_range<C: SplitCriterion, T: Feature, S: Feature>(
        &self,
        criterion: &C,
        rows: &Rows<'_, T>,
        search: SearchRows<'_, S>,
        range: Range<usize>,
    ) -> Result<Vec<Tree>> {
        // Split-search buffers live as long as a worker's run of trees: allocating them
        // per tree maps and faults in fresh pages every time, under a process-wide lock.
        range
            .into_par_iter()
            .map_init(
                || (SplitScratch::default(), NodeTargets::default()),
                |(scratch, node), t| {
                    let tree = self.grow(criterion, rows, search, t, scratch, node);
                    if tree.is_some() {
                        self.counter.tree_done();
                    }
                    tree.ok_or(MorfError::Cancelled)
                },
            )
            .collect()
    }

    /// Grows tree `t`, or `None` once the cancel flag is set. Its rows and its
    /// atoms come from two separate streams derived from (seed, t), so neither depends
    /// on thread scheduling or on the other.
    fn grow<C: SplitCriterion, T: Feature, S: Feature>(
        &self,
        criterion: &C,
        rows: &Rows<'_, T>,
        search: SearchRows<'_, S>,
        t: usize,
        scratch: &mut SplitScratch,
        node: &mut NodeTargets,
    ) -> Option<Tree> {
        let n_samples = rows.n_samples;
        let TreeSample {
            mut draws,
            estimation,
        } = TreeSample::draw(self.params, n_samples, self.n_estimation, t);
        let mut atom_rng = Rng::new(self.params.random_state, 2 * t as u64 + 1);
        let class_weights = self.class_weights(&draws);
        let structure = self.local_samples(
            (0..n_samples as u32).filter(|&r| draws[r as usize] > 0),
            &draws,
            class_weights.as_deref(),
        );

        let mut sampler = self.params.atoms.sampler(rows.n_features);
        let mut tree = grow_tree(
            criterion,
            self.task.empty_leaves(),
            search,
            &structure,
            &self.settings,
            sampler.as_mut(),
            &mut atom_rng,
            scratch,
            node,
            self.cancel,
        )?;
        if self.n_estimation > 0 {
            estimation.iter().for_each(|&row| draws[row as usize] = 1);
            let estimation =
                self.local_samples(estimation.iter().copied(), &draws, class_weights.as_deref());
            let mut empirical = vec![0.0; criterion.n_entries()];
            let mut empirical_weight = 0.0;
            for part in [&structure, &estimation] {
                for sample in 0..part.row_of.len() {
                    empirical_weight += part.weight_of[sample];
                    criterion
                        .leaf_entries(part, sample, |entry, amount| empirical[entry] += amount);
                }
            }
            tree.fill_leaves_honestly(
                criterion,
                rows,
                &estimation,
                self.params.honest_prior,
                (&empirical, empirical_weight),
            );
        }
        Some(tree)
    }

    /// Per class, the weight that balances the classes of a tree's sample, which drew
    /// row `r` `draws[r]` times; `None` unless the parameters ask for it.
    fn class_weights(&self, draws: &[u32]) -> Option<Vec<f64>> {
        let Targets::Classes { labels, n_classes } = self.targets else {
            return None;
        };
        if !self.params.balanced_classes_per_tree {
            return None;
        }
        let mut counts = vec![0u64; n_classes];
        for (&label, &drawn) in labels.iter().zip(draws) {
            counts[label as usize] += u64::from(drawn);
        }
        let drawn: u64 = counts.iter().sum();
        let present = counts.iter().filter(|&&n| n > 0).count() as f64;
        let balanced = |n: u64| match n {
            0 => 0.0, // a class the tree did not draw has no rows to weigh
            n => drawn as f64 / (present * n as f64),
        };
        Some(counts.into_iter().map(balanced).collect())
    }

    /// The samples of `rows` with positive weight, each weighted by its draw count
    /// and, where given, by its class's weight.
    fn local_samples(
        &self,
        rows: impl Iterator<Item = u32>,
        draws: &[u32],
        class_weights: Option<&[f64]>,
    ) -> LocalSamples {
        let mut local = LocalSamples::default();
        for row in rows {
            let mut weight = self.weights[row as usize] * draws[row as usize] as f64;
            if let (Some(class_weights), Targets::Classes { labels, .. }) =
                (class_weights, self.targets)
            {
                weight *= class_weights[labels[row as usize] as usize];
            }
            if weight > 0.0 {
                local.row_of.push(row);
                local.weight_of.push(weight);
                self.targets.push_target(row as usize, &mut local);
            }
        }
        local
    }
}
