//! Atom samplers: the distributions of candidate split directions.
//!
//! An atom is a sparse vector `a` (feature indices and weights); a sample `x` projects
//! to `a · x`. Axis-aligned forests, sparse oblique forests (SPORF) and manifold oblique
//! forests (MORF) differ only in the sampler that draws a node's candidate atoms.

mod axis;
mod oblique;
mod patch;

pub use axis::AxisAlignedSampler;
pub use oblique::SparseObliqueSampler;
pub use patch::{PatchSampler, Patches};

use serde::{Deserialize, Serialize};

use crate::data::Feature;
use crate::error::{invalid, Result};
use crate::rng::Rng;

/// A borrowed sparse atom.
#[derive(Debug, Clone, Copy)]
pub struct Atom<'a> {
    /// Feature indices, ascending and distinct.
    pub indices: &'a [u32],
    /// One weight per index.
    pub weights: &'a [f32],
}

impl Atom<'_> {
    /// Whether every weight is +1 or -1: then projections of whole-number rows stay
    /// whole.
    pub fn has_unit_weights(&self) -> bool {
        self.weights.iter().all(|&weight| weight.abs() == 1.0)
    }

    /// The projection `a · x` of one row, summed in index order (the same order at
    /// training and scoring time, so both see identical values).
    #[inline]
    pub fn project<T: Feature>(&self, row: &[T]) -> f32 {
        // Single-feature atoms (all of an axis-aligned forest's) skip the loop and its
        // hard-to-predict exit branch.
        if let ([index], [weight]) = (self.indices, self.weights) {
            return 0.0 + weight * row[*index as usize].to_f32();
        }
        let mut sum = 0.0f32;
        for (&index, &weight) in self.indices.iter().zip(self.weights) {
            sum += weight * row[index as usize].to_f32();
        }
        sum
    }
}

/// The candidate atoms of one node, stored flat so that sampling allocates nothing
/// once the buffers have grown.
#[derive(Debug, Default, Clone)]
pub struct AtomSet {
    offsets: Vec<usize>,
    indices: Vec<u32>,
    weights: Vec<f32>,
}

impl AtomSet {
    /// Removes all atoms, keeping the buffers.
    pub fn clear(&mut self) {
        self.offsets.clear();
        self.offsets.push(0);
        self.indices.clear();
        self.weights.clear();
    }

    /// Appends an atom given as unsorted (index, weight) pairs with distinct indices.
    pub fn push_pairs(&mut self, pairs: &mut [(u32, f32)]) {
        // Ascending indices make the gather walk each row forwards.
        pairs.sort_unstable_by_key(|&(index, _)| index);
        for &(index, weight) in pairs.iter() {
            self.indices.push(index);
            self.weights.push(weight);
        }
        self.offsets.push(self.indices.len());
    }

    /// Appends an atom whose weights are all one.
    pub fn push_unit(&mut self, indices: &mut [u32]) {
        indices.sort_unstable();
        self.indices.extend_from_slice(indices);
        self.weights.extend(std::iter::repeat_n(1.0, indices.len()));
        self.offsets.push(self.indices.len());
    }

    /// Number of atoms.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the set holds no atom.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rewrites every atom, all of whose weights must be +1, as an atom over the rows'
    /// running sums ([`Rows::running_sums`]): a run of neighbouring features `s..=e`
    /// becomes `+1` at `e` and `-1` at `s - 1`, two terms however long the run.
    ///
    /// On whole-valued X within [`Rows::whole_range`] both atoms project to the same
    /// value bit for bit: each partial sum of the rewritten atom is a sum of distinct
    /// features with weights ±1, so every addition is exact.
    ///
    /// [`Rows::running_sums`]: crate::data::Rows::running_sums
    /// [`Rows::whole_range`]: crate::data::Rows::whole_range
    pub fn to_running_sums(&self, out: &mut AtomSet) {
        out.clear();
        for i in 0..self.len() {
            let atom = self.get(i);
            debug_assert!(atom.weights.iter().all(|&weight| weight == 1.0));
            let mut rest = atom.indices;
            while let Some(&start) = rest.first() {
                // Indices are ascending and distinct, so a run of neighbours is the
                // prefix whose last index is `start + (length - 1)`.
                let length = rest
                    .iter()
                    .enumerate()
                    .take_while(|&(k, &index)| index == start + k as u32)
                    .count();
                if start > 0 {
                    out.indices.push(start - 1);
                    out.weights.push(-1.0);
                }
                out.indices.push(start + length as u32 - 1);
                out.weights.push(1.0);
                rest = &rest[length..];
            }
            out.offsets.push(out.indices.len());
        }
    }

    /// Atom `i`.
    pub fn get(&self, i: usize) -> Atom<'_> {
        let range = self.offsets[i]..self.offsets[i + 1];
        Atom {
            indices: &self.indices[range.clone()],
            weights: &self.weights[range],
        }
    }
}

/// Draws the candidate atoms of a node. One sampler serves one tree, so it may keep
/// scratch state between nodes.
pub trait AtomSampler {
    /// Replaces the contents of `out` with `n_atoms` candidate atoms.
    fn sample_node(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet);
}

