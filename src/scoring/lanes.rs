//! Which rows of a block go left at a split: the split's atom projects all the
//! block's rows together, side by side in vector lanes, each row's sum taken term by
//! term from 0 as `Atom::project` takes it, so that every vector width gives the
//! values (and the sides) a walk of the tree row by row gives. Rows whose sum is
//! missing are projected again by the tree's rule on missing cells, one by one.

use crate::atoms::{rescaled_present_sum, MissingCells};
use crate::data::Feature;
use crate::tree::goes_left;

/// The rows of a block, one bit each.
pub(crate) type Mask = u128;

/// Rows scored together: one bit each of a [`Mask`].
pub(crate) const BLOCK: usize = Mask::BITS as usize;

/// Rows projected together: enough independent sums to keep the floating-point units
/// busy; the float sums skip a group none of whose rows reach a split (the whole sums
/// of bytes take every group: see `left_rows_whole_avx2`).
const LANES: usize = u32::BITS as usize;

/// Most rows of a block reaching a split that are gathered into one vector and
/// summed alone, rather than summed with the other rows of their groups.
const MOST_GATHERED_ROWS: u32 = 8;

/// The bits of one group of [`LANES`] rows.
const LANE_BITS: Mask = u32::MAX as Mask;

/// A cell of a transposed block: a row's value as the walks compare it
/// ([`Feature::to_f32`]), or for rows of bytes the byte itself, a quarter of the
/// memory, which converts to the same `f32`.
pub(crate) trait BlockCell: Copy + Default + Send + Sync + 'static {
    /// The cell of `value`, a value of rows whose cells are `Self`.
    fn of<T: Feature>(value: T) -> Self;
    /// The value as the walks compare it.
    fn to_f32(self) -> f32;
    /// The eight cells from `cells`, as `f32`.
    ///
    /// # Safety
    /// The processor has AVX2, and eight cells from `cells` are readable.
    #[cfg(target_arch = "x86_64")]
    unsafe fn load_8(cells: *const Self) -> std::arch::x86_64::__m256;
    /// The cells at the eight offsets `rows` from `cells`, as `f32`.
    ///
    /// # Safety
    /// The processor has AVX2, and the eight cells are readable.
    #[cfg(target_arch = "x86_64")]
    unsafe fn gather_8(
        cells: *const Self,
        rows: std::arch::x86_64::__m256i,
    ) -> std::arch::x86_64::__m256;
    /// `cells` as bytes, if they are: splits with a
    /// [`whole_limit`](super::layout::whole_limit) then go by whole sums.
    fn as_bytes(cells: &[Self]) -> Option<&[u8]>;
}

