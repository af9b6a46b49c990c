use super::{AtomSampler, AtomSet};
use crate::rng::Rng;

/// SPORF atoms: a few random features with random signs.
pub struct SparseObliqueSampler {
    n_features: usize,
    feature_combinations: f64,
    pairs: Vec<(u32, f32)>,
}

impl SparseObliqueSampler {
    /// Atoms over `n_features` features with `feature_combinations` nonzeros on average.
    pub fn new(n_features: usize, feature_combinations: f64) -> Self {
        SparseObliqueSampler {
            n_features,
            feature_combinations,
            pairs: Vec::new(),
        }
    }
}

impl AtomSampler for SparseObliqueSampler {
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        for _ in 0..n_atoms {
            // 1 + Poisson(lambda - 1): the seeds' Poisson count of nonzeros, shifted so
            // that no atom is empty while the mean stays `feature_combinations`.
            let nonzeros = (1 + rng.poisson(self.feature_combinations - 1.0)).min(self.n_features);
            self.pairs.clear();
            while self.pairs.len() < nonzeros {
                let feature = rng.below(self.n_features) as u32;
                if self.pairs.iter().all(|&(f, _)| f != feature) {
                    let sign = if rng.coin() { 1.0 } else { -1.0 };
                    self.pairs.push((feature, sign));
                }
            }
            out.push_pairs(&mut self.pairs);
        }
    }
}
