//! Contributions of forests and boosted models: each prepares its trees for the
//! shared [`Explainer`].

use std::sync::atomic::AtomicBool;

use ndarray::{Array3, ArrayView2, ArrayViewMut2};

use super::engine::Explainer;
use super::players::ExplainedTree;
use super::AtomContributions;
use crate::data::Feature;
use crate::error::{invalid, Result};
use crate::runtime::control::NEVER_CANCELLED;
use crate::tree::{Leaves, Node};
use crate::{Booster, Forest, Loss};

impl Forest {
    /// Per row, feature and output (class or regression output), what the feature
    /// contributed to the forest's prediction ([`predict_proba`](Self::predict_proba)
    /// or [`predict_values`](Self::predict_values)): exact TreeSHAP values over the
    /// split atoms shared among their features (see [`crate::explain`]). Shape
    /// (samples, features + 1, outputs); slot `n_features` along axis 1 is the
    /// expected value, and the sum over axis 1 is the prediction. Rows are explained in
    /// parallel on `n_threads` threads (0: every core), with the same values for any
    /// number of threads.
    ///
    /// Fails for an honest forest whose leaves cast no vote
    /// ([`HonestPrior::Ignore`](crate::HonestPrior::Ignore)) and for trees deeper
    /// than [`MAX_EXPLAINED_DEPTH`](crate::explain::MAX_EXPLAINED_DEPTH).
    ///
    /// ```
    /// use ndarray::{array, Axis};
    /// use morf_rs::{Forest, ForestParams};
    ///
    /// let x = array![[0.0f32, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]];
    /// let forest = Forest::fit(&ForestParams::default(), x.view(), &[0, 1, 0, 1], 2, None)?;
    /// let contributions = forest.contributions(x.view(), 1)?;
    /// assert_eq!(contributions.dim(), (4, 3, 2));
    /// let proba = forest.predict_proba(x.view(), 1)?;
    /// let total = contributions.sum_axis(Axis(1));
    /// assert!((&total - &proba).iter().all(|d| d.abs() < 1e-6));
    /// # Ok::<(), morf_rs::MorfError>(())
    /// ```
    pub fn contributions<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
    ) -> Result<Array3<f64>> {
        self.explainer()?
            .contributions(x, n_threads, &NEVER_CANCELLED)
    }

    /// [`contributions`](Self::contributions) written into `out`, a row-major array
    /// of shape (samples, (features + 1) * outputs), stopping with
    /// [`MorfError::Cancelled`](crate::MorfError::Cancelled) soon after `cancel` is
    /// set (it is looked at before each row).
    pub fn contributions_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, f64>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<()> {
        self.explainer()?
            .contributions_into(x, out, n_threads, cancel)
    }

    /// The exact TreeSHAP values of [`contributions`](Self::contributions) per tree
    /// and atom, before they are shared among features.
    pub fn atom_contributions<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<AtomContributions> {
        self.explainer()?.atom_contributions(x, n_threads, cancel)
    }

    /// The trees as TreeSHAP plays them: every leaf's values over the number of trees.
    fn explainer(&self) -> Result<Explainer<'_>> {
        let width = self.task().width();
        let scale = 1.0 / self.trees().len() as f64;
        let silent = self
            .trees()
            .iter()
            .flat_map(|tree| tree.nodes())
            .filter(|node| matches!(node, Node::Leaf { value: None }))
            .count();
        if silent > 0 {
            return Err(invalid(
                "honest_prior",
                format!(
                    "{silent} honest leaves of this forest cast no vote (honest prior \
                     'ignore'), so its prediction is a mean over a number of trees that \
                     changes from row to row, which no sum of contributions equals; \
                     train it with the honest prior 'empirical' or 'uniform'"
                ),
            ));
        }
        let trees = self
            .trees()
            .iter()
            .map(|tree| {
                ExplainedTree::new(tree, width, 0, scale, |id| match tree.leaves() {
                    Leaves::Classes { .. } => tree
                        .posterior(id)
                        .map_or(vec![0.0; width], |p| p.iter().map(|&v| v as f64).collect()),
                    Leaves::Values { .. } => tree
                        .leaf_values(id)
                        .map_or(vec![0.0; width], |v| v.to_vec()),
                })
            })
            .collect();
        Explainer::new(self.n_features(), width, vec![0.0; width], trees)
    }
}

impl Booster {
    /// Per row, feature and output, what the feature contributed to the model's raw
    /// score ([`predict_raw`](Self::predict_raw)): exact TreeSHAP values over the split
    /// atoms shared among their features (see [`crate::explain`]). Shape (samples,
    /// features + 1, outputs) where outputs are the classes of a classifier (two
    /// classes: the one raw score, the log-odds of class 1, in output 1 and zeros in
    /// output 0) or the one output of a regressor; slot `n_features` along axis 1 is
    /// the expected value, and the sum over axis 1 is the raw score. Rows are
    /// explained in parallel on `n_threads` threads (0: every core), with the same
    /// values for any number of threads.
    pub fn contributions<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
    ) -> Result<Array3<f64>> {
        self.explainer()?
            .contributions(x, n_threads, &NEVER_CANCELLED)
    }

    /// [`contributions`](Self::contributions) written into `out`, a row-major array
    /// of shape (samples, (features + 1) * outputs), stopping with
    /// [`MorfError::Cancelled`](crate::MorfError::Cancelled) soon after `cancel` is
    /// set (it is looked at before each row).
    pub fn contributions_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, f64>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<()> {
        self.explainer()?
            .contributions_into(x, out, n_threads, cancel)
    }

    /// The exact TreeSHAP values of [`contributions`](Self::contributions) per tree
    /// and atom, before they are shared among features.
    pub fn atom_contributions<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        n_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<AtomContributions> {
        self.explainer()?.atom_contributions(x, n_threads, cancel)
    }

    /// Outputs explained: classes (two for a binary model), or 1.
    fn explained_outputs(&self) -> usize {
        self.loss().n_predicted()
    }

    /// The output column of tree `t`'s raw score.
    fn explained_column(&self, t: usize) -> usize {
        match self.loss() {
            Loss::BinaryLogLoss => 1,
            _ => t % self.loss().n_outputs(),
        }
    }

    /// The trees as TreeSHAP plays them, each adding its leaf value to its output.
    fn explainer(&self) -> Result<Explainer<'_>> {
        let width = self.explained_outputs();
        let mut base = vec![0.0; width];
        for (k, &b) in self.baseline().iter().enumerate() {
            base[self.explained_column(k)] = b;
        }
        let trees = self
            .trees()
            .iter()
            .enumerate()
            .map(|(t, tree)| {
                ExplainedTree::new(tree, 1, self.explained_column(t), 1.0, |id| {
                    vec![tree.leaf_values(id).map_or(0.0, |v| v[0])]
                })
            })
            .collect();
        Explainer::new(self.n_features(), width, base, trees)
    }
}
