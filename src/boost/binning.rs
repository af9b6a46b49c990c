//! How are projections bucketed? Each round draws its atoms, projects every sample of
//! the round on each, and puts each projection in one of at most 256 bins whose edges
//! are quantiles of a sample of the projections.
//!
//! A bin edge is a value threshold: a projection `z` lands in bin `b` exactly when
//! `edge[b - 1] < z <= edge[b]`. So "bin <= b" and "z <= edge[b]" select the same
//! samples, and a split found on bins is stored as the threshold `edge[b]` that scoring
//! compares the same `f32` projection with: training and scoring agree on every row.
//!
//! Where the edge sample shows an atom at most `max_bins` distinct values, each value
//! gets a bin of its own, and a histogram scan is then an exact scan: it tries every
//! threshold between distinct values, as sorting or counting the values would. That
//! holds for every atom of a round of at most 8,192 samples (the edge sample is then
//! every sample) whose projections take at most `max_bins` values: whole-valued X
//! (pixels, counts) on single features or small integer-weighted patches, say.
//!
//! When X holds missing values (NaN), a projection touching one is missing, and every
//! atom gets one more bin, after its present values' bins, for the missing projections
//! (its present values then have at most 255 bins). Edges come from the present values.

use rayon::prelude::*;

use super::edges::{quantile_edges, runs_by_counting, runs_of_sorted_keys, span};
use super::histogram::SLOT;
use crate::atoms::{Atom, AtomSet};
use crate::data::{Feature, Rows};
use crate::rng::Rng;
use crate::split::{sort_by_value, sort_key, sums_exactly_in_integers, NodeProjector};

/// Edges an atom can have: one fewer than the most bins a `u8` can name.
pub(super) const MAX_EDGES: usize = 255;

/// Samples whose projections set the bin edges: enough for 32 per bin on average.
const EDGE_SAMPLE: usize = 8192;

/// The fewest atoms binned by one parallel task, each task reading every sample once.
const MIN_ATOMS_PER_TASK: usize = 16;

/// Longest table of the bins of whole-valued projections (bytes, one per value).
const MAX_TABLE: usize = 1 << 16;

/// Whole-valued projections are counted rather than sorted to set the edges when
/// their range spans at most this many values per edge sample.
const COUNTED_SPAN_PER_SAMPLE: usize = 2;

/// Samples projected together before their values are binned.
const BLOCK: usize = 256;

/// Atoms whose bins are stored side by side: a position's bins for a group of atoms
/// are one 16-byte word, so that summing the group's histograms over a node reads one
/// word per sample rather than a byte from each of 16 columns (a cache line each where
/// the node's samples are sparse). Measured on Fashion-MNIST 60,000 (2 rounds, in
/// turns): 8 atoms 4.32/4.48 s, 16 atoms 3.83/3.93 s, 32 atoms 3.65/3.95 s; 16 keeps a
/// round's 400 atoms in 25 parallel tasks and a group's histograms (48 KB) near L1.
pub(crate) const GROUP: usize = 16;

/// The atoms of one round and, per atom, the bin of every sample of the round.
#[derive(Debug, Default)]
pub(crate) struct BinnedAtoms {
    /// The round's atoms.
    pub atoms: AtomSet,
    /// Samples binned (positions `0..n_positions`).
    n_positions: usize,
    /// Per atom, `MAX_EDGES` ascending edges, padded with infinity.
    edges: Vec<f32>,
    /// Per atom, the number of bins in use (edges + 1, and the missing bin).
    n_bins: Vec<u16>,
    /// Whether each atom's last bin holds the missing projections.
    missing: bool,
    /// Buffers of each parallel task, kept from round to round: a round's projections
    /// are megabytes, which a fresh allocation would have the system clear each round.
    scratch: Vec<BinScratch>,
    /// Per atom, the number of positions in each bin.
    counts: Vec<[u32; SLOT]>,
    /// Per group of [`GROUP`] atoms, the bins of each position:
    /// `bins[group * n_positions + position][lane]` for atom `group * GROUP + lane`
    /// (lanes past the last atom hold 0).
    bins: Vec<[u8; GROUP]>,
}

