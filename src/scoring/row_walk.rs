//! Rows walking the trees one by one, several side by side: for forests of
//! single-feature splits, and for calls of a few rows. Each node is read in the
//! 16 bytes of a [`RowNode`], four to a cache line, so that a walk step is one node
//! read, one value read and a comparison.

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use super::bytes::{BYTE_GENERAL, BYTE_LEAF};
use super::layout::{ScoringNode, ScoringTrees};
use super::walk::LeafRows;
use crate::data::{Feature, Rows};
use crate::runtime::control::is_cancelled;
use crate::runtime::rows::SCORE_CHUNK;
use crate::tree::goes_left;

/// Rows walked down a tree together, so that their memory reads overlap: more than
/// a row's few dependent reads a level can keep busy.
const WALK_LANES: usize = 16;

/// [`RowNode::code`] bit: missing projections go left.
const MISSING_LEFT: u32 = 1 << 31;
/// [`RowNode::code`] bit: a leaf, whose slot is in [`RowNode::right`].
const LEAF: u32 = 1 << 30;
/// [`RowNode::code`] bit: a split the walk reads from the layout's [`ScoringNode`]
/// (several terms, a pooled atom, or a feature too large for the code).
const GENERAL: u32 = 1 << 29;

/// A node of [`ScoringTrees`] as the row walk reads it: a single-feature split
/// (`code` its feature, with [`MISSING_LEFT`]), a leaf ([`LEAF`], `right` its slot)
/// or another split ([`GENERAL`]).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
pub(super) struct RowNode {
    threshold: f32,
    weight: f32,
    code: u32,
    right: u32,
}

impl RowNode {
    /// `node` for the row walk.
    pub(super) fn of(node: &ScoringNode) -> RowNode {
        let general = RowNode {
            threshold: 0.0,
            weight: 0.0,
            code: GENERAL,
            right: 0,
        };
        match *node {
            ScoringNode::SplitOnFeature {
                right,
                threshold,
                feature,
                weight,
                missing_left,
                ..
            } if feature < GENERAL => RowNode {
                threshold,
                weight,
                code: feature | if missing_left { MISSING_LEFT } else { 0 },
                right,
            },
            ScoringNode::Leaf { slot } => RowNode {
                code: LEAF,
                right: slot,
                ..general
            },
            _ => general,
        }
    }
}

impl ScoringTrees {
    /// [`ScoringTrees::visit_leaves`] by walking each tree row by row, several rows
    /// side by side, one row a visit.
    pub(super) fn walk_rows<T: Feature>(
        &self,
        trees: Range<usize>,
        rows: &Rows<'_, T>,
        cancel: &AtomicBool,
        mut visit: impl FnMut(LeafRows),
    ) {
        let mut starts = Vec::with_capacity(SCORE_CHUNK);
        let mut reached = Vec::with_capacity(SCORE_CHUNK);
        // Byte rows compare their bytes where the layout has the splits as bytes.
        let bytes = T::MAX_WHOLE.is_some() && !self.byte_nodes.is_empty();
        for first_row in (0..rows.n_samples).step_by(SCORE_CHUNK) {
            starts.clear();
            let last_row = rows.n_samples.min(first_row + SCORE_CHUNK);
            starts.extend((first_row..last_row).map(|r| (0, r as u32)));
            for t in trees.clone() {
                if is_cancelled(cancel) {
                    return;
                }
                if bytes {
                    self.byte_leaves_of_rows(t, rows, &starts, &mut reached);
                } else {
                    let tree = self.tree_starts[t]..self.tree_starts[t + 1];
                    let (nodes, general) = (&self.row_nodes[tree.clone()], &self.nodes[tree]);
                    let row = |r: u32| rows.row(r as usize);
                    leaves_of_rows(&starts, &mut reached, row, |id, values| {
                        let at = nodes[id as usize];
                        if at.code & (LEAF | GENERAL) == 0 {
                            let feature = (at.code & !MISSING_LEFT) as usize;
                            // The sum `Atom::project` forms for a one-term atom.
                            let value = 0.0 + at.weight * values[feature].to_f32();
                            let left = goes_left(value, at.threshold, at.code & MISSING_LEFT != 0);
                            Ok(if left { id + 1 } else { at.right })
                        } else if at.code & LEAF != 0 {
                            Err(at.right)
                        } else {
                            Ok(self.child(&general[id as usize], id, values))
                        }
                    });
                }
                for &(node, slot, r) in &reached {
                    visit(LeafRows {
                        tree: t,
                        node,
                        slot,
                        first_row: r as usize,
                        rows: 1,
                    });
                }
            }
        }
    }

