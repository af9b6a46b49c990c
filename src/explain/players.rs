//! A tree as TreeSHAP plays it: each split's player (its distinct atom), the cover
//! fractions of its sides, and the leaves' values in the model's output columns.

use std::collections::HashMap;

use super::treeshap::Quadrature;
use crate::atoms::{Atom, Reduce, Window};
use crate::tree::{Node, Tree};

/// The player of a node that splits on no atom: a leaf.
const NO_PLAYER: u32 = u32::MAX;

/// A split as TreeSHAP reads it.
pub(crate) struct Split<'a> {
    pub atom: Atom<'a>,
    pub threshold: f32,
    pub missing_left: bool,
    pub right: usize,
    /// Which player the atom is.
    pub player: u32,
    /// The share of the node's cover that went left.
    pub left_fraction: f64,
}

/// One tree of a model, prepared for TreeSHAP.
pub(crate) struct ExplainedTree<'t> {
    pub tree: &'t Tree,
    /// Values per leaf: the tree's classes or outputs (forests), or 1 (boosted trees).
    pub width: usize,
    /// The model's output column of the tree's first value.
    pub column: usize,
    /// Per node, its player ([`NO_PLAYER`] at leaves).
    player_of: Vec<u32>,
    /// Per player, the first node (in node order) that splits on its atom.
    pub first_node: Vec<u32>,
    /// Per node, the share of its cover that went left (0 at leaves).
    left_fraction: Vec<f64>,
    /// Per node, `width` leaf values times the model's scale (0 for splits).
    values: Vec<f64>,
    /// The depth of the deepest leaf (the root's is 0).
    pub depth: usize,
    /// The rule that integrates TreeSHAP's polynomials of this tree exactly.
    pub quadrature: Quadrature,
}

impl<'t> ExplainedTree<'t> {
    /// `tree`, whose leaf `id` adds `scale * leaf_value(id)` (`width` values) to the
    /// model's outputs from column `column` on.
    pub(crate) fn new(
        tree: &'t Tree,
        width: usize,
        column: usize,
        scale: f64,
        leaf_value: impl Fn(usize) -> Vec<f64>,
    ) -> ExplainedTree<'t> {
        let nodes = tree.nodes();
        let mut players: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut first_node = Vec::new();
        let mut player_of = vec![NO_PLAYER; nodes.len()];
        let mut left_fraction = vec![0.0; nodes.len()];
        let mut values = vec![0.0; nodes.len() * width];
        // Nodes come in depth-first order, each after its parent.
        let mut node_depth = vec![0usize; nodes.len()];
        for (id, node) in nodes.iter().enumerate() {
            if let Some(atom) = tree.split_atom(id) {
                node_depth[id + 1] = node_depth[id] + 1;
                node_depth[right_of(node)] = node_depth[id] + 1;
                let next = players.len() as u32;
                let player = *players.entry(atom_key(&atom)).or_insert(next);
                if player == next {
                    first_node.push(id as u32);
                }
                player_of[id] = player;
                left_fraction[id] = cover_fraction(tree, id + 1, right_of(node));
            } else {
                let row = &mut values[id * width..(id + 1) * width];
                for (v, leaf) in row.iter_mut().zip(leaf_value(id)) {
                    *v = scale * leaf;
                }
            }
        }
        let depth = node_depth.iter().copied().max().unwrap_or(0);
        ExplainedTree {
            tree,
            width,
            column,
            player_of,
            first_node,
            left_fraction,
            values,
            depth,
            // A leaf's polynomials have degree below its number of players, at most
            // the depth.
            quadrature: Quadrature::gauss_legendre(depth.div_ceil(2)),
        }
    }

    /// Number of players: distinct atoms the tree splits on.
    pub(crate) fn n_players(&self) -> usize {
        self.first_node.len()
    }

    /// The split of node `id`, `None` at a leaf.
    #[inline]
    pub(crate) fn split(&self, id: usize) -> Option<Split<'t>> {
        let atom = self.tree.split_atom(id)?;
        let (threshold, missing_left) = match self.tree.nodes()[id] {
            Node::Split {
                threshold,
                missing_left,
                ..
            }
            | Node::SplitOnFeature {
                threshold,
                missing_left,
                ..
            }
            | Node::SplitPooled {
                threshold,
                missing_left,
                ..
            } => (threshold, missing_left),
            Node::Leaf { .. } => unreachable!("a split has an atom"),
        };
        Some(Split {
            atom,
            threshold,
            missing_left,
            right: right_of(&self.tree.nodes()[id]),
            player: self.player_of[id],
            left_fraction: self.left_fraction[id],
        })
    }

    /// Whether node `id` is a leaf.
    #[inline]
    pub(crate) fn is_leaf(&self, id: usize) -> bool {
        self.player_of[id] == NO_PLAYER
    }

    /// The scaled values of leaf `id`.
    #[inline]
    pub(crate) fn leaf_values(&self, id: usize) -> &[f64] {
        &self.values[id * self.width..(id + 1) * self.width]
    }

    /// The atom player `player` splits on.
    pub(crate) fn player_atom(&self, player: usize) -> Atom<'t> {
        self.tree
            .split_atom(self.first_node[player] as usize)
            .expect("a player's node splits")
    }

    /// What the tree predicts knowing nothing of a row: its scaled leaf values
    /// weighted by the cover fractions down to them (TreeSHAP's expected value).
    pub(crate) fn expected_value(&self) -> Vec<f64> {
        let mut expected = vec![0.0; self.width];
        let mut stack = vec![(0usize, 1.0f64)];
        while let Some((id, fraction)) = stack.pop() {
            if self.is_leaf(id) {
                for (e, &v) in expected.iter_mut().zip(self.leaf_values(id)) {
                    *e += fraction * v;
                }
            } else {
                let left = self.left_fraction[id];
                stack.push((id + 1, fraction * left));
                stack.push((right_of(&self.tree.nodes()[id]), fraction * (1.0 - left)));
            }
        }
        expected
    }
}

