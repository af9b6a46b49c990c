//! What forests learn: shapes axis-aligned trees cannot, importances, weights, growth
//! limits, subsampling and honesty, one class and float64 input.

use morf_rs::{
    AtomKind, Criterion, Forest, ForestParams, HonestPrior, Inspect, Leaves, MaxFeatures,
    MaxSamples, Node, Patches, ScoreOptions,
};

use super::*;
use crate::common::one_informative_feature;

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

#[test]
fn balanced_classes_per_tree_weigh_every_class_of_a_tree_sample_alike() {
    // Class 1 is a fifth of the rows; each tree's weights make its classes' totals
    // equal, n / 2 each over the n rows it drew (each as often as drawn).
    let (x, mut y) = one_informative_feature(300, 5);
    y.iter_mut()
        .enumerate()
        .for_each(|(i, label)| *label = u32::from(i % 5 == 0));
    let class_totals = |balanced: bool| -> Vec<([f64; 2], f64)> {
        let params = ForestParams {
            n_estimators: 4,
            balanced_classes_per_tree: balanced,
            ..ForestParams::default()
        };
        let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
        let per_tree = forest.trees().iter().enumerate().map(|(t, tree)| {
            let Leaves::Classes { distributions, .. } = tree.leaves() else {
                panic!("a classifier's leaves hold classes");
            };
            let mut totals = [0.0; 2];
            for (node, &weight) in tree.nodes().iter().zip(tree.node_weights()) {
                if let Node::Leaf { value: Some(at) } = *node {
                    for (k, total) in totals.iter_mut().enumerate() {
                        *total += f64::from(distributions[at as usize + k] * weight);
                    }
                }
            }
            let drawn: u32 = params.tree_sample_counts(300, t).unwrap().iter().sum();
            (totals, f64::from(drawn))
        });
        per_tree.collect()
    };
    for (totals, drawn) in class_totals(true) {
        for total in totals {
            assert!(
                (total - drawn / 2.0).abs() < 1e-3 * drawn,
                "{totals:?} of {drawn}"
            );
        }
    }
    for (totals, drawn) in class_totals(false) {
        assert!(totals[1] < drawn / 3.0, "unweighted: {totals:?} of {drawn}");
    }
    // Regression targets have no classes to balance.
    let params = ForestParams {
        balanced_classes_per_tree: true,
        criterion: Criterion::SquaredError,
        ..ForestParams::default()
    };
    let values = ndarray::Array2::from_shape_fn((300, 1), |(i, _)| i as f64);
    let targets = morf_rs::Targets::Values(values.view());
    let control = morf_rs::FitControl::new();
    let error = Forest::fit_with(&params, x.view(), targets, None, 0..1, &control).unwrap_err();
    assert!(
        error.to_string().contains("balanced_classes_per_tree"),
        "{error}"
    );
}
