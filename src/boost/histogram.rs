//! How are a node's gradients summed per bin? Per atom, the sum of gradients, of
//! hessians and the count of the node's samples in each bin; a sibling's histogram is
//! its parent's minus the other sibling's, so only the smaller child is summed.
//!
//! Bins hold `f32` sums, half the memory traffic of `f64`, which is what clearing,
//! subtracting and scanning a node's histograms costs; scans add them up in `f64`, and
//! leaf values are computed from the samples themselves ([`Sums::of_positions`]).

use std::ops::{Add, Sub};

use super::binning::GROUP;

/// Bins per atom slot: every bin a `u8` can name, so indexing by bin needs no check.
pub(crate) const SLOT: usize = 256;

/// Samples whose bins are gathered before they are added.
const GATHER: usize = 64;

/// One atom's histogram.
pub(crate) type Slot = [Bin; SLOT];

/// Sums over the samples of one bin.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C)]
pub(crate) struct Bin {
    /// Sum of gradients.
    pub g: f32,
    /// Sum of hessians.
    pub h: f32,
    /// Number of samples.
    pub n: u32,
}

/// Sums over the samples of a node, or of one side of a split.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Sums {
    /// Sum of gradients.
    pub g: f64,
    /// Sum of hessians.
    pub h: f64,
    /// Number of samples.
    pub n: u32,
}

impl Add<Bin> for Sums {
    type Output = Sums;
    #[inline(always)]
    fn add(self, bin: Bin) -> Sums {
        Sums {
            g: self.g + bin.g as f64,
            h: self.h + bin.h as f64,
            n: self.n + bin.n,
        }
    }
}

impl Sub for Sums {
    type Output = Sums;
    #[inline(always)]
    fn sub(self, other: Sums) -> Sums {
        Sums {
            g: self.g - other.g,
            h: self.h - other.h,
            n: self.n - other.n,
        }
    }
}

impl Sums {
    /// The sums over the samples at `positions` of `g` and `h`.
    pub fn of_positions(positions: &[u32], g: &[f32], h: &[f32]) -> Sums {
        let mut sums = Sums {
            n: positions.len() as u32,
            ..Sums::default()
        };
        for &p in positions {
            sums.g += g[p as usize] as f64;
            sums.h += h[p as usize] as f64;
        }
        sums
    }
}

/// Adds one sample to a bin.
#[inline(always)]
fn add(bin: &mut Bin, g: f32, h: f32) {
    bin.g += g;
    bin.h += h;
    bin.n += 1;
}

