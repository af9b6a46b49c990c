//! Rows going down the trees a block at a time. A block's features are transposed
//! once; each split reached projects all of the block's rows that reach it together
//! (side by side in vector lanes, each row's sum taken in the atom's order, so the
//! values are those a row-by-row walk computes), and the rows travel down the tree as
//! bit masks. Only the nodes some row reaches are visited.

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use super::lanes::{has_avx2, left_rows_fastest, Mask, BLOCK};
use super::layout::{PooledAtom, ScoringNode, ScoringTrees, Walk};
use crate::data::{Feature, Rows};
use crate::runtime::control::is_cancelled;
use crate::tree::goes_left;

/// Fewest rows scored as a block; fewer walk each tree row by row: a block's setup
/// (its columns) costs more than it saves there.
const FEWEST_BLOCK_ROWS: usize = 8;

/// Rows of a block reaching a split together, at most this many of them walk on one
/// by one: a vector projection of a few lanes costs more than the rows' own sums.
const FEWEST_MASKED_ROWS: u32 = 2;

/// Rows walked down a tree together, one by one, so that their memory reads overlap.
const WALK_LANES: usize = 8;

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
    /// between trees.
    pub(crate) fn visit_leaves<T: Feature>(
        &self,
        trees: Range<usize>,
        rows: &Rows<'_, T>,
        cancel: &AtomicBool,
        mut visit: impl FnMut(LeafRows),
    ) {
        if rows.n_samples < FEWEST_BLOCK_ROWS || self.walk == Walk::RowByRow {
            return self.walk_rows(trees, rows, cancel, visit);
        }
        let n_blocks = rows.n_samples.div_ceil(BLOCK);
        let block_len = self.features.len() * BLOCK;
        let tree_major = self.walk == Walk::TreeMajor;
        let mut block = Block {
            columns: vec![0.0; if tree_major { n_blocks } else { 1 } * block_len],
            stack: Vec::with_capacity(self.max_depth + 1),
            lone: Vec::with_capacity(BLOCK),
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

    /// [`ScoringTrees::visit_leaves`] by walking each tree row by row, several rows
    /// side by side, one row a visit.
    fn walk_rows<T: Feature>(
        &self,
        trees: Range<usize>,
        rows: &Rows<'_, T>,
        cancel: &AtomicBool,
        mut visit: impl FnMut(LeafRows),
    ) {
        // A few rows through every tree at a time, so that they stay in cache.
        let mut leaves = [0u32; BLOCK];
        for first_row in (0..rows.n_samples).step_by(BLOCK) {
            let some_rows = rows.slice(first_row..rows.n_samples.min(first_row + BLOCK));
            let leaves = &mut leaves[..some_rows.n_samples];
            for t in trees.clone() {
                if is_cancelled(cancel) {
                    return;
                }
                let nodes = self.tree(t);
                self.leaves_of_rows(nodes, &some_rows, leaves);
                // Visited in row order once all are known, so that what a visit reads
                // does not stall the walks.
                for (r, &id) in leaves.iter().enumerate() {
                    if let ScoringNode::Leaf { slot } = nodes[id as usize] {
                        visit(LeafRows {
                            tree: t,
                            node: id,
                            slot,
                            first_row: first_row + r,
                            rows: 1,
                        });
                    }
                }
            }
        }
    }

    /// The leaf of `nodes` (a tree's) each row of `rows` reaches. Several rows descend
    /// together, a level at a time, so that the memory reads of one overlap with those
    /// of the others; a lane whose row reaches its leaf takes the next row at once.
    fn leaves_of_rows<T: Feature>(
        &self,
        nodes: &[ScoringNode],
        rows: &Rows<'_, T>,
        leaves: &mut [u32],
    ) {
        let n_rows = leaves.len();
        let n_lanes = WALK_LANES.min(n_rows);
        let mut lane_row = [usize::MAX; WALK_LANES];
        let mut lane_values: [&[T]; WALK_LANES] = [&[]; WALK_LANES];
        let mut lane_node = [0u32; WALK_LANES];
        for lane in 0..n_lanes {
            lane_row[lane] = lane;
            lane_values[lane] = rows.row(lane);
        }
        let mut next_row = n_lanes;
        let mut busy = n_lanes;
        while busy > 0 {
            for lane in 0..n_lanes {
                if lane_row[lane] == usize::MAX {
                    continue; // no rows left for this lane
                }
                let row = lane_values[lane];
                let id = lane_node[lane];
                let (sum, threshold, right, missing_left) = match nodes[id as usize] {
                    ScoringNode::SplitOnFeature {
                        right,
                        threshold,
                        feature,
                        weight,
                        missing_left,
                        ..
                    } => {
                        // The sum `Atom::project` forms for a one-term atom.
                        let sum = 0.0 + weight * row[feature as usize].to_f32();
                        (sum, threshold, right, missing_left)
                    }
                    ScoringNode::Split {
                        right,
                        threshold,
                        terms_start,
                        terms_len,
                        missing_left,
                    } => {
                        let (columns, weights) = self.terms(terms_start, terms_len);
                        let mut sum = 0.0f32;
                        for (&column, &weight) in columns.iter().zip(weights) {
                            sum += weight * row[self.features[column as usize] as usize].to_f32();
                        }
                        (sum, threshold, right, missing_left)
                    }
                    ScoringNode::SplitPooled {
                        right,
                        threshold,
                        pooled,
                        missing_left,
                    } => {
                        let value = self.pooled[pooled as usize].project(row);
                        (value, threshold, right, missing_left)
                    }
                    ScoringNode::Leaf { .. } => {
                        leaves[lane_row[lane]] = id;
                        lane_node[lane] = 0;
                        if next_row < n_rows {
                            lane_row[lane] = next_row;
                            lane_values[lane] = rows.row(next_row);
                            next_row += 1;
                        } else {
                            lane_row[lane] = usize::MAX;
                            busy -= 1;
                        }
                        continue;
                    }
                };
                lane_node[lane] = if goes_left(sum, threshold, missing_left) {
                    id + 1
                } else {
                    right
                };
            }
        }
    }
}

/// The scratch of one thread: its blocks' features and the nodes still to visit.
struct Block {
    /// Feature column `c` of row `r` of block `b` at `(b * n_columns + c) * BLOCK +
    /// r`, as the engine compares it ([`Feature::to_f32`]).
    columns: Vec<f32>,
    /// Nodes reached and not yet visited, with the rows that reach them.
    stack: Vec<(u32, Mask)>,
    /// Nodes reached by so few rows of the block that they go on alone, with the row.
    lone: Vec<(u32, u32)>,
    /// Whether the processor has AVX2.
    avx2: bool,
}

/// Copies the `features` of rows `first_row..first_row + n_rows` into `columns`, one
/// block's; the rows of the block past `n_rows` keep what they held (no mask names
/// them).
fn transpose<T: Feature>(
    columns: &mut [f32],
    features: &[u32],
    rows: &Rows<'_, T>,
    first_row: usize,
    n_rows: usize,
) {
    for r in 0..n_rows {
        let row = rows.row(first_row + r);
        for (column, &feature) in columns.chunks_exact_mut(BLOCK).zip(features) {
            column[r] = row[feature as usize].to_f32();
        }
    }
}

impl Block {
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
            let (right, threshold, terms, weights, missing_left) = match &nodes[id as usize] {
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
                } => {
                    let (terms, weights) = layout.terms(terms_start, terms_len);
                    (right, threshold, terms, weights, missing_left)
                }
                ScoringNode::SplitOnFeature {
                    right,
                    threshold,
                    feature,
                    weight,
                    missing_left,
                } => (
                    *right,
                    *threshold,
                    std::slice::from_ref(&layout.column_of[*feature as usize]),
                    std::slice::from_ref(weight),
                    *missing_left,
                ),
            };
            let left = left_rows_fastest(
                columns,
                self.avx2,
                terms,
                weights,
                threshold,
                missing_left,
                rows,
            );
            push_children(&mut self.stack, id, right, rows, left);
        }
        let values = BlockValues {
            columns,
            rows: rows_of_x,
            first_row,
        };
        walk_lanes(layout, nodes, &self.lone, &values, |id, slot, r| {
            visit(LeafRows {
                tree: t,
                node: id,
                slot,
                first_row,
                rows: 1 << r,
            })
        });
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

