use super::bit_sums::BitSums;
use super::byte_runs::ByteRuns;
use super::cell_columns::{project_from_columns, reads_columns};
use super::missing_sums::{rescaled_group_sums, rescaled_row_sum};
use super::pooled_columns::PooledColumns;
use crate::atoms::{rescaled_present_sum, Atom, AtomSet, MissingCells};
use crate::data::{Feature, Rows};

/// Samples projected together on the column path: the cells the node's atoms read are
/// copied, for a chunk of samples, into a column-major block, so that each atom term
/// becomes one multiply-add across the chunk, which the compiler vectorises.
pub(super) const CHUNK: usize = 64;

/// Lanes of a chunk summed together on the column path (a divisor of `CHUNK`).
pub(super) const LANE_GROUP: usize = 32;

/// The column path pays for copying each distinct feature once per sample and wins when
/// the atoms read each feature this many times on average (overlapping patches, as on
/// the circle); otherwise each atom reads the row directly.
const TERMS_PER_FEATURE_FOR_COLUMNS: usize = 2;

/// Samples whose rows the row path reads together.
pub(super) const ROW_GROUP: usize = 8;

/// Samples ahead of the one being read whose rows are requested early: a node's
/// samples sit at scattered rows, so each row is a fresh trip to memory.
const PREFETCH_DISTANCE: usize = 4;

/// Bytes per cache line, for prefetching each line of a row once.
const CACHE_LINE: usize = 64;

/// Projects a node's samples on all its atoms; holds buffers reused across nodes.
///
/// Either path adds each sample's terms in index order starting from 0.0, exactly as
/// [`Atom::project`] does, so training and scoring see the same values bit for bit; on
/// byte X the row path sums whole-weight atoms in integers where that is exact, which
/// gives those same values.
#[derive(Debug, Default)]
pub struct NodeProjector {
    /// Bit per feature of X: whether an atom of the node reads it.
    read: Vec<u64>,
    /// Distinct features the atoms read, ascending, so rows are read forwards; listed
    /// for the column path only.
    features: Vec<u32>,
    /// Per feature of X, its column in `block`; valid for the entries of `features`.
    column_of: Vec<u32>,
    /// Per atom term, in atom order, its column in `block`.
    term_columns: Vec<u32>,
    /// One feature per cache line that `features` touch, to prefetch.
    line_features: Vec<u32>,
    block: Vec<f32>,
    /// Per atom, for X of whole numbers ([`Feature::MAX_WHOLE`]): whether its weights
    /// are whole and small enough that every partial sum is exact in `f32`, so that
    /// summing in integers gives the same value bit for bit with cheaper additions.
    integer_sums: Vec<bool>,
    /// On byte X, the runs of the atoms summed run by run on the row path.
    byte_runs: ByteRuns,
    /// Per atom, when X has missing cells: whether the paths here project it under
    /// [`MissingCells::RescaledPresent`] themselves (see [`Self::mark_rescaled_in_pass`]).
    rescaled_in_pass: Vec<bool>,
    /// Per atom marked in `rescaled_in_pass`, its whole weight `sum |w|`, summed as
    /// [`rescaled_present_sum`] sums it.
    whole_weights: Vec<f32>,
    /// The projection of pooled atoms, which the paths here leave out.
    pooled: PooledColumns,
    /// Where X is binary and held as bits, the projection of nodes whose atoms all
    /// have weights ±1.
    bit_sums: BitSums,
    /// The rows of a node's samples, for projections from X's columns.
    node_rows: Vec<u32>,
}

