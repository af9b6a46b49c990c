//! Boosting hyperparameters, with the names and meanings of scikit-learn's
//! `HistGradientBoostingClassifier` where it has them.

use serde::{Deserialize, Serialize};

use crate::atoms::AtomKind;
use crate::atoms::MaxFeatures;
use crate::error::{invalid, Result};

/// Most trees a boosted model may hold, one per class and round: as many as a forest
/// may hold (2^24).
pub const MAX_BOOSTED_TREES: usize = 1 << 24;

/// How much of the training data is held out to decide when to stop
/// (scikit-learn's `validation_fraction`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ValidationSize {
    /// This fraction, in (0, 1), of the samples.
    Fraction(f64),
    /// This many samples.
    Count(usize),
}

/// Stop adding rounds once the loss on held-out samples stops improving
/// (scikit-learn's `early_stopping=True`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EarlyStopping {
    /// Samples held out from training to measure the loss (`validation_fraction`).
    pub validation_size: ValidationSize,
    /// Stop when none of the last this many rounds improved on the loss before them
    /// by more than `tol` (`n_iter_no_change`).
    pub n_iter_no_change: usize,
    /// Smallest improvement of the validation loss that counts (`tol`).
    pub tol: f64,
}

impl Default for EarlyStopping {
    fn default() -> Self {
        EarlyStopping {
            validation_size: ValidationSize::Fraction(0.1),
            n_iter_no_change: 10,
            tol: 1e-7,
        }
    }
}

/// Everything that shapes a boosted model. `Default` gives scikit-learn's
/// `HistGradientBoostingClassifier` defaults with axis-aligned atoms and no early
/// stopping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoostParams {
    /// Boosting rounds; a round adds one tree per class (one in all for two classes
    /// and for regression) (`max_iter` in scikit-learn, `n_estimators` in LightGBM).
    pub n_estimators: usize,
    /// Shrinkage applied to every leaf value (`learning_rate`).
    pub learning_rate: f64,
    /// Most leaves per tree, grown best first; `None` for no limit (`max_leaf_nodes`).
    pub max_leaf_nodes: Option<usize>,
    /// Deepest a leaf may be; `None` for no limit (`max_depth`).
    pub max_depth: Option<usize>,
    /// Fewest samples each leaf must keep (`min_samples_leaf`).
    pub min_samples_leaf: usize,
    /// L2 penalty on leaf values (`l2_regularization`).
    pub l2_regularization: f64,
    /// Most bins an atom's projections are put in for split search, at most 256
    /// (`max_bins`).
    pub max_bins: usize,
    /// Fraction of the samples, drawn afresh each round without replacement, that the
    /// round's trees learn from (LightGBM's `bagging_fraction`). Below 1 with log loss,
    /// left-out samples take leaf values fitted without them, which can run away (the
    /// fit then fails with [`crate::MorfError::InvalidParameter`]); an `l2_regularization` of
    /// about 1 keeps them in range.
    pub subsample: f64,
    /// The dictionary the split directions are drawn from.
    pub atoms: AtomKind,
    /// Atoms drawn afresh each round and tried at every node of that round's trees
    /// (`max_features`); with axis-aligned atoms, the fraction of features tried.
    pub max_features: MaxFeatures,
    /// Hold out samples and stop when their loss stops improving; `None` trains every
    /// round.
    pub early_stopping: Option<EarlyStopping>,
    /// Seed; round `r` draws from streams derived from (`random_state`, `r`).
    pub random_state: u64,
    /// Worker threads; 0 uses every core.
    pub n_threads: usize,
}

impl Default for BoostParams {
    fn default() -> Self {
        BoostParams {
            n_estimators: 100,
            learning_rate: 0.1,
            max_leaf_nodes: Some(31),
            max_depth: None,
            min_samples_leaf: 20,
            l2_regularization: 0.0,
            max_bins: 255,
            subsample: 1.0,
            atoms: AtomKind::AxisAligned,
            max_features: MaxFeatures::All,
            early_stopping: None,
            random_state: 0,
            n_threads: 1,
        }
    }
}

impl BoostParams {
    /// Checks the settings that do not depend on the data.
    pub fn validate(&self) -> Result<()> {
        if self.n_estimators == 0 {
            return Err(invalid("n_estimators", "must be at least 1"));
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(invalid(
                "learning_rate",
                format!("must be a finite number > 0, got {}", self.learning_rate),
            ));
        }
        if let Some(leaves @ 0..=1) = self.max_leaf_nodes {
            return Err(invalid(
                "max_leaf_nodes",
                format!("must be at least 2, or None for no limit, got {leaves}"),
            ));
        }
        if self.max_depth == Some(0) {
            return Err(invalid(
                "max_depth",
                "must be at least 1, or None for no limit, got 0",
            ));
        }
        if self.min_samples_leaf < 1 {
            return Err(invalid("min_samples_leaf", "must be at least 1, got 0"));
        }
        if !(self.l2_regularization.is_finite() && self.l2_regularization >= 0.0) {
            return Err(invalid(
                "l2_regularization",
                format!(
                    "must be a finite number >= 0, got {}",
                    self.l2_regularization
                ),
            ));
        }
        if !(2..=256).contains(&self.max_bins) {
            return Err(invalid(
                "max_bins",
                format!("must be in [2, 256], got {}", self.max_bins),
            ));
        }
        if !(self.subsample > 0.0 && self.subsample <= 1.0) {
            return Err(invalid(
                "subsample",
                format!("must be in (0, 1], got {}", self.subsample),
            ));
        }
        if let Some(stopping) = &self.early_stopping {
            if stopping.n_iter_no_change == 0 {
                return Err(invalid("n_iter_no_change", "must be at least 1"));
            }
            if !(stopping.tol.is_finite() && stopping.tol >= 0.0) {
                return Err(invalid(
                    "tol",
                    format!("must be a finite number >= 0, got {}", stopping.tol),
                ));
            }
            match stopping.validation_size {
                ValidationSize::Fraction(f) if !(f > 0.0 && f < 1.0) => {
                    return Err(invalid(
                        "validation_fraction",
                        format!("a fraction must be in (0, 1), got {f}"),
                    ))
                }
                ValidationSize::Count(0) => {
                    return Err(invalid("validation_fraction", "a count must be at least 1"))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Number of held-out samples out of `n_samples`, leaving some on both sides.
    pub(crate) fn validation_count(&self, n_samples: usize) -> Result<usize> {
        let Some(stopping) = &self.early_stopping else {
            return Ok(0);
        };
        let count = match stopping.validation_size {
            ValidationSize::Fraction(f) => (f * n_samples as f64).ceil() as usize,
            ValidationSize::Count(k) => k,
        };
        if count == 0 || count >= n_samples {
            return Err(invalid(
                "validation_fraction",
                format!(
                    "holding out {count} of {n_samples} samples leaves an empty training or \
                     validation set; use more samples or another validation_fraction"
                ),
            ));
        }
        Ok(count)
    }
}
