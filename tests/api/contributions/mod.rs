//! Contributions (TreeSHAP over atoms): the values sum to every model's output, equal
//! Shapley values computed by brute force over each tree's atoms, and do not depend
//! on the number of threads; each in a module of its own over the data made here.

mod exact;
mod outputs;
mod robustness;

use ndarray::{Array2, Axis};

use morf_rs::atoms::{Patches, Pooled, Reductions};
use morf_rs::{AtomKind, ForestParams, MaxFeatures};

pub(crate) const SIDE: usize = 4;
pub(crate) const N_FEATURES: usize = SIDE * SIDE;

/// Rows of 4x4 images whose class (of `n_classes`) is set by the sums of patches, with
/// NaN in a tenth of the cells when `missing`.
pub(crate) fn images(
    n: usize,
    n_classes: u32,
    missing: bool,
    seed: u64,
) -> (Array2<f32>, Vec<u32>) {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut x = Array2::zeros((n, N_FEATURES));
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        for j in 0..N_FEATURES {
            x[[i, j]] = (next() * 2.0 - 1.0) as f32;
        }
        let score = x[[i, 0]] + x[[i, 1]] + x[[i, 4]] - x[[i, 10]] - x[[i, 15]];
        y.push(((score + 2.5).max(0.0) as u32 * n_classes / 5).min(n_classes - 1));
        if missing {
            for j in 0..N_FEATURES {
                if next() < 0.1 {
                    x[[i, j]] = f32::NAN;
                }
            }
        }
    }
    (x, y)
}

pub(crate) fn patches() -> AtomKind {
    AtomKind::Patches(Patches::new(vec![SIDE, SIDE], vec![1, 1], vec![2, 3]))
}

pub(crate) fn kinds() -> Vec<(&'static str, AtomKind)> {
    vec![
        ("RF", AtomKind::AxisAligned),
        (
            "SPORF",
            AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
        ),
        ("MORF", patches()),
        (
            "pooled",
            AtomKind::Pooled(Pooled {
                family: Box::new(AtomKind::Patches(Patches::new(
                    vec![SIDE, SIDE],
                    vec![1, 1],
                    vec![2, 2],
                ))),
                shift_min: vec![1, 1],
                shift_max: vec![2, 2],
                reduce: Reductions::Both,
            }),
        ),
    ]
}

pub(crate) fn forest_params(atoms: AtomKind) -> ForestParams {
    ForestParams {
        n_estimators: 6,
        atoms,
        max_features: MaxFeatures::Count(6),
        max_depth: Some(6),
        random_state: 3,
        ..ForestParams::default()
    }
}

/// The largest difference between the sum over features (and the expected value) of
/// `contributions` and `output`.
pub(crate) fn sum_error(contributions: &ndarray::Array3<f64>, output: &Array2<f64>) -> f64 {
    let total = contributions.sum_axis(Axis(1));
    assert_eq!(total.dim(), output.dim());
    (&total - output).iter().fold(0.0, |m, d| m.max(d.abs()))
}
