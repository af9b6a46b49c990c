use proptest::prelude::*;

use super::super::layout::whole_limit;
use super::*;

/// The rows of `rows` that go left, each row's projection summed term by term
/// as `Atom::project` does, missing cells treated by `missing`.
fn walked_left_rows(
    block: &[f32],
    columns: &[u32],
    weights: &[f32],
    threshold: f32,
    missing_left: bool,
    missing: MissingCells,
    rows: Mask,
) -> Mask {
    (0..BLOCK)
        .filter(|&r| rows >> r & 1 == 1)
        .filter(|&r| {
            let mut sum = 0.0f32;
            for (&column, &weight) in columns.iter().zip(weights) {
                sum += weight * block[column as usize * BLOCK + r];
            }
            let terms = weights.iter().zip(columns);
            let sum = missing.resolve(
                sum,
                terms.map(|(&w, &c)| (w, block[c as usize * BLOCK + r])),
            );
            goes_left(sum, threshold, missing_left)
        })
        .fold(0, |left, r| left | 1 << r)
}

/// The mask of the rows `rows` of a block.
fn mask_of(rows: &[usize]) -> Mask {
    rows.iter().fold(0, |mask, &r| mask | 1 << r)
}

/// Whether [`left_rows_fastest`], at every vector width the processor has, sends the
/// rows of `rows` that a walk sends left (the block's cells as the walk reads them in
/// `floats`).
#[allow(clippy::too_many_arguments)]
fn every_width_sends_the_walked_rows<C: BlockCell>(
    cells: &[C],
    floats: &[f32],
    columns: &[u32],
    weights: &[f32],
    threshold: f32,
    missing_left: bool,
    missing: MissingCells,
    rows: Mask,
) -> Result<Mask, TestCaseError> {
    let walked = walked_left_rows(
        floats,
        columns,
        weights,
        threshold,
        missing_left,
        missing,
        rows,
    );
    for avx2 in [false, has_avx2()] {
        let fastest = left_rows_fastest(
            cells,
            avx2,
            columns,
            weights,
            threshold,
            missing_left,
            missing,
            rows,
        );
        prop_assert_eq!(fastest & rows, walked);
    }
    Ok(walked)
}

proptest! {
    #[test]
    fn every_vector_width_sends_the_rows_a_walk_sends_left(
        // Few distinct values, so that sums meet the threshold; NaN among them.
        cells in prop::collection::vec(0usize..6, 3 * BLOCK),
        terms in prop::collection::vec((0u32..3, -2i8..=2), 1..6),
        threshold in -3i8..=3,
        missing_left: bool,
        many_rows: u128,
        // As few rows as a split deep in a tree sees, gathered into one vector.
        few_rows in prop::collection::vec(0..BLOCK, 1..=MOST_GATHERED_ROWS as usize + 1),
    ) {
        let values = [0.0, 1.0, -1.0, 0.5, 2.0, f32::NAN];
        let block: Vec<f32> = cells.iter().map(|&c| values[c]).collect();
        let columns: Vec<u32> = terms.iter().map(|&(c, _)| c).collect();
        let weights: Vec<f32> = terms.iter().map(|&(_, w)| f32::from(w) * 0.5).collect();
        let threshold = f32::from(threshold) * 0.5;
        let few_rows = mask_of(&few_rows);
        for (missing, rows) in [MissingCells::AnyCellMissing, MissingCells::RescaledPresent]
            .into_iter()
            .flat_map(|missing| [(missing, many_rows), (missing, few_rows)])
        {
            every_width_sends_the_walked_rows(
                &block, &block, &columns, &weights, threshold, missing_left, missing, rows,
            )?;
        }
    }

    #[test]
    fn blocks_of_bytes_send_the_rows_their_floats_send(
        // Mostly small bytes, so that sums meet the thresholds; the largest too.
        cells in prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 3, 255]), 3 * BLOCK),
        // Whole weights (whole sums) and others (float sums of byte cells).
        terms in prop::collection::vec((0u32..3, -3i8..=3, any::<bool>()), 1..6),
        // Thresholds on and between whole sums, within and beyond their reach.
        threshold in prop::sample::select(vec![-20i32, -9, -4, -1, 0, 1, 3, 6, 11, 20, 4000]),
        halves: bool,
        missing_left: bool,
        many_rows: u128,
        few_rows in prop::collection::vec(0..BLOCK, 1..=MOST_GATHERED_ROWS as usize + 1),
    ) {
        let few_rows = mask_of(&few_rows);
        let floats: Vec<f32> = cells.iter().map(|&c| f32::from(c)).collect();
        let columns: Vec<u32> = terms.iter().map(|&(c, _, _)| c).collect();
        let weights: Vec<f32> = terms
            .iter()
            .map(|&(_, w, whole)| f32::from(w) * if whole { 1.0 } else { 0.75 })
            .collect();
        let threshold = threshold as f32 + if halves { 0.5 } else { 0.0 };
        let missing = MissingCells::AnyCellMissing;
        for rows in [many_rows, few_rows] {
            let walked = every_width_sends_the_walked_rows(
                &cells, &floats, &columns, &weights, threshold, missing_left, missing, rows,
            )?;
            if let Some(limit) = whole_limit(&weights, threshold) {
                let whole: Vec<i16> = weights.iter().map(|&w| w as i16).collect();
                for avx2 in [false, has_avx2()] {
                    let left = left_rows_whole(&cells, avx2, &columns, &whole, limit, rows);
                    prop_assert_eq!(left & rows, walked);
                }
            }
        }
    }

    #[test]
    fn whole_sums_near_the_limits_of_i16_send_the_rows_their_floats_send(
        // Bytes at both ends, weights up to a signed byte's: sums up to the
        // largest `whole_limit` allows, odd and even numbers of terms.
        cells in prop::collection::vec(prop::sample::select(vec![0u8, 1, 254, 255]), 4 * BLOCK),
        terms in prop::collection::vec((0u32..4, -127i16..=127), 1..5),
        threshold in -33_000i32..33_000,
        rows: u128,
    ) {
        let floats: Vec<f32> = cells.iter().map(|&c| f32::from(c)).collect();
        let columns: Vec<u32> = terms.iter().map(|&(c, _)| c).collect();
        let weights: Vec<f32> = terms.iter().map(|&(_, w)| f32::from(w)).collect();
        let threshold = threshold as f32;
        if let Some(limit) = whole_limit(&weights, threshold) {
            let walked = walked_left_rows(
                &floats, &columns, &weights, threshold, false,
                MissingCells::AnyCellMissing, rows,
            );
            let whole: Vec<i16> = terms.iter().map(|&(_, w)| w).collect();
            for avx2 in [false, has_avx2()] {
                let left = left_rows_whole(&cells, avx2, &columns, &whole, limit, rows);
                prop_assert_eq!(left & rows, walked);
            }
        }
    }

    #[test]
    fn whole_weights_of_small_reach_have_a_whole_limit(
        weights in prop::collection::vec(-40i8..=40, 1..4),
        threshold in -40_000i32..40_000,
    ) {
        let weights: Vec<f32> = weights.iter().map(|&w| f32::from(w)).collect();
        let reach: f32 = weights.iter().map(|w| w.abs() * 255.0).sum();
        let limit = whole_limit(&weights, threshold as f32 * 0.5);
        prop_assert_eq!(limit.is_some(), reach <= 32767.0);
        prop_assert!(whole_limit(&[0.5], 3.0).is_none());
        prop_assert!(whole_limit(&[128.0], 3.0).is_none());
        prop_assert!(whole_limit(&weights, f32::NAN).is_none());
    }
}
