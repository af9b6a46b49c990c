//! Bad parameters, targets and inputs: errors, never panics, non-finite models or runaway allocation.

use morf_rs::{
    BoostParams, BoostTargets, Booster, EarlyStopping, MorfError, ScoreOptions, ValidationSize,
    MAX_BOOSTED_TREES,
};
use ndarray::Array2;

use super::*;

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
            max_depth: Some(0),
            ..base.clone()
        },
        "max_depth",
    );
    let message = |params: BoostParams| {
        Booster::fit(&params, x.view(), classes(&y, 3), None)
            .unwrap_err()
            .to_string()
    };
    let too_few_leaves = BoostParams {
        max_leaf_nodes: Some(1),
        ..base.clone()
    };
    assert!(message(too_few_leaves).ends_with("or None for no limit, got 1"));
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
