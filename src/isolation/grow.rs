//! Growing one isolation tree: at each node one atom, one threshold uniform between
//! the node's extreme projections, until a node holds one row, its rows all project
//! alike, or the depth limit is reached.

use crate::atoms::{AtomSampler, AtomSet};
use crate::data::{Feature, Rows};
use crate::rng::Rng;
use crate::split::{value_range, NodeProjector};
use crate::tree::{Leaves, Node, Tree};

use super::average_path_length;

/// Atoms drawn at a node before it is taken as a leaf when each projects all of the
/// node's rows to one value (a patch of constant background, a constant feature).
pub(super) const ATOM_DRAWS: usize = 8;

/// The scratch one tree's growth reuses from node to node.
struct Grower<'r, 'x, T: Feature> {
    rows: &'r Rows<'x, T>,
    /// The tree's rows of X; node samples index it.
    row_of: &'r [u32],
    sampler: &'r mut dyn AtomSampler,
    rng: &'r mut Rng,
    depth_limit: usize,
    atoms: AtomSet,
    projector: NodeProjector,
    values: Vec<f32>,
    tree: Tree,
}

/// Grows an isolation tree on the rows `row_of` of `rows`, drawing atoms from
/// `sampler` and thresholds from `rng`, no deeper than `depth_limit`. Each leaf's
/// value is its depth plus [`average_path_length`] of the rows it holds.
pub(super) fn grow_isolation_tree<T: Feature>(
    rows: &Rows<'_, T>,
    row_of: &[u32],
    sampler: &mut dyn AtomSampler,
    rng: &mut Rng,
    depth_limit: usize,
) -> Tree {
    let mut samples: Vec<u32> = (0..row_of.len() as u32).collect();
    let mut grower = Grower {
        rows,
        row_of,
        sampler,
        rng,
        depth_limit,
        atoms: AtomSet::default(),
        projector: NodeProjector::default(),
        values: Vec::new(),
        tree: Tree::empty(Leaves::values(1)),
    };
    grower.grow(&mut samples, 0);
    let mut tree = grower.tree;
    tree.shrink_to_fit();
    tree
}

impl<T: Feature> Grower<'_, '_, T> {
    /// Appends the subtree of the node holding `samples` at `depth`, depth first.
    fn grow(&mut self, samples: &mut [u32], depth: usize) {
        let id = self.tree.nodes.len();
        self.tree.node_samples.push(samples.len() as u32);
        self.tree.node_weights.push(samples.len() as f32);
        self.tree.impurity_decreases.push(0.0);
        let cut = if depth < self.depth_limit && samples.len() > 1 {
            self.draw_cut(samples)
        } else {
            None
        };
        let Some((threshold, missing_left)) = cut else {
            let offset = self.tree.leaves.next_offset();
            let path_length = depth as f64 + average_path_length(samples.len());
            self.tree.leaves.push(&[path_length], 1.0);
            self.tree.nodes.push(Node::Leaf {
                value: Some(offset),
            });
            return;
        };
        self.tree
            .push_split(self.atoms.get(0), threshold, missing_left);
        // `values` holds the projections of `samples` in their order: move the rows
        // going left to the front, keeping each row's value beside it.
        let mut n_left = 0;
        for i in 0..samples.len() {
            let value = self.values[i];
            if crate::tree::goes_left(value, threshold, missing_left) {
                samples.swap(n_left, i);
                self.values.swap(n_left, i);
                n_left += 1;
            }
        }
        let (left, right) = samples.split_at_mut(n_left);
        self.grow(left, depth + 1);
        let right_id = self.tree.nodes.len() as u32;
        self.tree.nodes[id].set_right(right_id);
        self.grow(right, depth + 1);
    }

    /// A threshold uniform between the extreme projections of `samples` on an atom
    /// (left in `self.atoms`, the projections in `self.values`) and the side missing
    /// projections go to, or `None` when [`ATOM_DRAWS`] atoms each project every row
    /// alike (or miss the features the tree sees).
    fn draw_cut(&mut self, samples: &[u32]) -> Option<(f32, bool)> {
        for _ in 0..ATOM_DRAWS {
            self.sampler.sample_node(self.rng, 1, &mut self.atoms);
            if self.atoms.is_empty() {
                // Every draw missed the features the tree sees.
                continue;
            }
            self.projector.project(
                self.rows,
                self.row_of,
                samples,
                &self.atoms,
                &mut self.values,
            );
            let (low, high) = value_range(&self.values);
            if low < high {
                // Sums of huge values overflow to infinite projections; a threshold
                // must stay finite, so it is drawn between the range's finite ends.
                let (from, to) = (low.max(-f32::MAX), high.min(f32::MAX));
                let drawn = from as f64 + self.rng.unit() * (to as f64 - from as f64);
                // Rounding to float32 may reach `high`, which would send every row
                // left; scikit-learn's extra trees take `low` then.
                let threshold = Some(drawn as f32).filter(|&t| t < high).unwrap_or(from);
                // No finite threshold parts -inf from -f32::MAX: another atom then.
                if threshold < high {
                    let n_left = self.values.iter().filter(|&&v| v <= threshold).count();
                    let n_present = self.values.iter().filter(|v| !v.is_nan()).count();
                    return Some((threshold, 2 * n_left >= n_present));
                }
            }
        }
        None
    }
}
