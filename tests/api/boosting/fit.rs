//! Fitting: losses, determinism, limits, early stopping, progress, weights, saving.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, BoostParams, Booster, EarlyStopping, FitControl, Loss, MaxFeatures, MorfError,
    Progress, ScoreOptions, ValidationSize,
};
use ndarray::Array2;

use super::*;

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
    assert_scored_loss_is_the_recorded_one(&model, &x, &y);
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
