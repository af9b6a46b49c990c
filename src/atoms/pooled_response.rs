//! The pooled projection of a row: the maximum (or minimum) over a [`Window`] of shifts
//! of a base atom's response.
//!
//! Each shift's response is summed term by term from 0.0 in the base atom's order, as
//! [`Atom::project`](super::Atom::project) sums a plain atom. Under
//! [`MissingCells::AnyCellMissing`] a response touching a missing value (NaN) makes the
//! pooled value missing; under [`MissingCells::RescaledPresent`] each response follows
//! that rule and the reduction skips missing responses, missing only when all are.

use super::window::{Reduce, Window};
use super::MissingCells;
use crate::data::Feature;

/// Shifts along the last axis whose responses are summed side by side: a fixed
/// number, so that the sums and the reduction are whole vectors with no loop over a
/// count of lanes (windows are mostly 2 to 8 shifts wide).
const LANES: usize = 8;

/// `value` folded into the reduction `best` so far; a missing value (NaN) stays.
#[inline(always)]
pub(crate) fn fold(reduce: Reduce, best: f32, value: f32) -> f32 {
    let better = match reduce {
        Reduce::Max => value > best,
        Reduce::Min => value < best,
    };
    if better || value.is_nan() {
        value
    } else {
        best
    }
}

/// `value` folded into `best` by `missing`'s rule: under
/// [`MissingCells::AnyCellMissing`] as [`fold`]; under
/// [`MissingCells::RescaledPresent`] a missing value is skipped (`seen` says whether
/// any value was folded).
#[inline(always)]
fn fold_by_rule(
    reduce: Reduce,
    missing: MissingCells,
    best: f32,
    value: f32,
    seen: &mut bool,
) -> f32 {
    if value.is_nan() && missing == MissingCells::RescaledPresent {
        return best;
    }
    *seen = true;
    fold(reduce, best, value)
}

/// What the reduction starts from.
#[inline(always)]
pub(crate) fn start(reduce: Reduce) -> f32 {
    match reduce {
        Reduce::Max => f32::NEG_INFINITY,
        Reduce::Min => f32::INFINITY,
    }
}

/// The pooled projection of `row` on the base atom (`indices`, `weights`) over
/// `window` (checked against the atom): the maximum or minimum over the window's
/// shifts of the shifted atom's response, missing cells treated by `missing`.
#[inline]
pub fn project_pooled<T: Feature>(
    indices: &[u32],
    weights: &[f32],
    window: &Window,
    missing: MissingCells,
    row: &[T],
) -> f32 {
    if window.shifts_wrap() {
        return project_by_shift(indices, weights, window, missing, row);
    }
    let value = project_flat(indices, weights, window, row);
    if value.is_nan() && missing == MissingCells::RescaledPresent {
        // A response read a missing cell: the rule needs each shift's cells.
        return project_by_shift(indices, weights, window, missing, row);
    }
    value
}

/// Without wrapping, a shift adds one offset to every index: the responses at
/// consecutive shifts along the last axis read consecutive cells, so [`LANES`] of them
/// are summed side by side, term after term (vectorised), each in the atom's order,
/// and reduced lane by lane; the lanes' reductions are reduced last (the maximum or
/// minimum of the same responses, whatever the order).
fn project_flat<T: Feature>(indices: &[u32], weights: &[f32], window: &Window, row: &[T]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if crate::scoring::has_avx2() {
        // SAFETY: the processor has AVX2.
        return unsafe { project_flat_avx2(indices, weights, window, row) };
    }
    project_flat_lanes(indices, weights, window, row)
}

/// [`project_flat_lanes`] in AVX2's wider vectors (the same operations, so the same
/// value). Callable only where the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn project_flat_avx2<T: Feature>(
    indices: &[u32],
    weights: &[f32],
    window: &Window,
    row: &[T],
) -> f32 {
    project_flat_lanes(indices, weights, window, row)
}

