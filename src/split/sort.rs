//! Sorting the (value key, sample) pairs of a node: the step that dominates split search.

use super::counted_scan::{count_values, whole_offsets, ValueTable};
use super::rank_sort::{rank_sort_available, sort_by_rank, RANK_SORT_MAX_LEN};
use super::scan::{position_key, position_key_or_missing};

/// Maps a projected value to an integer with the same order, so that (value, sample)
/// pairs sort as plain `u64`s, faster than comparing floats. `-0.0` is folded onto
/// `0.0` first: equal values must get equal keys.
#[inline(always)]
pub fn sort_key(value: f32) -> u32 {
    let bits = (value + 0.0).to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The value a key of [`sort_key`] came from.
#[inline(always)]
pub fn key_value(key: u32) -> f32 {
    let bits = if key & 0x8000_0000 != 0 {
        key & 0x7fff_ffff
    } else {
        !key
    };
    f32::from_bits(bits)
}

/// Below this many keys pattern-defeating quicksort beats the fixed passes of radix
/// sort (four over the keys whatever their number), as measured in benches/profiles.md
/// ("Sorting float projections"); where the crossover lies depends on the processor.
const RADIX_MIN_LEN: usize = 768;

/// Sorts `keys` by their high 32 bits (the projected value's key), keeping the order of
/// keys with equal high halves where rank or radix sort runs: keys whose low halves
/// ascend (a sample's position) come out in the order `keys.sort_unstable()` gives,
/// whichever sort runs, so every caller's result is the same for any length and
/// processor. `scratch` is working space.
pub fn sort_by_value(keys: &mut [u64], scratch: &mut Vec<u64>) {
    if keys.len() <= RANK_SORT_MAX_LEN && rank_sort_available() {
        // SAFETY: the processor has the instructions (checked just now).
        unsafe { sort_by_rank(keys, scratch) };
    } else if keys.len() < RADIX_MIN_LEN {
        keys.sort_unstable();
    } else {
        radix_sort_high_half(keys, scratch);
    }
}

/// Stable least-significant-digit radix sort on bits 32..64, one byte per pass,
/// skipping the passes in which every key has the same byte (common: similar values
/// share their exponent byte). Each pass moves the two halves of the keys side by side,
/// each with its own next slot per byte: runs of one byte (the exponent's) would
/// otherwise chain every move on the store of the one before.
fn radix_sort_high_half(keys: &mut [u64], scratch: &mut Vec<u64>) {
    let n = keys.len();
    assert!(n <= u32::MAX as usize, "radix sort counts keys in u32");
    let mut totals = [[0u32; 256]; 4];
    for &key in keys.iter() {
        for (pass, total) in totals.iter_mut().enumerate() {
            total[((key >> (32 + 8 * pass)) & 0xff) as usize] += 1;
        }
    }
    scratch.clear();
    scratch.resize(n, 0);
    let half = n / 2;
    let mut in_keys = true;
    for (pass, total) in totals.iter().enumerate() {
        if total.contains(&(n as u32)) {
            continue;
        }
        let (source, target): (&[u64], &mut [u64]) = if in_keys {
            (keys, scratch)
        } else {
            (scratch, keys)
        };
        let shift = 32 + 8 * pass;
        let digit = |key: u64| ((key >> shift) & 0xff) as usize;
        let (first, second) = source.split_at(half);
        let mut first_counts = [0u32; 256];
        for &key in first {
            first_counts[digit(key)] += 1;
        }
        // A byte's slots: the first half's keys with it, then the second half's.
        let (mut first_next, mut second_next) = ([0u32; 256], [0u32; 256]);
        let mut running = 0;
        for byte in 0..256 {
            first_next[byte] = running;
            second_next[byte] = running + first_counts[byte];
            running += total[byte];
        }
        let (paired, last) = second.split_at(half);
        // SAFETY: a byte's next slots start at the keys with a smaller byte and each
        // take one step per key with that byte, so every slot is below `n`
        // (`running` ends at `n`): the counts are of these very keys.
        unsafe {
            for (&a, &b) in first.iter().zip(paired) {
                let (byte_a, byte_b) = (digit(a), digit(b));
                let (slot_a, slot_b) = (first_next[byte_a], second_next[byte_b]);
                *target.get_unchecked_mut(slot_a as usize) = a;
                *target.get_unchecked_mut(slot_b as usize) = b;
                first_next[byte_a] = slot_a + 1;
                second_next[byte_b] = slot_b + 1;
            }
        }
        for &b in last {
            target[second_next[digit(b)] as usize] = b;
        }
        in_keys = !in_keys;
    }
    if !in_keys {
        keys.copy_from_slice(scratch);
    }
}

/// Writes the [`position_key`]s of `values` (in node order) into `keys`, sorted; when
/// `MISSING`, missing values get the highest key and so come last.
pub(super) fn sort_generally<const MISSING: bool>(
    values: &[f32],
    keys: &mut Vec<u64>,
    sort_buffer: &mut Vec<u64>,
) {
    keys.clear();
    keys.extend(values.iter().enumerate().map(|(position, &value)| {
        if MISSING {
            position_key_or_missing(value, position as u32)
        } else {
            position_key(value, position as u32)
        }
    }));
    sort_by_value(keys, sort_buffer);
}

/// Writes the [`position_key`]s of whole `values` (in node order, all in
/// `low..low + span`) into `keys` in ascending order of value, by counting sort: one
/// pass to count each value, one to place each key, whatever the number of samples.
pub(super) fn sort_whole_values(
    values: &[f32],
    low: f32,
    span: usize,
    table: &mut ValueTable,
    keys: &mut Vec<u64>,
) {
    whole_offsets(values, low, span, &mut table.offsets);
    sort_whole_offsets(values, span, table, keys);
}

/// [`sort_whole_values`] of `values` whose offsets above their `low` are in
/// `table.offsets` already.
pub(super) fn sort_whole_offsets(
    values: &[f32],
    span: usize,
    table: &mut ValueTable,
    keys: &mut Vec<u64>,
) {
    // `starts[v]` counts value `v`, then becomes its first slot in `keys`: the running
    // total stays in a register, not in the table (an addition waiting on a store and
    // a load per value).
    count_values(&table.offsets, span, &mut table.counts);
    let starts = &mut table.counts;
    let mut next = 0;
    for start in starts.iter_mut() {
        let count = *start;
        *start = next;
        next += count;
    }
    keys.clear();
    keys.resize(values.len(), 0);
    for (position, (&offset, &value)) in table.offsets.iter().zip(values).enumerate() {
        let slot = &mut starts[offset as usize];
        keys[*slot as usize] = position_key(value, position as u32);
        *slot += 1;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn sort_keys_order_like_the_values(a in any::<f32>(), b in any::<f32>()) {
            prop_assume!(a.is_finite() && b.is_finite());
            prop_assert_eq!(sort_key(a).cmp(&sort_key(b)), a.partial_cmp(&b).unwrap());
            prop_assert_eq!(key_value(sort_key(a)), a + 0.0);
        }
    }

    proptest! {
        #[test]
        fn sorts_like_a_comparison_sort(values in prop::collection::vec(any::<u32>(), 0..3000), spread in 0u32..4) {
            // Narrow the values sometimes so that some passes are skipped.
            let keys: Vec<u64> = values
                .iter()
                .enumerate()
                .map(|(i, &v)| ((v >> (8 * spread)) as u64) << 32 | i as u64)
                .collect();
            let mut sorted = keys.clone();
            sort_by_value(&mut sorted, &mut Vec::new());
            // Positions ascend in the input, so equal values keep their order in both
            // sorts: the keys' full order.
            let mut expected = keys;
            expected.sort_unstable();
            prop_assert_eq!(sorted, expected);
        }
    }

    proptest! {
        #[test]
        fn counting_sort_orders_whole_values_as_their_keys_sort(
            values in prop::collection::vec(0u32..50, 1..300),
            low in prop::sample::select(vec![0.0f32, -1000.0, 70_000.0]),
        ) {
            // Equal values keep their node order, as the position in the key's low
            // half orders them.
            let values: Vec<f32> = values.iter().map(|&v| low + v as f32).collect();
            let span = values.iter().map(|&v| (v - low) as usize).max().unwrap() + 1;
            let mut keys = Vec::new();
            sort_whole_values(&values, low, span, &mut ValueTable::default(), &mut keys);
            let mut expected: Vec<u64> = values
                .iter()
                .enumerate()
                .map(|(position, &value)| position_key(value, position as u32))
                .collect();
            expected.sort_unstable();
            prop_assert_eq!(keys, expected);
        }
    }

    #[test]
    fn signed_zeros_share_a_key() {
        assert_eq!(sort_key(-0.0), sort_key(0.0));
    }
}
