//! Exact path-dependent TreeSHAP on one tree for one row (Lundberg et al. 2020,
//! "From local explanations to global understanding with explainable AI for trees",
//! Algorithm 2), whose players are the tree's distinct split atoms.

use super::engine::MAX_EXPLAINED_DEPTH;
use super::players::{ExplainedTree, NO_PLAYER};
use crate::data::Feature;
use crate::tree::goes_left;

/// One player on the path from the root: the fraction of the path's cover that flows
/// down its splits (`zero`: without knowing the row; `one`: knowing it, 1 or 0) and
/// the weight of the coalitions of each size (`weight`, Algorithm 2's `pweight`).
#[derive(Debug, Clone, Copy)]
struct PathElement {
    player: u32,
    zero: f64,
    one: f64,
    weight: f64,
}

/// Buffers of one thread's walks, reused from row to row.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// The unique paths of the nodes being visited, each after its parent's.
    path: Vec<PathElement>,
}

/// Adds to `phi` (`tree.width` values per player) the Shapley values of the tree's
/// players for `row`, under the path-dependent value function: a player left out of a
/// coalition sends the row down both sides of its splits in proportion to the
/// training covers.
pub(crate) fn tree_shap<T: Feature>(
    tree: &ExplainedTree<'_>,
    row: &[T],
    phi: &mut [f64],
    scratch: &mut Scratch,
) {
    scratch.path.clear();
    let mut walk = Walk {
        tree,
        row,
        phi,
        path: &mut scratch.path,
    };
    walk.visit(0, 0, 0, 1.0, 1.0, NO_PLAYER);
}

struct Walk<'w, 't, T> {
    tree: &'w ExplainedTree<'t>,
    row: &'w [T],
    phi: &'w mut [f64],
    path: &'w mut Vec<PathElement>,
}

impl<T: Feature> Walk<'_, '_, T> {
    /// Visits node `id` at unique depth `depth`, whose parent's unique path of `depth`
    /// elements starts at `parent_start` in the path buffer, reached through a split on `player` that
    /// passes on the fractions `zero` and `one`.
    fn visit(
        &mut self,
        id: usize,
        parent_start: usize,
        depth: usize,
        zero: f64,
        one: f64,
        player: u32,
    ) {
        let start = self.path.len();
        if id == 0 {
            // The root's path holds only the dummy element, of weight 1.
            self.path.push(PathElement {
                player: NO_PLAYER,
                zero: 1.0,
                one: 1.0,
                weight: 1.0,
            });
        } else {
            // The parent's `depth` elements, and this node's split player after them.
            self.path
                .extend_from_within(parent_start..parent_start + depth);
            self.path.push(PathElement {
                player,
                zero,
                one,
                weight: 0.0,
            });
            extend(&mut self.path[start..], depth, zero, one, player);
        }
        let mut depth = depth;
        let tree = self.tree;
        match tree.split(id) {
            None => self.add_leaf(id, start, depth),
            Some(split) => {
                let value = split.atom.project(self.row);
                let hot_left = goes_left(value, split.threshold, split.missing_left);
                let (hot, cold) = if hot_left {
                    (id + 1, split.right)
                } else {
                    (split.right, id + 1)
                };
                let (hot_zero, cold_zero) = if hot_left {
                    (split.left_fraction, 1.0 - split.left_fraction)
                } else {
                    (1.0 - split.left_fraction, split.left_fraction)
                };
                // A player split on higher up is taken off the path and put back with
                // the fractions of both its splits multiplied.
                let (mut incoming_zero, mut incoming_one) = (1.0, 1.0);
                let path = &mut self.path[start..];
                if let Some(index) = (1..=depth).find(|&i| path[i].player == split.player) {
                    incoming_zero = path[index].zero;
                    incoming_one = path[index].one;
                    unwind(path, depth, index);
                    depth -= 1;
                }
                let children = [
                    (hot, hot_zero * incoming_zero, incoming_one),
                    (cold, cold_zero * incoming_zero, 0.0),
                ];
                for (child, zero, one) in children {
                    // A side the row does not take and no training sample reached adds
                    // nothing, whoever plays.
                    if zero > 0.0 || one > 0.0 {
                        self.visit(child, start, depth + 1, zero, one, split.player);
                    }
                }
            }
        }
        self.path.truncate(start);
    }

