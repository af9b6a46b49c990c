//! Polynomials on [0, 1] in the Bernstein basis `B^k_i(t) = C(k, i) t^i (1 − t)^(k−i)`,
//! and their integrals against a path's product (its moments), as TreeSHAP's walk
//! ([`super::treeshap`]) keeps them.
//!
//! The basis suits TreeSHAP's polynomials: every factor `z (1 − t) + o t` has the
//! nonnegative coefficients `(z, o)`, products and degree changes are convex
//! combinations, and `∫₀¹ B^k_i = 1 / (k + 1)` for every `i`, so nothing cancels and
//! nothing grows with the degree (the monomial basis would lose digits to
//! cancellation, the unscaled one overflow past degree 1000). Every coefficient and
//! moment is a [`Lanes`]: one value per row of the block walked.

use super::lanes::Lanes;

/// The ratios that change the degree of the basis: `(1 − t) B^k_i = l_k[i] B^(k+1)_i`
/// and `t B^k_(i−1) = u_k[i] B^(k+1)_i`, with `l_k[i] = (k + 1 − i) / (k + 1)` and
/// `u_k[i] = i / (k + 1)`, for `i` in `0..=k + 1`.
///
/// Also the binomial coefficients `C(n, r)` up to `n = max_degree` (at most
/// [`MAX_ONE_STEP_DEGREE`]), which raise a degree by several at once.
#[derive(Debug, Clone, Default)]
pub(crate) struct DegreeRatios {
    lower: Vec<f64>,
    upper: Vec<f64>,
    /// Row `n` of Pascal's triangle from `n * (n + 1) / 2` on.
    binomials: Vec<f64>,
}

/// Highest degree raised to (or moments lowered from) in one step: `C(n, r)` is a
/// finite `f64` up to `n = 1020`.
const MAX_ONE_STEP_DEGREE: usize = 1000;

impl DegreeRatios {
    /// The ratios of every degree below `max_degree`.
    pub(crate) fn up_to(max_degree: usize) -> DegreeRatios {
        let mut ratios = DegreeRatios::default();
        for k in 0..max_degree {
            let scale = 1.0 / (k + 1) as f64;
            for i in 0..=k + 1 {
                ratios.lower.push((k + 1 - i) as f64 * scale);
                ratios.upper.push(i as f64 * scale);
            }
        }
        for n in 0..=max_degree.min(MAX_ONE_STEP_DEGREE) {
            let row = ratios.binomials.len() - n.min(1) * n;
            for r in 0..=n {
                let value = match r == 0 || r == n {
                    true => 1.0,
                    false => ratios.binomials[row + r - 1] + ratios.binomials[row + r],
                };
                ratios.binomials.push(value);
            }
        }
        ratios
    }

    /// Whether a polynomial of degree `k` is raised by `by` (and moments lowered by
    /// `by` to degree `k`) in one step, with [`raising_weights`](Self::raising_weights):
    /// cheaper than `by` steps of one where `by` is at least 2.
    #[inline(always)]
    pub(crate) fn in_one_step(&self, k: usize, by: usize) -> bool {
        by >= 2 && k + by <= MAX_ONE_STEP_DEGREE
    }

    /// Appends to `weights` `w[i (by + 1) + r] = C(k, i) C(by, r) / C(k + by, i + r)`,
    /// with which `B^k_i = Σ_r w[i (by + 1) + r] B^(k+by)_(i+r)` (`k + by` at most
    /// [`MAX_ONE_STEP_DEGREE`] and the ratios' `max_degree`).
    pub(crate) fn raising_weights(&self, k: usize, by: usize, weights: &mut Vec<f64>) {
        let binomial = |n: usize, r: usize| self.binomials[n * (n + 1) / 2 + r];
        for i in 0..=k {
            let of_k = binomial(k, i);
            weights.extend((0..=by).map(|r| of_k * binomial(by, r) / binomial(k + by, i + r)));
        }
    }

    /// Sets `out` (`k + by + 1` coefficients) to `poly` (degree `k`) written in degree
    /// `k + by`, by the [`raising_weights`](Self::raising_weights) of `k` and `by`.
    #[inline(always)]
    pub(crate) fn raise<const N: usize>(
        poly: &[Lanes<N>],
        by: usize,
        weights: &[f64],
        out: &mut [Lanes<N>],
    ) {
        let out = &mut out[..poly.len() + by];
        out.fill(Lanes::ZERO);
        for (i, (&c, weights)) in poly.iter().zip(weights.chunks_exact(by + 1)).enumerate() {
            for (o, &w) in out[i..=i + by].iter_mut().zip(weights) {
                *o += c * w;
            }
        }
    }

