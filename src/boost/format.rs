//! The saved format of a boosted model: the crate's framing (magic bytes `MOGB`,
//! version, postcard body, CRC-32) around the model, read strictly and validated.
//!
//! Version 2 added pooled splits (`Node::SplitPooled` and the trees' windows);
//! version 1 models read through a frozen copy of their layout.

use serde::Deserialize;

use super::loss::Loss;
use super::model::{Booster, ScoringCache};
use crate::error::Result;
use crate::forest::format::frame::{damaged, decode_exact, Framing};
use crate::forest::format::legacy::TreeV3;
use crate::forest::Task;

/// Version of the saved layout of boosted models; bumped whenever it changes.
pub const BOOSTER_FORMAT_VERSION: u16 = 2;

const BOOSTER_FRAMING: Framing = Framing {
    magic: *b"MOGB",
    oldest: 1,
    current: BOOSTER_FORMAT_VERSION,
    first_checksummed: 1,
};

/// A version 1 model: its trees had no windows. This definition must never change.
#[derive(Deserialize)]
struct BoosterV1 {
    n_features: usize,
    loss: Loss,
    baseline: Vec<f64>,
    trees: Vec<TreeV3>,
    train_loss: Vec<f64>,
    validation_loss: Vec<f64>,
}

impl BoosterV1 {
    fn into_current(self) -> Booster {
        Booster {
            n_features: self.n_features,
            loss: self.loss,
            baseline: self.baseline,
            trees: self.trees.into_iter().map(TreeV3::into_current).collect(),
            train_loss: self.train_loss,
            validation_loss: self.validation_loss,
            scoring: ScoringCache::default(),
        }
    }
}

impl Booster {
    /// The model as compact versioned bytes, for [`Booster::from_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        BOOSTER_FRAMING.write(self)
    }

    /// Reads a model saved by [`Booster::to_bytes`]: the bytes must be whole
    /// (checksum, no trailing bytes) and the model consistent, so that any bytes
    /// either load as a model that scores safely or give
    /// [`MorfError::Deserialize`](crate::MorfError).
    pub fn from_bytes(bytes: &[u8]) -> Result<Booster> {
        let (version, body) = BOOSTER_FRAMING.open(bytes)?;
        let model: Booster = match version {
            1 => decode_exact::<BoosterV1>(body)?.into_current(),
            _ => decode_exact(body)?,
        };
        let n_outputs = model.loss.n_outputs();
        let consistent = model.n_features > 0
            && !matches!(model.loss, Loss::MultinomialLogLoss { n_classes } if n_classes < 3)
            && model.baseline.len() == n_outputs
            && model.baseline.iter().all(|b| b.is_finite())
            && !model.trees.is_empty()
            && model.trees.len() % n_outputs == 0
            && model.train_loss.len() <= model.n_rounds() + 1
            && model.validation_loss.len() <= model.n_rounds() + 1;
        if !consistent {
            return Err(damaged("inconsistent boosted model"));
        }
        let one_value = Task::Regression { n_outputs: 1 };
        for tree in &model.trees {
            tree.validate(model.n_features, one_value)
                .map_err(damaged)?;
        }
        Ok(model)
    }
}
