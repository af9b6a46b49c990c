//! The saved format: the shared framing ([`frame`]: magic bytes, version, postcard
//! body, checksum) around the forest, read strictly and validated before use.
//!
//! [`frame`]: crate::runtime::frame
//!
//! Version 6 is the postcard of the current [`Forest`] followed by a CRC-32; versions 1
//! to 5 are read through frozen copies of their layouts ([`legacy`]). Version 4 added
//! pooled splits (`Node::SplitPooled` and the trees' windows); version 5 each tree's
//! rule on missing cells ([`MissingCells`](crate::atoms::MissingCells)), older trees
//! keeping theirs; version 6 keeps impurity decreases in float64 (in float32 a
//! regression split's decrease overflowed for targets beyond about 1.8e19). Whatever the version, the forest is validated
//! ([`Forest::validate`]) before it is returned.

mod legacy;
mod validate;

use super::Forest;
use crate::error::Result;
use crate::runtime::frame::{decode_exact, Framing};
use crate::tree::{TreeV3, TreeV4, TreeV5};

/// Version of the saved layout; bumped whenever it changes.
pub const FORMAT_VERSION: u16 = 6;

/// How forests are framed: versions 1 and 2 had no checksum.
const FOREST_FRAMING: Framing = Framing {
    magic: *b"MORF",
    oldest: 1,
    current: FORMAT_VERSION,
    first_checksummed: 3,
};

impl Forest {
    /// The forest as compact versioned bytes, for [`Forest::from_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        FOREST_FRAMING.write(self)
    }

    /// Reads a forest saved by [`Forest::to_bytes`] of this or an earlier version.
    ///
    /// The bytes must be whole (checksum, no trailing bytes) and the forest consistent
    /// and sane (see [`Tree`](crate::Tree) validation: links, atoms, leaf
    /// distributions, counts within bounds), so that any bytes either load as a forest
    /// that scores safely or give [`MorfError::Deserialize`](crate::MorfError).
    pub fn from_bytes(bytes: &[u8]) -> Result<Forest> {
        let (version, body) = FOREST_FRAMING.open(bytes)?;
        let forest = match version {
            1 | 2 => legacy::read_v2(body)?,
            3 => legacy::read_trees_of(body, TreeV3::into_current)?,
            4 => legacy::read_trees_of(body, TreeV4::into_current)?,
            5 => legacy::read_trees_of(body, TreeV5::into_current)?,
            _ => decode_exact::<Forest>(body)?,
        };
        forest.validate()?;
        Ok(forest)
    }
}
