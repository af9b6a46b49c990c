//! How an atom's contribution is shared among its features for one row (the rule of
//! the [module documentation](super)).

use crate::atoms::{rescaled_present_sum, Atom, MissingCells, Reduce, Window};
use crate::data::Feature;

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
        let size = (w as f64 * x.to_f64()).abs();
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
        let size = |(i, w): (u32, f32)| (w as f64 * row[i as usize].to_f64()).abs();
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
            response += weight as f64 * row[cell(index) as usize].to_f64();
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
