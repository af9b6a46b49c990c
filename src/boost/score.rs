//! Scoring boosted trees a block of rows at a time. A boosted model is a thousand
//! small trees whose splits project several features each; walked one row at a time,
//! every split waits on its own chain of additions. Here a block's features are
//! transposed once, each split projects all the block's rows together (the rows side
//! by side in vector lanes, each row's sum taken in the atom's order, so the values
//! are those a row-by-row walk computes), and the rows travel down the tree as bit
//! masks. Splits no row of the block reaches are skipped. Pooled splits project the
//! rows that reach them one by one from the rows themselves
//! ([`project_pooled`]), their shifts reading features no column holds.

use std::sync::atomic::AtomicBool;

use super::lanes::{has_avx2, left_rows_fastest, Mask, BLOCK};
use super::model::tree_value;
use crate::atoms::{project_pooled, Window};
use crate::data::{Feature, Rows};
use crate::forest::control::is_cancelled;
use crate::tree::{goes_left, Node, Tree};

/// Fewest rows scored as a block; fewer walk each tree row by row.
const FEWEST_BLOCK_ROWS: usize = 8;

/// A node of [`ScoringTrees`].
#[derive(Debug, Clone, Copy)]
enum ScoringNode {
    /// Rows whose projection on the terms goes left (as [`goes_left`] says) go to
    /// the next node, the others to node `right` of the same tree.
    Split {
        right: u32,
        threshold: f32,
        terms_start: u32,
        terms_len: u32,
        missing_left: bool,
    },
    /// Rows whose pooled value on atom `pooled` of the layout goes left go to the
    /// next node, the others to node `right`.
    SplitPooled {
        right: u32,
        threshold: f32,
        pooled: u32,
        missing_left: bool,
    },
    /// Adds `value` to the raw score of its tree's output.
    Leaf { value: f64 },
}

/// The base atom and window of a pooled split.
#[derive(Debug, Clone)]
struct PooledAtom {
    indices: Vec<u32>,
    weights: Vec<f32>,
    window: Window,
}

impl PooledAtom {
    fn project<T: Feature>(&self, row: &[T]) -> f32 {
        project_pooled(&self.indices, &self.weights, &self.window, row)
    }
}

/// Boosted trees laid out for scoring blocks of rows: every tree's nodes in one array,
/// every split's atom as (column, weight) terms whose columns number only the features
/// some split uses, so that a block transposes no other feature.
#[derive(Debug, Clone)]
pub(super) struct ScoringTrees {
    /// The features some split uses, in increasing order; term columns index it.
    features: Vec<u32>,
    /// Where each tree's nodes start in `nodes`, and where the last one ends.
    tree_starts: Vec<usize>,
    nodes: Vec<ScoringNode>,
    term_columns: Vec<u32>,
    term_weights: Vec<f32>,
    /// The atoms of the pooled splits.
    pooled: Vec<PooledAtom>,
    /// Nodes of the largest tree.
    max_nodes: usize,
}

