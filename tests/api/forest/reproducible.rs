//! The same forest whatever the threads, the ranges of trees grown, the type of X or
//! the search path, and saved bytes that load back or fail cleanly.

use morf_rs::atoms::SignedPatches;
use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, FitControl, Forest, ForestParams, Inspect, MaxFeatures, Patches, ScoreOptions,
    Targets,
};
use ndarray::Array2;

use super::*;
use crate::common::one_informative_feature;

#[test]
fn one_and_four_threads_grow_identical_forests() {
    let (x, y) = one_informative_feature(300, 1);
    for params in all_kinds() {
        let single = Forest::fit(
            &ForestParams {
                n_threads: 1,
                ..params.clone()
            },
            x.view(),
            &y,
            2,
            None,
        )
        .unwrap();
        let four = Forest::fit(
            &ForestParams {
                n_threads: 4,
                ..params.clone()
            },
            x.view(),
            &y,
            2,
            None,
        )
        .unwrap();
        assert_eq!(single.to_bytes(), four.to_bytes(), "{:?}", params.atoms);
        assert_eq!(
            single
                .predict_proba(x.view(), &ScoreOptions::new())
                .unwrap(),
            four.predict_proba(x.view(), &ScoreOptions::new().with_threads(4))
                .unwrap()
        );
        let other_seed = Forest::fit(
            &ForestParams {
                random_state: 43,
                ..params.clone()
            },
            x.view(),
            &y,
            2,
            None,
        )
        .unwrap();
        assert_ne!(single.to_bytes(), other_seed.to_bytes(), "the seed matters");
    }
}

