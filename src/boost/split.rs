//! How is a node split? The best bin boundary of an atom's histogram under a
//! [`SplitCriterion`]: for boosting [`GradientHessian`], whose gain is the loss
//! decrease of giving each child its Newton step, `G_L^2 / (H_L + lambda) +
//! G_R^2 / (H_R + lambda) - G^2 / (H + lambda)`. The formulas live with the forests'
//! criteria in [`crate::split`], so that this scan and the exact scans of samples there
//! rank splits alike.
//!
//! Every node is searched on histograms, small ones too. An exact search of nodes of
//! at most 512 samples ([`crate::split::best_split`] on the round's atoms with this
//! criterion, projections sorted) was measured and left out: it did not lower the test
//! error (MNIST-1D, 200 rounds, 3 seeds: 0.110 against 0.109 on histograms;
//! Fashion-MNIST, 10,000 images, 50 rounds, 2 seeds: 0.1124 against 0.1112) and made
//! fits 1.4 to 2.7 times as long. Where an atom takes few values the histograms are
//! exact already ([`super::binning`]).
//!
//! Missing projections have a bin of their own, the last: each boundary is tried with
//! it on either side ([`BinSplit::missing_left`]).

use super::binning::GROUP;
use super::histogram::{Bin, Sums};
use crate::split::{Float, GradientHessian, SplitCriterion};

/// Settings that decide whether and where a node may be split.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SplitLimits<C> {
    /// What a split decreases.
    pub criterion: C,
    /// Fewest samples either child may hold.
    pub min_samples_leaf: u32,
    /// Least weight (for boosting, hessian sum) either child must keep; above 0.
    pub min_child_weight: f64,
}

impl SplitLimits<GradientHessian> {
    /// Boosting's limits: scikit-learn's least hessian per child.
    pub fn boosting(min_samples_leaf: u32, l2_regularization: f64) -> Self {
        SplitLimits {
            criterion: GradientHessian { l2_regularization },
            min_samples_leaf,
            min_child_weight: GradientHessian::MIN_CHILD_HESSIAN,
        }
    }

    /// The optimal value of a leaf holding `sums`, before shrinkage: `-G / (H + lambda)`.
    pub fn leaf_value(&self, sums: Sums) -> f64 {
        self.criterion.leaf_value(sums.g, sums.h)
    }
}

impl<C> SplitLimits<C> {
    /// Whether a node of `n` samples is large enough to have two children.
    pub fn may_split(&self, n: u32) -> bool {
        n >= 2 * self.min_samples_leaf
    }
}

/// The cost of a side whose one entry sums to `sum` and whose weight is `weight`.
#[inline(always)]
fn side_cost<C: SplitCriterion, F: Float>(criterion: &C, sum: F, weight: F) -> F {
    criterion.cost(weight, criterion.term(sum, weight))
}

/// The best boundary found for a node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BinSplit {
    /// Decrease of the criterion (for boosting, twice the loss's).
    pub gain: f64,
    /// The atom, an index into the round's atoms.
    pub atom: u32,
    /// Samples in bins `<= bin` go left.
    pub bin: u16,
    /// Sums over the samples that go left.
    pub left: Sums,
    /// Whether the samples of the missing bin go left (`Some(true)`) or right;
    /// `None` when the node has none.
    pub missing_left: Option<bool>,
}

impl BinSplit {
    /// Whether `self` beats `other`: larger gain, then the earlier atom and bin, so
    /// that the best split does not depend on the order candidates are compared in.
    pub fn beats(&self, other: &BinSplit) -> bool {
        (self.gain, std::cmp::Reverse((self.atom, self.bin)))
            > (other.gain, std::cmp::Reverse((other.atom, other.bin)))
    }

    /// The better of two candidates.
    pub fn better(a: Option<BinSplit>, b: Option<BinSplit>) -> Option<BinSplit> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.beats(&a) { b } else { a }),
            (a, None) => a,
            (None, b) => b,
        }
    }
}

/// Scans run side by side, one per lane: bin after bin, the lanes' running sums,
/// children's costs and smallest costs so far are each one operation across lanes
/// (which the compiler vectorises, divisions included), where one scan alone was a
/// chain of dependent additions followed by a pass over its stored sums. Four lanes
/// (one SSE vector) scanned 1.9 times as fast as one atom at a time in a
/// micro-benchmark (1.17 times within a fit); eight (two vectors, or one AVX2 vector)
/// were no faster.
const LANES: usize = 4;

