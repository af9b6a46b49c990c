//! Behaviour of gradient boosting through the public API.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use morf_rs::atoms::SignedPatches;
use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, BoostParams, BoostTargets, Booster, EarlyStopping, FitControl, Loss, MaxFeatures,
    MorfError, Node, Patches, Progress, ScoreOptions, ValidationSize, MAX_BOOSTED_TREES,
};
use ndarray::Array2;

/// Three classes in 10 features: the class is the largest of features 0, 1, 2, in
/// noise.
fn three_classes(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let x = Array2::from_shape_fn((n, 10), |_| rng.unit() as f32);
    let y = (0..n)
        .map(|i| {
            (0..3)
                .max_by(|&a, &b| x[[i, a]].total_cmp(&x[[i, b]]))
                .unwrap() as u32
        })
        .collect();
    (x, y)
}

/// A smooth target of two of 10 features.
fn regression(n: usize, seed: u64) -> (Array2<f32>, Vec<f64>) {
    let mut rng = Rng::new(seed, 0);
    let x = Array2::from_shape_fn((n, 10), |_| (rng.unit() * 4.0 - 2.0) as f32);
    let y = (0..n)
        .map(|i| (x[[i, 0]] as f64).sin() + (x[[i, 3]] as f64).powi(2))
        .collect();
    (x, y)
}

fn classes(labels: &[u32], n_classes: usize) -> BoostTargets<'_> {
    BoostTargets::Classes { labels, n_classes }
}

fn accuracy(model: &Booster, x: &Array2<f32>, y: &[u32]) -> f64 {
    let proba = model.predict(x.view(), &ScoreOptions::new()).unwrap();
    let hits = proba
        .rows()
        .into_iter()
        .zip(y)
        .filter(|(row, &label)| {
            let best = (0..row.len())
                .max_by(|&a, &b| row[a].total_cmp(&row[b]))
                .unwrap();
            best as u32 == label
        })
        .count();
    hits as f64 / y.len() as f64
}

fn patches_1d(n_features: usize) -> AtomKind {
    AtomKind::Patches(Patches::new(vec![n_features], vec![1], vec![3]))
}

