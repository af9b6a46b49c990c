//! Pooled atoms projected a chunk of samples at a time.
//!
//! A pooled atom's value is the maximum (or minimum) of its base atom's responses at
//! every shift of its window ([`Window`]): many plain responses, whose shifted copies
//! read the same few cells. The cells the node's pooled atoms read at any shift are
//! copied once per sample into a column-major block, as the column path of
//! [`NodeProjector`](super::NodeProjector) does for plain atoms; each shifted response
//! is then one multiply-add per term across a run of samples, and the reduction over
//! the shifts one compare per sample, all of which the compiler vectorises. Every
//! sample's responses are summed term by term from 0.0 in the base atom's order, as
//! [`Atom::project`] sums them, and reduced to their maximum or minimum (missing if
//! one is), which no order of the shifts changes: the values are the same bit for bit
//! as under [`MissingCells::AnyCellMissing`](crate::atoms::MissingCells). Under
//! the rescaling rule the projector recomputes the values that came out missing.
//!
//! [`Window`]: crate::atoms::Window

use super::projection::list_marked;
use crate::atoms::{fold, start, Atom, AtomSet, MissingCells, Reduce};
use crate::data::{Feature, Rows};
use crate::scoring::has_avx2;

/// Samples copied into the block together.
const CHUNK: usize = 64;

/// Samples whose responses are summed and reduced together, in registers (a divisor
/// of `CHUNK`).
const LANE_GROUP: usize = 16;

/// Below this many samples the block does not pay for listing the cells: each sample
/// is projected on its own.
const MIN_SAMPLES: usize = 16;

/// Most distinct cells one block holds (`CHUNK` samples of 4 bytes each: 1 MiB), so
/// that it stays small on images of any size; pooled atoms are taken in groups whose
/// cells fit, and an atom whose window alone covers more is projected sample by
/// sample.
const MAX_BLOCK_CELLS: usize = 4096;

/// Projects a node's pooled atoms; holds buffers reused across nodes.
#[derive(Debug, Default)]
pub(crate) struct PooledColumns {
    /// Bit per feature of X: whether the group's shifted atoms read it.
    read: Vec<u64>,
    /// Distinct features the group reads, ascending.
    features: Vec<u32>,
    /// Per feature of X, its column in `block`; valid for the entries of `features`.
    column_of: Vec<u32>,
    /// Per atom of the group, per shift, per term: the feature read, then its column.
    shift_columns: Vec<u32>,
    /// Atoms of the current group (positions in the node's atom set).
    group: Vec<usize>,
    /// Distinct features the group reads.
    group_cells: usize,
    /// Features the atom last offered to the group reads and the group did not.
    fresh: Vec<u32>,
    block: Vec<f32>,
}

impl PooledColumns {
    /// Writes the value of every pooled atom `a` of `atoms` for every node sample `i`
    /// at `out[a * samples.len() + i]`; plain atoms' entries are left as they are.
    pub(crate) fn project<T: Feature>(
        &mut self,
        rows: &Rows<'_, T>,
        row_of: &[u32],
        samples: &[u32],
        atoms: &AtomSet,
        out: &mut [f32],
    ) {
        let pooled = (0..atoms.len()).filter(|&a| atoms.get(a).window.is_some());
        if samples.len() < MIN_SAMPLES {
            for a in pooled {
                project_each(rows, row_of, samples, atoms.get(a), a, out);
            }
            return;
        }
        self.read.clear();
        self.read.resize(rows.n_features.div_ceil(64), 0);
        self.column_of.resize(rows.n_features, 0);
        self.group.clear();
        self.shift_columns.clear();
        self.group_cells = 0;
        for a in pooled {
            let atom = atoms.get(a);
            if self.try_join(atom, a) {
                continue;
            }
            // The atom's cells do not fit beside the group's: project the group and
            // start the next with this atom, or project it alone if it never fits.
            if !self.group.is_empty() {
                self.project_group(rows, row_of, samples, atoms, out);
                if self.try_join(atom, a) {
                    continue;
                }
            }
            project_each(rows, row_of, samples, atom, a, out);
        }
        self.project_group(rows, row_of, samples, atoms, out);
    }

