//! What a loaded tree must satisfy before anything walks it or reads its values.
//!
//! Every field of [`Tree`] and [`Node`] is checked here: a new field comes with its
//! check, so that no value read from bytes reaches scoring, importances or statistics
//! unchecked.

use super::Task;
use super::{Leaves, Node, Tree};

/// Largest amount a leaf distribution's sum may differ from 1: its values are float32
/// roundings of a float64 distribution, off by at most 2^-24 of the total.
const DISTRIBUTION_SUM_TOLERANCE: f64 = 1e-5;

/// Slack on the bounds of a split's impurity decrease, which comes from float64
/// differences of nearly equal costs and may round slightly below 0.
const IMPURITY_DECREASE_SLACK: f64 = 1e-6;

/// Returns `Err(what())` unless `condition` holds.
fn ensure(condition: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(what())
    }
}

impl Tree {
    /// Checks that the tree is one that training could have produced for a forest of
    /// `n_features` features and `task`: nodes in depth-first order with every split's
    /// left child right after it and its right child where its left subtree ends (so
    /// every node is reached once and every walk ends), atoms stored one after another
    /// in node order over distinct, ascending features below `n_features` with finite
    /// weights, pooled splits' windows stored in node order and keeping their atoms
    /// inside the image ([`Window::check`](crate::atoms::Window::check)), finite
    /// thresholds, leaves of the task's kind stored in node order (class
    /// distributions finite, non-negative and summing to 1; mean values and the prior
    /// finite), impurity decreases within what a split can bring, and per-node sample
    /// counts that add up (a split's count is its children's) with finite,
    /// non-negative weights. A split's side for missing values may be either: both are
    /// what training can learn. The error names the first node at fault.
    pub(crate) fn validate(&self, n_features: usize, task: Task) -> Result<(), String> {
        let n_nodes = self.nodes.len();
        let width = task.width();
        ensure(n_nodes > 0, || "no nodes".into())?;
        let (kind_matches, prior_ok) = match (&self.leaves, task) {
            (Leaves::Classes { .. }, Task::Classification { .. }) => (true, true),
            (Leaves::Values { prior, .. }, Task::Regression { .. }) => (
                true,
                prior.len() == width && prior.iter().all(|v| v.is_finite()),
            ),
            _ => (false, true),
        };
        ensure(kind_matches && self.leaves.width() == width, || {
            format!(
                "leaves of width {} where the forest is {task:?}",
                self.leaves.width()
            )
        })?;
        ensure(prior_ok, || {
            "a prior that is not finite or of another width".into()
        })?;
        for (what, len) in [
            ("impurity decreases", self.impurity_decreases.len()),
            ("sample counts", self.node_samples.len()),
            ("sample weights", self.node_weights.len()),
        ] {
            ensure(len == n_nodes, || {
                format!("{len} {what} for {n_nodes} nodes")
            })?;
        }
        ensure(self.atom_weights.len() == self.atom_indices.len(), || {
            format!(
                "{} atom weights for {} atom features",
                self.atom_weights.len(),
                self.atom_indices.len()
            )
        })?;
        self.validate_order()?;
        // Weighted Gini impurity is at most the weight, entropy at most log2(classes)
        // times it; decreases are stored relative to the root's weight. Squared errors
        // have no bound but the targets'.
        let largest_decrease = match task {
            Task::Classification { n_classes } => {
                (n_classes as f64).log2().max(1.0) + IMPURITY_DECREASE_SLACK
            }
            Task::Regression { .. } => f64::INFINITY,
        };
        let (mut atom_end, mut leaf_end, mut windows_end) = (0usize, 0usize, 0usize);
        for (id, (node, &decrease)) in self.nodes.iter().zip(&self.impurity_decreases).enumerate() {
            let at = |what: String| format!("node {id}: {what}");
            let weight = self.node_weights[id];
            ensure(weight.is_finite() && weight >= 0.0, || {
                at(format!("sample weight {weight}"))
            })?;
            if let Node::Split { right, .. }
            | Node::SplitOnFeature { right, .. }
            | Node::SplitPooled { right, .. } = *node
            {
                // The order check above put both children inside the tree.
                let (parent, left, right) = (
                    self.node_samples[id] as u64,
                    self.node_samples[id + 1] as u64,
                    self.node_samples[right as usize] as u64,
                );
                ensure(parent == left + right, || {
                    at(format!("{parent} samples split into {left} and {right}"))
                })?;
            }
            match *node {
                Node::Split {
                    threshold,
                    atom_start,
                    atom_len,
                    ..
                }
                | Node::SplitPooled {
                    threshold,
                    atom_start,
                    atom_len,
                    ..
                } => {
                    ensure(threshold.is_finite(), || {
                        at(format!("threshold {threshold}"))
                    })?;
                    ensure(atom_start as usize == atom_end && atom_len > 0, || {
                        at(format!(
                            "atom at {atom_start}..+{atom_len} where the next atom starts \
                             at {atom_end}"
                        ))
                    })?;
                    atom_end += atom_len as usize;
                    ensure(atom_end <= self.atom_indices.len(), || {
                        at("atom past the end of the atom buffers".into())
                    })?;
                    let atom = self.atom(atom_start, atom_len);
                    ensure(atom.indices.windows(2).all(|w| w[0] < w[1]), || {
                        at("atom features not distinct and ascending".into())
                    })?;
                    let last = *atom.indices.last().expect("atom_len > 0") as usize;
                    ensure(last < n_features, || {
                        at(format!("feature {last} of {n_features}"))
                    })?;
                    ensure(atom.weights.iter().all(|w| w.is_finite()), || {
                        at("atom weight not finite".into())
                    })?;
                    if let Node::SplitPooled { window, .. } = *node {
                        ensure(window as usize == windows_end, || {
                            at(format!(
                                "window {window} where the next window is {windows_end}"
                            ))
                        })?;
                        let window = self.windows.get(windows_end);
                        let window = window.ok_or_else(|| at("window past the end".into()))?;
                        window.check(atom.indices, n_features).map_err(at)?;
                        windows_end += 1;
                    }
                }
                Node::SplitOnFeature {
                    threshold,
                    feature,
                    weight,
                    ..
                } => {
                    ensure(threshold.is_finite() && weight.is_finite(), || {
                        at(format!("threshold {threshold}, weight {weight}"))
                    })?;
                    ensure((feature as usize) < n_features, || {
                        at(format!("feature {feature} of {n_features}"))
                    })?;
                }
                Node::Leaf { value } => {
                    ensure(decrease == 0.0, || {
                        at(format!("a leaf with impurity decrease {decrease}"))
                    })?;
                    if let Some(offset) = value {
                        ensure(offset as usize == leaf_end, || {
                            at(format!(
                                "leaf values at {offset} where the next ones start at \
                                 {leaf_end}"
                            ))
                        })?;
                        let range = offset as usize..leaf_end + width;
                        leaf_end += width;
                        match &self.leaves {
                            Leaves::Classes { distributions, .. } => {
                                let values = distributions.get(range);
                                let values =
                                    values.ok_or_else(|| at("distribution past the end".into()))?;
                                check_distribution(values).map_err(at)?;
                            }
                            Leaves::Values { means, .. } => {
                                let values = means.get(range);
                                let values =
                                    values.ok_or_else(|| at("values past the end".into()))?;
                                ensure(values.iter().all(|v| v.is_finite()), || {
                                    at(format!("leaf values {values:?} not finite"))
                                })?;
                            }
                        }
                    }
                    continue;
                }
            }
            ensure(
                decrease.is_finite()
                    && (-IMPURITY_DECREASE_SLACK..=largest_decrease).contains(&decrease),
                || at(format!("impurity decrease {decrease}")),
            )?;
        }
        ensure(atom_end == self.atom_indices.len(), || {
            format!(
                "{} atom features, of which the splits use {atom_end}",
                self.atom_indices.len()
            )
        })?;
        ensure(windows_end == self.windows.len(), || {
            format!(
                "{} windows, of which the splits use {windows_end}",
                self.windows.len()
            )
        })?;
        ensure(leaf_end == self.leaves.len(), || {
            format!(
                "{} leaf values, of which the leaves use {leaf_end}",
                self.leaves.len()
            )
        })
    }

