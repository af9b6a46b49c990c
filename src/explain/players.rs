//! A tree as TreeSHAP plays it: each split's player (its distinct atom), the cover
//! fractions of its sides, and the leaves' values in the model's output columns.

use std::collections::HashMap;

use super::bernstein::DegreeRatios;
use super::engine::MAX_EXPLAINED_DEPTH;
use super::quadrature::Quadrature;
use crate::atoms::{Atom, Reduce, Window};
use crate::error::{invalid, Result};
use crate::tree::Tree;

/// The player of a node that splits on no atom: a leaf.
const NO_PLAYER: u32 = u32::MAX;

/// A node as TreeSHAP's walk reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkNode {
    /// Its player ([`NO_PLAYER`] at leaves).
    pub player: u32,
    /// The right child of a split (0 at leaves).
    pub right: u32,
    /// The split's threshold, and whether a missing projection goes left.
    pub threshold: f32,
    pub missing_left: bool,
    /// Whether the splits above it test distinct atoms: then the leaves below it
    /// are the walk's polynomials'; else each is played on its own
    /// ([`super::quadrature`]).
    pub clean: bool,
    /// Whether a split above it tests its atom.
    pub repeats: bool,
    /// Whether some leaf below it (or itself) is not clean and has a value.
    pub unclean_leaves: bool,
    /// The degree of its subtree's polynomial: its height over the clean leaves
    /// that have a value.
    pub degree: u32,
    /// Its outputs (an index range into [`ExplainedTree::outputs`]): at a leaf the
    /// ones its value is not 0 in, at a clean split those of its clean children.
    pub outputs_start: u32,
    /// The number of its outputs: 0 where nothing below it enters the polynomials.
    pub n_outputs: u32,
    /// The share of the node's cover that went left.
    pub left_fraction: f64,
}

impl WalkNode {
    /// Whether the node is a leaf.
    #[inline]
    pub(crate) fn is_leaf(&self) -> bool {
        self.player == NO_PLAYER
    }

    /// Its range of [`ExplainedTree::outputs`].
    #[inline]
    pub(crate) fn outputs(&self) -> std::ops::Range<usize> {
        self.outputs_start as usize..(self.outputs_start + self.n_outputs) as usize
    }
}

/// One tree of a model, prepared for TreeSHAP.
pub(crate) struct ExplainedTree<'t> {
    pub tree: &'t Tree,
    /// Values per leaf: the tree's classes or outputs (forests), or 1 (boosted trees).
    pub width: usize,
    /// The model's output column of the tree's first value.
    pub column: usize,
    /// The nodes, in the tree's order.
    pub nodes: Vec<WalkNode>,
    /// Per player, the first node (in node order) that splits on its atom.
    pub first_node: Vec<u32>,
    /// Per node, its outputs (of `width`), in ascending order.
    pub outputs: Vec<u32>,
    /// Aligned with `outputs`: the place of a clean node's output among its
    /// parent's.
    pub parent_slot: Vec<u32>,
    /// Aligned with `outputs`: a leaf's value in the output, times the model's scale.
    pub leaf_values: Vec<f64>,
    /// Per clean split with outputs: its player and its range of `outputs`.
    pub split_outputs: Vec<(u32, u32, u32)>,
    /// The ratios of the walk's polynomials of this tree's degrees.
    pub ratios: DegreeRatios,
    /// The rule that integrates the paths of this tree's leaves exactly.
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
    ) -> Result<ExplainedTree<'t>> {
        let depth = tree.stats().max_depth;
        if depth > MAX_EXPLAINED_DEPTH {
            return Err(invalid(
                "max_depth",
                format!(
                    "contributions are computed for trees of depth at most \
                     {MAX_EXPLAINED_DEPTH}; this model has a tree of depth {depth}: \
                     train it with a smaller max_depth"
                ),
            ));
        }
        let n_nodes = tree.nodes().len();
        let mut players: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut first_node = Vec::new();
        let mut nodes = Vec::with_capacity(n_nodes);
        for (id, node) in tree.nodes().iter().enumerate() {
            let mut walk_node = WalkNode {
                player: NO_PLAYER,
                right: 0,
                threshold: 0.0,
                missing_left: false,
                clean: true,
                repeats: false,
                unclean_leaves: false,
                degree: 0,
                outputs_start: 0,
                n_outputs: 0,
                left_fraction: 0.0,
            };
            if let (Some(atom), Some((right, threshold, missing_left))) =
                (tree.split_atom(id), node.split_sides())
            {
                let right = right as usize;
                let next = players.len() as u32;
                let player = *players.entry(atom_key(&atom)).or_insert(next);
                if player == next {
                    first_node.push(id as u32);
                }
                walk_node = WalkNode {
                    player,
                    right: right as u32,
                    threshold,
                    missing_left,
                    left_fraction: cover_fraction(tree, id + 1, right),
                    ..walk_node
                };
            }
            nodes.push(walk_node);
        }
        mark_clean(&mut nodes, first_node.len());
        let (outputs, parent_slot, leaf_values) = leaf_outputs(&mut nodes, |id| {
            leaf_value(id).into_iter().map(|v| scale * v).collect()
        });
        let split_outputs = (nodes.iter())
            .filter(|node| !node.is_leaf() && node.clean && node.n_outputs > 0)
            .map(|node| (node.player, node.outputs_start, node.n_outputs))
            .collect();
        Ok(ExplainedTree {
            tree,
            width,
            column,
            nodes,
            first_node,
            outputs,
            parent_slot,
            leaf_values,
            split_outputs,
            ratios: DegreeRatios::up_to(depth),
            // A leaf's polynomials have degree below its number of players, at most
            // the depth.
            quadrature: Quadrature::gauss_legendre(depth.div_ceil(2)),
        })
    }

    /// Number of players: distinct atoms the tree splits on.
    pub(crate) fn n_players(&self) -> usize {
        self.first_node.len()
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
            let node = &self.nodes[id];
            if node.is_leaf() {
                for at in node.outputs() {
                    expected[self.outputs[at] as usize] += fraction * self.leaf_values[at];
                }
            } else {
                let left = node.left_fraction;
                stack.push((id + 1, fraction * left));
                stack.push((node.right as usize, fraction * (1.0 - left)));
            }
        }
        expected
    }
}

