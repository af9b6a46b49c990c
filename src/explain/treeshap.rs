//! Exact path-dependent TreeSHAP on one tree for one row, whose players are the tree's
//! distinct split atoms, in one pass over the nodes with a few values per node and
//! output: as many as the node's height.
//!
//! A leaf of value `v` reached through the distinct players `j` of its path, each
//! passing on the fraction `z_j` of the cover without knowing the row and `o_j` (1 or
//! 0) knowing it, is worth `v · Π_{j∈S} o_j · Π_{j∉S} z_j` to a coalition `S`.
//! Player `i`'s Shapley value from it is
//! `v (o_i − z_i) Σ_S |S|! (d−1−|S|)! / d! · Π_{j∈S} o_j Π_{j∉S, j≠i} z_j`, and as
//! `|S|! (d−1−|S|)! / d! = ∫₀¹ t^|S| (1−t)^(d−1−|S|) dt`, that is
//! `v (o_i − z_i) ∫₀¹ Π_{j≠i} f_j(t) dt` with `f_j(t) = z_j (1−t) + o_j t` (Yu et al.
//! 2022, "Linear TreeShap").
//!
//! The edge from node `n` into its child `c`, of player `i`, thus gets
//! `(o − z) ∫ P_n(t) R_c(t) dt`, where `P_n` is the product of the factors of the
//! edges above `n` and `R_c` the sum over the leaves below `c` of their values times
//! the factors of the edges between `c` and them: a polynomial of degree `c`'s
//! height, kept in the Bernstein basis ([`super::bernstein`]) on the way back up,
//! while the way down keeps the integrals of `P_n` against that basis (its moments),
//! so the integral is a dot product. Nothing depends on a number of integration
//! points: a node costs its height per output of its subtree's leaves, which is one
//! output for most nodes of a forest grown until its leaves are pure.
//!
//! A player split on again lower down has, below that split, the product of both
//! splits' fractions as its factor, which is no polynomial times the upper one: the
//! leaves below such a split are left out of the polynomials and played one by one
//! along their paths ([`super::quadrature`]).

use super::bernstein::dot;
use super::players::{ExplainedTree, WalkNode};
use super::quadrature::{path_shapley, PathScratch};
use crate::tree::goes_left;

/// Buffers of one thread's walks, reused from tree to tree and row to row.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// The subtree polynomials of the nodes on the path, per output of each.
    polys: Vec<f64>,
    /// The moments of the path products of the nodes on the path, and the lowered
    /// ones of their edges.
    moments: Vec<f64>,
    /// A child's polynomial raised to its parent's degree, step by step.
    elevated: [Vec<f64>; 2],
    /// The players on the current path, each once, with their fractions.
    path: Vec<(u32, f64, f64)>,
    /// Per player of `path`, its fractions, for a leaf played on its own.
    factors: Vec<(f64, f64)>,
    /// Per split node and output (aligned with the tree's outputs), the value of
    /// the node's player from the clean leaves below it.
    node_values: Vec<f64>,
    leaf: PathScratch,
}

/// Where a tree's players' values go: player `p`'s output `o` adds to
/// `values[rows[p] * stride + column + o]`.
pub(crate) struct PlayerValues<'a> {
    pub values: &'a mut [f64],
    pub rows: &'a [u32],
    pub stride: usize,
    pub column: usize,
}

impl PlayerValues<'_> {
    /// Where player `player`'s first output goes.
    #[inline]
    fn row(&self, player: u32) -> usize {
        self.rows[player as usize] as usize * self.stride + self.column
    }
}