impl NodeProjector {
    /// Writes `a · x` for every atom `a` and node sample `i` (a position in `samples`)
    /// at `out[a * samples.len() + i]`, where `x` is the sample's row.
    pub fn project<T: Feature>(
        &mut self,
        rows: &Rows<'_, T>,
        row_of: &[u32],
        samples: &[u32],
        atoms: &AtomSet,
        out: &mut Vec<f32>,
    ) {
        // The row path reads rows without bounds checks: this one check covers them.
        // Indices ascend, so an atom's last is its largest.
        assert!(
            (0..atoms.len()).all(|a| atoms
                .get(a)
                .indices
                .last()
                .is_none_or(|&i| (i as usize) < rows.n_features)),
            "an atom reads past the end of the rows"
        );
        out.clear();
        out.resize(samples.len() * atoms.len(), 0.0);
        if let Some(bits) = rows.bits() {
            if let Some(bit_sums) = self.bit_sums(rows, atoms) {
                bit_sums.project(bits, row_of, samples, out);
                return;
            }
        }
        if let Some(max_whole) = T::MAX_WHOLE {
            self.mark_integer_sums(atoms, max_whole);
            if reads_columns(rows, samples.len(), atoms, &self.integer_sums) {
                // Byte X holds no missing cells, and no atom here pools.
                project_from_columns(rows, row_of, samples, atoms, &mut self.node_rows, out);
                return;
            }
            // Runs serve only whole groups of rows (see `project_rows`).
            let bytes = T::as_bytes(&[]).is_some() && samples.len() >= ROW_GROUP;
            self.byte_runs.clear();
            for a in 0..atoms.len() {
                let in_integers = bytes && self.integer_sums[a];
                self.byte_runs
                    .push_atom(atoms.get(a), in_integers, rows.n_features);
            }
        } else if !missing_rows(rows).is_empty() {
            // Read only for rows with a missing cell.
            self.mark_rescaled_in_pass(atoms);
        }
        if samples.len() < 2 * ROW_GROUP {
            // Too few rows to prefetch ahead or to gain from a column block: skip
            // listing the features, which would cost more than the projections.
            self.line_features.clear();
            self.project_rows(rows, row_of, samples, atoms, out);
            self.pooled.project(rows, row_of, samples, atoms, out);
            self.rescale_missing(rows, row_of, samples, atoms, out);
            return;
        }
        let cells_per_line = (CACHE_LINE / std::mem::size_of::<T>()).max(1) as u32;
        let n_features_read = self.mark_features(rows.n_features, atoms, cells_per_line);
        let n_terms: usize = (0..atoms.len()).map(|a| atoms.get(a).indices.len()).sum();
        if n_terms >= TERMS_PER_FEATURE_FOR_COLUMNS * n_features_read {
            self.list_features(rows.n_features);
            self.project_columns(rows, row_of, samples, atoms, out);
        } else {
            self.project_rows(rows, row_of, samples, atoms, out);
        }
        self.pooled.project(rows, row_of, samples, atoms, out);
        self.rescale_missing(rows, row_of, samples, atoms, out);
    }

    /// Where `rows` are held as bits ([`Rows::bits`]) and every one of `atoms` has
    /// weights ±1, the atoms laid out to be projected by counting bits.
    pub(super) fn bit_sums<T: Feature>(
        &mut self,
        rows: &Rows<'_, T>,
        atoms: &AtomSet,
    ) -> Option<&mut BitSums> {
        let bits = rows.bits()?;
        self.bit_sums
            .prepare(atoms, bits.words_per_row())
            .then_some(&mut self.bit_sums)
    }

    /// Marks the plain atoms of more than one cell under
    /// [`MissingCells::RescaledPresent`] with some weight: for a row with a missing
    /// cell, the paths here sum, in one pass, the present terms and the present weight
    /// as [`rescaled_present_sum`] does and rescale them. Whether a cell was missing
    /// need not be known: without one the present weight is the whole (the same sum
    /// of the same terms), and the rescaling keeps the plain sum.
    fn mark_rescaled_in_pass(&mut self, atoms: &AtomSet) {
        self.rescaled_in_pass.clear();
        self.whole_weights.clear();
        for a in 0..atoms.len() {
            let atom = atoms.get(a);
            let whole = atom.weights.iter().fold(0.0f32, |whole, w| whole + w.abs());
            self.rescaled_in_pass.push(
                atom.missing == MissingCells::RescaledPresent
                    && atom.window.is_none()
                    && atom.indices.len() >= 2
                    && whole > 0.0,
            );
            self.whole_weights.push(whole);
        }
    }

    /// Replaces the missing projections the paths above summed (one missing cell makes
    /// a plain sum, and so a pooled reduction, NaN) by the value of
    /// [`MissingCells::RescaledPresent`], as `Atom::project` resolves it. Complete rows
    /// are never read again, so their values stay the plain sums bit for bit.
    fn rescale_missing<T: Feature>(
        &self,
        rows: &Rows<'_, T>,
        row_of: &[u32],
        samples: &[u32],
        atoms: &AtomSet,
        out: &mut [f32],
    ) {
        if missing_rows(rows).is_empty() {
            return;
        }
        let n = samples.len();
        for a in 0..atoms.len() {
            let atom = atoms.get(a);
            // A plain atom of one cell is missing under either rule; those marked were
            // rescaled as they were projected.
            if atom.missing == MissingCells::AnyCellMissing
                || (atom.window.is_none() && atom.indices.len() < 2)
                || self.rescaled_in_pass[a]
            {
                continue;
            }
            for (value, &sample) in out[a * n..(a + 1) * n].iter_mut().zip(samples) {
                if value.is_nan() {
                    let row = rows.row(row_of[sample as usize] as usize);
                    *value = if atom.window.is_some() {
                        atom.project(row)
                    } else {
                        rescaled_present_sum(atom.terms(row))
                    };
                }
            }
        }
    }

