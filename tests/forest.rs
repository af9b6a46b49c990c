//! Behaviour of the whole forest through the public API.

mod common;

use common::one_informative_feature;
use morf_rs::atoms::{GraphAtoms, SamplingGraph, SignedPatches};
use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, Criterion, FitControl, Forest, ForestParams, HonestPrior, Inspect, MaxFeatures,
    MaxSamples, Patches, ScoreOptions, Targets,
};
use ndarray::Array2;

/// The circle experiment on 60 cells: class 0 holds two runs of 5 ones, class 1 runs
/// of 4 and 6, apart from each other and anywhere on the cycle.
fn runs_on_a_cycle(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    const CELLS: usize = 60;
    let mut rng = Rng::new(seed, 0);
    let mut x = Array2::zeros((n, CELLS));
    let y: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    for i in 0..n {
        let lengths = if y[i] == 0 { [5, 5] } else { [4, 6] };
        let first = rng.below(CELLS);
        let second = first + lengths[0] + 1 + rng.below(CELLS - lengths[0] - lengths[1] - 1);
        for (start, length) in [(first, lengths[0]), (second, lengths[1])] {
            for cell in start..start + length {
                x[[i, cell % CELLS]] = 1.0;
            }
        }
    }
    (x, y)
}

fn error_rate(forest: &Forest, x: &Array2<f32>, y: &[u32]) -> f64 {
    let predicted = forest.predict(x.view(), &ScoreOptions::new()).unwrap();
    predicted.iter().zip(y).filter(|(p, t)| p != t).count() as f64 / y.len() as f64
}

fn all_kinds() -> Vec<ForestParams> {
    let base = ForestParams {
        n_estimators: 12,
        random_state: 42,
        ..ForestParams::default()
    };
    vec![
        base.clone(),
        ForestParams {
            atoms: AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            ..base.clone()
        },
        ForestParams {
            atoms: AtomKind::Patches(
                Patches::new(vec![3, 4], vec![1, 2], vec![2, 4]).with_wrap(vec![false, true]),
            ),
            max_features: MaxFeatures::Count(20),
            honest_fraction: 0.3,
            ..base.clone()
        },
        ForestParams {
            atoms: every_family(vec![3, 4]),
            max_features: MaxFeatures::Count(20),
            ..base
        },
    ]
}

