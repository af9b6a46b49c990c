//! The buffers and rows of the blocks that contributions are computed for.

use std::sync::{Mutex, PoisonError};

use super::lanes::{Lanes, BLOCK_ROWS};
use super::share::BlockShares;
use super::treeshap::Scratch;
use crate::data::{Feature, Rows};
use crate::error::{try_filled, Result};

/// The buffers of one chunk of rows at a time.
#[derive(Default)]
pub(super) struct BlockScratch<const N: usize> {
    /// The walk's buffers.
    pub shap: Scratch<N>,
    /// Per atom, the projections of the block's rows.
    pub projections: Vec<[f32; N]>,
    /// Per atom and output, the block's values; all 0 between blocks.
    pub phi: Vec<Lanes<N>>,
    /// Per player of one tree and output, the block's values.
    pub tree_phi: Vec<Lanes<N>>,
    pub shares: BlockShares<N>,
}

/// The buffers of one call, which its chunks take in turn: a chunk is a block, and
/// the buffers hold a value per atom, output and lane.
#[derive(Default)]
pub(super) struct ScratchPool<const N: usize>(Mutex<Vec<BlockScratch<N>>>);

impl<const N: usize> ScratchPool<N> {
    /// Buffers for `chunks` chunks at once, each with a table of `table` values per
    /// lane (atoms times outputs), or [`MorfError::OutOfMemory`](crate::MorfError)
    /// when the memory cannot be had: a model of many atoms and outputs needs 8 bytes
    /// per atom, output and lane on each thread.
    pub(super) fn for_chunks(chunks: usize, table: usize) -> Result<ScratchPool<N>> {
        let what = "the contributions' values per atom and output";
        let scratches = (0..chunks)
            .map(|_| {
                let phi = try_filled(table, 1, Lanes::ZERO, what)?;
                Ok(BlockScratch {
                    phi,
                    ..BlockScratch::default()
                })
            })
            .collect::<Result<_>>()?;
        Ok(ScratchPool(Mutex::new(scratches)))
    }

    pub(super) fn take(&self) -> BlockScratch<N> {
        let mut pool = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        pool.pop().unwrap_or_default()
    }

    pub(super) fn give_back(&self, scratch: BlockScratch<N>) {
        let mut pool = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        pool.push(scratch);
    }
}

/// The number of `rows` (a chunk of at most `N`, and at least one), and a block's
/// lanes' rows: the last row again in the lanes past them.
pub(super) fn block_rows<'r, T: Feature, const N: usize>(
    rows: &'r Rows<'_, T>,
) -> (usize, [&'r [T]; N]) {
    let n = rows.n_samples;
    debug_assert!((1..=N).contains(&n), "a chunk is one block");
    (n, std::array::from_fn(|l| rows.row(l.min(n - 1))))
}

/// Whether `n_rows` rows on `threads` threads make at least two blocks of
/// [`BLOCK_ROWS`] a thread.
pub(super) fn enough_rows_for_wide_blocks(n_rows: usize, threads: usize) -> bool {
    n_rows >= 2 * BLOCK_ROWS * threads.max(1)
}
