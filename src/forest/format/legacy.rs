//! Versions 1 to 5 of the saved forest, read through frozen copies of their serde
//! layouts and converted to the current types. These definitions must never change:
//! they are what the bytes of those versions mean.
//!
//! Version 2 only appended `Node::SplitOnFeature` to version 1, so one layout reads
//! both. Versions 3 to 5 differ from the current forest only in their trees (frozen
//! as `TreeV3` to `TreeV5`): version 3 (and version 1 of boosted models) lacked the
//! trees' windows of pooled splits, version 4 their rule on missing cells, version 5
//! kept impurity decreases in float32.

use serde::Deserialize;

use crate::atoms::MissingCells;
use crate::error::Result;
use crate::forest::Forest;
use crate::runtime::frame::decode_exact;
use crate::tree::Task;
use crate::tree::{Leaves, Node, Tree};

/// A version 3, 4 or 5 forest, whose trees are `TreeV3`, `TreeV4` or `TreeV5`. These
/// definitions must never change.
#[derive(Deserialize)]
struct ForestOf<OldTree> {
    n_features: usize,
    task: Task,
    trees: Vec<OldTree>,
}

/// Reads the body of a forest of version 3 to 5, whose trees `tree` brings up to date.
pub(super) fn read_trees_of<OldTree: for<'de> Deserialize<'de>>(
    body: &[u8],
    tree: impl Fn(OldTree) -> Tree,
) -> Result<Forest> {
    let saved: ForestOf<OldTree> = decode_exact(body)?;
    Ok(Forest::from_trees(
        saved.n_features,
        saved.task,
        saved.trees.into_iter().map(tree).collect(),
    ))
}

/// Where missing projections go at the splits of version 1 and 2 forests, which were
/// trained without them and kept no per-node sample counts to find the larger side:
/// right, where `value <= threshold` sends them.
const MISSING_LEFT: bool = false;

#[derive(Deserialize)]
struct ForestV2 {
    n_features: usize,
    n_classes: usize,
    trees: Vec<TreeV2>,
}

#[derive(Deserialize)]
struct TreeV2 {
    nodes: Vec<NodeV2>,
    impurity_decreases: Vec<f32>,
    atom_indices: Vec<u32>,
    atom_weights: Vec<f32>,
    leaf_values: Vec<f32>,
    n_classes: u32,
}

#[derive(Deserialize)]
enum NodeV2 {
    Split {
        right: u32,
        threshold: f32,
        atom_start: u32,
        atom_len: u32,
    },
    Leaf {
        posterior: Option<u32>,
    },
    SplitOnFeature {
        right: u32,
        threshold: f32,
        feature: u32,
        weight: f32,
    },
}

/// Reads the body of a version 1 or 2 forest.
pub(super) fn read_v2(body: &[u8]) -> Result<Forest> {
    let saved: ForestV2 = decode_exact(body)?;
    Ok(Forest::from_trees(
        saved.n_features,
        Task::Classification {
            n_classes: saved.n_classes,
        },
        saved.trees.into_iter().map(TreeV2::into_current).collect(),
    ))
}

impl TreeV2 {
    fn into_current(self) -> Tree {
        let nodes = self
            .nodes
            .into_iter()
            .map(|node| match node {
                NodeV2::Split {
                    right,
                    threshold,
                    atom_start,
                    atom_len,
                } => Node::Split {
                    right,
                    threshold,
                    atom_start,
                    atom_len,
                    missing_left: MISSING_LEFT,
                },
                NodeV2::Leaf { posterior } => Node::Leaf { value: posterior },
                NodeV2::SplitOnFeature {
                    right,
                    threshold,
                    feature,
                    weight,
                } => Node::SplitOnFeature {
                    right,
                    threshold,
                    feature,
                    weight,
                    missing_left: MISSING_LEFT,
                },
            })
            .collect();
        let n_nodes = self.impurity_decreases.len();
        Tree {
            nodes,
            impurity_decreases: self.impurity_decreases.into_iter().map(f64::from).collect(),
            // Versions 1 and 2 did not keep per-node sample counts.
            node_samples: vec![0; n_nodes],
            node_weights: vec![0.0; n_nodes],
            atom_indices: self.atom_indices,
            atom_weights: self.atom_weights,
            leaves: Leaves::Classes {
                n_classes: self.n_classes,
                distributions: self.leaf_values,
            },
            windows: Vec::new(),
            missing_cells: MissingCells::AnyCellMissing,
        }
    }
}
