use serde::{Deserialize, Serialize};

use super::graph::{GraphAtoms, GraphSampler};
use super::mixture::MixtureSampler;
use super::oblique::MAX_FEATURE_COMBINATIONS;
use super::patch::{PatchSampler, Patches};
use super::pooled::{Pooled, PooledSampler};
use super::signed::{SignedPatchSampler, SignedPatches};
use super::weighted::{Profile, WeightedPatchSampler};
use super::{AtomSampler, AxisAlignedSampler, SparseObliqueSampler};
use crate::error::{invalid, Result};

/// How far a mixture's probabilities may sum from 1.
const PROBABILITY_TOLERANCE: f64 = 1e-6;

/// Which dictionary the split directions come from: one family of atoms, or a mixture
/// of families. Every family draws whole-number weights.
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
    /// Sums over patches of the row reshaped to an image or signal (the papers' MORF).
    Patches(Patches),
    /// Adjacent patches of opposite sign: edge and line detectors.
    SignedPatches(SignedPatches),
    /// Patches weighted by a Gaussian-like bump: the product over contiguous axes of a
    /// tent `1, 2, .., 2, 1` across the patch (whole weights up to the product of
    /// `ceil(patch_max / 2)`).
    Bumps(Patches),
    /// Gabor-like atoms: oriented stripes under a Gaussian envelope over a patch
    /// (seed 003, section 7), weights `round(2 e cos(2 pi <u, n> / lambda + phi))` in
    /// `-2..=2` with `u` a cell's offset from the patch centre, `e =
    /// exp(-sum_k (2 u_k / extent_k)^2 / 2)`, a uniform direction `n` over the
    /// contiguous axes, `lambda` uniform in `[1, 2]` times the widest extent (at least
    /// 2) and a uniform phase `phi`. Zero weights are dropped.
    Gabors(Patches),
    /// Connected neighbourhoods in a user-given graph over the features.
    Graph(GraphAtoms),
    /// Each atom drawn from one of these dictionaries with the given probability (they
    /// sum to 1). Families of probability 0 are never drawn, and a mixture with one
    /// family left draws exactly as that family does.
    Mixture(Vec<(AtomKind, f64)>),
    /// An image family's atoms pooled over windows of shifts: the maximum or minimum
    /// of the atom's responses ([`Pooled`]).
    Pooled(Pooled),
}

/// Bounds on the weights of every atom a dictionary draws, all whole numbers: they
/// decide when projections of whole-valued X are exact (see
/// [`Rows::whole_values`](crate::data::Rows::whole_values) and
/// [`sums_stay_exact`](crate::data::sums_stay_exact)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeightBounds {
    /// The largest `|w|`.
    pub max_abs: u32,
    /// The largest `max(0, max w) - min(0, min w)` of an atom, which bounds the
    /// coefficients of its running-sum form ([`AtomSet::to_running_sums`]).
    ///
    /// [`AtomSet::to_running_sums`]: super::AtomSet::to_running_sums
    pub spread: u32,
}

impl AtomKind {
    /// Checks the settings against the number of features.
    pub fn validate(&self, n_features: usize) -> Result<()> {
        match self {
            AtomKind::AxisAligned => Ok(()),
            AtomKind::SparseOblique {
                feature_combinations,
            } => {
                if !(1.0..=MAX_FEATURE_COMBINATIONS).contains(feature_combinations) {
                    return Err(invalid(
                        "feature_combinations",
                        format!(
                            "must be a number in [1, {MAX_FEATURE_COMBINATIONS}] (the mean \
                             number of features per atom), got {feature_combinations}"
                        ),
                    ));
                }
                Ok(())
            }
            AtomKind::Patches(patches) => patches.validate(n_features),
            AtomKind::SignedPatches(signed) => signed.validate(n_features),
            AtomKind::Bumps(patches) => Profile::Bump.validate(patches, n_features),
            AtomKind::Gabors(patches) => Profile::Gabor.validate(patches, n_features),
            AtomKind::Graph(graph) => graph.validate(n_features),
            AtomKind::Pooled(pooled) => pooled.validate(n_features),
            AtomKind::Mixture(families) => {
                if families.is_empty() {
                    return Err(invalid("dictionary", "needs at least one family"));
                }
                if let Some((_, p)) = families.iter().find(|(_, p)| !(p.is_finite() && *p >= 0.0)) {
                    return Err(invalid(
                        "dictionary",
                        format!("probabilities must be finite and >= 0, got {p}"),
                    ));
                }
                let total: f64 = families.iter().map(|(_, p)| p).sum();
                if (total - 1.0).abs() > PROBABILITY_TOLERANCE {
                    return Err(invalid(
                        "dictionary",
                        format!("the families' probabilities sum to {total}; they must sum to 1"),
                    ));
                }
                families
                    .iter()
                    .try_for_each(|(family, _)| family.validate(n_features))
            }
        }
    }

