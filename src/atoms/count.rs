//! How many candidate atoms a node (or a boosting round) draws: scikit-learn's
//! `max_features`, bounded by the memory their projections take.

use serde::{Deserialize, Serialize};

use crate::error::{invalid, Result};

/// Most projections split search holds at once, per worker thread, when a node draws
/// more candidate atoms than there are features (oblique and patch atoms): the root's
/// samples on all its atoms, 2^28 float32 values or 1 GiB.
pub const MAX_NODE_PROJECTIONS: usize = 1 << 28;

/// How many candidate atoms a node draws (scikit-learn's `max_features`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum MaxFeatures {
    /// `max(1, floor(sqrt(n_features)))`.
    Sqrt,
    /// `max(1, floor(log2(n_features)))`.
    Log2,
    /// `max(1, floor(fraction * n_features))`; above 1 only for oblique and patch atoms.
    Fraction(f64),
    /// Exactly this many; above `n_features` only for oblique and patch atoms.
    Count(usize),
    /// `n_features`.
    All,
}

impl MaxFeatures {
    /// The number of atoms per node for `n_features` features. Axis-aligned atoms
    /// cannot outnumber the features; oblique and patch atoms may, as long as a node's
    /// projections on them (`n_samples` per atom at the root) number at most
    /// [`MAX_NODE_PROJECTIONS`].
    pub fn resolve(self, n_features: usize, n_samples: usize, axis_aligned: bool) -> Result<usize> {
        let atoms = self.resolve_unbounded(n_features, axis_aligned)?;
        let largest = (MAX_NODE_PROJECTIONS / n_samples.max(1)).max(n_features);
        if atoms > largest {
            return Err(invalid(
                "max_features",
                format!(
                    "{atoms} candidate atoms per node is too large for {n_samples} \
                     samples: split search holds every sample's projection on every atom \
                     at once, and at most 2^28 projections (1 GiB per thread) are \
                     allowed beyond one atom per feature, so at most {largest} atoms here"
                ),
            ));
        }
        Ok(atoms)
    }

    fn resolve_unbounded(self, n_features: usize, axis_aligned: bool) -> Result<usize> {
        let atoms = match self {
            MaxFeatures::Sqrt => (n_features as f64).sqrt() as usize,
            MaxFeatures::Log2 => (n_features as f64).log2() as usize,
            MaxFeatures::Fraction(f) => {
                if !(f.is_finite() && f > 0.0) || (axis_aligned && f > 1.0) {
                    let range = if axis_aligned { "(0, 1]" } else { "(0, inf)" };
                    return Err(invalid(
                        "max_features",
                        format!("a fraction must be in {range}, got {f}"),
                    ));
                }
                // Saturates at usize::MAX, which the bound above then rejects.
                (f * n_features as f64) as usize
            }
            MaxFeatures::Count(k) => {
                if k == 0 || (axis_aligned && k > n_features) {
                    return Err(invalid(
                        "max_features",
                        format!(
                            "a count must be in [1, {}], got {k}",
                            if axis_aligned {
                                n_features.to_string()
                            } else {
                                "inf)".into()
                            }
                        ),
                    ));
                }
                k
            }
            MaxFeatures::All => n_features,
        };
        Ok(atoms.max(1))
    }
}
