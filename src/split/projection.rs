use crate::atoms::AtomSet;
use crate::data::{Feature, Rows};

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

/// Samples ahead of the one being projected whose row cells are requested early: a
/// node's samples sit at scattered rows, so each row is a fresh trip to memory.
const PREFETCH_DISTANCE: usize = 4;

/// Asks the cache for the cells of `row` that the atoms read first and last (an atom
/// spans at most a few cache lines).
#[inline(always)]
fn prefetch_atoms<T>(row: &[T], atoms: &AtomSet) {
    #[cfg(target_arch = "x86_64")]
    for a in 0..atoms.len() {
        let atom = atoms.get(a);
        for &index in [atom.indices.first(), atom.indices.last()]
            .into_iter()
            .flatten()
        {
            // SAFETY: a prefetch only hints the cache; the address is inside `row`.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(row.as_ptr().add(index as usize) as *const i8);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (row, atoms);
}

/// Writes, for every atom `a` and node sample `i`, the sort key of the projection at
/// `keys[a * samples.len() + i]`: the projection's key in the high half, the sample's
/// local id in the low half. The loop runs over samples outside and atoms inside, so
/// each row is fetched from memory once per node rather than once per atom.
pub fn project_sort_keys<T: Feature>(
    rows: &Rows<'_, T>,
    row_of: &[u32],
    samples: &[u32],
    atoms: &AtomSet,
    keys: &mut Vec<u64>,
) {
    let n = samples.len();
    keys.clear();
    keys.resize(n * atoms.len(), 0);
    for (i, &sample) in samples.iter().enumerate() {
        if let Some(&ahead) = samples.get(i + PREFETCH_DISTANCE) {
            prefetch_atoms(rows.row(row_of[ahead as usize] as usize), atoms);
        }
        let row = rows.row(row_of[sample as usize] as usize);
        for a in 0..atoms.len() {
            let value = atoms.get(a).project(row);
            keys[a * n + i] = ((sort_key(value) as u64) << 32) | sample as u64;
        }
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

    #[test]
    fn signed_zeros_share_a_key() {
        assert_eq!(sort_key(-0.0), sort_key(0.0));
    }
}
