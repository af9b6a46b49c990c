//! The Shapley values of one leaf's path, by a Gauss–Legendre rule: for the leaves
//! below a split on an atom that a split above them already tested, whose factors the
//! walk's polynomials ([`super::bernstein`]) cannot hold (the lower split's factor is
//! the ratio of the player's combined factor to the upper one's).
//!
//! A leaf of value `v` reached through the distinct players `j`, each passing on the
//! fraction `z_j` of the cover without knowing the row and `o_j` knowing it (the
//! product over the player's splits on the path), gives player `i`
//! `v (o_i − z_i) ∫₀¹ Π_{j≠i} (z_j (1 − t) + o_j t) dt`: a polynomial of degree below
//! the tree's depth `D`, which the rule of `⌈D/2⌉` points integrates exactly.

use super::lanes::{Lanes, Mask};

/// A Gauss–Legendre rule on [0, 1].
#[derive(Debug, Clone)]
pub(crate) struct Quadrature {
    points: Vec<f64>,
    weights: Vec<f64>,
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
        Quadrature { points, weights }
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

/// Buffers of [`path_shapley`].
#[derive(Debug, Default)]
pub(crate) struct PathScratch<const N: usize> {
    /// Per player and point, the product of the factors of the players before it.
    prefix: Vec<Lanes<N>>,
    /// Per point, the product of the factors of the players after the current one.
    suffix: Vec<Lanes<N>>,
}

/// Calls `add(j, value)` with the Shapley value of each player `j` of a leaf of value
/// 1 reached through the players of fractions `factors[j] = (zero, one)`, lane by lane:
/// `zero` the same in every lane, `one` 1 in the lanes of its mask.
pub(crate) fn path_shapley<const N: usize>(
    quadrature: &Quadrature,
    factors: &[(f64, Mask)],
    scratch: &mut PathScratch<N>,
    mut add: impl FnMut(usize, Lanes<N>),
) {
    let points = quadrature.len();
    scratch.prefix.clear();
    scratch
        .prefix
        .resize((factors.len() + 1) * points, Lanes::ONE);
    for (j, &(zero, one)) in factors.iter().enumerate() {
        let one = Lanes::from_mask(one);
        let (before, after) = scratch.prefix.split_at_mut((j + 1) * points);
        let before = &before[j * points..];
        let terms = after.iter_mut().zip(before).zip(&quadrature.points);
        for ((product, &before), &t) in terms {
            *product = before * (one * t + Lanes::splat(zero * (1.0 - t)));
        }
    }
    scratch.suffix.clear();
    scratch.suffix.resize(points, Lanes::ONE);
    for (j, &(zero, one)) in factors.iter().enumerate().rev() {
        let one = Lanes::from_mask(one);
        let before = &scratch.prefix[j * points..][..points];
        let mut integral = Lanes::ZERO;
        let rule = quadrature.points.iter().zip(&quadrature.weights);
        for ((after, &before), (&t, &weight)) in scratch.suffix.iter_mut().zip(before).zip(rule) {
            integral += before * weight * *after;
            *after = *after * (one * t + Lanes::splat(zero * (1.0 - t)));
        }
        add(j, (one - Lanes::splat(zero)) * integral);
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