/// What one parallel task of binning reuses.
#[derive(Debug, Default)]
struct BinScratch {
    projector: NodeProjector,
    /// Projections of the edge sample, atom after atom.
    values: Vec<f32>,
    /// Positions outside the edge sample projected together, and their projections.
    block: Vec<u32>,
    block_values: Vec<f32>,
    /// Sort keys of one atom's projections on the edge sample, and the sort's buffer.
    keys: Vec<u64>,
    sort_buffer: Vec<u64>,
    /// Per whole number of an atom's range, its count in the edge sample.
    counts: Vec<u32>,
    /// One atom's distinct projections on the edge sample, ascending, with counts.
    runs: Vec<(f32, u32)>,
    /// Per atom whose projections are whole numbers in a range no longer than the
    /// round: the bin of each whole number in it, as `(lowest, start, length)` into
    /// `tables`, so that binning a projection is one look-up, not a search.
    tables: Vec<u8>,
    table_of: Vec<Option<(i32, usize, usize)>>,
}

impl BinnedAtoms {
    /// Projects the samples at `row_of` (positions to rows of `rows`) on `atoms` and
    /// bins them, with at most `max_bins` bins per atom; `rng` draws the sample that
    /// sets the edges. With `missing` (X may hold NaN), each atom's last bin holds its
    /// missing projections. Parallel over atoms on the current thread pool; the result
    /// does not depend on the number of threads.
    pub fn bin<T: Feature>(
        &mut self,
        rows: &Rows<'_, T>,
        row_of: &[u32],
        atoms: AtomSet,
        max_bins: usize,
        missing: bool,
        rng: &mut Rng,
    ) {
        let m = row_of.len();
        let n_atoms = atoms.len();
        self.atoms = atoms;
        self.n_positions = m;
        self.missing = missing;
        // The missing bin takes the last slot a `u8` can name.
        let max_bins = if missing {
            max_bins.min(MAX_EDGES)
        } else {
            max_bins
        };
        self.edges.clear();
        self.edges.resize(n_atoms * MAX_EDGES, f32::INFINITY);
        self.n_bins.clear();
        self.n_bins.resize(n_atoms, 1);
        self.bins.clear();
        self.bins.resize(n_atoms.div_ceil(GROUP) * m, [0; GROUP]);
        self.counts.clear();
        self.counts.resize(n_atoms, [0; SLOT]);

        let mut edge_sample: Vec<u32> = (0..m as u32).collect();
        if m > EDGE_SAMPLE {
            rng.choose_into_prefix(&mut edge_sample, EDGE_SAMPLE);
            edge_sample.truncate(EDGE_SAMPLE);
            edge_sample.sort_unstable(); // rows in order read memory forwards
        }
        let atoms = &self.atoms;
        // As few tasks as threads: a task projecting more atoms shares each row read
        // among more terms (NodeProjector's column path), and the projections, so the
        // model, do not depend on how atoms are grouped.
        let atoms_per_task = n_atoms
            .div_ceil(rayon::current_num_threads())
            .max(MIN_ATOMS_PER_TASK)
            .next_multiple_of(GROUP);
        self.scratch
            .resize_with(n_atoms.div_ceil(atoms_per_task), BinScratch::default);
        self.edges
            .par_chunks_mut(atoms_per_task * MAX_EDGES)
            .zip(self.n_bins.par_chunks_mut(atoms_per_task))
            .zip(self.bins.par_chunks_mut(atoms_per_task / GROUP * m.max(1)))
            .zip(self.counts.par_chunks_mut(atoms_per_task))
            .zip(self.scratch.par_iter_mut())
            .enumerate()
            .for_each(|(task, ((((edges, n_bins), bins), bin_counts), scratch))| {
                let BinScratch {
                    projector,
                    values,
                    block,
                    block_values,
                    keys,
                    sort_buffer,
                    counts,
                    runs,
                    tables,
                    table_of,
                } = scratch;
                let first = task * atoms_per_task;
                let mut group = AtomSet::default();
                group.clear();
                for a in first..(first + atoms_per_task).min(n_atoms) {
                    group.push(atoms.get(a));
                }
                projector.project(rows, row_of, &edge_sample, &group, values);
                let s = edge_sample.len();
                tables.clear();
                table_of.clear();
                for (a, (edges, n_bins)) in edges
                    .chunks_exact_mut(MAX_EDGES)
                    .zip(n_bins.iter_mut())
                    .enumerate()
                {
                    let atom_values = &values[a * s..(a + 1) * s];
                    let range = whole_range::<T>(group.get(a))
                        .filter(|&(low, high)| !missing && span(low, high) < m.min(MAX_TABLE));
                    let counted = range.is_some_and(|(low, high)| {
                        span(low, high) <= COUNTED_SPAN_PER_SAMPLE * s
                            && runs_by_counting(atom_values, low, high, counts, runs)
                    });
                    if !counted {
                        keys.clear();
                        keys.extend(
                            atom_values
                                .iter()
                                .filter(|v| !v.is_nan())
                                .map(|&v| (sort_key(v) as u64) << 32),
                        );
                        sort_by_value(keys, sort_buffer);
                        runs_of_sorted_keys(keys, runs);
                    }
                    let n_edges = quantile_edges(runs, max_bins, edges);
                    *n_bins = n_edges as u16 + 1 + u16::from(missing);
                    table_of.push(range.map(|(low, high)| {
                        let start = tables.len();
                        let edges: &[f32; MAX_EDGES] =
                            (&*edges).try_into().expect("one atom's edges");
                        bins_of_whole_values(edges, low, high, tables);
                        (low, start, tables.len() - start)
                    }));
                }
                // Bins the projections `values` of the positions `block`, atom after
                // atom `block.len()` values each.
                let mut bin_block = |block: &[u32], values: &[f32]| {
                    let len = block.len();
                    for (a, (edges, &n_bins)) in
                        edges.chunks_exact(MAX_EDGES).zip(n_bins.iter()).enumerate()
                    {
                        let edges: &[f32; MAX_EDGES] = edges.try_into().expect("one atom's edges");
                        let out = &mut bins[a / GROUP * m..][..m];
                        let lane = a % GROUP;
                        let values = block.iter().zip(&values[a * len..(a + 1) * len]);
                        if missing {
                            let missing_bin = (n_bins - 1) as u8;
                            for (&p, &value) in values {
                                out[p as usize][lane] = if value.is_nan() {
                                    missing_bin
                                } else {
                                    bin_of(edges, value)
                                };
                            }
                        } else if let Some((low, start, len)) = table_of[a] {
                            let table = &tables[start..start + len];
                            for (&p, &value) in values {
                                debug_assert_eq!(value, value.trunc());
                                let index = (value as i32).wrapping_sub(low) as usize;
                                out[p as usize][lane] = table
                                    .get(index)
                                    .copied()
                                    .unwrap_or_else(|| bin_of(edges, value));
                            }
                        } else {
                            for (&p, &value) in values {
                                out[p as usize][lane] = bin_of(edges, value);
                            }
                        }
                    }
                };
                // The edge sample's projections are at hand (costly to redo for pooled
                // atoms); the other positions are projected a block at a time.
                bin_block(&edge_sample, values);
                let mut edge_positions = edge_sample.iter().copied().peekable();
                let mut positions =
                    (0..m as u32).filter(|&p| edge_positions.next_if_eq(&p).is_none());
                loop {
                    block.clear();
                    block.extend(positions.by_ref().take(BLOCK));
                    if block.is_empty() {
                        break;
                    }
                    projector.project(rows, row_of, block, &group, block_values);
                    bin_block(block, block_values);
                }
                // Each group's atoms counted together, a word at a time.
                for (words, bin_counts) in bins.chunks(m.max(1)).zip(bin_counts.chunks_mut(GROUP)) {
                    for word in words {
                        for (bin_counts, &bin) in bin_counts.iter_mut().zip(word) {
                            bin_counts[bin as usize] += 1;
                        }
                    }
                }
            });
    }

