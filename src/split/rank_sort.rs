//! Sorting up to 128 `u64` keys by counting each key's rank in AVX-512 lanes: every
//! key's high half is compared with every other's, sixteen at a time, with no branch
//! on the keys, where a comparison sort of so few keys spends much of its time on
//! mispredicted branches.

/// Most keys [`sort_by_rank`] sorts: its work grows with the square of their number,
/// and beyond this a comparison sort is faster (measured in benches/profiles.md,
/// "Sorting a node's keys by rank").
pub(super) const RANK_SORT_MAX_LEN: usize = 128;

/// Whether this processor has the instructions [`sort_by_rank`] needs.
#[inline]
pub(super) fn rank_sort_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Sorts `keys` (at most [`RANK_SORT_MAX_LEN`]) by their high halves, as
/// [`sort_by_value`](super::sort_by_value) does: each key goes to its rank, the number
/// of keys whose high half is below its own, plus the number of keys before it with the
/// same high half, so that ties keep their order. `originals` is working space (of any
/// length; it takes the keys' length). Only where [`rank_sort_available`] says so.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) fn sort_by_rank(keys: &mut [u64], originals: &mut Vec<u64>) {
    // As many vectors of sixteen high halves as the keys fill, a number the compiler
    // knows, so that every vector's ranks stay in a register.
    match keys.len().div_ceil(16) {
        0 => {}
        1 => rank_and_place::<1, 16>(keys, originals),
        2 => rank_and_place::<2, 32>(keys, originals),
        3 => rank_and_place::<3, 48>(keys, originals),
        4 => rank_and_place::<4, 64>(keys, originals),
        5 => rank_and_place::<5, 80>(keys, originals),
        6 => rank_and_place::<6, 96>(keys, originals),
        7 => rank_and_place::<7, 112>(keys, originals),
        8 => rank_and_place::<8, 128>(keys, originals),
        _ => panic!("rank sort takes at most {RANK_SORT_MAX_LEN} keys"),
    }
}

/// [`sort_by_rank`] of at most `LANES = 16 * VECTORS` keys.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn rank_and_place<const VECTORS: usize, const LANES: usize>(
    keys: &mut [u64],
    originals: &mut Vec<u64>,
) {
    use std::arch::x86_64::*;
    let n = keys.len();
    // `taken` counts up to LANES in a byte.
    assert!(n <= LANES && LANES == 16 * VECTORS && LANES <= RANK_SORT_MAX_LEN);
    // Lanes past `n` hold zeros: their ranks are never read, and no real key's rank
    // counts them (ranks count the broadcast keys, all real).
    let mut highs = [0u32; LANES];
    for (high, &key) in highs.iter_mut().zip(keys.iter()) {
        *high = (key >> 32) as u32;
    }
    let mut values = [_mm512_setzero_si512(); VECTORS];
    for (vector, lanes) in values.iter_mut().zip(highs.chunks_exact(16)) {
        // SAFETY: `lanes` holds sixteen `u32`s; unaligned loads are allowed.
        *vector = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) };
    }
    // Each key adds one to the rank of every lane whose high half is above its own.
    let mut ranks = [_mm512_setzero_si512(); VECTORS];
    let one = _mm512_set1_epi32(1);
    for &high in &highs[..n] {
        let broadcast = _mm512_set1_epi32(high as i32);
        for (rank, &value) in ranks.iter_mut().zip(&values) {
            let below = _mm512_cmplt_epu32_mask(broadcast, value);
            *rank = _mm512_mask_add_epi32(*rank, below, *rank, one);
        }
    }
    let mut slots = [0u32; LANES];
    for (lanes, &rank) in slots.chunks_exact_mut(16).zip(&ranks) {
        // SAFETY: `lanes` holds sixteen `u32`s; unaligned stores are allowed.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), rank) };
    }
    originals.clear();
    originals.extend_from_slice(keys);
    // Keys with one high half share its rank and take the slots from there in their
    // order; every slot is below `n`, as `rank` counts keys below this one and `taken`
    // keys before it that are equal.
    let mut taken = [0u8; LANES];
    for (&rank, &key) in slots[..n].iter().zip(originals.iter()) {
        let rank = rank as usize;
        keys[rank + taken[rank] as usize] = key;
        taken[rank] += 1;
    }
}

/// Never called: [`rank_sort_available`] is false off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub(super) unsafe fn sort_by_rank(_: &mut [u64], _: &mut Vec<u64>) {
    unreachable!("rank sort runs only on x86-64")
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn sorts_by_high_halves_keeping_the_order_of_ties(
            halves in prop::collection::vec((any::<u32>(), any::<u32>()), 0..=RANK_SORT_MAX_LEN),
            distinct in prop::sample::select(vec![1u32, 3, 40, u32::MAX]),
        ) {
            if !rank_sort_available() {
                // Nothing to test on this processor (sort_by_value's own tests cover
                // the comparison sort it uses instead).
                return Ok(());
            }
            // One distinct high half, a few, or many: ties must keep their order
            // whatever their low halves.
            let keys: Vec<u64> = halves
                .iter()
                .map(|&(high, low)| ((high % distinct) as u64) << 32 | low as u64)
                .collect();
            let mut sorted = keys.clone();
            // SAFETY: the processor has AVX-512 (checked above).
            unsafe { sort_by_rank(&mut sorted, &mut Vec::new()) };
            let mut expected = keys;
            expected.sort_by_key(|key| key >> 32);
            prop_assert_eq!(sorted, expected);
        }
    }
}
