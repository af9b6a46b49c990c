//! The projections of plain atoms on rows with missing cells, under
//! [`MissingCells::RescaledPresent`](crate::atoms::MissingCells): the present terms and
//! the present weight summed in one vectorised pass (a mask, not a branch), then
//! rescaled as [`rescaled_present_sum`](crate::atoms::rescaled_present_sum) rescales them, for the row and column paths of
//! [`NodeProjector`](super::NodeProjector).

use super::projection::{CHUNK, LANE_GROUP, ROW_GROUP};
use crate::atoms::{rescale_present_sum, Atom};
use crate::data::Feature;

/// The projections of a plain atom marked in `NodeProjector::rescaled_in_pass` on a
/// group of rows of which some have missing cells: per row, the present terms and the
/// present weight summed as [`rescaled_present_sum`](crate::atoms::rescaled_present_sum) sums them, in one pass, then
/// rescaled to `whole`, the atom's whole weight; the same values bit for bit.
#[inline(always)]
pub(super) fn rescaled_group_sums<T: Feature>(
    atom: Atom<'_>,
    whole: f32,
    group_rows: &[&[T]; ROW_GROUP],
    out: &mut [f32],
) {
    let mut sums = [0.0f32; ROW_GROUP];
    let mut present = [0.0f32; ROW_GROUP];
    for (&index, &weight) in atom.indices.iter().zip(atom.weights) {
        let magnitude = weight.abs();
        // Indexed loops: an iterator adaptor built per term may not be inlined.
        for s in 0..ROW_GROUP {
            // SAFETY: every index is below the rows' length (checked in `project`).
            let cell = unsafe { group_rows[s].get_unchecked(index as usize) }.to_f32();
            add_if_present(&mut sums[s], &mut present[s], weight, magnitude, cell);
        }
    }
    for s in 0..ROW_GROUP {
        out[s] = rescale_present_sum(sums[s], present[s], whole);
    }
}

/// [`rescaled_group_sums`] on one row.
#[inline(always)]
pub(super) fn rescaled_row_sum<T: Feature>(atom: Atom<'_>, whole: f32, row: &[T]) -> f32 {
    let (mut sum, mut present) = (0.0f32, 0.0f32);
    for (&index, &weight) in atom.indices.iter().zip(atom.weights) {
        // SAFETY: every index is below the rows' length (checked in `project`).
        let cell = unsafe { row.get_unchecked(index as usize) }.to_f32();
        add_if_present(&mut sum, &mut present, weight, weight.abs(), cell);
    }
    rescale_present_sum(sum, present, whole)
}

/// [`rescaled_group_sums`] on the column path: lanes `lanes..lanes + LANE_GROUP` of
/// the block, over the atom's `columns`.
#[inline(always)]
pub(super) fn rescaled_lane_sums(
    block: &[f32],
    columns: &[u32],
    weights: &[f32],
    lanes: usize,
    whole: f32,
) -> [f32; LANE_GROUP] {
    let mut sums = [0.0f32; LANE_GROUP];
    let mut present = [0.0f32; LANE_GROUP];
    for (&column, &weight) in columns.iter().zip(weights) {
        let magnitude = weight.abs();
        let cells: &[f32; LANE_GROUP] = block[column as usize * CHUNK + lanes..][..LANE_GROUP]
            .try_into()
            .unwrap();
        for s in 0..LANE_GROUP {
            add_if_present(&mut sums[s], &mut present[s], weight, magnitude, cells[s]);
        }
    }
    for s in 0..LANE_GROUP {
        sums[s] = rescale_present_sum(sums[s], present[s], whole);
    }
    sums
}

/// Adds `weight * cell` to `sum` and `magnitude` to `present` when `cell` is present,
/// `+0.0` to both when it is missing, as [`rescaled_present_sum`](crate::atoms::rescaled_present_sum) does (adding `+0.0`
/// to a sum started from `+0.0` leaves it as it is). A mask rather than a branch: cells
/// are missing at random, and the lanes vectorise.
#[inline(always)]
fn add_if_present(sum: &mut f32, present: &mut f32, weight: f32, magnitude: f32, cell: f32) {
    let keep = (!cell.is_nan() as u32).wrapping_neg();
    *sum += f32::from_bits((weight * cell).to_bits() & keep);
    *present += f32::from_bits(magnitude.to_bits() & keep);
}
