//! Projections of byte rows on atoms whose whole weights come in runs of neighbouring
//! cells with one weight (the rows of a patch): each run's cells are summed from one
//! 8-byte load by a sum of absolute differences against zero (`psadbw`, two rows to a
//! register), instead of one load and one addition per cell. The sums are exact
//! integers, as those of [`integer_sum`](super::projection) are, so the projections
//! are the same bit for bit.

use super::projection::ROW_GROUP;
use crate::atoms::Atom;

/// Cells one load sums: the bytes of a `u64`.
const RUN_MAX: usize = 8;

/// A run of at most [`RUN_MAX`] neighbouring cells of one weight, read as the 8 bytes
/// at `load` (inside the row) of which `mask` keeps the run's.
#[derive(Debug, Clone, Copy)]
struct Run {
    load: u32,
    mask: u64,
    weight: i32,
}

/// Per atom of a node, its runs when it is summed by runs.
#[derive(Debug, Default)]
pub(super) struct ByteRuns {
    runs: Vec<Run>,
    /// Per atom, its runs `runs[atom_runs[a]..atom_runs[a + 1]]`; empty when the atom
    /// is summed cell by cell.
    atom_runs: Vec<u32>,
    /// The end of the furthest load of any run: rows at least this long can be read
    /// without a check per load.
    reads_end: usize,
}

impl ByteRuns {
    /// Clears the runs for a new node's atoms.
    pub(super) fn clear(&mut self) {
        self.runs.clear();
        self.atom_runs.clear();
        self.atom_runs.push(0);
        self.reads_end = 0;
    }

    /// Adds the next atom of the node: its runs where `summed_in_integers` (whole
    /// weights whose sums are exact, see `sums_exactly_in_integers`) and runs save
    /// loads (the atom has fewer runs than cells), in rows of `n_features` bytes; none
    /// otherwise.
    pub(super) fn push_atom(
        &mut self,
        atom: Atom<'_>,
        summed_in_integers: bool,
        n_features: usize,
    ) {
        let start = self.runs.len();
        if summed_in_integers && atom.window.is_none() && n_features >= RUN_MAX {
            let (indices, weights) = (atom.indices, atom.weights);
            let mut i = 0;
            while i < indices.len() {
                let (first, weight) = (indices[i], weights[i]);
                let mut length = 1;
                while i + length < indices.len()
                    && length < RUN_MAX
                    && indices[i + length] == first + length as u32
                    && weights[i + length] == weight
                {
                    length += 1;
                }
                // A run near the row's end is read from the last 8 bytes of the row.
                let load = (first as usize).min(n_features - RUN_MAX);
                let shift = 8 * (first as usize - load);
                let cells = if length == RUN_MAX {
                    u64::MAX
                } else {
                    (1u64 << (8 * length)) - 1
                };
                self.reads_end = self.reads_end.max(load + RUN_MAX);
                self.runs.push(Run {
                    load: load as u32,
                    mask: cells << shift,
                    weight: weight as i32,
                });
                i += length;
            }
            if self.runs.len() - start >= indices.len() {
                self.runs.truncate(start);
            }
        }
        self.atom_runs.push(self.runs.len() as u32);
    }

    /// Whether atom `a` is summed by runs.
    #[inline(always)]
    pub(super) fn has_runs(&self, a: usize) -> bool {
        self.atom_runs[a] != self.atom_runs[a + 1]
    }

    /// Writes the projections of atom `a` (which [`Self::has_runs`]) on a group of
    /// byte rows into `out`: the same whole numbers as summing cell by cell.
    #[inline(always)]
    pub(super) fn group_sums(&self, a: usize, rows: &[&[u8]; ROW_GROUP], out: &mut [f32]) {
        let runs = &self.runs[self.atom_runs[a] as usize..self.atom_runs[a + 1] as usize];
        assert!(
            rows.iter().all(|row| row.len() >= self.reads_end),
            "rows as long as the runs were laid out for"
        );
        // SAFETY: every run's load ends by `reads_end`, within each row (above).
        let sums = unsafe { group_sums(runs, rows) };
        for (value, sum) in out.iter_mut().zip(sums) {
            *value = sum as f32;
        }
    }
}

/// The 8 bytes of `row` at `load`, read without a check.
///
/// # Safety
/// `load + 8` must not exceed the row's length.
#[inline(always)]
unsafe fn word_at(row: &[u8], load: u32) -> u64 {
    // SAFETY: the caller's bound keeps the 8 bytes within the row.
    u64::from_le(unsafe {
        row.as_ptr()
            .add(load as usize)
            .cast::<u64>()
            .read_unaligned()
    })
}

/// Per row, `sum over runs of weight * (sum of the run's bytes)`, wrapping in `i32`
/// (exact where the atom's sums are, as every partial sum is then below 2^24).
///
/// # Safety
/// Each run's 8 bytes must lie within every row.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn group_sums(runs: &[Run], rows: &[&[u8]; ROW_GROUP]) -> [i32; ROW_GROUP] {
    use std::arch::x86_64::*;
    const PAIRS: usize = ROW_GROUP / 2;
    // SAFETY: SSE2 is part of x86_64; the words lie within the rows (the caller).
    unsafe {
        let zero = _mm_setzero_si128();
        let mut totals = [zero; PAIRS];
        for run in runs {
            let mask = _mm_set1_epi64x(run.mask as i64);
            // The low 32 bits of each 64-bit product are the signed product modulo
            // 2^32: 32-bit additions of them give the signed sum.
            let weight = _mm_set1_epi64x(run.weight as u32 as i64);
            for (pair, total) in totals.iter_mut().enumerate() {
                let low = word_at(rows[2 * pair], run.load);
                let high = word_at(rows[2 * pair + 1], run.load);
                let words = _mm_set_epi64x(high as i64, low as i64);
                let cells = _mm_sad_epu8(_mm_and_si128(words, mask), zero);
                *total = _mm_add_epi32(*total, _mm_mul_epu32(cells, weight));
            }
        }
        let mut sums = [0i32; ROW_GROUP];
        for (pair, total) in totals.iter().enumerate() {
            sums[2 * pair] = _mm_cvtsi128_si32(*total);
            sums[2 * pair + 1] = _mm_cvtsi128_si32(_mm_unpackhi_epi64(*total, *total));
        }
        sums
    }
}