/// One scan: the boundaries of `bins`, with `start` (the missing bin, or nothing) on
/// the left of every boundary, its missing side recorded as `missing_left`.
#[derive(Debug, Clone, Copy)]
struct Scan<'a> {
    bins: &'a [Bin],
    start: Bin,
    missing_left: Option<bool>,
    atom: u32,
}

impl Scan<'_> {
    const NONE: Scan<'static> = Scan {
        bins: &[],
        start: Bin {
            g: 0.0,
            h: 0.0,
            n: 0,
        },
        missing_left: None,
        atom: 0,
    };

    /// The bins with a boundary after them (all but the last).
    fn bins_before_boundaries(&self) -> &[Bin] {
        &self.bins[..self.bins.len().saturating_sub(1)]
    }
}

/// The best boundary of `atom`'s histogram `bins` (at most
/// [`SLOT`](super::histogram::SLOT) of them) for a node with sums `total`, among
/// those leaving enough samples and weight on both sides and decreasing the
/// criterion: [`best_group_split`] of one atom.
#[cfg(test)]
pub(crate) fn best_bin_split<C: SplitCriterion>(
    bins: &[Bin],
    has_missing_bin: bool,
    total: Sums,
    atom: u32,
    limits: &SplitLimits<C>,
) -> Option<BinSplit> {
    best_group_split(&[bins], atom, has_missing_bin, total, limits)
}

/// The best boundary among the histograms `histograms` of atoms `first_atom..` (at
/// most [`GROUP`], each of at most [`SLOT`](super::histogram::SLOT) bins) for a node
/// with sums `total`, among
/// those leaving enough samples and weight on both sides and decreasing the
/// criterion. A bin's one entry is its gradient sum and its weight its hessian sum.
///
/// With `has_missing_bin`, each histogram's last bin holds the samples whose
/// projection is missing: when it has some, every boundary is tried with them on the
/// right (the boundary after the last present bin splitting present from missing),
/// then on the left, and a side wins only by a larger gain, as in scikit-learn's
/// histogram boosting.
///
/// Each boundary's children's cost is computed in `f32` from `f32` running sums,
/// which rank the boundaries; near-ties within `f32` rounding may go either way,
/// always the same way for the same histogram. The winner of each atom (the earliest
/// of the smallest cost) has its sums and gain computed again in `f64`, and atoms are
/// compared by [`BinSplit::beats`].
pub(crate) fn best_group_split<C: SplitCriterion>(
    histograms: &[&[Bin]],
    first_atom: u32,
    has_missing_bin: bool,
    total: Sums,
    limits: &SplitLimits<C>,
) -> Option<BinSplit> {
    debug_assert!(histograms.len() <= GROUP);
    debug_assert_eq!(limits.criterion.n_entries(), 1);
    // Each atom's scans: missing samples right, then (when it has some) left.
    let mut scans = [Scan::NONE; 2 * GROUP];
    let mut n_scans = 0;
    for (&bins, atom) in histograms.iter().zip(first_atom..) {
        let missing = match bins.last() {
            Some(&last) if has_missing_bin && last.n > 0 => Some(last),
            _ => None,
        };
        scans[n_scans] = Scan {
            bins,
            start: Bin::default(),
            missing_left: missing.map(|_| false),
            atom,
        };
        n_scans += 1;
        if let Some(missing) = missing {
            scans[n_scans] = Scan {
                bins: &bins[..bins.len() - 1],
                start: missing,
                missing_left: Some(true),
                atom,
            };
            n_scans += 1;
        }
    }
    let scans = &scans[..n_scans];
    let mut found = [None; 2 * GROUP];
    for (batch, found) in scans.chunks(LANES).zip(found.chunks_mut(LANES)) {
        let last_left = best_boundaries(batch, total, limits);
        let lefts = left_sums(batch, &last_left);
        for (((scan, &bin), &left), found) in batch.iter().zip(&last_left).zip(&lefts).zip(found) {
            *found = bin.and_then(|bin| split_with_gain(scan, bin, left, total, limits));
        }
    }
    let mut best = None;
    let mut i = 0;
    while i < n_scans {
        let atom_best = if scans[i].missing_left.is_some() {
            i += 2;
            // Missing samples left win only by a larger gain.
            match (found[i - 2], found[i - 1]) {
                (Some(r), Some(l)) if l.gain > r.gain => Some(l),
                (None, l) => l,
                (r, _) => r,
            }
        } else {
            i += 1;
            found[i - 1]
        };
        best = BinSplit::better(best, atom_best);
    }
    best
}

