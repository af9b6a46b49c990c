use serde::{Deserialize, Serialize};

use super::{Node, Tree};
use crate::data::{Feature, Rows};
use crate::split::{LocalSamples, SplitCriterion};

/// What an honest leaf that received no estimation sample predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HonestPrior {
    /// The tree casts no vote for samples reaching the leaf.
    Ignore,
    /// Every class equally likely (classification only).
    Uniform,
    /// The class frequencies, or the mean values, of the tree's whole sample
    /// (structure and estimation).
    Empirical,
}

impl Tree {
    /// Replaces every leaf's values by those of the `estimation` samples reaching it
    /// (seed 003, Specification 1): the targets that chose the splits no longer set
    /// the predictions. `empirical` holds the leaf entries of the tree's whole sample
    /// summed, and their weight: the prior for [`HonestPrior::Empirical`].
    pub(crate) fn fill_leaves_honestly<C: SplitCriterion, T: Feature>(
        &mut self,
        criterion: &C,
        rows: &Rows<'_, T>,
        estimation: &LocalSamples,
        prior: HonestPrior,
        empirical: (&[f64], f64),
    ) {
        let width = criterion.n_entries();
        let mut sums = vec![0.0f64; self.nodes.len() * width];
        let mut weights = vec![0.0f64; self.nodes.len()];
        for (sample, &row) in estimation.row_of.iter().enumerate() {
            let leaf = self.leaf_of(rows.row(row as usize));
            weights[leaf] += estimation.weight_of[sample];
            criterion.leaf_entries(estimation, sample, |entry, amount| {
                sums[leaf * width + entry] += amount
            });
        }
        self.leaves.clear();
        self.leaves.set_prior(empirical.0, empirical.1);
        let uniform = vec![1.0; width];
        for (id, node) in self.nodes.iter_mut().enumerate() {
            if let Node::Leaf { value } = node {
                // Estimation weights are positive: a leaf with weight was reached.
                let (source, weight) = if weights[id] > 0.0 {
                    (&sums[id * width..(id + 1) * width], weights[id])
                } else {
                    match prior {
                        HonestPrior::Ignore => {
                            *value = None;
                            continue;
                        }
                        HonestPrior::Uniform => (&uniform[..], width as f64),
                        HonestPrior::Empirical => empirical,
                    }
                };
                *value = Some(self.leaves.next_offset());
                self.leaves.push(source, weight);
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
    use crate::split::{Gini, NodeTargets, SplitRule, SplitScratch, SquaredError};
    use crate::tree::{grow_tree, GrowSettings, Leaves, SearchRows, TreeLimits};
    use std::sync::atomic::AtomicBool;

    fn settings() -> GrowSettings {
        GrowSettings {
            rule: SplitRule {
                min_samples_leaf: 1,
                min_weight_leaf: 0.0,
                whole_range: None,
                missing_values: false,
                max_bins: None,
            },
            limits: TreeLimits::new(Some(3), None),
            min_samples_split: 2,
            min_impurity_decrease: 0.0,
            min_weight_fraction_leaf: 0.0,
            n_atoms: 2,
            ccp_alpha: 0.0,
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
            values_of: Vec::new(),
        };
        let estimation_rows: Vec<u32> = (20..40).filter(|&i| x[[i as usize, 0]] > 0.0).collect();
        let estimation = LocalSamples {
            class_of: vec![1; estimation_rows.len()],
            weight_of: vec![1.0; estimation_rows.len()],
            values_of: Vec::new(),
            row_of: estimation_rows,
        };
        let mut sampler = AtomKind::AxisAligned.sampler(2);
        let gini = Gini { n_classes: 2 };
        let mut tree = grow_tree(
            &gini,
            Leaves::classes(2),
            SearchRows::direct(&rows),
            &structure,
            &settings(),
            sampler.as_mut(),
            &mut Rng::new(1, 1),
            &mut SplitScratch::default(),
            &mut NodeTargets::default(),
            &AtomicBool::new(false),
        )
        .expect("not cancelled");
        // A grown tree keeps no spare capacity (a forest holds many).
        assert_eq!(tree.nodes.capacity(), tree.nodes.len());
        let Leaves::Classes { distributions, .. } = &tree.leaves else {
            panic!("a Gini tree has class leaves");
        };
        assert_eq!(distributions.capacity(), distributions.len());
        let structure_posteriors: Vec<Option<Vec<f32>>> = (0..tree.nodes().len())
            .map(|id| tree.posterior(id).map(<[f32]>::to_vec))
            .collect();
        assert!(
            structure_posteriors.iter().flatten().any(|p| p[0] == 1.0),
            "some leaf was class 0"
        );

        tree.fill_leaves_honestly(
            &gini,
            &rows,
            &estimation,
            HonestPrior::Ignore,
            (&[0.5, 0.5], 1.0),
        );
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

        tree.fill_leaves_honestly(
            &gini,
            &rows,
            &estimation,
            HonestPrior::Empirical,
            (&[3.0, 1.0], 4.0),
        );
        let unreached = (0..tree.nodes().len())
            .find(|id| matches!(tree.nodes()[*id], Node::Leaf { .. }) && !reached.contains(id))
            .expect("a leaf without estimation samples");
        assert_eq!(tree.posterior(unreached), Some(&[0.75f32, 0.25][..]));
        tree.fill_leaves_honestly(
            &gini,
            &rows,
            &estimation,
            HonestPrior::Uniform,
            (&[3.0, 1.0], 4.0),
        );
        assert_eq!(tree.posterior(unreached), Some(&[0.5f32, 0.5][..]));
    }

    #[test]
    fn value_leaves_hold_the_mean_of_the_estimation_values() {
        // Two outputs: y = (x0, 10) for structure samples, (x0 + 100, -x0) for the
        // estimation samples that all fall where x0 > 0.
        let x = Array2::from_shape_fn((60, 2), |(i, j)| ((i * 7 + j * 3) % 11) as f32 - 5.0);
        let rows = Rows::from_view(x.view()).unwrap();
        let structure = LocalSamples {
            row_of: (0..30).collect(),
            class_of: Vec::new(),
            weight_of: vec![1.0; 30],
            values_of: (0..30).flat_map(|i| [x[[i, 0]] as f64, 10.0]).collect(),
        };
        let estimation_rows: Vec<u32> = (30..60).filter(|&i| x[[i as usize, 0]] > 0.0).collect();
        let estimation = LocalSamples {
            class_of: Vec::new(),
            weight_of: (0..estimation_rows.len()).map(|i| 1.0 + i as f64).collect(),
            values_of: estimation_rows
                .iter()
                .flat_map(|&i| {
                    let v = x[[i as usize, 0]] as f64;
                    [v + 100.0, -v]
                })
                .collect(),
            row_of: estimation_rows,
        };
        let criterion = SquaredError { n_outputs: 2 };
        let mut tree = grow_tree(
            &criterion,
            Leaves::values(2),
            SearchRows::direct(&rows),
            &structure,
            &settings(),
            AtomKind::AxisAligned.sampler(2).as_mut(),
            &mut Rng::new(1, 1),
            &mut SplitScratch::default(),
            &mut NodeTargets::default(),
            &AtomicBool::new(false),
        )
        .expect("not cancelled");
        // Grown on the structure samples: every leaf's second output is 10.
        let leaves: Vec<usize> = (0..tree.nodes().len())
            .filter(|&id| matches!(tree.nodes()[id], Node::Leaf { .. }))
            .collect();
        assert!(leaves.len() > 2);
        assert!(leaves
            .iter()
            .all(|&id| tree.leaf_values(id).unwrap()[1] == 10.0));

        for prior in [HonestPrior::Ignore, HonestPrior::Empirical] {
            tree.fill_leaves_honestly(&criterion, &rows, &estimation, prior, (&[6.0, 8.0], 2.0));
            for &leaf in &leaves {
                let (mut sums, mut weight) = ([0.0f64; 2], 0.0);
                for (sample, &row) in estimation.row_of.iter().enumerate() {
                    if tree.leaf_of(rows.row(row as usize)) == leaf {
                        let w = estimation.weight_of[sample];
                        weight += w;
                        sums[0] += w * estimation.values_of[2 * sample];
                        sums[1] += w * estimation.values_of[2 * sample + 1];
                    }
                }
                let expected = match (weight > 0.0, prior) {
                    (true, _) => Some(vec![sums[0] / weight, sums[1] / weight]),
                    (false, HonestPrior::Ignore) => None,
                    (false, _) => Some(vec![3.0, 4.0]),
                };
                let got = tree.leaf_values(leaf).map(<[f64]>::to_vec);
                match (&got, &expected) {
                    (Some(g), Some(e)) => {
                        assert!(
                            g.iter().zip(e).all(|(a, b)| (a - b).abs() < 1e-9),
                            "{g:?} {e:?}"
                        )
                    }
                    _ => assert_eq!(got, expected),
                }
            }
        }
        let Leaves::Values { prior, .. } = tree.leaves() else {
            unreachable!()
        };
        assert_eq!(prior, &[3.0, 4.0]);
    }
}
