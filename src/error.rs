//! The one error type of the crate.

use thiserror::Error;

/// Everything that can go wrong when training, scoring or loading a forest.
///
/// Every public entry point returns `Result<_, MorfError>`; the message says what is
/// wrong and, where there is one, the fix.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum MorfError {
    /// X has no rows or no columns.
    #[error(
        "X is empty: got {n_samples} samples and {n_features} features, need at least one of each"
    )]
    EmptyData { n_samples: usize, n_features: usize },
    /// Two inputs disagree on a length.
    #[error("{what}: expected {expected}, got {got}")]
    ShapeMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// X holds NaN or infinity.
    #[error("X contains NaN or infinity (first at row {row}, column {column}); remove or impute those values")]
    NonFiniteInput { row: usize, column: usize },
    /// A class label is not below the number of classes.
    #[error("label {label} at sample {index} is out of range: labels must be in [0, {n_classes})")]
    LabelOutOfRange {
        label: u32,
        index: usize,
        n_classes: usize,
    },
    /// A sample weight is negative or not finite.
    #[error("sample_weight[{index}] = {value} is invalid: weights must be finite and >= 0")]
    InvalidSampleWeight { index: usize, value: f64 },
    /// All sample weights are zero.
    #[error("sample weights sum to zero: at least one sample needs a positive weight")]
    ZeroTotalWeight,
    /// A hyperparameter has a value it cannot take.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// Saved bytes could not be read back as a forest.
    #[error("cannot load forest: {0}")]
    Deserialize(String),
}

/// Shorthand for `Result<T, MorfError>`.
pub type Result<T> = std::result::Result<T, MorfError>;

pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> MorfError {
    MorfError::InvalidParameter {
        name,
        reason: reason.into(),
    }
}
