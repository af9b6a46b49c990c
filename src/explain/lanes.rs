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
    /// The vectors to explain in: the widest the processor has, but AVX2 where it
    /// runs AVX-512 operations as two halves of 256 bits (AMD's Zen 4): there a call
    /// took 1.18 times as long with the walk in AVX-512 (benches/profiles.md, "On the
    /// Zen 4 EPYC"; the sharing runs AVX2 everywhere). The values are the same in
    /// either.
    pub(crate) fn detect() -> Isa {
        match Isa::widest() {
            Isa::Avx512 if halves_wide_vectors() => Isa::Avx2,
            isa => isa,
        }
    }

    /// The widest the processor has.
    pub(crate) fn widest() -> Isa {
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

/// Whether the processor splits each 512-bit operation into two of 256 bits.
fn halves_wide_vectors() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // SAFETY: every x86-64 processor has CPUID and its leaves 0 and 1. (`__cpuid`
        // is a safe function in newer Rust, an unsafe one at the crate's rust-version.)
        #[allow(unused_unsafe)]
        let (vendor, signature) = unsafe { (__cpuid(0), __cpuid(1).eax) };
        amd_family_19h([vendor.ebx, vendor.edx, vendor.ecx], signature)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether CPUID's vendor (leaf 0's EBX, EDX, ECX) and signature (leaf 1's EAX) are
/// those of AMD's family 19h: Zen 3 and Zen 4, of which only Zen 4 has AVX-512, run as
/// two halves. The family is the base (bits 8 to 11) plus the extended family (bits 20
/// to 27) where the base is 0xF.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn amd_family_19h(vendor: [u32; 3], signature: u32) -> bool {
    let amd = vendor == [*b"Auth", *b"enti", *b"cAMD"].map(u32::from_le_bytes);
    let base = signature >> 8 & 0xf;
    let family = if base == 0xf {
        base + (signature >> 20 & 0xff)
    } else {
        base
    };
    amd && family == 0x19
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_amd_family_19h_counts_as_halving_wide_vectors() {
        let word = |name: &[u8; 12]| -> [u32; 3] {
            std::array::from_fn(|i| u32::from_le_bytes(name[4 * i..4 * i + 4].try_into().unwrap()))
        };
        // CPUID names the vendor in EBX, EDX, ECX order.
        let amd = word(b"AuthenticAMD");
        let intel = word(b"GenuineIntel");
        // Leaf 1 signatures: Zen 4 (EPYC 9004), Zen 5 (EPYC 9005), Zen 2 (family 17h),
        // and an Intel Xeon of family 6.
        let (zen4, zen5, zen2, xeon) = (0x00a1_0f11, 0x00b0_0f21, 0x0083_0f10, 0x0008_06f8);
        assert!(amd_family_19h(amd, zen4));
        assert!(!amd_family_19h(amd, zen5));
        assert!(!amd_family_19h(amd, zen2));
        assert!(!amd_family_19h(intel, xeon));
        assert!(!amd_family_19h(intel, zen4));
    }
}
