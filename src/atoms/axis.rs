use super::{AtomSampler, AtomSet};
use crate::rng::Rng;

/// Distinct single features per node, as in Breiman's forest.
pub struct AxisAlignedSampler {
    features: Vec<u32>,
}

impl AxisAlignedSampler {
    /// A sampler over `n_features` features.
    pub fn new(n_features: usize) -> Self {
        AxisAlignedSampler {
            features: (0..n_features as u32).collect(),
        }
    }
}

impl AtomSampler for AxisAlignedSampler {
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        let n_atoms = n_atoms.min(self.features.len());
        // The pool keeps whatever order the last node left: any order is as good a
        // start for a partial shuffle, and keeping it avoids a reset per node.
        rng.choose_into_prefix(&mut self.features, n_atoms);
        for i in 0..n_atoms {
            let mut single = [self.features[i]];
            out.push_unit(&mut single);
        }
    }
}
