//! Contributions of forests and boosted models: each prepares its trees for the
//! shared [`Explainer`].

use super::engine::Explainer;
use super::players::ExplainedTree;
use super::sealed::Explained;
use crate::error::{invalid, Result};
use crate::tree::{Leaves, Node};
use crate::{Booster, Forest, Loss};

impl Explained for Forest {
    fn n_explained_trees(&self) -> usize {
        self.trees().len()
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
            .collect::<Result<_>>()?;
        Ok(Explainer::new(
            self.n_features(),
            width,
            vec![0.0; width],
            trees,
        ))
    }
}

impl Booster {
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
}

impl Explained for Booster {
    fn n_explained_trees(&self) -> usize {
        self.trees().len()
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
            .collect::<Result<_>>()?;
        Ok(Explainer::new(self.n_features(), width, base, trees))
    }
}
