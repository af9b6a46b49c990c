//! Trees: growth (Algorithm 1 of the seeds), honest leaves, flat storage and scoring.

mod frontier;
mod grow;
mod grown;
mod honest;
mod importance;
mod layout;
mod leaves;
mod legacy;
mod limits;
mod task;
mod validate;

pub(crate) use frontier::Frontier;
pub(crate) use grow::{grow_tree, GrowSettings, SearchRows};
pub use honest::HonestPrior;
pub(crate) use importance::normalised;
pub(crate) use layout::{lay_out, GrownSplit, GrownTree};
pub use leaves::Leaves;
pub(crate) use legacy::{TreeV3, TreeV4, TreeV5};
pub(crate) use limits::TreeLimits;
pub use task::Task;

use serde::{Deserialize, Serialize};

use crate::atoms::{Atom, MissingCells, Window};
use crate::data::Feature;

/// One node, stored flat in depth-first order: a split's left child is the next node
/// (so walking left stays in the same cache line) and its right child comes later.
///
/// A sample whose projection is missing (it touches a missing feature) goes to the
/// side `missing_left` names: the side learned from the training samples with a
/// missing projection at the node, or the side that took more training samples where
/// none had one (scikit-learn's rule).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Node {
    /// Samples whose projection on the atom is `<= threshold` go to the left child,
    /// node `id + 1`; the others to `right`.
    Split {
        /// Node id of the right child.
        right: u32,
        /// Split threshold on the projected value.
        threshold: f32,
        /// Start of the atom in the tree's atom buffers.
        atom_start: u32,
        /// Number of nonzeros of the atom.
        atom_len: u32,
        /// Whether samples with a missing projection go left.
        missing_left: bool,
    },
    /// A leaf; `value` is the offset of its class distribution or mean values in the
    /// tree's [`Leaves`], read with [`Tree::posterior`] or [`Tree::leaf_values`], or
    /// `None` for an honest leaf that casts no vote.
    Leaf {
        /// Offset of the leaf's values, if the leaf votes.
        value: Option<u32>,
    },
    /// A split whose atom has a single nonzero, `weight` at `feature` (every split of an
    /// axis-aligned forest). Kept in the node itself, it spares scoring a dependent read
    /// of the atom buffers at every level. Added in format version 2, after the
    /// variants of version 1, so that version 1 forests still read.
    SplitOnFeature {
        /// Node id of the right child.
        right: u32,
        /// Split threshold on `weight * x[feature]`.
        threshold: f32,
        /// The feature.
        feature: u32,
        /// Its weight (1, or -1 in a sparse oblique forest).
        weight: f32,
        /// Whether samples with a missing value at `feature` go left.
        missing_left: bool,
    },
    /// A split on a pooled atom: the base atom in the tree's atom buffers and its
    /// window of shifts in the tree's windows. Added in format version 4 (boosted
    /// models: 2), after the older variants, so that older models still read.
    SplitPooled {
        /// Node id of the right child.
        right: u32,
        /// Split threshold on the pooled value.
        threshold: f32,
        /// Start of the base atom in the tree's atom buffers.
        atom_start: u32,
        /// Number of nonzeros of the base atom.
        atom_len: u32,
        /// Index of the window in the tree's windows.
        window: u32,
        /// Whether samples with a missing pooled value go left.
        missing_left: bool,
    },
}

/// Whether a sample whose projection is `value` goes to the left child of a split at
/// `threshold` that sends missing projections left when `missing_left`.
#[inline(always)]
pub(crate) fn goes_left(value: f32, threshold: f32, missing_left: bool) -> bool {
    // Bitwise, without branches: a missing value fails the comparison.
    (value <= threshold) | (missing_left & value.is_nan())
}

/// Shape statistics of one tree (seed 003, Fig. 3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeStats {
    /// Depth of the deepest leaf (a lone root has depth 0).
    pub max_depth: usize,
    /// Number of leaves.
    pub n_leaves: usize,
    /// Number of nodes, splits and leaves.
    pub n_nodes: usize,
    /// Mean depth over leaves.
    pub mean_leaf_depth: f64,
}

impl Node {
    /// A split's right child, threshold and side for missing values, whatever kind of
    /// split it is; `None` for a leaf.
    pub fn split_sides(&self) -> Option<(u32, f32, bool)> {
        match *self {
            Node::Split {
                right,
                threshold,
                missing_left,
                ..
            }
            | Node::SplitOnFeature {
                right,
                threshold,
                missing_left,
                ..
            }
            | Node::SplitPooled {
                right,
                threshold,
                missing_left,
                ..
            } => Some((right, threshold, missing_left)),
            Node::Leaf { .. } => None,
        }
    }