    /// Lowers the moments `∫ P B^(k+by)_j` in `moments` (`k + by + 1` values) to degree
    /// `k`, in its first `k + 1` values, by the
    /// [`raising_weights`](Self::raising_weights) of `k` and `by`.
    #[inline(always)]
    pub(crate) fn lower_moments_by<const N: usize>(
        moments: &mut [Lanes<N>],
        by: usize,
        weights: &[f64],
    ) {
        // Lowered value i reads the moments i..=i + by only: in place, in order.
        for (i, weights) in weights.chunks_exact(by + 1).enumerate() {
            let mut total = Lanes::ZERO;
            for (&m, &w) in moments[i..=i + by].iter().zip(weights) {
                total += m * w;
            }
            moments[i] = total;
        }
    }

    /// `(l_k, u_k)`, `k + 2` values each.
    #[inline(always)]
    fn of(&self, k: usize) -> (&[f64], &[f64]) {
        let start = k * (k + 3) / 2;
        (
            &self.lower[start..start + k + 2],
            &self.upper[start..start + k + 2],
        )
    }

    /// Adds to `out` (degree `k + 1`, `k + 2` coefficients) the product of
    /// `poly` (degree `k`) and the factor `zero (1 − t) + one t`.
    #[inline(always)]
    pub(crate) fn add_times_factor<const N: usize>(
        &self,
        poly: &[Lanes<N>],
        zero: f64,
        one: Lanes<N>,
        out: &mut [Lanes<N>],
    ) {
        let k = poly.len() - 1;
        let (lower, upper) = self.of(k);
        let out = &mut out[..k + 2];
        out[0] += poly[0] * zero;
        for i in 1..=k {
            out[i] += poly[i] * (zero * lower[i]) + one * poly[i - 1] * upper[i];
        }
        out[k + 1] += one * poly[k];
    }

    /// Adds to `out` (degree `k + 1`, `k + 2` coefficients) the constant `value`
    /// times the factor `zero (1 − t) + one t`.
    #[inline(always)]
    pub(crate) fn add_constant_times_factor<const N: usize>(
        &self,
        value: f64,
        zero: f64,
        one: Lanes<N>,
        out: &mut [Lanes<N>],
    ) {
        let k = out.len() - 2;
        let (lower, upper) = self.of(k);
        let (zero, one) = (zero * value, one * value);
        for i in 0..k + 2 {
            out[i] += one * upper[i] + Lanes::splat(zero * lower[i]);
        }
    }

    /// Sets `out` (`k + 2` coefficients) to `poly` (degree `k`) written in degree
    /// `k + 1`.
    #[inline(always)]
    pub(crate) fn elevate<const N: usize>(&self, poly: &[Lanes<N>], out: &mut [Lanes<N>]) {
        let k = poly.len() - 1;
        let (lower, upper) = self.of(k);
        let out = &mut out[..k + 2];
        out[0] = poly[0];
        for i in 1..=k {
            out[i] = poly[i] * lower[i] + poly[i - 1] * upper[i];
        }
        out[k + 1] = poly[k];
    }

    /// Lowers the degree of the moments `∫ P B^(k+1)_i` in `moments` (`k + 2`
    /// values) to `k`, in its first `k + 1` values.
    #[inline(always)]
    pub(crate) fn lower_moments<const N: usize>(&self, moments: &mut [Lanes<N>]) {
        let k = moments.len() - 2;
        let (lower, upper) = self.of(k);
        for i in 0..=k {
            moments[i] = moments[i] * lower[i] + moments[i + 1] * upper[i + 1];
        }
    }

    /// Sets `out` (`k + 1` values) to the moments `∫ P B^k_i` of a product `P` from
    /// `moments`, its `k + 2` moments `∫ P B^(k+1)_i`, times the factor
    /// `zero (1 − t) + one t`; `(1, 1)` lowers the degree of the moments of `P`.
    #[inline(always)]
    pub(crate) fn moments_times_factor<const N: usize>(
        &self,
        moments: &[Lanes<N>],
        zero: f64,
        one: Lanes<N>,
        out: &mut [Lanes<N>],
    ) {
        let k = moments.len() - 2;
        let (lower, upper) = self.of(k);
        let out = &mut out[..k + 1];
        for i in 0..=k {
            out[i] = moments[i] * (zero * lower[i]) + one * moments[i + 1] * upper[i + 1];
        }
    }
}

/// `Σ a[i] b[i]`, lane by lane.
#[inline(always)]
pub(crate) fn dot<const N: usize>(a: &[Lanes<N>], b: &[Lanes<N>]) -> Lanes<N> {
    let b = &b[..a.len()];
    let mut total = Lanes::ZERO;
    for i in 0..a.len() {
        total += a[i] * b[i];
    }
    total
}

#[cfg(test)]
mod tests {
    use super::{dot, DegreeRatios};
    use crate::explain::lanes::{Lanes, BLOCK_ROWS as N};

    fn binomial(n: usize, k: usize) -> f64 {
        (0..k).fold(1.0, |c, j| c * (n - j) as f64 / (j + 1) as f64)
    }

