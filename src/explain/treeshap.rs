//! Exact path-dependent TreeSHAP on one tree for one row, whose players are the tree's
//! distinct split atoms, in time linear in the tree's size: one pass over the nodes
//! with a fixed number of values per node (after Yu et al. 2022, "Linear TreeShap").
//!
//! A leaf of value `v` reached through the distinct players `j` of its path, each
//! passing on the fraction `z_j` of the cover without knowing the row and `o_j` (1 or
//! 0) knowing it (the product over the player's splits on the path), is worth
//! `v · Π_{j∈S} o_j · Π_{j∉S} z_j` to a coalition `S`. Player `i`'s Shapley value from
//! it is `v (o_i − z_i) Σ_S |S|! (d−1−|S|)! / d! · Π_{j∈S} o_j Π_{j∉S, j≠i} z_j`, and as
//! `|S|! (d−1−|S|)! / d! = ∫₀¹ t^|S| (1−t)^(d−1−|S|) dt`, that is
//! `v (o_i − z_i) ∫₀¹ Π_{j≠i} f_j(t) dt` with `f_j(t) = z_j (1−t) + o_j t`: a polynomial of
//! degree `d − 1` below the tree's depth `D`, which the Gauss–Legendre rule of `⌈D/2⌉`
//! points integrates exactly. At those points the walk keeps each node's path product
//! `Π f_j(t)` and, on the way back up, each subtree's sum of its leaves' `v Π f_j(t)`;
//! the edge into a node then gives its player's value from its subtree's sum alone,
//! divided by the player's own factor. Every factor and weight is positive, so nothing
//! cancels (Algorithm 2 of Lundberg et al. 2020, which this replaces, costs a factor of
//! the depth more per leaf).
//!
//! A player split on again lower down has, below that split, the product of both
//! splits' fractions: the lower edge adds its value for the leaves below it and takes
//! back what the upper edge counted for them.

use super::players::ExplainedTree;
use crate::data::Feature;
use crate::tree::goes_left;

/// A Gauss–Legendre rule on [0, 1].
#[derive(Debug, Clone)]
pub(crate) struct Quadrature {
    points: Vec<f64>,
    weights: Vec<f64>,
    /// Per point, `−weight / (1 − point)`: the edge weights of a side the row does
    /// not take, whose factor `z (1 − t)` over its `−z` is the same for every `z`.
    cold_weights: Vec<f64>,
}

impl Quadrature {
    /// The rule of `n` points, exact for polynomials of degree below `2n`.
    pub(crate) fn gauss_legendre(n: usize) -> Quadrature {
        let mut points = Vec::with_capacity(n);
        let mut weights = Vec::with_capacity(n);
        for k in 0..n {
            // Newton's method on the Legendre polynomial from Tricomi's estimate of its
            // k-th root, which it converges to in a few steps for any n.
            let mut x = (std::f64::consts::PI * (k as f64 + 0.75) / (n as f64 + 0.5)).cos();
            for _ in 0..100 {
                let (value, slope) = legendre(n, x);
                let step = value / slope;
                x -= step;
                if step.abs() <= 1e-15 {
                    break;
                }
            }
            let (_, slope) = legendre(n, x);
            points.push((1.0 - x) / 2.0);
            weights.push(1.0 / ((1.0 - x * x) * slope * slope));
        }
        let cold_weights = points
            .iter()
            .zip(&weights)
            .map(|(&t, &w)| -w / (1.0 - t))
            .collect();
        Quadrature {
            points,
            weights,
            cold_weights,
        }
    }

    /// Number of points.
    pub(crate) fn len(&self) -> usize {
        self.points.len()
    }
}

/// The Legendre polynomial of degree `n >= 1` at `x` in (−1, 1), and its slope there.
fn legendre(n: usize, x: f64) -> (f64, f64) {
    let (mut before, mut value) = (1.0, x);
    for j in 2..=n {
        let j = j as f64;
        let next = ((2.0 * j - 1.0) * x * value - (j - 1.0) * before) / j;
        before = value;
        value = next;
    }
    (value, n as f64 * (x * value - before) / (x * x - 1.0))
}

/// Buffers of one thread's walks, reused from tree to tree and row to row.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// Per depth of the node being visited, its path product at each point.
    products: Vec<f64>,
    /// Per depth, the node's subtree's sum at each point, `width` values each.
    sums: Vec<f64>,
    /// Per point, an edge's weight of its child's sum.
    edge_weights: Vec<f64>,
    /// Per player, its fractions `(zero, one)` on the current path, if it is on it.
    on_path: Vec<Option<(f64, f64)>>,
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
    let points = tree.quadrature.len();
    if points == 0 {
        return; // a lone leaf: no player
    }
    let levels = tree.depth + 1;
    if scratch.products.len() < levels * points {
        scratch.products.resize(levels * points, 0.0);
    }
    if scratch.sums.len() < levels * points * tree.width {
        scratch.sums.resize(levels * points * tree.width, 0.0);
    }
    scratch.edge_weights.resize(points, 0.0);
    scratch.on_path.clear();
    scratch.on_path.resize(tree.n_players(), None);
    scratch.products[..points].fill(1.0);
    let mut walk = Walk {
        tree,
        row,
        phi,
        points,
        products: &mut scratch.products,
        sums: &mut scratch.sums,
        edge_weights: &mut scratch.edge_weights,
        on_path: &mut scratch.on_path,
    };
    walk.visit_split(0, 0);
}

