//! Trees laid out for scoring: every tree's nodes in one array, and every split's atom
//! as (column, weight) terms whose columns number only the features some split uses,
//! so that a block of rows transposes no other feature.

use super::bytes::ByteNode;
use super::lanes::BLOCK;
use super::row_walk::RowNode;
use crate::atoms::{project_pooled, MissingCells, Window};
use crate::data::Feature;
use crate::runtime::rows::SCORE_CHUNK;
use crate::tree::Tree;

/// A node of [`ScoringTrees`], numbered as in its tree.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ScoringNode {
    /// Rows whose projection on the terms goes left (as
    /// [`goes_left`](crate::tree::goes_left) says) go to the next node, the others to
    /// node `right` of the same tree.
    Split {
        right: u32,
        threshold: f32,
        terms_start: u32,
        terms_len: u32,
        missing_left: bool,
        /// The tree's rule on missing cells.
        missing: MissingCells,
        /// For rows of bytes, the side by whole sums ([`whole_limit`]).
        whole: Option<i16>,
    },
    /// A split on `weight * x[feature]`: a random forest's, without the dependent
    /// reads of a term list, in as few bytes as a walk row by row needs.
    SplitOnFeature {
        right: u32,
        threshold: f32,
        feature: u32,
        weight: f32,
        missing_left: bool,
        /// For rows of bytes, the side by whole sums ([`whole_limit`]).
        whole: Option<i16>,
    },
    /// Rows whose pooled value on atom `pooled` of the layout goes left go to the
    /// next node, the others to node `right`.
    SplitPooled {
        right: u32,
        threshold: f32,
        pooled: u32,
        missing_left: bool,
    },
    /// A leaf, with what its model stores for it (a boosted tree's value, a forest
    /// tree's offset in its leaves).
    Leaf { slot: u32 },
}

/// The base atom and window of a pooled split. Its shifts read features no term
/// column holds, so it projects each row from X itself.
#[derive(Debug, Clone)]
pub(crate) struct PooledAtom {
    indices: Vec<u32>,
    weights: Vec<f32>,
    window: Window,
    missing: MissingCells,
}

impl PooledAtom {
    /// The pooled value of `row`, as training computed it.
    #[inline]
    pub(super) fn project<T: Feature>(&self, row: &[T]) -> f32 {
        project_pooled(
            &self.indices,
            &self.weights,
            &self.window,
            self.missing,
            row,
        )
    }
}

/// How rows go down a model's trees, chosen from their shape: each way is the
/// fastest for some models, and all give the same leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walk {
    /// Blocks of rows as bit masks, block after block, every tree through each:
    /// for small trees (boosted models), which stay in cache.
    BlockMajor,
    /// Blocks of rows as bit masks, tree after tree, all blocks through each: for
    /// large trees whose splits project several features (oblique and patch
    /// forests), whose vector projections pay for the blocks' transposition.
    TreeMajor,
    /// Row by row, several rows side by side, tree after tree: for large trees of
    /// single-feature splits (random forests), where one comparison per node leaves
    /// nothing for vectors to gain.
    RowByRow,
}

/// Trees of at most this many nodes on average are small: a boosted model's.
const SMALL_TREE_NODES: usize = 512;

/// Most bytes of float columns that a chunk of rows walked tree after tree transposes,
/// so that they stay in a core's level-2 cache (2 MB here) beside the tree: 784
/// features of 1,024 rows (3.2 MB) did not, and MORF scored float rows in a fifth to
/// a third more time than in chunks of 256 rows.
const TREE_MAJOR_COLUMN_BYTES: usize = 1 << 20;

