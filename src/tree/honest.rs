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

#[cfg(test)]
mod tests {
    use ndarray::Array2;

    use super::*;
    use crate::atoms::AtomKind;
    use crate::rng::Rng;
    use crate::split::{Criterion, SplitRule, SplitScratch};
    use crate::tree::{grow_tree, GrowSettings, SearchRows};
    use std::sync::atomic::AtomicBool;

    fn settings() -> GrowSettings {
        GrowSettings {
            rule: SplitRule {
                criterion: Criterion::Gini,
                min_samples_leaf: 1,
                whole_range: None,
            },
            max_depth: 3,
            min_samples_split: 2,
            min_impurity_decrease: 0.0,
            n_atoms: 2,
            n_classes: 2,
        }
    }

    #[test]
    fn leaves_hold_only_the_estimation_labels() {
        // Structure samples: class by sign of feature 0. Estimation samples: all class 1,
        // placed only where x0 > 0, so left leaves get none of them.
        let x = Array2::from_shape_fn((40, 2), |(i, j)| ((i * 7 + j * 3) % 11) as f32 - 5.0);
        let rows = Rows::from_view(x.view()).unwrap();
        let structure = LocalSamples {
            row_of: (0..20).collect(),
            class_of: (0..20).map(|i| u32::from(x[[i, 0]] > 0.0)).collect(),
            weight_of: vec![1.0; 20],
        };
        let estimation_rows: Vec<u32> = (20..40).filter(|&i| x[[i as usize, 0]] > 0.0).collect();
        let estimation = LocalSamples {
            class_of: vec![1; estimation_rows.len()],
            weight_of: vec![1.0; estimation_rows.len()],
            row_of: estimation_rows,
        };
        let mut sampler = AtomKind::AxisAligned.sampler(2);
        let mut tree = grow_tree(
            SearchRows::direct(&rows),
            &structure,
            &settings(),
            sampler.as_mut(),
            &mut Rng::new(1, 1),
            &mut SplitScratch::default(),
            &AtomicBool::new(false),
        )
        .expect("not cancelled");
        // A grown tree keeps no spare capacity (a forest holds many).
        assert_eq!(tree.nodes.capacity(), tree.nodes.len());
        assert_eq!(tree.leaf_values.capacity(), tree.leaf_values.len());
        let structure_posteriors: Vec<Option<Vec<f32>>> = (0..tree.nodes().len())
            .map(|id| tree.posterior(id).map(<[f32]>::to_vec))
            .collect();
        assert!(
            structure_posteriors.iter().flatten().any(|p| p[0] == 1.0),
            "some leaf was class 0"
        );

        tree.fill_leaves_honestly(&rows, &estimation, HonestPrior::Ignore, &[0.5, 0.5]);
        let reached: Vec<usize> = estimation
            .row_of
            .iter()
            .map(|&r| tree.leaf_of(rows.row(r as usize)))
            .collect();
        for (id, node) in tree.nodes().iter().enumerate() {
            if let Node::Leaf { .. } = node {
                if reached.contains(&id) {
                    assert_eq!(tree.posterior(id), Some(&[0.0f32, 1.0][..]));
                } else {
                    assert_eq!(tree.posterior(id), None, "an unreached leaf casts no vote");
                }
            }
        }

        tree.fill_leaves_honestly(&rows, &estimation, HonestPrior::Empirical, &[3.0, 1.0]);
        let unreached = (0..tree.nodes().len())
            .find(|id| matches!(tree.nodes()[*id], Node::Leaf { .. }) && !reached.contains(id))
            .expect("a leaf without estimation samples");
        assert_eq!(tree.posterior(unreached), Some(&[0.75f32, 0.25][..]));
        tree.fill_leaves_honestly(&rows, &estimation, HonestPrior::Uniform, &[3.0, 1.0]);
        assert_eq!(tree.posterior(unreached), Some(&[0.5f32, 0.5][..]));
    }
}