    /// Walks the nodes depth-first, left before right, and checks that the walk meets
    /// them in storage order: then every node is reached exactly once, every split's
    /// children come after it, and no walk from the root can loop or leave the tree.
    fn validate_order(&self) -> Result<(), String> {
        let n_nodes = self.nodes.len();
        let mut pending = vec![0usize];
        let mut next = 0;
        while let Some(id) = pending.pop() {
            ensure(id == next, || {
                format!("node {id} stored where the depth-first walk expects node {next}")
            })?;
            next += 1;
            if let Node::Split { right, .. }
            | Node::SplitOnFeature { right, .. }
            | Node::SplitPooled { right, .. } = self.nodes[id]
            {
                let right = right as usize;
                ensure(id + 1 < right && right < n_nodes, || {
                    format!(
                        "node {id}: right child {right} outside {}..{n_nodes}",
                        id + 2
                    )
                })?;
                pending.push(right);
                pending.push(id + 1);
            }
        }
        ensure(next == n_nodes, || {
            format!("{} nodes, of which the root reaches {next}", n_nodes)
        })
    }
}

/// Checks that `values` is a class distribution: finite, non-negative, summing to 1.
fn check_distribution(values: &[f32]) -> Result<(), String> {
    ensure(values.iter().all(|&p| p.is_finite() && p >= 0.0), || {
        format!("distribution {values:?} has a value that is negative or not finite")
    })?;
    let sum: f64 = values.iter().map(|&p| p as f64).sum();
    ensure((sum - 1.0).abs() <= DISTRIBUTION_SUM_TOLERANCE, || {
        format!("distribution sums to {sum}, not 1")
    })
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;

    use crate::forest::{Forest, Targets};
    use crate::rng::Rng;
    use crate::runtime::FitControl;
    use crate::split::Criterion;
    use crate::tree::Task;
    use crate::tree::{Leaves, Node, Tree};
    use crate::ForestParams;

    /// A tree of a regression forest on 3 features and 2 outputs.
    fn regression_tree() -> (Tree, Task) {
        let mut rng = Rng::new(1, 0);
        let x = Array2::from_shape_fn((60, 3), |_| rng.unit() as f32);
        let y = Array2::from_shape_fn((60, 2), |(i, k)| x[[i, k]] as f64 * 10.0);
        let params = ForestParams {
            n_estimators: 1,
            criterion: Criterion::SquaredError,
            ..ForestParams::default()
        };
        let forest = Forest::fit_with(
            &params,
            x.view(),
            Targets::Values(y.view()),
            None,
            0..1,
            &FitControl::new(),
        )
        .unwrap();
        (forest.trees()[0].clone(), forest.task())
    }

    #[test]
    fn value_leaves_and_sample_counts_are_validated() {
        let (tree, task) = regression_tree();
        tree.validate(3, task).unwrap();
        assert!(tree.nodes.len() > 3);
        let rejected = |change: &dyn Fn(&mut Tree), task: Task, expected: &str| {
            let mut crafted = tree.clone();
            change(&mut crafted);
            let message = crafted.validate(3, task).unwrap_err();
            assert!(
                message.contains(expected),
                "{expected:?} not in {message:?}"
            );
        };
        fn means(tree: &mut Tree) -> &mut Vec<f64> {
            match &mut tree.leaves {
                Leaves::Values { means, .. } => means,
                Leaves::Classes { .. } => unreachable!("a regression tree"),
            }
        }
        rejected(&|t| means(t)[1] = f64::NAN, task, "not finite");
        rejected(&|t| means(t).push(1.0), task, "of which the leaves use");
        rejected(
            &|t| {
                if let Leaves::Values { prior, .. } = &mut t.leaves {
                    prior[0] = f64::INFINITY;
                }
            },
            task,
            "prior",
        );
        rejected(&|_| {}, Task::Regression { n_outputs: 3 }, "width 2");
        rejected(&|_| {}, Task::Classification { n_classes: 2 }, "width 2");
        rejected(&|t| t.node_samples[1] += 1, task, "samples split into");
        rejected(
            &|t| t.node_samples.pop().map(drop).unwrap(),
            task,
            "sample counts",
        );
        rejected(&|t| t.node_weights[2] = -1.0, task, "sample weight -1");
        // Squared errors have no upper bound, but are not NaN.
        let split = (0..tree.nodes.len())
            .find(|&id| !matches!(tree.nodes[id], Node::Leaf { .. }))
            .unwrap();
        let mut large = tree.clone();
        large.impurity_decreases[split] = 1e300;
        large.validate(3, task).unwrap();
        rejected(
            &|t| t.impurity_decreases[split] = f64::NAN,
            task,
            "impurity decrease NaN",
        );
        rejected(
            &|t| t.impurity_decreases[split] = f64::INFINITY,
            task,
            "impurity decrease inf",
        );
    }
}