    /// Adds pooled atom `atom` (position `a`) to the group if the cells of all its
    /// shifts fit in the block beside the group's; otherwise leaves the group as it was.
    fn try_join(&mut self, atom: Atom<'_>, a: usize) -> bool {
        let first = self.shift_columns.len();
        atom.window
            .expect("a pooled atom")
            .push_shifted(atom.indices, &mut self.shift_columns);
        self.fresh.clear();
        for &feature in &self.shift_columns[first..] {
            let (word, bit) = (feature as usize / 64, 1u64 << (feature % 64));
            if self.read[word] & bit == 0 {
                self.read[word] |= bit;
                self.fresh.push(feature);
            }
        }
        if self.group_cells + self.fresh.len() <= MAX_BLOCK_CELLS {
            self.group.push(a);
            self.group_cells += self.fresh.len();
            return true;
        }
        for &feature in &self.fresh {
            self.read[feature as usize / 64] &= !(1u64 << (feature % 64));
        }
        self.shift_columns.truncate(first);
        false
    }

    /// Projects the atoms of `group`, whose shifted features are in `shift_columns`
    /// and marked in `read`, then empties the group.
    fn project_group<T: Feature>(
        &mut self,
        rows: &Rows<'_, T>,
        row_of: &[u32],
        samples: &[u32],
        atoms: &AtomSet,
        out: &mut [f32],
    ) {
        if self.group.is_empty() {
            return;
        }
        self.features.clear();
        list_marked(&self.read, &mut self.features);
        for (column, &feature) in self.features.iter().enumerate() {
            self.column_of[feature as usize] = column as u32;
        }
        for entry in self.shift_columns.iter_mut() {
            *entry = self.column_of[*entry as usize];
        }
        let n = samples.len();
        let avx2 = has_avx2();
        let block = &mut self.block;
        block.resize(self.features.len() * CHUNK, 0.0);
        for chunk_start in (0..n).step_by(CHUNK) {
            let chunk = &samples[chunk_start..n.min(chunk_start + CHUNK)];
            let m = chunk.len();
            for (s, &sample) in chunk.iter().enumerate() {
                let row = rows.row(row_of[sample as usize] as usize);
                for (column, &feature) in block.chunks_exact_mut(CHUNK).zip(&self.features) {
                    column[s] = row[feature as usize].to_f32();
                }
            }
            let mut columns_from = 0;
            for &a in &self.group {
                let atom = atoms.get(a);
                let window = atom.window.expect("a pooled atom");
                let n_columns = window.n_shifts() * atom.weights.len();
                let columns = &self.shift_columns[columns_from..columns_from + n_columns];
                columns_from += n_columns;
                let out = &mut out[a * n + chunk_start..][..m];
                #[cfg(target_arch = "x86_64")]
                if avx2 {
                    // SAFETY: the processor has AVX2.
                    unsafe { reduce_atom_avx2(block, columns, atom.weights, window.reduce, out) };
                    continue;
                }
                let _ = avx2;
                reduce_atom(block, columns, atom.weights, window.reduce, out);
            }
        }
        self.group.clear();
        self.group_cells = 0;
        self.shift_columns.clear();
        self.read.fill(0);
    }
}

/// Writes into `out` the reductions over the shifts of the responses of the block's
/// first `out.len()` lanes; `columns` holds, shift after shift, the block column of
/// each of the atom's terms.
#[inline(always)]
fn reduce_atom(block: &[f32], columns: &[u32], weights: &[f32], reduce: Reduce, out: &mut [f32]) {
    // Lanes past the chunk's samples reduce stale cells and are not written.
    for (lanes, out) in (0..out.len())
        .step_by(LANE_GROUP)
        .zip(out.chunks_mut(LANE_GROUP))
    {
        let best = match reduce {
            Reduce::Max => reduce_lanes::<true>(block, lanes, columns, weights),
            Reduce::Min => reduce_lanes::<false>(block, lanes, columns, weights),
        };
        out.copy_from_slice(&best[..out.len()]);
    }
}

