//! The saved format of an isolation forest: the crate's framing (magic bytes `MOIF`,
//! version, postcard body, CRC-32) around the model, read strictly and validated.
//!
//! Version 2 added each tree's rule on missing cells
//! ([`MissingCells`](crate::atoms::MissingCells)), version 3 the trees' (zero) impurity
//! decreases in float64 as every tree keeps them; version 1 and 2 models read through
//! frozen copies of their layouts, their trees keeping the rule they were grown with.

use serde::Deserialize;

use super::IsolationForest;
use crate::error::Result;
use crate::runtime::frame::{damaged, decode_exact, Framing};
use crate::tree::{Leaves, Node, Task, Tree, TreeV4, TreeV5};

/// Version of the saved layout of isolation forests; bumped whenever it changes.
pub const ISOLATION_FORMAT_VERSION: u16 = 3;

const ISOLATION_FRAMING: Framing = Framing {
    magic: *b"MOIF",
    oldest: 1,
    current: ISOLATION_FORMAT_VERSION,
    first_checksummed: 1,
};

/// A version 1 model (trees `TreeV4`) or version 2 one (`TreeV5`). These definitions
/// must never change.
#[derive(Deserialize)]
struct IsolationForestOf<OldTree> {
    n_features: usize,
    max_samples: usize,
    trees: Vec<OldTree>,
}

impl<OldTree> IsolationForestOf<OldTree> {
    fn into_current(self, tree: impl Fn(OldTree) -> Tree) -> IsolationForest {
        IsolationForest {
            n_features: self.n_features,
            max_samples: self.max_samples,
            trees: self.trees.into_iter().map(tree).collect(),
            scoring: Default::default(),
        }
    }
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
        let model: IsolationForest =
            match version {
                1 => decode_exact::<IsolationForestOf<TreeV4>>(body)?
                    .into_current(TreeV4::into_current),
                2 => decode_exact::<IsolationForestOf<TreeV5>>(body)?
                    .into_current(TreeV5::into_current),
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