/// Marks the nodes below a split whose atom a split above it tested as not clean.
fn mark_clean(nodes: &mut [WalkNode], n_players: usize) {
    // Depth first, counting each player's splits on the current path.
    let mut on_path = vec![0u32; n_players];
    let mut stack = vec![(0usize, true)];
    while let Some((id, entering)) = stack.pop() {
        let node = nodes[id];
        if node.is_leaf() {
            continue;
        }
        let player = node.player as usize;
        if !entering {
            on_path[player] -= 1;
            continue;
        }
        nodes[id].repeats = on_path[player] > 0;
        let clean = node.clean && on_path[player] == 0;
        on_path[player] += 1;
        for child in [id + 1, node.right as usize] {
            nodes[child].clean = clean;
        }
        stack.push((id, false));
        stack.push((node.right as usize, true));
        stack.push((id + 1, true));
    }
}

/// Sets every node's outputs and degree, from the leaves up, and returns the
/// outputs of all nodes, their places among their parents' and the leaves' values.
fn leaf_outputs(
    nodes: &mut [WalkNode],
    leaf_value: impl Fn(usize) -> Vec<f64>,
) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
    let mut per_node: Vec<Vec<(u32, f64)>> = vec![Vec::new(); nodes.len()];
    // Children come after their parents.
    for id in (0..nodes.len()).rev() {
        let node = nodes[id];
        if node.is_leaf() {
            per_node[id] = (leaf_value(id).into_iter().enumerate())
                .filter(|&(_, v)| v != 0.0)
                .map(|(o, v)| (o as u32, v))
                .collect();
            nodes[id].unclean_leaves = !node.clean && !per_node[id].is_empty();
            continue;
        }
        let children = [id + 1, node.right as usize];
        nodes[id].unclean_leaves = children.iter().any(|&c| nodes[c].unclean_leaves);
        if !node.clean {
            continue;
        }
        let mut outputs: Vec<(u32, f64)> = Vec::new();
        let mut degree = None;
        for child in children {
            if nodes[child].clean && !per_node[child].is_empty() {
                outputs.extend(per_node[child].iter().map(|&(o, _)| (o, 0.0)));
                degree = degree.max(Some(nodes[child].degree + 1));
            }
        }
        outputs.sort_by_key(|&(o, _)| o);
        outputs.dedup_by_key(|&mut (o, _)| o);
        nodes[id].degree = degree.unwrap_or(0);
        per_node[id] = outputs;
    }
    let (mut outputs, mut values) = (Vec::new(), Vec::new());
    for (id, node) in nodes.iter_mut().enumerate() {
        node.outputs_start = outputs.len() as u32;
        node.n_outputs = per_node[id].len() as u32;
        outputs.extend(per_node[id].iter().map(|&(o, _)| o));
        values.extend(per_node[id].iter().map(|&(_, v)| v));
    }
    let mut parent_slot = vec![0u32; outputs.len()];
    for (id, node) in nodes.iter().enumerate() {
        if node.is_leaf() || !node.clean {
            continue;
        }
        for child in [id + 1, node.right as usize] {
            for at in nodes[child].outputs() {
                let slot = per_node[id].binary_search_by_key(&outputs[at], |&(o, _)| o);
                // A child that is not clean has no place among its parent's outputs.
                parent_slot[at] = slot.map_or(0, |s| s as u32);
            }
        }
    }
    (outputs, parent_slot, values)
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
pub(crate) fn atom_key(atom: &Atom<'_>) -> Vec<u32> {
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
