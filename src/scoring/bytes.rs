//! Rows of whole numbers from 0 to 255 (pixels, counts) walked as bytes: a row takes a
//! quarter of the memory of its floats, so that the rows a walk reads again tree after
//! tree stay in cache. A byte's [`Feature::to_f32`] is the float it came from, and the
//! walks read values only through `to_f32`, so every projection, and every leaf
//! reached, is the same.

use std::cell::Cell;

use super::layout::ScoringNode;
use crate::data::{Feature, Rows};
use crate::tree::goes_left;

thread_local! {
    /// The bytes of the rows a thread walks last, kept for its next rows.
    static BYTES: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Calls `walk` with `rows` as bytes when every value of `rows` is, as the walks read
/// it ([`Feature::to_f32`]), a whole number from 0 to 255 (`-0.0` excluded, so that
/// each byte is its value bit for bit), and returns `true`; returns `false` without
/// calling it otherwise, having stopped at the first row that is not.
pub(super) fn walk_as_bytes<T: Feature>(
    rows: &Rows<'_, T>,
    walk: impl FnOnce(&Rows<'_, u8>),
) -> bool {
    let mut bytes = BYTES.take();
    bytes.resize(rows.n_samples * rows.n_features, 0);
    let all_bytes = bytes
        .chunks_exact_mut(rows.n_features)
        .enumerate()
        .all(|(i, row_bytes)| {
            // A fold without early exit within a row, so that it vectorises.
            let values = row_bytes.iter_mut().zip(rows.row(i));
            values.fold(true, |all, (byte, &value)| {
                let is_byte;
                (*byte, is_byte) = to_byte(value);
                all & is_byte
            })
        });
    if all_bytes {
        walk(&Rows::from_slice(&bytes, rows.n_features));
    }
    BYTES.set(bytes);
    all_bytes
}

/// `value`'s byte, and whether it reads as that whole number from 0 to 255.
#[inline(always)]
fn to_byte<T: Feature>(value: T) -> (u8, bool) {
    // Below 2^23, adding 2^23 rounds to a whole number, held in the low bits.
    const SHIFT: f32 = 8_388_608.0;
    let value = value.to_f32();
    let shifted = value + SHIFT;
    let whole = shifted - SHIFT == value;
    // NaN fails the comparison; -0.0 and other negatives have the sign bit.
    let is_byte = whole & (value <= 255.0) & (value.to_bits() >> 31 == 0);
    (shifted.to_bits() as u8, is_byte)
}

/// [`ByteNode::feature`] of a leaf, whose slot is in [`ByteNode::right`].
pub(super) const BYTE_LEAF: u16 = u16::MAX;
/// [`ByteNode::feature`] of a split the byte walk reads from the layout's
/// [`ScoringNode`]: several terms, a pooled atom, a feature beyond `u16`, or a split
/// whose side no byte comparison gives.
pub(super) const BYTE_GENERAL: u16 = u16::MAX - 1;

/// A node as the walk of byte rows reads it, in 8 bytes: a single-feature split
/// becomes a comparison of the byte itself, exact for every byte (see
/// [`ByteNode::of`]). A row goes left when `row[feature] ^ flip <= limit`
/// ([`ByteNode::child`]).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(8))]
pub(super) struct ByteNode {
    pub(super) right: u32,
    pub(super) feature: u16,
    pub(super) flip: u8,
    pub(super) limit: u8,
}

impl ByteNode {
    /// `node` for the walk of byte rows. A split on `weight * x` sends byte `x` left
    /// when `fl(0 + fl(weight * x)) <= threshold`; rounding keeps order, so for a
    /// finite `weight >= 0` the bytes going left are those below some count `c`, and
    /// for `weight < 0` those from some `s` up (taken as `255 - x <= 255 - s`, which
    /// `flip` gives). Each bound is found by a binary search on the float comparison
    /// itself, so each byte goes where the float walk sends it.
    pub(super) fn of(node: &ScoringNode) -> ByteNode {
        let general = ByteNode {
            right: 0,
            feature: BYTE_GENERAL,
            flip: 0,
            limit: 0,
        };
        match *node {
            ScoringNode::SplitOnFeature {
                right,
                threshold,
                feature,
                weight,
                missing_left,
                ..
            } if feature < u32::from(BYTE_GENERAL) && weight.is_finite() => {
                // The sum `Atom::project` forms for a one-term atom; never missing.
                let left = |x: u16| goes_left(0.0 + weight * f32::from(x), threshold, missing_left);
                let (flip, limit) = if weight.is_sign_negative() {
                    // The first byte that goes left; every one above goes too.
                    let from = partition_point(|x| !left(x));
                    (u8::MAX, u8::try_from(from).ok().map(|from| u8::MAX - from))
                } else {
                    // The number of bytes that go left, all those below it.
                    let below = partition_point(left);
                    (0, below.checked_sub(1).map(|last| last as u8))
                };
                match limit {
                    Some(limit) => ByteNode {
                        right,
                        feature: feature as u16,
                        flip,
                        limit,
                    },
                    // No byte goes left: no comparison says so.
                    None => general,
                }
            }
            ScoringNode::Leaf { slot } => ByteNode {
                right: slot,
                feature: BYTE_LEAF,
                ..general
            },
            _ => general,
        }
    }

    /// The child `byte` goes to from this split, node `id` of its tree. Chosen without
    /// a branch: a split sends rows either way about as often, and a mispredicted
    /// branch costs more than the rest of the step. (The compiler turns selects whose
    /// condition comes from a load in a loop into branches; a conditional move
    /// written out stays one.)
    #[inline(always)]
    pub(super) fn child(self, id: u32, byte: u8) -> u32 {
        #[cfg(target_arch = "x86_64")]
        {
            let mut child = self.right;
            // SAFETY: a comparison and a conditional move between registers.
            unsafe {
                std::arch::asm!(
                    "cmp {key}, {limit}",
                    "cmovbe {child:e}, {left:e}",
                    key = in(reg_byte) byte ^ self.flip,
                    limit = in(reg_byte) self.limit,
                    left = in(reg) id + 1,
                    child = inout(reg) child,
                    options(pure, nomem, nostack),
                );
            }
            child
        }
        #[cfg(not(target_arch = "x86_64"))]
        if byte ^ self.flip <= self.limit {
            id + 1
        } else {
            self.right
        }
    }
}

/// The first of the bytes 0..=255 for which `holds` fails (256 if none does), for a
/// `holds` that holds on the bytes below some bound and fails from it on.
fn partition_point(holds: impl Fn(u16) -> bool) -> u16 {
    let (mut low, mut high) = (0u16, 256u16);
    while low < high {
        let middle = (low + high) / 2;
        if holds(middle) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    low
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A split on `weight * x[2]`.
    fn split(threshold: f32, weight: f32, missing_left: bool) -> ScoringNode {
        ScoringNode::SplitOnFeature {
            right: 7,
            threshold,
            feature: 2,
            weight,
            missing_left,
            whole: None,
        }
    }

    proptest! {
        #[test]
        fn each_byte_goes_where_its_float_goes(
            // Thresholds near whole numbers and halves, around and beyond 0..=255;
            // weights of either sign, whole or not, and zero.
            threshold in (-600i32..600).prop_map(|t| t as f32 * 0.5),
            nudge in prop::sample::select(vec![0.0f32, 1e-3, -1e-3]),
            weight in prop::sample::select(vec![
                1.0f32, -1.0, 2.0, -3.0, 0.5, -0.25, 0.1, -0.7, 1e-30, 0.0, -0.0,
            ]),
            missing_left: bool,
        ) {
            let threshold = threshold + nudge;
            let node = ByteNode::of(&split(threshold, weight, missing_left));
            let float_left = |x: u8| goes_left(0.0 + weight * f32::from(x), threshold, missing_left);
            if node.feature == BYTE_GENERAL {
                // Only a split that sends no byte left is left to the float walk.
                prop_assert!((0..=255u8).all(|x| !float_left(x)));
            } else {
                prop_assert_eq!((node.feature, node.right), (2, 7));
                for x in 0..=255u8 {
                    let left = node.child(4, x) == 5;
                    prop_assert_eq!(left, float_left(x), "byte {}", x);
                }
            }
        }
    }

    #[test]
    fn splits_bytes_cannot_take_are_left_to_the_float_walk() {
        for weight in [f32::INFINITY, f32::NAN] {
            assert_eq!(
                ByteNode::of(&split(3.0, weight, true)).feature,
                BYTE_GENERAL
            );
        }
        let wide = ScoringNode::SplitOnFeature {
            right: 1,
            threshold: 0.0,
            feature: 70_000,
            weight: 1.0,
            missing_left: false,
            whole: None,
        };
        assert_eq!(ByteNode::of(&wide).feature, BYTE_GENERAL);
        let leaf = ByteNode::of(&ScoringNode::Leaf { slot: 9 });
        assert_eq!((leaf.feature, leaf.right), (BYTE_LEAF, 9));
    }

    /// The bytes `walk_as_bytes` walks for `values` (rows of `n_features`), if any.
    fn walked_bytes<T: Feature>(values: &[T], n_features: usize) -> Option<Vec<u8>> {
        let mut walked = None;
        let rows = Rows::from_slice(values, n_features);
        let is_bytes = walk_as_bytes(&rows, |bytes| {
            walked = Some(
                (0..bytes.n_samples)
                    .flat_map(|i| bytes.row(i).to_vec())
                    .collect(),
            )
        });
        assert_eq!(is_bytes, walked.is_some());
        walked
    }

    #[test]
    fn only_whole_values_from_0_to_255_are_walked_as_bytes() {
        let values = [0.0f32, 1.0, 17.0, 128.0, 254.0, 255.0];
        let bytes = vec![0, 1, 17, 128, 254, 255];
        assert_eq!(walked_bytes(&values, 3), Some(bytes.clone()));
        for bad in [
            -0.0,
            -1.0,
            0.5,
            254.5,
            255.5,
            256.0,
            1e-45,
            8_388_608.0,
            f32::NAN,
        ] {
            for at in [0, 4] {
                let mut values = values;
                values[at] = bad;
                assert_eq!(walked_bytes(&values, 3), None, "{bad} at {at}");
            }
        }
        // f64 values are read through `to_f32`: what the walks compare.
        let wide: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
        assert_eq!(walked_bytes(&wide, 2), Some(bytes));
        assert_eq!(walked_bytes(&[3.0f64, 200.25], 2), None);
    }
}