impl BlockCell for f32 {
    #[inline(always)]
    fn of<T: Feature>(value: T) -> f32 {
        value.to_f32()
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load_8(cells: *const f32) -> std::arch::x86_64::__m256 {
        // SAFETY: as the caller promises.
        unsafe { std::arch::x86_64::_mm256_loadu_ps(cells) }
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn gather_8(
        cells: *const f32,
        rows: std::arch::x86_64::__m256i,
    ) -> std::arch::x86_64::__m256 {
        // SAFETY: as the caller promises.
        unsafe { std::arch::x86_64::_mm256_i32gather_ps::<4>(cells, rows) }
    }
    #[inline(always)]
    fn as_bytes(_: &[f32]) -> Option<&[u8]> {
        None
    }
}

impl BlockCell for u8 {
    #[inline(always)]
    fn of<T: Feature>(value: T) -> u8 {
        value.to_i32() as u8
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f32::from(self)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load_8(cells: *const u8) -> std::arch::x86_64::__m256 {
        use std::arch::x86_64::*;
        // SAFETY: as the caller promises; whole numbers below 2^24 convert exactly.
        unsafe { _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(cells.cast()))) }
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn gather_8(
        cells: *const u8,
        rows: std::arch::x86_64::__m256i,
    ) -> std::arch::x86_64::__m256 {
        use std::arch::x86_64::*;
        // A hardware gather reads four bytes a row, past the cells for the block's
        // last rows: the bytes are read one by one instead.
        let mut offsets = [0i32; 8];
        // SAFETY: as the caller promises, and `offsets` holds eight `i32`.
        unsafe {
            _mm256_storeu_si256(offsets.as_mut_ptr().cast(), rows);
            let bytes = offsets.map(|row| i32::from(*cells.add(row as usize)));
            _mm256_cvtepi32_ps(_mm256_loadu_si256(bytes.as_ptr().cast()))
        }
    }
    #[inline(always)]
    fn as_bytes(cells: &[u8]) -> Option<&[u8]> {
        Some(cells)
    }
}

/// Whether the processor has AVX2.
pub(crate) fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// [`left_rows`] in the widest vectors the processor has (`avx2`: whether it has
/// AVX2, as [`has_avx2`] says), rows whose sum is missing then sent by `missing`'s
/// projection.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn left_rows_fastest<C: BlockCell>(
    block: &[C],
    avx2: bool,
    columns: &[u32],
    weights: &[f32],
    threshold: f32,
    missing_left: bool,
    missing: MissingCells,
    rows: Mask,
) -> Mask {
    let (mut left, missing_sums) = 'sides: {
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the processor has AVX2.
            break 'sides unsafe {
                if rows.count_ones() <= MOST_GATHERED_ROWS {
                    left_rows_gathered_avx2(block, columns, weights, threshold, missing_left, rows)
                } else {
                    left_rows_avx2(block, columns, weights, threshold, missing_left, rows)
                }
            };
        }
        let _ = avx2;
        left_rows(block, columns, weights, threshold, missing_left, rows)
    };
    let mut pending = missing_sums & rows;
    if missing == MissingCells::RescaledPresent {
        while pending != 0 {
            let r = pending.trailing_zeros() as usize;
            let terms = weights.iter().zip(columns);
            let value = rescaled_present_sum(
                terms.map(|(&w, &c)| (w, block[c as usize * BLOCK + r].to_f32())),
            );
            let bit: Mask = 1 << r;
            left = if goes_left(value, threshold, missing_left) {
                left | bit
            } else {
                left & !bit
            };
            pending &= pending - 1;
        }
    }
    left
}

/// The rows among `rows` whose projection on the terms (`columns` of the block,
/// `weights`) goes left of `threshold` (as [`goes_left`] says), and those whose
/// projection is missing (NaN); other bits are unspecified.
#[inline]
fn left_rows<C: BlockCell>(
    block: &[C],
    columns: &[u32],
    weights: &[f32],
    threshold: f32,
    missing_left: bool,
    rows: Mask,
) -> (Mask, Mask) {
    let mut left: Mask = 0;
    let mut missing: Mask = 0;
    for group in 0..BLOCK / LANES {
        let shift = group * LANES;
        if (rows >> shift) & LANE_BITS == 0 {
            continue;
        }
        // Each lane sums its row's terms in the atom's order from 0, as
        // `Atom::project` does, so that scoring sees the values training saw.
        let mut sums = [0.0f32; LANES];
        for (&column, &weight) in columns.iter().zip(weights) {
            let values = &block[column as usize * BLOCK + shift..][..LANES];
            for (sum, &value) in sums.iter_mut().zip(values) {
                *sum += weight * value.to_f32();
            }
        }
        // The branch on `missing_left` taken once for all lanes, so that each loop
        // compiles to vector comparisons.
        let bits = if missing_left {
            lane_bits(&sums, |sum| goes_left(sum, threshold, true))
        } else {
            lane_bits(&sums, |sum| goes_left(sum, threshold, false))
        };
        left |= Mask::from(bits) << shift;
        missing |= Mask::from(lane_bits(&sums, f32::is_nan)) << shift;
    }
    (left, missing)
}

/// One bit per lane: whether `goes_left` holds for its sum.
#[inline(always)]
fn lane_bits(sums: &[f32; LANES], goes_left: impl Fn(f32) -> bool) -> u32 {
    let mut bits = 0;
    for (lane, &sum) in sums.iter().enumerate() {
        bits |= u32::from(goes_left(sum)) << lane;
    }
    bits
}