impl ScoringTrees {
    /// The layout of `trees`, whose splits use features below `n_features` (as the
    /// loader checks).
    pub(super) fn new(trees: &[Tree], n_features: usize) -> ScoringTrees {
        let split_terms = |tree: &Tree, node: &Node| -> Option<(Vec<u32>, Vec<f32>)> {
            match *node {
                Node::Split {
                    atom_start,
                    atom_len,
                    ..
                } => {
                    let atom = tree.atom(atom_start, atom_len);
                    Some((atom.indices.to_vec(), atom.weights.to_vec()))
                }
                Node::SplitOnFeature {
                    feature, weight, ..
                } => Some((vec![feature], vec![weight])),
                Node::SplitPooled { .. } | Node::Leaf { .. } => None,
            }
        };
        const UNUSED: u32 = u32::MAX;
        let mut column_of = vec![UNUSED; n_features];
        for tree in trees {
            for node in tree.nodes() {
                if let Some((indices, _)) = split_terms(tree, node) {
                    indices.iter().for_each(|&f| column_of[f as usize] = 0);
                }
            }
        }
        let features: Vec<u32> = (0..n_features as u32)
            .filter(|&f| column_of[f as usize] != UNUSED)
            .collect();
        for (column, &feature) in features.iter().enumerate() {
            column_of[feature as usize] = column as u32;
        }
        let mut layout = ScoringTrees {
            features,
            tree_starts: vec![0],
            nodes: Vec::new(),
            term_columns: Vec::new(),
            term_weights: Vec::new(),
            pooled: Vec::new(),
            max_nodes: 0,
        };
        for tree in trees {
            for (id, node) in tree.nodes().iter().enumerate() {
                let scoring = match (node, split_terms(tree, node)) {
                    (
                        &Node::Split {
                            right,
                            threshold,
                            missing_left,
                            ..
                        }
                        | &Node::SplitOnFeature {
                            right,
                            threshold,
                            missing_left,
                            ..
                        },
                        Some((indices, weights)),
                    ) => {
                        let terms_start = layout.term_columns.len() as u32;
                        layout
                            .term_columns
                            .extend(indices.iter().map(|&f| column_of[f as usize]));
                        layout.term_weights.extend_from_slice(&weights);
                        ScoringNode::Split {
                            right,
                            threshold,
                            terms_start,
                            terms_len: indices.len() as u32,
                            missing_left,
                        }
                    }
                    (
                        &Node::SplitPooled {
                            right,
                            threshold,
                            missing_left,
                            ..
                        },
                        _,
                    ) => {
                        let atom = tree.split_atom(id).expect("a split");
                        layout.pooled.push(PooledAtom {
                            indices: atom.indices.to_vec(),
                            weights: atom.weights.to_vec(),
                            window: *atom.window.expect("a pooled atom"),
                        });
                        ScoringNode::SplitPooled {
                            right,
                            threshold,
                            pooled: layout.pooled.len() as u32 - 1,
                            missing_left,
                        }
                    }
                    _ => ScoringNode::Leaf {
                        value: tree_value(tree, id),
                    },
                };
                layout.nodes.push(scoring);
            }
            layout.tree_starts.push(layout.nodes.len());
            layout.max_nodes = layout.max_nodes.max(tree.nodes().len());
        }
        layout
    }

    /// Adds to `out` (`k_out` raw scores per row, zeroed or holding earlier sums) the
    /// leaf value of each of trees `trees` (a range of tree indices; tree `t` adds to
    /// output `t % k_out`) for every row of `rows`, tree after tree, so that each row's
    /// sum is taken in the same order as a walk of the trees one by one. Stops early
    /// once `cancel` is set, between trees.
    pub(super) fn add_leaf_values<T: Feature>(
        &self,
        trees: std::ops::Range<usize>,
        k_out: usize,
        rows: &Rows<'_, T>,
        out: &mut [f64],
        cancel: &AtomicBool,
    ) {
        if rows.n_samples < FEWEST_BLOCK_ROWS {
            return self.walk_rows(trees, k_out, rows, out, cancel);
        }
        let mut block = Block {
            columns: vec![0.0; self.features.len() * BLOCK],
            masks: vec![0; self.max_nodes],
            avx2: has_avx2(),
        };
        for start in (0..rows.n_samples).step_by(BLOCK) {
            let n_rows = BLOCK.min(rows.n_samples - start);
            block.transpose(&self.features, rows, start, n_rows);
            let all = Mask::MAX >> (BLOCK - n_rows);
            let out = &mut out[start * k_out..(start + n_rows) * k_out];
            for t in trees.clone() {
                if is_cancelled(cancel) {
                    return;
                }
                let nodes = &self.nodes[self.tree_starts[t]..self.tree_starts[t + 1]];
                block.add_tree(self, nodes, all, (rows, start), out, k_out, t % k_out);
            }
        }
    }
}