/// A dictionary holding every family, over features seen as an image of `shape` whose
/// last axis wraps, or as a ring.
fn every_family(shape: Vec<usize>) -> AtomKind {
    let n_axes = shape.len();
    let n_features: usize = shape.iter().product();
    let mut wrap = vec![false; n_axes];
    wrap[n_axes - 1] = true;
    let image = Patches::new(shape, vec![1; n_axes], vec![2; n_axes]).with_wrap(wrap);
    let ring: Vec<(u32, u32)> = (0..n_features as u32)
        .map(|v| (v, (v + 1) % n_features as u32))
        .collect();
    let graph = |signed| GraphAtoms {
        graph: SamplingGraph::from_edges(n_features, &ring).unwrap(),
        min_size: 1,
        max_size: 4,
        signed,
    };
    AtomKind::Mixture(vec![
        (AtomKind::Patches(image.clone()), 0.2),
        (
            AtomKind::SignedPatches(SignedPatches::new(image.clone(), 2)),
            0.15,
        ),
        (
            AtomKind::SignedPatches(SignedPatches::new(image.clone(), 3)),
            0.1,
        ),
        (AtomKind::Bumps(image.clone()), 0.1),
        (AtomKind::Gabors(image), 0.1),
        (AtomKind::AxisAligned, 0.1),
        (
            AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            0.05,
        ),
        (AtomKind::Graph(graph(false)), 0.1),
        (AtomKind::Graph(graph(true)), 0.1),
    ])
}

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
fn morf_learns_runs_on_a_cycle_that_axis_aligned_trees_cannot() {
    let (x_train, y_train) = runs_on_a_cycle(400, 3);
    let (x_test, y_test) = runs_on_a_cycle(1000, 4);
    let morf = ForestParams {
        n_estimators: 50,
        atoms: AtomKind::Patches(Patches::new(vec![60], vec![3], vec![12]).with_wrap(vec![true])),
        max_features: MaxFeatures::Fraction(0.5),
        ..ForestParams::default()
    };
    let rf = ForestParams {
        n_estimators: 50,
        ..ForestParams::default()
    };
    let morf_error = error_rate(
        &Forest::fit(&morf, x_train.view(), &y_train, 2, None).unwrap(),
        &x_test,
        &y_test,
    );
    let rf_error = error_rate(
        &Forest::fit(&rf, x_train.view(), &y_train, 2, None).unwrap(),
        &x_test,
        &y_test,
    );
    assert!(morf_error < 0.1, "MORF error {morf_error}");
    assert!(rf_error > 0.25, "axis-aligned error {rf_error}");
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
fn patch_forests_searched_through_running_sums_grow_as_on_x_itself() {
    // Whole-valued X with long patch runs is searched, once the first trees prove deep,
    // through its rows' running sums (in bytes while they stay in 0..=255, else in
    // floats). X + 0.5 is not whole and is searched directly; every projection moves by
    // half the atom's weight sum, so the splits and the probabilities on equally
    // shifted rows must not change. Signed patches (weights -1, 1 and 2) are read
    // through running sums as well.
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

#[test]
fn importances_point_at_the_informative_feature() {
    let (x, y) = one_informative_feature(400, 5);
    for params in all_kinds().into_iter().take(2) {
        let forest = Forest::fit(
            &ForestParams {
                n_estimators: 30,
                ..params
            },
            x.view(),
            &y,
            2,
            None,
        )
        .unwrap();
        for importances in [
            forest.split_count_importances().unwrap(),
            forest.impurity_importances().unwrap(),
        ] {
            assert!((importances.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            let top = (0..12)
                .max_by(|&a, &b| importances[a].total_cmp(&importances[b]))
                .unwrap();
            assert_eq!(top, 3, "{importances:?}");
        }
    }
}

#[test]
fn importances_of_every_family_point_at_the_informative_feature() {
    // Each family alone: the feature every useful atom must hold takes part in the most
    // chosen splits and the most impurity decrease.
    let (x, y) = one_informative_feature(400, 7);
    let AtomKind::Mixture(families) = every_family(vec![3, 4]) else {
        unreachable!("a mixture")
    };
    for (family, _) in families {
        let params = ForestParams {
            n_estimators: 30,
            atoms: family.clone(),
            max_features: MaxFeatures::Count(6),
            ..ForestParams::default()
        };
        let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
        for importances in [
            forest.split_count_importances().unwrap(),
            forest.impurity_importances().unwrap(),
        ] {
            assert!((importances.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            assert!(importances.iter().all(|&v| v >= 0.0));
            let top = (0..12)
                .max_by(|&a, &b| importances[a].total_cmp(&importances[b]))
                .unwrap();
            assert_eq!(top, 3, "{family:?}: {importances:?}");
        }
    }
}

#[test]
fn zero_weight_samples_are_as_good_as_absent() {
    let (x, y) = one_informative_feature(120, 6);
    // Without bootstrap every tree sees every row, so dropping rows and zeroing their
    // weights must grow the same trees.
    let params = ForestParams {
        n_estimators: 5,
        bootstrap: false,
        atoms: AtomKind::SparseOblique {
            feature_combinations: 1.5,
        },
        ..ForestParams::default()
    };
    let weights: Vec<f64> = (0..120)
        .map(|i| if i % 3 == 0 { 0.0 } else { 1.0 })
        .collect();
    let kept: Vec<usize> = (0..120).filter(|i| i % 3 != 0).collect();
    let x_kept = x.select(ndarray::Axis(0), &kept);
    let y_kept: Vec<u32> = kept.iter().map(|&i| y[i]).collect();
    let weighted = Forest::fit(&params, x.view(), &y, 2, Some(&weights)).unwrap();
    let dropped = Forest::fit(&params, x_kept.view(), &y_kept, 2, None).unwrap();
    assert_eq!(
        weighted
            .predict_proba(x.view(), &ScoreOptions::new())
            .unwrap(),
        dropped
            .predict_proba(x.view(), &ScoreOptions::new())
            .unwrap()
    );
}

#[test]
fn growth_limits_are_respected() {
    let (x, y) = one_informative_feature(300, 7);
    let shallow = ForestParams {
        n_estimators: 8,
        max_depth: Some(3),
        ..ForestParams::default()
    };
    let forest = Forest::fit(&shallow, x.view(), &y, 2, None).unwrap();
    assert!(forest
        .tree_stats()
        .iter()
        .all(|s| s.max_depth <= 3 && s.n_leaves <= 8));

    let big_leaves = ForestParams {
        n_estimators: 8,
        min_samples_leaf: 7,
        bootstrap: false,
        criterion: Criterion::Entropy,
        ..ForestParams::default()
    };
    let forest = Forest::fit(&big_leaves, x.view(), &y, 2, None).unwrap();
    let leaves = forest.apply(x.view(), &ScoreOptions::new()).unwrap();
    for tree in 0..8 {
        let mut per_leaf = std::collections::HashMap::new();
        for &leaf in leaves.column(tree) {
            *per_leaf.entry(leaf).or_insert(0) += 1;
        }
        assert!(per_leaf.values().all(|&n| n >= 7), "{per_leaf:?}");
    }

    let full = Forest::fit(
        &ForestParams {
            n_estimators: 8,
            ..ForestParams::default()
        },
        x.view(),
        &y,
        2,
        None,
    )
    .unwrap();
    let stopped = Forest::fit(
        &ForestParams {
            n_estimators: 8,
            min_impurity_decrease: 0.01,
            ..ForestParams::default()
        },
        x.view(),
        &y,
        2,
        None,
    )
    .unwrap();
    let leaves_of = |f: &Forest| f.tree_stats().iter().map(|s| s.n_leaves).sum::<usize>();
    assert!(leaves_of(&stopped) < leaves_of(&full));

    let stats = full.tree_stats();
    assert!(stats
        .iter()
        .all(|s| s.n_nodes == 2 * s.n_leaves - 1 && s.mean_leaf_depth <= s.max_depth as f64));
}

#[test]
fn subsampling_and_honesty_give_valid_probabilities() {
    let (x, y) = one_informative_feature(200, 8);
    for prior in [
        HonestPrior::Ignore,
        HonestPrior::Uniform,
        HonestPrior::Empirical,
    ] {
        for (bootstrap, max_samples) in [
            (true, Some(MaxSamples::Fraction(0.5))),
            (false, Some(MaxSamples::Count(50))),
            (false, None),
        ] {
            let params = ForestParams {
                n_estimators: 10,
                honest_fraction: 0.5,
                honest_prior: prior,
                bootstrap,
                max_samples,
                ..ForestParams::default()
            };
            let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
            let proba = forest
                .predict_proba(x.view(), &ScoreOptions::new().with_threads(2))
                .unwrap();
            for row in proba.rows() {
                assert!(
                    (row.sum() - 1.0).abs() < 1e-12 && row.iter().all(|p| (0.0..=1.0).contains(p))
                );
            }
            assert!(error_rate(&forest, &x, &y) < 0.2);
        }
    }
}

#[test]
fn one_class_and_float64_input_work() {
    let (x, _) = one_informative_feature(50, 9);
    let forest = Forest::fit(&ForestParams::default(), x.view(), &[0; 50], 1, None).unwrap();
    assert!(forest
        .predict(x.view(), &ScoreOptions::new())
        .unwrap()
        .iter()
        .all(|&c| c == 0));

    let (x, y) = one_informative_feature(100, 10);
    let x64 = x.mapv(f64::from);
    let params = ForestParams {
        n_estimators: 5,
        ..ForestParams::default()
    };
    let from32 = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
    let from64 = Forest::fit(&params, x64.view(), &y, 2, None).unwrap();
    assert_eq!(from32, from64);
    // A transposed (Fortran-order) view is read correctly too.
    let fortran = x.t().to_owned();
    assert_eq!(
        from32
            .predict_proba(fortran.t(), &ScoreOptions::new())
            .unwrap(),
        from32
            .predict_proba(x.view(), &ScoreOptions::new())
            .unwrap()
    );
}