/// [`left_rows`] in AVX2 vectors, eight rows per instruction where the compiler's
/// own vectors hold four: the same products and sums in the same order, so the same
/// bits. Callable only where the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn left_rows_avx2<C: BlockCell>(
    block: &[C],
    columns: &[u32],
    weights: &[f32],
    threshold: f32,
    missing_left: bool,
    rows: Mask,
) -> (Mask, Mask) {
    use std::arch::x86_64::*;
    const VECTOR: usize = 8;
    let mut left: Mask = 0;
    let mut missing: Mask = 0;
    for group in 0..BLOCK / LANES {
        let shift = group * LANES;
        if (rows >> shift) & LANE_BITS == 0 {
            continue;
        }
        let mut sums = [_mm256_setzero_ps(); LANES / VECTOR];
        // Indices rather than iterator adapters: builds without cross-crate inlining
        // (the tests' profile) would call the adapters in this innermost loop.
        for term in 0..columns.len().min(weights.len()) {
            let values = &block[columns[term] as usize * BLOCK + shift..][..LANES];
            let weight = _mm256_set1_ps(weights[term]);
            for (k, sum) in sums.iter_mut().enumerate() {
                // SAFETY: `values` holds `LANES` cells, of which these eight, and the
                // processor has AVX2.
                let values = unsafe { C::load_8(values.as_ptr().add(k * VECTOR)) };
                *sum = _mm256_add_ps(*sum, _mm256_mul_ps(weight, values));
            }
        }
        let threshold = _mm256_set1_ps(threshold);
        let mut bits = 0u32;
        let mut missing_bits = 0u32;
        for (k, &sum) in sums.iter().enumerate() {
            let (goes, nan) = sides_8(sum, threshold, missing_left);
            bits |= goes << (k * VECTOR);
            missing_bits |= nan << (k * VECTOR);
        }
        left |= Mask::from(bits) << shift;
        missing |= Mask::from(missing_bits) << shift;
    }
    (left, missing)
}

/// One bit per lane of `sums`: whether the sum goes left of `threshold` (as
/// [`goes_left`] says: not above it, NaN included, when missing projections go left;
/// at most it, NaN excluded, otherwise), and whether it is missing (NaN).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn sides_8(
    sums: std::arch::x86_64::__m256,
    threshold: std::arch::x86_64::__m256,
    missing_left: bool,
) -> (u32, u32) {
    use std::arch::x86_64::*;
    let goes = if missing_left {
        _mm256_cmp_ps::<_CMP_NGT_UQ>(sums, threshold)
    } else {
        _mm256_cmp_ps::<_CMP_LE_OQ>(sums, threshold)
    };
    let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(sums, sums);
    (
        _mm256_movemask_ps(goes) as u32,
        _mm256_movemask_ps(nan) as u32,
    )
}

/// [`left_rows`] for at most [`MOST_GATHERED_ROWS`] rows, gathered into the lanes of
/// one AVX2 vector: the same products and sums in the same order, so the same bits,
/// without summing the rows of their groups that no longer reach the split. Callable
/// only where the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn left_rows_gathered_avx2<C: BlockCell>(
    block: &[C],
    columns: &[u32],
    weights: &[f32],
    threshold: f32,
    missing_left: bool,
    rows: Mask,
) -> (Mask, Mask) {
    use std::arch::x86_64::*;
    // The rows' indices in the block; lanes beyond them repeat the first.
    let mut indices = [rows.trailing_zeros() as i32; 8];
    let mut pending = rows;
    let mut n_rows = 0;
    while pending != 0 && n_rows < indices.len() {
        indices[n_rows] = pending.trailing_zeros() as i32;
        n_rows += 1;
        pending &= pending - 1;
    }
    // SAFETY: `indices` holds eight `i32`.
    let offsets = unsafe { _mm256_loadu_si256(indices.as_ptr().cast()) };
    let mut sums = _mm256_setzero_ps();
    for term in 0..columns.len().min(weights.len()) {
        let cells = &block[columns[term] as usize * BLOCK..][..BLOCK];
        // SAFETY: every offset is a row of the block, below `BLOCK`.
        let values = unsafe { C::gather_8(cells.as_ptr(), offsets) };
        sums = _mm256_add_ps(sums, _mm256_mul_ps(_mm256_set1_ps(weights[term]), values));
    }
    let (goes, nan) = sides_8(sums, _mm256_set1_ps(threshold), missing_left);
    let (mut left, mut missing): (Mask, Mask) = (0, 0);
    for (lane, &row) in indices[..n_rows].iter().enumerate() {
        left |= Mask::from(goes >> lane & 1) << row;
        missing |= Mask::from(nan >> lane & 1) << row;
    }
    (left, missing)
}