    /// Number of atoms.
    pub fn n_atoms(&self) -> usize {
        self.n_bins.len()
    }

    /// Bins in use by `atom`.
    pub fn n_bins(&self, atom: usize) -> usize {
        self.n_bins[atom] as usize
    }

    /// The bin of `atom`'s missing projections, when X may hold missing values.
    pub fn missing_bin(&self, atom: usize) -> Option<usize> {
        self.missing.then(|| self.n_bins(atom) - 1)
    }

    /// The bins of every position for the atoms of group `group` (atoms
    /// `group * GROUP..`), a word per position.
    pub fn group(&self, group: usize) -> &[[u8; GROUP]] {
        &self.bins[group * self.n_positions..(group + 1) * self.n_positions]
    }

    /// The number of positions in each bin of the atoms of group `group` (atoms
    /// `group * GROUP..`), atom after atom.
    pub fn counts(&self, group: usize) -> &[[u32; SLOT]] {
        let first = group * GROUP;
        &self.counts[first..(first + GROUP).min(self.counts.len())]
    }

    /// The bin of `position` for `atom`.
    #[inline(always)]
    pub fn bin_at(&self, atom: usize, position: usize) -> u8 {
        self.group(atom / GROUP)[position][atom % GROUP]
    }

    /// The value threshold equivalent to "bin <= `bin`" among present projections
    /// for `atom`; `bin` must be below the atom's last bin. Below the missing bin, the
    /// last present bin takes every present value: `f32::MAX`, as the forests' split
    /// of present from missing values.
    pub fn threshold(&self, atom: usize, bin: usize) -> f32 {
        debug_assert!(bin + 1 < self.n_bins(atom));
        if self.missing_bin(atom) == Some(bin + 1) {
            return f32::MAX;
        }
        self.edges[atom * MAX_EDGES + bin]
    }
}

