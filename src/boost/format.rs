//! The saved format of a boosted model: the crate's framing (magic bytes `MOGB`,
//! version, postcard body, CRC-32) around the model, read strictly and validated.

use super::loss::Loss;
use super::model::Booster;
use crate::error::Result;
use crate::runtime::frame::{damaged, decode_exact, Framing};
use crate::tree::Task;

/// Version of the saved layout of boosted models; bumped whenever it changes.
pub const BOOSTER_FORMAT_VERSION: u16 = 1;

const BOOSTER_FRAMING: Framing = Framing {
    magic: *b"MOGB",
    oldest: BOOSTER_FORMAT_VERSION,
    current: BOOSTER_FORMAT_VERSION,
    first_checksummed: BOOSTER_FORMAT_VERSION,
};

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
        let (_, body) = BOOSTER_FRAMING.open(bytes)?;
        let model: Booster = decode_exact(body)?;
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