/// The body of [`project_flat`].
#[inline(always)]
fn project_flat_lanes<T: Feature>(
    indices: &[u32],
    weights: &[f32],
    window: &Window,
    row: &[T],
) -> f32 {
    let strides = window.strides();
    let (low, high, reduce) = (window.low, window.high, window.reduce);
    // Indices ascend: a group of lanes reads inside the row if the last index does.
    let last_index = *indices.last().expect("an atom") as i64;
    let mut best = [start(reduce); LANES];
    for s0 in low[0]..=high[0] {
        for s1 in low[1]..=high[1] {
            for s2 in low[2]..=high[2] {
                let outer =
                    s0 as i64 * strides[0] + s1 as i64 * strides[1] + s2 as i64 * strides[2];
                let mut first = low[3] as i64;
                while first <= high[3] as i64 {
                    let lanes = (high[3] as i64 - first + 1).min(LANES as i64) as usize;
                    // `check` keeps every shifted index of the window inside the row;
                    // lanes past the window's last shift read on while the row lasts,
                    // and are dropped from the reduction.
                    let base = outer + first;
                    let sums = if last_index + base + LANES as i64 <= row.len() as i64 {
                        full_lanes(indices, weights, row, base)
                    } else {
                        part_lanes(indices, weights, row, base, lanes)
                    };
                    for lane in 0..LANES {
                        let value = if lane < lanes {
                            sums[lane]
                        } else {
                            start(reduce)
                        };
                        best[lane] = fold(reduce, best[lane], value);
                    }
                    first += lanes as i64;
                }
            }
        }
    }
    best.into_iter()
        .fold(start(reduce), |best, value| fold(reduce, best, value))
}

/// The responses at the [`LANES`] shifts `base..base + LANES` (flat offsets), all of
/// whose cells lie inside `row`.
#[inline(always)]
fn full_lanes<T: Feature>(indices: &[u32], weights: &[f32], row: &[T], base: i64) -> [f32; LANES] {
    let mut sums = [0.0f32; LANES];
    for (&index, &weight) in indices.iter().zip(weights) {
        let from = (index as i64 + base) as usize;
        let cells: &[T; LANES] = row[from..from + LANES].try_into().expect("LANES cells");
        for lane in 0..LANES {
            sums[lane] += weight * cells[lane].to_f32();
        }
    }
    sums
}

/// The responses at the first `lanes` of the shifts `base..base + LANES`, near the
/// end of `row`; the other lanes are left at 0.
#[cold]
fn part_lanes<T: Feature>(
    indices: &[u32],
    weights: &[f32],
    row: &[T],
    base: i64,
    lanes: usize,
) -> [f32; LANES] {
    let mut sums = [0.0f32; LANES];
    for (&index, &weight) in indices.iter().zip(weights) {
        let from = (index as i64 + base) as usize;
        for (sum, cell) in sums[..lanes].iter_mut().zip(&row[from..from + lanes]) {
            *sum += weight * cell.to_f32();
        }
    }
    sums
}