/// [`reduce_atom`] in AVX2's wider vectors (the same operations, so the same values).
/// Callable only where the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn reduce_atom_avx2(
    block: &[f32],
    columns: &[u32],
    weights: &[f32],
    reduce: Reduce,
    out: &mut [f32],
) {
    reduce_atom(block, columns, weights, reduce, out)
}

/// The reduction (maximum if `MAX`, else minimum) over the shifts of the responses of
/// the block's lanes `lanes..lanes + LANE_GROUP`; `columns` holds, shift after shift,
/// the block column of each of the atom's terms.
#[inline(always)]
fn reduce_lanes<const MAX: bool>(
    block: &[f32],
    lanes: usize,
    columns: &[u32],
    weights: &[f32],
) -> [f32; LANE_GROUP] {
    let reduce = if MAX { Reduce::Max } else { Reduce::Min };
    let mut best = [start(reduce); LANE_GROUP];
    for shift in columns.chunks_exact(weights.len()) {
        let mut sums = [0.0f32; LANE_GROUP];
        for (&column, &weight) in shift.iter().zip(weights) {
            let cells: &[f32; LANE_GROUP] = block[column as usize * CHUNK + lanes..][..LANE_GROUP]
                .try_into()
                .expect("a lane group");
            for lane in 0..LANE_GROUP {
                sums[lane] += weight * cells[lane];
            }
        }
        for lane in 0..LANE_GROUP {
            best[lane] = fold(reduce, best[lane], sums[lane]);
        }
    }
    best
}

