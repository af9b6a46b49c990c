//! Isolation forests over atoms: anomalies isolated first, scores as the path-length
//! formula says, the same forest for any thread count, saved bytes read back.

use morf_rs::rng::Rng;
use morf_rs::{
    average_path_length, AtomKind, FitControl, Inspect, IsolationForest, IsolationParams,
    MorfError, Node, Patches, ScoreOptions,
};
use ndarray::{Array2, ArrayView1};

/// `n` 8x8 images of noise in [0, 1), the first `n_outliers` with a bright 3x3 patch
/// at a random place.
fn images_with_bright_patches(n: usize, n_outliers: usize, seed: u64) -> Array2<f32> {
    let mut rng = Rng::new(seed, 0);
    let mut x = Array2::from_shape_fn((n, 64), |_| rng.unit() as f32);
    for i in 0..n_outliers {
        let (top, left) = (rng.below(6), rng.below(6));
        for r in top..top + 3 {
            for c in left..left + 3 {
                x[[i, r * 8 + c]] += 3.0;
            }
        }
    }
    x
}

fn families() -> Vec<AtomKind> {
    vec![
        AtomKind::AxisAligned,
        AtomKind::SparseOblique {
            feature_combinations: 2.0,
        },
        AtomKind::Patches(Patches::new(vec![8, 8], vec![1, 1], vec![3, 3])),
    ]
}

/// Share of (outlier, inlier) pairs the scores order rightly: the ROC AUC.
fn auc(scores: ArrayView1<'_, f64>, n_outliers: usize) -> f64 {
    let (outliers, inliers) = scores.as_slice().unwrap().split_at(n_outliers);
    let right: usize = outliers
        .iter()
        .map(|o| inliers.iter().filter(|&i| o > i).count())
        .sum();
    right as f64 / (outliers.len() * inliers.len()) as f64
}

#[test]
fn planted_anomalies_score_above_the_other_rows_for_every_family() {
    let x = images_with_bright_patches(400, 20, 1);
    for atoms in families() {
        let params = IsolationParams {
            atoms: atoms.clone(),
            random_state: 3,
            ..IsolationParams::default()
        };
        let forest = IsolationForest::fit(&params, x.view()).unwrap();
        let scores = forest
            .anomaly_scores(x.view(), &ScoreOptions::new())
            .unwrap();
        let auc = auc(scores.view(), 20);
        assert!(auc > 0.9, "{atoms:?}: AUC {auc}");
        assert!(scores.iter().all(|&s| s > 0.0 && s <= 1.0));
    }
}

/// The path length of `row` in `tree` walked node by node: the depth of its leaf plus
/// c(rows the leaf held).
fn path_length(tree: &morf_rs::Tree, row: &[f32]) -> f64 {
    let mut depth = 0;
    let mut leaf = 0;
    tree.path_of(row, |id| {
        leaf = id as usize;
        depth += 1;
    });
    assert!(matches!(tree.nodes()[leaf], Node::Leaf { .. }));
    (depth - 1) as f64 + average_path_length(tree.node_samples()[leaf] as usize)
}

#[test]
fn scores_are_two_to_the_minus_mean_path_length_over_c_of_max_samples() {
    let mut x = images_with_bright_patches(300, 10, 2);
    // Missing values take the larger child in both walks.
    x[[5, 10]] = f32::NAN;
    x[[250, 0]] = f32::NAN;
    for atoms in families() {
        let params = IsolationParams {
            n_estimators: 7,
            max_samples: Some(50),
            atoms,
            random_state: 9,
            ..IsolationParams::default()
        };
        let forest = IsolationForest::fit(&params, x.view()).unwrap();
        assert_eq!(forest.max_samples(), 50);
        let scores = forest
            .anomaly_scores(x.view(), &ScoreOptions::new().with_threads(2))
            .unwrap();
        let lengths = forest
            .mean_path_lengths(x.view(), &ScoreOptions::new())
            .unwrap();
        let leaves = forest.apply(x.view(), &ScoreOptions::new()).unwrap();
        for (i, row) in x.rows().into_iter().enumerate() {
            let row = row.as_slice().unwrap();
            let total: f64 = forest.trees().iter().map(|t| path_length(t, row)).sum();
            let expected = 2f64.powf(-total / (7.0 * average_path_length(50)));
            assert!((scores[i] - expected).abs() < 1e-12, "row {i}");
            assert!((lengths[i] - total / 7.0).abs() < 1e-12, "row {i}");
            for (t, tree) in forest.trees().iter().enumerate() {
                assert_eq!(leaves[[i, t]] as usize, tree.leaf_of(row));
            }
        }
        for tree in forest.trees() {
            let stats = tree.stats();
            // ceil(log2(50)) = 6.
            assert!(stats.max_depth <= 6, "depth {}", stats.max_depth);
            assert_eq!(tree.node_samples()[0], 50);
        }
    }
}

