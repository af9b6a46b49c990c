//! How an atom's contribution is shared among its features for one row (the rule of
//! the [module documentation](super)).

use crate::atoms::{Atom, Reduce, Window};
use crate::data::Feature;

/// Fills `shares` with `(feature, share)` pairs whose shares sum to 1: each feature's
/// part of the atom's response to `row`.
///
/// - A plain atom: in proportion to `|w_j x_j|`, the size of the feature's term of the
///   projection; where every term is 0, in proportion to `|w_j|`.
/// - A row whose projection is missing: equally among the atom's missing features
///   (they chose the side the row took).
/// - A pooled atom: the features of the shift that gave the pooled value (the first
///   in the window's order among ties), shared as a plain atom's; where the pooled
///   value is missing, equally among the missing features of the window.
pub(crate) fn feature_shares<T: Feature>(atom: &Atom<'_>, row: &[T], shares: &mut Vec<(u32, f64)>) {
    shares.clear();
    match atom.window {
        None => {
            let terms = atom.indices.iter().zip(atom.weights).map(|(&i, &w)| (i, w));
            share_terms(terms, row, shares);
        }
        Some(window) => share_pooled(atom, window, row, shares),
    }
}

/// [`feature_shares`] of the terms `(feature, weight)` of one plain atom.
fn share_terms<T: Feature>(
    terms: impl Iterator<Item = (u32, f32)> + Clone,
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
    let missing = terms.clone().filter(|&(i, _)| row[i as usize].is_missing());
    shares.extend(missing.map(|(i, _)| (i, 1.0)));
    if shares.is_empty() {
        let size = |(i, w): (u32, f32)| (w as f64 * row[i as usize].to_f64()).abs();
        shares.extend(terms.clone().map(|term| (term.0, size(term))));
        if shares.iter().all(|&(_, s)| s == 0.0) {
            shares.clear();
            shares.extend(terms.map(|(i, w)| (i, (w as f64).abs())));
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
        let mut response = 0.0f64;
        for (&index, &weight) in atom.indices.iter().zip(atom.weights) {
            let cell = window.shifted(index, shift).expect("a checked window");
            response += weight as f64 * row[cell as usize].to_f64();
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
    share_terms(terms, row, shares);
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