    /// [`leaves_of_rows`] for tree `t` and rows of bytes, through the tree's
    /// [`ByteNode`](super::bytes::ByteNode)s: a comparison step is a node read, a byte read and a comparison of
    /// bytes, without bounds checks, and lanes whose rows are done leave the loop.
    fn byte_leaves_of_rows<T: Feature>(
        &self,
        t: usize,
        rows: &Rows<'_, T>,
        starts: &[(u32, u32)],
        reached: &mut Vec<(u32, u32, u32)>,
    ) {
        reached.clear();
        // Every comparison reads a feature below the layout's `n_features` (`new`
        // indexes `column_of` by it): each row holds it.
        assert_eq!(
            rows.n_features, self.n_features,
            "rows of the layout's width"
        );
        let tree = self.tree_starts[t]..self.tree_starts[t + 1];
        let (nodes, general) = (&self.byte_nodes[tree.clone()], &self.nodes[tree]);
        let bytes_of = |r: u32| T::as_bytes(rows.row(r as usize)).expect("rows of bytes");
        let mut node = [0u32; WALK_LANES];
        let mut row_of = [0u32; WALK_LANES];
        let mut values = [std::ptr::null::<u8>(); WALK_LANES];
        let mut n_busy = WALK_LANES.min(starts.len());
        for lane in 0..n_busy {
            (node[lane], row_of[lane]) = starts[lane];
            values[lane] = bytes_of(row_of[lane]).as_ptr();
        }
        let mut next = n_busy;
        while n_busy > 0 {
            let mut lane = 0;
            while lane < n_busy {
                let id = node[lane];
                // SAFETY: walks start at the root and follow the tree's links, which
                // `ScoringTrees::new` checked lie within the tree.
                let at = unsafe { *nodes.get_unchecked(id as usize) };
                if at.feature < BYTE_GENERAL {
                    // SAFETY: `values[lane]` is a row of `self.n_features` bytes (see
                    // the assertion above), and `at.feature` is below that.
                    let byte = unsafe { *values[lane].add(usize::from(at.feature)) };
                    node[lane] = at.child(id, byte);
                    lane += 1;
                } else if at.feature == BYTE_LEAF {
                    reached.push((id, at.right, row_of[lane]));
                    if let Some(&start) = starts.get(next) {
                        (node[lane], row_of[lane]) = start;
                        values[lane] = bytes_of(row_of[lane]).as_ptr();
                        next += 1;
                        lane += 1;
                    } else {
                        // The last busy lane takes this one's place.
                        n_busy -= 1;
                        node[lane] = node[n_busy];
                        row_of[lane] = row_of[n_busy];
                        values[lane] = values[n_busy];
                    }
                } else {
                    node[lane] = self.child(&general[id as usize], id, bytes_of(row_of[lane]));
                    lane += 1;
                }
            }
        }
    }

