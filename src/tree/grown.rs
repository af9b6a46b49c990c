//! A tree as growth leaves it, before it is laid out flat: pruning by cost complexity,
//! then what the flat layout ([`super::layout`]) reads of it.

use super::grow::Grower;
use super::layout::{lay_out, GrownSplit, GrownTree};
use super::{Leaves, Tree};
use crate::atoms::{Atom, MissingCells, Window};
use crate::data::Feature;
use crate::split::SplitCriterion;

/// A grown node: its samples are the grower's `samples[start..end]`.
#[derive(Debug, Clone, Copy)]
pub(super) struct GrownNode {
    pub start: usize,
    pub end: usize,
    pub depth: usize,
    /// Total weight of its samples.
    pub weight: f64,
    /// Its best split, where it may be split; its samples are in order for it.
    pub split: Option<FoundSplit>,
    /// Its (left, right) children once split.
    pub children: Option<(usize, usize)>,
}

/// The best split found for a node.
#[derive(Debug, Clone, Copy)]
pub(super) struct FoundSplit {
    pub threshold: f32,
    pub missing_left: bool,
    /// The atom in the grower's atom buffers.
    pub atom_start: usize,
    pub atom_len: usize,
    /// The window of a pooled atom.
    pub window: Option<Window>,
    /// The node's samples going left are `samples[start..mid]`.
    pub mid: usize,
    /// Weighted impurity decrease `W I(S) - W_L I(L) - W_R I(R)`.
    pub decrease: f64,
}

/// Minimal cost-complexity pruning (scikit-learn's `ccp_alpha`): turns into leaves the
/// splits whose subtrees do not pay for their leaves, leaving the smallest subtree
/// that minimises `R(T) + ccp_alpha |leaves(T)|`, with `R(T)` the weighted impurity of
/// the leaves over `root_weight`. Weakest-link pruning up to `ccp_alpha` gives this
/// very subtree; it is found here in one pass from the leaves up: a split is pruned
/// where the decrease of its (already pruned) subtree per extra leaf is at most
/// `ccp_alpha`.
pub(super) fn prune_cost_complexity(nodes: &mut [GrownNode], ccp_alpha: f64, root_weight: f64) {
    // Per node, the weighted impurity decrease of its subtree and its leaves.
    let mut decrease = vec![0.0f64; nodes.len()];
    let mut leaves = vec![1usize; nodes.len()];
    // Children are grown after their parents: going backwards meets every subtree
    // before the split above it.
    for id in (0..nodes.len()).rev() {
        let node = &mut nodes[id];
        let (Some((left, right)), Some(split)) = (node.children, node.split) else {
            continue;
        };
        let subtree_decrease = split.decrease + decrease[left] + decrease[right];
        let subtree_leaves = leaves[left] + leaves[right];
        if subtree_decrease / root_weight / (subtree_leaves - 1) as f64 <= ccp_alpha {
            node.children = None;
        } else {
            decrease[id] = subtree_decrease;
            leaves[id] = subtree_leaves;
        }
    }
}

impl<C: SplitCriterion, T: Feature> Grower<'_, C, T> {
    /// The grown nodes as a [`Tree`] with `leaves` (empty) filled, its prior the
    /// tree's whole sample.
    pub(super) fn lay_out(&self, mut leaves: Leaves) -> Tree {
        let (criterion, local) = (self.criterion, self.local);
        let mut leaf_sums = vec![0.0; criterion.n_entries()];
        for sample in 0..local.row_of.len() {
            criterion.leaf_entries(local, sample, |entry, amount| leaf_sums[entry] += amount);
        }
        leaves.set_prior(&leaf_sums, self.root_weight);
        lay_out(
            &mut Growth {
                grower: self,
                leaf_sums,
            },
            leaves,
        )
    }
}

/// A forest's grown tree as the layout reads it.
struct Growth<'g, 'a, C, T: Clone> {
    grower: &'g Grower<'a, C, T>,
    /// The leaf entries of the leaf being laid out, summed.
    leaf_sums: Vec<f64>,
}

impl<C: SplitCriterion, T: Feature> GrownTree for Growth<'_, '_, C, T> {
    fn size(&self, id: usize) -> (u32, f32) {
        let node = &self.grower.nodes[id];
        ((node.end - node.start) as u32, node.weight as f32)
    }

    fn split(&self, id: usize) -> Option<GrownSplit<'_>> {
        let grower = self.grower;
        let node = &grower.nodes[id];
        let ((left, right), split) = node.children.zip(node.split.as_ref())?;
        let atom = split.atom_start..split.atom_start + split.atom_len;
        Some(GrownSplit {
            atom: Atom {
                indices: &grower.atom_indices[atom.clone()],
                weights: &grower.atom_weights[atom],
                window: split.window.as_ref(),
                missing: MissingCells::RescaledPresent,
            },
            threshold: split.threshold,
            missing_left: split.missing_left,
            decrease: split.decrease / grower.root_weight,
            left,
            right,
        })
    }

    fn leaf(&mut self, id: usize) -> (&[f64], f64) {
        let grower = self.grower;
        let (criterion, local) = (grower.criterion, grower.local);
        let node = &grower.nodes[id];
        self.leaf_sums.fill(0.0);
        let mut weight = 0.0;
        for &sample in &grower.samples[node.start..node.end] {
            weight += local.weight_of[sample as usize];
            criterion.leaf_entries(local, sample as usize, |entry, amount| {
                self.leaf_sums[entry] += amount
            });
        }
        (&self.leaf_sums, weight)
    }
}
