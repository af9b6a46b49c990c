//! A tree as growth leaves it, before it is laid out flat: pruning by cost complexity,
//! then the flat layout scoring walks.

use super::grow::Grower;
use super::{Leaves, Node, Tree};
use crate::atoms::{Atom, Window};
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
    /// The grown nodes as a [`Tree`] with `leaves` (empty) filled: depth first, a
    /// split's left child right after it.
    pub(super) fn lay_out(&self, leaves: Leaves) -> Tree {
        let (criterion, local) = (self.criterion, self.local);
        let mut tree = Tree::empty(leaves);
        let mut leaf_sums = vec![0.0; criterion.n_entries()];
        for sample in 0..local.row_of.len() {
            criterion.leaf_entries(local, sample, |entry, amount| leaf_sums[entry] += amount);
        }
        tree.leaves.set_prior(&leaf_sums, self.root_weight);
        // (grown node, the laid-out split whose right child it is)
        let mut stack = vec![(0usize, None::<usize>)];
        while let Some((id, right_of)) = stack.pop() {
            let index = tree.nodes.len();
            if let Some(parent) = right_of {
                tree.nodes[parent].set_right(index as u32);
            }
            let node = &self.nodes[id];
            tree.node_samples.push((node.end - node.start) as u32);
            tree.node_weights.push(node.weight as f32);
            match (node.children, node.split) {
                (Some((left, right)), Some(split)) => {
                    let atom = split.atom_start..split.atom_start + split.atom_len;
                    let atom = Atom {
                        indices: &self.atom_indices[atom.clone()],
                        weights: &self.atom_weights[atom],
                        window: split.window.as_ref(),
                    };
                    tree.push_split(atom, split.threshold, split.missing_left);
                    tree.impurity_decreases
                        .push((split.decrease / self.root_weight) as f32);
                    stack.push((right, Some(index)));
                    stack.push((left, None));
                }
                _ => {
                    let value = tree.leaves.next_offset();
                    tree.nodes.push(Node::Leaf { value: Some(value) });
                    tree.impurity_decreases.push(0.0);
                    leaf_sums.fill(0.0);
                    let mut weight = 0.0;
                    for &sample in &self.samples[node.start..node.end] {
                        weight += local.weight_of[sample as usize];
                        criterion.leaf_entries(local, sample as usize, |entry, amount| {
                            leaf_sums[entry] += amount
                        });
                    }
                    tree.leaves.push(&leaf_sums, weight);
                }
            }
        }
        tree
    }
}
