//! Scoring rows in parallel: X cut into chunks that threads take in turn, each chunk
//! checked and handed to a model's scorer with its rows of the output; the output
//! arrays themselves; the threads that do the work.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ndarray::{s, Array2, ArrayView2, ArrayViewMut2};
use rayon::prelude::*;

use crate::data::{non_finite_error, Feature, Rows};
use crate::error::{invalid, try_filled, MorfError, Result};
use crate::runtime::control::{check_cancel, is_cancelled};

/// Most rows scored together by any model (see [`score_row_chunks`]'s `most_rows`).
pub(crate) const SCORE_CHUNK: usize = 1024;

/// Fewest rows per chunk: enough that the scoring engine projects them as a block.
const MIN_SCORE_CHUNK: usize = 16;

/// Chunks per thread that small batches are cut into, so that threads finishing early
/// find work left.
const CHUNKS_PER_THREAD: usize = 4;

/// Runs `score(first_row, rows, out)` on every chunk of X's rows (the first of
/// which is row `first_row` of X, chunks of at most `most_rows <= SCORE_CHUNK` rows,
/// as many as the model scores best together) with that chunk's rows of `out`
/// (`width` values per row), on `threads` threads of the current rayon pool, for a model of
/// `n_features_fitted` features (a forest or another model type). Threads take
/// chunks in turn, so all stay busy to the end; a chunk whose rows do
/// not lie contiguous is copied into its thread's buffer first.
///
/// This is the one place scoring checks X's values, a chunk at a time right before
/// its rows are walked: the first bad value (in row-major order) is reported
/// whatever the number of threads, and chunks after it are skipped. `score` looks
/// at `cancel` itself, between trees; once it is set, what `out` holds is
/// unspecified and [`MorfError::Cancelled`] is returned.
#[allow(clippy::too_many_arguments)]
pub(crate) fn score_row_chunks<T: Feature, O: Send>(
    n_features_fitted: usize,
    x: ArrayView2<'_, T>,
    out: &mut [O],
    width: usize,
    most_rows: usize,
    threads: usize,
    cancel: &AtomicBool,
    score: impl Fn(usize, &Rows<'_, T>, &mut [O]) + Sync,
) -> Result<()> {
    let rows_per_chunk = x.nrows().div_ceil(CHUNKS_PER_THREAD * threads).clamp(
        MIN_SCORE_CHUNK,
        most_rows.clamp(MIN_SCORE_CHUNK, SCORE_CHUNK),
    );
    let (fitted, chunk) = (n_features_fitted, rows_per_chunk);
    score_rows_in_chunks(fitted, x, out, width, chunk, threads, cancel, score)
}

/// [`score_row_chunks`] in chunks of exactly `rows_per_chunk` rows (the last may have
/// fewer), for models that score rows best in blocks of that many.
#[allow(clippy::too_many_arguments)]
pub(crate) fn score_rows_in_chunks<T: Feature, O: Send>(
    n_features_fitted: usize,
    x: ArrayView2<'_, T>,
    out: &mut [O],
    width: usize,
    rows_per_chunk: usize,
    threads: usize,
    cancel: &AtomicBool,
    score: impl Fn(usize, &Rows<'_, T>, &mut [O]) + Sync,
) -> Result<()> {
    let (n_samples, n_features) = x.dim();
    if n_features != n_features_fitted {
        return Err(MorfError::ShapeMismatch {
            what: "number of features in X (as at fit time)",
            expected: n_features_fitted,
            got: n_features,
        });
    }
    debug_assert_eq!(out.len(), n_samples * width);
    if n_samples == 0 || width == 0 {
        return Ok(());
    }
    let first_bad = AtomicUsize::new(usize::MAX);
    let score_chunk = |buffer: &mut Vec<T>, (chunk, out): (usize, &mut [O])| {
        let start = chunk * rows_per_chunk;
        if start * n_features > first_bad.load(Ordering::Relaxed) || is_cancelled(cancel) {
            return; // an earlier value fails already, or nobody wants the result
        }
        let block = x.slice_move(s![start..start + out.len() / width, ..]);
        let rows = match block.to_slice() {
            Some(values) => Rows::from_slice(values, n_features),
            None => {
                buffer.clear();
                buffer.extend(block.iter().copied());
                Rows::from_slice(&buffer[..], n_features)
            }
        };
        if let Some(flat) = rows.first_invalid(|| ()) {
            first_bad.fetch_min(start * n_features + flat, Ordering::Relaxed);
        } else if first_bad.load(Ordering::Relaxed) == usize::MAX {
            score(start, &rows, out);
        }
    };
    if threads == 1 || n_samples <= rows_per_chunk {
        let mut buffer = Vec::new();
        out.chunks_mut(rows_per_chunk * width)
            .enumerate()
            .for_each(|chunk| score_chunk(&mut buffer, chunk));
    } else {
        out.par_chunks_mut(rows_per_chunk * width)
            .enumerate()
            .for_each_init(Vec::new, score_chunk);
    }
    check_cancel(cancel)?;
    match first_bad.into_inner() {
        usize::MAX => Ok(()),
        flat => {
            let (row, column) = (flat / n_features, flat % n_features);
            Err(non_finite_error(flat, n_features, x[[row, column]]))
        }
    }
}

/// A row-major array of `n_samples` rows of `width` zeros, or
/// [`MorfError::OutOfMemory`].
pub(crate) fn new_output<O: Clone + Default>(
    n_samples: usize,
    width: usize,
    what: &'static str,
) -> Result<Array2<O>> {
    let values = try_filled(n_samples, width, O::default(), what)?;
    Ok(Array2::from_shape_vec((n_samples, width), values).expect("one value per row and column"))
}

/// `out` as a flat row-major slice, once its shape is checked.
pub(crate) fn output_rows<'o, O>(
    out: ArrayViewMut2<'o, O>,
    n_samples: usize,
    width: usize,
    what: &'static str,
) -> Result<&'o mut [O]> {
    if out.dim() != (n_samples, width) {
        return Err(invalid(
            "out",
            format!(
                "must have shape ({n_samples}, {width}): one row per sample of X and one \
                 column per {what}; got {:?}",
                out.dim()
            ),
        ));
    }
    out.into_slice()
        .ok_or_else(|| invalid("out", "must be in standard (row-major, contiguous) layout"))
}
