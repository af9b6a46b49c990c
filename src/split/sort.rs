//! Sorting the (value key, sample) pairs of a node: the step that dominates split search.

/// Below this many keys pattern-defeating quicksort beats the fixed passes of radix sort.
const RADIX_MIN_LEN: usize = 96;

/// Sorts `keys` by their high 32 bits (the projected value's key). Equal values may end
/// up in any order, but always the same order for the same input.
pub fn sort_by_value(keys: &mut [u64], scratch: &mut Vec<u64>) {
    if keys.len() < RADIX_MIN_LEN {
        keys.sort_unstable();
    } else {
        radix_sort_high_half(keys, scratch);
    }
}

/// Least-significant-digit radix sort on bits 32..64, one byte per pass, skipping the
/// passes in which every key has the same byte (common: similar values share their
/// exponent byte).
fn radix_sort_high_half(keys: &mut [u64], scratch: &mut Vec<u64>) {
    let mut histograms = [[0usize; 256]; 4];
    for &key in keys.iter() {
        for (pass, histogram) in histograms.iter_mut().enumerate() {
            histogram[((key >> (32 + 8 * pass)) & 0xff) as usize] += 1;
        }
    }
    scratch.clear();
    scratch.resize(keys.len(), 0);
    let mut in_keys = true;
    for (pass, histogram) in histograms.iter().enumerate() {
        if histogram.contains(&keys.len()) {
            continue;
        }
        let mut offsets = [0usize; 256];
        let mut running = 0;
        for (offset, &count) in offsets.iter_mut().zip(histogram.iter()) {
            *offset = running;
            running += count;
        }
        let (source, target): (&[u64], &mut [u64]) = if in_keys {
            (keys, scratch)
        } else {
            (scratch, keys)
        };
        let shift = 32 + 8 * pass;
        for &key in source {
            let digit = ((key >> shift) & 0xff) as usize;
            target[offsets[digit]] = key;
            offsets[digit] += 1;
        }
        in_keys = !in_keys;
    }
    if !in_keys {
        keys.copy_from_slice(scratch);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn sorts_like_a_comparison_sort(values in prop::collection::vec(any::<u32>(), 0..2000), spread in 0u32..4) {
            // Narrow the values sometimes so that some passes are skipped.
            let keys: Vec<u64> = values
                .iter()
                .enumerate()
                .map(|(i, &v)| ((v >> (8 * spread)) as u64) << 32 | i as u64)
                .collect();
            let mut sorted = keys.clone();
            sort_by_value(&mut sorted, &mut Vec::new());
            let mut expected = keys;
            expected.sort_unstable();
            let high = |k: &Vec<u64>| k.iter().map(|&x| x >> 32).collect::<Vec<_>>();
            prop_assert_eq!(high(&sorted), high(&expected));
            let mut samples: Vec<u64> = sorted.iter().map(|&x| x & 0xffff_ffff).collect();
            samples.sort_unstable();
            prop_assert!(samples.iter().enumerate().all(|(i, &s)| s == i as u64));
        }
    }
}