    /// `Σ poly[i] B^k_i(t)` in lane `l`.
    fn evaluate(poly: &[Lanes<N>], l: usize, t: f64) -> f64 {
        let k = poly.len() - 1;
        poly.iter()
            .enumerate()
            .map(|(i, c)| {
                c.0[l] * binomial(k, i) * t.powi(i as i32) * (1.0 - t).powi((k - i) as i32)
            })
            .sum()
    }

    fn splat(values: &[f64]) -> Vec<Lanes<N>> {
        values.iter().map(|&v| Lanes::splat(v)).collect()
    }

    /// A factor's `one` that differs from lane to lane: 1 in every third lane.
    fn every_third() -> Lanes<N> {
        Lanes::indicator(|l| l % 3 == 0)
    }

    #[test]
    fn products_and_elevations_are_the_same_polynomials() {
        let ratios = DegreeRatios::up_to(8);
        let poly = splat(&[0.3, -1.2, 2.0, 0.7, 0.1]);
        let mut product = splat(&[0.5; 6]);
        ratios.add_times_factor(&poly, 0.25, every_third(), &mut product);
        let mut elevated = splat(&[0.0; 6]);
        ratios.elevate(&poly, &mut elevated);
        for l in 0..N {
            let one = every_third().0[l];
            for t in [0.0, 0.1, 0.5, 0.93, 1.0] {
                let expected = 0.5 + evaluate(&poly, l, t) * (0.25 * (1.0 - t) + one * t);
                assert!(
                    (evaluate(&product, l, t) - expected).abs() < 1e-12,
                    "at {t}"
                );
                let difference = evaluate(&elevated, l, t) - evaluate(&poly, l, t);
                assert!(difference.abs() < 1e-12);
            }
        }
    }

    #[test]
    fn raising_in_one_step_is_raising_step_by_step() {
        let ratios = DegreeRatios::up_to(12);
        let (k, by) = (3, 7);
        assert!(ratios.in_one_step(k, by));
        let mut weights = Vec::new();
        ratios.raising_weights(k, by, &mut weights);
        let poly = [
            Lanes::splat(0.3),
            every_third(),
            Lanes::splat(-1.2),
            Lanes::splat(2.0),
        ];
        let mut stepwise = poly.to_vec();
        for len in k + 1..=k + by {
            let mut next = vec![Lanes::ZERO; len + 1];
            ratios.elevate(&stepwise, &mut next);
            stepwise = next;
        }
        let mut raised = vec![Lanes::ZERO; k + by + 1];
        DegreeRatios::raise(&poly, by, &weights, &mut raised);
        // Moments of degree k + by lowered to k: one step, or `by` steps of one.
        let moments: Vec<Lanes<N>> = (0..=k + by).map(|j| Lanes::splat(0.1 + j as f64)).collect();
        let mut lowered = moments.clone();
        DegreeRatios::lower_moments_by(&mut lowered, by, &weights);
        let mut lowered_stepwise = moments;
        for len in (k + 1..=k + by).rev() {
            ratios.lower_moments(&mut lowered_stepwise[..len + 1]);
        }
        for l in 0..N {
            for j in 0..=k + by {
                assert!((raised[j].0[l] - stepwise[j].0[l]).abs() < 1e-14, "{j}");
            }
            for i in 0..=k {
                let difference = lowered[i].0[l] - lowered_stepwise[i].0[l];
                assert!(difference.abs() < 1e-12, "{i}");
            }
        }
    }

    #[test]
    fn moments_integrate_products_exactly() {
        // P = (0.4 (1 − t) + o t)(0.7 (1 − t)), o 1 in every third lane: its moments
        // of degree 3 from those of 1 (all 1/5 in degree 4) by two factors, then
        // lowered to degree 1.
        let ratios = DegreeRatios::up_to(8);
        let mut first = [Lanes::ZERO; 4];
        ratios.moments_times_factor(&splat(&[0.2; 5]), 0.4, every_third(), &mut first);
        let mut second = [Lanes::ZERO; 3];
        ratios.moments_times_factor(&first, 0.7, Lanes::ZERO, &mut second);
        let mut lowered = [Lanes::ZERO; 2];
        ratios.moments_times_factor(&second, 1.0, Lanes::ONE, &mut lowered);
        let poly = splat(&[1.5, -0.5]);
        let integral = dot(&poly, &lowered);
        for l in 0..N {
            let o = every_third().0[l];
            // ∫ P(t) poly(t) dt by a fine midpoint rule.
            let n = 200_000;
            let expected: f64 = (0..n)
                .map(|j| {
                    let t = (j as f64 + 0.5) / n as f64;
                    (0.4 * (1.0 - t) + o * t) * 0.7 * (1.0 - t) * evaluate(&poly, l, t)
                })
                .sum::<f64>()
                / n as f64;
            assert!((integral.0[l] - expected).abs() < 1e-9, "lane {l}");
        }
    }
}
