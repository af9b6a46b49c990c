//! Seeded random numbers that stay the same across versions and thread counts.
//!
//! The stream comes from ChaCha8 (its output is fixed by its specification), and the
//! few distributions we need are written here rather than taken from `rand`, whose
//! sampling algorithms may change between releases.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// A reproducible random stream.
pub struct Rng(ChaCha8Rng);

impl Rng {
    /// Stream `stream` of the generator seeded by `seed`: distinct streams never overlap,
    /// which is how every tree gets its own generators from (seed, tree index).
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut inner = ChaCha8Rng::seed_from_u64(seed);
        inner.set_stream(stream);
        Rng(inner)
    }

    /// Uniform integer in `[0, n)`; `n` must be positive. Lemire's multiply-shift with
    /// rejection, so it is exactly uniform.
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        let n = n as u64;
        let mut product = (self.0.next_u64() as u128) * (n as u128);
        // Draws whose low half falls under 2^64 mod n would bias the result; redraw
        // them. That bound is below n, so only a low half under n needs its division.
        if (product as u64) < n {
            let biased_below = n.wrapping_neg() % n;
            while (product as u64) < biased_below {
                product = (self.0.next_u64() as u128) * (n as u128);
            }
        }
        (product >> 64) as usize
    }

    /// Uniform integer in `[low, high]` (inclusive).
    pub fn between(&mut self, low: i64, high: i64) -> i64 {
        debug_assert!(low <= high);
        low + self.below((high - low) as usize + 1) as i64
    }

    /// Uniform float in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        // 1 - unit() lies in (0, 1], so the logarithm is finite.
        let radius = (-2.0 * (1.0 - self.unit()).ln()).sqrt();
        radius * (std::f64::consts::TAU * self.unit()).cos()
    }

    /// A fair coin.
    pub fn coin(&mut self) -> bool {
        self.0.next_u32() & 1 == 1
    }

    /// Poisson-distributed count with mean `lambda` (Knuth's product method; the
    /// rates used here are small).
    pub fn poisson(&mut self, lambda: f64) -> usize {
        let limit = (-lambda).exp();
        let mut count = 0;
        let mut product = self.unit();
        while product > limit {
            count += 1;
            product *= self.unit();
        }
        count
    }

    /// Moves `k` distinct values drawn uniformly from `pool` to `pool[..k]`
    /// (a partial Fisher-Yates shuffle).
    pub fn choose_into_prefix<T>(&mut self, pool: &mut [T], k: usize) {
        let n = pool.len();
        for i in 0..k.min(n) {
            let j = i + self.below(n - i);
            pool.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_below_n_follow_the_rejection_rule() {
        // The rule written out: draw, and redraw while the low half is under 2^64 mod
        // n. n = 2^63 + 1 rejects about half of all draws.
        for n in [1u64, 3, 10, 1000, (1 << 63) + 1, u64::MAX] {
            let (mut rng, mut stream) = (Rng::new(7, 1), Rng::new(7, 1));
            for _ in 0..2000 {
                let expected = loop {
                    let product = (stream.0.next_u64() as u128) * (n as u128);
                    if (product as u64) >= n.wrapping_neg() % n {
                        break (product >> 64) as u64;
                    }
                };
                assert_eq!(rng.below(n as usize) as u64, expected, "n = {n}");
            }
        }
    }

    #[test]
    fn normal_draws_have_mean_zero_and_variance_one() {
        let mut rng = Rng::new(3, 0);
        let draws: Vec<f64> = (0..100_000).map(|_| rng.normal()).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let variance = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        let beyond_two = draws.iter().filter(|d| d.abs() > 2.0).count() as f64 / draws.len() as f64;
        assert!(
            mean.abs() < 0.01 && (variance - 1.0).abs() < 0.02,
            "{mean} {variance}"
        );
        // P(|Z| > 2) = 0.0455 for a standard normal.
        assert!((beyond_two - 0.0455).abs() < 0.003, "{beyond_two}");
    }
}
