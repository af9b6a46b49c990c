//! What a loaded tree must satisfy before anything walks it or reads its values.
//!
//! Every field of [`Tree`] and [`Node`] is checked here: a new field comes with its
//! check, so that no value read from bytes reaches scoring, importances or statistics
//! unchecked.

use super::{Node, Tree};

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
    /// `n_features` features and `n_classes` classes: nodes in depth-first order with
    /// every split's left child right after it and its right child where its left
    /// subtree ends (so every node is reached once and every walk ends), atoms stored
    /// one after another in node order over distinct, ascending features below
    /// `n_features` with finite weights, finite thresholds, leaf distributions stored
    /// in node order that are finite, non-negative and sum to 1, and impurity
    /// decreases within what a split can bring. The error names the first node at fault.
    pub(crate) fn validate(&self, n_features: usize, n_classes: usize) -> Result<(), String> {
        let n_nodes = self.nodes.len();
        ensure(n_nodes > 0, || "no nodes".into())?;
        ensure(self.n_classes as usize == n_classes, || {
            format!(
                "{} classes where the forest has {n_classes}",
                self.n_classes
            )
        })?;
        ensure(self.impurity_decreases.len() == n_nodes, || {
            format!(
                "{} impurity decreases for {n_nodes} nodes",
                self.impurity_decreases.len()
            )
        })?;
        ensure(self.atom_weights.len() == self.atom_indices.len(), || {
            format!(
                "{} atom weights for {} atom features",
                self.atom_weights.len(),
                self.atom_indices.len()
            )
        })?;
        self.validate_order()?;
        // Weighted Gini impurity is at most the weight, entropy at most log2(classes)
        // times it; decreases are stored relative to the root's weight.
        let largest_decrease = (n_classes as f64).log2().max(1.0) + IMPURITY_DECREASE_SLACK;
        let (mut atom_end, mut leaf_end) = (0usize, 0usize);
        for (id, (node, &decrease)) in self.nodes.iter().zip(&self.impurity_decreases).enumerate() {
            let at = |what: String| format!("node {id}: {what}");
            let decrease = decrease as f64;
            match *node {
                Node::Split {
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
                Node::Leaf { posterior } => {
                    ensure(decrease == 0.0, || {
                        at(format!("a leaf with impurity decrease {decrease}"))
                    })?;
                    if let Some(offset) = posterior {
                        ensure(offset as usize == leaf_end, || {
                            at(format!(
                                "distribution at {offset} where the next one starts at \
                                 {leaf_end}"
                            ))
                        })?;
                        leaf_end += n_classes;
                        let values = self.leaf_values.get(offset as usize..leaf_end);
                        let values =
                            values.ok_or_else(|| at("distribution past the end".into()))?;
                        check_distribution(values).map_err(at)?;
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
        ensure(leaf_end == self.leaf_values.len(), || {
            format!(
                "{} leaf values, of which the leaves use {leaf_end}",
                self.leaf_values.len()
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
            if let Node::Split { right, .. } | Node::SplitOnFeature { right, .. } = self.nodes[id] {
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
