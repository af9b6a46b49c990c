//! The flat layout of a grown tree, written once for every grower: forests' trees and
//! boosted trees alike are laid out depth first, a split's left child right after it.

use super::{Leaves, Node, Tree};
use crate::atoms::Atom;

/// A split of a grown tree, as the flat layout stores it.
pub(crate) struct GrownSplit<'a> {
    pub atom: Atom<'a>,
    pub threshold: f32,
    /// Whether samples with a missing projection go left.
    pub missing_left: bool,
    /// What the tree keeps as the split's impurity decrease (a boosted tree: its gain).
    pub decrease: f64,
    /// The grown ids of its children.
    pub left: usize,
    pub right: usize,
}

/// A tree as a grower leaves it: nodes by grown id, the root 0.
pub(crate) trait GrownTree {
    /// How many samples reached node `id`, and the weight they carry in the fit.
    fn size(&self, id: usize) -> (u32, f32);
    /// The split of node `id`, or `None` where it stays a leaf.
    fn split(&self, id: usize) -> Option<GrownSplit<'_>>;
    /// The leaf entries of leaf `id` summed over its samples, and their weight: the
    /// leaf stores their quotient ([`Leaves::push`]).
    fn leaf(&mut self, id: usize) -> (&[f64], f64);
}

/// `grown` as a [`Tree`] whose leaves, of the kind of `leaves` (no leaf yet, its prior
/// set), are filled from [`GrownTree::leaf`]: depth first, a split's left child right
/// after it, so that walking left stays in the same cache line.
pub(crate) fn lay_out(grown: &mut impl GrownTree, leaves: Leaves) -> Tree {
    let mut tree = Tree::empty(leaves);
    // (grown node, the laid-out split whose right child it is)
    let mut stack = vec![(0usize, None::<usize>)];
    while let Some((id, right_of)) = stack.pop() {
        let index = tree.nodes.len();
        if let Some(parent) = right_of {
            tree.nodes[parent].set_right(index as u32);
        }
        let (samples, weight) = grown.size(id);
        tree.node_samples.push(samples);
        tree.node_weights.push(weight);
        if let Some(split) = grown.split(id) {
            tree.push_split(split.atom, split.threshold, split.missing_left);
            tree.impurity_decreases.push(split.decrease);
            stack.push((split.right, Some(index)));
            stack.push((split.left, None));
        } else {
            let value = tree.leaves.next_offset();
            tree.nodes.push(Node::Leaf { value: Some(value) });
            tree.impurity_decreases.push(0.0);
            let (sums, weight) = grown.leaf(id);
            tree.leaves.push(sums, weight);
        }
    }
    tree.shrink_to_fit();
    tree
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atoms::MissingCells;

    /// Grown best first: the root's right child (2) was grown before its left
    /// child's children (3, 4).
    struct BestFirst {
        children: [Option<(usize, usize)>; 5],
        features: [u32; 5],
        weights: [f32; 5],
        leaf: [f64; 1],
    }

    impl GrownTree for BestFirst {
        fn size(&self, id: usize) -> (u32, f32) {
            (10 * id as u32, id as f32)
        }

        fn split(&self, id: usize) -> Option<GrownSplit<'_>> {
            let (left, right) = self.children[id]?;
            Some(GrownSplit {
                atom: Atom {
                    indices: std::slice::from_ref(&self.features[id]),
                    weights: std::slice::from_ref(&self.weights[id]),
                    window: None,
                    missing: MissingCells::RescaledPresent,
                },
                threshold: 0.5 + id as f32,
                missing_left: id == 1,
                decrease: id as f64 + 0.25,
                left,
                right,
            })
        }

        fn leaf(&mut self, id: usize) -> (&[f64], f64) {
            self.leaf = [2.0 * id as f64];
            (&self.leaf, 2.0)
        }
    }

    #[test]
    fn grown_nodes_are_laid_out_depth_first_left_child_next() {
        let mut grown = BestFirst {
            children: [Some((1, 2)), Some((3, 4)), None, None, None],
            features: [7, 8, 9, 10, 11],
            weights: [1.0; 5],
            leaf: [0.0],
        };
        let tree = lay_out(&mut grown, Leaves::values(1));
        // Depth first: grown 0, 1, 3, 4, then 2.
        let order = [0, 1, 3, 4, 2];
        let samples: Vec<u32> = order.iter().map(|&id| 10 * id as u32).collect();
        assert_eq!(tree.node_samples(), samples);
        let weights: Vec<f32> = order.iter().map(|&id| id as f32).collect();
        assert_eq!(tree.node_weights(), weights);
        assert_eq!(tree.impurity_decreases, [0.25, 1.25, 0.0, 0.0, 0.0]);
        let split = |feature, threshold, right, missing_left| Node::SplitOnFeature {
            right,
            threshold,
            feature,
            weight: 1.0,
            missing_left,
        };
        assert_eq!(tree.nodes()[0], split(7, 0.5, 4, false));
        assert_eq!(tree.nodes()[1], split(8, 1.5, 3, true));
        for (laid, grown_id) in [(2, 3), (3, 4), (4, 2)] {
            // Each leaf holds its own sums over its weight.
            assert_eq!(tree.leaf_values(laid), Some(&[grown_id as f64][..]));
        }
    }
}
