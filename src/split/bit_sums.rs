//! Projections of binary rows ([`BitRows`]) on atoms of weights ±1: an atom's cells in
//! one 64-bit word of the row are a mask, and its projection is the number of set bits
//! under its +1 masks less those under its -1 masks. A node's samples have the words
//! the atoms read copied into columns, so that each mask is one pass of `popcnt` over
//! a column, in vector lanes where the processor counts bits in them.
//!
//! The counts are the exact whole numbers that summing the cells in `f32` gives, so the
//! projections are [`Atom::project`](crate::atoms::Atom::project)'s bit for bit. Split
//! search takes them as offsets above the lowest value an atom can take (minus its
//! cells of weight -1), ready for counting by value without a pass to find their range.

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
#[derive(Debug, Clone, Copy, Default)]
enum Popcount {
    /// Eight words at a time (AVX-512 VPOPCNTDQ).
    #[cfg(target_arch = "x86_64")]
    Lanes,
    /// One instruction a word.
    #[cfg(target_arch = "x86_64")]
    Instruction,
    /// What the compiler makes of `count_ones` for the build's baseline.
    #[default]
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

/// A node's atoms as masks over the words of binary rows, and its samples' words;
/// buffers reused across nodes.
#[derive(Debug, Default)]
pub(super) struct BitSums {
    /// Atom after atom, its segments: atom `a`'s are
    /// `segments[atom_segments[a]..atom_segments[a + 1]]`.
    segments: Vec<Segment>,
    atom_segments: Vec<u32>,
    /// Per atom, its number of cells, and of cells of weight -1.
    cells: Vec<u32>,
    negative_cells: Vec<u32>,
    /// The words of a row the atoms read, in the order of the block's columns.
    words: Vec<u32>,
    /// Per word of a row, its column in the block, or `u32::MAX` if no atom reads it.
    column_of_word: Vec<u32>,
    /// Column after column, each node sample's word; `n` samples.
    block: Vec<u64>,
    n: usize,
    popcount: Popcount,
    /// One atom's offsets, where values are asked for.
    offsets: Vec<u32>,
}

impl BitSums {
    /// Lays out `atoms` as masks over rows of `words_per_row` words, if every one of
    /// them has weights ±1 and no window; `false` (and nothing to project) otherwise.
    pub(super) fn prepare(&mut self, atoms: &AtomSet, words_per_row: usize) -> bool {
        self.segments.clear();
        self.atom_segments.clear();
        self.atom_segments.push(0);
        self.cells.clear();
        self.negative_cells.clear();
        self.words.clear();
        self.column_of_word.clear();
        self.column_of_word.resize(words_per_row, u32::MAX);
        for a in 0..atoms.len() {
            let atom = atoms.get(a);
            // Beyond 2^23 cells, summing them in `f32` may round, and offsets would
            // not convert back exactly.
            let exact = atom.indices.len() < 1 << 23;
            if atom.window.is_some()
                || !exact
                || !(atoms.has_unit_weights(a) || atom.has_unit_weights())
            {
                return false;
            }
            let mut negative_cells = 0;
            // The segment being built: its word and sign, and its mask.
            let mut open: Option<(usize, bool, u64)> = None;
            for (&index, &weight) in atom.indices.iter().zip(atom.weights) {
                let (word, negative) = (index as usize / 64, weight < 0.0);
                negative_cells += negative as u32;
                let bit = 1u64 << (index % 64);
                // Ascending indices: a word's cells of one sign follow each other,
                // unless the signs alternate within it.
                match &mut open {
                    Some((open_word, open_negative, mask))
                        if *open_word == word && *open_negative == negative =>
                    {
                        *mask |= bit;
                    }
                    _ => {
                        if let Some(segment) = open {
                            self.close(segment);
                        }
                        open = Some((word, negative, bit));
                    }
                }
            }
            if let Some(segment) = open {
                self.close(segment);
            }
            self.atom_segments.push(self.segments.len() as u32);
            self.cells.push(atom.indices.len() as u32);
            self.negative_cells.push(negative_cells);
        }
        self.popcount = Popcount::detect();
        true
    }

    /// Appends the segment of cells `mask` of word `word`, of weight -1 if `negative`.
    fn close(&mut self, (word, negative, mask): (usize, bool, u64)) {
        if self.column_of_word[word] == u32::MAX {
            self.column_of_word[word] = self.words.len() as u32;
            self.words.push(word as u32);
        }
        self.segments.push(Segment {
            column: self.column_of_word[word],
            mask,
            negative,
        });
    }

    /// The most cells of any atom of the last [`Self::prepare`] (0 if none).
    pub(super) fn most_cells(&self) -> usize {
        self.cells.iter().max().map_or(0, |&cells| cells as usize)
    }

