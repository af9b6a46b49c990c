//! A block of rows explained side by side: every row of a block walks a tree's nodes
//! in the same order and only the numbers differ, so each number of the walk is a
//! [`Lanes`] of one value per row, and each node is read once per block rather than
//! once per row. Lanes never mix: a row's values do not depend on the rows beside it.

use std::ops::{Add, AddAssign, Mul, Sub};

/// The vectors the walk and the sharing are compiled for, the widest the processor
/// has: the same operations in the same order in each, so the same values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) enum Isa {
    /// What every processor of the target has (SSE2 on x86-64): two values an
    /// instruction.
    Plain,
    /// AVX2: four values an instruction.
    Avx2,
    /// AVX-512: eight values an instruction.
    Avx512,
}

impl Isa {
    /// The widest the processor has.
    pub(crate) fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = std::arch::is_x86_feature_detected!("avx2");
            if avx2 && std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if avx2 {
                return Isa::Avx2;
            }
        }
        Isa::Plain
    }
}

/// Rows explained side by side in calls of many rows: enough that a node's fixed
/// costs (its reads, its branches, the loops over its few coefficients) are shared by
/// many rows, few enough that the values of a node and its path stay near the core.
pub(crate) const BLOCK_ROWS: usize = 32;

/// Rows explained side by side in calls of fewer than [`BLOCK_ROWS`] rows, which
/// would otherwise pay for a whole block.
pub(crate) const SMALL_BLOCK_ROWS: usize = 8;

/// One bit per row of a block: bit `l` for row `l`.
pub(crate) type Mask = u32;

/// One value per row of a block of `N` rows, aligned to a cache line so that a load
/// never splits.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct Lanes<const N: usize>(pub [f64; N]);

impl<const N: usize> Default for Lanes<N> {
    fn default() -> Self {
        Lanes::ZERO
    }
}

impl<const N: usize> Lanes<N> {
    /// 0 in every lane.
    pub(crate) const ZERO: Lanes<N> = Lanes([0.0; N]);
    /// 1 in every lane.
    pub(crate) const ONE: Lanes<N> = Lanes([1.0; N]);
    /// Every row of the block, as a [`Mask`].
    pub(crate) const ALL_ROWS: Mask = {
        assert!(N <= Mask::BITS as usize, "a row a bit of a mask");
        Mask::MAX >> (Mask::BITS as usize - N)
    };

    /// `value` in every lane.
    #[inline(always)]
    pub(crate) fn splat(value: f64) -> Lanes<N> {
        Lanes([value; N])
    }

    /// Lane by lane, 1 where `take` holds, else 0.
    #[inline(always)]
    pub(crate) fn indicator(take: impl Fn(usize) -> bool) -> Lanes<N> {
        // A loop, not `array::from_fn`, whose closure calls are not always inlined.
        let mut out = Lanes::ZERO;
        for l in 0..N {
            out.0[l] = if take(l) { 1.0 } else { 0.0 };
        }
        out
    }

    /// 1 in the lanes of the rows of `mask`, else 0.
    #[inline(always)]
    pub(crate) fn from_mask(mask: Mask) -> Lanes<N> {
        Lanes::indicator(|l| mask & (1 << l) != 0)
    }

    /// Whether some lane is not 0.
    #[inline(always)]
    pub(crate) fn any_nonzero(&self) -> bool {
        // Without early exits, so that it vectorises.
        self.0.iter().fold(false, |any, &v| any | (v != 0.0))
    }
}

impl<const N: usize> Add for Lanes<N> {
    type Output = Lanes<N>;
    #[inline(always)]
    fn add(self, rhs: Lanes<N>) -> Lanes<N> {
        let mut out = self;
        for l in 0..N {
            out.0[l] += rhs.0[l];
        }
        out
    }
}

impl<const N: usize> Sub for Lanes<N> {
    type Output = Lanes<N>;
    #[inline(always)]
    fn sub(self, rhs: Lanes<N>) -> Lanes<N> {
        let mut out = self;
        for l in 0..N {
            out.0[l] -= rhs.0[l];
        }
        out
    }
}

impl<const N: usize> Mul for Lanes<N> {
    type Output = Lanes<N>;
    #[inline(always)]
    fn mul(self, rhs: Lanes<N>) -> Lanes<N> {
        let mut out = self;
        for l in 0..N {
            out.0[l] *= rhs.0[l];
        }
        out
    }
}

impl<const N: usize> Mul<f64> for Lanes<N> {
    type Output = Lanes<N>;
    #[inline(always)]
    fn mul(self, rhs: f64) -> Lanes<N> {
        let mut out = self;
        for l in 0..N {
            out.0[l] *= rhs;
        }
        out
    }
}

impl<const N: usize> AddAssign for Lanes<N> {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Lanes<N>) {
        for l in 0..N {
            self.0[l] += rhs.0[l];
        }
    }
}