/// Adds the Shapley values of the tree's players for a row to `out`, under the
/// path-dependent value function: a player left out of a coalition sends the row down
/// both sides of its splits in proportion to the training covers. Player `p`'s atom
/// projects the row to `projections[atoms[p]]`.
pub(crate) fn tree_shap(
    tree: &ExplainedTree<'_>,
    projections: &[f32],
    atoms: &[u32],
    mut out: PlayerValues<'_>,
    scratch: &mut Scratch,
) {
    let root = tree.nodes[0];
    if root.is_leaf() {
        return; // no player
    }
    scratch.path.clear();
    scratch.node_values.clear();
    scratch.node_values.resize(tree.outputs.len(), 0.0);
    // Along any path the degree falls by at least 1 a level, which bounds what the
    // path's nodes and edges keep.
    let degree = root.degree as usize;
    let bound = (degree + 1) * (degree + 2);
    if scratch.moments.len() < bound {
        scratch.moments.resize(bound, 0.0);
    }
    if scratch.polys.len() < bound * tree.width {
        scratch.polys.resize(bound * tree.width, 0.0);
    }
    for buffer in &mut scratch.elevated {
        buffer.resize(degree + 1, 0.0);
    }
    // The root's path product is 1, whose moments in degree k are all 1 / (k + 1).
    scratch.moments[..degree].fill(1.0 / degree.max(1) as f64);
    scratch.polys[..root.n_outputs as usize * (degree + 1)].fill(0.0);
    let mut walk = Walk {
        tree,
        projections,
        atoms,
        out: &mut out,
        scratch,
    };
    walk.visit_split(0, 0, 0);
    // Each clean split's values, to its player.
    for &(player, start, len) in &tree.split_outputs {
        let row = out.row(player);
        let (start, len) = (start as usize, len as usize);
        let values = &scratch.node_values[start..start + len];
        for (&output, &value) in tree.outputs[start..start + len].iter().zip(values) {
            out.values[row + output as usize] += value;
        }
    }
}

struct Walk<'w, 't, 'o> {
    tree: &'w ExplainedTree<'t>,
    projections: &'w [f32],
    atoms: &'w [u32],
    out: &'w mut PlayerValues<'o>,
    scratch: &'w mut Scratch,
}