    /// Points a split at its right child; a leaf has none.
    pub(crate) fn set_right(&mut self, id: u32) {
        if let Node::Split { right, .. }
        | Node::SplitOnFeature { right, .. }
        | Node::SplitPooled { right, .. } = self
        {
            *right = id;
        }
    }
}

/// A trained tree: nodes, their split atoms in shared flat buffers, per-node sample
/// counts, and the leaves' class distributions or mean values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    pub(crate) nodes: Vec<Node>,
    /// Per node, the split's weighted impurity decrease divided by the root's weight
    /// (0 for leaves); kept apart from the nodes, which scoring walks. In float64:
    /// a regression split's decrease is in the square of y's units.
    pub(crate) impurity_decreases: Vec<f64>,
    /// Per node, how many of the samples that grew the tree reached it (each sample
    /// once, however often the bootstrap drew it).
    pub(crate) node_samples: Vec<u32>,
    /// Per node, the total weight of those samples (sample weight times bootstrap
    /// count).
    pub(crate) node_weights: Vec<f32>,
    pub(crate) atom_indices: Vec<u32>,
    pub(crate) atom_weights: Vec<f32>,
    pub(crate) leaves: Leaves,
    /// The windows of the pooled splits, in node order.
    pub(crate) windows: Vec<Window>,
    /// What a split's projection is when some of its cells are missing: the rule the
    /// tree was grown with, which scoring must follow.
    pub(crate) missing_cells: MissingCells,
}

impl Tree {
    /// A tree without nodes whose leaves will be of the kind of `leaves` (empty).
    pub(crate) fn empty(leaves: Leaves) -> Tree {
        Tree {
            nodes: Vec::new(),
            impurity_decreases: Vec::new(),
            node_samples: Vec::new(),
            node_weights: Vec::new(),
            atom_indices: Vec::new(),
            atom_weights: Vec::new(),
            leaves,
            windows: Vec::new(),
            missing_cells: MissingCells::RescaledPresent,
        }
    }

    /// Appends a split node on `atom` at `threshold`, sending missing projections
    /// left when `missing_left`, whose right child is yet unknown.
    pub(crate) fn push_split(&mut self, atom: Atom<'_>, threshold: f32, missing_left: bool) {
        if let Some(window) = atom.window {
            self.nodes.push(Node::SplitPooled {
                right: 0,
                threshold,
                atom_start: self.atom_indices.len() as u32,
                atom_len: atom.indices.len() as u32,
                window: self.windows.len() as u32,
                missing_left,
            });
            self.atom_indices.extend_from_slice(atom.indices);
            self.atom_weights.extend_from_slice(atom.weights);
            self.windows.push(*window);
        } else if let ([feature], [weight]) = (atom.indices, atom.weights) {
            self.nodes.push(Node::SplitOnFeature {
                right: 0,
                threshold,
                feature: *feature,
                weight: *weight,
                missing_left,
            });
        } else {
            self.nodes.push(Node::Split {
                right: 0,
                threshold,
                atom_start: self.atom_indices.len() as u32,
                atom_len: atom.indices.len() as u32,
                missing_left,
            });
            self.atom_indices.extend_from_slice(atom.indices);
            self.atom_weights.extend_from_slice(atom.weights);
        }
    }

