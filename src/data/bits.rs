//! Binary X (every value 0 or 1: thresholded images, presence data, the papers' circle
//! and bars) held as one bit a cell, so that an atom of weights ±1 projects a row by
//! counting the set bits of a few masked words: a row of 100 cells is two `u64`, and a
//! whole training set of 1,000 such rows stays in the first-level cache.

use rayon::prelude::*;

use super::feature::Feature;
use super::rows::Rows;

/// Row-major bits: cell `f` of row `i` is bit `f % 64` of word
/// `i * words_per_row + f / 64`; the bits past a row's last cell are 0.
#[derive(Debug, Clone)]
pub struct BitRows {
    words: Vec<u64>,
    words_per_row: usize,
}

impl BitRows {
    /// The bits of `rows`, or `None` unless every value is 0 or 1. Rows are packed in
    /// parallel on the current thread pool: this copy is made between a fit's first
    /// trees and the rest, while no tree grows.
    pub(crate) fn of<T: Feature>(rows: &Rows<'_, T>) -> Option<BitRows> {
        let words_per_row = rows.n_features.div_ceil(64);
        let mut words = vec![0u64; rows.n_samples * words_per_row];
        let binary = words
            .par_chunks_mut(words_per_row)
            .enumerate()
            .all(|(i, row_words)| match T::as_bytes(rows.row(i)) {
                Some(bytes) => pack_bytes(bytes, row_words),
                None => pack_values(rows.row(i), row_words),
            });
        binary.then_some(BitRows {
            words,
            words_per_row,
        })
    }

    /// Words per row: the number of features over 64, rounded up.
    #[inline(always)]
    pub fn words_per_row(&self) -> usize {
        self.words_per_row
    }

    /// The words of row `i`.
    #[inline(always)]
    pub fn row(&self, i: usize) -> &[u64] {
        &self.words[i * self.words_per_row..(i + 1) * self.words_per_row]
    }
}

/// Packs one row of values into `words`; whether every value is 0 or 1.
fn pack_values<T: Feature>(row: &[T], words: &mut [u64]) -> bool {
    let mut binary = true;
    for (word, cells) in words.iter_mut().zip(row.chunks(64)) {
        for (bit, &cell) in cells.iter().enumerate() {
            let value = cell.to_f32();
            // NaN is neither.
            binary &= value == 0.0 || value == 1.0;
            *word |= ((value == 1.0) as u64) << bit;
        }
    }
    binary
}

/// Packs one row of bytes into `words`, eight at a time; whether every byte is 0 or 1.
fn pack_bytes(row: &[u8], words: &mut [u64]) -> bool {
    // Byte `j` (0 or 1) of a little-endian word, times this, lands in bit 56 + j alone:
    // every other product falls beyond bit 63 or on a distinct bit below 56.
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let mut high_bits = 0u64;
    for (word, cells) in words.iter_mut().zip(row.chunks(64)) {
        let mut packed = 0u64;
        for (group, eight) in cells.chunks(8).enumerate() {
            let mut bytes = [0u8; 8];
            bytes[..eight.len()].copy_from_slice(eight);
            let lanes = u64::from_le_bytes(bytes);
            high_bits |= lanes & 0xFEFE_FEFE_FEFE_FEFE;
            packed |= (lanes.wrapping_mul(GATHER) >> 56) << (8 * group);
        }
        *word = packed;
    }
    high_bits == 0
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;

    use super::*;

    #[test]
    fn each_cell_is_its_bit_and_only_zeros_and_ones_are_binary() {
        let n_features = 130;
        let x = Array2::from_shape_fn((3, n_features), |(i, f)| {
            ((i * 7 + f * f) % 3 == 0) as u8 as f32
        });
        let rows = Rows::from_view(x.view()).unwrap();
        let bits = BitRows::of(&rows).unwrap();
        assert_eq!(bits.words_per_row(), 3);
        for i in 0..3 {
            for f in 0..n_features {
                let bit = bits.row(i)[f / 64] >> (f % 64) & 1;
                assert_eq!(bit as f32, x[(i, f)], "row {i}, cell {f}");
            }
            // Past the last cell every bit is 0.
            assert_eq!(bits.row(i)[2] >> (n_features - 128), 0);
        }
        // Bytes pack eight at a time, to the same bits.
        let bytes = x.mapv(|v| v as u8);
        let byte_bits = BitRows::of(&Rows::from_view(bytes.view()).unwrap()).unwrap();
        assert_eq!(byte_bits.words, bits.words);
        for odd in [2u8, 3, 128, 255] {
            let mut bytes = bytes.clone();
            bytes[(1, 127)] = odd;
            assert!(
                BitRows::of(&Rows::from_view(bytes.view()).unwrap()).is_none(),
                "{odd}"
            );
        }
        for odd in [2.0, -1.0, 0.5, f32::NAN] {
            let mut x = x.clone();
            x[(2, 129)] = odd;
            assert!(
                BitRows::of(&Rows::from_view(x.view()).unwrap()).is_none(),
                "{odd}"
            );
        }
    }
}