struct Walk<'w, 't, T> {
    tree: &'w ExplainedTree<'t>,
    row: &'w [T],
    phi: &'w mut [f64],
    points: usize,
    products: &'w mut [f64],
    sums: &'w mut [f64],
    edge_weights: &'w mut [f64],
    on_path: &'w mut [Option<(f64, f64)>],
}

/// A player's factor `z (1 − t) + o t` at point `t`.
#[inline]
fn factor(zero: f64, one: f64, t: f64) -> f64 {
    zero * (1.0 - t) + one * t
}

/// `total[j] += scale * values[j]` for every `j` of `total`.
#[inline]
fn add_scaled(total: &mut [f64], scale: f64, values: &[f64]) {
    let values = &values[..total.len()];
    for j in 0..total.len() {
        total[j] += scale * values[j];
    }
}

impl<T: Feature> Walk<'_, '_, T> {
    /// Sets `edge_weights` to the weights, per point, of an edge's child's sum in the
    /// value of the edge's player, of fractions `(zero, one)` below the edge and
    /// `above` above it if the player split higher up: the leaves below take the
    /// value of the edge's split in place of what that split counted for them.
    fn set_edge_weights(&mut self, (zero, one): (f64, f64), above: Option<(f64, f64)>) {
        let quadrature = &self.tree.quadrature;
        if one == 0.0 && above.is_none() {
            self.edge_weights.copy_from_slice(&quadrature.cold_weights);
            return;
        }
        for (k, w) in self.edge_weights.iter_mut().enumerate() {
            let t = quadrature.points[k];
            let mut weight = (one - zero) / factor(zero, one, t);
            if let Some((above_zero, above_one)) = above {
                weight -= (above_one - above_zero) / factor(above_zero, above_one, t);
            }
            *w = quadrature.weights[k] * weight;
        }
    }

    /// Visits split node `id` at depth `depth`, whose path product is in `products`
    /// at that depth, and leaves its subtree's sum in `sums` at that depth.
    fn visit_split(&mut self, id: usize, depth: usize) {
        let (points, width) = (self.points, self.tree.width);
        let tree = self.tree;
        let split = tree.split(id).expect("a split node");
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
        let player = split.player as usize;
        let above = self.on_path[player];
        let (above_zero, above_one) = above.unwrap_or((1.0, 1.0));
        let block = points * width;
        self.sums[depth * block..][..block].fill(0.0);
        for (child, edge_zero, edge_one) in [(hot, hot_zero, 1.0), (cold, cold_zero, 0.0)] {
            let (zero, one) = (edge_zero * above_zero, edge_one * above_one);
            // A side the row does not take and no training sample reached adds
            // nothing, whoever plays.
            if !(zero > 0.0 || one > 0.0) {
                continue;
            }
            let quadrature = &tree.quadrature;
            let (parent, below) = self.products.split_at_mut((depth + 1) * points);
            let (parent, below) = (&parent[depth * points..], &mut below[..points]);
            for k in 0..points {
                // The player's factor replaces the one of its split higher up.
                let t = quadrature.points[k];
                below[k] = match above {
                    None => parent[k] * factor(zero, one, t),
                    Some(_) => parent[k] * factor(zero, one, t) / factor(above_zero, above_one, t),
                };
            }
            if tree.is_leaf(child) {
                self.set_edge_weights((zero, one), above);
                let parent = &mut self.sums[depth * block..][..block];
                let phi = &mut self.phi[player * width..][..width];
                // The leaf's sum is its values times the path product: its player's
                // share is one weighted sum of the product.
                let product = &self.products[(depth + 1) * points..][..points];
                let values = tree.leaf_values(child);
                let mut weighted = 0.0;
                for k in 0..points {
                    weighted += self.edge_weights[k] * product[k];
                    add_scaled(&mut parent[k * width..][..width], product[k], values);
                }
                add_scaled(phi, weighted, values);
            } else {
                self.on_path[player] = Some((zero, one));
                self.visit_split(child, depth + 1);
                self.on_path[player] = above;
                self.set_edge_weights((zero, one), above);
                let (parent, below) = self.sums.split_at_mut((depth + 1) * block);
                let (parent, below) = (&mut parent[depth * block..], &below[..block]);
                let phi = &mut self.phi[player * width..][..width];
                for k in 0..points {
                    let cell = &below[k * width..][..width];
                    add_scaled(phi, self.edge_weights[k], cell);
                    add_scaled(&mut parent[k * width..][..width], 1.0, cell);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Quadrature;

    #[test]
    fn gauss_legendre_integrates_polynomials_below_twice_its_points_exactly() {
        for n in [1, 2, 5, 13, 40, 200, 512] {
            let rule = Quadrature::gauss_legendre(n);
            for degree in [0, 1, n, 2 * n - 1] {
                let integral: f64 = rule
                    .points
                    .iter()
                    .zip(&rule.weights)
                    .map(|(&t, &w)| w * t.powi(degree as i32))
                    .sum();
                let exact = 1.0 / (degree + 1) as f64;
                assert!(
                    (integral - exact).abs() <= 1e-13 * exact.max(1e-3),
                    "{n} points, degree {degree}: {integral} against {exact}"
                );
            }
            assert!(rule.points.iter().all(|&t| t > 0.0 && t < 1.0));
        }
    }
}
