//! Rows going down the trees a block at a time. A block's features are transposed
//! once; each split reached projects all of the block's rows that reach it together
//! (side by side in vector lanes, each row's sum taken in the atom's order, so the
//! values are those a row-by-row walk computes), and the rows travel down the tree as
//! bit masks. Only the nodes some row reaches are visited.

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use super::bytes::walk_as_bytes;
use super::lanes::{has_avx2, left_rows_fastest, left_rows_whole, BlockCell, Mask, BLOCK};
use super::layout::{ScoringNode, ScoringTrees, Walk};
use super::row_walk::select_child;
use crate::atoms::MissingCells;
use crate::data::{Feature, Rows};
use crate::runtime::control::is_cancelled;
use crate::tree::goes_left;

/// Fewest rows scored as a block; fewer walk each tree row by row: a block's setup
/// (its columns) costs more than it saves there.
const FEWEST_BLOCK_ROWS: usize = 8;

/// Rows of a block reaching a split together, at most this many of them walk on one
/// by one: a vector projection of a few lanes costs more than the rows' own sums.
const FEWEST_MASKED_ROWS: u32 = 2;

/// Features a block's transposition copies for all its rows before the next ones.
const TRANSPOSED_FEATURES: usize = 32;

/// Lone rows walked down a tree together, so that their memory reads overlap.
const LONE_ROW_LANES: usize = 8;

/// Where rows of a block reached a leaf: tree `tree`'s node `node`, whose slot is
/// `slot`, reached by the rows `first_row + r` for each bit `r` of `rows`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeafRows {
    pub tree: usize,
    pub node: u32,
    pub slot: u32,
    pub first_row: usize,
    pub rows: Mask,
}

impl LeafRows {
    /// The rows, as indices into the rows walked.
    #[inline]
    pub(crate) fn for_each_row(&self, mut row: impl FnMut(usize)) {
        let mut rows = self.rows;
        while rows != 0 {
            row(self.first_row + rows.trailing_zeros() as usize);
            rows &= rows - 1;
        }
    }
}

impl ScoringTrees {
    /// Calls `visit` for each leaf of trees `trees` that rows of `rows` reach. Each
    /// row meets the trees in order, so that what a row accumulates is summed in the
    /// order of a walk of the trees one by one. Stops early once `cancel` is set,
    /// between trees. Rows of byte values are walked as bytes ([`walk_as_bytes`]).
    pub(crate) fn visit_leaves<T: Feature>(
        &self,
        trees: Range<usize>,
        rows: &Rows<'_, T>,
        cancel: &AtomicBool,
        visit: impl FnMut(LeafRows),
    ) {
        let mut visit = Some(visit);
        let mut walk_bytes = |bytes: &Rows<'_, u8>| {
            let visit = visit.take().expect("one walk");
            self.visit_leaves_of(trees.clone(), bytes, cancel, visit)
        };
        if T::MAX_WHOLE.is_some() || !walk_as_bytes(rows, &mut walk_bytes) {
            let visit = visit.take().expect("one walk");
            self.visit_leaves_of(trees, rows, cancel, visit)
        }
    }

    /// [`ScoringTrees::visit_leaves`] for rows as they are.
    fn visit_leaves_of<T: Feature>(
        &self,
        trees: Range<usize>,
        rows: &Rows<'_, T>,
        cancel: &AtomicBool,
        visit: impl FnMut(LeafRows),
    ) {
        if rows.n_samples < FEWEST_BLOCK_ROWS || self.walk == Walk::RowByRow {
            self.walk_rows(trees, rows, cancel, visit)
        } else if T::MAX_WHOLE.is_some() {
            // Rows of bytes (`u8`, the one such type) keep bytes in their blocks.
            self.walk_blocks::<T, u8>(trees, rows, cancel, visit)
        } else {
            self.walk_blocks::<T, f32>(trees, rows, cancel, visit)
        }
    }

    /// [`ScoringTrees::visit_leaves`] by sending blocks of rows, transposed into
    /// cells `C`, down the trees as bit masks.
    fn walk_blocks<T: Feature, C: BlockCell>(
        &self,
        trees: Range<usize>,
        rows: &Rows<'_, T>,
        cancel: &AtomicBool,
        mut visit: impl FnMut(LeafRows),
    ) {
        let n_blocks = rows.n_samples.div_ceil(BLOCK);
        let block_len = self.features.len() * BLOCK;
        let tree_major = self.walk == Walk::TreeMajor;
        let mut block = Block {
            columns: vec![C::default(); if tree_major { n_blocks } else { 1 } * block_len],
            stack: Vec::with_capacity(self.max_depth + 1),
            lone: Vec::with_capacity(BLOCK),
            reached: Vec::with_capacity(BLOCK),
            avx2: has_avx2(),
        };
        let n_rows = |b: usize| BLOCK.min(rows.n_samples - b * BLOCK);
        let all = |b: usize| Mask::MAX >> (BLOCK - n_rows(b));
        if tree_major {
            // Every block's columns at once, then tree after tree, all the blocks
            // through each: a deep tree's nodes come from memory once for them all
            // rather than once a block.
            for (b, columns) in block.columns.chunks_exact_mut(block_len).enumerate() {
                transpose(columns, &self.features, rows, b * BLOCK, n_rows(b));
            }
            for t in trees {
                if is_cancelled(cancel) {
                    return;
                }
                for b in 0..n_blocks {
                    let columns = b * block_len..(b + 1) * block_len;
                    block.walk_tree(self, rows, t, columns, all(b), b * BLOCK, &mut visit);
                }
            }
        } else {
            // Block after block, every tree through each: small trees stay in cache,
            // and so do the block's columns.
            for b in 0..n_blocks {
                transpose(
                    &mut block.columns,
                    &self.features,
                    rows,
                    b * BLOCK,
                    n_rows(b),
                );
                for t in trees.clone() {
                    if is_cancelled(cancel) {
                        return;
                    }
                    block.walk_tree(self, rows, t, 0..block_len, all(b), b * BLOCK, &mut visit);
                }
            }
        }
    }
}

