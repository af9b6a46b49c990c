//! Forest hyperparameters, with scikit-learn's names and meanings.

use serde::{Deserialize, Serialize};

use crate::atoms::{AtomKind, MaxFeatures};
use crate::error::{invalid, Result};
use crate::split::Criterion;
use crate::tree::HonestPrior;

/// Most trees a forest may have: even trees of a single leaf take over 200 bytes each,
/// so 2^24 trees already take more than 3 GiB.
pub const MAX_ESTIMATORS: usize = 1 << 24;

/// Most bins a forest's split search may count a node's projections in
/// ([`ForestParams::max_bins`]); more would cost more than ordering the values.
pub const MAX_BINS: usize = 1 << 16;

/// Size of each tree's sample (scikit-learn's `max_samples`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum MaxSamples {
    /// This fraction, in (0, 1], of the samples available to the tree.
    Fraction(f64),
    /// This many samples (at least 1).
    Count(usize),
}

impl MaxSamples {
    pub(crate) fn resolve(self, available: usize) -> Result<usize> {
        match self {
            MaxSamples::Fraction(f) if f.is_finite() && f > 0.0 && f <= 1.0 => {
                Ok(((f * available as f64).round() as usize).max(1))
            }
            MaxSamples::Fraction(f) => Err(invalid(
                "max_samples",
                format!("a fraction must be in (0, 1], got {f}"),
            )),
            MaxSamples::Count(0) => Err(invalid("max_samples", "a count must be at least 1")),
            MaxSamples::Count(k) => Ok(k),
        }
    }
}

/// Everything that shapes a forest. `Default` gives scikit-learn's defaults with
/// axis-aligned atoms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForestParams {
    /// Number of trees (`n_estimators`).
    pub n_estimators: usize,
    /// The atom dictionary: axis-aligned (RF), sparse oblique (SPORF) or patches (MORF).
    pub atoms: AtomKind,
    /// Candidate atoms per node (`max_features`).
    pub max_features: MaxFeatures,
    /// Impurity (`criterion`): Gini or entropy for classes, squared error for values.
    pub criterion: Criterion,
    /// Deepest a leaf may be; `None` grows until another rule stops (`max_depth`).
    pub max_depth: Option<usize>,
    /// Most leaves per tree (`max_leaf_nodes`, at least 2): trees then grow best
    /// first, as scikit-learn's do: of the leaves that may be split, the one whose
    /// best split decreases the weighted impurity most is split next, until the tree
    /// has this many leaves or no leaf may be split (the other stopping rules still
    /// apply). `None` grows depth first without a limit on leaves.
    pub max_leaf_nodes: Option<usize>,
    /// Fewest samples a node needs to be split (`min_samples_split`, at least 2).
    pub min_samples_split: usize,
    /// Fewest samples each child must keep (`min_samples_leaf`, at least 1).
    pub min_samples_leaf: usize,
    /// Least weight each child must keep, as a fraction in `[0, 0.5]` of the total
    /// weight of the tree's sample (`min_weight_fraction_leaf`).
    pub min_weight_fraction_leaf: f64,
    /// Smallest weighted impurity decrease, relative to the tree's total weight, that a
    /// split must bring (`min_impurity_decrease`).
    pub min_impurity_decrease: f64,
    /// Minimal cost-complexity pruning (`ccp_alpha`, finite and at least 0): each tree,
    /// once grown, is cut back to its smallest subtree minimising `R(T) + ccp_alpha *
    /// leaves(T)`, with `R(T)` the weighted impurity of its leaves relative to the
    /// weight of the samples it was grown on (for honest trees, the structure part,
    /// before the leaves are filled). 0 prunes nothing.
    pub ccp_alpha: f64,
    /// Most bins a node's projections on one atom are counted in, over their range at
    /// that node, so that thresholds are searched between bins only (`max_bins`, 2 to
    /// [`MAX_BINS`]): faster on large nodes, at a small cost in accuracy. `None`
    /// searches every threshold between distinct values. Nodes of fewer samples than
    /// bins or too small for bins to pay, X with missing values, and whole projections
    /// spanning at most this many values are searched exactly.
    #[serde(default)]
    pub max_bins: Option<usize>,
    /// Draw each tree's sample with replacement (`bootstrap`); otherwise without.
    pub bootstrap: bool,
    /// Weight each tree's classes to equal totals over the rows its sample drew
    /// (scikit-learn's `class_weight="balanced_subsample"`): a row of class `k` counts
    /// `n / (c n_k)` times its sample weight, the tree having drawn `n` rows (each as
    /// often as drawn), `n_k` of class `k`, and `c` classes. Classification only.
    #[serde(default)]
    pub balanced_classes_per_tree: bool,
    /// Size of each tree's sample; `None` means all available samples (`max_samples`).
    pub max_samples: Option<MaxSamples>,
    /// Fraction of each tree's samples held out to fill the leaves (honest trees);
    /// 0 turns honesty off.
    pub honest_fraction: f64,
    /// What an honest leaf without estimation samples predicts.
    pub honest_prior: HonestPrior,
    /// Seed; tree `t` draws from streams derived from (`random_state`, `t`).
    pub random_state: u64,
    /// Worker threads for training; 0 uses every core.
    pub n_threads: usize,
}

