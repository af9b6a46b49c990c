//! Out-of-bag predictions: each row scored by exactly the trees whose sample left it
//! out, as a reference built tree by tree from the public API.

use std::sync::atomic::{AtomicBool, Ordering};

use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, Criterion, FitControl, Forest, ForestParams, HonestPrior, MaxSamples, MorfError,
    ScoreOptions, Targets,
};
use ndarray::Array2;

/// Three classes, and as values the class plus noise, from 10 noisy features.
fn data(n: usize) -> (Array2<f32>, Vec<u32>, Array2<f64>) {
    let mut rng = Rng::new(5, 0);
    let labels: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
    let x = Array2::from_shape_fn((n, 10), |(i, j)| {
        rng.unit() as f32 + if j < 2 { labels[i] as f32 } else { 0.0 }
    });
    let values = Array2::from_shape_fn((n, 2), |(i, k)| labels[i] as f64 * (k + 1) as f64);
    (x, labels, values)
}

/// The mean leaf values, and vote counts, of the trees that left each row out,
/// summed tree by tree.
fn reference(forest: &Forest, params: &ForestParams, x: &Array2<f32>) -> (Array2<f64>, Vec<u32>) {
    let (n, width) = (x.nrows(), forest.task().width());
    let mut sums = Array2::<f64>::zeros((n, width));
    let mut votes = vec![0u32; n];
    for (t, tree) in forest.trees().iter().enumerate() {
        let counts = params.tree_sample_counts(n, t).unwrap();
        for row in (0..n).filter(|&row| counts[row] == 0) {
            let leaf = tree.leaf_of(x.row(row).as_slice().unwrap());
            let value: Option<Vec<f64>> = match (tree.posterior(leaf), tree.leaf_values(leaf)) {
                (Some(p), _) => Some(p.iter().map(|&v| v as f64).collect()),
                (_, Some(v)) => Some(v.to_vec()),
                _ => None,
            };
            if let Some(value) = value {
                votes[row] += 1;
                for (s, v) in sums.row_mut(row).iter_mut().zip(value) {
                    *s += v;
                }
            }
        }
    }
    for (mut row, &count) in sums.rows_mut().into_iter().zip(&votes) {
        if count > 0 {
            row.mapv_inplace(|s| s / count as f64);
        }
    }
    (sums, votes)
}

fn kinds() -> Vec<ForestParams> {
    let base = ForestParams {
        n_estimators: 15,
        random_state: 3,
        ..ForestParams::default()
    };
    vec![
        base.clone(),
        ForestParams {
            atoms: AtomKind::SparseOblique {
                feature_combinations: 1.5,
            },
            honest_fraction: 0.3,
            honest_prior: HonestPrior::Ignore,
            max_depth: Some(4),
            ..base.clone()
        },
        ForestParams {
            max_samples: Some(MaxSamples::Fraction(0.5)),
            honest_fraction: 0.2,
            ..base.clone()
        },
        ForestParams {
            bootstrap: false,
            max_samples: Some(MaxSamples::Fraction(0.6)),
            ..base.clone()
        },
        ForestParams {
            criterion: Criterion::SquaredError,
            ..base.clone()
        },
        ForestParams {
            criterion: Criterion::SquaredError,
            honest_fraction: 0.4,
            honest_prior: HonestPrior::Ignore,
            ..base
        },
    ]
}

#[test]
fn oob_predictions_are_the_mean_of_the_trees_that_left_each_row_out() {
    let (x, labels, values) = data(150);
    for params in kinds() {
        let targets = match params.criterion {
            Criterion::SquaredError => Targets::Values(values.view()),
            _ => Targets::Classes {
                labels: &labels,
                n_classes: 3,
            },
        };
        let all = 0..params.n_estimators;
        let forest =
            Forest::fit_with(&params, x.view(), targets, None, all, &FitControl::new()).unwrap();
        let (expected, expected_votes) = reference(&forest, &params, &x);
        let oob = forest
            .oob_predict(&params, x.view(), &ScoreOptions::default())
            .unwrap();
        assert_eq!(oob.n_votes, expected_votes, "{params:?}");
        assert!(
            oob.n_votes.iter().any(|&v| v > 0) && oob.n_votes.iter().all(|&v| v < 15),
            "{params:?}"
        );
        assert_eq!(oob.predictions, expected, "{params:?}");
        // Rows are summed tree by tree whatever the threads: the same bits.
        assert_eq!(
            forest
                .oob_predict(&params, x.view(), &ScoreOptions::new().with_threads(2))
                .unwrap(),
            oob
        );
    }
}

#[test]
fn a_set_cancel_flag_stops_out_of_bag_scoring() {
    let (x, labels, _) = data(150);
    let params = ForestParams {
        n_estimators: 15,
        ..ForestParams::default()
    };
    let forest = Forest::fit(&params, x.view(), &labels, 3, None).unwrap();
    let cancel = AtomicBool::new(true);
    let stoppable = ScoreOptions::new().with_cancel(&cancel);
    assert_eq!(
        forest.oob_predict(&params, x.view(), &stoppable),
        Err(MorfError::Cancelled)
    );
    assert_eq!(
        forest.oob_tree_posteriors(&params, x.view(), 0, &stoppable),
        Err(MorfError::Cancelled)
    );
    cancel.store(false, Ordering::Relaxed);
    let oob = forest.oob_predict(&params, x.view(), &stoppable).unwrap();
    assert_eq!(
        oob,
        forest
            .oob_predict(&params, x.view(), &ScoreOptions::default())
            .unwrap()
    );
}

#[test]
fn every_estimation_row_is_in_its_trees_sample() {
    let params = ForestParams {
        n_estimators: 4,
        honest_fraction: 0.5,
        bootstrap: false,
        ..ForestParams::default()
    };
    // Without bootstrap, the structure part is every row not set aside: no tree leaves
    // out any row.
    for t in 0..4 {
        let counts = params.tree_sample_counts(100, t).unwrap();
        assert!(counts.iter().all(|&c| c == 1), "tree {t}");
    }
    let bootstrapped = ForestParams {
        bootstrap: true,
        ..params
    };
    let counts = bootstrapped.tree_sample_counts(100, 0).unwrap();
    assert!(counts.iter().filter(|&&c| c > 0).count() >= 50);
    assert!(counts.contains(&0));
}

#[test]
fn oob_needs_the_parameters_and_the_data_of_the_fit() {
    let (x, labels, _) = data(60);
    let params = ForestParams {
        n_estimators: 5,
        ..ForestParams::default()
    };
    let forest = Forest::fit(&params, x.view(), &labels, 3, None).unwrap();
    let more_trees = ForestParams {
        n_estimators: 6,
        ..params.clone()
    };
    let message = forest
        .oob_predict(&more_trees, x.view(), &ScoreOptions::default())
        .unwrap_err()
        .to_string();
    assert!(message.contains("forest holds 5"), "{message}");
    let narrow = x.slice(ndarray::s![.., ..9]).to_owned();
    assert!(matches!(
        forest.oob_predict(&params, narrow.view(), &ScoreOptions::default()),
        Err(MorfError::ShapeMismatch { .. })
    ));
}