#[test]
fn trees_grown_range_by_range_are_the_trees_grown_at_once() {
    // Whole-valued X, so that later trees may search a compact copy of X chosen from
    // the first trees of each call.
    let (x, mut y) = runs_on_a_cycle(300, 14);
    let mut rng = Rng::new(15, 0);
    y.iter_mut()
        .for_each(|label| *label ^= u32::from(rng.below(4) == 0));
    for params in all_kinds() {
        let params = ForestParams {
            atoms: match params.atoms {
                AtomKind::Patches(_) => AtomKind::Patches(
                    Patches::new(vec![60], vec![3], vec![12]).with_wrap(vec![true]),
                ),
                AtomKind::Mixture(_) => every_family(vec![60]),
                other => other,
            },
            n_threads: 2,
            ..params
        };
        let targets = Targets::Classes {
            labels: &y,
            n_classes: 2,
        };
        let none = FitControl::new();
        let all = Forest::fit_with(&params, x.view(), targets, None, 0..12, &none).unwrap();
        assert_eq!(all, Forest::fit(&params, x.view(), &y, 2, None).unwrap());
        let mut pieces = Vec::new();
        for range in [0..1, 1..5, 5..12] {
            let part = Forest::fit_with(&params, x.view(), targets, None, range, &none).unwrap();
            pieces.extend_from_slice(part.trees());
        }
        assert_eq!(pieces, all.trees(), "{:?}", params.atoms);
    }
    let message = Forest::fit_with(
        &all_kinds()[0],
        x.view(),
        Targets::Classes {
            labels: &y,
            n_classes: 2,
        },
        None,
        3..3,
        &FitControl::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(message.contains("empty"), "{message}");
}

#[test]
fn saved_forests_predict_identically_and_damage_is_an_error() {
    let (x, y) = one_informative_feature(200, 2);
    for params in all_kinds() {
        let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
        let bytes = forest.to_bytes();
        let restored = Forest::from_bytes(&bytes).unwrap();
        assert_eq!(restored, forest);
        assert_eq!(
            restored
                .predict_proba(x.view(), &ScoreOptions::new().with_threads(2))
                .unwrap(),
            forest
                .predict_proba(x.view(), &ScoreOptions::new().with_threads(2))
                .unwrap()
        );
        assert_eq!(
            restored
                .apply(x.view(), &ScoreOptions::new().with_threads(2))
                .unwrap(),
            forest.apply(x.view(), &ScoreOptions::new()).unwrap()
        );

        // Truncated or altered bytes load as an error or as some valid forest, never a
        // panic or an out-of-bounds walk.
        for cut in (0..bytes.len()).step_by(97) {
            assert!(Forest::from_bytes(&bytes[..cut]).is_err());
        }
        for position in (6..bytes.len()).step_by(13) {
            let mut damaged = bytes.clone();
            damaged[position] ^= 0xA5;
            if let Ok(loaded) = Forest::from_bytes(&damaged) {
                loaded
                    .predict_proba(x.view(), &ScoreOptions::new())
                    .unwrap();
            }
        }
    }
    let mut wrong_version = Forest::fit(&all_kinds()[0], x.view(), &y, 2, None)
        .unwrap()
        .to_bytes();
    wrong_version[4] = 99;
    let message = Forest::from_bytes(&wrong_version).unwrap_err().to_string();
    assert!(message.contains("format version 99"), "{message}");
}

#[test]
fn byte_valued_input_trains_as_its_shifted_float_copy_does() {
    // Values 0..=255 are trained on as a byte copy once the first trees (one per
    // thread) prove deep; shifted by -128 they stay whole but are trained on as floats.
    // Every projection moves by the same whole amount, so the splits, and the
    // probabilities on equally shifted test rows, must not change.
    let mut rng = Rng::new(11, 0);
    let x = Array2::from_shape_fn((1000, 12), |_| rng.below(256) as f32);
    // Noisy labels grow deep trees, which is when the byte copy is made.
    let y: Vec<u32> = x
        .rows()
        .into_iter()
        .map(|row| u32::from(row[2] + row[3] + row[7] > 380.0) ^ u32::from(rng.below(3) == 0))
        .collect();
    let x_shifted = x.mapv(|v| v - 128.0);
    for params in all_kinds() {
        let mut saved = Vec::new();
        for n_threads in [1, 3] {
            let params = ForestParams {
                n_threads,
                ..params.clone()
            };
            let bytes = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
            let stats = bytes.tree_stats();
            let depth = stats.iter().map(|s| s.mean_leaf_depth).sum::<f64>() / stats.len() as f64;
            assert!(depth > 8.0, "mean leaf depth {depth}");
            let shifted = Forest::fit(&params, x_shifted.view(), &y, 2, None).unwrap();
            let p = bytes.predict_proba(x.view(), &ScoreOptions::new()).unwrap();
            assert_eq!(
                p,
                shifted
                    .predict_proba(x_shifted.view(), &ScoreOptions::new())
                    .unwrap()
            );
            saved.push(bytes.to_bytes());
        }
        assert_eq!(saved[0], saved[1], "1 and 3 threads grow the same forest");
    }
}

#[test]
fn patch_forests_searched_through_running_sums_or_bits_grow_as_on_x_itself() {
    // Whole-valued X with long patch runs is searched, once the first trees prove deep,
    // through its rows' running sums (in bytes while they stay in 0..=255, else in
    // floats), or where X is binary and the weights ±1, through its bits. X + 0.5 is
    // not whole and is searched directly; every projection moves by half the atom's
    // weight sum, so the splits and the probabilities on equally shifted rows must not
    // change. Signed patches (weights -1, 1 and 2) are read through running sums as
    // well; edge detectors (weights 1 and -1), single cells and sparse combinations of
    // weights ±1 on binary X through bits.
    let (x, mut y) = runs_on_a_cycle(600, 5);
    let mut rng = Rng::new(6, 0);
    y.iter_mut()
        .for_each(|label| *label ^= u32::from(rng.below(4) == 0));
    let cycle = Patches::new(vec![60], vec![3], vec![12]).with_wrap(vec![true]);
    let signed = AtomKind::Mixture(vec![
        (AtomKind::Patches(cycle.clone()), 0.3),
        (
            AtomKind::SignedPatches(SignedPatches::new(cycle.clone(), 2)),
            0.3,
        ),
        (
            AtomKind::SignedPatches(SignedPatches::new(cycle.clone(), 3)),
            0.3,
        ),
        (AtomKind::AxisAligned, 0.1),
    ]);
    assert!(signed.mean_run_length() > 4.0);
    for (atoms, scale) in [
        (AtomKind::Patches(cycle.clone()), 1.0),
        (
            AtomKind::SignedPatches(SignedPatches::new(cycle.clone(), 2)),
            1.0,
        ),
        (AtomKind::AxisAligned, 1.0),
        (
            AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            1.0,
        ),
        (AtomKind::Patches(cycle.clone()), 3.0),
        (AtomKind::Patches(cycle), 100.0),
        (signed.clone(), 1.0),
        (signed, 100.0),
    ] {
        let x = x.mapv(|v| v * scale);
        let x_shifted = x.mapv(|v| v + 0.5);
        let mut saved = Vec::new();
        for n_threads in [1, 3] {
            let params = ForestParams {
                n_estimators: 12,
                atoms: atoms.clone(),
                max_features: MaxFeatures::Fraction(0.5),
                n_threads,
                random_state: 3,
                ..ForestParams::default()
            };
            let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
            let stats = forest.tree_stats();
            let depth = stats.iter().map(|s| s.mean_leaf_depth).sum::<f64>() / stats.len() as f64;
            assert!(depth > 8.0, "mean leaf depth {depth}");
            let shifted = Forest::fit(&params, x_shifted.view(), &y, 2, None).unwrap();
            assert_eq!(
                forest
                    .predict_proba(x.view(), &ScoreOptions::new())
                    .unwrap(),
                shifted
                    .predict_proba(x_shifted.view(), &ScoreOptions::new())
                    .unwrap(),
                "scale {scale}, {n_threads} threads"
            );
            saved.push(forest.to_bytes());
        }
        assert_eq!(saved[0], saved[1], "1 and 3 threads grow the same forest");
    }
}
