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
    EmptyData {
        /// Rows of X.
        n_samples: usize,
        /// Columns of X.
        n_features: usize,
    },
    /// Two inputs disagree on a length.
    #[error("{what}: expected {expected}, got {got}")]
    ShapeMismatch {
        /// Which length.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length it has.
        got: usize,
    },
    /// X holds infinity (NaN is a missing value, which forests accept).
    #[error("X contains infinity (first at row {row}, column {column}); replace it by a finite value, or by NaN to mark it missing")]
    NonFiniteInput {
        /// Row of the first such value.
        row: usize,
        /// Column of the first such value.
        column: usize,
    },
    /// A finite float64 in X is beyond the range of float32, the type values are
    /// compared in.
    #[error(
        "X[{row}, {column}] = {value:e} is too large for float32 (whose largest value is \
         about 3.4e38), the type the forest compares values in; rescale that feature"
    )]
    TooLargeForFloat32 {
        /// Row of the first such value.
        row: usize,
        /// Column of the first such value.
        column: usize,
        /// The value.
        value: f64,
    },
    /// A class label is not below the number of classes.
    #[error("label {label} at sample {index} is out of range: labels must be in [0, {n_classes})")]
    LabelOutOfRange {
        /// The label.
        label: u32,
        /// The sample it belongs to.
        index: usize,
        /// The number of classes given.
        n_classes: usize,
    },
    /// A sample weight is negative or not finite.
    #[error("sample_weight[{index}] = {value} is invalid: weights must be finite and >= 0")]
    InvalidSampleWeight {
        /// The sample.
        index: usize,
        /// Its weight.
        value: f64,
    },
    /// All sample weights are zero.
    #[error("sample weights sum to zero: at least one sample needs a positive weight")]
    ZeroTotalWeight,
    /// A hyperparameter has a value it cannot take.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
    /// Memory for a result could not be reserved.
    #[error("cannot allocate {what}: {bytes} bytes are more than this machine provides")]
    OutOfMemory {
        /// What the memory was for.
        what: &'static str,
        /// How much was asked for.
        bytes: u128,
    },
    /// The work was stopped through its cancel flag before it finished.
    #[error("cancelled: the cancel flag was set before the work finished")]
    Cancelled,
    /// Saved bytes could not be read back as a forest.
    #[error("cannot load forest: {0}")]
    Deserialize(String),
}

/// Shorthand for `Result<T, MorfError>`.
pub type Result<T> = std::result::Result<T, MorfError>;

/// A vector of `rows * columns` copies of `value`, or [`MorfError::OutOfMemory`] when
/// the memory cannot be had: for sizes that come from the caller, so that a request
/// too large fails cleanly instead of aborting the process.
pub(crate) fn try_filled<T: Clone>(
    rows: usize,
    columns: usize,
    value: T,
    what: &'static str,
) -> Result<Vec<T>> {
    let too_large = || MorfError::OutOfMemory {
        what,
        bytes: rows as u128 * columns as u128 * std::mem::size_of::<T>() as u128,
    };
    let len = rows.checked_mul(columns).ok_or_else(too_large)?;
    let mut values = Vec::new();
    values.try_reserve_exact(len).map_err(|_| too_large())?;
    values.resize(len, value);
    Ok(values)
}

pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> MorfError {
    MorfError::InvalidParameter {
        name,
        reason: reason.into(),
    }
}
