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
    /// What every processor of the target has (SSE2 on x86-64): a [`Lanes`] in
    /// four instructions.
    Plain,
    /// AVX2: a [`Lanes`] in two instructions.
    Avx2,
    /// AVX-512: a [`Lanes`] in one instruction, and registers for all of a node's.
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

/// Rows explained side by side.
pub(crate) const LANES: usize = 8;

/// One value per row of a block, aligned to a cache line so that a load never splits.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct Lanes(pub [f64; LANES]);

impl Default for Lanes {
    fn default() -> Self {
        Lanes::ZERO
    }
}

impl Lanes {
    /// 0 in every lane.
    pub(crate) const ZERO: Lanes = Lanes([0.0; LANES]);
    /// 1 in every lane.
    pub(crate) const ONE: Lanes = Lanes([1.0; LANES]);

    /// `value` in every lane.
    #[inline(always)]
    pub(crate) fn splat(value: f64) -> Lanes {
        Lanes([value; LANES])
    }

    /// Lane by lane, 1 where `take` holds, else 0.
    #[inline(always)]
    pub(crate) fn indicator(take: impl Fn(usize) -> bool) -> Lanes {
        // A loop, not `array::from_fn`, whose closure calls are not always inlined.
        let mut out = Lanes::ZERO;
        for l in 0..LANES {
            out.0[l] = if take(l) { 1.0 } else { 0.0 };
        }
        out
    }

    /// Whether some lane is not 0.
    #[inline(always)]
    pub(crate) fn any_nonzero(&self) -> bool {
        // Without early exits, so that it vectorises.
        self.0.iter().fold(false, |any, &v| any | (v != 0.0))
    }
}

impl Add for Lanes {
    type Output = Lanes;
    #[inline(always)]
    fn add(self, rhs: Lanes) -> Lanes {
        let mut out = self;
        for l in 0..LANES {
            out.0[l] += rhs.0[l];
        }
        out
    }
}

impl Sub for Lanes {
    type Output = Lanes;
    #[inline(always)]
    fn sub(self, rhs: Lanes) -> Lanes {
        let mut out = self;
        for l in 0..LANES {
            out.0[l] -= rhs.0[l];
        }
        out
    }
}

impl Mul for Lanes {
    type Output = Lanes;
    #[inline(always)]
    fn mul(self, rhs: Lanes) -> Lanes {
        let mut out = self;
        for l in 0..LANES {
            out.0[l] *= rhs.0[l];
        }
        out
    }
}

impl Mul<f64> for Lanes {
    type Output = Lanes;
    #[inline(always)]
    fn mul(self, rhs: f64) -> Lanes {
        let mut out = self;
        for l in 0..LANES {
            out.0[l] *= rhs;
        }
        out
    }
}

impl AddAssign for Lanes {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Lanes) {
        for l in 0..LANES {
            self.0[l] += rhs.0[l];
        }
    }
}
