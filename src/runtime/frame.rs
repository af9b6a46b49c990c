//! Framing shared by every saved model type: magic bytes naming the type, a format
//! version, the body (postcard), and a CRC-32 of everything before it.
//!
//! A model type declares one [`Framing`] and reads its versions' bodies with
//! [`decode_exact`]; the checksum, the header checks and strict reading come from here.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{MorfError, Result};

/// Length of the magic bytes and the little-endian `u16` version that open the bytes.
const HEADER_LEN: usize = 6;

/// Length of the little-endian CRC-32 that closes the bytes of checksummed versions.
const CHECKSUM_LEN: usize = 4;

/// How one model type frames its saved bytes.
pub(crate) struct Framing {
    /// Bytes that open every saved model of this type.
    pub magic: [u8; 4],
    /// Oldest version still read.
    pub oldest: u16,
    /// Version written.
    pub current: u16,
    /// First version whose bytes end with a checksum (older ones have none).
    pub first_checksummed: u16,
}

impl Framing {
    /// `model` as header, postcard body and checksum.
    pub fn write<T: Serialize>(&self, model: &T) -> Vec<u8> {
        let mut bytes = self.magic.to_vec();
        bytes.extend_from_slice(&self.current.to_le_bytes());
        let mut bytes =
            postcard::to_extend(model, bytes).expect("serialising to memory cannot fail");
        let checksum = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&checksum.to_le_bytes());
        bytes
    }

    /// Checks the header and, for versions that carry one, the checksum; gives the
    /// version and the body, the bytes between the header and the checksum.
    ///
    /// CRC-32 detects every error confined to 32 consecutive bits, so any single
    /// flipped bit after the version is caught here. A flip inside the version is
    /// caught by its version's strict reading: an older body read from a newer one
    /// leaves the checksum as trailing bytes.
    pub fn open<'a>(&self, bytes: &'a [u8]) -> Result<(u16, &'a [u8])> {
        if bytes.len() < HEADER_LEN || bytes[..4] != self.magic {
            return Err(damaged("not a morf_rs model of this type (missing header)"));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if !(self.oldest..=self.current).contains(&version) {
            return Err(damaged(format!(
                "saved with format version {version}, this build reads versions {} to {}",
                self.oldest, self.current
            )));
        }
        if version < self.first_checksummed {
            return Ok((version, &bytes[HEADER_LEN..]));
        }
        if bytes.len() < HEADER_LEN + CHECKSUM_LEN {
            return Err(damaged("truncated: the bytes end before the checksum"));
        }
        let (framed, stored) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
        let stored = u32::from_le_bytes(stored.try_into().expect("four bytes"));
        if crc32fast::hash(framed) != stored {
            return Err(damaged(
                "checksum mismatch: the bytes were changed or truncated after saving",
            ));
        }
        Ok((version, &framed[HEADER_LEN..]))
    }
}

/// Reads `body` as one `T`, every byte of it. Collections are read element by element
/// and reserve at most serde's cautious bound (1 MiB) up front, so a declared length
/// allocates nothing the bytes do not back.
pub(crate) fn decode_exact<T: DeserializeOwned>(body: &[u8]) -> Result<T> {
    let (value, rest) =
        postcard::take_from_bytes(body).map_err(|e| damaged(format!("unreadable body: {e}")))?;
    if !rest.is_empty() {
        return Err(damaged(format!(
            "{} trailing bytes after the model",
            rest.len()
        )));
    }
    Ok(value)
}

/// The error for bytes that are not a whole, consistent model.
pub(crate) fn damaged(why: impl Into<String>) -> MorfError {
    MorfError::Deserialize(why.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAMING: Framing = Framing {
        magic: *b"TEST",
        oldest: 1,
        current: 3,
        first_checksummed: 3,
    };

    #[test]
    fn written_bytes_open_to_their_body_and_no_flip_after_the_version_passes() {
        let model = (7u32, vec![1.5f32, -2.0], String::from("tree"));
        let bytes = FRAMING.write(&model);
        let (version, body) = FRAMING.open(&bytes).unwrap();
        assert_eq!(version, 3);
        assert_eq!(
            decode_exact::<(u32, Vec<f32>, String)>(body).unwrap(),
            model
        );
        for bit in 8 * HEADER_LEN..8 * bytes.len() {
            let mut flipped = bytes.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            assert!(FRAMING.open(&flipped).is_err(), "bit {bit}");
        }
        assert!(FRAMING.open(&bytes[..bytes.len() - 1]).is_err());
        assert!(FRAMING.open(&bytes[..HEADER_LEN]).is_err());
    }

    #[test]
    fn headers_of_other_types_and_versions_are_refused() {
        let bytes = FRAMING.write(&1u8);
        let mut other_magic = bytes.clone();
        other_magic[0] = b'X';
        assert!(FRAMING
            .open(&other_magic)
            .unwrap_err()
            .to_string()
            .contains("header"));
        let mut newer = bytes.clone();
        newer[4] = 4;
        assert!(FRAMING
            .open(&newer)
            .unwrap_err()
            .to_string()
            .contains("version 4"));
        // Versions before checksums open without one.
        let mut old = bytes[..HEADER_LEN].to_vec();
        old[4] = 2;
        old.push(9);
        assert_eq!(FRAMING.open(&old).unwrap(), (2, &[9u8][..]));
    }

    #[test]
    fn reading_is_strict_and_declared_lengths_allocate_nothing_unbacked() {
        let mut body = postcard::to_allocvec(&vec![1u32, 2, 3]).unwrap();
        body.push(0);
        assert!(decode_exact::<Vec<u32>>(&body)
            .unwrap_err()
            .to_string()
            .contains("1 trailing bytes"));
        // A vector declaring 2^62 strings, with none present: reserving them would
        // abort the process.
        let mut huge = Vec::new();
        let mut length = 1u64 << 62;
        while length >= 0x80 {
            huge.push((length as u8) | 0x80);
            length >>= 7;
        }
        huge.push(length as u8);
        assert!(decode_exact::<Vec<String>>(&huge).is_err());
    }
}
