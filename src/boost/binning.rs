//! How are projections bucketed? Each round draws its atoms, projects every sample of
//! the round on each, and puts each projection in one of at most 256 bins whose edges
//! are quantiles of a sample of the projections.
//!
//! A bin edge is a value threshold: a projection `z` lands in bin `b` exactly when
//! `edge[b - 1] < z <= edge[b]`. So `bin <= b` and `z <= edge[b]` select the same
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

use std::ops::Range;
use std::sync::Mutex;

use rayon::prelude::*;

use super::edges::{place_edges, span, EdgeScratch};
use super::histogram::SLOT;
use crate::atoms::{Atom, AtomSet};
use crate::data::{Feature, Rows};
use crate::rng::Rng;
use crate::split::{sums_exactly_in_integers, NodeProjector};

/// Edges an atom can have: one fewer than the most bins a `u8` can name.
pub(super) const MAX_EDGES: usize = 255;

/// Samples whose projections set the bin edges: enough for 32 per bin on average.
const EDGE_SAMPLE: usize = 8192;

/// Samples of the edge sample projected by one parallel task.
const EDGE_TASK_ROWS: usize = 512;

/// Positions binned by one parallel task. Every task projects its rows on all the
/// round's atoms, so that each row is read and its features gathered once, whatever
/// the number of threads (tasks of a share of the atoms each read every row, and cost
/// a third more CPU from two threads on).
const TASK_ROWS: usize = 2048;

/// Longest table of the bins of whole-valued projections (bytes, one per value).
const MAX_TABLE: usize = 1 << 16;

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
    /// Per atom, the bins of its whole-valued projections where it has a table.
    tables: Vec<WholeBins>,
    /// Whether each atom's last bin holds the missing projections.
    missing: bool,
    /// The projections of the edge sample, a share of [`EDGE_TASK_ROWS`] samples
    /// after another, each atom after atom.
    edge_shares: Vec<Vec<f32>>,
    /// Buffers of the parallel tasks, kept from round to round: a round's projections
    /// are megabytes, which a fresh allocation would have the system clear each round.
    /// Tasks projecting rows take one from the pool and put it back, so that there are
    /// as many as tasks ran at once, not as many as tasks.
    row_scratch: Mutex<Vec<RowScratch>>,
    edge_scratch: Vec<EdgeScratch>,
    /// Per atom, the number of positions in each bin.
    counts: Vec<[u32; SLOT]>,
    /// Per group of [`GROUP`] atoms, the bins of each position:
    /// `bins[group * n_positions + position][lane]` for atom `group * GROUP + lane`
    /// (lanes past the last atom hold 0).
    bins: Vec<[u8; GROUP]>,
}

/// What a task projecting rows reuses.
#[derive(Debug, Default)]
struct RowScratch {
    projector: NodeProjector,
    /// Positions outside the edge sample projected together, and their projections.
    block: Vec<u32>,
    block_values: Vec<f32>,
}

/// For an atom whose projections are whole numbers in a range no longer than the round:
/// the bin of each whole number from `low` on, so that binning a projection is one
/// look-up, not a search.
#[derive(Debug, Default)]
struct WholeBins {
    low: Option<i32>,
    bins: Vec<u8>,
}

/// The edges of every atom of a round, read by the tasks that bin positions.
struct AtomEdges<'a> {
    edges: &'a [f32],
    n_bins: &'a [u16],
    tables: &'a [WholeBins],
    missing: bool,
}

/// The edge sample's projections, as the tasks that projected them left them.
struct EdgeShares<'a> {
    /// Per share of [`EDGE_TASK_ROWS`] samples, its projections atom after atom.
    shares: &'a [Vec<f32>],
    n_samples: usize,
}