#[test]
fn more_trees_are_those_of_one_larger_fit_whatever_the_threads() {
    let x = images_with_bright_patches(300, 5, 6);
    let weights: Vec<f64> = (0..300).map(|i| (i % 7) as f64).collect();
    for atoms in families() {
        let params = |n_estimators, n_threads| IsolationParams {
            n_estimators,
            max_samples: Some(100),
            max_features: Some(32),
            atoms: atoms.clone(),
            random_state: 5,
            n_threads,
        };
        let control = FitControl::new();
        let whole =
            IsolationForest::fit_with(&params(10, 1), x.view(), Some(&weights), &control).unwrap();
        let first =
            IsolationForest::fit_with(&params(4, 2), x.view(), Some(&weights), &control).unwrap();
        let grown = first
            .with_more_trees(&params(10, 2), x.view(), Some(&weights), &control)
            .unwrap();
        assert_eq!(grown, whole, "{atoms:?}");
        assert!(first
            .with_more_trees(&params(3, 1), x.view(), None, &control)
            .is_err());
        let fewer_rows = IsolationParams {
            max_samples: Some(50),
            ..params(10, 1)
        };
        assert!(first
            .with_more_trees(&fewer_rows, x.view(), None, &control)
            .is_err());
    }
}

#[test]
fn the_forest_is_the_same_for_any_number_of_threads_and_reads_back_from_bytes() {
    let x = images_with_bright_patches(500, 5, 4);
    for atoms in families() {
        let fit = |n_threads| {
            let params = IsolationParams {
                n_estimators: 24,
                atoms: atoms.clone(),
                random_state: 11,
                n_threads,
                ..IsolationParams::default()
            };
            IsolationForest::fit(&params, x.view()).unwrap()
        };
        let one = fit(1);
        let bytes = one.to_bytes();
        assert_eq!(bytes, fit(2).to_bytes());
        assert_eq!(bytes, fit(0).to_bytes());
        let read = IsolationForest::from_bytes(&bytes).unwrap();
        assert_eq!(read, one);
        assert_eq!(
            read.anomaly_scores(x.view(), &ScoreOptions::new()).unwrap(),
            one.anomaly_scores(x.view(), &ScoreOptions::new().with_threads(2))
                .unwrap()
        );
        // Another seed, another forest.
        let other = IsolationParams {
            random_state: 12,
            atoms: atoms.clone(),
            ..IsolationParams::default()
        };
        assert_ne!(IsolationForest::fit(&other, x.view()).unwrap(), one);
        for cut in [7, bytes.len() / 2, bytes.len() - 1] {
            assert!(IsolationForest::from_bytes(&bytes[..cut]).is_err());
        }
    }
}

#[test]
fn constant_rows_make_one_leaf_and_one_row_per_tree_scores_one_half() {
    let x = Array2::<f32>::ones((40, 5));
    let forest = IsolationForest::fit(&IsolationParams::default(), x.view()).unwrap();
    for tree in forest.trees() {
        assert_eq!(tree.nodes().len(), 1);
        assert_eq!(tree.leaf_values(0).unwrap()[0], average_path_length(40));
    }
    let scores = forest
        .anomaly_scores(x.view(), &ScoreOptions::new())
        .unwrap();
    assert!(scores.iter().all(|&s| (s - 0.5).abs() < 1e-12), "{scores}");
    let single = IsolationParams {
        max_samples: Some(1),
        ..IsolationParams::default()
    };
    let forest = IsolationForest::fit(&single, x.view()).unwrap();
    let scores = forest
        .anomaly_scores(x.view(), &ScoreOptions::new())
        .unwrap();
    assert!(scores.iter().all(|&s| s == 0.5));
}

#[test]
fn bad_input_gets_errors_that_say_what_to_fix() {
    let x = images_with_bright_patches(50, 0, 5);
    let zero_trees = IsolationParams {
        n_estimators: 0,
        ..IsolationParams::default()
    };
    let error = IsolationForest::fit(&zero_trees, x.view()).unwrap_err();
    assert!(error.to_string().contains("n_estimators"), "{error}");
    let zero_rows = IsolationParams {
        max_samples: Some(0),
        ..IsolationParams::default()
    };
    assert!(IsolationForest::fit(&zero_rows, x.view()).is_err());
    let mut infinite = x.clone();
    infinite[[3, 4]] = f32::INFINITY;
    let error = IsolationForest::fit(&IsolationParams::default(), infinite.view()).unwrap_err();
    assert!(
        matches!(error, MorfError::NonFiniteInput { row: 3, column: 4 }),
        "{error}"
    );
    let empty = Array2::<f32>::zeros((0, 3));
    assert!(IsolationForest::fit(&IsolationParams::default(), empty.view()).is_err());
    let bad_patch = IsolationParams {
        atoms: AtomKind::Patches(Patches::new(vec![7, 7], vec![1, 1], vec![3, 3])),
        ..IsolationParams::default()
    };
    assert!(IsolationForest::fit(&bad_patch, x.view()).is_err());
    let forest = IsolationForest::fit(&IsolationParams::default(), x.view()).unwrap();
    let narrow = Array2::<f32>::zeros((4, 63));
    assert!(matches!(
        forest.anomaly_scores(narrow.view(), &ScoreOptions::new()),
        Err(MorfError::ShapeMismatch { .. })
    ));
    let error = forest
        .anomaly_scores(infinite.view(), &ScoreOptions::new().with_threads(2))
        .unwrap_err();
    assert!(
        matches!(error, MorfError::NonFiniteInput { row: 3, column: 4 }),
        "{error}"
    );
}
