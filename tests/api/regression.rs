//! Regression forests through the public API: squared-error splits, mean leaves.

use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, Criterion, FitControl, Forest, ForestParams, HonestPrior, Inspect, Leaves,
    MaxFeatures, Node, Patches, ScoreOptions, Targets, Task,
};
use ndarray::{Array2, Axis};

/// 12 noisy features; the two outputs are `3 * x3` and `x3 - x7`, plus noise.
fn two_outputs(n: usize, seed: u64) -> (Array2<f32>, Array2<f64>) {
    let mut rng = Rng::new(seed, 0);
    let x = Array2::from_shape_fn((n, 12), |_| rng.unit() as f32);
    let y = Array2::from_shape_fn((n, 2), |(i, k)| {
        let noise = 0.05 * rng.unit();
        let (a, b) = (x[[i, 3]] as f64, x[[i, 7]] as f64);
        noise + if k == 0 { 3.0 * a } else { a - b }
    });
    (x, y)
}

/// Whole-valued rows of 60 cells (0..=255 in a bright window), and as target the
/// sum of the window's cells: deep trees over byte-valued X.
fn bright_windows(n: usize, seed: u64) -> (Array2<f32>, Array2<f64>) {
    let mut rng = Rng::new(seed, 0);
    let mut x = Array2::from_shape_fn((n, 60), |_| rng.below(20) as f32);
    let mut y = Array2::zeros((n, 1));
    for i in 0..n {
        let start = rng.below(50);
        for cell in start..start + 6 {
            x[[i, cell]] += rng.below(200) as f32;
        }
        y[[i, 0]] = (start..start + 6).map(|c| x[[i, c]] as f64).sum();
    }
    (x, y)
}

/// No progress to report, never cancelled.
fn none() -> FitControl<'static> {
    FitControl::new()
}

fn regression(atoms: AtomKind) -> ForestParams {
    ForestParams {
        n_estimators: 12,
        atoms,
        criterion: Criterion::SquaredError,
        max_features: MaxFeatures::Count(8),
        random_state: 9,
        ..ForestParams::default()
    }
}

fn all_kinds() -> Vec<ForestParams> {
    vec![
        regression(AtomKind::AxisAligned),
        regression(AtomKind::SparseOblique {
            feature_combinations: 2.0,
        }),
        ForestParams {
            honest_fraction: 0.3,
            ..regression(AtomKind::Patches(
                Patches::new(vec![3, 4], vec![1, 2], vec![2, 4]).with_wrap(vec![false, true]),
            ))
        },
    ]
}

fn fit(params: &ForestParams, x: &Array2<f32>, y: &Array2<f64>) -> Forest {
    Forest::fit_with(
        params,
        x.view(),
        Targets::Values(y.view()),
        None,
        0..params.n_estimators,
        &none(),
    )
    .unwrap()
}

fn r2(forest: &Forest, x: &Array2<f32>, y: &Array2<f64>, output: usize) -> f64 {
    let predicted = forest
        .predict_values(x.view(), &ScoreOptions::new())
        .unwrap();
    let column = y.column(output);
    let mean = column.mean().unwrap();
    let residual: f64 = column
        .iter()
        .zip(predicted.column(output))
        .map(|(t, p)| (t - p).powi(2))
        .sum();
    let total: f64 = column.iter().map(|t| (t - mean).powi(2)).sum();
    1.0 - residual / total
}

#[test]
fn regression_forests_learn_every_output() {
    let (x, y) = two_outputs(600, 1);
    let (x_test, y_test) = two_outputs(400, 2);
    for params in all_kinds() {
        let forest = fit(&params, &x, &y);
        assert_eq!(forest.task(), Task::Regression { n_outputs: 2 });
        assert_eq!(forest.n_classes(), None);
        let predicted = forest
            .predict_values(x_test.view(), &ScoreOptions::new().with_threads(2))
            .unwrap();
        assert_eq!(predicted.dim(), (400, 2));
        // Patches of the 3x4 image are at least 2 cells wide sums: neither x3 alone nor
        // x3 - x7 is ever a split direction there.
        let patches = matches!(params.atoms, AtomKind::Patches(_));
        for output in 0..2 {
            let score = r2(&forest, &x_test, &y_test, output);
            let least = if patches { 0.3 } else { 0.8 };
            assert!(
                score > least,
                "{:?}: output {output} R2 {score}",
                params.atoms
            );
        }
        if patches {
            continue;
        }
        let importances = forest.impurity_importances().unwrap();
        let top = (0..12)
            .max_by(|&a, &b| importances[a].total_cmp(&importances[b]))
            .unwrap();
        assert_eq!(top, 3, "{importances:?}");
    }
}