/// The trees of a model laid out for scoring blocks of rows. `pub` only because the
/// sealed [`Inspected`](super::Inspected) names it; no path outside the crate reaches it.
#[derive(Debug, Clone)]
pub struct ScoringTrees {
    /// Number of features of the rows the trees score.
    pub(super) n_features: usize,
    /// The features some split uses, in increasing order; term columns index it.
    pub(super) features: Vec<u32>,
    /// Per feature, its term column (unspecified for features no split uses).
    pub(super) column_of: Vec<u32>,
    /// Where each tree's nodes start in `nodes`, and where the last one ends.
    pub(super) tree_starts: Vec<usize>,
    pub(super) nodes: Vec<ScoringNode>,
    /// `nodes` as the row walk reads them.
    pub(super) row_nodes: Vec<RowNode>,
    /// `nodes` as the row walk reads them for rows of bytes; empty unless the trees
    /// are walked row by row.
    pub(super) byte_nodes: Vec<ByteNode>,
    pub(super) term_columns: Vec<u32>,
    /// The terms' features, as walks of rows read them.
    pub(super) term_features: Vec<u32>,
    pub(super) term_weights: Vec<f32>,
    /// `term_weights` as whole numbers, where a split has a [`whole_limit`].
    pub(super) term_whole_weights: Vec<i16>,
    /// The atoms of the pooled splits.
    pub(super) pooled: Vec<PooledAtom>,
    /// Depth of the deepest leaf of any tree.
    pub(super) max_depth: usize,
    /// How rows go down these trees.
    pub(super) walk: Walk,
}

