//! Exact path-dependent TreeSHAP on one tree for a block of rows side by side
//! ([`super::lanes`]), whose players are the tree's distinct split atoms, in one pass
//! over the nodes with a few values per node and output: as many as the node's height.
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
//!
//! The rows of a block walk the same nodes in the same order: a row only decides
//! which of a split's sides has `o = 1`. A side that no row of the block takes and no
//! training sample reached is skipped; a row for which it is such a side plays it with
//! both fractions 0, which adds exactly 0 to all it touches, so a row's values do not
//! depend on the rows beside it.

use super::bernstein::{dot, DegreeRatios};
use super::lanes::{Isa, Lanes, Mask};
use super::players::{ExplainedTree, WalkNode};
use super::quadrature::{path_shapley, PathScratch};

/// Buffers of one thread's walks, reused from tree to tree and row to row.
#[derive(Debug, Default)]
pub(crate) struct Scratch<const N: usize> {
    /// The subtree polynomials of the nodes on the path, per output of each.
    polys: Vec<Lanes<N>>,
    /// The moments of the path products of the nodes on the path, and the lowered
    /// ones of their edges.
    moments: Vec<Lanes<N>>,
    /// A child's polynomial raised to its parent's degree, in one step or step by
    /// step.
    elevated: [Vec<Lanes<N>>; 2],
    /// The weights that raise a child's degree in one step, of each edge on the path
    /// that has them, a stack.
    raising: Vec<f64>,
    /// The players on the current path, each once, with their fractions: `zero`,
    /// the same for every row, and `one` as the rows for which it is 1.
    path: Vec<(u32, f64, Mask)>,
    /// Per player of `path`, its fractions, for a leaf played on its own.
    factors: Vec<(f64, Mask)>,
    /// Per node, which rows of the block go left (bit `l` for row `l`), found for
    /// all nodes before the walk, whose loads of the projections then do not wait.
    sides: Vec<Mask>,
    /// Per split node and output (aligned with the tree's outputs), the value of
    /// the node's player from the clean leaves below it: kept apart from the
    /// model's values per atom, which are too many to stay in cache, and added to
    /// them after the walk.
    node_values: Vec<Lanes<N>>,
    leaf: PathScratch<N>,
}

/// Where a tree's players' values go: player `p`'s output `o` adds to
/// `values[rows[p] * stride + column + o]`, one value per row of the block.
pub(crate) struct PlayerValues<'a, const N: usize> {
    pub values: &'a mut [Lanes<N>],
    pub rows: &'a [u32],
    pub stride: usize,
    pub column: usize,
}

impl<const N: usize> PlayerValues<'_, N> {
    /// Where player `player`'s first output goes.
    #[inline(always)]
    fn row(&self, player: u32) -> usize {
        self.rows[player as usize] as usize * self.stride + self.column
    }
}

/// Adds the Shapley values of the tree's players for a block of rows to `out`, under
/// the path-dependent value function: a player left out of a coalition sends the row
/// down both sides of its splits in proportion to the training covers. Player `p`'s
/// atom projects the block's row `l` to `projections[atoms[p]][l]`. The walk runs in
/// the vectors of `isa`.
pub(crate) fn tree_shap<const N: usize>(
    tree: &ExplainedTree<'_>,
    projections: &[[f32; N]],
    atoms: &[u32],
    mut out: PlayerValues<'_, N>,
    scratch: &mut Scratch<N>,
    isa: Isa,
) {
    let root = tree.nodes[0];
    if root.is_leaf() {
        return; // no player
    }
    scratch.path.clear();
    if scratch.node_values.len() < tree.outputs.len() {
        scratch.node_values.resize(tree.outputs.len(), Lanes::ZERO);
    }
    // Along any path the degree falls by at least 1 a level, which bounds what the
    // path's nodes and edges keep.
    let degree = root.degree as usize;
    let bound = (degree + 1) * (degree + 2);
    if scratch.moments.len() < bound {
        scratch.moments.resize(bound, Lanes::ZERO);
    }
    if scratch.polys.len() < bound * tree.width {
        scratch.polys.resize(bound * tree.width, Lanes::ZERO);
    }
    for buffer in &mut scratch.elevated {
        buffer.resize(degree + 1, Lanes::ZERO);
    }
    // The root's path product is 1, whose moments in degree k are all 1 / (k + 1).
    scratch.moments[..degree].fill(Lanes::splat(1.0 / degree.max(1) as f64));
    scratch.polys[..root.n_outputs as usize * (degree + 1)].fill(Lanes::ZERO);
    let mut walk = Walk {
        tree,
        projections,
        atoms,
        out: &mut out,
        scratch,
    };
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the processor has AVX-512.
        Isa::Avx512 => unsafe { walk.run_avx512() },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the processor has AVX2.
        Isa::Avx2 => unsafe { walk.run_avx2() },
        _ => walk.run::<Plain>(),
    }
}