/// The scratch of one thread: its blocks' features and the nodes still to visit.
struct Block<C> {
    /// Feature column `c` of row `r` of block `b` at `(b * n_columns + c) * BLOCK +
    /// r`, as the engine compares it ([`BlockCell::to_f32`]).
    columns: Vec<C>,
    /// Nodes reached and not yet visited, with the rows that reach them.
    stack: Vec<(u32, Mask)>,
    /// Nodes reached by so few rows of the block that they go on alone, with the row.
    lone: Vec<(u32, u32)>,
    /// The leaves the lone rows reached: (node, slot, row).
    reached: Vec<(u32, u32, u32)>,
    /// Whether the processor has AVX2.
    avx2: bool,
}

/// Copies the `features` of rows `first_row..first_row + n_rows` into `columns`, one
/// block's; the rows of the block past `n_rows` keep what they held (no mask names
/// them).
fn transpose<T: Feature, C: BlockCell>(
    columns: &mut [C],
    features: &[u32],
    rows: &Rows<'_, T>,
    first_row: usize,
    n_rows: usize,
) {
    // A few features at a time for all the rows: their columns, and the rows' lines
    // holding them, stay in the first-level cache, where a whole row at a time
    // writes a line of each of the block's columns, more than the cache holds.
    let tiles = columns.chunks_mut(TRANSPOSED_FEATURES * BLOCK);
    for (columns, features) in tiles.zip(features.chunks(TRANSPOSED_FEATURES)) {
        for r in 0..n_rows {
            let row = rows.row(first_row + r);
            for (column, &feature) in columns.chunks_exact_mut(BLOCK).zip(features) {
                column[r] = C::of(row[feature as usize]);
            }
        }
    }
}

impl<C: BlockCell> Block<C> {
    /// Sends the rows of `all` of the block whose columns are `block` down tree `t`,
    /// calling `visit` at each leaf reached, leaves in the order of their ids.
    #[allow(clippy::too_many_arguments)]
    fn walk_tree<T: Feature>(
        &mut self,
        layout: &ScoringTrees,
        rows_of_x: &Rows<'_, T>,
        t: usize,
        block: Range<usize>,
        all: Mask,
        first_row: usize,
        visit: &mut dyn FnMut(LeafRows),
    ) {
        let nodes = layout.tree(t);
        let columns = &self.columns[block];
        self.stack.clear();
        self.stack.push((0, all));
        self.lone.clear();
        while let Some((id, rows)) = self.stack.pop() {
            let (right, threshold, terms, weights, missing_left, missing) = match &nodes
                [id as usize]
            {
                &ScoringNode::Leaf { slot } => {
                    visit(LeafRows {
                        tree: t,
                        node: id,
                        slot,
                        first_row,
                        rows,
                    });
                    continue;
                }
                _ if rows.count_ones() <= FEWEST_MASKED_ROWS => {
                    let mut rows = rows;
                    while rows != 0 {
                        self.lone.push((id, rows.trailing_zeros()));
                        rows &= rows - 1;
                    }
                    continue;
                }
                &ScoringNode::SplitPooled {
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
                        let value = atom.project(rows_of_x.row(first_row + r));
                        left |= Mask::from(goes_left(value, threshold, missing_left)) << r;
                        pending &= pending - 1;
                    }
                    push_children(&mut self.stack, id, right, rows, left);
                    continue;
                }
                &ScoringNode::Split {
                    right,
                    threshold,
                    terms_start,
                    terms_len,
                    missing_left,
                    missing,
                    whole,
                } => {
                    let (terms, weights) = layout.terms(terms_start, terms_len);
                    if let (Some(limit), Some(bytes)) = (whole, C::as_bytes(columns)) {
                        let weights = layout.whole_weights(terms_start, terms_len);
                        let left = left_rows_whole(bytes, self.avx2, terms, weights, limit, rows);
                        push_children(&mut self.stack, id, right, rows, left);
                        continue;
                    }
                    (right, threshold, terms, weights, missing_left, missing)
                }
                ScoringNode::SplitOnFeature {
                    right,
                    threshold,
                    feature,
                    weight,
                    missing_left,
                    whole,
                } => {
                    let column = std::slice::from_ref(&layout.column_of[*feature as usize]);
                    if let (Some(limit), Some(bytes)) = (*whole, C::as_bytes(columns)) {
                        let weights = [*weight as i16];
                        let left = left_rows_whole(bytes, self.avx2, column, &weights, limit, rows);
                        push_children(&mut self.stack, id, *right, rows, left);
                        continue;
                    }
                    (
                        *right,
                        *threshold,
                        column,
                        std::slice::from_ref(weight),
                        *missing_left,
                        // One cell: missing under either rule.
                        MissingCells::AnyCellMissing,
                    )
                }
            };
            let left = left_rows_fastest(
                columns,
                self.avx2,
                terms,
                weights,
                threshold,
                missing_left,
                missing,
                rows,
            );
            push_children(&mut self.stack, id, right, rows, left);
        }
        walk_lanes(
            layout,
            nodes,
            &self.lone,
            rows_of_x,
            first_row,
            &mut self.reached,
        );
        for &(node, slot, r) in &self.reached {
            visit(LeafRows {
                tree: t,
                node,
                slot,
                first_row,
                rows: 1 << r,
            });
        }
    }
}

