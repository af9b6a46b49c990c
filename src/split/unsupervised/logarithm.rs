//! The natural logarithm as Fast-BIC takes it, in plain IEEE additions, multiplications
//! and divisions (fdlibm's `__ieee754_log`, within one unit in the last place), so that
//! vector lanes and scalar code give the same bits on every processor: the C library's
//! logarithm is one call per value, which Fast-BIC makes twice per threshold.

/// `ln 2` in two parts: `LN2_HI` has its low bits zero, so that `k * LN2_HI` is exact
/// for any exponent `k`.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// The minimax polynomial of `(ln(1 + f) - 2 s) / s` in `s^2`, `s = f / (2 + f)`.
const LG1: f64 = f64::from_bits(0x3fe5_5555_5555_5593);
const LG2: f64 = f64::from_bits(0x3fd9_9999_9997_fa04);
const LG3: f64 = f64::from_bits(0x3fd2_4924_9422_9359);
const LG4: f64 = f64::from_bits(0x3fcc_71c5_1d8e_78af);
const LG5: f64 = f64::from_bits(0x3fc7_4664_96cb_03de);
const LG6: f64 = f64::from_bits(0x3fc3_9a09_d078_c69f);
const LG7: f64 = f64::from_bits(0x3fc2_f112_df3e_5244);

const MANTISSA: u64 = 0x000f_ffff_ffff_ffff;
/// `2^52` as bits: an exponent `e < 2^52` or'ed into it reads as `2^52 + e`.
const TWO_52_BITS: u64 = 0x4330_0000_0000_0000;
const TWO_52: f64 = 4_503_599_627_370_496.0;
const EXPONENT_BIAS: f64 = 1023.0;

/// Values taken at a time by [`ln_in_place`]: AVX2's four doubles.
const LANES: usize = 4;

/// `ln(x)` of a positive, normal, finite `x`, within one unit in the last place.
/// Branch-free, so that the compiler runs it in vector lanes over slices.
#[inline(always)]
pub(crate) fn ln(x: f64) -> f64 {
    debug_assert!(x.is_normal() && x > 0.0, "ln of {x}");
    let bits = x.to_bits();
    let mantissa = bits & MANTISSA;
    // `m` in [sqrt(2)/2, sqrt(2)): the mantissa as [1, 2), halved where above sqrt(2),
    // which adds one to the exponent.
    let halved = (mantissa + 0x0009_5f64_0000_0000) & (1 << 52);
    let m = f64::from_bits(mantissa | (halved ^ 0x3ff0_0000_0000_0000));
    // The biased exponent (below 2^11) read as a double without an integer conversion,
    // which AVX2 lacks for 64-bit lanes.
    let biased = (bits >> 52) + (halved >> 52);
    let k = (f64::from_bits(biased | TWO_52_BITS) - TWO_52) - EXPONENT_BIAS;
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    // fdlibm's two forms: with `f^2 / 2` split out where `m` lies in about
    // [1.38, 1.42) (the high word of the mantissa between these bounds), else plainly.
    let high = (mantissa >> 32) as i64;
    let half_square_form = ((high - 0x6147a) | (0x6b851 - high)) > 0;
    let half_square = 0.5 * f * f;
    let with_half_square = k * LN2_HI - ((half_square - (s * (half_square + r) + k * LN2_LO)) - f);
    let plain = k * LN2_HI - ((s * (f - r) - k * LN2_LO) - f);
    if half_square_form {
        with_half_square
    } else {
        plain
    }
}

/// Replaces each of `values` (positive, normal, finite) by its logarithm, [`ln`]'s
/// values bit for bit, in AVX2 lanes where the processor has them.
pub(crate) fn ln_in_place(values: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if crate::scoring::has_avx2() {
        // SAFETY: the processor has AVX2.
        return unsafe { ln_in_place_avx2(values) };
    }
    ln_in_place_lanes(values);
}

/// [`ln_in_place`] compiled for AVX2: the same operations, so the same values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn ln_in_place_avx2(values: &mut [f64]) {
    ln_in_place_lanes(values);
}

#[inline(always)]
fn ln_in_place_lanes(values: &mut [f64]) {
    let mut groups = values.chunks_exact_mut(LANES);
    for group in &mut groups {
        for value in group {
            *value = ln(*value);
        }
    }
    for value in groups.into_remainder() {
        *value = ln(*value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn logarithms_are_within_an_ulp_of_the_c_library_and_the_same_in_every_lane() {
        let mut rng = Rng::new(11, 0);
        let mut values: Vec<f64> = (0..200_000)
            .map(|i| {
                // Every exponent, and many values near 1 where the two forms meet.
                let exponent = (i % 2000) - 1000;
                (1.0 + rng.unit()) * 2f64.powi(exponent)
            })
            .chain([
                1.0,
                f64::MIN_POSITIVE,
                f64::MAX,
                2.0,
                0.5,
                1.0 + f64::EPSILON,
            ])
            .chain((1..2000).map(|k| k as f64 / 2000.0))
            .collect();
        let expected: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        let one_by_one: Vec<f64> = values.iter().map(|&v| ln(v)).collect();
        let mut portable = values.clone();
        ln_in_place_lanes(&mut portable);
        ln_in_place(&mut values);
        for (((&fastest, &portable), &scalar), &libm) in
            values.iter().zip(&portable).zip(&one_by_one).zip(&expected)
        {
            assert_eq!(fastest.to_bits(), scalar.to_bits());
            assert_eq!(portable.to_bits(), scalar.to_bits());
            assert!(
                scalar.to_bits().abs_diff(libm.to_bits()) <= 1,
                "{scalar} against {libm}"
            );
        }
    }
}