/// Shift by shift, each shifted index computed from its coordinates (wrapping axes,
/// or a row whose missing cells [`MissingCells::RescaledPresent`] rescales).
fn project_by_shift<T: Feature>(
    indices: &[u32],
    weights: &[f32],
    window: &Window,
    missing: MissingCells,
    row: &[T],
) -> f32 {
    let mut best = start(window.reduce);
    let mut seen = false;
    window.for_each_shift(|shift| {
        let cell = |index: u32| {
            let shifted = window.shifted(index, shift).expect("a checked window");
            row[shifted as usize].to_f32()
        };
        let mut sum = 0.0f32;
        for (&index, &weight) in indices.iter().zip(weights) {
            sum += weight * cell(index);
        }
        let terms = indices.iter().zip(weights);
        let sum = missing.resolve(sum, terms.map(|(&i, &w)| (w, cell(i))));
        best = fold_by_rule(window.reduce, missing, best, sum, &mut seen);
    });
    if seen {
        best
    } else {
        f32::NAN
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::atoms::{Atom, MAX_POOL_AXES};

    /// A random window over `shape` for the atom `indices`, within the image on axes
    /// that do not wrap.
    fn window_for(
        shape: &[usize],
        wrap: &[bool],
        indices: &[u32],
        picks: &[(u8, u8)],
        reduce: Reduce,
    ) -> Window {
        let mut window = Window::unshifted(shape, wrap, reduce);
        let pad = MAX_POOL_AXES - shape.len();
        for axis in 0..shape.len() {
            let k = pad + axis;
            let length = shape[axis] as i32;
            let (a, b) = (picks[axis].0 as i32, picks[axis].1 as i32);
            if wrap[axis] {
                let (x, y) = (a % length, b % length);
                (window.low[k], window.high[k]) = (x.min(y) - length / 2, x.max(y) - length / 2);
                window.high[k] = window.high[k].min(length - 1);
            } else {
                let positions: Vec<i32> = indices
                    .iter()
                    .map(|&i| window.coordinates(i)[k] as i32)
                    .collect();
                let (first, last) = (
                    *positions.iter().min().unwrap(),
                    *positions.iter().max().unwrap(),
                );
                let feasible = length - (last - first);
                let (x, y) = (a % feasible, b % feasible);
                (window.low[k], window.high[k]) = (x.min(y) - first, x.max(y) - first);
            }
        }
        window
    }

    proptest! {
        #[test]
        fn pooled_projection_is_the_reduction_over_shifted_plain_atoms(
            shape in prop::collection::vec(1usize..9, 1..4),
            wrap_bits in 0u8..8,
            picks in prop::collection::vec((any::<u8>(), any::<u8>()), 3),
            raw_indices in prop::collection::vec(any::<prop::sample::Index>(), 1..6),
            weights in prop::collection::vec(-2i32..=2, 6),
            values in prop::collection::vec(-50i32..50, 512),
            min in any::<bool>(),
            missing in prop::option::of(any::<prop::sample::Index>()),
        ) {
            let n_features: usize = shape.iter().product();
            let wrap: Vec<bool> = (0..shape.len()).map(|k| wrap_bits >> k & 1 == 1).collect();
            let mut indices: Vec<u32> = raw_indices.iter().map(|i| i.index(n_features) as u32).collect();
            indices.sort_unstable();
            indices.dedup();
            let weights: Vec<f32> = weights[..indices.len()].iter().map(|&w| w as f32 + 0.5).collect();
            let mut row: Vec<f32> = values[..n_features].iter().map(|&v| v as f32 * 0.25).collect();
            if let Some(at) = missing {
                row[at.index(n_features)] = f32::NAN;
            }
            let reduce = if min { Reduce::Min } else { Reduce::Max };
            let window = window_for(&shape, &wrap, &indices, &picks, reduce);
            prop_assert!(window.check(&indices, n_features).is_ok());
            for rule in [MissingCells::AnyCellMissing, MissingCells::RescaledPresent] {
                // Brute force: every shifted copy as a plain atom, in the base atom's
                // order.
                let mut responses = Vec::new();
                window.for_each_shift(|shift| {
                    let shifted: Vec<u32> = indices.iter().map(|&i| window.shifted(i, shift).unwrap()).collect();
                    let atom = Atom { indices: &shifted, weights: &weights, window: None, missing: rule };
                    responses.push(atom.project(&row));
                });
                prop_assert_eq!(responses.len(), window.n_shifts());
                let pooled = project_pooled(&indices, &weights, &window, rule, &row);
                if !window.shifts_wrap() && rule == MissingCells::AnyCellMissing {
                    // The portable lanes, which a processor with AVX2 does not run.
                    let portable = project_flat_lanes(&indices, &weights, &window, &row);
                    prop_assert_eq!(portable.to_bits(), pooled.to_bits());
                }
                // The old rule: one missing response makes the pooled value missing;
                // the new one skips missing responses.
                if rule == MissingCells::RescaledPresent {
                    responses.retain(|r| !r.is_nan());
                }
                if responses.is_empty() || responses.iter().any(|r| r.is_nan()) {
                    prop_assert!(pooled.is_nan());
                } else {
                    let expected = match reduce {
                        Reduce::Max => responses.iter().cloned().fold(f32::NEG_INFINITY, f32::max),
                        Reduce::Min => responses.iter().cloned().fold(f32::INFINITY, f32::min),
                    };
                    prop_assert_eq!(pooled, expected);
                    prop_assert!(responses.contains(&pooled));
                }
            }
        }
    }

    #[test]
    fn long_windows_span_several_lane_groups() {
        // 150 shifts along one axis: three groups of lanes.
        let row: Vec<f32> = (0..160).map(|i| ((i * 37) % 101) as f32).collect();
        let mut window = Window::unshifted(&[160], &[false], Reduce::Max);
        window.high[MAX_POOL_AXES - 1] = 149;
        let (indices, weights) = ([3u32, 7, 10], [1.0f32, -2.0, 1.0]);
        let expected = (0..150)
            .map(|s| row[3 + s] - 2.0 * row[7 + s] + row[10 + s])
            .fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(
            project_pooled(
                &indices,
                &weights,
                &window,
                MissingCells::RescaledPresent,
                &row
            ),
            expected
        );
    }
}
