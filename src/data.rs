//! Read-only views of the training and scoring inputs.

use std::borrow::Cow;

use ndarray::ArrayView2;

use crate::error::{MorfError, Result};

/// An element type X may hold. Values are compared in `f32`, as scikit-learn's trees
/// do, so a forest gives the same answers for float32 and float64 copies of one X.
pub trait Feature: Copy + Clone + Send + Sync + 'static {
    /// The value as the engine compares it.
    fn to_f32(self) -> f32;
    /// Whether the value is neither NaN nor infinite.
    fn is_finite_value(self) -> bool;
}

impl Feature for f32 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    fn is_finite_value(self) -> bool {
        self.is_finite()
    }
}

impl Feature for f64 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn is_finite_value(self) -> bool {
        // A finite f64 beyond f32's range would become infinite in the engine.
        self.is_finite() && (self as f32).is_finite()
    }
}

/// Row-major samples: row `i` is `values[i * n_features..(i + 1) * n_features]`.
pub struct Rows<'a, T: Clone> {
    values: Cow<'a, [T]>,
    /// Number of rows.
    pub n_samples: usize,
    /// Number of features per row.
    pub n_features: usize,
}

impl<'a, T: Feature> Rows<'a, T> {
    /// Borrows a standard-layout view; copies only views in another layout.
    pub fn from_view(x: ArrayView2<'a, T>) -> Result<Self> {
        let (n_samples, n_features) = x.dim();
        if n_samples == 0 || n_features == 0 {
            return Err(MorfError::EmptyData {
                n_samples,
                n_features,
            });
        }
        let values = match x.to_slice() {
            Some(slice) => Cow::Borrowed(slice),
            None => Cow::Owned(x.iter().copied().collect()),
        };
        Ok(Rows {
            values,
            n_samples,
            n_features,
        })
    }

    /// Rejects NaN and infinity, naming the first offending cell.
    pub fn check_finite(&self) -> Result<()> {
        match self.values.iter().position(|v| !v.is_finite_value()) {
            None => Ok(()),
            Some(flat) => Err(MorfError::NonFiniteInput {
                row: flat / self.n_features,
                column: flat % self.n_features,
            }),
        }
    }

    /// Row `i`.
    #[inline(always)]
    pub fn row(&self, i: usize) -> &[T] {
        &self.values[i * self.n_features..(i + 1) * self.n_features]
    }
}