impl EdgeShares<'_> {
    /// The shares the edge samples `samples` fall in, with the samples of each.
    fn pieces(&self, samples: Range<usize>) -> impl Iterator<Item = (usize, Range<usize>)> {
        let n_samples = self.n_samples;
        (samples.start / EDGE_TASK_ROWS..self.shares.len())
            .map(move |share| {
                let share_start = share * EDGE_TASK_ROWS;
                let share_end = (share_start + EDGE_TASK_ROWS).min(n_samples);
                (
                    share,
                    samples.start.max(share_start)..samples.end.min(share_end),
                )
            })
            .take_while(|(_, piece)| piece.start < piece.end)
    }

    /// Atom `atom`'s projections of the edge samples `piece`, all in share `share`.
    fn values(&self, atom: usize, share: usize, piece: Range<usize>) -> &[f32] {
        let share_start = share * EDGE_TASK_ROWS;
        let len = EDGE_TASK_ROWS.min(self.n_samples - share_start);
        let values = &self.shares[share][atom * len..(atom + 1) * len];
        &values[piece.start - share_start..piece.end - share_start]
    }
}

impl BinnedAtoms {
    /// Projects the samples at `row_of` (positions to rows of `rows`) on `atoms` and
    /// bins them, with at most `max_bins` bins per atom; `rng` draws the sample that
    /// sets the edges. With `missing` (X may hold NaN), each atom's last bin holds its
    /// missing projections. Parallel over blocks of rows and groups of atoms on the
    /// current thread pool; neither the result nor the work depends on the number of
    /// threads.
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
        let n_groups = n_atoms.div_ceil(GROUP);
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
        self.tables.resize_with(n_atoms, WholeBins::default);
        self.bins.clear();
        self.bins.resize(n_groups * m, [0; GROUP]);
        self.counts.clear();
        self.counts.resize(n_atoms, [0; SLOT]);

        let mut edge_sample: Vec<u32> = (0..m as u32).collect();
        if m > EDGE_SAMPLE {
            rng.choose_into_prefix(&mut edge_sample, EDGE_SAMPLE);
            edge_sample.truncate(EDGE_SAMPLE);
            edge_sample.sort_unstable(); // rows in order read memory forwards
        }
        let s = edge_sample.len();
        let n_row_tasks = m.div_ceil(TASK_ROWS);
        let n_edge_tasks = s.div_ceil(EDGE_TASK_ROWS);
        if self.edge_shares.len() < n_edge_tasks {
            self.edge_shares.resize_with(n_edge_tasks, Vec::new);
        }
        if self.edge_scratch.len() < n_groups {
            self.edge_scratch
                .resize_with(n_groups, EdgeScratch::default);
        }
        let atoms = &self.atoms;

        // The edge sample's projections, a share of its samples per task.
        let row_scratch = &self.row_scratch;
        let with_scratch = |task: &mut dyn FnMut(&mut RowScratch)| {
            let mut scratch = row_scratch
                .lock()
                .expect("no panics")
                .pop()
                .unwrap_or_default();
            task(&mut scratch);
            row_scratch.lock().expect("no panics").push(scratch);
        };
        self.edge_shares[..n_edge_tasks]
            .par_iter_mut()
            .zip(edge_sample.par_chunks(EDGE_TASK_ROWS))
            .for_each(|(share, samples)| {
                with_scratch(&mut |scratch| {
                    scratch
                        .projector
                        .project(rows, row_of, samples, atoms, share);
                });
            });
        let edge_shares = EdgeShares {
            shares: &self.edge_shares[..n_edge_tasks],
            n_samples: s,
        };

        self.edges
            .par_chunks_mut(GROUP * MAX_EDGES)
            .zip(self.n_bins.par_chunks_mut(GROUP))
            .zip(self.tables.par_chunks_mut(GROUP))
            .zip(self.edge_scratch.par_iter_mut())
            .enumerate()
            .for_each(|(group, (((edges, n_bins), tables), scratch))| {
                let lanes = edges
                    .chunks_exact_mut(MAX_EDGES)
                    .zip(n_bins)
                    .zip(tables)
                    .enumerate();
                for (lane, ((edges, n_bins), table)) in lanes {
                    let a = group * GROUP + lane;
                    let range = whole_range::<T>(atoms.get(a))
                        .filter(|&(low, high)| !missing && span(low, high) < m.min(MAX_TABLE));
                    let edges: &mut [f32; MAX_EDGES] = edges.try_into().expect("one atom's edges");
                    scratch.values.clear();
                    for (share, piece) in edge_shares.pieces(0..s) {
                        let values = edge_shares.values(a, share, piece);
                        scratch.values.extend_from_slice(values);
                    }
                    let n_edges = place_edges(range, max_bins, edges, scratch);
                    *n_bins = n_edges as u16 + 1 + u16::from(missing);
                    table.low = range.map(|(low, _)| low);
                    table.bins.clear();
                    if let Some((low, high)) = range {
                        bins_of_whole_values(edges, low, high, &mut table.bins);
                    }
                }
            });