/// The bin of `value`: the number of edges below it.
#[inline(always)]
pub(super) fn bin_of(edges: &[f32; MAX_EDGES], value: f32) -> u8 {
    // Branch-free binary search over 255 slots: eight steps, each a conditional add.
    let mut position = 0usize;
    for step in [128, 64, 32, 16, 8, 4, 2, 1] {
        position += step * usize::from(edges[position + step - 1] < value);
    }
    position as u8
}

/// The lowest and highest projection on `atom` where X holds whole numbers
/// ([`Feature::MAX_WHOLE`]) and every projection is then a whole number computed
/// exactly; `None` otherwise (pooled atoms included).
fn whole_range<T: Feature>(atom: Atom<'_>) -> Option<(i32, i32)> {
    let max_whole = T::MAX_WHOLE?;
    if atom.window.is_some() || !sums_exactly_in_integers(atom, max_whole) {
        return None;
    }
    // Whole weights, and every sum within 2^24: the bounds fit i32.
    let (mut low, mut high) = (0i32, 0i32);
    for &weight in atom.weights {
        let extreme = weight as i32 * max_whole as i32;
        low += extreme.min(0);
        high += extreme.max(0);
    }
    Some((low, high))
}

/// Appends to `table` the bin of each whole number from `low` to `high`: the number of
/// `edges` (ascending) below it, as [`bin_of`] finds it, in one walk along the edges.
fn bins_of_whole_values(edges: &[f32; MAX_EDGES], low: i32, high: i32, table: &mut Vec<u8>) {
    let mut bin = 0;
    for value in low..=high {
        let value = value as f32;
        while bin < MAX_EDGES && edges[bin] < value {
            bin += 1;
        }
        table.push(bin as u8);
    }
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;
    use proptest::prelude::*;

    use super::*;
    use crate::rng::Rng;

    #[test]
    fn tables_of_whole_values_give_the_bins_the_search_gives() {
        // Edges on whole numbers too, where "below" must stay strict.
        let mut edges = [f32::INFINITY; MAX_EDGES];
        edges[..4].copy_from_slice(&[-3.0, 0.0, 2.5, 7.0]);
        let mut table = Vec::new();
        bins_of_whole_values(&edges, -5, 9, &mut table);
        let searched: Vec<u8> = (-5..=9).map(|v| bin_of(&edges, v as f32)).collect();
        assert_eq!(table, searched);
    }

    #[test]
    fn positions_outside_the_edge_sample_are_binned_as_those_inside() {
        // More samples than the edge sample: its positions are binned from the
        // projections that set the edges, the others projected a block at a time.
        let n = EDGE_SAMPLE + 1_500;
        let mut rng = Rng::new(7, 0);
        let x = Array2::from_shape_fn((n + 10, 4), |_| rng.unit() as f32 * 8.0 - 4.0);
        let rows = Rows::from_view(x.view()).unwrap();
        let row_of: Vec<u32> = (0..n as u32)
            .map(|p| (p * 13 + 5) % (n as u32 + 10))
            .collect();
        let mut atoms = AtomSet::default();
        atoms.clear();
        for a in 0..3u32 {
            atoms.push_pairs(&mut [(a, 1.0), (a + 1, -0.75)]);
        }
        let mut binned = BinnedAtoms::default();
        binned.bin(
            &rows,
            &row_of,
            atoms.clone(),
            64,
            false,
            &mut Rng::new(7, 1),
        );
        for a in 0..atoms.len() {
            let edges: &[f32; MAX_EDGES] = binned.edges[a * MAX_EDGES..][..MAX_EDGES]
                .try_into()
                .unwrap();
            for (p, &row) in row_of.iter().enumerate() {
                let z = atoms.get(a).project(rows.row(row as usize));
                assert_eq!(
                    binned.bin_at(a, p),
                    bin_of(edges, z),
                    "atom {a} position {p}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn byte_rows_bin_as_the_same_float_rows_do(
            n in 1usize..300,
            n_atoms in 1usize..40,
            max_bins in 2usize..=256,
            seed in any::<u64>(),
        ) {
            // Whole weights from -3 to 3 (whole projections: bins from a table) and
            // halves (searched), on pixels from 0 to 255.
            let mut rng = Rng::new(seed, 0);
            let x = Array2::from_shape_fn((n, 6), |_| rng.below(256) as f32);
            let bytes = x.mapv(|v| v as u8);
            let mut atoms = AtomSet::default();
            atoms.clear();
            for a in 0..n_atoms {
                let weight = |rng: &mut Rng| rng.below(7) as f32 - 3.0 + if a % 5 == 4 { 0.5 } else { 0.0 };
                let mut pairs = [((a % 6) as u32, weight(&mut rng)), (((a + 1) % 6) as u32, weight(&mut rng))];
                atoms.push_pairs(&mut pairs[..1 + a % 2]);
            }
            let row_of: Vec<u32> = (0..n as u32).collect();
            let (mut from_floats, mut from_bytes) = (BinnedAtoms::default(), BinnedAtoms::default());
            let rows = Rows::from_view(x.view()).unwrap();
            from_floats.bin(&rows, &row_of, atoms.clone(), max_bins, false, &mut Rng::new(seed, 1));
            let rows = Rows::from_view(bytes.view()).unwrap();
            from_bytes.bin(&rows, &row_of, atoms.clone(), max_bins, false, &mut Rng::new(seed, 1));
            for a in 0..n_atoms {
                prop_assert_eq!(from_bytes.n_bins(a), from_floats.n_bins(a));
                for p in 0..n {
                    prop_assert_eq!(from_bytes.bin_at(a, p), from_floats.bin_at(a, p), "atom {} position {}", a, p);
                }
            }
        }

        #[test]
        fn bins_order_projections_as_their_thresholds_do(
            n in 1usize..400,
            n_atoms in 1usize..40,
            max_bins in 2usize..=256,
            whole in any::<bool>(),
            missing in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let mut rng = Rng::new(seed, 0);
            let x = Array2::from_shape_fn((n + 3, 5), |_| {
                let v = rng.unit() as f32 * 20.0 - 10.0;
                let v = if whole { v.round() } else { v };
                if missing && rng.below(8) == 0 { f32::NAN } else { v }
            });
            let rows = Rows::from_view(x.view()).unwrap();
            let row_of: Vec<u32> = (0..n as u32).map(|i| (i * 7 + 1) % (n as u32 + 3)).collect();
            let mut atoms = AtomSet::default();
            atoms.clear();
            for a in 0..n_atoms {
                atoms.push_pairs(&mut [((a % 5) as u32, 1.0), (((a + 2) % 5) as u32, -0.5)]);
            }
            let mut binned = BinnedAtoms::default();
            binned.bin(&rows, &row_of, atoms.clone(), max_bins, missing, &mut Rng::new(seed, 1));
            prop_assert_eq!(binned.n_atoms(), n_atoms);
            // With missing values, at most 255 bins for present values and one more.
            let most = if missing { max_bins.min(255) + 1 } else { max_bins };
            for a in 0..n_atoms {
                let n_bins = binned.n_bins(a);
                prop_assert!((1..=most).contains(&n_bins));
                let missing_bin = binned.missing_bin(a);
                prop_assert_eq!(missing_bin, missing.then(|| n_bins - 1));
                let present_bins = n_bins - usize::from(missing);
                let column: Vec<u8> = (0..n).map(|p| binned.bin_at(a, p)).collect();
                let counts = &binned.counts(a / GROUP)[a % GROUP];
                for (bin, &count) in counts.iter().enumerate() {
                    let in_bin = column.iter().filter(|&&b| b as usize == bin).count();
                    prop_assert_eq!(count as usize, in_bin, "atom {} bin {}", a, bin);
                }
                let z: Vec<f32> = row_of.iter().map(|&row| atoms.get(a).project(rows.row(row as usize))).collect();
                for (p, &z) in z.iter().enumerate() {
                    if z.is_nan() {
                        prop_assert_eq!(Some(column[p] as usize), missing_bin);
                        continue;
                    }
                    prop_assert!((column[p] as usize) < present_bins);
                    for b in 0..n_bins - 1 {
                        prop_assert_eq!(column[p] as usize <= b, z <= binned.threshold(a, b));
                    }
                }
                // Few distinct values: a bin each, so that the bins are exact.
                let mut distinct: Vec<f32> = z.iter().copied().filter(|z| !z.is_nan()).collect();
                distinct.sort_by(f32::total_cmp);
                distinct.dedup();
                if distinct.len() < most {
                    let present: Vec<usize> = (0..n).filter(|&p| !z[p].is_nan()).collect();
                    for &p in &present {
                        for &q in &present {
                            prop_assert_eq!(column[p] == column[q], z[p] == z[q]);
                        }
                    }
                }
            }
        }
    }
}