impl ScoringTrees {
    /// [`ScoringTrees::add_leaf_values`] by walking each tree row by row: for a few
    /// rows, a block's setup (its columns, a mask per node) costs more than it saves.
    fn walk_rows<T: Feature>(
        &self,
        trees: std::ops::Range<usize>,
        k_out: usize,
        rows: &Rows<'_, T>,
        out: &mut [f64],
        cancel: &AtomicBool,
    ) {
        for t in trees {
            if is_cancelled(cancel) {
                return;
            }
            let nodes = &self.nodes[self.tree_starts[t]..self.tree_starts[t + 1]];
            for (r, row_out) in out.chunks_exact_mut(k_out).enumerate() {
                let row = rows.row(r);
                let mut id = 0;
                let value = loop {
                    match nodes[id] {
                        ScoringNode::Split {
                            right,
                            threshold,
                            terms_start,
                            terms_len,
                            missing_left,
                        } => {
                            let terms = terms_start as usize..(terms_start + terms_len) as usize;
                            // Term by term from 0, as `Atom::project` sums.
                            let mut sum = 0.0f32;
                            for (&column, &weight) in self.term_columns[terms.clone()]
                                .iter()
                                .zip(&self.term_weights[terms])
                            {
                                let feature = self.features[column as usize] as usize;
                                sum += weight * row[feature].to_f32();
                            }
                            id = if goes_left(sum, threshold, missing_left) {
                                id + 1
                            } else {
                                right as usize
                            };
                        }
                        ScoringNode::SplitPooled {
                            right,
                            threshold,
                            pooled,
                            missing_left,
                        } => {
                            let value = self.pooled[pooled as usize].project(row);
                            id = if goes_left(value, threshold, missing_left) {
                                id + 1
                            } else {
                                right as usize
                            };
                        }
                        ScoringNode::Leaf { value } => break value,
                    }
                };
                row_out[t % k_out] += value;
            }
        }
    }
}

/// The scratch of one thread: a block's features and the rows at each node.
struct Block {
    /// Feature column `c` of row `r` of the block at `c * BLOCK + r`, as the engine
    /// compares it ([`Feature::to_f32`]).
    columns: Vec<f32>,
    /// Per node of the tree walked, the rows of the block that reach it.
    masks: Vec<Mask>,
    /// Whether the processor has AVX2.
    avx2: bool,
}

impl Block {
    /// Copies the `features` of rows `start..start + n_rows` into the columns; the
    /// rows of the block past `n_rows` keep what they held (no mask names them).
    fn transpose<T: Feature>(
        &mut self,
        features: &[u32],
        rows: &Rows<'_, T>,
        start: usize,
        n_rows: usize,
    ) {
        for r in 0..n_rows {
            let row = rows.row(start + r);
            for (column, &feature) in self.columns.chunks_exact_mut(BLOCK).zip(features) {
                column[r] = row[feature as usize].to_f32();
            }
        }
    }

    /// Adds the leaf value each row of `all` reaches in the tree of `nodes` to its
    /// `output` in `out`; the block holds rows `start..` of `rows`.
    #[allow(clippy::too_many_arguments)]
    fn add_tree<T: Feature>(
        &mut self,
        layout: &ScoringTrees,
        nodes: &[ScoringNode],
        all: Mask,
        (x, start): (&Rows<'_, T>, usize),
        out: &mut [f64],
        k_out: usize,
        output: usize,
    ) {
        let masks = &mut self.masks[..nodes.len()];
        masks.fill(0);
        masks[0] = all;
        // Nodes are stored parents first, so a node's rows are known when it is reached.
        for (id, node) in nodes.iter().enumerate() {
            let rows = masks[id];
            if rows == 0 {
                continue;
            }
            match *node {
                ScoringNode::Split {
                    right,
                    threshold,
                    terms_start,
                    terms_len,
                    missing_left,
                } => {
                    let terms = terms_start as usize..(terms_start + terms_len) as usize;
                    let left = left_rows_fastest(
                        &self.columns,
                        self.avx2,
                        &layout.term_columns[terms.clone()],
                        &layout.term_weights[terms],
                        threshold,
                        missing_left,
                        rows,
                    );
                    masks[id + 1] = rows & left;
                    masks[right as usize] = rows & !left;
                }
                ScoringNode::SplitPooled {
                    right,
                    threshold,
                    pooled,
                    missing_left,
                } => {
                    let atom = &layout.pooled[pooled as usize];
                    let mut left: Mask = 0;
                    let mut pending = rows;
                    while pending != 0 {
                        let r = pending.trailing_zeros() as usize;
                        let value = atom.project(x.row(start + r));
                        left |= Mask::from(goes_left(value, threshold, missing_left)) << r;
                        pending &= pending - 1;
                    }
                    masks[id + 1] = rows & left;
                    masks[right as usize] = rows & !left;
                }
                ScoringNode::Leaf { value } => {
                    let mut rows = rows;
                    while rows != 0 {
                        let r = rows.trailing_zeros() as usize;
                        out[r * k_out + output] += value;
                        rows &= rows - 1;
                    }
                }
            }
        }
    }
}
