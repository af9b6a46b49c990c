//! Bad input to fit and scoring is an error that says what to fix.

use crate::common::one_informative_feature;
use morf_rs::{
    AtomKind, Forest, ForestParams, MaxFeatures, MaxSamples, MorfError, Patches, ScoreOptions,
};
use ndarray::{s, Array2};

#[test]
fn bad_input_is_an_error_that_says_what_is_wrong() {
    let (x, y) = one_informative_feature(20, 11);
    let ok = ForestParams {
        n_estimators: 2,
        ..ForestParams::default()
    };
    let fit = |params: &ForestParams, x: &Array2<f32>, y: &[u32], n_classes, w: Option<&[f64]>| {
        Forest::fit(params, x.view(), y, n_classes, w).unwrap_err()
    };
    assert!(matches!(
        fit(&ok, &x.slice(s![..0, ..]).to_owned(), &[], 2, None),
        MorfError::EmptyData { .. }
    ));
    assert!(matches!(
        fit(&ok, &x, &y[..5], 2, None),
        MorfError::ShapeMismatch { .. }
    ));
    // NaN marks a missing value; infinity is refused.
    let mut with_infinity = x.clone();
    with_infinity[[3, 1]] = f32::NAN;
    with_infinity[[4, 2]] = f32::NEG_INFINITY;
    assert_eq!(
        fit(&ok, &with_infinity, &y, 2, None),
        MorfError::NonFiniteInput { row: 4, column: 2 }
    );
    with_infinity[[4, 2]] = f32::INFINITY;
    assert!(fit(&ok, &with_infinity, &y, 2, None)
        .to_string()
        .contains("X contains infinity"));
    assert!(matches!(
        fit(&ok, &x, &y, 1, None),
        MorfError::LabelOutOfRange { label: 1, .. }
    ));
    let mut weights = vec![1.0; 20];
    weights[3] = -1.0;
    assert!(matches!(
        fit(&ok, &x, &y, 2, Some(&weights)),
        MorfError::InvalidSampleWeight { index: 3, .. }
    ));
    assert_eq!(
        fit(&ok, &x, &y, 2, Some(&[0.0; 20])),
        MorfError::ZeroTotalWeight
    );
    assert!(matches!(
        fit(&ok, &x, &y, 2, Some(&[1.0; 3])),
        MorfError::ShapeMismatch { .. }
    ));

    let cases: Vec<(ForestParams, &str)> = vec![
        (
            ForestParams {
                n_estimators: 0,
                ..ok.clone()
            },
            "n_estimators",
        ),
        (
            ForestParams {
                min_samples_split: 1,
                ..ok.clone()
            },
            "min_samples_split",
        ),
        (
            ForestParams {
                min_samples_leaf: 0,
                ..ok.clone()
            },
            "min_samples_leaf",
        ),
        (
            ForestParams {
                max_depth: Some(0),
                ..ok.clone()
            },
            "max_depth: must be at least 1, or None for no limit, got 0",
        ),
        (
            ForestParams {
                honest_fraction: 1.0,
                ..ok.clone()
            },
            "honest_fraction",
        ),
        (
            ForestParams {
                honest_fraction: 0.01,
                ..ok.clone()
            },
            "honest_fraction",
        ),
        (
            ForestParams {
                min_impurity_decrease: f64::NAN,
                ..ok.clone()
            },
            "min_impurity_decrease",
        ),
        (
            ForestParams {
                max_leaf_nodes: Some(1),
                ..ok.clone()
            },
            "max_leaf_nodes",
        ),
        (
            ForestParams {
                ccp_alpha: -0.5,
                ..ok.clone()
            },
            "ccp_alpha",
        ),
        (
            ForestParams {
                ccp_alpha: f64::INFINITY,
                ..ok.clone()
            },
            "ccp_alpha",
        ),
        (
            ForestParams {
                max_samples: Some(MaxSamples::Fraction(1.5)),
                ..ok.clone()
            },
            "max_samples",
        ),
        (
            ForestParams {
                max_features: MaxFeatures::Count(13),
                ..ok.clone()
            },
            "max_features",
        ),
        (
            ForestParams {
                max_features: MaxFeatures::Fraction(0.0),
                ..ok.clone()
            },
            "max_features",
        ),
        (
            ForestParams {
                atoms: AtomKind::SparseOblique {
                    feature_combinations: 0.5,
                },
                ..ok.clone()
            },
            "feature_combinations",
        ),
        (
            ForestParams {
                atoms: AtomKind::Patches(Patches::new(vec![5, 3], vec![1, 1], vec![2, 2])),
                ..ok.clone()
            },
            "image_shape",
        ),
        (
            ForestParams {
                atoms: AtomKind::Patches(Patches::new(vec![3, 4], vec![1, 1], vec![2, 5])),
                ..ok.clone()
            },
            "larger than the image",
        ),
    ];
    for (params, expected) in cases {
        let message = fit(&params, &x, &y, 2, None).to_string();
        assert!(
            message.contains(expected),
            "{message:?} should mention {expected:?}"
        );
    }

    let forest = Forest::fit(&ok, x.view(), &y, 2, None).unwrap();
    let narrow = x.slice(s![.., ..11]).to_owned();
    let message = forest
        .predict_proba(narrow.view(), &ScoreOptions::new())
        .unwrap_err()
        .to_string();
    assert!(message.contains("expected 12, got 11"), "{message}");
    assert!(matches!(
        forest.predict(with_infinity.view(), &ScoreOptions::new()),
        Err(MorfError::NonFiniteInput { .. })
    ));
}