struct Walk<'w, 't, 'o, const N: usize> {
    tree: &'w ExplainedTree<'t>,
    projections: &'w [[f32; N]],
    atoms: &'w [u32],
    out: &'w mut PlayerValues<'o, N>,
    scratch: &'w mut Scratch<N>,
}

/// A compiled walk: the walk's steps are inlined into the function that visits a
/// split, which calls itself for the splits below, so that the whole walk runs in
/// the instructions that function was compiled for.
trait Variant {
    /// [`Walk::visit_split`] in this variant.
    fn visit<const N: usize>(
        walk: &mut Walk<'_, '_, '_, N>,
        id: usize,
        moments_at: usize,
        poly_at: usize,
    );
}

/// The walk in the instructions every processor of the target has.
struct Plain;

impl Variant for Plain {
    fn visit<const N: usize>(
        walk: &mut Walk<'_, '_, '_, N>,
        id: usize,
        moments_at: usize,
        poly_at: usize,
    ) {
        walk.visit_split::<Plain>(id, moments_at, poly_at);
    }
}

/// The walk in AVX2 vectors: a lane vector in two instructions, not four.
#[cfg(target_arch = "x86_64")]
struct Avx2;

#[cfg(target_arch = "x86_64")]
impl Variant for Avx2 {
    #[inline(always)]
    fn visit<const N: usize>(
        walk: &mut Walk<'_, '_, '_, N>,
        id: usize,
        moments_at: usize,
        poly_at: usize,
    ) {
        // SAFETY: the walk runs in this variant only where the processor has AVX2.
        unsafe { walk.visit_avx2(id, moments_at, poly_at) }
    }
}

/// The walk in AVX-512 vectors: a lane vector in one instruction.
#[cfg(target_arch = "x86_64")]
struct Avx512;

#[cfg(target_arch = "x86_64")]
impl Variant for Avx512 {
    #[inline(always)]
    fn visit<const N: usize>(
        walk: &mut Walk<'_, '_, '_, N>,
        id: usize,
        moments_at: usize,
        poly_at: usize,
    ) {
        // SAFETY: the walk runs in this variant only where the processor has AVX-512.
        unsafe { walk.visit_avx512(id, moments_at, poly_at) }
    }
}