/// Which dictionary the split directions come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AtomKind {
    /// One feature per atom, weight 1: Breiman's random forest.
    AxisAligned,
    /// Sparse random ±1 combinations (SPORF) with on average `feature_combinations`
    /// nonzeros per atom (at least 1).
    SparseOblique {
        /// Mean number of nonzeros per atom; scikit-tree's `feature_combinations`.
        feature_combinations: f64,
    },
    /// Patches of the row reshaped to an image or signal (MORF).
    Patches(Patches),
}

impl AtomKind {
    /// Checks the settings against the number of features.
    pub fn validate(&self, n_features: usize) -> Result<()> {
        match self {
            AtomKind::AxisAligned => Ok(()),
            AtomKind::SparseOblique {
                feature_combinations,
            } => {
                if !(feature_combinations.is_finite() && *feature_combinations >= 1.0) {
                    return Err(invalid(
                        "feature_combinations",
                        format!("must be a finite number >= 1, got {feature_combinations}"),
                    ));
                }
                Ok(())
            }
            AtomKind::Patches(patches) => patches.validate(n_features),
        }
    }

    /// A fresh sampler for one tree; `validate` must have passed.
    pub fn sampler(&self, n_features: usize) -> Box<dyn AtomSampler> {
        match self {
            AtomKind::AxisAligned => Box::new(AxisAlignedSampler::new(n_features)),
            AtomKind::SparseOblique {
                feature_combinations,
            } => Box::new(SparseObliqueSampler::new(n_features, *feature_combinations)),
            AtomKind::Patches(patches) => Box::new(PatchSampler::new(patches.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn sparse_projection_equals_dense_dot_product(
            row in prop::collection::vec(-100.0f32..100.0, 1..40),
            picks in prop::collection::vec((any::<prop::sample::Index>(), -2.0f32..2.0), 1..10),
        ) {
            let mut pairs: Vec<(u32, f32)> = picks.iter().map(|(i, w)| (i.index(row.len()) as u32, *w)).collect();
            pairs.sort_by_key(|p| p.0);
            pairs.dedup_by_key(|p| p.0);
            let mut set = AtomSet::default();
            set.clear();
            set.push_pairs(&mut pairs.clone());
            let mut dense = vec![0.0f64; row.len()];
            for &(i, w) in &pairs {
                dense[i as usize] = w as f64;
            }
            let exact: f64 = dense.iter().zip(&row).map(|(a, x)| a * *x as f64).sum();
            let sparse = set.get(0).project(&row) as f64;
            prop_assert!((sparse - exact).abs() <= 1e-4 * (1.0 + exact.abs()));
        }
    }

    proptest! {
        #[test]
        fn atoms_over_running_sums_project_as_the_atoms_do_bit_for_bit(
            n_features in 1usize..60,
            rows in prop::collection::vec(prop::collection::vec(-3i32..300, 60), 1..6),
            atoms in prop::collection::vec(prop::collection::vec(any::<prop::sample::Index>(), 1..20), 1..8),
        ) {
            let x: Vec<f32> = rows.iter().flat_map(|row| row[..n_features].iter().map(|&v| v as f32)).collect();
            let x = ndarray::Array2::from_shape_vec((rows.len(), n_features), x).unwrap();
            let rows = crate::data::Rows::from_view(x.view()).unwrap();
            prop_assert!(rows.whole_range().is_some());
            // Bytes where every running sum fits in one; compared as floats either way.
            let sums: Vec<f32> = match rows.running_sums() {
                crate::data::RunningSums::Bytes(sums) => (0..sums.n_samples).flat_map(|i| sums.row(i).iter().map(|&v| v as f32).collect::<Vec<_>>()).collect(),
                crate::data::RunningSums::Floats(sums) => (0..sums.n_samples).flat_map(|i| sums.row(i).to_vec()).collect(),
            };
            let sums = ndarray::Array2::from_shape_vec((rows.n_samples, n_features), sums).unwrap();
            let sums = crate::data::Rows::from_view(sums.view()).unwrap();
            let mut set = AtomSet::default();
            set.clear();
            for picks in &atoms {
                let mut indices: Vec<u32> = picks.iter().map(|i| i.index(n_features) as u32).collect();
                indices.sort_unstable();
                indices.dedup();
                set.push_unit(&mut indices);
            }
            let mut rewritten = AtomSet::default();
            set.to_running_sums(&mut rewritten);
            prop_assert_eq!(rewritten.len(), set.len());
            for a in 0..set.len() {
                let (atom, over_sums) = (set.get(a), rewritten.get(a));
                let runs = 1 + atom.indices.windows(2).filter(|w| w[1] != w[0] + 1).count();
                let from_zero = usize::from(atom.indices[0] == 0);
                prop_assert_eq!(over_sums.indices.len(), 2 * runs - from_zero);
                prop_assert!(over_sums.has_unit_weights());
                for i in 0..rows.n_samples {
                    let direct = atom.project(rows.row(i));
                    prop_assert_eq!(over_sums.project(sums.row(i)).to_bits(), direct.to_bits());
                }
            }
        }
    }

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