    /// Adds leaf `id`'s share to every player of the unique path at `start`.
    fn add_leaf(&mut self, id: usize, start: usize, depth: usize) {
        let width = self.tree.width;
        let values = self.tree.leaf_values(id);
        let path = &self.path[start..start + depth + 1];
        // The unwound sum of a player whose side the row does not take (`one` 0) is
        // this one sum over its `zero`: computed once, not once per such player.
        let mut cold_sum = None;
        for (i, element) in path.iter().enumerate().skip(1) {
            let unwound = if element.one == 0.0 {
                let sum = *cold_sum.get_or_insert_with(|| cold_unwound_sum(path, depth));
                sum / element.zero * (depth + 1) as f64
            } else {
                unwound_sum(path, depth, i)
            };
            let scale = unwound * (element.one - element.zero);
            let phi = &mut self.phi[element.player as usize * width..][..width];
            for (p, &v) in phi.iter_mut().zip(values) {
                *p += scale * v;
            }
        }
    }
}

/// Adds a player with fractions `zero` and `one` to the unique path `path[..=depth]`
/// (its new last element, `path[depth]`, copied from the parent, is overwritten).
fn extend(path: &mut [PathElement], depth: usize, zero: f64, one: f64, player: u32) {
    path[depth] = PathElement {
        player,
        zero,
        one,
        weight: if depth == 0 { 1.0 } else { 0.0 },
    };
    let inv_size = RECIPROCALS[depth + 1];
    for i in (0..depth).rev() {
        path[i + 1].weight += one * path[i].weight * (i + 1) as f64 * inv_size;
        path[i].weight = zero * path[i].weight * (depth - i) as f64 * inv_size;
    }
}

/// `RECIPROCALS[n]` is `1 / n`: the walk multiplies where Algorithm 2 divides, for
/// speed (divisions dominated its inner loops).
static RECIPROCALS: [f64; MAX_EXPLAINED_DEPTH + 2] = reciprocals();

const fn reciprocals() -> [f64; MAX_EXPLAINED_DEPTH + 2] {
    let mut table = [0.0; MAX_EXPLAINED_DEPTH + 2];
    let mut n = 1;
    while n < table.len() {
        table[n] = 1.0 / n as f64;
        n += 1;
    }
    table
}

/// Takes element `index` off the unique path `path[..=depth]`, undoing its
/// [`extend`]. An element's `one` is 1 or 0: knowing the row, a side is taken or not.
fn unwind(path: &mut [PathElement], depth: usize, index: usize) {
    let (one, zero) = (path[index].one, path[index].zero);
    let size = (depth + 1) as f64;
    let inv_size = RECIPROCALS[depth + 1];
    let mut next = path[depth].weight;
    if one != 0.0 {
        for i in (0..depth).rev() {
            let kept = path[i].weight;
            path[i].weight = next * size * RECIPROCALS[i + 1];
            next = kept - path[i].weight * zero * (depth - i) as f64 * inv_size;
        }
    } else {
        let inv_zero = size / zero;
        for i in (0..depth).rev() {
            path[i].weight *= inv_zero * RECIPROCALS[depth - i];
        }
    }
    for i in index..depth {
        path[i].player = path[i + 1].player;
        path[i].zero = path[i + 1].zero;
        path[i].one = path[i + 1].one;
    }
}

/// The total weight of the unique path `path[..=depth]` once element `index`, whose
/// side the row takes (`one` 1), is taken off, without changing it.
fn unwound_sum(path: &[PathElement], depth: usize, index: usize) -> f64 {
    let zero = path[index].zero;
    let mut total = 0.0;
    let mut next = path[depth].weight;
    for i in (0..depth).rev() {
        let share = next * RECIPROCALS[i + 1];
        total += share;
        next = path[i].weight - share * zero * (depth - i) as f64;
    }
    total * (depth + 1) as f64
}

/// The unwound sum of any element of `path[..=depth]` whose side the row does not
/// take, times its `zero` and over `depth + 1`: the same for all of them.
fn cold_unwound_sum(path: &[PathElement], depth: usize) -> f64 {
    (0..depth).rev().fold(0.0, |total, i| {
        total + path[i].weight * RECIPROCALS[depth - i]
    })
}