    /// The child `row` goes to from split `node` (node `id` of its tree).
    #[inline]
    pub(super) fn child<T: Feature>(&self, node: &ScoringNode, id: u32, row: &[T]) -> u32 {
        let (value, threshold, right, missing_left) = match *node {
            ScoringNode::SplitOnFeature {
                right,
                threshold,
                feature,
                weight,
                missing_left,
                ..
            } => {
                let value = 0.0 + weight * row[feature as usize].to_f32();
                (value, threshold, right, missing_left)
            }
            ScoringNode::Split {
                right,
                threshold,
                terms_start,
                terms_len,
                missing_left,
                missing,
                ..
            } => {
                let (features, weights) = self.feature_terms(terms_start, terms_len);
                let cell = |feature: u32| row[feature as usize].to_f32();
                // Term by term from 0, as `Atom::project` sums.
                let mut sum = 0.0f32;
                for (&feature, &weight) in features.iter().zip(weights) {
                    sum += weight * cell(feature);
                }
                let terms = weights.iter().zip(features);
                let sum = missing.resolve(sum, terms.map(|(&w, &f)| (w, cell(f))));
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
            ScoringNode::Leaf { .. } => unreachable!("the walk stops at leaves"),
        };
        select_child(goes_left(value, threshold, missing_left), id, right)
    }
}

/// The child of split `id` (right child `right`) that a row goes to, `left` saying
/// whether it goes left. Chosen without a branch: a split sends rows either way about
/// as often, and a mispredicted branch costs more than a walk step. (The compiler
/// turns selects whose condition comes from a load in a loop into branches; a
/// conditional move written out stays one.)
#[inline(always)]
pub(super) fn select_child(left: bool, id: u32, right: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut child = right;
        // SAFETY: a test and a conditional move between registers.
        unsafe {
            std::arch::asm!(
                "test {left}, {left}",
                "cmovnz {child:e}, {next:e}",
                left = in(reg_byte) u8::from(left),
                next = in(reg) id + 1,
                child = inout(reg) child,
                options(pure, nomem, nostack),
            );
        }
        child
    }
    #[cfg(not(target_arch = "x86_64"))]
    if left {
        id + 1
    } else {
        right
    }
}

/// Sends each of `starts` (a node of a tree and a row) down the tree to its leaf,
/// writing (leaf, slot, row) into `reached` in the order rows arrive. `row(r)` is row
/// `r`'s values; `step(id, values)` is the child a row of `values` goes to from node
/// `id`, or the slot of `id` if it is a leaf. Several rows descend together, a level
/// at a time, so that the memory reads of one overlap with those of the others; a
/// lane whose row reaches its leaf takes the next at once. Callers visit the leaves
/// afterwards, so that what a visit reads does not stall the walks.
#[inline(always)]
fn leaves_of_rows<'r, V: 'r + ?Sized>(
    starts: &[(u32, u32)],
    reached: &mut Vec<(u32, u32, u32)>,
    row: impl Fn(u32) -> &'r V,
    step: impl Fn(u32, &'r V) -> Result<u32, u32>,
) {
    reached.clear();
    let n_lanes = WALK_LANES.min(starts.len());
    let mut node = [0u32; WALK_LANES];
    let mut row_of = [u32::MAX; WALK_LANES];
    let mut values: [Option<&V>; WALK_LANES] = [None; WALK_LANES];
    for lane in 0..n_lanes {
        (node[lane], row_of[lane]) = starts[lane];
        values[lane] = Some(row(row_of[lane]));
    }
    let mut next = n_lanes;
    let mut busy = n_lanes;
    while busy > 0 {
        for lane in 0..n_lanes {
            let Some(lane_values) = values[lane] else {
                continue; // no rows left for this lane
            };
            match step(node[lane], lane_values) {
                Ok(child) => node[lane] = child,
                Err(slot) => {
                    reached.push((node[lane], slot, row_of[lane]));
                    if let Some(&start) = starts.get(next) {
                        (node[lane], row_of[lane]) = start;
                        values[lane] = Some(row(row_of[lane]));
                        next += 1;
                    } else {
                        values[lane] = None;
                        busy -= 1;
                    }
                }
            }
        }
    }
}