    /// A few samples at a time, each atom reads their rows term by term: the samples'
    /// sums are independent additions in flight together, and the loop over an atom's
    /// terms (of varying length, so a mispredicted exit) runs once per group.
    fn project_rows<T: Feature>(
        &self,
        rows: &Rows<'_, T>,
        row_of: &[u32],
        samples: &[u32],
        atoms: &AtomSet,
        out: &mut [f32],
    ) {
        let n = samples.len();
        let rows_with_missing = missing_rows(rows);
        let any_missing = !rows_with_missing.is_empty();
        let mut group_rows: [&[T]; ROW_GROUP] = [&[]; ROW_GROUP];
        for group_start in (0..n).step_by(ROW_GROUP) {
            let group = &samples[group_start..n.min(group_start + ROW_GROUP)];
            let group_has_missing = any_missing
                && group
                    .iter()
                    .any(|&sample| rows_with_missing[row_of[sample as usize] as usize]);
            for (s, &sample) in group.iter().enumerate() {
                if let Some(&ahead) = samples.get(group_start + s + ROW_GROUP) {
                    prefetch(
                        rows.row(row_of[ahead as usize] as usize),
                        &self.line_features,
                    );
                }
                group_rows[s] = rows.row(row_of[sample as usize] as usize);
            }
            // The same rows as bytes where X is bytes, for the atoms summed by runs.
            let byte_rows: [&[u8]; ROW_GROUP] =
                std::array::from_fn(|s| T::as_bytes(group_rows[s]).unwrap_or(&[]));
            if group.len() < ROW_GROUP {
                for (s, (&row, &sample)) in group_rows.iter().zip(group).enumerate() {
                    let row_has_missing =
                        any_missing && rows_with_missing[row_of[sample as usize] as usize];
                    for a in 0..atoms.len() {
                        let atom = atoms.get(a);
                        if atom.window.is_some() {
                            continue;
                        }
                        out[a * n + group_start + s] =
                            if row_has_missing && self.rescaled_in_pass[a] {
                                rescaled_row_sum(atom, self.whole_weights[a], row)
                            } else if T::MAX_WHOLE.is_some() && self.integer_sums[a] {
                                integer_sum(atom, row)
                            } else {
                                atom.project(row)
                            };
                    }
                }
                continue;
            }
            for a in 0..atoms.len() {
                let atom = atoms.get(a);
                if atom.window.is_some() {
                    continue;
                }
                let out = &mut out[a * n + group_start..][..ROW_GROUP];
                if group_has_missing && self.rescaled_in_pass[a] {
                    rescaled_group_sums(atom, self.whole_weights[a], &group_rows, out);
                    continue;
                }
                if T::MAX_WHOLE.is_some() && self.byte_runs.has_runs(a) {
                    self.byte_runs.group_sums(a, &byte_rows, out);
                    continue;
                }
                if T::MAX_WHOLE.is_some() && self.integer_sums[a] {
                    let mut sums = [0i32; ROW_GROUP];
                    for (&index, &weight) in atom.indices.iter().zip(atom.weights) {
                        let weight = weight as i32;
                        for (sum, row) in sums.iter_mut().zip(&group_rows) {
                            // SAFETY: every index is below the rows' length (checked
                            // in `project`).
                            *sum += weight * unsafe { row.get_unchecked(index as usize) }.to_i32();
                        }
                    }
                    for (value, sum) in out.iter_mut().zip(sums) {
                        *value = sum as f32;
                    }
                    continue;
                }
                let mut sums = [0.0f32; ROW_GROUP];
                for (&index, &weight) in atom.indices.iter().zip(atom.weights) {
                    for (sum, row) in sums.iter_mut().zip(&group_rows) {
                        // SAFETY: as above.
                        *sum += weight * unsafe { row.get_unchecked(index as usize) }.to_f32();
                    }
                }
                out.copy_from_slice(&sums);
            }
        }
    }

    /// Marks the atoms whose sums over values in `0..=max_whole` may be taken in
    /// integers: whole weights with `max_whole * sum |w| <= 2^24`, so that every partial
    /// sum in index order is a whole number `f32` holds exactly (and the float sum,
    /// starting from `+0.0`, is never `-0.0`).
    fn mark_integer_sums(&mut self, atoms: &AtomSet, max_whole: u32) {
        self.integer_sums.clear();
        self.integer_sums.extend((0..atoms.len()).map(|a| {
            let atom = atoms.get(a);
            if atoms.has_unit_weights(a) && atom.indices.len() < UNIT_SUMS_EXACT_BELOW {
                unit_sums_exactly_in_integers(atom.indices.len(), max_whole)
            } else {
                sums_exactly_in_integers(atom, max_whole)
            }
        }));
    }