#[test]
fn leaves_predict_the_weighted_mean_of_their_samples() {
    // One tree on all samples (no bootstrap): each leaf's value is the weighted mean
    // of the targets of the training rows that reach it.
    let (x, y) = two_outputs(300, 3);
    let mut rng = Rng::new(4, 0);
    let weights: Vec<f64> = (0..300).map(|_| 0.5 + rng.unit()).collect();
    let params = ForestParams {
        n_estimators: 1,
        bootstrap: false,
        min_samples_leaf: 5,
        ..regression(AtomKind::AxisAligned)
    };
    let forest = Forest::fit_with(
        &params,
        x.view(),
        Targets::Values(y.view()),
        Some(&weights),
        0..1,
        &none(),
    )
    .unwrap();
    let leaves = forest.apply(x.view(), &ScoreOptions::new()).unwrap();
    let predicted = forest
        .predict_values(x.view(), &ScoreOptions::new())
        .unwrap();
    let tree = &forest.trees()[0];
    for i in 0..300 {
        let leaf = leaves[[i, 0]];
        let members: Vec<usize> = (0..300).filter(|&j| leaves[[j, 0]] == leaf).collect();
        assert!(members.len() >= 5);
        let weight: f64 = members.iter().map(|&j| weights[j]).sum();
        for output in 0..2 {
            let mean = members
                .iter()
                .map(|&j| weights[j] * y[[j, output]])
                .sum::<f64>()
                / weight;
            assert!((predicted[[i, output]] - mean).abs() < 1e-9);
            assert_eq!(
                tree.leaf_values(leaf as usize).unwrap()[output],
                predicted[[i, output]]
            );
        }
    }
}

#[test]
fn constant_targets_grow_a_single_leaf() {
    // Equal targets need no split, even where their weighted mean rounds off.
    let (x, _) = two_outputs(50, 5);
    let y = Array2::from_elem((50, 1), 1.1);
    let weights: Vec<f64> = (0..50).map(|i| 0.1 * (1 + i % 3) as f64).collect();
    let forest = Forest::fit_with(
        &regression(AtomKind::AxisAligned),
        x.view(),
        Targets::Values(y.view()),
        Some(&weights),
        0..12,
        &none(),
    )
    .unwrap();
    assert!(forest.tree_stats().iter().all(|s| s.n_nodes == 1));
    let predicted = forest
        .predict_values(x.view(), &ScoreOptions::new())
        .unwrap();
    assert!(predicted.iter().all(|&v| (v - 1.1).abs() < 1e-12));
}

#[test]
fn one_and_four_threads_grow_identical_regression_forests() {
    let (x, y) = two_outputs(300, 6);
    let (windows, sums) = bright_windows(400, 7);
    for params in all_kinds() {
        for (x, y) in [(&x, &y), (&windows, &sums)] {
            let params = match &params.atoms {
                AtomKind::Patches(_) if x.ncols() == 60 => ForestParams {
                    atoms: AtomKind::Patches(Patches::new(vec![60], vec![3], vec![12])),
                    ..params.clone()
                },
                _ => params.clone(),
            };
            let forests: Vec<Forest> = [1, 4]
                .iter()
                .map(|&n_threads| {
                    fit(
                        &ForestParams {
                            n_threads,
                            ..params.clone()
                        },
                        x,
                        y,
                    )
                })
                .collect();
            assert_eq!(forests[0].to_bytes(), forests[1].to_bytes());
            assert_eq!(
                forests[0]
                    .predict_values(x.view(), &ScoreOptions::new())
                    .unwrap(),
                forests[1]
                    .predict_values(x.view(), &ScoreOptions::new().with_threads(3))
                    .unwrap()
            );
        }
    }
}

#[test]
fn byte_valued_input_grows_the_regression_trees_of_its_shifted_float_copy() {
    // Deep trees on 0..=255 values search a byte copy or running sums; shifted by
    // -128 the same rows are searched as floats. The splits must not change.
    let (x, y) = bright_windows(800, 8);
    let shifted = x.mapv(|v| v - 128.0);
    for atoms in [
        AtomKind::AxisAligned,
        AtomKind::Patches(Patches::new(vec![60], vec![3], vec![12])),
    ] {
        let params = ForestParams {
            n_threads: 2,
            ..regression(atoms)
        };
        let bytes = fit(&params, &x, &y);
        let stats = bytes.tree_stats();
        let depth = stats.iter().map(|s| s.mean_leaf_depth).sum::<f64>() / stats.len() as f64;
        assert!(depth > 8.0, "mean leaf depth {depth}");
        let floats = fit(&params, &shifted, &y);
        assert_eq!(
            bytes
                .predict_values(x.view(), &ScoreOptions::new())
                .unwrap(),
            floats
                .predict_values(shifted.view(), &ScoreOptions::new())
                .unwrap()
        );
    }
}