    /// A fresh sampler for one tree; `validate` must have passed. Public for the tests
    /// and kernel benchmarks that draw atoms alone: no part of the API.
    #[doc(hidden)]
    pub fn sampler(&self, n_features: usize) -> Box<dyn AtomSampler + '_> {
        match self {
            AtomKind::AxisAligned => Box::new(AxisAlignedSampler::new(n_features)),
            AtomKind::SparseOblique {
                feature_combinations,
            } => Box::new(SparseObliqueSampler::new(n_features, *feature_combinations)),
            AtomKind::Patches(patches) => Box::new(PatchSampler::new(patches.clone())),
            AtomKind::SignedPatches(signed) => Box::new(SignedPatchSampler::new(signed.clone())),
            AtomKind::Bumps(patches) => {
                Box::new(WeightedPatchSampler::new(patches.clone(), Profile::Bump))
            }
            AtomKind::Gabors(patches) => {
                Box::new(WeightedPatchSampler::new(patches.clone(), Profile::Gabor))
            }
            AtomKind::Graph(graph) => Box::new(GraphSampler::new(graph)),
            AtomKind::Pooled(pooled) => Box::new(PooledSampler::new(pooled, n_features)),
            AtomKind::Mixture(families) => {
                let mut drawn: Vec<_> = families
                    .iter()
                    .filter(|(_, p)| *p > 0.0)
                    .map(|(family, p)| (family.sampler(n_features), *p))
                    .collect();
                if drawn.len() == 1 {
                    drawn.pop().expect("one family").0
                } else {
                    Box::new(MixtureSampler::new(drawn))
                }
            }
        }
    }

    /// Bounds on the weights of the atoms this dictionary draws.
    pub(crate) fn weight_bounds(&self) -> WeightBounds {
        let (max_abs, spread) = match self {
            AtomKind::AxisAligned | AtomKind::Patches(_) => (1, 1),
            AtomKind::SparseOblique { .. } => (1, 2),
            AtomKind::SignedPatches(signed) => signed.weight_bounds(),
            AtomKind::Bumps(patches) => Profile::Bump.weight_bounds(patches),
            AtomKind::Gabors(patches) => Profile::Gabor.weight_bounds(patches),
            AtomKind::Graph(graph) => graph.weight_bounds(),
            AtomKind::Pooled(pooled) => {
                let bounds = pooled.family.weight_bounds();
                (bounds.max_abs, bounds.spread)
            }
            AtomKind::Mixture(families) => families
                .iter()
                .filter(|(_, p)| *p > 0.0)
                .map(|(family, _)| family.weight_bounds())
                .fold((1, 1), |(a, s), b| (a.max(b.max_abs), s.max(b.spread))),
        };
        WeightBounds { max_abs, spread }
    }

    /// Whether some atom this dictionary draws is pooled: pooled atoms read X itself,
    /// so split search then reads no running sums.
    #[doc(hidden)]
    pub fn pools(&self) -> bool {
        match self {
            AtomKind::Pooled(_) => true,
            AtomKind::Mixture(families) => families
                .iter()
                .any(|(family, p)| *p > 0.0 && family.pools()),
            _ => false,
        }
    }

    /// Mean number of cells an atom reads, for the families drawn as plain patches
    /// (patches, signed patches of their bands, mixtures of only these weighted by their
    /// shares); `None` for the others.
    pub(crate) fn mean_cells(&self) -> Option<f64> {
        match self {
            AtomKind::Patches(patches) => Some(patches.mean_cells()),
            AtomKind::SignedPatches(signed) => {
                Some(signed.bands as f64 * signed.patches.mean_cells())
            }
            AtomKind::Mixture(families) => families
                .iter()
                .filter(|(_, p)| *p > 0.0)
                .map(|(family, p)| family.mean_cells().map(|cells| p * cells))
                .sum(),
            _ => None,
        }
    }

    /// Expected length of the runs of neighbouring features of equal weight in an
    /// atom: the reads a run costs directly, against two through running sums.
    #[doc(hidden)]
    pub fn mean_run_length(&self) -> f64 {
        match self {
            AtomKind::Patches(patches) => patches.mean_run_length(),
            // A band is a patch row, or a part of one as long as a patch row.
            AtomKind::SignedPatches(signed) => signed.patches.mean_run_length(),
            // Weights change from cell to cell along the last axis, or the atoms are
            // single features or scattered ones.
            AtomKind::AxisAligned
            | AtomKind::SparseOblique { .. }
            | AtomKind::Bumps(_)
            | AtomKind::Gabors(_)
            | AtomKind::Graph(_)
            // Pooled atoms are projected from X itself, never through running sums.
            | AtomKind::Pooled(_) => 1.0,
            AtomKind::Mixture(families) => families
                .iter()
                .map(|(family, p)| p * family.mean_run_length())
                .sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_cells_multiply_the_mean_extents_and_weigh_mixtures_by_share() {
        let patches = Patches::new(vec![28, 28], vec![2, 2], vec![2, 9]);
        assert_eq!(patches.mean_cells(), 2.0 * 5.5);
        let kind = AtomKind::Patches(patches.clone());
        assert_eq!(kind.mean_cells(), Some(11.0));
        let signed = AtomKind::SignedPatches(SignedPatches::new(patches.clone(), 3));
        assert_eq!(signed.mean_cells(), Some(33.0));
        let mixture = AtomKind::Mixture(vec![(kind.clone(), 0.25), (signed, 0.75)]);
        assert_eq!(mixture.mean_cells(), Some(0.25 * 11.0 + 0.75 * 33.0));
        // A family of other atoms leaves the mean unknown, unless it is never drawn.
        let with_axis =
            |p| AtomKind::Mixture(vec![(kind.clone(), 1.0), (AtomKind::AxisAligned, p)]);
        assert_eq!(with_axis(0.5).mean_cells(), None);
        assert_eq!(with_axis(0.0).mean_cells(), Some(11.0));
    }
}
