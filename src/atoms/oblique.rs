use super::{AtomSampler, AtomSet};
use crate::rng::Rng;

/// Largest `feature_combinations`: the Poisson draw multiplies uniforms until their
/// product falls below `exp(1 - feature_combinations)`, which must stay a normal float
/// (above about `exp(-708)`) for the count to follow the requested mean.
pub const MAX_FEATURE_COMBINATIONS: f64 = 700.0;

/// Nonzeros up to which a repeat is found by scanning the atom's features; more are
/// looked up in a table of the features taken, so that an atom costs time in
/// proportion to its size rather than its square.
const SCANNED_NONZEROS: usize = 32;

/// SPORF atoms: a few random features with random signs.
pub struct SparseObliqueSampler {
    n_features: usize,
    feature_combinations: f64,
    pairs: Vec<(u32, f32)>,
    /// Whether each feature is in the atom being drawn, for atoms of more than
    /// [`SCANNED_NONZEROS`] nonzeros; all false between atoms.
    taken: Vec<bool>,
}

impl SparseObliqueSampler {
    /// Atoms over `n_features` features with `feature_combinations` nonzeros on average.
    pub fn new(n_features: usize, feature_combinations: f64) -> Self {
        SparseObliqueSampler {
            n_features,
            feature_combinations,
            pairs: Vec::new(),
            taken: Vec::new(),
        }
    }

    /// Draws `nonzeros` distinct features with random signs into `self.pairs`.
    fn draw_pairs(&mut self, rng: &mut Rng, nonzeros: usize) {
        self.pairs.clear();
        let scanned = nonzeros <= SCANNED_NONZEROS;
        if !scanned {
            self.taken.resize(self.n_features, false);
        }
        // The same draws either way: only how a repeat is recognised differs.
        while self.pairs.len() < nonzeros {
            let feature = rng.below(self.n_features) as u32;
            let repeat = if scanned {
                self.pairs.iter().any(|&(f, _)| f == feature)
            } else {
                std::mem::replace(&mut self.taken[feature as usize], true)
            };
            if !repeat {
                let sign = if rng.coin() { 1.0 } else { -1.0 };
                self.pairs.push((feature, sign));
            }
        }
        if !scanned {
            for &(feature, _) in &self.pairs {
                self.taken[feature as usize] = false;
            }
        }
    }
}

impl AtomSampler for SparseObliqueSampler {
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        for _ in 0..n_atoms {
            // 1 + Poisson(lambda - 1): the seeds' Poisson count of nonzeros, shifted so
            // that no atom is empty while the mean stays `feature_combinations`.
            let nonzeros = (1 + rng.poisson(self.feature_combinations - 1.0)).min(self.n_features);
            self.draw_pairs(rng, nonzeros);
            out.push_pairs(&mut self.pairs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The draw before the table of taken features: a scan for every repeat.
    fn scanned_atoms(n_features: usize, lambda: f64, seed: u64) -> AtomSet {
        let mut rng = Rng::new(seed, 0);
        let mut out = AtomSet::default();
        for _ in 0..50 {
            let nonzeros = (1 + rng.poisson(lambda - 1.0)).min(n_features);
            let mut pairs: Vec<(u32, f32)> = Vec::new();
            while pairs.len() < nonzeros {
                let feature = rng.below(n_features) as u32;
                if pairs.iter().all(|&(f, _)| f != feature) {
                    let sign = if rng.coin() { 1.0 } else { -1.0 };
                    pairs.push((feature, sign));
                }
            }
            out.push_pairs(&mut pairs);
        }
        out
    }

    #[test]
    fn large_atoms_are_the_atoms_a_scan_for_repeats_draws() {
        for (n_features, lambda) in [(10, 1.5), (100, 20.0), (100, 90.0), (5000, 300.0)] {
            let mut sampler = SparseObliqueSampler::new(n_features, lambda);
            let mut rng = Rng::new(7, 0);
            let mut out = AtomSet::default();
            sampler.append_atoms(&mut rng, 50, &mut out);
            let expected = scanned_atoms(n_features, lambda, 7);
            assert_eq!(
                format!("{out:?}"),
                format!("{expected:?}"),
                "{n_features} {lambda}"
            );
        }
    }
}