/// The rows among `rows` of a block of bytes whose whole sum of the terms (`columns`
/// of the block, whole `weights`) is at most `limit`: for a split with a
/// [`whole_limit`](super::layout::whole_limit), the rows a float projection sends
/// left; other bits are unspecified. In AVX2 (`avx2`, as [`has_avx2`] says) sixteen
/// rows and two terms an instruction, for every row of the block.
pub(crate) fn left_rows_whole(
    block: &[u8],
    avx2: bool,
    columns: &[u32],
    weights: &[i16],
    limit: i16,
    rows: Mask,
) -> Mask {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        // SAFETY: the processor has AVX2.
        return unsafe { left_rows_whole_avx2(block, columns, weights, limit) };
    }
    let _ = avx2;
    let mut left: Mask = 0;
    for group in 0..BLOCK / LANES {
        let shift = group * LANES;
        if (rows >> shift) & LANE_BITS == 0 {
            continue;
        }
        let mut sums = [0i32; LANES];
        for (&column, &weight) in columns.iter().zip(weights) {
            let values = &block[column as usize * BLOCK + shift..][..LANES];
            for (sum, &value) in sums.iter_mut().zip(values) {
                *sum += i32::from(weight) * i32::from(value);
            }
        }
        let mut bits = 0u32;
        for (lane, &sum) in sums.iter().enumerate() {
            bits |= u32::from(sum <= i32::from(limit)) << lane;
        }
        left |= Mask::from(bits) << shift;
    }
    left
}

/// [`left_rows_whole`] in AVX2 vectors, terms taken two at a time: the two terms'
/// bytes interleaved, each pair of bytes multiplied by the pair of weights (signed
/// bytes, as `whole_limit` ensures) and added in one instruction into sixteen `i16`
/// sums. No sum, partial or pairwise, leaves `i16` (`whole_limit` bounds the sum of
/// every weight's reach), so nothing saturates and the sums are the whole sums. All
/// of the block's rows are summed, term after term, whichever reach the split: a
/// branch per group of rows and per term of each costs more, mispredicted, than the
/// sums of the groups no row needs. Callable only where the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn left_rows_whole_avx2(block: &[u8], columns: &[u32], weights: &[i16], limit: i16) -> Mask {
    use std::arch::x86_64::*;
    const GROUPS: usize = BLOCK / LANES;
    let n_terms = columns.len().min(weights.len());
    let column = |term: usize| {
        let column = &block[columns[term] as usize * BLOCK..][..BLOCK];
        let column: [__m256i; GROUPS] = std::array::from_fn(|group| {
            // SAFETY: `column` holds `BLOCK` bytes, `LANES` (32) from each group's.
            unsafe { _mm256_loadu_si256(column.as_ptr().add(group * LANES).cast()) }
        });
        column
    };
    // Interleaving bytes within each 128-bit half puts rows 0-7 and 16-23 of a
    // group in its `low` sums, rows 8-15 and 24-31 in its `high` ones.
    let mut low = [_mm256_setzero_si256(); GROUPS];
    let mut high = [_mm256_setzero_si256(); GROUPS];
    let mut term = 0;
    while term < n_terms {
        let (second, second_weight) = if term + 1 < n_terms {
            (column(term + 1), weights[term + 1])
        } else {
            ([_mm256_setzero_si256(); GROUPS], 0)
        };
        let first = column(term);
        // The low byte of each 16-bit lane multiplies the first term's byte, the
        // high byte the second's.
        let weight = _mm256_set1_epi16((second_weight << 8) | (weights[term] & 0xff));
        for group in 0..GROUPS {
            let pairs_low = _mm256_unpacklo_epi8(first[group], second[group]);
            let pairs_high = _mm256_unpackhi_epi8(first[group], second[group]);
            low[group] = _mm256_add_epi16(low[group], _mm256_maddubs_epi16(pairs_low, weight));
            high[group] = _mm256_add_epi16(high[group], _mm256_maddubs_epi16(pairs_high, weight));
        }
        term += 2;
    }
    let limit = _mm256_set1_epi16(limit);
    let mut left: Mask = 0;
    for group in 0..GROUPS {
        // All ones where a sum is above the limit (goes right), packed to bytes,
        // which puts each half's rows back in order: 0-7, 8-15 | 16-23, 24-31.
        let right = _mm256_packs_epi16(
            _mm256_cmpgt_epi16(low[group], limit),
            _mm256_cmpgt_epi16(high[group], limit),
        );
        let right_bits = _mm256_movemask_epi8(right) as u32;
        left |= Mask::from(!right_bits) << (group * LANES);
    }
    left
}

#[cfg(test)]
mod tests;
