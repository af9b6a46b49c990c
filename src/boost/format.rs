//! The saved format of a boosted model: the crate's framing (magic bytes `MOGB`,
//! version, postcard body, CRC-32) around the model, read strictly and validated.
//!
//! Version 2 added pooled splits (`Node::SplitPooled` and the trees' windows),
//! version 3 each tree's rule on missing cells
//! ([`MissingCells`](crate::atoms::MissingCells)), version 4 the splits' gains in
//! float64 (in float32 they overflowed for large targets); version 1 to 3 models read
//! through frozen copies of their layouts, their trees keeping the rule they were grown
//! with.

use serde::Deserialize;

use super::loss::Loss;
use super::model::Booster;
use crate::error::Result;
use crate::runtime::frame::{damaged, decode_exact, Framing};
use crate::tree::{Task, Tree, TreeV3, TreeV4, TreeV5};

/// Version of the saved layout of boosted models; bumped whenever it changes.
pub const BOOSTER_FORMAT_VERSION: u16 = 4;

const BOOSTER_FRAMING: Framing = Framing {
    magic: *b"MOGB",
    oldest: 1,
    current: BOOSTER_FORMAT_VERSION,
    first_checksummed: 1,
};

/// A version 1, 2 or 3 model, whose trees are `TreeV3`, `TreeV4` or `TreeV5`. These definitions
/// must never change.
#[derive(Deserialize)]
struct BoosterOf<OldTree> {
    n_features: usize,
    loss: Loss,
    baseline: Vec<f64>,
    trees: Vec<OldTree>,
    train_loss: Vec<f64>,
    validation_loss: Vec<f64>,
}

impl<OldTree> BoosterOf<OldTree> {
    fn into_current(self, tree: impl Fn(OldTree) -> Tree) -> Booster {
        Booster {
            n_features: self.n_features,
            loss: self.loss,
            baseline: self.baseline,
            trees: self.trees.into_iter().map(tree).collect(),
            train_loss: self.train_loss,
            validation_loss: self.validation_loss,
            scoring: Default::default(),
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
            1 => decode_exact::<BoosterOf<TreeV3>>(body)?.into_current(TreeV3::into_current),
            2 => decode_exact::<BoosterOf<TreeV4>>(body)?.into_current(TreeV4::into_current),
            3 => decode_exact::<BoosterOf<TreeV5>>(body)?.into_current(TreeV5::into_current),
            _ => decode_exact(body)?,
        };
        let n_outputs = model.loss.n_outputs();
        let consistent = model.n_features > 0
            && !matches!(model.loss, Loss::MultinomialLogLoss { n_classes } if n_classes == 0 || n_classes == 2)
            && model.baseline.len() == n_outputs
            && model.baseline.iter().all(|b| b.is_finite())
            && !model.trees.is_empty()
            && model.trees.len().is_multiple_of(n_outputs)
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
        if !model.raw_score_bounds().iter().all(|b| b.is_finite()) {
            return Err(damaged(
                "leaf values and baseline whose sum overflows: the model cannot give \
                 finite predictions",
            ));
        }
        Ok(model)
    }
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;

    use super::*;
    use crate::boost::{BoostParams, BoostTargets};
    use crate::runtime::options::ScoreOptions;
    use crate::tree::Leaves;

    fn small_booster(targets: BoostTargets<'_>) -> Booster {
        let x = Array2::from_shape_fn((30, 3), |(i, j)| ((i * 7 + j * 3) % 11) as f32);
        let params = BoostParams {
            n_estimators: 3,
            min_samples_leaf: 2,
            ..BoostParams::default()
        };
        Booster::fit(&params, x.view(), targets, None).unwrap()
    }

    /// Sets every leaf value of every tree to `value`.
    fn with_leaf_values(mut model: Booster, value: f64) -> Booster {
        for tree in &mut model.trees {
            if let Leaves::Values { means, .. } = &mut tree.leaves {
                means.iter_mut().for_each(|m| *m = value);
            }
        }
        model
    }

    #[test]
    fn leaf_values_whose_sum_overflows_are_refused_at_load() {
        let labels: Vec<u32> = (0..30).map(|i| (i % 3) as u32).collect();
        let values: Vec<f64> = (0..30).map(|i| i as f64).collect();
        let binary: Vec<u32> = labels.iter().map(|&l| l % 2).collect();
        for targets in [
            BoostTargets::Values(&values),
            BoostTargets::Classes {
                labels: &binary,
                n_classes: 2,
            },
            BoostTargets::Classes {
                labels: &labels,
                n_classes: 3,
            },
        ] {
            let model = small_booster(targets);
            // Large but harmless: loads, and predicts finite values.
            let large = with_leaf_values(model.clone(), 1e300);
            let loaded = Booster::from_bytes(&large.to_bytes()).unwrap();
            let x = Array2::from_elem((2, 3), 1.0f32);
            assert!(loaded
                .predict(x.view(), &ScoreOptions::default())
                .unwrap()
                .iter()
                .all(|p| p.is_finite()));
            // Each finite, their sum over three rounds not.
            let huge = with_leaf_values(model.clone(), 1.7e308);
            let error = Booster::from_bytes(&huge.to_bytes()).unwrap_err();
            assert!(error.to_string().contains("overflows"), "{error}");
            let mut far = model;
            far.baseline[0] = f64::MAX;
            let far = with_leaf_values(far, 1e300);
            assert!(Booster::from_bytes(&far.to_bytes()).is_err());
        }
    }
}