/// The right child of a split node (0 for a leaf, which has none).
fn right_of(node: &Node) -> usize {
    match *node {
        Node::Split { right, .. }
        | Node::SplitOnFeature { right, .. }
        | Node::SplitPooled { right, .. } => right as usize,
        Node::Leaf { .. } => 0,
    }
}

/// The share of a split's cover its left child `left` took: by the training weight
/// that reached each side, by their sample counts where the weights are 0 (forests
/// saved before format version 3 kept neither), else half.
fn cover_fraction(tree: &Tree, left: usize, right: usize) -> f64 {
    let (weights, samples) = (tree.node_weights(), tree.node_samples());
    let share = |l: f64, r: f64| (l + r > 0.0 && (l + r).is_finite()).then(|| l / (l + r));
    share(weights[left] as f64, weights[right] as f64)
        .or_else(|| share(samples[left] as f64, samples[right] as f64))
        .unwrap_or(0.5)
}

/// What makes two atoms the same player: their indices, weights and window.
fn atom_key(atom: &Atom<'_>) -> Vec<u32> {
    let mut key = Vec::with_capacity(2 * atom.indices.len() + 20);
    key.push(atom.indices.len() as u32);
    key.extend_from_slice(atom.indices);
    key.extend(atom.weights.iter().map(|w| w.to_bits()));
    if let Some(window) = atom.window {
        key.extend(window_key(window));
    }
    key
}

fn window_key(window: &Window) -> impl Iterator<Item = u32> + '_ {
    let reduce = match window.reduce {
        Reduce::Max => 0,
        Reduce::Min => 1,
    };
    window
        .shape
        .iter()
        .copied()
        .chain(window.wrap.iter().map(|&w| w as u32))
        .chain(window.low.iter().map(|&s| s as u32))
        .chain(window.high.iter().map(|&s| s as u32))
        .chain([reduce])
}
