//! How an atom's contribution is shared among its features for one row (the rule of
//! the [module documentation](super)).

use super::lanes::{Isa, Lanes};
use crate::atoms::{rescaled_present_sum, Atom, MissingCells, Reduce, Window};
use crate::data::Feature;

/// Buffers of [`share_block`], one thread's.
#[derive(Debug, Default)]
pub(crate) struct BlockShares<const N: usize> {
    /// Per feature and output, over the atoms a row shares by the sizes of their
    /// terms: the sum of `|w_j| · value / Σ_k |w_k x_k|`, which times `|x_j|` is the
    /// feature's share of them.
    by_terms: Vec<Lanes<N>>,
    /// Per feature and output, over the atoms a row shares by weight (all terms 0)
    /// or whole (single features): the feature's share of them.
    by_weights: Vec<Lanes<N>>,
    /// One atom's values per output, scaled for `by_terms` or `by_weights`.
    scaled: Vec<Lanes<N>>,
    /// Per feature, `|x|` of the block's rows (NaN where missing): an atom's terms
    /// then add up for all rows at once.
    sizes: Vec<Lanes<N>>,
    shares: Vec<(u32, f64)>,
}

/// Adds each atom's values `values[a * width..][..width]` (one lane per row of the
/// block `rows`, whose first `n` are explained) shared among its features, by
/// [`feature_shares`]' rule, to the rows' contributions in `out` (row-major, `columns`
/// per row, `width` per feature), and sets `values` to 0, in the vectors of `isa`.
///
/// The common cases are shared for all rows at once: `|w_j x_j| / Σ |w_k x_k|` times
/// a value is `|x_j|` times `|w_j| · value / Σ |w_k x_k|`, so the atoms' values go to
/// their features by weight alone and each feature's total is scaled by `|x_j|` once
/// at the end.
#[allow(clippy::too_many_arguments)]
pub(crate) fn share_block<T: Feature, const N: usize>(
    atoms: &[Atom<'_>],
    values: &mut [Lanes<N>],
    width: usize,
    rows: &[&[T]; N],
    n: usize,
    out: &mut [f64],
    columns: usize,
    scratch: &mut BlockShares<N>,
    isa: Isa,
) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the processor has AVX2 (AVX-512 processors have it too).
        Isa::Avx2 | Isa::Avx512 => unsafe {
            share_block_avx2(atoms, values, width, rows, n, out, columns, scratch)
        },
        _ => share_block_here(atoms, values, width, rows, n, out, columns, scratch),
    }
}

