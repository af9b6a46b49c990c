//! Projections of binary rows ([`BitRows`]) on atoms of weights ±1: an atom's cells in
//! one 64-bit word of the row are a mask, and its projection is the number of set bits
//! under its +1 masks less those under its -1 masks. A node's samples have the words
//! the atoms read copied into columns, so that each mask is one pass of `popcnt` over
//! a column, in vector lanes where the processor counts bits in them.
//!
//! The counts are the exact whole numbers that summing the cells in `f32` gives, so the
//! projections are [`Atom::project`](crate::atoms::Atom::project)'s bit for bit.

use crate::atoms::AtomSet;
use crate::data::BitRows;

/// One atom's cells in one word of a row that share a sign.
#[derive(Debug, Clone, Copy)]
struct Segment {
    /// The word's column in the node's block.
    column: u32,
    mask: u64,
    negative: bool,
}

/// How this processor counts bits.
#[derive(Debug, Clone, Copy)]
enum Popcount {
    /// Eight words at a time (AVX-512 VPOPCNTDQ).
    #[cfg(target_arch = "x86_64")]
    Lanes,
    /// One instruction a word.
    #[cfg(target_arch = "x86_64")]
    Instruction,
    /// What the compiler makes of `count_ones` for the build's baseline.
    Portable,
}

impl Popcount {
    fn detect() -> Popcount {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512vpopcntdq")
                && std::arch::is_x86_feature_detected!("avx512f")
            {
                return Popcount::Lanes;
            }
            if std::arch::is_x86_feature_detected!("popcnt") {
                return Popcount::Instruction;
            }
        }
        Popcount::Portable
    }
}

/// A node's atoms as masks over the words of binary rows; buffers reused across nodes.
#[derive(Debug, Default)]
pub(super) struct BitSums {
    /// Atom after atom, its segments: atom `a`'s are
    /// `segments[atom_segments[a]..atom_segments[a + 1]]`.
    segments: Vec<Segment>,
    atom_segments: Vec<u32>,
    /// The words of a row the atoms read, in the order of the block's columns.
    words: Vec<u32>,
    /// Per word of a row, its column in the block, or `u32::MAX` if no atom reads it.
    column_of_word: Vec<u32>,
    /// Column after column, each node sample's word.
    block: Vec<u64>,
    /// One atom's counts for the node's samples.
    counts: Vec<i32>,
}

impl BitSums {
    /// Lays out `atoms` as masks over rows of `words_per_row` words, if every one of
    /// them has weights ±1 and no window; `false` (and nothing to project) otherwise.
    pub(super) fn prepare(&mut self, atoms: &AtomSet, words_per_row: usize) -> bool {
        self.segments.clear();
        self.atom_segments.clear();
        self.atom_segments.push(0);
        self.words.clear();
        self.column_of_word.clear();
        self.column_of_word.resize(words_per_row, u32::MAX);
        for a in 0..atoms.len() {
            let atom = atoms.get(a);
            // Beyond 2^24 cells, summing them in `f32` may round.
            let exact = atom.indices.len() <= 1 << 24;
            if atom.window.is_some()
                || !exact
                || !(atoms.has_unit_weights(a) || atom.has_unit_weights())
            {
                return false;
            }
            let first = self.segments.len();
            for (&index, &weight) in atom.indices.iter().zip(atom.weights) {
                let word = index as usize / 64;
                if self.column_of_word[word] == u32::MAX {
                    self.column_of_word[word] = self.words.len() as u32;
                    self.words.push(word as u32);
                }
                let (column, negative) = (self.column_of_word[word], weight < 0.0);
                let bit = 1u64 << (index % 64);
                // Ascending indices: a word's cells of one sign follow each other,
                // unless the signs alternate within it.
                match self.segments[first..].last_mut() {
                    Some(last) if last.column == column && last.negative == negative => {
                        last.mask |= bit;
                    }
                    _ => self.segments.push(Segment {
                        column,
                        mask: bit,
                        negative,
                    }),
                }
            }
            self.atom_segments.push(self.segments.len() as u32);
        }
        true
    }

    /// Writes the projection of every node sample (`bits` row `row_of[sample]`) on
    /// every atom of the last [`Self::prepare`] at `out[a * samples.len() + i]`.
    pub(super) fn project(
        &mut self,
        bits: &BitRows,
        row_of: &[u32],
        samples: &[u32],
        out: &mut [f32],
    ) {
        let n = samples.len();
        self.block.clear();
        self.block.resize(self.words.len() * n, 0);
        for (i, &sample) in samples.iter().enumerate() {
            let row = bits.row(row_of[sample as usize] as usize);
            for (column, &word) in self.words.iter().enumerate() {
                self.block[column * n + i] = row[word as usize];
            }
        }
        let popcount = Popcount::detect();
        self.counts.resize(n, 0);
        let counts = &mut self.counts[..n];
        for (a, out) in out.chunks_exact_mut(n).enumerate() {
            counts.fill(0);
            let segments = self.atom_segments[a] as usize..self.atom_segments[a + 1] as usize;
            for segment in &self.segments[segments] {
                let words = &self.block[segment.column as usize * n..][..n];
                add_counts(popcount, counts, words, segment.mask, segment.negative);
            }
            for (value, &count) in out.iter_mut().zip(counts.iter()) {
                *value = count as f32;
            }
        }
    }
}

/// Adds (or takes away, if `negative`) the set bits of each of `words` under `mask`
/// to (from) `counts`.
fn add_counts(popcount: Popcount, counts: &mut [i32], words: &[u64], mask: u64, negative: bool) {
    match popcount {
        // SAFETY: `detect` found the instructions these are compiled for.
        #[cfg(target_arch = "x86_64")]
        Popcount::Lanes => unsafe { add_counts_lanes(counts, words, mask, negative) },
        #[cfg(target_arch = "x86_64")]
        Popcount::Instruction => unsafe { add_counts_instruction(counts, words, mask, negative) },
        Popcount::Portable => add_counts_portable(counts, words, mask, negative),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
fn add_counts_lanes(counts: &mut [i32], words: &[u64], mask: u64, negative: bool) {
    add_counts_portable(counts, words, mask, negative)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn add_counts_instruction(counts: &mut [i32], words: &[u64], mask: u64, negative: bool) {
    add_counts_portable(counts, words, mask, negative)
}

#[inline(always)]
fn add_counts_portable(counts: &mut [i32], words: &[u64], mask: u64, negative: bool) {
    let pairs = counts.iter_mut().zip(words);
    if negative {
        pairs.for_each(|(count, &word)| *count -= (word & mask).count_ones() as i32);
    } else {
        pairs.for_each(|(count, &word)| *count += (word & mask).count_ones() as i32);
    }
}