    /// Copies the words the atoms of the last [`Self::prepare`] read from the rows
    /// (`bits` row `row_of[sample]`) of the node's `samples`.
    pub(super) fn gather(&mut self, bits: &BitRows, row_of: &[u32], samples: &[u32]) {
        let n = samples.len();
        self.n = n;
        self.block.clear();
        self.block.resize(self.words.len() * n, 0);
        for (i, &sample) in samples.iter().enumerate() {
            let row = bits.row(row_of[sample as usize] as usize);
            for (column, &word) in self.words.iter().enumerate() {
                self.block[column * n + i] = row[word as usize];
            }
        }
    }

    /// Writes each gathered sample's projection on atom `a` less the lowest projection
    /// the atom can take into `offsets`; gives that lowest value, the number of values
    /// the atom can take (every offset is below it), and the smallest and largest
    /// offset.
    pub(super) fn offsets(&self, a: usize, offsets: &mut Vec<u32>) -> (f32, usize, (u32, u32)) {
        let n = self.n;
        let negative_cells = self.negative_cells[a];
        offsets.clear();
        offsets.resize(n, negative_cells);
        let segments =
            &self.segments[self.atom_segments[a] as usize..self.atom_segments[a + 1] as usize];
        let taken = count_segments(self.popcount, offsets, &self.block, segments);
        // `0.0 - 0.0` is `+0.0`, as a sum of cells from `+0.0` is.
        (
            0.0 - negative_cells as f32,
            self.cells[a] as usize + 1,
            taken,
        )
    }

    /// Writes each gathered sample's projection on atom `a` into `values`.
    pub(super) fn values(&mut self, a: usize, values: &mut [f32]) {
        let mut offsets = std::mem::take(&mut self.offsets);
        let (low, _, _) = self.offsets(a, &mut offsets);
        for (value, &offset) in values.iter_mut().zip(&offsets) {
            // Whole numbers below 2^23: exact in `f32`, and the sum of cells exactly.
            *value = offset as f32 + low;
        }
        self.offsets = offsets;
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
        self.gather(bits, row_of, samples);
        for (a, out) in out.chunks_exact_mut(samples.len()).enumerate() {
            self.values(a, out);
        }
    }
}

/// Adds (or takes away) the set bits under each of `segments` (over the columns of
/// `block`, each `counts.len()` words) to (from) `counts`, wrapping: counts that end
/// whole need not be at every step. Gives the smallest and largest count at the end,
/// `(u32::MAX, 0)` if there are none.
fn count_segments(
    popcount: Popcount,
    counts: &mut [u32],
    block: &[u64],
    segments: &[Segment],
) -> (u32, u32) {
    match popcount {
        // SAFETY: `detect` found the instructions these are compiled for.
        #[cfg(target_arch = "x86_64")]
        Popcount::Lanes => unsafe { count_segments_lanes(counts, block, segments) },
        #[cfg(target_arch = "x86_64")]
        Popcount::Instruction => unsafe { count_segments_instruction(counts, block, segments) },
        Popcount::Portable => count_segments_portable(counts, block, segments),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
fn count_segments_lanes(counts: &mut [u32], block: &[u64], segments: &[Segment]) -> (u32, u32) {
    count_segments_portable(counts, block, segments)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn count_segments_instruction(
    counts: &mut [u32],
    block: &[u64],
    segments: &[Segment],
) -> (u32, u32) {
    count_segments_portable(counts, block, segments)
}

#[inline(always)]
fn count_segments_portable(counts: &mut [u32], block: &[u64], segments: &[Segment]) -> (u32, u32) {
    let n = counts.len();
    let column = |segment: &Segment| &block[segment.column as usize * n..][..n];
    let Some((last, others)) = segments.split_last() else {
        let (low, high) = (counts.iter().copied().min(), counts.iter().copied().max());
        return (low.unwrap_or(u32::MAX), high.unwrap_or(0));
    };
    for segment in others {
        let (mask, pairs) = (segment.mask, counts.iter_mut().zip(column(segment)));
        if segment.negative {
            pairs
                .for_each(|(count, &word)| *count = count.wrapping_sub((word & mask).count_ones()));
        } else {
            pairs
                .for_each(|(count, &word)| *count = count.wrapping_add((word & mask).count_ones()));
        }
    }
    // The last segment's pass also finds the range: two reductions the compiler
    // vectorises with it.
    let (mask, pairs) = (last.mask, counts.iter_mut().zip(column(last)));
    let sign = if last.negative { u32::MAX } else { 1 };
    let (mut low, mut high) = (u32::MAX, 0);
    for (count, &word) in pairs {
        *count = count.wrapping_add(sign.wrapping_mul((word & mask).count_ones()));
        low = low.min(*count);
        high = high.max(*count);
    }
    (low, high)
}
