//! Trees as earlier saved versions laid them out, read through frozen copies of their
//! serde layouts. These definitions must never change: they are what the bytes of
//! those versions mean.

use serde::Deserialize;

use super::{Leaves, Node, Tree};
use crate::atoms::{MissingCells, Window};

/// A tree of forest version 3 and boosted version 1. Its nodes and leaves read as the
/// current types: `Node::SplitPooled` came after every variant they held, and
/// `Leaves` has not changed since.
#[derive(Deserialize)]
pub(crate) struct TreeV3 {
    nodes: Vec<Node>,
    impurity_decreases: Vec<f32>,
    node_samples: Vec<u32>,
    node_weights: Vec<f32>,
    atom_indices: Vec<u32>,
    atom_weights: Vec<f32>,
    leaves: Leaves,
}

impl TreeV3 {
    /// The tree, without pooled splits: a version 4 tree without windows.
    pub(crate) fn into_current(self) -> Tree {
        TreeV4 {
            nodes: self.nodes,
            impurity_decreases: self.impurity_decreases,
            node_samples: self.node_samples,
            node_weights: self.node_weights,
            atom_indices: self.atom_indices,
            atom_weights: self.atom_weights,
            leaves: self.leaves,
            windows: Vec::new(),
        }
        .into_current()
    }
}

/// A tree of forest version 4, boosted version 2 and isolation version 1: the
/// current layout but for the rule on missing cells, which was
/// [`MissingCells::AnyCellMissing`].
#[derive(Deserialize)]
pub(crate) struct TreeV4 {
    nodes: Vec<Node>,
    impurity_decreases: Vec<f32>,
    node_samples: Vec<u32>,
    node_weights: Vec<f32>,
    atom_indices: Vec<u32>,
    atom_weights: Vec<f32>,
    leaves: Leaves,
    windows: Vec<Window>,
}

impl TreeV4 {
    /// The tree, scored with the rule it was grown with: a version 5 tree of that
    /// rule.
    pub(crate) fn into_current(self) -> Tree {
        TreeV5 {
            nodes: self.nodes,
            impurity_decreases: self.impurity_decreases,
            node_samples: self.node_samples,
            node_weights: self.node_weights,
            atom_indices: self.atom_indices,
            atom_weights: self.atom_weights,
            leaves: self.leaves,
            windows: self.windows,
            missing_cells: MissingCells::AnyCellMissing,
        }
        .into_current()
    }
}

/// A tree of forest version 5, boosted version 3 and isolation version 2: the
/// current layout but for the impurity decreases, which were float32 (a regression
/// split's decrease beyond `f32::MAX`, from targets above about 1.8e19, was infinite).
#[derive(Deserialize)]
pub(crate) struct TreeV5 {
    nodes: Vec<Node>,
    impurity_decreases: Vec<f32>,
    node_samples: Vec<u32>,
    node_weights: Vec<f32>,
    atom_indices: Vec<u32>,
    atom_weights: Vec<f32>,
    leaves: Leaves,
    windows: Vec<Window>,
    missing_cells: MissingCells,
}

impl TreeV5 {
    /// The tree, its decreases widened to float64.
    pub(crate) fn into_current(self) -> Tree {
        Tree {
            nodes: self.nodes,
            impurity_decreases: self.impurity_decreases.into_iter().map(f64::from).collect(),
            node_samples: self.node_samples,
            node_weights: self.node_weights,
            atom_indices: self.atom_indices,
            atom_weights: self.atom_weights,
            leaves: self.leaves,
            windows: self.windows,
            missing_cells: self.missing_cells,
        }
    }
}
