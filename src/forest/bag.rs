//! Which rows each tree's sample holds: the bootstrap draws of its structure part and,
//! for honest trees, its estimation rows. They come from tree `t`'s own row stream, so
//! fit, out-of-bag scoring and users all see the same sample of a tree.

use std::ops::Range;

use rayon::prelude::*;

use super::params::{ForestParams, MaxSamples};
use crate::error::{invalid, Result};
use crate::rng::Rng;

/// Bits per word of the in-bag masks.
const BITS: usize = u64::BITS as usize;

/// Which rows each of a range of trees holds (drew or, honest, filled its leaves
/// with), one bit per row and tree.
pub(crate) struct InBag {
    words: usize,
    masks: Vec<u64>,
}

impl InBag {
    /// The samples of trees `trees` of the forest `params` grow on `n_samples` rows,
    /// `n_estimation` of them set aside per tree (from [`sampling_sizes`]), drawn on
    /// `threads` threads of the current rayon pool.
    pub(crate) fn new(
        params: &ForestParams,
        n_samples: usize,
        n_estimation: usize,
        trees: Range<usize>,
        threads: usize,
    ) -> InBag {
        let words = n_samples.div_ceil(BITS);
        let mut masks = vec![0u64; trees.len() * words];
        let first = trees.start;
        let mark = |(t, mask): (usize, &mut [u64])| {
            let sample = TreeSample::draw(params, n_samples, n_estimation, first + t);
            let drawn = (0..n_samples as u32).filter(|&row| sample.draws[row as usize] > 0);
            for row in drawn.chain(sample.estimation.iter().copied()) {
                mask[row as usize / BITS] |= 1 << (row as usize % BITS);
            }
        };
        if threads == 1 || words == 0 {
            masks.chunks_mut(words.max(1)).enumerate().for_each(mark);
        } else {
            masks.par_chunks_mut(words).enumerate().for_each(mark);
        }
        InBag { words, masks }
    }

    /// Whether the `tree`-th tree of the range holds row `row`.
    #[inline]
    pub(crate) fn holds(&self, tree: usize, row: usize) -> bool {
        self.masks[tree * self.words + row / BITS] >> (row % BITS) & 1 == 1
    }
}

/// The rows tree `t` learns from.
pub(crate) struct TreeSample {
    /// Per row of X, how many times the structure sample (which chooses the splits)
    /// drew it.
    pub(crate) draws: Vec<u32>,
    /// The estimation rows (which fill the leaves of honest trees), ascending.
    pub(crate) estimation: Vec<u32>,
}

impl TreeSample {
    /// Draws tree `t`'s sample of `n_samples` rows, `n_estimation` of them set aside
    /// for its leaves, as `params` describe (checked by [`sampling_sizes`]).
    pub(crate) fn draw(
        params: &ForestParams,
        n_samples: usize,
        n_estimation: usize,
        t: usize,
    ) -> TreeSample {
        let mut row_rng = Rng::new(params.random_state, 2 * t as u64);
        let mut order: Vec<u32> = (0..n_samples as u32).collect();
        row_rng.choose_into_prefix(&mut order, n_estimation);
        let (estimation, pool) = order.split_at_mut(n_estimation);

        let mut draws = vec![0u32; n_samples];
        let sample_size = match params.max_samples {
            Some(max_samples) => max_samples.resolve(pool.len()).expect("checked in fit"),
            None => pool.len(),
        };
        if params.bootstrap {
            for _ in 0..sample_size {
                draws[pool[row_rng.below(pool.len())] as usize] += 1;
            }
        } else {
            let sample_size = sample_size.min(pool.len());
            row_rng.choose_into_prefix(pool, sample_size);
            pool[..sample_size]
                .iter()
                .for_each(|&row| draws[row as usize] = 1);
        }
        estimation.sort_unstable();
        TreeSample {
            draws,
            estimation: estimation.to_vec(),
        }
    }
}

/// Checks that `params`' honesty and sample size suit `n_samples` rows; returns the
/// size of each tree's estimation sample.
pub(crate) fn sampling_sizes(params: &ForestParams, n_samples: usize) -> Result<usize> {
    let n_estimation = honest_size(params.honest_fraction, n_samples)?;
    if let Some(max_samples) = params.max_samples {
        max_samples.resolve(n_samples - n_estimation)?;
        if let MaxSamples::Count(count) = max_samples {
            if count > n_samples {
                return Err(invalid(
                    "max_samples",
                    format!("a count must be at most n_samples ({n_samples}), got {count}"),
                ));
            }
        }
    }
    Ok(n_estimation)
}

/// Size of each tree's estimation sample; both parts must keep at least one sample.
fn honest_size(honest_fraction: f64, n_samples: usize) -> Result<usize> {
    if honest_fraction == 0.0 {
        return Ok(0);
    }
    let n_estimation = (honest_fraction * n_samples as f64).round() as usize;
    if n_estimation == 0 || n_estimation >= n_samples {
        return Err(invalid(
            "honest_fraction",
            format!(
                "{honest_fraction} of {n_samples} samples leaves an empty structure or \
                 estimation set; use more samples or a fraction nearer 0.5"
            ),
        ));
    }
    Ok(n_estimation)
}

impl ForestParams {
    /// How many times tree `tree` of the forest these parameters grow on `n_samples`
    /// rows holds each row: its bootstrap draws for the rows that chose the splits, 1
    /// for the estimation rows of an honest tree, 0 for the rows the tree never saw
    /// (its out-of-bag rows). The same whatever the data and the number of threads.
    pub fn tree_sample_counts(&self, n_samples: usize, tree: usize) -> Result<Vec<u32>> {
        self.validate()?;
        let n_estimation = sampling_sizes(self, n_samples)?;
        let sample = TreeSample::draw(self, n_samples, n_estimation, tree);
        let mut counts = sample.draws;
        sample
            .estimation
            .iter()
            .for_each(|&row| counts[row as usize] = 1);
        Ok(counts)
    }
}
