//! Contributions: what each feature added to a row's prediction, as exact
//! path-dependent TreeSHAP values (Lundberg et al. 2020) of every forest and boosted
//! model, through the [`Explain`] trait ([`Explain::contributions`]).
//!
//! # Players are atoms
//!
//! Every split tests one atom (a weighted sum of features, or a pooled one), so
//! TreeSHAP is exact over the atoms: the players of a tree are its distinct split
//! atoms, and nodes whose atoms are identical (same features, weights and window) are
//! the same player. An axis-aligned tree's atoms are its features, so its values are
//! those of shap's `TreeExplainer` given the same tree. A player left out of a
//! coalition sends the row down both sides of its splits in proportion to the training
//! covers: each node's sample weight (forests: sample weight times bootstrap count;
//! boosted trees: the hessian sum), by sample counts where a saved forest kept no
//! weights. A row whose projection is missing takes the side the split learned for
//! missing values, as scoring does. [`AtomContributions`] holds these exact values.
//!
//! # From atoms to features
//!
//! Each atom's value is then shared among its features for the row explained, so the
//! features' values still sum exactly to the prediction minus the expected value:
//!
//! - in proportion to `|w_j x_j|`, the size of feature j's term in the row's projection
//!   `Σ w_j x_j`: the features that made the projection what it is get the credit,
//!   each share has the sign of the atom's value, and no share blows up when terms
//!   cancel (sharing by the signed `w_j x_j / Σ w_k x_k` would, near a projection of 0);
//! - where every term is 0, in proportion to `|w_j|`;
//! - where some features are missing and the projection is the rescaled sum of the
//!   present ones ([`MissingCells`](crate::atoms::MissingCells)), among the present
//!   features as above;
//! - where the projection is missing, equally among the atom's missing features: they
//!   are what sent the row to the learned side;
//! - for a pooled atom, among the features of the shift that gave the pooled value
//!   (the maximum or minimum; the first in the window's order among ties), as above;
//!   where the pooled value is missing, equally among the window's missing features.
//!
//! `x_j` is the cell as the model reads it, in float32: float64 X shares as its
//! float32 copy does.
//!
//! # What the values sum to
//!
//! The values of a row, output by output, plus the expected value give the model's
//! raw output: a forest's mean over trees of its leaf class distributions
//! ([`Forest::predict_proba`](crate::Forest::predict_proba)) or leaf values
//! ([`Forest::predict_values`](crate::Forest::predict_values)); a boosted model's raw
//! score ([`Booster::predict_raw`](crate::Booster::predict_raw)) per output. A boosted
//! model of two classes has one raw score, the log-odds of class 1: its values are in
//! output 1 and output 0 is all zeros, so that outputs are classes for every
//! classifier. An honest forest trained with [`HonestPrior::Ignore`](crate::HonestPrior)
//! whose leaves cast no vote predicts a mean over a number of trees that changes from
//! row to row, which no sum of per-tree values equals: it is refused with an error.

mod bernstein;
mod blocks;
mod engine;
mod lanes;
mod models;
mod players;
mod quadrature;
mod share;
mod treeshap;

pub use engine::MAX_EXPLAINED_DEPTH;

use ndarray::{Array3, ArrayView2, ArrayViewMut2};

use crate::data::Feature;
use crate::error::Result;
use crate::runtime::options::ScoreOptions;

/// What explaining needs of a model; implemented by [`Forest`](crate::Forest) and
/// [`Booster`](crate::Booster) only, so that [`Explain`] can grow without breaking
/// anyone.
pub(crate) mod sealed {
    use super::engine::Explainer;
    use crate::error::Result;

    /// A model whose trees TreeSHAP can play.
    pub trait Explained {
        /// Its trees prepared for TreeSHAP, or why they cannot be explained.
        fn explainer(&self) -> Result<Explainer<'_>>;
        /// Its number of trees.
        fn n_explained_trees(&self) -> usize;
    }
}

/// Contributions of every feature to a forest's or a boosted model's predictions.
///
/// For a [`Forest`](crate::Forest) the explained output is
/// [`predict_proba`](crate::Forest::predict_proba) (classifiers) or
/// [`predict_values`](crate::Forest::predict_values) (regressors); for a
/// [`Booster`](crate::Booster) the raw score
/// [`predict_raw`](crate::Booster::predict_raw) per output (see the module docs for two
/// classes). Fails for an honest forest whose leaves cast no vote and for trees deeper
/// than [`MAX_EXPLAINED_DEPTH`].
///
/// ```
/// use ndarray::{array, Axis};
/// use morf_rs::{Explain, Forest, ForestParams, ScoreOptions};
///
/// let x = array![[0.0f32, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]];
/// let forest = Forest::fit(&ForestParams::default(), x.view(), &[0, 1, 0, 1], 2, None)?;
/// let options = ScoreOptions::default();
/// let contributions = forest.contributions(x.view(), &options)?;
/// assert_eq!(contributions.dim(), (4, 3, 2));
/// let proba = forest.predict_proba(x.view(), &options)?;
/// let total = contributions.sum_axis(Axis(1));
/// assert!((&total - &proba).iter().all(|d| d.abs() < 1e-6));
/// # Ok::<(), morf_rs::MorfError>(())
/// ```
pub trait Explain: sealed::Explained {
    /// Per row, feature and output, what the feature contributed to the model's
    /// output: exact TreeSHAP values over the split atoms shared among their features.
    /// Shape (samples, features + 1, outputs); slot `n_features` along axis 1 is the
    /// expected value, and the sum over axis 1 is the output. Rows are explained on
    /// the threads of `options`, with the same values for any number of threads; its
    /// cancel flag is looked at before each tree explains each block of rows.
    fn contributions<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array3<f64>> {
        self.explainer()?.contributions(x, options)
    }

    /// [`contributions`](Self::contributions) written into `out`, a row-major array
    /// of shape (samples, (features + 1) * outputs).
    fn contributions_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, f64>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        self.explainer()?.contributions_into(x, out, options)
    }

    /// The exact TreeSHAP values of [`contributions`](Self::contributions) per tree
    /// and atom, before they are shared among features.
    fn atom_contributions<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<AtomContributions> {
        self.explainer()?.atom_contributions(x, options)
    }
}

impl<M: sealed::Explained> Explain for M {}

/// The exact per-atom contributions of rows, one entry per row, tree and player that
/// contributes (is not zero in every output).
///
/// Entry `e` is row `sample[e]`'s contribution from the atom that node `node[e]` of
/// tree `tree[e]` splits on (the first node of the tree that splits on it, in node
/// order; [`Tree::split_atom`](crate::Tree::split_atom) gives the atom), one value per
/// output in `values[[e, ..]]`. A row's entries summed, plus `expected_value`, give the
/// model's output, as the per-feature contributions do.
#[derive(Debug, Clone, PartialEq)]
pub struct AtomContributions {
    /// Per entry, the row explained.
    pub sample: Vec<u32>,
    /// Per entry, the tree, in the model's order.
    pub tree: Vec<u32>,
    /// Per entry, the first node of the tree that splits on the atom.
    pub node: Vec<u32>,
    /// Per entry, the atom's contribution to each output; shape (entries, outputs).
    pub values: ndarray::Array2<f64>,
    /// What the model predicts knowing nothing of a row, per output.
    pub expected_value: Vec<f64>,
}