#[test]
fn honest_regression_leaves_without_estimation_samples_follow_the_prior() {
    let (x, y) = two_outputs(200, 10);
    for prior in [HonestPrior::Ignore, HonestPrior::Empirical] {
        let params = ForestParams {
            honest_fraction: 0.5,
            honest_prior: prior,
            max_features: MaxFeatures::All,
            ..regression(AtomKind::AxisAligned)
        };
        let forest = fit(&params, &x, &y);
        let abstaining = forest
            .trees()
            .iter()
            .flat_map(|t| t.nodes())
            .filter(|n| matches!(n, Node::Leaf { value: None }))
            .count();
        assert_eq!(abstaining > 0, prior == HonestPrior::Ignore);
        let predicted = forest
            .predict_values(x.view(), &ScoreOptions::new())
            .unwrap();
        assert!(predicted.iter().all(|v| v.is_finite()));
        assert!(r2(&forest, &x, &y, 0) > 0.8);
    }
    // A row no tree votes for gets the mean of the trees' priors (each the mean
    // target of its tree's whole sample).
    let params = ForestParams {
        n_estimators: 1,
        honest_fraction: 0.5,
        honest_prior: HonestPrior::Ignore,
        ..regression(AtomKind::AxisAligned)
    };
    let forest = fit(&params, &x, &y);
    let tree = &forest.trees()[0];
    let Leaves::Values { prior, .. } = tree.leaves() else {
        panic!("a regression tree has value leaves");
    };
    let mean = y.mean_axis(Axis(0)).unwrap();
    assert!((prior[0] - mean[0]).abs() < 0.5, "{prior:?} {mean:?}");
    let (probe, _) = two_outputs(2000, 13);
    let leaves = forest.apply(probe.view(), &ScoreOptions::new()).unwrap();
    let predicted = forest
        .predict_values(probe.view(), &ScoreOptions::new())
        .unwrap();
    let mut abstained = 0;
    for i in 0..2000 {
        if tree.leaf_values(leaves[[i, 0]] as usize).is_none() {
            abstained += 1;
            assert_eq!(predicted.row(i).to_vec(), *prior);
        }
    }
    assert!(abstained > 0);
}

#[test]
fn targets_must_fit_the_criterion_and_be_finite() {
    let (x, y) = two_outputs(30, 11);
    let values = |params: &ForestParams, y: &Array2<f64>| {
        Forest::fit_with(
            params,
            x.view(),
            Targets::Values(y.view()),
            None,
            0..2,
            &none(),
        )
        .unwrap_err()
        .to_string()
    };
    let gini = ForestParams {
        criterion: Criterion::Gini,
        ..regression(AtomKind::AxisAligned)
    };
    assert!(values(&gini, &y).contains("SquaredError"));
    let mut with_nan = y.clone();
    with_nan[[4, 1]] = f64::NAN;
    let message = values(&regression(AtomKind::AxisAligned), &with_nan);
    assert!(message.contains("row 4, output 1"), "{message}");
    let uniform = ForestParams {
        honest_fraction: 0.5,
        honest_prior: HonestPrior::Uniform,
        ..regression(AtomKind::AxisAligned)
    };
    assert!(values(&uniform, &y).contains("honest_prior"));
    let no_outputs = Array2::<f64>::zeros((30, 0));
    assert!(values(&regression(AtomKind::AxisAligned), &no_outputs).contains("outputs"));
    let too_few = y.slice(ndarray::s![..20, ..]).to_owned();
    assert!(values(&regression(AtomKind::AxisAligned), &too_few).contains("expected 30, got 20"));

    let labels: Vec<u32> = (0..30).map(|i| i % 2).collect();
    let message = Forest::fit(
        &regression(AtomKind::AxisAligned),
        x.view(),
        &labels,
        2,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(message.contains("Gini or Entropy"), "{message}");

    let forest = fit(&regression(AtomKind::AxisAligned), &x, &y);
    assert!(forest
        .predict_proba(x.view(), &ScoreOptions::new())
        .is_err());
    let classifier = Forest::fit(&ForestParams::default(), x.view(), &labels, 2, None).unwrap();
    assert!(classifier
        .predict_values(x.view(), &ScoreOptions::new())
        .is_err());
}

#[test]
fn saved_regression_forests_predict_identically() {
    let (x, y) = two_outputs(200, 12);
    for params in all_kinds() {
        let forest = fit(&params, &x, &y);
        let bytes = forest.to_bytes();
        let restored = Forest::from_bytes(&bytes).unwrap();
        assert_eq!(restored, forest);
        assert_eq!(
            restored
                .predict_values(x.view(), &ScoreOptions::new().with_threads(2))
                .unwrap(),
            forest
                .predict_values(x.view(), &ScoreOptions::new())
                .unwrap()
        );
        for position in (6..bytes.len()).step_by(17) {
            let mut damaged = bytes.clone();
            damaged[position] ^= 0x5A;
            if let Some(loaded) = Forest::from_bytes(&damaged)
                .ok()
                .filter(|f| f.n_features() == 12)
            {
                let predicted = loaded
                    .predict_values(x.view(), &ScoreOptions::new())
                    .unwrap();
                assert!(predicted.iter().all(|v| v.is_finite()));
            }
        }
    }
}