    /// Gives back the spare capacity that growing left in the buffers: a forest holds
    /// hundreds of trees, each grown by pushing node after node.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.nodes.shrink_to_fit();
        self.impurity_decreases.shrink_to_fit();
        self.node_samples.shrink_to_fit();
        self.node_weights.shrink_to_fit();
        self.atom_indices.shrink_to_fit();
        self.atom_weights.shrink_to_fit();
        self.leaves.shrink_to_fit();
        self.windows.shrink_to_fit();
    }

    /// The nodes, root first.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The leaves' values: class distributions or mean target values.
    pub fn leaves(&self) -> &Leaves {
        &self.leaves
    }

    /// Per node, how many of the samples that grew the tree reached it (each sample
    /// once, however often the bootstrap drew it; honest trees count the samples
    /// that chose the splits, not those that filled the leaves).
    pub fn node_samples(&self) -> &[u32] {
        &self.node_samples
    }

    /// Per node, the total weight of the samples of [`Self::node_samples`] (sample
    /// weight times bootstrap count).
    pub fn node_weights(&self) -> &[f32] {
        &self.node_weights
    }

    /// What the tree's split projections are when some of their cells are missing.
    pub fn missing_cells(&self) -> MissingCells {
        self.missing_cells
    }

    /// The atom a split node projects on.
    pub fn atom(&self, atom_start: u32, atom_len: u32) -> Atom<'_> {
        let range = atom_start as usize..atom_start as usize + atom_len as usize;
        Atom {
            indices: &self.atom_indices[range.clone()],
            weights: &self.atom_weights[range],
            window: None,
            missing: self.missing_cells,
        }
    }

    /// The atom split node `id` projects on, pooled or plain; `None` at a leaf.
    pub fn split_atom(&self, id: usize) -> Option<Atom<'_>> {
        match self.nodes[id] {
            Node::Split {
                atom_start,
                atom_len,
                ..
            } => Some(self.atom(atom_start, atom_len)),
            Node::SplitOnFeature {
                ref feature,
                ref weight,
                ..
            } => Some(Atom {
                indices: std::slice::from_ref(feature),
                weights: std::slice::from_ref(weight),
                window: None,
                missing: self.missing_cells,
            }),
            Node::SplitPooled {
                atom_start,
                atom_len,
                window,
                ..
            } => Some(Atom {
                window: Some(&self.windows[window as usize]),
                ..self.atom(atom_start, atom_len)
            }),
            Node::Leaf { .. } => None,
        }
    }

    /// The child `row` goes to from split node `id`, or `None` when `id` is a leaf.
    #[inline(always)]
    fn descend<T: Feature>(&self, id: u32, row: &[T]) -> Option<u32> {
        let (value, threshold, right, missing_left) = match self.nodes[id as usize] {
            Node::Split {
                right,
                threshold,
                atom_start,
                atom_len,
                missing_left,
            } => (
                self.atom(atom_start, atom_len).project(row),
                threshold,
                right,
                missing_left,
            ),
            Node::SplitOnFeature {
                right,
                threshold,
                feature,
                weight,
                missing_left,
            } => {
                // The same sum as `Atom::project` forms for a one-term atom, so scoring
                // sees the values training saw.
                let value = 0.0 + weight * row[feature as usize].to_f32();
                (value, threshold, right, missing_left)
            }
            Node::SplitPooled {
                right,
                threshold,
                missing_left,
                ..
            } => {
                let atom = self.split_atom(id as usize).expect("a split");
                (atom.project(row), threshold, right, missing_left)
            }
            Node::Leaf { .. } => return None,
        };
        Some(if goes_left(value, threshold, missing_left) {
            id + 1
        } else {
            right
        })
    }

    /// Calls `visit` with the id of every node `row` passes through, root to leaf.
    pub fn path_of<T: Feature>(&self, row: &[T], mut visit: impl FnMut(u32)) {
        let mut id = 0;
        visit(id);
        while let Some(child) = self.descend(id, row) {
            id = child;
            visit(id);
        }
    }

    /// Id of the leaf `row` falls into.
    #[inline]
    pub fn leaf_of<T: Feature>(&self, row: &[T]) -> usize {
        let mut id = 0;
        while let Some(child) = self.descend(id, row) {
            id = child;
        }
        id as usize
    }

    /// Class distribution of leaf `id`, or `None` when it casts no vote or the tree
    /// predicts values.
    #[inline]
    pub fn posterior(&self, id: usize) -> Option<&[f32]> {
        match (&self.nodes[id], &self.leaves) {
            (
                Node::Leaf {
                    value: Some(offset),
                },
                Leaves::Classes {
                    n_classes,
                    distributions,
                },
            ) => Some(&distributions[*offset as usize..][..*n_classes as usize]),
            _ => None,
        }
    }

    /// Mean target values of leaf `id`, or `None` when it casts no vote or the tree
    /// predicts classes.
    #[inline]
    pub fn leaf_values(&self, id: usize) -> Option<&[f64]> {
        match (&self.nodes[id], &self.leaves) {
            (
                Node::Leaf {
                    value: Some(offset),
                },
                Leaves::Values {
                    n_outputs, means, ..
                },
            ) => Some(&means[*offset as usize..][..*n_outputs as usize]),
            _ => None,
        }
    }

    /// Depth, leaf count and mean leaf depth.
    pub fn stats(&self) -> TreeStats {
        let mut depth = vec![0usize; self.nodes.len()];
        let (mut max_depth, mut n_leaves, mut depth_sum) = (0, 0, 0);
        for (id, node) in self.nodes.iter().enumerate() {
            match *node {
                Node::Split { right, .. }
                | Node::SplitOnFeature { right, .. }
                | Node::SplitPooled { right, .. } => {
                    depth[id + 1] = depth[id] + 1;
                    depth[right as usize] = depth[id] + 1;
                }
                Node::Leaf { .. } => {
                    n_leaves += 1;
                    depth_sum += depth[id];
                    max_depth = max_depth.max(depth[id]);
                }
            }
        }
        TreeStats {
            max_depth,
            n_leaves,
            n_nodes: self.nodes.len(),
            mean_leaf_depth: depth_sum as f64 / n_leaves as f64,
        }
    }
}