        // Every position's bins, a block of rows per task: the edge sample's from the
        // projections that set the edges, the others projected a block at a time.
        let mut task_bins: Vec<Vec<&mut [[u8; GROUP]]>> = (0..n_row_tasks)
            .map(|_| Vec::with_capacity(n_groups))
            .collect();
        for plane in self.bins.chunks_mut(m.max(1)) {
            for (task, share) in task_bins.iter_mut().zip(plane.chunks_mut(TASK_ROWS)) {
                task.push(share);
            }
        }
        let atom_edges = AtomEdges {
            edges: &self.edges,
            n_bins: &self.n_bins,
            tables: &self.tables,
            missing,
        };
        task_bins
            .into_par_iter()
            .enumerate()
            .for_each(|(task, mut out)| {
                with_scratch(&mut |scratch| {
                    let start = task * TASK_ROWS;
                    let end = (start + TASK_ROWS).min(m);
                    let first = edge_sample.partition_point(|&p| (p as usize) < start);
                    let last = edge_sample.partition_point(|&p| (p as usize) < end);
                    let sampled = &edge_sample[first..last];
                    for (share, piece) in edge_shares.pieces(first..last) {
                        atom_edges.write(&mut out, start, &edge_sample[piece.clone()], |a| {
                            edge_shares.values(a, share, piece.clone())
                        });
                    }
                    let mut in_sample = sampled.iter().copied().peekable();
                    let mut positions =
                        (start as u32..end as u32).filter(|&p| in_sample.next_if_eq(&p).is_none());
                    let RowScratch {
                        projector,
                        block,
                        block_values,
                        ..
                    } = scratch;
                    loop {
                        block.clear();
                        block.extend(positions.by_ref().take(BLOCK));
                        if block.is_empty() {
                            break;
                        }
                        projector.project(rows, row_of, block, atoms, block_values);
                        let len = block.len();
                        atom_edges.write(&mut out, start, block, |a| {
                            &block_values[a * len..(a + 1) * len]
                        });
                    }
                });
            });

        // Each group's atoms counted together, a word at a time.
        self.bins
            .par_chunks(m.max(1))
            .zip(self.counts.par_chunks_mut(GROUP))
            .for_each(|(words, bin_counts)| {
                for word in words {
                    for (bin_counts, &bin) in bin_counts.iter_mut().zip(word) {
                        bin_counts[bin as usize] += 1;
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

impl AtomEdges<'_> {
    /// Writes the bins of `positions` (ascending, from `start` on) into `out`, the
    /// shares of each group's bins from position `start`; `values(a)` gives atom `a`'s
    /// projections of `positions`.
    fn write<'v>(
        &self,
        out: &mut [&mut [[u8; GROUP]]],
        start: usize,
        positions: &[u32],
        values: impl Fn(usize) -> &'v [f32],
    ) {
        for (a, (edges, &n_bins)) in self
            .edges
            .chunks_exact(MAX_EDGES)
            .zip(self.n_bins)
            .enumerate()
        {
            let edges: &[f32; MAX_EDGES] = edges.try_into().expect("one atom's edges");
            let out = &mut *out[a / GROUP];
            let lane = a % GROUP;
            let values = positions.iter().zip(values(a));
            let table = &self.tables[a];
            if self.missing {
                let missing_bin = (n_bins - 1) as u8;
                for (&p, &value) in values {
                    out[p as usize - start][lane] = if value.is_nan() {
                        missing_bin
                    } else {
                        bin_of(edges, value)
                    };
                }
            } else if let Some(low) = table.low {
                for (&p, &value) in values {
                    debug_assert_eq!(value, value.trunc());
                    let index = (value as i32).wrapping_sub(low) as usize;
                    out[p as usize - start][lane] = table
                        .bins
                        .get(index)
                        .copied()
                        .unwrap_or_else(|| bin_of(edges, value));
                }
            } else {
                for (&p, &value) in values {
                    out[p as usize - start][lane] = bin_of(edges, value);
                }
            }
        }
    }
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
mod tests;
