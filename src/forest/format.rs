//! The saved format: a header (magic bytes, version) and the forest in postcard.

use super::Forest;
use crate::error::{MorfError, Result};

/// Bytes that open every saved forest.
const MAGIC: &[u8; 4] = b"MORF";
/// Version of the saved layout; bumped whenever it changes.
pub const FORMAT_VERSION: u16 = 2;
/// Oldest version still read. Version 2 only appended `Node::SplitOnFeature`, so a
/// version 1 forest is a valid version 2 forest.
const OLDEST_READABLE_VERSION: u16 = 1;

impl Forest {
    /// The forest as compact versioned bytes, for [`Forest::from_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        postcard::to_extend(self, bytes).expect("serialising to memory cannot fail")
    }

    /// Reads a forest saved by [`Forest::to_bytes`], checking that it is whole and
    /// consistent so that scoring it cannot go out of bounds.
    pub fn from_bytes(bytes: &[u8]) -> Result<Forest> {
        let corrupt = |why: &str| MorfError::Deserialize(why.to_string());
        if bytes.len() < 6 || &bytes[..4] != MAGIC {
            return Err(corrupt("not a morf_rs forest (missing header)"));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(MorfError::Deserialize(format!(
                "saved with format version {version}, this build reads versions \
                 {OLDEST_READABLE_VERSION} to {FORMAT_VERSION}"
            )));
        }
        let forest: Forest = postcard::from_bytes(&bytes[6..])
            .map_err(|e| MorfError::Deserialize(format!("damaged data: {e}")))?;
        if forest.trees.is_empty() || forest.n_classes == 0 || forest.n_features == 0 {
            return Err(corrupt("damaged data: empty forest"));
        }
        for tree in &forest.trees {
            tree.check(forest.n_features, forest.n_classes)
                .map_err(corrupt)?;
        }
        Ok(forest)
    }
}