impl Walk<'_, '_, '_> {
    /// Visits split node `id`. If it is clean and has outputs, its path product's
    /// moments of degree `degree − 1` are at `moments_at` in the scratch moments, and
    /// its subtree's polynomial (degree `degree`, per output) is added up at
    /// `poly_at` in the scratch polynomials, which hold zeros there.
    fn visit_split(&mut self, id: usize, moments_at: usize, poly_at: usize) {
        let tree = self.tree;
        let node = tree.nodes[id];
        let value = self.projections[self.atoms[node.player as usize] as usize];
        let right = node.right as usize;
        let (hot, cold, hot_zero) = if goes_left(value, node.threshold, node.missing_left) {
            (id + 1, right, node.left_fraction)
        } else {
            (right, id + 1, 1.0 - node.left_fraction)
        };
        // A player split on higher up: its entry on the path, whose fractions its
        // edges here multiply.
        let above = match node.repeats {
            false => None,
            true => (self.scratch.path.iter()).position(|&(p, _, _)| p == node.player),
        };
        let (above_zero, above_one) = above.map_or((1.0, 1.0), |at| {
            let (_, zero, one) = self.scratch.path[at];
            (zero, one)
        });
        let polynomials = node.clean && node.n_outputs > 0 && above.is_none();
        let degree = node.degree as usize;
        let mut path_integral = None;
        for (child, edge_zero, edge_one) in [(hot, hot_zero, 1.0), (cold, 1.0 - hot_zero, 0.0)] {
            let (zero, one) = (edge_zero * above_zero, edge_one * above_one);
            let child_node = tree.nodes[child];
            // A side the row does not take and no training sample reached adds
            // nothing, whoever plays; nor does a subtree without values.
            let in_polynomials = polynomials && child_node.n_outputs > 0;
            if !(zero > 0.0 || one > 0.0) || !(in_polynomials || child_node.unclean_leaves) {
                continue;
            }
            match above {
                None => self.scratch.path.push((node.player, zero, one)),
                Some(at) => self.scratch.path[at] = (node.player, zero, one),
            }
            match (child_node.is_leaf(), in_polynomials) {
                (true, true) => {
                    let integral = *path_integral.get_or_insert_with(|| {
                        self.scratch.moments[moments_at..moments_at + degree]
                            .iter()
                            .sum::<f64>()
                    });
                    self.clean_leaf(&node, &child_node, (zero, one), integral, poly_at);
                }
                (true, false) => self.unclean_leaf(&child_node),
                (false, true) => {
                    self.clean_split(&node, child, (zero, one), moments_at, poly_at);
                }
                (false, false) => self.visit_split(child, 0, 0),
            }
            match above {
                None => _ = self.scratch.path.pop(),
                Some(at) => self.scratch.path[at] = (node.player, above_zero, above_one),
            }
        }
    }

    /// A clean leaf below the edge of `node` with fractions `(zero, one)`, whose
    /// path product integrates to `integral` and whose polynomial is at `poly_at`.
    fn clean_leaf(
        &mut self,
        node: &WalkNode,
        leaf: &WalkNode,
        (zero, one): (f64, f64),
        integral: f64,
        poly_at: usize,
    ) {
        let tree = self.tree;
        let degree = node.degree as usize;
        let polys = &mut self.scratch.polys[poly_at..];
        let node_start = node.outputs_start as usize;
        for at in leaf.outputs() {
            let value = tree.leaf_values[at];
            let slot = tree.parent_slot[at] as usize;
            self.scratch.node_values[node_start + slot] += (one - zero) * value * integral;
            let parent = &mut polys[slot * (degree + 1)..][..degree + 1];
            tree.ratios
                .add_constant_times_factor(value, zero, one, parent);
        }
    }

    /// A clean split `child` below the edge of `node` with fractions `(zero, one)`,
    /// whose path product's moments (degree `degree − 1`) are at `moments_at` and
    /// whose polynomial (degree `degree`) is at `poly_at`.
    fn clean_split(
        &mut self,
        node: &WalkNode,
        child: usize,
        (zero, one): (f64, f64),
        moments_at: usize,
        poly_at: usize,
    ) {
        let tree = self.tree;
        let degree = node.degree as usize;
        let child_node = tree.nodes[child];
        let child_degree = child_node.degree as usize;
        let n_outputs = child_node.n_outputs as usize;
        // The parent's moments lowered to the child's degree, then times the edge's
        // factor: the child's moments, one degree lower.
        let lowered_at = moments_at + degree;
        let child_moments_at = lowered_at + child_degree + 1;
        let moments = &mut self.scratch.moments;
        moments.copy_within(moments_at..lowered_at, lowered_at);
        for len in (child_degree + 1..degree).rev() {
            (tree.ratios).lower_moments(&mut moments[lowered_at..lowered_at + len + 1]);
        }
        let (lowered, child_moments) = moments.split_at_mut(child_moments_at);
        tree.ratios.moments_times_factor(
            &lowered[lowered_at..],
            zero,
            one,
            &mut child_moments[..child_degree],
        );
        let child_poly_at = poly_at + node.n_outputs as usize * (degree + 1);
        let child_size = n_outputs * (child_degree + 1);
        self.scratch.polys[child_poly_at..child_poly_at + child_size].fill(0.0);

        self.visit_split(child, child_moments_at, child_poly_at);

        let scratch = &mut *self.scratch;
        let lowered = &scratch.moments[lowered_at..lowered_at + child_degree + 1];
        let (parent_polys, child_polys) = scratch.polys.split_at_mut(child_poly_at);
        let parent_polys = &mut parent_polys[poly_at..];
        let [elevated, spare] = &mut scratch.elevated;
        let node_values = &mut scratch.node_values[node.outputs_start as usize..];
        for (poly, at) in child_polys[..child_size]
            .chunks_exact(child_degree + 1)
            .zip(child_node.outputs())
        {
            let slot = tree.parent_slot[at] as usize;
            node_values[slot] += (one - zero) * dot(lowered, poly);
            let mut poly = poly;
            for len in child_degree + 1..degree {
                tree.ratios.elevate(poly, &mut elevated[..len + 1]);
                std::mem::swap(elevated, spare);
                poly = &spare[..len + 1];
            }
            let parent = &mut parent_polys[slot * (degree + 1)..][..degree + 1];
            tree.ratios.add_times_factor(poly, zero, one, parent);
        }
    }

    /// A leaf below a repeated player: its Shapley values along its path.
    fn unclean_leaf(&mut self, leaf: &WalkNode) {
        let tree = self.tree;
        let scratch = &mut *self.scratch;
        scratch.factors.clear();
        (scratch.factors).extend(scratch.path.iter().map(|&(_, zero, one)| (zero, one)));
        let (out, path) = (&mut *self.out, &scratch.path);
        path_shapley(
            &tree.quadrature,
            &scratch.factors,
            &mut scratch.leaf,
            |j, value| {
                let row = out.row(path[j].0);
                for at in leaf.outputs() {
                    out.values[row + tree.outputs[at] as usize] += tree.leaf_values[at] * value;
                }
            },
        );
    }
}