impl<const N: usize> Walk<'_, '_, '_, N> {
    /// [`run`](Self::run) in AVX-512 vectors.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn run_avx512(&mut self) {
        self.run::<Avx512>();
    }

    /// [`visit_split`](Self::visit_split) in AVX-512 vectors.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn visit_avx512(&mut self, id: usize, moments_at: usize, poly_at: usize) {
        self.visit_split::<Avx512>(id, moments_at, poly_at);
    }

    /// [`run`](Self::run) in AVX2 vectors.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn run_avx2(&mut self) {
        self.run::<Avx2>();
    }

    /// Finds the sides of every split, then walks the tree from its root.
    #[inline(always)]
    fn run<V: Variant>(&mut self) {
        let (projections, atoms) = (self.projections, self.atoms);
        let sides = &mut self.scratch.sides;
        sides.clear();
        sides.resize(self.tree.nodes.len(), 0);
        for (side, node) in sides.iter_mut().zip(&self.tree.nodes) {
            if node.is_leaf() {
                continue;
            }
            let values = &projections[atoms[node.player as usize] as usize];
            for (l, &value) in values.iter().enumerate() {
                let left = crate::tree::goes_left(value, node.threshold, node.missing_left);
                *side |= (left as Mask) << l;
            }
        }
        V::visit(self, 0, 0, 0);
        // Each clean split's values, to its player (in the same vectors as the walk).
        let (tree, out) = (self.tree, &mut *self.out);
        for &(player, start, len) in &tree.split_outputs {
            let row = out.row(player);
            let (start, len) = (start as usize, len as usize);
            let values = &self.scratch.node_values[start..start + len];
            for (&output, &value) in tree.outputs[start..start + len].iter().zip(values) {
                out.values[row + output as usize] += value;
            }
        }
    }

    /// [`visit_split`](Self::visit_split) in AVX2 vectors.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn visit_avx2(&mut self, id: usize, moments_at: usize, poly_at: usize) {
        self.visit_split::<Avx2>(id, moments_at, poly_at);
    }

    /// Visits split node `id`. If it is clean and has outputs, its path product's
    /// moments of degree `degree − 1` are at `moments_at` in the scratch moments, and
    /// its subtree's polynomial (degree `degree`, per output) is added up at
    /// `poly_at` in the scratch polynomials, which hold zeros there.
    #[inline(always)]
    fn visit_split<V: Variant>(&mut self, id: usize, moments_at: usize, poly_at: usize) {
        let tree = self.tree;
        let node = tree.nodes[id];
        let sides = self.scratch.sides[id];
        let right = node.right as usize;
        // A player split on higher up: its entry on the path, whose fractions its
        // edges here multiply.
        let above = match node.repeats {
            false => None,
            true => (self.scratch.path.iter()).position(|&(p, _, _)| p == node.player),
        };
        let polynomials = node.clean && node.n_outputs > 0 && above.is_none();
        if polynomials {
            let start = node.outputs_start as usize;
            self.scratch.node_values[start..start + node.n_outputs as usize].fill(Lanes::ZERO);
        }
        let degree = node.degree as usize;
        let mut path_integral = None;
        let left_fraction = node.left_fraction;
        let edges = [
            (id + 1, left_fraction, sides),
            (right, 1.0 - left_fraction, !sides & Lanes::<N>::ALL_ROWS),
        ];
        for (child, edge_zero, edge_one) in edges {
            let child_node = tree.nodes[child];
            // A side no row takes and no training sample reached adds nothing, whoever
            // plays; nor does a subtree without values.
            let in_polynomials = polynomials && child_node.n_outputs > 0;
            let taken = edge_one != 0;
            if !(edge_zero > 0.0 || taken) || !(in_polynomials || child_node.unclean_leaves) {
                continue;
            }
            let (zero, one) = match above {
                None => (edge_zero, edge_one),
                Some(at) => {
                    let (_, above_zero, above_one) = self.scratch.path[at];
                    (above_zero * edge_zero, edge_one & above_one)
                }
            };
            // Only the leaves played one by one read the path: the edges to
            // subtrees without them stay off it.
            let on_path = child_node.unclean_leaves;
            let before = match above {
                None if on_path => {
                    self.scratch.path.push((node.player, zero, one));
                    None
                }
                None => None,
                Some(at) => Some(std::mem::replace(
                    &mut self.scratch.path[at],
                    (node.player, zero, one),
                )),
            };
            match (child_node.is_leaf(), in_polynomials) {
                (true, true) => {
                    let integral = *path_integral.get_or_insert_with(|| {
                        let moments = &self.scratch.moments[moments_at..moments_at + degree];
                        moments.iter().fold(Lanes::ZERO, |total, &m| total + m)
                    });
                    let edge = (zero, Lanes::from_mask(one));
                    self.clean_leaf(&node, &child_node, edge, integral, poly_at);
                }
                (true, false) => self.unclean_leaf(&child_node),
                (false, true) => {
                    let edge = (zero, Lanes::from_mask(one));
                    self.clean_split::<V>(&node, child, edge, moments_at, poly_at);
                }
                (false, false) => V::visit(self, child, 0, 0),
            }
            match (above, before) {
                (Some(at), Some(before)) => self.scratch.path[at] = before,
                _ if on_path => _ = self.scratch.path.pop(),
                _ => {}
            }
        }
    }

    /// A clean leaf below the edge of `node` with fractions `(zero, one)`, whose
    /// path product integrates to `integral` and whose polynomial is at `poly_at`.
    #[inline(always)]
    fn clean_leaf(
        &mut self,
        node: &WalkNode,
        leaf: &WalkNode,
        (zero, one): (f64, Lanes<N>),
        integral: Lanes<N>,
        poly_at: usize,
    ) {
        let tree = self.tree;
        let degree = node.degree as usize;
        for at in leaf.outputs() {
            let value = tree.leaf_values[at];
            let slot = tree.parent_slot[at] as usize;
            let node_value = node.outputs_start as usize + slot;
            self.scratch.node_values[node_value] += (one - Lanes::splat(zero)) * value * integral;
            let parent = &mut self.scratch.polys[poly_at + slot * (degree + 1)..][..degree + 1];
            tree.ratios
                .add_constant_times_factor(value, zero, one, parent);
        }
    }

    /// A clean split `child` below the edge of `node` with fractions `(zero, one)`,
    /// whose path product's moments (degree `degree − 1`) are at `moments_at` and
    /// whose polynomial (degree `degree`) is at `poly_at`.
    #[inline(always)]
    fn clean_split<V: Variant>(
        &mut self,
        node: &WalkNode,
        child: usize,
        (zero, one): (f64, Lanes<N>),
        moments_at: usize,
        poly_at: usize,
    ) {
        let tree = self.tree;
        let degree = node.degree as usize;
        let child_node = tree.nodes[child];
        let child_degree = child_node.degree as usize;
        let n_outputs = child_node.n_outputs as usize;
        // The parent's moments lowered to the child's degree (a copy, unless they
        // have its degree already), then times the edge's factor: the child's
        // moments, one degree lower.
        let moments = &mut self.scratch.moments;
        // The child's degree is raised (and the moments lowered) by `by` to the
        // parent's less one.
        let by = degree - 1 - child_degree;
        let one_step = tree.ratios.in_one_step(child_degree, by);
        // This edge's weights, above those of the edges above it until the walk below
        // is done.
        let weights_at = self.scratch.raising.len();
        if one_step {
            (tree.ratios).raising_weights(child_degree, by, &mut self.scratch.raising);
        }
        let lowered_at = match by {
            0 => moments_at,
            _ => {
                let lowered_at = moments_at + degree;
                moments.copy_within(moments_at..lowered_at, lowered_at);
                let lowered = &mut moments[lowered_at..lowered_at + degree];
                match one_step {
                    true => {
                        let weights = &self.scratch.raising[weights_at..];
                        DegreeRatios::lower_moments_by(lowered, by, weights);
                    }
                    false => {
                        for len in (child_degree + 1..degree).rev() {
                            tree.ratios.lower_moments(&mut lowered[..len + 1]);
                        }
                    }
                }
                lowered_at
            }
        };
        let child_moments_at = lowered_at + child_degree + 1;
        let (lowered, child_moments) = moments.split_at_mut(child_moments_at);
        tree.ratios.moments_times_factor(
            &lowered[lowered_at..],
            zero,
            one,
            &mut child_moments[..child_degree],
        );
        let child_poly_at = poly_at + node.n_outputs as usize * (degree + 1);
        let child_size = n_outputs * (child_degree + 1);
        self.scratch.polys[child_poly_at..child_poly_at + child_size].fill(Lanes::ZERO);

        V::visit(self, child, child_moments_at, child_poly_at);

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
            node_values[slot] += (one - Lanes::splat(zero)) * dot(lowered, poly);
            let mut poly = poly;
            if one_step {
                DegreeRatios::raise(poly, by, &scratch.raising[weights_at..], elevated);
                poly = &elevated[..degree];
            } else {
                for len in child_degree + 1..degree {
                    tree.ratios.elevate(poly, &mut elevated[..len + 1]);
                    std::mem::swap(elevated, spare);
                    poly = &spare[..len + 1];
                }
            }
            let parent = &mut parent_polys[slot * (degree + 1)..][..degree + 1];
            tree.ratios.add_times_factor(poly, zero, one, parent);
        }
        scratch.raising.truncate(weights_at);
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
                    out.values[row + tree.outputs[at] as usize] += value * tree.leaf_values[at];
                }
            },
        );
    }
}
