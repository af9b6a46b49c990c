use super::{AtomSampler, AtomSet};
use crate::rng::Rng;

/// Draws each atom from one of several families, chosen with given probabilities.
pub struct MixtureSampler<'a> {
    families: Vec<Box<dyn AtomSampler + 'a>>,
    /// Running totals of the families' probabilities; the last is 1.
    cumulative: Vec<f64>,
    counts: Vec<usize>,
}

impl<'a> MixtureSampler<'a> {
    /// Each of `families` with its probability; the probabilities must sum to 1.
    pub fn new(families: Vec<(Box<dyn AtomSampler + 'a>, f64)>) -> Self {
        let mut total = 0.0;
        let cumulative: Vec<f64> = families
            .iter()
            .map(|(_, p)| {
                total += p;
                total
            })
            .collect();
        MixtureSampler {
            counts: vec![0; families.len()],
            families: families.into_iter().map(|(family, _)| family).collect(),
            cumulative,
        }
    }
}

impl AtomSampler for MixtureSampler<'_> {
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        // Each atom's family is drawn independently; then each family draws its atoms
        // together, so that, say, axis-aligned atoms of one node are distinct features.
        self.counts.fill(0);
        let last = self.families.len() - 1;
        for _ in 0..n_atoms {
            let u = rng.unit() * self.cumulative[last];
            let family = self.cumulative[..last].partition_point(|&c| c <= u);
            self.counts[family] += 1;
        }
        for (family, &count) in self.families.iter_mut().zip(&self.counts) {
            if count > 0 {
                family.append_atoms(rng, count, out);
            }
        }
    }
}
