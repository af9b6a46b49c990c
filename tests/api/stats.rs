//! Hypothesis tests: each tree's out-of-bag posteriors against a reference built tree
//! by tree from the public API, and the Coleman test's statistic, p-value and null.

use morf_rs::rng::Rng;
use morf_rs::stats::{coleman_test, Metric, Truth};
use morf_rs::{
    AtomKind, Criterion, FitControl, Forest, ForestParams, HonestPrior, ScoreOptions, Targets,
};
use ndarray::{s, Array1, Array2, Array3, Axis};

/// Two classes, and as values the class plus noise, from 8 noisy features.
fn data(n: usize) -> (Array2<f32>, Vec<u32>, Array2<f64>) {
    let mut rng = Rng::new(11, 0);
    let labels: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let x = Array2::from_shape_fn((n, 8), |(i, j)| {
        rng.unit() as f32 + if j == 0 { labels[i] as f32 } else { 0.0 }
    });
    let values = Array2::from_shape_fn((n, 2), |(i, k)| labels[i] as f64 * (k + 1) as f64);
    (x, labels, values)
}

fn kinds() -> Vec<ForestParams> {
    let base = ForestParams {
        n_estimators: 12,
        random_state: 4,
        ..ForestParams::default()
    };
    vec![
        base.clone(),
        ForestParams {
            atoms: AtomKind::SparseOblique {
                feature_combinations: 1.5,
            },
            honest_fraction: 0.5,
            honest_prior: HonestPrior::Ignore,
            ..base.clone()
        },
        ForestParams {
            criterion: Criterion::SquaredError,
            honest_fraction: 0.3,
            ..base
        },
    ]
}

fn fit(params: &ForestParams, x: &Array2<f32>, trees: std::ops::Range<usize>) -> Forest {
    let (_, labels, values) = data(x.nrows());
    let targets = match params.criterion {
        Criterion::SquaredError => Targets::Values(values.view()),
        _ => Targets::Classes {
            labels: &labels,
            n_classes: 2,
        },
    };
    Forest::fit_with(params, x.view(), targets, None, trees, &FitControl::new()).unwrap()
}

#[test]
fn each_tree_scores_exactly_the_rows_its_sample_left_out() {
    let (x, _, _) = data(120);
    for params in kinds() {
        let forest = fit(&params, &x, 0..params.n_estimators);
        let posteriors = forest
            .oob_tree_posteriors(&params, x.view(), 0, &ScoreOptions::default())
            .unwrap();
        assert_eq!(posteriors.dim(), (12, 120, 2));
        let mut abstained = 0;
        for (t, tree) in forest.trees().iter().enumerate() {
            let counts = params.tree_sample_counts(120, t).unwrap();
            for (row, &count) in counts.iter().enumerate() {
                let got = posteriors.slice(s![t, row, ..]);
                if count > 0 {
                    assert!(got.iter().all(|v| v.is_nan()), "{params:?} {t} {row}");
                    continue;
                }
                let leaf = tree.leaf_of(x.row(row).as_slice().unwrap());
                let expected: Option<Vec<f64>> =
                    match (tree.posterior(leaf), tree.leaf_values(leaf)) {
                        (Some(p), _) => Some(p.iter().map(|&v| v as f64).collect()),
                        (_, Some(v)) => Some(v.to_vec()),
                        _ => None,
                    };
                match expected {
                    Some(values) => assert_eq!(got.to_vec(), values, "{params:?}"),
                    None => {
                        abstained += 1;
                        assert!(got.iter().all(|v| v.is_nan()));
                    }
                }
            }
        }
        assert!(posteriors.iter().any(|v| !v.is_nan()));
        assert!(abstained < 120 * 12 / 4, "{abstained}");
        // Their mean, NaN left out, is the forest's out-of-bag prediction.
        let oob = forest
            .oob_predict(&params, x.view(), &ScoreOptions::default())
            .unwrap();
        for row in 0..120 {
            let scored: Vec<usize> = (0..12)
                .filter(|&t| !posteriors[[t, row, 0]].is_nan())
                .collect();
            assert_eq!(scored.len() as u32, oob.n_votes[row]);
            if scored.is_empty() {
                continue;
            }
            for k in 0..2 {
                let sum: f64 = scored.iter().map(|&t| posteriors[[t, row, k]]).sum();
                assert_eq!(sum / scored.len() as f64, oob.predictions[[row, k]]);
            }
        }
        let threaded = forest
            .oob_tree_posteriors(&params, x.view(), 0, &ScoreOptions::new().with_threads(2))
            .unwrap();
        assert!(same_bits(&threaded, &posteriors));
    }
}