impl ScoringTrees {
    /// The layout of `trees`, whose splits use features below `n_features` (as the
    /// loaders check); `leaf_slot(t, id)` says what to keep for leaf `id` of tree `t`.
    pub(crate) fn new(
        trees: &[Tree],
        n_features: usize,
        mut leaf_slot: impl FnMut(usize, usize) -> u32,
    ) -> ScoringTrees {
        const UNUSED: u32 = u32::MAX;
        let mut column_of = vec![UNUSED; n_features];
        for tree in trees {
            for id in 0..tree.nodes().len() {
                // Pooled atoms read shifts no column holds: they project from X.
                if let Some(atom) = tree.split_atom(id).filter(|a| a.window.is_none()) {
                    atom.indices.iter().for_each(|&f| column_of[f as usize] = 0);
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
            n_features,
            features,
            column_of: column_of.clone(),
            tree_starts: vec![0],
            nodes: Vec::with_capacity(trees.iter().map(|t| t.nodes().len()).sum()),
            row_nodes: Vec::new(),
            byte_nodes: Vec::new(),
            term_columns: Vec::new(),
            term_features: Vec::new(),
            term_weights: Vec::new(),
            term_whole_weights: Vec::new(),
            pooled: Vec::new(),
            max_depth: 0,
            walk: Walk::BlockMajor,
        };
        for (t, tree) in trees.iter().enumerate() {
            for (id, node) in tree.nodes().iter().enumerate() {
                let scoring = match (node.split_sides(), tree.split_atom(id)) {
                    (Some((right, threshold, missing_left)), Some(atom)) => {
                        match (atom.window, atom.indices, atom.weights) {
                            (Some(window), indices, weights) => {
                                layout.pooled.push(PooledAtom {
                                    indices: indices.to_vec(),
                                    weights: weights.to_vec(),
                                    window: *window,
                                    missing: atom.missing,
                                });
                                ScoringNode::SplitPooled {
                                    right,
                                    threshold,
                                    pooled: layout.pooled.len() as u32 - 1,
                                    missing_left,
                                }
                            }
                            (None, &[feature], &[weight]) => ScoringNode::SplitOnFeature {
                                right,
                                threshold,
                                feature,
                                weight,
                                missing_left,
                                whole: whole_limit(&[weight], threshold),
                            },
                            (None, indices, weights) => {
                                let terms_start = layout.term_columns.len() as u32;
                                layout
                                    .term_columns
                                    .extend(indices.iter().map(|&f| column_of[f as usize]));
                                layout.term_features.extend_from_slice(indices);
                                layout.term_weights.extend_from_slice(weights);
                                // Whole weights as `whole_limit` takes them; 0 for others.
                                let whole = weights.iter().map(|&w| w as i16);
                                layout.term_whole_weights.extend(whole);
                                ScoringNode::Split {
                                    right,
                                    threshold,
                                    terms_start,
                                    terms_len: indices.len() as u32,
                                    missing_left,
                                    missing: atom.missing,
                                    whole: whole_limit(weights, threshold),
                                }
                            }
                        }
                    }
                    _ => ScoringNode::Leaf {
                        slot: leaf_slot(t, id),
                    },
                };
                layout.nodes.push(scoring);
            }
            // The walks rely on each link lying within its tree (loaders check).
            let n_nodes = tree.nodes().len() as u32;
            for (id, node) in tree.nodes().iter().enumerate() {
                if let Some((right, ..)) = node.split_sides() {
                    assert!(id as u32 + 1 < right && right < n_nodes, "a valid tree");
                }
            }
            layout.tree_starts.push(layout.nodes.len());
            layout.max_depth = layout.max_depth.max(tree.stats().max_depth);
        }
        layout.row_nodes = layout.nodes.iter().map(RowNode::of).collect();
        let n_splits = (layout.nodes.len() - trees.len()) / 2;
        // Single-feature splits keep no terms: they count one each.
        let n_single = layout
            .nodes
            .iter()
            .filter(|n| matches!(n, ScoringNode::SplitOnFeature { .. }))
            .count();
        let n_terms = layout.term_columns.len() + n_single;
        layout.walk = if layout.nodes.len() <= SMALL_TREE_NODES * trees.len() {
            Walk::BlockMajor
        } else if n_terms > n_splits {
            // More than one term a split on average: vector projections pay.
            Walk::TreeMajor
        } else {
            Walk::RowByRow
        };
        if layout.walk == Walk::RowByRow {
            layout.byte_nodes = layout.nodes.iter().map(ByteNode::of).collect();
        }
        layout
    }

    /// Most rows to score together: many for large trees, walked tree after tree so
    /// that each tree's nodes and leaves come into cache once for them all, but for
    /// blocks walked tree after tree no more than keep their columns in cache; a
    /// block's worth for small trees, which keeps the rows and their outputs in cache.
    pub(crate) fn chunk_rows(&self) -> usize {
        match self.walk {
            Walk::RowByRow => SCORE_CHUNK,
            Walk::TreeMajor => {
                let row_bytes = self.features.len().max(1) * std::mem::size_of::<f32>();
                let rows = (TREE_MAJOR_COLUMN_BYTES / row_bytes).clamp(BLOCK, SCORE_CHUNK);
                rows / BLOCK * BLOCK
            }
            Walk::BlockMajor => BLOCK,
        }
    }

    /// The nodes of tree `t`.
    pub(super) fn tree(&self, t: usize) -> &[ScoringNode] {
        &self.nodes[self.tree_starts[t]..self.tree_starts[t + 1]]
    }

    /// The (columns, weights) of the terms `start..start + len`.
    #[inline(always)]
    pub(super) fn terms(&self, start: u32, len: u32) -> (&[u32], &[f32]) {
        let range = start as usize..(start + len) as usize;
        (&self.term_columns[range.clone()], &self.term_weights[range])
    }

    /// The (features, weights) of the terms `start..start + len`.
    #[inline(always)]
    pub(super) fn feature_terms(&self, start: u32, len: u32) -> (&[u32], &[f32]) {
        let range = start as usize..(start + len) as usize;
        (
            &self.term_features[range.clone()],
            &self.term_weights[range],
        )
    }

    /// The weights of the terms `start..start + len` as whole numbers (meaningful
    /// where their split has a [`whole_limit`]).
    #[inline(always)]
    pub(super) fn whole_weights(&self, start: u32, len: u32) -> &[i16] {
        &self.term_whole_weights[start as usize..(start + len) as usize]
    }
}

/// For rows of bytes, the side of a split on `weights` at `threshold` by whole sums:
/// the largest whole sum that goes left, when every weight is a whole number that a
/// signed byte holds and every sum of the weights' products with bytes (partial sums
/// included) lies within `i16`. Such products and sums are whole numbers far below
/// 2^24, exact in `f32` whatever the order, so the float projection is the whole sum
/// `s`, never missing, and it goes left (`s <= threshold`) exactly when `s` is at most
/// the limit. `None` where the weights do not allow it, or the threshold is NaN.
pub(super) fn whole_limit(weights: &[f32], threshold: f32) -> Option<i16> {
    let mut reach = 0.0f64;
    for &weight in weights {
        if !weight.is_finite() || weight.trunc() != weight || weight.abs() > 127.0 {
            return None;
        }
        reach += f64::from(weight.abs()) * f64::from(u8::MAX);
    }
    if reach > f64::from(i16::MAX) || threshold.is_nan() {
        return None;
    }
    // Sums lie in -reach..=reach: below it none goes left, above it all do.
    Some(f64::from(threshold).floor().clamp(-reach - 1.0, reach) as i16)
}