#[test]
fn each_loss_learns_its_target() {
    let (x, y) = three_classes(1500, 1);
    let (x_test, y_test) = three_classes(1000, 2);
    let params = BoostParams {
        n_estimators: 60,
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
    assert_eq!(model.loss(), Loss::MultinomialLogLoss { n_classes: 3 });
    assert_eq!(model.trees().len(), 60 * 3);
    let acc = accuracy(&model, &x_test, &y_test);
    assert!(acc > 0.85, "three classes: accuracy {acc}");

    let binary: Vec<u32> = y.iter().map(|&c| u32::from(c == 0)).collect();
    let binary_test: Vec<u32> = y_test.iter().map(|&c| u32::from(c == 0)).collect();
    let model = Booster::fit(&params, x.view(), classes(&binary, 2), None).unwrap();
    assert_eq!(model.trees().len(), 60);
    let acc = accuracy(&model, &x_test, &binary_test);
    assert!(acc > 0.9, "two classes: accuracy {acc}");

    let (x, y) = regression(1500, 3);
    let (x_test, y_test) = regression(1000, 4);
    let model = Booster::fit(&params, x.view(), BoostTargets::Values(&y), None).unwrap();
    let predicted = model.predict(x_test.view(), &ScoreOptions::new()).unwrap();
    let mean = y_test.iter().sum::<f64>() / y_test.len() as f64;
    let residual: f64 = y_test
        .iter()
        .zip(predicted.column(0))
        .map(|(t, p)| (t - p).powi(2))
        .sum();
    let total: f64 = y_test.iter().map(|t| (t - mean).powi(2)).sum();
    let r2 = 1.0 - residual / total;
    assert!(r2 > 0.95, "regression: R^2 {r2}");
    let losses = model.train_loss();
    assert_eq!(losses.len(), 61);
    assert!(losses.windows(2).all(|w| w[1] <= w[0]), "{losses:?}");
}

#[test]
fn same_seed_gives_the_same_model_for_any_number_of_threads() {
    let (x, y) = three_classes(700, 5);
    let (xr, yr) = regression(700, 6);
    for atoms in [
        AtomKind::AxisAligned,
        AtomKind::SparseOblique {
            feature_combinations: 2.0,
        },
        patches_1d(10),
    ] {
        let params = BoostParams {
            n_estimators: 8,
            atoms: atoms.clone(),
            max_features: MaxFeatures::Count(40),
            subsample: 0.7,
            random_state: 11,
            early_stopping: Some(EarlyStopping::default()),
            ..BoostParams::default()
        };
        let fit = |n_threads, regress: bool| {
            let params = BoostParams {
                n_threads,
                max_features: if atoms == AtomKind::AxisAligned {
                    MaxFeatures::All
                } else {
                    params.max_features
                },
                ..params.clone()
            };
            let model = if regress {
                Booster::fit(&params, xr.view(), BoostTargets::Values(&yr), None)
            } else {
                Booster::fit(&params, x.view(), classes(&y, 3), None)
            };
            model.unwrap().to_bytes()
        };
        for regress in [false, true] {
            let one = fit(1, regress);
            assert!(
                one == fit(2, regress),
                "{atoms:?}, regression {regress}: 2 threads"
            );
            assert!(
                one == fit(3, regress),
                "{atoms:?}, regression {regress}: 3 threads"
            );
        }
    }
}

#[test]
fn training_scores_follow_the_thresholds_that_scoring_uses() {
    // The training loss is kept from bins (rows in the round's sample) and from trees
    // walked on thresholds (rows left out); scoring walks thresholds only. Both must
    // put every row in the same leaf.
    let (x, y) = three_classes(900, 7);
    let x = x.mapv(|v| (v * 40.0).round() - 5.0); // whole values: many ties
    let params = BoostParams {
        n_estimators: 15,
        subsample: 0.6,
        atoms: AtomKind::SparseOblique {
            feature_combinations: 3.0,
        },
        max_features: MaxFeatures::Count(30),
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
    let proba = model
        .predict(x.view(), &ScoreOptions::new().with_threads(2))
        .unwrap();
    let log_loss = y
        .iter()
        .enumerate()
        .map(|(i, &label)| -proba[[i, label as usize]].ln())
        .sum::<f64>()
        / y.len() as f64;
    let recorded = *model.train_loss().last().unwrap();
    assert!(
        (log_loss - recorded).abs() < 1e-9,
        "scored {log_loss}, recorded while training {recorded}"
    );
}

#[test]
fn trees_respect_their_limits() {
    let (x, y) = regression(800, 8);
    let fit = |params: BoostParams| {
        Booster::fit(&params, x.view(), BoostTargets::Values(&y), None).unwrap()
    };
    let base = BoostParams {
        n_estimators: 5,
        ..BoostParams::default()
    };
    let model = fit(BoostParams {
        max_leaf_nodes: Some(5),
        ..base.clone()
    });
    assert!(model.tree_stats().iter().all(|s| s.n_leaves == 5));
    let model = fit(BoostParams {
        max_leaf_nodes: None,
        max_depth: Some(2),
        min_samples_leaf: 1,
        ..base.clone()
    });
    assert!(model.tree_stats().iter().all(|s| s.max_depth == 2));
    let model = fit(BoostParams {
        max_leaf_nodes: None,
        min_samples_leaf: 45,
        ..base.clone()
    });
    for tree in model.trees() {
        let mut per_leaf = std::collections::HashMap::new();
        for row in x.rows() {
            *per_leaf
                .entry(tree.leaf_of(row.as_slice().unwrap()))
                .or_insert(0) += 1;
        }
        assert!(per_leaf.values().all(|&n| n >= 45), "{per_leaf:?}");
        assert!(per_leaf.len() > 4);
    }
}

#[test]
fn early_stopping_stops_when_the_held_out_loss_does() {
    // Labels independent of X: the held-out loss only gets worse.
    let (x, _) = three_classes(600, 9);
    let mut rng = Rng::new(10, 0);
    let y: Vec<u32> = (0..600).map(|_| rng.below(2) as u32).collect();
    let params = BoostParams {
        n_estimators: 200,
        early_stopping: Some(EarlyStopping {
            validation_size: ValidationSize::Count(150),
            n_iter_no_change: 5,
            tol: 0.0,
        }),
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&y, 2), None).unwrap();
    let rounds = model.n_rounds();
    assert!(rounds < 50, "trained {rounds} rounds");
    let losses = model.validation_loss();
    assert_eq!(losses.len(), rounds + 1);
    let reference = losses[rounds - 5];
    assert!(losses[rounds - 4..].iter().all(|&l| l >= reference));
    assert!(losses[..rounds - 5]
        .windows(6)
        .all(|w| w[1..].iter().any(|&l| l < w[0])));
}

#[test]
fn progress_counts_trees_and_cancelling_stops_the_fit() {
    let (x, y) = three_classes(300, 12);
    let params = BoostParams {
        n_estimators: 20,
        ..BoostParams::default()
    };
    let reports = Mutex::new(Vec::new());
    let record = |p: Progress| reports.lock().unwrap().push((p.trees_done, p.n_trees));
    let control = FitControl::new().with_progress(&record);
    let model = Booster::fit_with(&params, x.view(), classes(&y, 3), None, &control).unwrap();
    let reports = reports.into_inner().unwrap();
    assert_eq!(reports, (1..=60).map(|done| (done, 60)).collect::<Vec<_>>());
    // Progress does not change the model.
    let quiet = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
    assert!(model == quiet);

    let cancel = AtomicBool::new(false);
    let stop_after_7 = |p: Progress| {
        if p.trees_done == 7 {
            cancel.store(true, Ordering::Relaxed);
        }
    };
    let control = FitControl::new()
        .with_progress(&stop_after_7)
        .with_cancel(&cancel);
    let stopped = Booster::fit_with(&params, x.view(), classes(&y, 3), None, &control);
    assert_eq!(stopped, Err(MorfError::Cancelled));
    let cancel = AtomicBool::new(true);
    let mut raw = Array2::zeros((x.nrows(), 3));
    let stoppable = ScoreOptions::new().with_cancel(&cancel);
    let result = quiet.predict_raw_rounds_into(x.view(), 0..20, raw.view_mut(), &stoppable);
    assert_eq!(result, Err(MorfError::Cancelled));
}

#[test]
fn a_sample_of_weight_zero_is_a_sample_left_out() {
    let (x, y) = three_classes(400, 13);
    let weights: Vec<f64> = (0..400).map(|i| [1.0, 0.0, 2.5][i % 3]).collect();
    let kept: Vec<usize> = (0..400).filter(|&i| weights[i] > 0.0).collect();
    let x_kept = x.select(ndarray::Axis(0), &kept);
    let y_kept: Vec<u32> = kept.iter().map(|&i| y[i]).collect();
    let w_kept: Vec<f64> = kept.iter().map(|&i| weights[i]).collect();
    let params = BoostParams {
        n_estimators: 6,
        subsample: 0.8,
        ..BoostParams::default()
    };
    let with_zeros = Booster::fit(&params, x.view(), classes(&y, 3), Some(&weights)).unwrap();
    let without = Booster::fit(&params, x_kept.view(), classes(&y_kept, 3), Some(&w_kept)).unwrap();
    assert!(with_zeros.to_bytes() == without.to_bytes());
    let unweighted = Booster::fit(&params, x_kept.view(), classes(&y_kept, 3), None).unwrap();
    assert!(unweighted.to_bytes() != without.to_bytes());
}

/// What the trees of `rounds` add to the raw scores of `x`'s rows, on `n_threads`.
fn rounds_raw(
    model: &Booster,
    x: &Array2<f32>,
    rounds: std::ops::Range<usize>,
    n_threads: usize,
) -> Result<Array2<f64>, MorfError> {
    let mut raw = Array2::zeros((x.nrows(), model.loss().n_outputs()));
    let options = ScoreOptions::new().with_threads(n_threads);
    model.predict_raw_rounds_into(x.view(), rounds, raw.view_mut(), &options)?;
    Ok(raw)
}

#[test]
fn rounds_add_up_to_the_raw_scores() {
    let (x, y) = three_classes(300, 14);
    let params = BoostParams {
        n_estimators: 7,
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
    let raw = model.predict_raw(x.view(), &ScoreOptions::new()).unwrap();
    let first = rounds_raw(&model, &x, 0..3, 2).unwrap();
    let rest = rounds_raw(&model, &x, 3..7, 1).unwrap();
    let baseline = ndarray::Array1::from(model.baseline().to_vec());
    let summed = &first + &rest + &baseline;
    assert!(raw
        .iter()
        .zip(summed.iter())
        .all(|(a, b)| (a - b).abs() < 1e-9));
    assert!(rounds_raw(&model, &x, 3..8, 1).is_err());
    let proba = model.transform(raw.view());
    assert!(proba
        .rows()
        .into_iter()
        .all(|r| (r.sum() - 1.0).abs() < 1e-12));
}

#[test]
fn importances_point_at_the_informative_features() {
    let (x, y) = three_classes(800, 15);
    let params = BoostParams {
        n_estimators: 10,
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
    for importances in [
        model.split_count_importances().unwrap(),
        model.gain_importances().unwrap(),
    ] {
        assert!((importances.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let informative: f64 = importances[..3].iter().sum();
        assert!(informative > 0.6, "{importances:?}");
    }
}

#[test]
fn one_class_is_a_constant_model_of_probability_one() {
    let (x, _) = three_classes(200, 18);
    let params = BoostParams {
        n_estimators: 3,
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&[0; 200], 1), None).unwrap();
    assert_eq!(model.loss(), Loss::MultinomialLogLoss { n_classes: 1 });
    assert_eq!(model.n_rounds(), 3);
    // Zero gradients leave every tree a single leaf of value 0.
    assert!(model.trees().iter().all(|tree| tree.nodes().len() == 1));
    let (x_test, _) = three_classes(50, 19);
    let proba = model
        .predict(x_test.view(), &ScoreOptions::new().with_threads(2))
        .unwrap();
    assert_eq!(proba.dim(), (50, 1));
    assert!(proba.iter().all(|&p| p == 1.0));
    let loaded = Booster::from_bytes(&model.to_bytes()).unwrap();
    assert_eq!(loaded, model);
}

#[test]
fn saved_models_load_back_and_damaged_bytes_do_not() {
    let (x, y) = three_classes(300, 16);
    let params = BoostParams {
        n_estimators: 4,
        atoms: patches_1d(10),
        max_features: MaxFeatures::Count(20),
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
    let bytes = model.to_bytes();
    let loaded = Booster::from_bytes(&bytes).unwrap();
    assert_eq!(loaded, model);
    assert!(matches!(
        Booster::from_bytes(&bytes[..bytes.len() - 3]),
        Err(MorfError::Deserialize(_))
    ));
    let mut wrong_version = bytes.clone();
    wrong_version[4] = 9;
    assert!(Booster::from_bytes(&wrong_version).is_err());
    assert!(Booster::from_bytes(b"MORF\x02\x00").is_err());
    // The checksum catches any single damaged byte.
    for i in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[i] ^= 0xa5;
        assert!(Booster::from_bytes(&damaged).is_err(), "byte {i}");
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let (x, y) = three_classes(100, 17);
    let base = BoostParams {
        n_estimators: 2,
        ..BoostParams::default()
    };
    let invalid = |params: BoostParams, name: &str| match Booster::fit(
        &params,
        x.view(),
        classes(&y, 3),
        None,
    ) {
        Err(MorfError::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
        other => panic!("{name}: {other:?}"),
    };
    invalid(
        BoostParams {
            learning_rate: 0.0,
            ..base.clone()
        },
        "learning_rate",
    );
    invalid(
        BoostParams {
            max_bins: 1,
            ..base.clone()
        },
        "max_bins",
    );
    invalid(
        BoostParams {
            max_bins: 257,
            ..base.clone()
        },
        "max_bins",
    );
    invalid(
        BoostParams {
            subsample: 0.0,
            ..base.clone()
        },
        "subsample",
    );
    invalid(
        BoostParams {
            max_leaf_nodes: Some(1),
            ..base.clone()
        },
        "max_leaf_nodes",
    );
    invalid(
        BoostParams {
            min_samples_leaf: 0,
            ..base.clone()
        },
        "min_samples_leaf",
    );
    invalid(
        BoostParams {
            l2_regularization: -1.0,
            ..base.clone()
        },
        "l2_regularization",
    );
    invalid(
        BoostParams {
            early_stopping: Some(EarlyStopping {
                validation_size: ValidationSize::Count(100),
                ..EarlyStopping::default()
            }),
            ..base.clone()
        },
        "validation_fraction",
    );
    assert!(matches!(
        Booster::fit(&base, x.view(), classes(&y, 2), None),
        Err(MorfError::LabelOutOfRange { .. })
    ));
    assert!(Booster::fit(&base, x.view(), classes(&[0; 100], 0), None).is_err());
    assert!(Booster::fit(&base, x.view(), classes(&y[..50], 3), None).is_err());
    let mut with_infinity = x.clone();
    with_infinity[[5, 1]] = f32::INFINITY;
    assert!(matches!(
        Booster::fit(&base, with_infinity.view(), classes(&y, 3), None),
        Err(MorfError::NonFiniteInput { row: 5, column: 1 })
    ));
    let values = vec![f64::INFINITY; 100];
    assert!(Booster::fit(&base, x.view(), BoostTargets::Values(&values), None).is_err());
    assert!(Booster::fit(&base, x.view(), classes(&y, 3), Some(&[0.0; 100])).is_err());
    let model = Booster::fit(&base, x.view(), classes(&y, 3), None).unwrap();
    let mut infinity_at_scoring = Array2::<f32>::zeros((300, 10));
    infinity_at_scoring[[257, 2]] = f32::INFINITY;
    assert!(matches!(
        model.predict(
            infinity_at_scoring.view(),
            &ScoreOptions::new().with_threads(2)
        ),
        Err(MorfError::NonFiniteInput {
            row: 257,
            column: 2
        })
    ));
    let narrow = Array2::<f32>::zeros((4, 9));
    assert!(matches!(
        model.predict(narrow.view(), &ScoreOptions::new()),
        Err(MorfError::ShapeMismatch { .. })
    ));
}

/// 6x6 images of whole values 0..=9; the class is the brightest of three bands of
/// rows, and a regression target their weighted sum.
fn banded_images(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>, Vec<f64>) {
    let mut rng = Rng::new(seed, 0);
    let x = Array2::from_shape_fn((n, 36), |_| (rng.unit() * 10.0).floor() as f32);
    let band = |i: usize, b: usize| x.row(i).iter().skip(12 * b).take(12).sum::<f32>();
    let y = (0..n)
        .map(|i| {
            (0..3)
                .max_by(|&a, &b| band(i, a).total_cmp(&band(i, b)))
                .unwrap() as u32
        })
        .collect();
    let values = (0..n)
        .map(|i| (band(i, 0) - 0.5 * band(i, 2)) as f64)
        .collect();
    (x, y, values)
}

/// Each row's raw scores from the trees walked one by one, row by row, through the
/// public tree API: the sum over `rounds`' trees of their leaf values in tree order.
fn walked_raw_scores(
    model: &Booster,
    x: &Array2<f32>,
    rounds: std::ops::Range<usize>,
) -> Array2<f64> {
    let k_out = model.loss().n_outputs();
    let trees = &model.trees()[rounds.start * k_out..rounds.end * k_out];
    let mut raw = Array2::zeros((x.nrows(), k_out));
    for (row, mut out) in x.rows().into_iter().zip(raw.rows_mut()) {
        let row = row.to_vec();
        for (t, tree) in trees.iter().enumerate() {
            let leaf = tree.leaf_of(&row);
            out[t % k_out] += tree.leaf_values(leaf).map_or(0.0, |values| values[0]);
        }
    }
    raw
}

/// Rows of `x` with one feature set to where a single-feature split's projection
/// equals its threshold, one row per such split of `model` (where a value gives it).
fn rows_on_thresholds(model: &Booster, x: &Array2<f32>) -> Array2<f32> {
    let mut rows = Vec::new();
    for tree in model.trees() {
        for node in tree.nodes() {
            if let Node::SplitOnFeature {
                feature,
                weight,
                threshold,
                ..
            } = *node
            {
                let value = threshold / weight;
                if weight * value == threshold {
                    let mut row = x.row(rows.len() % x.nrows()).to_owned();
                    row[feature as usize] = value;
                    rows.push(row);
                }
            }
        }
    }
    let views: Vec<_> = rows.iter().map(|row| row.view()).collect();
    ndarray::stack(ndarray::Axis(0), &views).unwrap()
}

#[test]
fn scoring_gives_bit_for_bit_the_raw_scores_of_a_walk_of_each_tree() {
    // 293 rows: blocks of rows cut at several places, the last one partial.
    let (x, y, values) = banded_images(293, 21);
    let (x_test, _, _) = banded_images(293, 22);
    let image = Patches::new(vec![6, 6], vec![1, 1], vec![3, 3]);
    let dictionary = AtomKind::Mixture(vec![
        (
            AtomKind::SignedPatches(SignedPatches::new(image.clone(), 2)),
            0.3,
        ),
        (AtomKind::Gabors(image.clone()), 0.3),
        (AtomKind::Patches(image), 0.2),
        (AtomKind::AxisAligned, 0.2),
    ]);
    for atoms in [dictionary, AtomKind::AxisAligned] {
        let params = BoostParams {
            n_estimators: 6,
            atoms: atoms.clone(),
            max_features: MaxFeatures::Count(20),
            min_samples_leaf: 3,
            ..BoostParams::default()
        };
        let classifier = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
        let regressor =
            Booster::fit(&params, x.view(), BoostTargets::Values(&values), None).unwrap();
        for model in [classifier, regressor] {
            // Fresh rows and scaled rows fall between the thresholds (midpoints); the
            // rows made to meet them exactly must go left.
            let scaled = x.mapv(|v| v * 0.37 - 1.1);
            let on_thresholds = rows_on_thresholds(&model, &x_test);
            assert!(on_thresholds.nrows() > 5, "{}", on_thresholds.nrows());
            let mut with_missing = x_test.clone();
            with_missing
                .iter_mut()
                .step_by(7)
                .for_each(|v| *v = f32::NAN);
            for rows in [&x, &x_test, &scaled, &on_thresholds, &with_missing] {
                let mut expected = walked_raw_scores(&model, rows, 0..6);
                for mut row in expected.rows_mut() {
                    row += &ndarray::ArrayView1::from(model.baseline());
                }
                assert_eq!(
                    model
                        .predict_raw(rows.view(), &ScoreOptions::new())
                        .unwrap(),
                    expected,
                    "{atoms:?}"
                );
                assert_eq!(
                    rounds_raw(&model, rows, 2..5, 1).unwrap(),
                    walked_raw_scores(&model, rows, 2..5),
                    "{atoms:?}, rounds 2..5"
                );
                // A few rows alone, as a call for one row scores them.
                for n in [1, 5, 8, 9] {
                    let few = rows.slice(ndarray::s![..n, ..]);
                    assert_eq!(
                        model.predict_raw(few, &ScoreOptions::new()).unwrap(),
                        expected.slice(ndarray::s![..n, ..]),
                        "{atoms:?}, {n} rows"
                    );
                }
            }
            // The same rows as float64 and as bytes score the same.
            let x64 = x.mapv(f64::from);
            let x8 = x.mapv(|v| v as u8);
            let raw = model.predict_raw(x.view(), &ScoreOptions::new()).unwrap();
            assert_eq!(
                model.predict_raw(x64.view(), &ScoreOptions::new()).unwrap(),
                raw
            );
            assert_eq!(
                model.predict_raw(x8.view(), &ScoreOptions::new()).unwrap(),
                raw
            );
        }
    }
}

#[test]
fn scores_are_the_same_for_any_number_of_threads_and_layout_of_x() {
    // 293 rows: each number of threads cuts them into chunks of another size.
    let (x, y, _) = banded_images(293, 23);
    let params = BoostParams {
        n_estimators: 5,
        atoms: AtomKind::SignedPatches(SignedPatches::new(
            Patches::new(vec![6, 6], vec![1, 1], vec![4, 4]),
            2,
        )),
        max_features: MaxFeatures::Count(20),
        min_samples_leaf: 3,
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
    let x = x.mapv(|v| v * 0.29 + 0.013);
    let one = model.predict_raw(x.view(), &ScoreOptions::new()).unwrap();
    let column_major = x.t().as_standard_layout().into_owned().reversed_axes();
    for n_threads in [2, 3, 4] {
        assert_eq!(
            model
                .predict_raw(x.view(), &ScoreOptions::new().with_threads(n_threads))
                .unwrap(),
            one,
            "{n_threads} threads"
        );
        assert_eq!(
            model
                .predict_raw(
                    column_major.view(),
                    &ScoreOptions::new().with_threads(n_threads)
                )
                .unwrap(),
            one,
            "{n_threads} threads, column-major X"
        );
    }
}

/// Two classes told apart only by whether feature 7 is missing, and three classes
/// (as [`three_classes`]) with missing cells at random in every feature.
fn with_missing_values(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>, Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 1);
    let (mut informative, _) = three_classes(n, seed);
    let labels: Vec<u32> = (0..n).map(|_| rng.below(2) as u32).collect();
    for (i, &label) in labels.iter().enumerate() {
        if label == 1 {
            informative[[i, 7]] = f32::NAN;
        }
    }
    let (mut x, y) = three_classes(n, seed + 1);
    x.mapv_inplace(|v| if rng.below(10) == 0 { f32::NAN } else { v });
    (informative, labels, x, y)
}

#[test]
fn missing_values_go_to_the_side_learnt_at_fit() {
    let (x, y, _, _) = with_missing_values(600, 1);
    let (x_test, y_test, _, _) = with_missing_values(600, 2);
    for atoms in [
        AtomKind::AxisAligned,
        AtomKind::SparseOblique {
            feature_combinations: 2.0,
        },
    ] {
        let params = BoostParams {
            n_estimators: 5,
            max_features: match atoms {
                AtomKind::AxisAligned => MaxFeatures::All,
                _ => MaxFeatures::Count(20),
            },
            atoms: atoms.clone(),
            ..BoostParams::default()
        };
        let model = Booster::fit(&params, x.view(), classes(&y, 2), None).unwrap();
        // Only a split of present from missing values (or a missing side beside a
        // threshold) tells the classes apart.
        assert_eq!(accuracy(&model, &x_test, &y_test), 1.0, "{atoms:?}");
        let reloaded = Booster::from_bytes(&model.to_bytes()).unwrap();
        assert_eq!(
            reloaded
                .predict(x_test.view(), &ScoreOptions::new().with_threads(2))
                .unwrap(),
            model.predict(x_test.view(), &ScoreOptions::new()).unwrap()
        );
    }
}

#[test]
fn with_missing_values_training_and_scoring_agree_and_threads_do_not_matter() {
    let (_, _, x, y) = with_missing_values(900, 3);
    let params = BoostParams {
        n_estimators: 12,
        subsample: 0.6,
        max_bins: 256,
        atoms: AtomKind::SparseOblique {
            feature_combinations: 2.0,
        },
        max_features: MaxFeatures::Count(30),
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
    // Rows in a round's sample follow bins, the others thresholds and learnt sides,
    // as scoring does: both must reach the same leaves.
    let proba = model
        .predict(x.view(), &ScoreOptions::new().with_threads(2))
        .unwrap();
    let log_loss = y
        .iter()
        .enumerate()
        .map(|(i, &label)| -proba[[i, label as usize]].ln())
        .sum::<f64>()
        / y.len() as f64;
    let recorded = *model.train_loss().last().unwrap();
    assert!(
        (log_loss - recorded).abs() < 1e-9,
        "scored {log_loss}, recorded while training {recorded}"
    );
    assert!(accuracy(&model, &x, &y) > 0.8);
    let with_threads = |n_threads| {
        let params = BoostParams {
            n_threads,
            ..params.clone()
        };
        Booster::fit(&params, x.view(), classes(&y, 3), None)
            .unwrap()
            .to_bytes()
    };
    let one = with_threads(1);
    assert!(one == with_threads(2) && one == with_threads(3));
}

#[test]
fn parameters_and_targets_that_would_give_non_finite_models_are_refused() {
    let (x, y) = three_classes(200, 23);
    let (xr, values) = regression(200, 23);
    let binary: Vec<u32> = y.iter().map(|&l| l.min(1)).collect();
    let runaway = BoostParams {
        n_estimators: 5,
        learning_rate: 1e308,
        ..BoostParams::default()
    };
    for (x, targets) in [
        (&xr, BoostTargets::Values(&values)),
        (&x, classes(&binary, 2)),
        (&x, classes(&y, 3)),
    ] {
        match Booster::fit(&runaway, x.view(), targets, None) {
            Err(MorfError::InvalidParameter { name, reason }) => {
                assert_eq!(name, "learning_rate");
                assert!(reason.contains("smaller learning_rate"), "{reason}");
            }
            other => panic!("{:?}: {other:?}", targets.loss()),
        }
    }
    // Finite in float64, infinite in float32: the gradients would overflow.
    let params = BoostParams {
        n_estimators: 3,
        ..BoostParams::default()
    };
    let huge: Vec<f64> = values.iter().map(|v| v * 1e39).collect();
    match Booster::fit(&params, xr.view(), BoostTargets::Values(&huge), None) {
        Err(MorfError::InvalidParameter { name: "y", reason }) => {
            assert!(reason.contains("divide y"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    // Each the same, but their mean rounds to a residual beyond float32.
    let offset: Vec<f64> = values.iter().map(|v| v + 1e300).collect();
    let error = Booster::fit(&params, xr.view(), BoostTargets::Values(&offset), None);
    assert!(
        matches!(error, Err(MorfError::InvalidParameter { name: "y", .. })),
        "{error:?}"
    );
    // Large but fine.
    let large: Vec<f64> = values.iter().map(|v| v * 1e20).collect();
    let model = Booster::fit(&params, xr.view(), BoostTargets::Values(&large), None).unwrap();
    assert!(model
        .predict(xr.view(), &ScoreOptions::new())
        .unwrap()
        .iter()
        .all(|p| p.is_finite()));
}

#[test]
fn too_many_classes_or_trees_fail_cleanly_before_allocating() {
    let n = 100_000;
    let x = Array2::<f32>::zeros((n, 2));
    let labels: Vec<u32> = (0..n as u32).map(|i| i % 3).collect();
    let params = BoostParams {
        n_estimators: 1,
        ..BoostParams::default()
    };
    // One raw score per sample and class: 13 TB.
    let many = classes(&labels, MAX_BOOSTED_TREES);
    let error = Booster::fit(&params, x.view(), many, None).unwrap_err();
    assert!(matches!(error, MorfError::OutOfMemory { .. }), "{error}");
    let too_many = classes(&labels, MAX_BOOSTED_TREES + 1);
    let error = Booster::fit(&params, x.view(), too_many, None).unwrap_err();
    assert!(error.to_string().contains("fewer classes"), "{error}");
    let rounds = BoostParams {
        n_estimators: MAX_BOOSTED_TREES,
        ..BoostParams::default()
    };
    let error = Booster::fit(&rounds, x.view(), classes(&labels, 3), None).unwrap_err();
    assert!(error.to_string().contains("use fewer rounds"), "{error}");
}