fn same_bits(a: &Array3<f64>, b: &Array3<f64>) -> bool {
    a.dim() == b.dim() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
fn a_range_of_trees_knows_its_samples() {
    let (x, _, _) = data(100);
    let params = &kinds()[1];
    let whole = fit(params, &x, 0..12)
        .oob_tree_posteriors(params, x.view(), 0, &ScoreOptions::default())
        .unwrap();
    let part = fit(params, &x, 5..9)
        .oob_tree_posteriors(params, x.view(), 5, &ScoreOptions::default())
        .unwrap();
    assert!(same_bits(&part, &whole.slice(s![5..9, .., ..]).to_owned()));
    let error = fit(params, &x, 5..9)
        .oob_tree_posteriors(params, x.view(), 9, &ScoreOptions::default())
        .unwrap_err();
    assert!(error.to_string().contains("first_tree"), "{error}");
}

/// Per-tree posteriors of two forests on the data: one grown on X, one on X with
/// its informative column permuted.
fn two_forests(n: usize) -> (Array1<u32>, Array3<f64>, Array3<f64>) {
    let (x, labels, _) = data(n);
    let params = ForestParams {
        n_estimators: 20,
        random_state: 2,
        ..ForestParams::default()
    };
    let original = fit(&params, &x, 0..20)
        .oob_tree_posteriors(&params, x.view(), 0, &ScoreOptions::default())
        .unwrap();
    let mut permuted_x = x.clone();
    let mut rows: Vec<usize> = (0..n).collect();
    Rng::new(3, 0).choose_into_prefix(&mut rows, n);
    for (row, &from) in rows.iter().enumerate() {
        permuted_x[[row, 0]] = x[[from, 0]];
    }
    let params = ForestParams {
        random_state: 5,
        ..params
    };
    let permuted = fit(&params, &permuted_x, 0..20)
        .oob_tree_posteriors(&params, permuted_x.view(), 0, &ScoreOptions::default())
        .unwrap();
    (Array1::from(labels), original, permuted)
}

/// Mean over the trees that scored each row; the rows none scored left out.
fn mean_posteriors(posteriors: &Array3<f64>, y: &Array1<u32>) -> (Array2<f64>, Array1<u32>) {
    let mut rows = Vec::new();
    let mut means = Vec::new();
    for (row, trees) in posteriors.axis_iter(Axis(1)).enumerate() {
        let scored: Vec<_> = trees.outer_iter().filter(|v| !v[0].is_nan()).collect();
        if !scored.is_empty() {
            rows.push(y[row]);
            for k in 0..trees.ncols() {
                means.push(scored.iter().map(|v| v[k]).sum::<f64>() / scored.len() as f64);
            }
        }
    }
    let width = posteriors.dim().2;
    (
        Array2::from_shape_vec((rows.len(), width), means).unwrap(),
        Array1::from(rows),
    )
}

#[test]
fn the_coleman_statistic_compares_the_two_forests_and_its_null_shuffles_their_trees() {
    let (y, original, permuted) = two_forests(200);
    let truth = Truth::Classes(y.view());
    for metric in [
        Metric::Auc,
        Metric::SensitivityAt98,
        Metric::ConditionalEntropy,
    ] {
        let test =
            coleman_test(&truth, original.view(), permuted.view(), metric, 300, 9, 1).unwrap();
        let score = |p: &Array3<f64>| {
            let (means, rows) = mean_posteriors(p, &y);
            metric
                .score(&Truth::Classes(rows.view()), means.view())
                .unwrap()
        };
        let difference = score(&original) - score(&permuted);
        let expected = if metric.higher_is_better() {
            difference
        } else {
            -difference
        };
        assert!((test.statistic - expected).abs() < 1e-12, "{metric:?}");
        // The informative column makes the first forest better than any shuffle.
        assert!(test.statistic > 0.0, "{metric:?} {}", test.statistic);
        let larger = test
            .null_distribution
            .iter()
            .filter(|&&d| d >= test.statistic)
            .count();
        assert_eq!(test.pvalue, (1 + larger) as f64 / 301.0);
        assert!(test.pvalue < 0.05, "{metric:?} {}", test.pvalue);
        // Shuffles are drawn from the seed, whatever the threads.
        let threaded =
            coleman_test(&truth, original.view(), permuted.view(), metric, 300, 9, 2).unwrap();
        assert_eq!(threaded, test);
        let reseeded =
            coleman_test(&truth, original.view(), permuted.view(), metric, 300, 8, 1).unwrap();
        assert_ne!(reseeded.null_distribution, test.null_distribution);
    }
    // Two forests of one kind: the statistic is typical of the null.
    let same = coleman_test(
        &truth,
        original.slice(s![..10, .., ..]),
        original.slice(s![10.., .., ..]),
        Metric::Auc,
        500,
        1,
        1,
    )
    .unwrap();
    assert!(same.pvalue > 0.05, "{}", same.pvalue);
    let mean = same.null_distribution.iter().sum::<f64>() / 500.0;
    assert!(mean.abs() < 0.01, "{mean}");
}

#[test]
fn bad_test_inputs_are_refused_with_their_reason() {
    let (y, original, permuted) = two_forests(60);
    let truth = Truth::Classes(y.view());
    let run = |a: &Array3<f64>, b: &Array3<f64>, metric, n_repeats| {
        coleman_test(&truth, a.view(), b.view(), metric, n_repeats, 0, 1)
            .unwrap_err()
            .to_string()
    };
    let fewer = original.slice(s![..5, .., ..]).to_owned();
    assert!(run(&fewer, &permuted, Metric::Auc, 10).contains("one shape"));
    assert!(run(&original, &permuted, Metric::Auc, 0).contains("n_repeats"));
    assert!(run(&original, &permuted, Metric::MeanSquaredError, 10).contains("regression"));
    let mut infinite = original.clone();
    infinite[[0, 0, 0]] = f64::INFINITY;
    assert!(run(&infinite, &permuted, Metric::Auc, 10).contains("finite"));
    // One tree a forest: a half may score only rows of one class.
    let mut lone = Array3::from_elem((1, 60, 2), f64::NAN);
    lone[[0, 0, 0]] = 1.0;
    lone[[0, 0, 1]] = 0.0;
    assert!(run(&lone, &lone.clone(), Metric::Auc, 10).contains("both classes"));
    assert!(Metric::from_name("accuracy")
        .unwrap_err()
        .to_string()
        .contains("s@98"));
    let three = Array1::from(vec![0u32, 2, 1]);
    let error = Metric::Auc
        .score(&Truth::Classes(three.view()), Array2::zeros((3, 3)).view())
        .unwrap_err();
    assert!(error.to_string().contains("two classes"), "{error}");
}

#[test]
fn roc_metrics_count_ties_as_scikit_learn_does() {
    let y = Array1::from(vec![0u32, 0, 1, 1, 0, 1]);
    let p1 = [0.1, 0.4, 0.4, 0.8, 0.8, 0.9];
    let posteriors =
        Array2::from_shape_fn((6, 2), |(i, k)| if k == 1 { p1[i] } else { 1.0 - p1[i] });
    let truth = Truth::Classes(y.view());
    // Pairs (positive, negative) ordered right: 8 of 9, the two tied pairs half each.
    let auc = Metric::Auc.score(&truth, posteriors.view()).unwrap();
    assert!((auc - 7.0 / 9.0).abs() < 1e-15, "{auc}");
    // No false positive is allowed (1/3 > 0.02): only the scores above 0.8 count.
    let s98 = Metric::SensitivityAt98
        .score(&truth, posteriors.view())
        .unwrap();
    assert_eq!(s98, 1.0 / 3.0);
}