impl Default for ForestParams {
    fn default() -> Self {
        ForestParams {
            n_estimators: 100,
            atoms: AtomKind::AxisAligned,
            max_features: MaxFeatures::Sqrt,
            criterion: Criterion::Gini,
            max_depth: None,
            max_leaf_nodes: None,
            min_samples_split: 2,
            min_samples_leaf: 1,
            min_weight_fraction_leaf: 0.0,
            min_impurity_decrease: 0.0,
            ccp_alpha: 0.0,
            max_bins: None,
            bootstrap: true,
            balanced_classes_per_tree: false,
            max_samples: None,
            honest_fraction: 0.0,
            honest_prior: HonestPrior::Empirical,
            random_state: 0,
            n_threads: 1,
        }
    }
}

impl ForestParams {
    /// Checks the settings that do not depend on the data.
    pub fn validate(&self) -> Result<()> {
        if self.n_estimators == 0 {
            return Err(invalid("n_estimators", "must be at least 1"));
        }
        if self.n_estimators > MAX_ESTIMATORS {
            return Err(invalid(
                "n_estimators",
                format!(
                    "{} is too large: at most {MAX_ESTIMATORS} trees (2^24), which \
                     already take more than 3 GiB even as single leaves",
                    self.n_estimators
                ),
            ));
        }
        if self.max_depth == Some(0) {
            return Err(invalid(
                "max_depth",
                "must be at least 1, or None for no limit, got 0",
            ));
        }
        if let Some(max_leaf_nodes) = self.max_leaf_nodes {
            if max_leaf_nodes < 2 {
                return Err(invalid(
                    "max_leaf_nodes",
                    format!("must be at least 2, or None for no limit, got {max_leaf_nodes}"),
                ));
            }
        }
        if !(self.ccp_alpha.is_finite() && self.ccp_alpha >= 0.0) {
            return Err(invalid(
                "ccp_alpha",
                format!("must be a finite number >= 0, got {}", self.ccp_alpha),
            ));
        }
        if let Some(max_bins) = self.max_bins {
            if !(2..=MAX_BINS).contains(&max_bins) {
                return Err(invalid(
                    "max_bins",
                    format!(
                        "must be from 2 to {MAX_BINS}, or None for exact splits, got {max_bins}"
                    ),
                ));
            }
        }
        if self.min_samples_split < 2 {
            return Err(invalid(
                "min_samples_split",
                format!("must be at least 2, got {}", self.min_samples_split),
            ));
        }
        if self.min_samples_leaf < 1 {
            return Err(invalid("min_samples_leaf", "must be at least 1, got 0"));
        }
        if !(0.0..=0.5).contains(&self.min_weight_fraction_leaf) {
            return Err(invalid(
                "min_weight_fraction_leaf",
                format!("must be in [0, 0.5], got {}", self.min_weight_fraction_leaf),
            ));
        }
        if !(self.min_impurity_decrease.is_finite() && self.min_impurity_decrease >= 0.0) {
            return Err(invalid(
                "min_impurity_decrease",
                format!(
                    "must be a finite number >= 0, got {}",
                    self.min_impurity_decrease
                ),
            ));
        }
        if !(self.honest_fraction >= 0.0 && self.honest_fraction < 1.0) {
            return Err(invalid(
                "honest_fraction",
                format!("must be in [0, 1), got {}", self.honest_fraction),
            ));
        }
        if let Some(max_samples) = self.max_samples {
            max_samples.resolve(1)?;
        }
        Ok(())
    }
}