/// [`group_sums`] without `psadbw`: the run's bytes added pairwise within the word.
///
/// # Safety
/// Each run's 8 bytes must lie within every row.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn group_sums(runs: &[Run], rows: &[&[u8]; ROW_GROUP]) -> [i32; ROW_GROUP] {
    const BYTES: u64 = 0x00ff_00ff_00ff_00ff;
    let mut sums = [0i32; ROW_GROUP];
    for run in runs {
        for (sum, row) in sums.iter_mut().zip(rows) {
            // SAFETY: the caller's bound.
            let word = unsafe { word_at(row, run.load) } & run.mask;
            let pairs = (word & BYTES) + ((word >> 8) & BYTES);
            let quads = pairs + (pairs >> 16);
            let cells = ((quads + (quads >> 32)) & 0xffff) as i32;
            *sum = sum.wrapping_add(run.weight.wrapping_mul(cells));
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::atoms::AtomSet;

    proptest! {
        #[test]
        fn run_sums_equal_cell_by_cell_sums(
            n_features in 1usize..40,
            n_atoms in 1usize..12,
            seed in any::<u64>(),
        ) {
            // Patches of runs up to past 8 cells (split into loads of 8), runs ending at
            // the row's end, mixed weights (a run ends where the weight changes).
            let mut rng = crate::rng::Rng::new(seed, 0);
            let x: Vec<u8> = (0..ROW_GROUP * n_features)
                .map(|_| [0u8, 255, rng.below(256) as u8][rng.below(3)])
                .collect();
            let rows: [&[u8]; ROW_GROUP] =
                std::array::from_fn(|r| &x[r * n_features..(r + 1) * n_features]);
            let mut atoms = AtomSet::default();
            atoms.clear();
            for _ in 0..n_atoms {
                let mut pairs = Vec::new();
                let mut feature = rng.below(n_features);
                while feature < n_features && pairs.len() < 20 {
                    let weight = [1.0f32, 1.0, -1.0, 3.0, -200.0][rng.below(5)];
                    pairs.push((feature as u32, weight));
                    feature += 1 + rng.below(4) / 3;
                }
                atoms.push_pairs(&mut pairs);
            }
            let mut runs = ByteRuns::default();
            runs.clear();
            for a in 0..atoms.len() {
                runs.push_atom(atoms.get(a), true, n_features);
            }
            for a in 0..atoms.len() {
                let atom = atoms.get(a);
                if !runs.has_runs(a) {
                    continue;
                }
                let mut out = [0.0f32; ROW_GROUP];
                runs.group_sums(a, &rows, &mut out);
                for (r, row) in rows.iter().enumerate() {
                    let expected: i32 = atom
                        .indices
                        .iter()
                        .zip(atom.weights)
                        .map(|(&i, &w)| w as i32 * row[i as usize] as i32)
                        .sum();
                    prop_assert_eq!(out[r], expected as f32, "atom {} row {}", a, r);
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "rows as long as the runs were laid out for")]
    fn rows_shorter_than_the_runs_reach_are_refused_before_any_load() {
        // The runs read 8 bytes at a time without a check per load: a row shorter than
        // the rows they were laid out for must stop the sums, not be read past its end.
        let mut atoms = AtomSet::default();
        atoms.clear();
        atoms.push_pairs(&mut [(12, 1.0), (13, 1.0), (14, 1.0)]);
        let mut runs = ByteRuns::default();
        runs.clear();
        runs.push_atom(atoms.get(0), true, 16);
        assert!(runs.has_runs(0));
        let (long, short) = ([7u8; 16], [7u8; 15]);
        let mut rows: [&[u8]; ROW_GROUP] = [&long; ROW_GROUP];
        rows[ROW_GROUP - 1] = &short;
        runs.group_sums(0, &rows, &mut [0.0; ROW_GROUP]);
    }

    #[test]
    fn atoms_without_runs_are_summed_cell_by_cell() {
        let mut atoms = AtomSet::default();
        atoms.clear();
        atoms.push_pairs(&mut [(0, 1.0), (2, 1.0), (4, 1.0)]);
        atoms.push_pairs(&mut [(0, 1.0), (1, -1.0)]);
        atoms.push_pairs(&mut [(0, 1.0), (1, 1.0), (5, 1.0)]);
        let mut runs = ByteRuns::default();
        runs.clear();
        for a in 0..atoms.len() {
            runs.push_atom(atoms.get(a), true, 10);
        }
        assert!(!runs.has_runs(0) && !runs.has_runs(1) && runs.has_runs(2));
        runs.clear();
        runs.push_atom(atoms.get(2), false, 10);
        runs.push_atom(atoms.get(2), true, 7);
        assert!(!runs.has_runs(0) && !runs.has_runs(1));
    }
}