/// Writes atom `a`'s value for each sample, one row at a time, under the rule of any
/// missing cell as the block does.
fn project_each<T: Feature>(
    rows: &Rows<'_, T>,
    row_of: &[u32],
    samples: &[u32],
    atom: Atom<'_>,
    a: usize,
    out: &mut [f32],
) {
    let n = samples.len();
    let atom = Atom {
        missing: MissingCells::AnyCellMissing,
        ..atom
    };
    for (value, &sample) in out[a * n..(a + 1) * n].iter_mut().zip(samples) {
        *value = atom.project(rows.row(row_of[sample as usize] as usize));
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::atoms::{Window, MAX_POOL_AXES};
    use crate::rng::Rng;

    /// A base atom of up to `terms` cells of an image of `shape`, and a random window
    /// for it: any shifts shorter than the axis along wrapping axes, shifts that keep
    /// every cell inside the image along the others.
    fn pooled_atom(
        rng: &mut Rng,
        shape: &[usize],
        wrap: &[bool],
        terms: usize,
        weight: &mut impl FnMut(&mut Rng) -> f32,
        out: &mut AtomSet,
    ) {
        let n_features: usize = shape.iter().product();
        let mut pairs: Vec<(u32, f32)> = Vec::new();
        for _ in 0..terms {
            let feature = rng.below(n_features) as u32;
            if pairs.iter().all(|&(f, _)| f != feature) {
                pairs.push((feature, weight(rng)));
            }
        }
        let reduce = if rng.below(2) == 0 {
            Reduce::Max
        } else {
            Reduce::Min
        };
        let mut window = Window::unshifted(shape, wrap, reduce);
        let pad = MAX_POOL_AXES - shape.len();
        for axis in 0..shape.len() {
            let length = shape[axis] as i64;
            let stride: i64 = shape[axis + 1..].iter().map(|&d| d as i64).product();
            let (low, high) = if wrap[axis] {
                let low = rng.between(1 - length, length - 1);
                (low, rng.between(low, length - 1))
            } else {
                let positions = pairs.iter().map(|&(f, _)| f as i64 / stride % length);
                let first = positions.clone().min().unwrap();
                let last = positions.max().unwrap();
                let low = rng.between(-first, length - 1 - last);
                (low, rng.between(low, length - 1 - last))
            };
            window.low[pad + axis] = low as i32;
            window.high[pad + axis] = high as i32;
        }
        let mut plain = AtomSet::default();
        plain.clear();
        plain.push_pairs(&mut pairs);
        out.push_pooled(plain.get(0), window);
    }

    /// Checks every pooled atom's value against [`Atom::project`] under the rule of
    /// any missing cell, bit for bit.
    fn check_against_atoms<T: Feature>(rows: &Rows<'_, T>, samples: &[u32], atoms: &AtomSet) {
        let row_of: Vec<u32> = (0..rows.n_samples as u32).rev().collect();
        let n = samples.len();
        let untouched = -12345.0f32;
        let mut out = vec![untouched; atoms.len() * n];
        PooledColumns::default().project(rows, &row_of, samples, atoms, &mut out);
        for a in 0..atoms.len() {
            let atom = atoms.get(a);
            for (i, &sample) in samples.iter().enumerate() {
                let expected = match atom.window {
                    Some(_) => Atom {
                        missing: MissingCells::AnyCellMissing,
                        ..atom
                    }
                    .project(rows.row(row_of[sample as usize] as usize)),
                    None => untouched,
                };
                assert_eq!(out[a * n + i].to_bits(), expected.to_bits(), "atom {a}");
            }
        }
    }

    proptest! {
        #[test]
        fn pooled_columns_equal_atom_projections_bit_for_bit(
            shape in prop::collection::vec(1usize..8, 1..4),
            wrap_bits in 0u8..8,
            n in 1usize..150,
            n_atoms in 1usize..12,
            terms in 1usize..8,
            bytes in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let mut rng = Rng::new(seed, 0);
            let n_features: usize = shape.iter().product();
            let wrap: Vec<bool> = (0..shape.len()).map(|k| wrap_bits >> k & 1 == 1).collect();
            let mut atoms = AtomSet::default();
            atoms.clear();
            for _ in 0..n_atoms {
                if bytes {
                    let mut whole = |rng: &mut Rng| rng.between(-3, 3) as f32;
                    pooled_atom(&mut rng, &shape, &wrap, terms, &mut whole, &mut atoms);
                } else {
                    let mut fraction = |rng: &mut Rng| rng.unit() as f32 * 2.0 - 1.0;
                    pooled_atom(&mut rng, &shape, &wrap, terms, &mut fraction, &mut atoms);
                }
            }
            let samples: Vec<u32> = (0..n as u32).map(|i| (i * 7) % (n as u32 + 3)).collect();
            if bytes {
                let x = ndarray::Array2::from_shape_fn((n + 3, n_features), |_| rng.below(256) as u8);
                check_against_atoms(&Rows::from_view(x.view()).unwrap(), &samples, &atoms);
            } else {
                // Some cells missing: a response reading one is missing, and so is the
                // pooled value.
                let x = ndarray::Array2::from_shape_fn((n + 3, n_features), |_| {
                    if rng.below(50) == 0 { f32::NAN } else { rng.unit() as f32 * 8.0 - 4.0 }
                });
                check_against_atoms(&Rows::from_view(x.view()).unwrap(), &samples, &atoms);
            }
        }
    }

    #[test]
    fn atoms_whose_cells_overflow_the_block_are_grouped_or_projected_alone() {
        // A signal of 10,000 samples: windows of 1,500 shifts fill the block in groups
        // of two, a window over the whole signal exceeds it alone.
        let n_features = 10_000;
        let mut rng = Rng::new(7, 0);
        let x = ndarray::Array2::from_shape_fn((40, n_features), |_| rng.unit() as f32);
        let rows = Rows::from_view(x.view()).unwrap();
        let mut atoms = AtomSet::default();
        atoms.clear();
        for (first, shifts, reduce) in [
            (0, 1_500, Reduce::Max),
            (3_000, 1_500, Reduce::Min),
            (0, 9_990, Reduce::Max),
            (6_000, 1_500, Reduce::Max),
            (8_000, 1_500, Reduce::Min),
        ] {
            let mut window = Window::unshifted(&[n_features], &[false], reduce);
            window.high[MAX_POOL_AXES - 1] = shifts - 1;
            let mut plain = AtomSet::default();
            plain.clear();
            plain.push_pairs(&mut [(first, 1.0), (first + 2, -0.5), (first + 9, 0.25)]);
            atoms.push_pooled(plain.get(0), window);
        }
        // A plain atom between the pooled ones keeps its entry.
        atoms.push_pairs(&mut [(5, 1.0)]);
        let samples: Vec<u32> = (0..40).collect();
        check_against_atoms(&rows, &samples, &atoms);
    }
}
