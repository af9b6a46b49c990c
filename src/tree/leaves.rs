//! What leaves predict: class distributions or mean target values.

use serde::{Deserialize, Serialize};

/// The values of a tree's voting leaves, one block of `width` numbers per leaf, found
/// through each leaf's offset ([`Node::Leaf`](super::Node::Leaf)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Leaves {
    /// Class distributions (classification): per leaf `n_classes` probabilities
    /// summing to 1, in `f32` (they are frequencies; half the size of `f64`).
    Classes {
        /// Number of classes.
        n_classes: u32,
        /// The distributions, leaf after leaf.
        distributions: Vec<f32>,
    },
    /// Mean target values (regression): per leaf `n_outputs` weighted means, in
    /// `f64` as the targets were given.
    Values {
        /// Number of outputs.
        n_outputs: u32,
        /// The means, leaf after leaf.
        means: Vec<f64>,
        /// The mean of the tree's whole sample: what the tree would predict knowing
        /// nothing of a row, for rows no tree votes for (honest leaves may abstain).
        prior: Vec<f64>,
    },
}

impl Leaves {
    /// No leaves yet, for `n_classes` classes.
    pub fn classes(n_classes: usize) -> Self {
        Leaves::Classes {
            n_classes: n_classes as u32,
            distributions: Vec::new(),
        }
    }

    /// No leaves yet, for `n_outputs` target values.
    pub fn values(n_outputs: usize) -> Self {
        Leaves::Values {
            n_outputs: n_outputs as u32,
            means: Vec::new(),
            prior: vec![0.0; n_outputs],
        }
    }

    /// Numbers per leaf: classes or outputs.
    pub fn width(&self) -> usize {
        match self {
            Leaves::Classes { n_classes, .. } => *n_classes as usize,
            Leaves::Values { n_outputs, .. } => *n_outputs as usize,
        }
    }

    /// Offset the next pushed leaf gets.
    pub(crate) fn next_offset(&self) -> u32 {
        let stored = match self {
            Leaves::Classes { distributions, .. } => distributions.len(),
            Leaves::Values { means, .. } => means.len(),
        };
        stored as u32
    }

    /// Number of stored numbers.
    pub(crate) fn len(&self) -> usize {
        self.next_offset() as usize
    }

    /// Appends the leaf of samples whose leaf entries sum to `sums` over total weight
    /// `weight`: `sums / weight`. A leaf without weight (a tree whose sample held
    /// none) gets the uniform distribution, or zeros.
    pub(crate) fn push(&mut self, sums: &[f64], weight: f64) {
        match self {
            Leaves::Classes { distributions, .. } => {
                if weight > 0.0 {
                    distributions.extend(sums.iter().map(|&c| (c / weight) as f32));
                } else {
                    let uniform = 1.0 / sums.len() as f32;
                    distributions.extend(std::iter::repeat_n(uniform, sums.len()));
                }
            }
            Leaves::Values { means, .. } => {
                if weight > 0.0 {
                    means.extend(sums.iter().map(|&s| s / weight));
                } else {
                    means.extend(std::iter::repeat_n(0.0, sums.len()));
                }
            }
        }
    }

    /// Sets the prior of value leaves to `sums / weight` (the leaf entries of the
    /// tree's whole sample summed, and their weight); class leaves have none.
    pub(crate) fn set_prior(&mut self, sums: &[f64], weight: f64) {
        if let Leaves::Values { prior, .. } = self {
            prior.clear();
            prior.extend(sums.iter().map(|&s| s / weight));
        }
    }

    /// Removes every leaf.
    pub(crate) fn clear(&mut self) {
        match self {
            Leaves::Classes { distributions, .. } => distributions.clear(),
            Leaves::Values { means, .. } => means.clear(),
        }
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        match self {
            Leaves::Classes { distributions, .. } => distributions.shrink_to_fit(),
            Leaves::Values { means, .. } => means.shrink_to_fit(),
        }
    }
}
