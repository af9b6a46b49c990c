//! Parameters and inputs whose cost is absurd fail with a message instead of
//! exhausting the machine; extreme but valid input trains as ordinary input does.

use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, Forest, ForestParams, MaxFeatures, MorfError, Patches, ScoreOptions, MAX_ESTIMATORS,
    MAX_NODE_PROJECTIONS,
};
use ndarray::Array2;

/// Two noisy classes over 8 features, the label in features 2 and 5.
fn two_classes(n: usize, seed: u64) -> (Array2<f64>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let x = Array2::from_shape_fn((n, 8), |(i, j)| {
        rng.unit() + if j == 2 || j == 5 { y[i] as f64 } else { 0.0 }
    });
    (x, y)
}

fn params(atoms: AtomKind, max_features: MaxFeatures) -> ForestParams {
    ForestParams {
        n_estimators: 4,
        atoms,
        max_features,
        random_state: 3,
        ..ForestParams::default()
    }
}

fn fit_error(params: &ForestParams, x: &Array2<f64>, y: &[u32]) -> String {
    Forest::fit(params, x.view(), y, 2, None)
        .unwrap_err()
        .to_string()
}

#[test]
fn absurd_tree_and_atom_counts_are_refused_with_the_reason() {
    let (x, y) = two_classes(50, 1);
    for n_estimators in [MAX_ESTIMATORS + 1, 1_000_000_000_000, 1 << 62] {
        let message = fit_error(
            &ForestParams {
                n_estimators,
                ..ForestParams::default()
            },
            &x,
            &y,
        );
        assert!(
            message.contains("n_estimators") && message.contains("too large"),
            "{message}"
        );
    }
    let oblique = AtomKind::SparseOblique {
        feature_combinations: 1.5,
    };
    let patches = AtomKind::Patches(Patches::new(vec![8], vec![1], vec![3]));
    for atoms in [oblique, patches] {
        for max_features in [
            MaxFeatures::Count(1_000_000_000),
            MaxFeatures::Fraction(1e9),
            MaxFeatures::Fraction(1e300),
            MaxFeatures::Count(MAX_NODE_PROJECTIONS / 50 + 1),
        ] {
            let message = fit_error(&params(atoms.clone(), max_features), &x, &y);
            assert!(
                message.contains("max_features") && message.contains("too large"),
                "{message}"
            );
        }
        // Many more atoms than features, within the bound, train.
        let few_trees = ForestParams {
            n_estimators: 1,
            max_depth: Some(2),
            ..params(atoms.clone(), MaxFeatures::Count(1000))
        };
        Forest::fit(&few_trees, x.view(), &y, 2, None).unwrap();
    }
}

#[test]
fn more_threads_than_cores_train_the_same_forest() {
    let (x, y) = two_classes(60, 2);
    let one = Forest::fit(
        &params(AtomKind::AxisAligned, MaxFeatures::Sqrt),
        x.view(),
        &y,
        2,
        None,
    )
    .unwrap();
    let many = ForestParams {
        n_threads: 1 << 40,
        ..params(AtomKind::AxisAligned, MaxFeatures::Sqrt)
    };
    // Without the cap at the available cores, starting 2^40 threads fails.
    let forest = Forest::fit(&many, x.view(), &y, 2, None).unwrap();
    assert_eq!(forest, one);
    assert_eq!(
        forest
            .predict_proba(x.view(), &ScoreOptions::new().with_threads(1 << 40))
            .unwrap(),
        one.predict_proba(x.view(), &ScoreOptions::new()).unwrap()
    );
}

#[test]
fn weights_train_the_same_trees_at_any_scale() {
    let (x, y) = two_classes(80, 4);
    let weights: Vec<f64> = (0..80).map(|i| [1.0, 2.0, 0.5, 3.0][i % 4]).collect();
    for atoms in [
        AtomKind::AxisAligned,
        AtomKind::SparseOblique {
            feature_combinations: 2.0,
        },
    ] {
        let params = params(atoms, MaxFeatures::Sqrt);
        let fit = |weights: &[f64]| Forest::fit(&params, x.view(), &y, 2, Some(weights)).unwrap();
        let reference = fit(&weights);
        // Scaling by a power of two is exact: the rescaled weights are the same bits.
        for scale in [2f64.powi(-1000), 2f64.powi(1000), 2f64.powi(1021)] {
            let scaled: Vec<f64> = weights.iter().map(|w| w * scale).collect();
            assert!(scaled.iter().all(|w| w.is_finite() && *w > 0.0));
            assert_eq!(fit(&scaled), reference, "scale {scale:e}");
        }
        // Equal weights of any size train as unit weights do (issue 14: 1e308 gave
        // NaN probabilities, 1e160 single-leaf trees).
        let unweighted = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
        for weight in [1e160, 1e308, f64::MAX, 1e-300] {
            let forest = fit(&vec![weight; 80]);
            assert_eq!(forest, unweighted, "weight {weight:e}");
            let proba = forest
                .predict_proba(x.view(), &ScoreOptions::new())
                .unwrap();
            assert!(proba.iter().all(|p| p.is_finite()));
        }
    }
}

#[test]
fn a_finite_value_beyond_float32_is_named_as_such() {
    let (mut x, y) = two_classes(20, 5);
    x[[3, 6]] = 1e300;
    let error = Forest::fit(&ForestParams::default(), x.view(), &y, 2, None).unwrap_err();
    assert_eq!(
        error,
        MorfError::TooLargeForFloat32 {
            row: 3,
            column: 6,
            value: 1e300
        }
    );
    assert!(
        error.to_string().contains("too large for float32"),
        "{error}"
    );
    x[[3, 6]] = f64::INFINITY;
    let error = Forest::fit(&ForestParams::default(), x.view(), &y, 2, None).unwrap_err();
    assert_eq!(error, MorfError::NonFiniteInput { row: 3, column: 6 });
}

#[test]
fn absurd_class_counts_are_refused() {
    let (x, y) = two_classes(20, 6);
    let message = Forest::fit(&ForestParams::default(), x.view(), &y, 1 << 40, None)
        .unwrap_err()
        .to_string();
    assert!(message.contains("n_classes"), "{message}");
}