/// [`share_block`] in AVX2 vectors: the same operations in the same order. Also on
/// processors with AVX-512, whose vectors took a third more time here (measured on
/// the forest of `benches/contributions.py`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
fn share_block_avx2<T: Feature, const N: usize>(
    atoms: &[Atom<'_>],
    values: &mut [Lanes<N>],
    width: usize,
    rows: &[&[T]; N],
    n: usize,
    out: &mut [f64],
    columns: usize,
    scratch: &mut BlockShares<N>,
) {
    share_block_here(atoms, values, width, rows, n, out, columns, scratch);
}

/// [`share_block`], inlined into the instructions of its caller.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn share_block_here<T: Feature, const N: usize>(
    atoms: &[Atom<'_>],
    values: &mut [Lanes<N>],
    width: usize,
    rows: &[&[T]; N],
    n: usize,
    out: &mut [f64],
    columns: usize,
    scratch: &mut BlockShares<N>,
) {
    let n_features = rows[0].len();
    for buffer in [&mut scratch.by_terms, &mut scratch.by_weights] {
        buffer.clear();
        buffer.resize(n_features * width, Lanes::ZERO);
    }
    scratch.scaled.resize(width, Lanes::ZERO);
    scratch.sizes.clear();
    let size = |j: usize| Lanes(std::array::from_fn(|l| cell_value(rows[l][j]).abs()));
    scratch.sizes.extend((0..n_features).map(size));
    // The lanes explained: the block's last lanes may repeat its last row.
    let explained = Lanes::indicator(|l| l < n);
    for (atom, values) in atoms.iter().zip(values.chunks_exact_mut(width)) {
        let mut nonzero = Lanes::ZERO;
        for v in values.iter() {
            nonzero += Lanes::indicator(|l| v.0[l] != 0.0);
        }
        if !nonzero.any_nonzero() {
            continue;
        }
        let (by_terms, by_weights, own) = lane_sharing(atom, &scratch.sizes);
        let own = own * nonzero * explained;
        for (l, row) in rows.iter().enumerate() {
            if own.0[l] == 0.0 {
                continue;
            }
            feature_shares(atom, row, &mut scratch.shares);
            let out = &mut out[l * columns..];
            for &(feature, share) in &scratch.shares {
                let out = &mut out[feature as usize * width..][..width];
                for (o, v) in out.iter_mut().zip(values.iter()) {
                    *o += share * v.0[l];
                }
            }
        }
        let single = atom.indices.len() == 1;
        for (scale, totals) in [
            (by_terms * explained, &mut scratch.by_terms),
            (by_weights * explained, &mut scratch.by_weights),
        ] {
            if !scale.any_nonzero() {
                continue;
            }
            for (scaled, &value) in scratch.scaled.iter_mut().zip(values.iter()) {
                *scaled = value * scale;
            }
            for (&feature, &weight) in atom.indices.iter().zip(atom.weights) {
                let weight = if single { 1.0 } else { (weight as f64).abs() };
                let totals = &mut totals[feature as usize * width..][..width];
                for (total, &scaled) in totals.iter_mut().zip(&scratch.scaled) {
                    *total += scaled * weight;
                }
            }
        }
        values.fill(Lanes::ZERO);
    }
    for (l, row) in rows[..n].iter().enumerate() {
        let out = &mut out[l * columns..][..n_features * width];
        let by_terms = scratch.by_terms.chunks_exact(width);
        let by_weights = scratch.by_weights.chunks_exact(width);
        for (((out, &x), by_terms), by_weights) in out
            .chunks_exact_mut(width)
            .zip(*row)
            .zip(by_terms)
            .zip(by_weights)
        {
            // A missing cell's atoms are all shared by the row's own rule.
            let size = if x.is_missing() {
                0.0
            } else {
                cell_value(x).abs()
            };
            for ((o, t), w) in out.iter_mut().zip(by_terms).zip(by_weights) {
                *o += size * t.0[l] + w.0[l];
            }
        }
    }
}

/// How each row of a block shares `atom`'s value, the cases of [`share_terms`] that
/// need no list of shares: per lane, the inverse of `Σ |w_k x_k|` where the value is
/// shared in proportion to `|w_j x_j|` (else 0), the inverse of `Σ |w_k|` where it is
/// shared in proportion to `|w_j|` (all terms 0; 1 for a single feature, which takes
/// the whole value whatever its cell holds), and 1 where the row's own rule
/// ([`feature_shares`]) shares it: missing cells, pooled atoms, overflowing terms.
#[inline(always)]
fn lane_sharing<const N: usize>(
    atom: &Atom<'_>,
    sizes: &[Lanes<N>],
) -> (Lanes<N>, Lanes<N>, Lanes<N>) {
    if atom.window.is_some() {
        return (Lanes::ZERO, Lanes::ZERO, Lanes::ONE);
    }
    if atom.indices.len() == 1 {
        return (Lanes::ZERO, Lanes::ONE, Lanes::ZERO);
    }
    // `|w x| = |w| |x|` exactly; a missing `x` makes its row's total NaN.
    let mut total = Lanes::ZERO;
    for (&i, &w) in atom.indices.iter().zip(atom.weights) {
        total += sizes[i as usize] * (w as f64).abs();
    }
    let weights: f64 = atom.weights.iter().map(|&w| (w as f64).abs()).sum();
    let by_weight = if weights > 0.0 && weights.is_finite() {
        1.0 / weights
    } else {
        0.0
    };
    let (mut by_terms, mut by_weights, mut own) = (Lanes::ZERO, Lanes::ZERO, Lanes::ZERO);
    for l in 0..N {
        let t = total.0[l];
        if t > 0.0 && t.is_finite() {
            by_terms.0[l] = 1.0 / t;
        } else if t == 0.0 && by_weight > 0.0 {
            by_weights.0[l] = by_weight;
        } else {
            own.0[l] = 1.0;
        }
    }
    (by_terms, by_weights, own)
}

/// Fills `shares` with `(feature, share)` pairs whose shares sum to 1: each feature's
/// part of the atom's response to `row`.
///
/// - A plain atom: in proportion to `|w_j x_j|`, the size of the feature's term of the
///   projection; where every term is 0, in proportion to `|w_j|`.
/// - A row whose projection is missing: equally among the atom's missing features
///   (they chose the side the row took).
/// - Under [`MissingCells::RescaledPresent`], a row some of whose cells are missing
///   but not all: its projection is the present terms' sum, rescaled, so the present
///   features share it as a plain atom of those terms.
/// - A pooled atom: the features of the shift that gave the pooled value (the first
///   in the window's order among ties), shared as a plain atom's; where the pooled
///   value is missing, equally among the missing features of the window.
pub(crate) fn feature_shares<T: Feature>(atom: &Atom<'_>, row: &[T], shares: &mut Vec<(u32, f64)>) {
    shares.clear();
    match atom.window {
        None => {
            let terms = atom.indices.iter().zip(atom.weights).map(|(&i, &w)| (i, w));
            share_terms(terms, atom.missing, row, shares);
        }
        Some(window) => share_pooled(atom, window, row, shares),
    }
}

/// [`feature_shares`] of the terms `(feature, weight)` of one plain atom whose rule
/// on missing cells is `missing`.
fn share_terms<T: Feature>(
    terms: impl Iterator<Item = (u32, f32)> + Clone,
    missing: MissingCells,
    row: &[T],
    shares: &mut Vec<(u32, f64)>,
) {
    // The common case in one pass: nothing missing and some term not 0.
    let mut total = 0.0;
    for (i, w) in terms.clone() {
        let x = row[i as usize];
        if x.is_missing() {
            break;
        }
        let size = (w as f64 * cell_value(x)).abs();
        shares.push((i, size));
        total += size;
    }
    if shares.len() == terms.clone().count() && total > 0.0 && total.is_finite() {
        shares.iter_mut().for_each(|(_, s)| *s /= total);
        return;
    }
    shares.clear();
    let is_missing = |&(i, _): &(u32, f32)| row[i as usize].is_missing();
    let rescaled = missing == MissingCells::RescaledPresent;
    if !rescaled || terms.clone().all(|t| is_missing(&t)) {
        shares.extend(terms.clone().filter(is_missing).map(|(i, _)| (i, 1.0)));
    }
    if shares.is_empty() {
        // Every term present, or under the rescaled rule the present ones, which
        // alone make the projection.
        let present = terms.filter(|t| !is_missing(t));
        let size = |(i, w): (u32, f32)| (w as f64 * cell_value(row[i as usize])).abs();
        shares.extend(present.clone().map(|term| (term.0, size(term))));
        if shares.iter().all(|&(_, s)| s == 0.0) {
            shares.clear();
            shares.extend(present.map(|(i, w)| (i, (w as f64).abs())));
        }
    }
    normalise(shares);
}

/// [`feature_shares`] of a pooled atom.
fn share_pooled<T: Feature>(
    atom: &Atom<'_>,
    window: &Window,
    row: &[T],
    shares: &mut Vec<(u32, f64)>,
) {
    let mut best: Option<([i32; crate::atoms::MAX_POOL_AXES], f64)> = None;
    let mut missing = false;
    window.for_each_shift(|shift| {
        let cell = |index: u32| window.shifted(index, shift).expect("a checked window");
        let mut response = 0.0f64;
        for (&index, &weight) in atom.indices.iter().zip(atom.weights) {
            response += weight as f64 * cell_value(row[cell(index) as usize]);
        }
        if response.is_nan() && atom.missing == MissingCells::RescaledPresent {
            // The rescaled response the projection reduced; still missing when every
            // cell is, which the reduction then skips.
            let terms = atom.indices.iter().zip(atom.weights);
            let terms = terms.map(|(&i, &w)| (w, row[cell(i) as usize].to_f32()));
            let rescaled = rescaled_present_sum(terms) as f64;
            if rescaled.is_nan() {
                return;
            }
            response = rescaled;
        }
        missing |= response.is_nan();
        let better = match (best, window.reduce) {
            (None, _) => true,
            (Some((_, b)), Reduce::Max) => response > b,
            (Some((_, b)), Reduce::Min) => response < b,
        };
        if better && !response.is_nan() {
            best = Some((shift, response));
        }
    });
    // Under the rescaled rule the pooled value is missing only when every response is.
    missing |= best.is_none();
    if missing {
        let covered = window.covered(atom.indices);
        shares.extend(
            covered
                .into_iter()
                .filter(|&i| row[i as usize].is_missing())
                .map(|i| (i, 1.0)),
        );
        normalise(shares);
        return;
    }
    let Some((shift, _)) = best else {
        return; // a window has at least one shift
    };
    let terms = atom
        .indices
        .iter()
        .zip(atom.weights)
        .map(|(&index, &weight)| {
            let cell = window.shifted(index, shift).expect("a checked window");
            (cell, weight)
        });
    share_terms(terms, atom.missing, row, shares);
}

/// A cell as the model reads it: in float32, so that float64 X shares as its float32
/// copy does (a float64 cell below float32's range is 0 to the model, not a term to
/// divide by).
#[inline(always)]
fn cell_value<T: Feature>(x: T) -> f64 {
    x.to_f32() as f64
}

/// Scales the shares to sum 1 (equal shares where they sum to 0).
fn normalise(shares: &mut [(u32, f64)]) {
    let total: f64 = shares.iter().map(|&(_, s)| s).sum();
    if total > 0.0 && total.is_finite() {
        shares.iter_mut().for_each(|(_, s)| *s /= total);
    } else {
        let equal = 1.0 / shares.len() as f64;
        shares.iter_mut().for_each(|(_, s)| *s = equal);
    }
}