/// Queues on `stack` the children of split `id` (right child `right`) that rows of
/// `rows` reach, `left` holding those that go left.
#[inline]
fn push_children(stack: &mut Vec<(u32, Mask)>, id: u32, right: u32, rows: Mask, left: Mask) {
    let left = rows & left;
    // The left child is visited first, as it comes first.
    if rows & !left != 0 {
        stack.push((right, rows & !left));
    }
    if left != 0 {
        stack.push((id + 1, left));
    }
}

/// Sends each of `starts` (a node and a row `r` of the block) down `nodes` to its
/// leaf, writing (leaf, slot, row) into `reached` in the order rows arrive, reading
/// row `r`'s values from row `first_row + r` of `rows`: a lone row's terms lie in a
/// few cache lines of its own row, which its next splits read again, where in the
/// block's columns each term is a line of its own. Several rows descend together, a
/// level at a time, so that the memory reads of one overlap with those of the
/// others; a lane whose row reaches its leaf takes the next at once. Callers visit
/// the leaves afterwards, so that what a visit reads does not stall the walks.
#[inline]
fn walk_lanes<T: Feature>(
    layout: &ScoringTrees,
    nodes: &[ScoringNode],
    starts: &[(u32, u32)],
    rows: &Rows<'_, T>,
    first_row: usize,
    reached: &mut Vec<(u32, u32, u32)>,
) {
    reached.clear();
    let row = |r: u32| rows.row(first_row + r as usize);
    // Per lane: its node, its row and the row's values.
    let mut lanes = [(0u32, u32::MAX); LONE_ROW_LANES];
    let mut values: [&[T]; LONE_ROW_LANES] = [&[]; LONE_ROW_LANES];
    let n_lanes = LONE_ROW_LANES.min(starts.len());
    for lane in 0..n_lanes {
        lanes[lane] = starts[lane];
        values[lane] = row(starts[lane].1);
    }
    let mut next = n_lanes;
    let mut busy = n_lanes;
    while busy > 0 {
        for (lane, lane_values) in lanes[..n_lanes].iter_mut().zip(&mut values) {
            let (id, r) = *lane;
            if r == u32::MAX {
                continue; // no rows left for this lane
            }
            let node = &nodes[id as usize];
            lane.0 = match (*node, T::as_bytes(lane_values)) {
                (ScoringNode::Leaf { slot }, _) => {
                    reached.push((id, slot, r));
                    if let Some(&start) = starts.get(next) {
                        *lane = start;
                        *lane_values = row(start.1);
                        next += 1;
                    } else {
                        lane.1 = u32::MAX;
                        busy -= 1;
                    }
                    continue;
                }
                (
                    ScoringNode::Split {
                        right,
                        terms_start,
                        terms_len,
                        whole: Some(limit),
                        ..
                    },
                    Some(bytes),
                ) => {
                    let (features, _) = layout.feature_terms(terms_start, terms_len);
                    let weights = layout.whole_weights(terms_start, terms_len);
                    let mut sum = 0i32;
                    for (&feature, &weight) in features.iter().zip(weights) {
                        sum += i32::from(weight) * i32::from(bytes[feature as usize]);
                    }
                    select_child(sum <= i32::from(limit), id, right)
                }
                _ => layout.child(node, id, lane_values),
            };
        }
    }
}