/// For each scan of `batch` (at most [`LANES`]), the last bin on the left of its
/// best boundary, if any is allowed: the boundary after an occupied bin (after an
/// empty one a boundary splits the samples as the one before it does) leaving enough
/// samples and weight on both sides, whose children's cost, computed in `f32` from
/// `f32` running sums (for ranking only), is the smallest; the earliest among equals.
fn best_boundaries<C: SplitCriterion>(
    batch: &[Scan<'_>],
    total: Sums,
    limits: &SplitLimits<C>,
) -> [Option<usize>; LANES] {
    let criterion = &limits.criterion;
    let min_n = limits.min_samples_leaf;
    let min_h = limits.min_child_weight as f32;
    let (g, h, n) = (total.g as f32, total.h as f32, total.n);
    let bins: [&[Bin]; LANES] =
        std::array::from_fn(|j| batch.get(j).map_or(&[][..], Scan::bins_before_boundaries));
    let start = |j: usize| batch.get(j).map_or(Bin::default(), |scan| scan.start);
    let (mut left_g, mut left_h, mut left_n) = (
        std::array::from_fn::<f32, LANES, _>(|j| start(j).g),
        std::array::from_fn::<f32, LANES, _>(|j| start(j).h),
        std::array::from_fn::<u32, LANES, _>(|j| start(j).n),
    );
    let mut smallest = [f32::INFINITY; LANES];
    let mut last_left = [0u32; LANES];
    let longest = bins.iter().map(|bins| bins.len()).max().unwrap_or(0);
    for b in 0..longest {
        // Past a scan's last boundary, an empty bin: never allowed.
        let bin: [Bin; LANES] =
            std::array::from_fn(|j| bins[j].get(b).copied().unwrap_or_default());
        for j in 0..LANES {
            left_g[j] += bin[j].g;
            left_h[j] += bin[j].h;
            left_n[j] = left_n[j].wrapping_add(bin[j].n);
            let (gl, hl, nl) = (left_g[j], left_h[j], left_n[j]);
            let (gr, hr, nr) = (g - gl, h - hl, n.wrapping_sub(nl));
            let allowed =
                (bin[j].n > 0) & (nl >= min_n) & (nr >= min_n) & (hl >= min_h) & (hr >= min_h);
            let cost = side_cost(criterion, gl, hl) + side_cost(criterion, gr, hr);
            // Strictly smaller: each lane keeps the earliest of its smallest.
            let smaller = allowed & (cost < smallest[j]);
            smallest[j] = if smaller { cost } else { smallest[j] };
            last_left[j] = if smaller { b as u32 } else { last_left[j] };
        }
    }
    std::array::from_fn(|j| (smallest[j] != f32::INFINITY).then_some(last_left[j] as usize))
}

/// The sums in `f64` of the scans `batch` (at most [`LANES`]) over their bins up to
/// `last_left` (included, with the scan's start): the same additions in the same
/// order as one scan alone, their common part interleaved across the batch.
fn left_sums(batch: &[Scan<'_>], last_left: &[Option<usize>; LANES]) -> [Sums; LANES] {
    let mut sums: [Sums; LANES] =
        std::array::from_fn(|j| Sums::default() + batch.get(j).map_or(Bin::default(), |s| s.start));
    let bins: [&[Bin]; LANES] = std::array::from_fn(|j| match (batch.get(j), last_left[j]) {
        (Some(scan), Some(bin)) => &scan.bins[..=bin],
        _ => &[][..],
    });
    let common = bins.iter().map(|bins| bins.len()).min().unwrap_or(0);
    for b in 0..common {
        for (sums, bins) in sums.iter_mut().zip(&bins) {
            *sums = *sums + bins[b];
        }
    }
    for (sums, bins) in sums.iter_mut().zip(&bins) {
        for &bin in &bins[common..] {
            *sums = *sums + bin;
        }
    }
    sums
}

/// The split of `scan` with bins up to `bin` on the left, whose sums are `left`, if
/// it decreases the criterion.
fn split_with_gain<C: SplitCriterion>(
    scan: &Scan<'_>,
    bin: usize,
    left: Sums,
    total: Sums,
    limits: &SplitLimits<C>,
) -> Option<BinSplit> {
    let criterion = &limits.criterion;
    let right = total - left;
    let gain = side_cost(criterion, total.g, total.h)
        - (side_cost(criterion, left.g, left.h) + side_cost(criterion, right.g, right.h));
    (gain > 0.0).then_some(BinSplit {
        gain,
        atom: scan.atom,
        bin: bin as u16,
        left,
        missing_left: scan.missing_left,
    })
}

#[cfg(test)]
mod tests;