    /// Marks the features the atoms read, lists one feature per cache line they touch
    /// (lines of `cells_per_line` cells, a power of two up to 64, from feature 0), and
    /// gives the number of distinct features read.
    fn mark_features(&mut self, n_features: usize, atoms: &AtomSet, cells_per_line: u32) -> usize {
        self.read.clear();
        self.read.resize(n_features.div_ceil(64), 0);
        for a in 0..atoms.len() {
            for &feature in atoms.get(a).indices {
                self.read[feature as usize / 64] |= 1 << (feature % 64);
            }
        }
        debug_assert!(cells_per_line.is_power_of_two() && cells_per_line <= 64);
        self.line_features.clear();
        let mut n_read = 0;
        for (word_index, &word) in self.read.iter().enumerate() {
            n_read += word.count_ones() as usize;
            // Each line's bits in turn: its first feature read, if any.
            let mut rest = word;
            while rest != 0 {
                let first = rest.trailing_zeros();
                self.line_features.push(word_index as u32 * 64 + first);
                let line_end = (first / cells_per_line + 1) * cells_per_line;
                rest = u64::MAX.checked_shl(line_end).map_or(0, |kept| rest & kept);
            }
        }
        n_read
    }
}

/// Appends the features marked in `read` (bit `f % 64` of word `f / 64` for feature
/// `f`) to `out`, ascending.
pub(super) fn list_marked(read: &[u64], out: &mut Vec<u32>) {
    for (word_index, &word) in read.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            out.push(word_index as u32 * 64 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
}

/// Whether `atom`'s sums over values in `0..=max_whole` are whole numbers that `f32`
/// holds exactly at every partial sum: whole weights with `max_whole * sum |w| <= 2^24`.
/// Its projections are then the same summed in integers, and each is a whole number
/// (never `-0.0`: the float sum starts from `+0.0`).
pub(crate) fn sums_exactly_in_integers(atom: Atom<'_>, max_whole: u32) -> bool {
    const EXACT_F32_INTEGERS: f32 = (1u32 << 24) as f32;
    let total: f32 = atom.weights.iter().map(|w| w.abs()).sum();
    atom.has_integer_weights() && total * max_whole as f32 <= EXACT_F32_INTEGERS
}

/// Below this many weights of one, their `f32` sum is their number exactly.
const UNIT_SUMS_EXACT_BELOW: usize = 1 << 24;

/// [`sums_exactly_in_integers`] for an atom of `n_cells` (below
/// [`UNIT_SUMS_EXACT_BELOW`]) weights of one, without reading them.
fn unit_sums_exactly_in_integers(n_cells: usize, max_whole: u32) -> bool {
    n_cells as f32 * max_whole as f32 <= UNIT_SUMS_EXACT_BELOW as f32
}

/// `a · x` of a plain atom with whole weights summed in integers: the same value as
/// [`Atom::project`] where every partial sum is exact (see
/// `NodeProjector::mark_integer_sums`), with additions that do not wait on each other's
/// rounding.
#[inline(always)]
fn integer_sum<T: Feature>(atom: Atom<'_>, row: &[T]) -> f32 {
    let mut sum = 0i32;
    for (&index, &weight) in atom.indices.iter().zip(atom.weights) {
        sum += weight as i32 * row[index as usize].to_i32();
    }
    sum as f32
}

/// Per row of `rows`, whether it holds a missing cell; empty where none does (whole-valued
/// X, bytes, never does), so that the paths look for missing cells only where there are.
fn missing_rows<'r, T: Feature>(rows: &'r Rows<'_, T>) -> &'r [bool] {
    if T::MAX_WHOLE.is_none() && rows.has_missing() {
        rows.rows_with_missing()
    } else {
        &[]
    }
}

/// Asks the second-level cache for the lines of `row` holding `features`. A large
/// node's rows come from memory, a dozen lines each: asked into the first level
/// (`T0`), the requests queued for its few miss buffers and the fit waited on them
/// (benches/profiles.md, "Rows prefetched into the second-level cache").
#[inline(always)]
fn prefetch<T>(row: &[T], features: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    for &feature in features {
        // SAFETY: a prefetch only hints the cache; the address is inside `row`.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
            _mm_prefetch::<_MM_HINT_T1>(row.as_ptr().add(feature as usize) as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (row, features);
}

mod column_block;
#[cfg(test)]
mod tests;