/// The samples a histogram sums.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Samples<'a> {
    /// Every position in order (a tree's root), whose count in each bin is known:
    /// `counts[a]` for slot `a`, the same for every output's tree of a round.
    All { counts: &'a [[u32; SLOT]] },
    /// The positions of a node.
    At(&'a [u32]),
}

/// Sums the samples into the histograms `slots` of the atoms of one group (at most
/// [`GROUP`]), whose bins are `words` (a word per position, lane `a` for slot `a`),
/// clearing the first `n_bins[a]` bins of each slot first. Sample `i` is `samples`'
/// `i`-th position and has gradient `g[i]` and hessian `h[i]`.
///
/// The group's atoms are summed together, one word read per sample, so that runs of
/// samples falling in the same bin (a dark background, say) give a chain of additions
/// per atom rather than one. Each bin adds its samples in position order
/// whatever the grouping, so the sums do not depend on it.
pub(crate) fn build(
    slots: &mut [Slot],
    n_bins: &[usize],
    words: &[[u8; GROUP]],
    samples: Samples<'_>,
    g: &[f32],
    h: &[f32],
) {
    for (slot, &n) in slots.iter_mut().zip(n_bins) {
        slot[..n].fill(Bin::default());
    }
    match samples {
        Samples::All { counts } => {
            // Counts known (the round's binning counts them once for every output's
            // root): only the sums are added, the count's increment saved.
            for ((word, &g), &h) in words.iter().zip(g).zip(h) {
                add_word_sums(slots, word, g, h);
            }
            for ((slot, counts), &n) in slots.iter_mut().zip(counts).zip(n_bins) {
                for (bin, &count) in slot[..n].iter_mut().zip(counts) {
                    bin.n = count;
                }
            }
        }
        Samples::At(positions) => {
            // Words gathered first, a block at a time: their loads, cache misses where
            // the node's samples are sparse, then overlap, which they would not
            // between the additions of one sample and the next. Each addition asks
            // the cache for a word of the next block, so that its gather mostly hits:
            // one request per sample, spread over the additions, rather than a block
            // of them at once, which stall when the cache has too many in flight.
            let mut gathered = [[0u8; GROUP]; GATHER];
            for (block, ((block_positions, g), h)) in positions
                .chunks(GATHER)
                .zip(g.chunks(GATHER))
                .zip(h.chunks(GATHER))
                .enumerate()
            {
                for (word, &p) in gathered.iter_mut().zip(block_positions) {
                    *word = words[p as usize];
                }
                let next = positions.get((block + 1) * GATHER..).unwrap_or(&[]);
                let mut next = next.iter().take(GATHER);
                for ((word, &g), &h) in gathered.iter().zip(g).zip(h) {
                    if let Some(&p) = next.next() {
                        prefetch(words, p);
                    }
                    add_word(slots, word, g, h);
                }
            }
        }
    }
}

/// Sums every position into the root histograms of two outputs at once: `slots[o]`
/// are output `o`'s histograms of one group's atoms, whose bins are `words` (a word
/// per position), with `n_bins[a]` bins in use and `counts[a]` positions in each;
/// position `p` has gradient `g[o][p]` and hessian `h[o][p]` for output `o`.
///
/// Each bin holds both outputs' sums side by side, added with one vector addition, so
/// that each position's bins are read and addressed once for the two. Each output's
/// bin adds its positions in position order from zero, as [`build`] does: the same sums.
pub(crate) fn build_root_pair(
    slots: [&mut [Slot]; 2],
    n_bins: &[usize],
    words: &[[u8; GROUP]],
    counts: &[[u32; SLOT]],
    g: [&[f32]; 2],
    h: [&[f32]; 2],
) {
    // Lanes summed together: 32 KB of paired sums, which stay in the first-level cache.
    let wide = n_bins.iter().any(|&n| n > SLOT / 2);
    let lanes_per_pass = if wide { GROUP / 2 } else { GROUP };
    let mut paired = vec![[0.0f32; 4]; lanes_per_pass * SLOT];
    let [first, second] = slots;
    for pass_start in (0..n_bins.len()).step_by(lanes_per_pass) {
        let lanes = pass_start..(pass_start + lanes_per_pass).min(n_bins.len());
        let paired = &mut paired[..lanes.len() * SLOT];
        for (slot, &n) in paired.chunks_exact_mut(SLOT).zip(&n_bins[lanes.clone()]) {
            slot[..n].fill([0.0; 4]);
        }
        for (p, word) in words.iter().enumerate() {
            let sample = [g[0][p], h[0][p], g[1][p], h[1][p]];
            for (slot, &bin) in paired.chunks_exact_mut(SLOT).zip(&word[lanes.clone()]) {
                add_paired(&mut slot[bin as usize], sample);
            }
        }
        for (lane, slot) in lanes.zip(paired.chunks_exact(SLOT)) {
            let n = n_bins[lane];
            let bins = first[lane][..n].iter_mut().zip(&mut second[lane][..n]);
            for ((a, b), (sums, &count)) in bins.zip(slot.iter().zip(&counts[lane])) {
                *a = Bin {
                    g: sums[0],
                    h: sums[1],
                    n: count,
                };
                *b = Bin {
                    g: sums[2],
                    h: sums[3],
                    n: count,
                };
            }
        }
    }
}

/// Adds one sample's two outputs' gradients and hessians to a paired bin.
#[inline(always)]
fn add_paired(bin: &mut [f32; 4], sample: [f32; 4]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_add_ps, _mm_loadu_ps, _mm_storeu_ps};
        // SAFETY: SSE is part of x86-64; four floats are read from and written to
        // `bin` and read from `sample`. Each lane's addition is the scalar one.
        unsafe {
            let sum = _mm_add_ps(_mm_loadu_ps(bin.as_ptr()), _mm_loadu_ps(sample.as_ptr()));
            _mm_storeu_ps(bin.as_mut_ptr(), sum);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (sum, value) in bin.iter_mut().zip(sample) {
        *sum += value;
    }
}

/// Asks the cache for the word of position `p`.
#[inline(always)]
fn prefetch(words: &[[u8; GROUP]], p: u32) {
    #[cfg(target_arch = "x86_64")]
    {
        let word = words.as_ptr().wrapping_add(p as usize);
        // SAFETY: a prefetch only hints the cache, whatever the address.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(word as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (words, p);
}

/// Adds one sample's gradient and hessian, not its count, to the group's histograms
/// at its bins `word`.
#[inline(always)]
fn add_word_sums(slots: &mut [Slot], word: &[u8; GROUP], g: f32, h: f32) {
    for (slot, &bin) in slots.iter_mut().zip(word) {
        let bin = &mut slot[bin as usize];
        bin.g += g;
        bin.h += h;
    }
}

/// Adds one sample, whose bins are `word`, to the group's histograms.
#[inline(always)]
fn add_word(slots: &mut [Slot], word: &[u8; GROUP], g: f32, h: f32) {
    for (slot, &bin) in slots.iter_mut().zip(word) {
        add(&mut slot[bin as usize], g, h);
    }
}

/// Turns `parent` (the histogram of both children) into the histogram of the child
/// that `child` is not, over the first `n_bins` bins.
pub(crate) fn subtract(parent: &mut Slot, child: &Slot, n_bins: usize) {
    for (p, c) in parent[..n_bins].iter_mut().zip(&child[..n_bins]) {
        p.g -= c.g;
        p.h -= c.h;
        p.n -= c.n;
    }
}

/// Histogram buffers reused across nodes and rounds: one per node whose children may
/// still be split, each holding a slot per atom.
#[derive(Debug, Default)]
pub(crate) struct HistogramPool {
    buffers: Vec<Vec<Slot>>,
    free: Vec<usize>,
    n_slots: usize,
}

impl HistogramPool {
    /// Frees every buffer and sizes them to `n_slots` slots from now on.
    pub fn reset(&mut self, n_slots: usize) {
        self.n_slots = n_slots;
        self.free.clear();
        self.free.extend((0..self.buffers.len()).rev());
    }

    /// A buffer of `n_slots` slots (contents unspecified).
    pub fn take(&mut self) -> usize {
        let id = self.free.pop().unwrap_or_else(|| {
            self.buffers.push(Vec::new());
            self.buffers.len() - 1
        });
        self.buffers[id].resize(self.n_slots, [Bin::default(); SLOT]);
        id
    }

    /// Gives buffer `id` back.
    pub fn give_back(&mut self, id: usize) {
        self.free.push(id);
    }

    /// Buffers `a` and `b` (distinct), both mutable.
    pub fn pair(&mut self, a: usize, b: usize) -> (&mut [Slot], &mut [Slot]) {
        assert_ne!(a, b);
        let n_slots = self.n_slots;
        let (low, high) = self.buffers.split_at_mut(a.max(b));
        let (first, second) = (&mut low[a.min(b)][..n_slots], &mut high[0][..n_slots]);
        if a < b {
            (first, second)
        } else {
            (second, first)
        }
    }

    /// Buffer `id`, mutable.
    pub fn get_mut(&mut self, id: usize) -> &mut [Slot] {
        &mut self.buffers[id][..self.n_slots]
    }

    /// Exchanges buffer `id` with `other`, which must hold at least `n_slots` slots:
    /// a histogram built outside the pool becomes the buffer's.
    pub fn swap(&mut self, id: usize, other: &mut Vec<Slot>) {
        assert!(other.len() >= self.n_slots, "a buffer of too few slots");
        std::mem::swap(&mut self.buffers[id], other);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn empty(n: usize) -> Vec<Slot> {
        vec![
            [Bin {
                g: 9.0,
                h: 9.0,
                n: 9
            }; SLOT];
            n
        ]
    }

    proptest! {
        #[test]
        fn histograms_count_each_sample_in_its_bin_and_siblings_subtract(
            n_atoms in 1usize..=GROUP,
            samples in prop::collection::vec((0u8..6, -4i8..4, 1u8..4, any::<bool>()), 1..60),
        ) {
            // Whole gradients keep f32 sums exact, so sums can be compared exactly.
            let m = samples.len();
            let columns: Vec<Vec<u8>> = (0..n_atoms)
                .map(|a| samples.iter().map(|s| (s.0 + a as u8) % 6).collect())
                .collect();
            let mut words = vec![[0u8; GROUP]; m];
            for (a, column) in columns.iter().enumerate() {
                for (word, &bin) in words.iter_mut().zip(column) {
                    word[a] = bin;
                }
            }
            let g: Vec<f32> = samples.iter().map(|s| s.1 as f32).collect();
            let h: Vec<f32> = samples.iter().map(|s| s.2 as f32).collect();
            let n_bins = vec![6; n_atoms];
            let mut counts = vec![[0u32; SLOT]; n_atoms];
            for (counts, column) in counts.iter_mut().zip(&columns) {
                for &bin in column {
                    counts[bin as usize] += 1;
                }
            }
            let mut root = empty(n_atoms);
            build(&mut root, &n_bins, &words, Samples::All { counts: &counts }, &g, &h);
            let left: Vec<u32> = (0..m as u32).filter(|&p| samples[p as usize].3).collect();
            let ordered = |v: &[f32]| left.iter().map(|&p| v[p as usize]).collect::<Vec<_>>();
            let mut left_hist = empty(n_atoms);
            build(&mut left_hist, &n_bins, &words, Samples::At(&left), &ordered(&g), &ordered(&h));
            for a in 0..n_atoms {
                for bin in 0..6u8 {
                    let expected = |keep: &dyn Fn(usize) -> bool| {
                        let mut e = Bin::default();
                        for p in (0..m).filter(|&p| keep(p) && columns[a][p] == bin) {
                            add(&mut e, g[p], h[p]);
                        }
                        e
                    };
                    prop_assert_eq!(root[a][bin as usize], expected(&|_| true));
                    prop_assert_eq!(left_hist[a][bin as usize], expected(&|p| samples[p].3));
                }
                let mut right = root[a];
                subtract(&mut right, &left_hist[a], 6);
                for bin in 0..6usize {
                    let mut e = Bin::default();
                    for p in (0..m).filter(|&p| !samples[p].3 && columns[a][p] as usize == bin) {
                        add(&mut e, g[p], h[p]);
                    }
                    prop_assert_eq!(right[bin], e);
                }
            }
        }
    }

    proptest! {
        #[test]
        fn root_histograms_of_two_outputs_at_once_equal_each_built_alone(
            n_atoms in 1usize..=GROUP,
            n_bins in prop::sample::select(vec![3usize, 128, 129, 256]),
            samples in prop::collection::vec(
                (any::<u64>(), -3.0f32..3.0, 0.0f32..1.0, -3.0f32..3.0, 0.0f32..1.0),
                1..300,
            ),
        ) {
            // Fractional gradients: the sums must be the same additions in the same
            // order, not merely the same exact values.
            let words: Vec<[u8; GROUP]> = samples
                .iter()
                .map(|s| std::array::from_fn(|a| ((s.0 >> (4 * a)) as usize % n_bins) as u8))
                .collect();
            let n_bins = vec![n_bins; n_atoms];
            let mut counts = vec![[0u32; SLOT]; n_atoms];
            for word in &words {
                for (counts, &bin) in counts.iter_mut().zip(word) {
                    counts[bin as usize] += 1;
                }
            }
            let column = |i: usize| -> Vec<f32> {
                samples.iter().map(|s| [s.1, s.2, s.3, s.4][i]).collect()
            };
            let (g0, h0, g1, h1) = (column(0), column(1), column(2), column(3));
            let (mut pair0, mut pair1) = (empty(n_atoms), empty(n_atoms));
            build_root_pair(
                [&mut pair0, &mut pair1],
                &n_bins,
                &words,
                &counts,
                [&g0, &g1],
                [&h0, &h1],
            );
            for (pair, (g, h)) in [(&pair0, (&g0, &h0)), (&pair1, (&g1, &h1))] {
                let mut alone = empty(n_atoms);
                build(&mut alone, &n_bins, &words, Samples::All { counts: &counts }, g, h);
                for a in 0..n_atoms {
                    prop_assert_eq!(&pair[a][..n_bins[a]], &alone[a][..n_bins[a]], "atom {}", a);
                }
            }
        }
    }

    #[test]
    fn pool_lends_distinct_buffers_and_reuses_returned_ones() {
        let mut pool = HistogramPool::default();
        pool.reset(3);
        let (a, b) = (pool.take(), pool.take());
        assert_ne!(a, b);
        pool.pair(a, b).0[0][0].n = 7;
        assert_eq!(pool.get_mut(a)[0][0].n, 7);
        pool.give_back(a);
        assert_eq!(pool.take(), a);
        pool.reset(5);
        let c = pool.take();
        assert_eq!(pool.get_mut(c).len(), 5);
    }
}
