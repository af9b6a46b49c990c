//! Atom samplers: the distributions of candidate split directions.
//!
//! An atom is a sparse vector `a` (feature indices and weights); a sample `x` projects
//! to `a · x`; a pooled atom adds a window of shifts and projects to the maximum or
//! minimum of the shifted atom's responses ([`Window`]). Axis-aligned forests, sparse oblique forests (SPORF) and manifold oblique
//! forests (MORF) differ only in the dictionary ([`AtomKind`]) whose sampler draws a
//! node's candidate atoms. Besides the papers' families, a dictionary may hold signed
//! and weighted patches, atoms over a user-given graph, and mixtures of these.

mod axis;
mod count;
mod graph;
mod image;
mod kind;
mod missing;
mod mixture;
mod oblique;
mod patch;
mod pooled;
mod pooled_response;
mod set;
mod signed;
mod weighted;
mod window;

pub use count::{MaxFeatures, MAX_NODE_PROJECTIONS};
pub use graph::{GraphAtoms, SamplingGraph};
pub use kind::AtomKind;
pub(crate) use missing::rescale_present_sum;
pub use missing::{rescaled_present_sum, MissingCells};
pub use patch::Patches;
pub use pooled::{Pooled, Reductions};
pub use set::Atom;
// What samplers fill, public for the tests and kernel benchmarks that draw atoms
// alone ([`AtomKind::sampler`]): no part of the API.
#[doc(hidden)]
pub use set::AtomSet;
pub use signed::SignedPatches;
pub use window::{Reduce, Window, MAX_POOL_AXES};

// Each family's sampler is reached through [`AtomKind::sampler`].
pub(crate) use axis::AxisAlignedSampler;
pub(crate) use oblique::SparseObliqueSampler;
pub(crate) use pooled_response::{fold, project_pooled, start};

use crate::rng::Rng;

/// Draws the candidate atoms of a node. One sampler serves one tree, so it may keep
/// scratch state between nodes. Public for the tests and kernel benchmarks that draw
/// atoms alone: no part of the API.
#[doc(hidden)]
pub trait AtomSampler {
    /// Appends `n_atoms` candidate atoms to `out`.
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet);

    /// Replaces the contents of `out` with `n_atoms` candidate atoms.
    fn sample_node(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        out.clear();
        self.append_atoms(rng, n_atoms, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_aligned_atoms_are_distinct_single_features() {
        let mut sampler = AxisAlignedSampler::new(10);
        let mut rng = crate::rng::Rng::new(0, 0);
        let mut set = AtomSet::default();
        for n_atoms in [1, 3, 10, 20] {
            sampler.sample_node(&mut rng, n_atoms, &mut set);
            assert_eq!(set.len(), n_atoms.min(10));
            let mut seen: Vec<u32> = (0..set.len()).map(|i| set.get(i).indices[0]).collect();
            assert!((0..set.len()).all(|i| set.get(i).weights == [1.0]));
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), n_atoms.min(10));
        }
    }

    #[test]
    fn oblique_atoms_have_the_requested_mean_size_and_signs() {
        let mut sampler = SparseObliqueSampler::new(50, 2.5);
        let mut rng = crate::rng::Rng::new(4, 0);
        let mut set = AtomSet::default();
        sampler.sample_node(&mut rng, 20_000, &mut set);
        let sizes: Vec<usize> = (0..set.len()).map(|i| set.get(i).indices.len()).collect();
        let mean = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
        assert!((mean - 2.5).abs() < 0.05, "mean nonzeros {mean}");
        assert!(sizes.iter().all(|&s| s >= 1));
        let (mut plus, mut minus) = (0, 0);
        for i in 0..set.len() {
            let atom = set.get(i);
            assert!(atom.indices.windows(2).all(|w| w[0] < w[1]));
            for &w in atom.weights {
                if w == 1.0 {
                    plus += 1
                } else {
                    assert_eq!(w, -1.0);
                    minus += 1
                }
            }
        }
        let share = plus as f64 / (plus + minus) as f64;
        assert!((share - 0.5).abs() < 0.02, "share of +1 weights {share}");
    }
}
