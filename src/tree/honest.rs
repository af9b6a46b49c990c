use serde::{Deserialize, Serialize};

use super::grow::push_distribution;
use super::{Node, Tree};
use crate::data::{Feature, Rows};
use crate::split::LocalSamples;

/// What an honest leaf that received no estimation sample predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HonestPrior {
    /// The tree casts no vote for samples reaching the leaf.
    Ignore,
    /// Every class equally likely.
    Uniform,
    /// The class frequencies of the tree's whole sample (structure and estimation).
    Empirical,
}

impl Tree {
    /// Replaces every leaf's class distribution by that of the `estimation` samples
    /// reaching it (seed 003, Specification 1): the labels that chose the splits no
    /// longer set the predictions. `empirical` is the prior for [`HonestPrior::Empirical`].
    pub(crate) fn fill_leaves_honestly<T: Feature>(
        &mut self,
        rows: &Rows<'_, T>,
        estimation: &LocalSamples,
        prior: HonestPrior,
        empirical: &[f64],
    ) {
        let n_classes = self.n_classes as usize;
        let mut counts = vec![0.0f64; self.nodes.len() * n_classes];
        let mut reached = vec![false; self.nodes.len()];
        for ((&row, &class), &weight) in estimation
            .row_of
            .iter()
            .zip(&estimation.class_of)
            .zip(&estimation.weight_of)
        {
            let leaf = self.leaf_of(rows.row(row as usize));
            counts[leaf * n_classes + class as usize] += weight;
            reached[leaf] = true;
        }
        self.leaf_values.clear();
        let uniform = vec![1.0; n_classes];
        for (id, node) in self.nodes.iter_mut().enumerate() {
            if let Node::Leaf { posterior } = node {
                let source = if reached[id] {
                    &counts[id * n_classes..(id + 1) * n_classes]
                } else {
                    match prior {
                        HonestPrior::Ignore => {
                            *posterior = None;
                            continue;
                        }
                        HonestPrior::Uniform => &uniform[..],
                        HonestPrior::Empirical => empirical,
                    }
                };
                *posterior = Some(self.leaf_values.len() as u32);
                push_distribution(&mut self.leaf_values, source);
            }
        }
    }
}
