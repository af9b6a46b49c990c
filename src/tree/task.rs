//! What an ensemble's trees predict, which decides what their leaves hold.

use serde::{Deserialize, Serialize};

use super::Leaves;

/// What a model predicts: class probabilities or values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Task {
    /// Class probabilities ([`Forest::predict_proba`](crate::Forest::predict_proba)).
    Classification {
        /// Number of classes.
        n_classes: usize,
    },
    /// Target values ([`Forest::predict_values`](crate::Forest::predict_values)).
    Regression {
        /// Number of values per sample (columns of y).
        n_outputs: usize,
    },
}

impl Task {
    /// Numbers per leaf and per prediction: classes or outputs.
    pub fn width(self) -> usize {
        match self {
            Task::Classification { n_classes } => n_classes,
            Task::Regression { n_outputs } => n_outputs,
        }
    }
}

impl Task {
    /// Empty leaves of the kind this task predicts.
    pub(crate) fn empty_leaves(self) -> Leaves {
        match self {
            Task::Classification { n_classes } => Leaves::classes(n_classes),
            Task::Regression { n_outputs } => Leaves::values(n_outputs),
        }
    }
}