/// Where [`walk_lanes`] reads a row's values.
trait LaneValues {
    /// Row `r`'s value in term column `column`.
    fn term(&self, column: u32, r: u32) -> f32;
    /// Row `r`'s pooled value on `atom`.
    fn pooled(&self, atom: &PooledAtom, r: u32) -> f32;
}

/// A block's transposed columns, and X's rows for what no column holds.
struct BlockValues<'c, 'r, 'x, T: Clone> {
    columns: &'c [f32],
    rows: &'r Rows<'x, T>,
    first_row: usize,
}

impl<T: Feature> LaneValues for BlockValues<'_, '_, '_, T> {
    #[inline(always)]
    fn term(&self, column: u32, r: u32) -> f32 {
        self.columns[column as usize * BLOCK + r as usize]
    }

    #[inline]
    fn pooled(&self, atom: &PooledAtom, r: u32) -> f32 {
        atom.project(self.rows.row(self.first_row + r as usize))
    }
}

/// Sends each of `lone` (a node and a row) down `nodes` to its leaf, calling
/// `visit(leaf id, slot, row)`, reading the rows' values from `values`. Several rows descend together, a level at a time, so that the memory
/// reads of one overlap with those of the others; a lane whose row reaches its leaf
/// takes the next at once.
#[inline]
fn walk_lanes(
    layout: &ScoringTrees,
    nodes: &[ScoringNode],
    lone: &[(u32, u32)],
    values: &impl LaneValues,
    mut visit: impl FnMut(u32, u32, u32),
) {
    // Leaves are visited once every row has reached its own, so that what a visit
    // reads does not stall the walks.
    let mut reached = Vec::with_capacity(lone.len());
    let mut lanes = [(0u32, 0u32); WALK_LANES];
    let n_lanes = WALK_LANES.min(lone.len());
    lanes[..n_lanes].copy_from_slice(&lone[..n_lanes]);
    let mut next = n_lanes;
    let mut busy = n_lanes;
    let mut active = [true; WALK_LANES];
    while busy > 0 {
        for lane in 0..n_lanes {
            if !active[lane] {
                continue;
            }
            let (id, r) = lanes[lane];
            match nodes[id as usize] {
                ScoringNode::Split {
                    right,
                    threshold,
                    terms_start,
                    terms_len,
                    missing_left,
                } => {
                    let (terms, weights) = layout.terms(terms_start, terms_len);
                    // Term by term from 0, as `Atom::project` sums.
                    let mut sum = 0.0f32;
                    for (&column, &weight) in terms.iter().zip(weights) {
                        sum += weight * values.term(column, r);
                    }
                    lanes[lane].0 = if goes_left(sum, threshold, missing_left) {
                        id + 1
                    } else {
                        right
                    };
                }
                ScoringNode::SplitOnFeature {
                    right,
                    threshold,
                    feature,
                    weight,
                    missing_left,
                } => {
                    // The sum `Atom::project` forms for a one-term atom.
                    let column = layout.column_of[feature as usize];
                    let sum = 0.0 + weight * values.term(column, r);
                    lanes[lane].0 = if goes_left(sum, threshold, missing_left) {
                        id + 1
                    } else {
                        right
                    };
                }
                ScoringNode::SplitPooled {
                    right,
                    threshold,
                    pooled,
                    missing_left,
                } => {
                    let value = values.pooled(&layout.pooled[pooled as usize], r);
                    lanes[lane].0 = if goes_left(value, threshold, missing_left) {
                        id + 1
                    } else {
                        right
                    };
                }
                ScoringNode::Leaf { slot } => {
                    reached.push((id, slot, r));
                    if next < lone.len() {
                        lanes[lane] = lone[next];
                        next += 1;
                    } else {
                        active[lane] = false;
                        busy -= 1;
                    }
                }
            }
        }
    }
    for (id, slot, r) in reached {
        visit(id, slot, r);
    }
}
