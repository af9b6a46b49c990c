//! The saved format of an isolation forest: the crate's framing (magic bytes `MOIF`,
//! version, postcard body, CRC-32) around the model, read strictly and validated.
//!
//! Version 2 added each tree's rule on missing cells
//! ([`MissingCells`](crate::atoms::MissingCells)); version 1 models read through a
//! frozen copy of their layout, their trees keeping the rule they were grown with.

use serde::Deserialize;

use super::IsolationForest;
use crate::error::Result;
use crate::runtime::frame::{damaged, decode_exact, Framing};
use crate::tree::{Leaves, Node, Task, TreeV4};

/// Version of the saved layout of isolation forests; bumped whenever it changes.
pub const ISOLATION_FORMAT_VERSION: u16 = 2;

const ISOLATION_FRAMING: Framing = Framing {
    magic: *b"MOIF",
    oldest: 1,
    current: ISOLATION_FORMAT_VERSION,
    first_checksummed: 1,
};

/// A version 1 model. This definition must never change.
#[derive(Deserialize)]
struct IsolationForestV1 {
    n_features: usize,
    max_samples: usize,
    trees: Vec<TreeV4>,
}

impl IsolationForest {
    /// The model as compact versioned bytes, for [`IsolationForest::from_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        ISOLATION_FRAMING.write(self)
    }

    /// Reads a model saved by [`IsolationForest::to_bytes`]: the bytes must be whole
    /// (checksum, no trailing bytes) and the model consistent, so that any bytes
    /// either load as a model that scores safely or give
    /// [`MorfError::Deserialize`](crate::MorfError).
    pub fn from_bytes(bytes: &[u8]) -> Result<IsolationForest> {
        let (version, body) = ISOLATION_FRAMING.open(bytes)?;
        let model: IsolationForest = match version {
            1 => {
                let saved: IsolationForestV1 = decode_exact(body)?;
                IsolationForest {
                    n_features: saved.n_features,
                    max_samples: saved.max_samples,
                    trees: saved.trees.into_iter().map(TreeV4::into_current).collect(),
                    scoring: Default::default(),
                }
            }
            _ => decode_exact(body)?,
        };
        if model.n_features == 0 || model.max_samples == 0 || model.trees.is_empty() {
            return Err(damaged("inconsistent isolation forest"));
        }
        let one_value = Task::Regression { n_outputs: 1 };
        for (t, tree) in model.trees.iter().enumerate() {
            tree.validate(model.n_features, one_value)
                .map_err(|why| damaged(format!("tree {t}: {why}")))?;
            // Every leaf holds a finite path length: scores are then never NaN.
            let lengths_ok = match tree.leaves() {
                Leaves::Values { means, .. } => means.iter().all(|v| v.is_finite() && *v >= 0.0),
                Leaves::Classes { .. } => false,
            };
            let leaves_vote = tree
                .nodes()
                .iter()
                .all(|node| !matches!(node, Node::Leaf { value: None }));
            if !(lengths_ok && leaves_vote) {
                return Err(damaged(format!("tree {t}: a leaf without a path length")));
            }
        }
        Ok(model)
    }
}
