//! Polynomials on [0, 1] in the Bernstein basis `B^k_i(t) = C(k, i) t^i (1 − t)^(k−i)`,
//! and their integrals against a path's product (its moments), as TreeSHAP's walk
//! ([`super::treeshap`]) keeps them.
//!
//! The basis suits TreeSHAP's polynomials: every factor `z (1 − t) + o t` has the
//! nonnegative coefficients `(z, o)`, products and degree changes are convex
//! combinations, and `∫₀¹ B^k_i = 1 / (k + 1)` for every `i`, so nothing cancels and
//! nothing grows with the degree (the monomial basis would lose digits to
//! cancellation, the unscaled one overflow past degree 1000).

/// The ratios that change the degree of the basis: `(1 − t) B^k_i = l_k[i] B^(k+1)_i`
/// and `t B^k_(i−1) = u_k[i] B^(k+1)_i`, with `l_k[i] = (k + 1 − i) / (k + 1)` and
/// `u_k[i] = i / (k + 1)`, for `i` in `0..=k + 1`.
#[derive(Debug, Clone, Default)]
pub(crate) struct DegreeRatios {
    lower: Vec<f64>,
    upper: Vec<f64>,
}

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
        ratios
    }

    /// `(l_k, u_k)`, `k + 2` values each.
    #[inline]
    fn of(&self, k: usize) -> (&[f64], &[f64]) {
        let start = k * (k + 3) / 2;
        (
            &self.lower[start..start + k + 2],
            &self.upper[start..start + k + 2],
        )
    }

    /// Adds to `out` (degree `k + 1`, `k + 2` coefficients) the product of
    /// `poly` (degree `k`) and the factor `zero (1 − t) + one t`.
    #[inline]
    pub(crate) fn add_times_factor(&self, poly: &[f64], zero: f64, one: f64, out: &mut [f64]) {
        let k = poly.len() - 1;
        let (lower, upper) = self.of(k);
        let out = &mut out[..k + 2];
        out[0] += zero * poly[0];
        for i in 1..=k {
            out[i] += zero * lower[i] * poly[i] + one * upper[i] * poly[i - 1];
        }
        out[k + 1] += one * poly[k];
    }

    /// Adds to `out` (degree `k + 1`, `k + 2` coefficients) the constant `value`
    /// times the factor `zero (1 − t) + one t`.
    #[inline]
    pub(crate) fn add_constant_times_factor(
        &self,
        value: f64,
        zero: f64,
        one: f64,
        out: &mut [f64],
    ) {
        let k = out.len() - 2;
        let (lower, upper) = self.of(k);
        let (zero, one) = (zero * value, one * value);
        for i in 0..k + 2 {
            out[i] += zero * lower[i] + one * upper[i];
        }
    }

    /// Sets `out` (`k + 2` coefficients) to `poly` (degree `k`) written in degree
    /// `k + 1`.
    #[inline]
    pub(crate) fn elevate(&self, poly: &[f64], out: &mut [f64]) {
        let k = poly.len() - 1;
        let (lower, upper) = self.of(k);
        let out = &mut out[..k + 2];
        out[0] = poly[0];
        for i in 1..=k {
            out[i] = lower[i] * poly[i] + upper[i] * poly[i - 1];
        }
        out[k + 1] = poly[k];
    }

    /// Lowers the degree of the moments `∫ P B^(k+1)_i` in `moments` (`k + 2`
    /// values) to `k`, in its first `k + 1` values.
    #[inline]
    pub(crate) fn lower_moments(&self, moments: &mut [f64]) {
        let k = moments.len() - 2;
        let (lower, upper) = self.of(k);
        for i in 0..=k {
            moments[i] = lower[i] * moments[i] + upper[i + 1] * moments[i + 1];
        }
    }

    /// Sets `out` (`k + 1` values) to the moments `∫ P B^k_i` of a product `P` from
    /// `moments`, its `k + 2` moments `∫ P B^(k+1)_i`, times the factor
    /// `zero (1 − t) + one t`; `(1, 1)` lowers the degree of the moments of `P`.
    #[inline]
    pub(crate) fn moments_times_factor(
        &self,
        moments: &[f64],
        zero: f64,
        one: f64,
        out: &mut [f64],
    ) {
        let k = moments.len() - 2;
        let (lower, upper) = self.of(k);
        let out = &mut out[..k + 1];
        for i in 0..=k {
            out[i] = zero * lower[i] * moments[i] + one * upper[i + 1] * moments[i + 1];
        }
    }
}

/// `Σ a[i] b[i]`.
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let b = &b[..a.len()];
    let mut total = 0.0;
    for i in 0..a.len() {
        total += a[i] * b[i];
    }
    total
}

#[cfg(test)]
mod tests {
    use super::{dot, DegreeRatios};

    fn binomial(n: usize, k: usize) -> f64 {
        (0..k).fold(1.0, |c, j| c * (n - j) as f64 / (j + 1) as f64)
    }

    /// `Σ poly[i] B^k_i(t)`.
    fn evaluate(poly: &[f64], t: f64) -> f64 {
        let k = poly.len() - 1;
        poly.iter()
            .enumerate()
            .map(|(i, &c)| c * binomial(k, i) * t.powi(i as i32) * (1.0 - t).powi((k - i) as i32))
            .sum()
    }

    #[test]
    fn products_and_elevations_are_the_same_polynomials() {
        let ratios = DegreeRatios::up_to(8);
        let poly = [0.3, -1.2, 2.0, 0.7, 0.1];
        let mut product = [0.5; 6];
        ratios.add_times_factor(&poly, 0.25, 1.0, &mut product);
        let mut elevated = [0.0; 6];
        ratios.elevate(&poly, &mut elevated);
        for t in [0.0, 0.1, 0.5, 0.93, 1.0] {
            let expected = 0.5 + evaluate(&poly, t) * (0.25 * (1.0 - t) + t);
            assert!((evaluate(&product, t) - expected).abs() < 1e-12, "at {t}");
            assert!((evaluate(&elevated, t) - evaluate(&poly, t)).abs() < 1e-12);
        }
    }

    #[test]
    fn moments_integrate_products_exactly() {
        // P = (0.4 (1 − t) + t)(0.7 (1 − t)): its moments of degree 3 from those of
        // 1 (all 1/5 in degree 4) by two factors, then lowered to degree 1.
        let ratios = DegreeRatios::up_to(8);
        let mut first = [0.0; 4];
        ratios.moments_times_factor(&[0.2; 5], 0.4, 1.0, &mut first);
        let mut second = [0.0; 3];
        ratios.moments_times_factor(&first, 0.7, 0.0, &mut second);
        let mut lowered = [0.0; 2];
        ratios.moments_times_factor(&second, 1.0, 1.0, &mut lowered);
        let poly = [1.5, -0.5];
        // ∫ P(t) poly(t) dt by a fine midpoint rule.
        let n = 200_000;
        let integral: f64 = (0..n)
            .map(|j| {
                let t = (j as f64 + 0.5) / n as f64;
                (0.4 * (1.0 - t) + t) * 0.7 * (1.0 - t) * evaluate(&poly, t)
            })
            .sum::<f64>()
            / n as f64;
        assert!((dot(&poly, &lowered) - integral).abs() < 1e-9);
    }
}
