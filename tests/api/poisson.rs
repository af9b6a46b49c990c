//! Poisson regression forests through the public API: half Poisson deviance splits
//! that never leave a child without counts, and their input checks.

use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, Criterion, FitControl, Forest, ForestParams, MaxFeatures, Patches, ScoreOptions,
    Targets,
};
use ndarray::Array2;

/// 16 features (a 4 x 4 image) in 0..1 and two outputs of counts whose rates grow
/// with `x0 + x5` and with `x10`: mostly 0 where the rates are low.
fn counts(n: usize, seed: u64) -> (Array2<f32>, Array2<f64>) {
    let mut rng = Rng::new(seed, 0);
    let x = Array2::from_shape_fn((n, 16), |_| rng.unit() as f32);
    let y = Array2::from_shape_fn((n, 2), |(i, k)| {
        let rate = if k == 0 {
            (4.0 * (x[[i, 0]] + x[[i, 5]]) as f64 - 4.0).exp()
        } else {
            (3.0 * x[[i, 10]] as f64 - 2.0).exp()
        };
        // A Poisson draw by counting unit-rate arrivals before `rate`.
        let (mut count, mut time) = (0.0, -rng.unit().max(1e-12).ln());
        while time < rate {
            count += 1.0;
            time -= rng.unit().max(1e-12).ln();
        }
        count
    });
    (x, y)
}

fn params(atoms: AtomKind, criterion: Criterion) -> ForestParams {
    ForestParams {
        n_estimators: 6,
        atoms,
        criterion,
        max_features: MaxFeatures::Count(8),
        bootstrap: false,
        random_state: 4,
        ..ForestParams::default()
    }
}

fn all_kinds(criterion: Criterion) -> Vec<ForestParams> {
    vec![
        params(AtomKind::AxisAligned, criterion),
        params(
            AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            criterion,
        ),
        params(
            AtomKind::Patches(Patches::new(vec![4, 4], vec![1, 1], vec![2, 2])),
            criterion,
        ),
    ]
}

fn fit(params: &ForestParams, x: &Array2<f32>, y: &Array2<f64>) -> Result<Forest, String> {
    fit_weighted(params, x, y, None)
}

fn fit_weighted(
    params: &ForestParams,
    x: &Array2<f32>,
    y: &Array2<f64>,
    sample_weight: Option<&[f64]>,
) -> Result<Forest, String> {
    Forest::fit_with(
        params,
        x.view(),
        Targets::Values(y.view()),
        sample_weight,
        0..params.n_estimators,
        &FitControl::new(),
    )
    .map_err(|error| error.to_string())
}

/// Whether some leaf of some tree predicts 0 for some output.
fn some_leaf_predicts_zero(forest: &Forest) -> bool {
    forest.trees().iter().any(|tree| {
        (0..tree.nodes().len())
            .filter_map(|id| tree.leaf_values(id))
            .any(|values| values.contains(&0.0))
    })
}

/// Mean half Poisson deviance of predictions `mu` of counts `y`.
fn mean_deviance(y: &Array2<f64>, mu: &Array2<f64>) -> f64 {
    let total: f64 = y
        .iter()
        .zip(mu)
        .map(|(&y, &mu)| {
            let log_term = if y > 0.0 { y * (y / mu).ln() } else { 0.0 };
            log_term - y + mu
        })
        .sum();
    total / y.len() as f64
}

#[test]
fn poisson_children_always_hold_counts() {
    let (x, y) = counts(400, 1);
    let zeros = y.iter().filter(|&&v| v == 0.0).count();
    assert!(zeros > y.len() / 3, "{zeros} zeros");
    // Weights whose sums round: a side without counts is then left with a sum a
    // little off 0, and must still not be a child.
    let weights: Vec<f64> = (0..400).map(|i| 0.1 + (i % 7) as f64 / 3.0).collect();
    for criterion in [Criterion::SquaredError, Criterion::Poisson] {
        for params in all_kinds(criterion) {
            for sample_weight in [None, Some(&weights[..])] {
                let forest = fit_weighted(&params, &x, &y, sample_weight).unwrap();
                // Squared error isolates samples without counts in leaves of mean
                // 0; Poisson deviance never splits them off.
                assert_eq!(
                    some_leaf_predicts_zero(&forest),
                    criterion == Criterion::SquaredError,
                    "{criterion:?} {:?}",
                    params.atoms
                );
            }
        }
    }
}

#[test]
fn poisson_forests_learn_the_rates() {
    let (x, y) = counts(1500, 2);
    let (test_x, test_y) = counts(1000, 3);
    let mean = y.mean_axis(ndarray::Axis(0)).unwrap();
    let constant = Array2::from_shape_fn(test_y.dim(), |(_, k)| mean[k]);
    let baseline = mean_deviance(&test_y, &constant);
    for params in all_kinds(Criterion::Poisson) {
        let forest = fit(
            &ForestParams {
                min_samples_leaf: 10,
                ..params
            },
            &x,
            &y,
        )
        .unwrap();
        let predicted = forest
            .predict_values(test_x.view(), &ScoreOptions::new())
            .unwrap();
        let deviance = mean_deviance(&test_y, &predicted);
        assert!(deviance < 0.8 * baseline, "{deviance} vs {baseline}");
    }
}

#[test]
fn one_and_three_threads_grow_identical_poisson_forests() {
    let (x, y) = counts(300, 5);
    for params in all_kinds(Criterion::Poisson) {
        let params = ForestParams {
            bootstrap: true,
            honest_fraction: 0.25,
            ..params
        };
        let forests: Vec<Vec<u8>> = [1, 3]
            .iter()
            .map(|&n_threads| {
                fit(
                    &ForestParams {
                        n_threads,
                        ..params.clone()
                    },
                    &x,
                    &y,
                )
                .unwrap()
                .to_bytes()
            })
            .collect();
        assert_eq!(forests[0], forests[1]);
    }
}

#[test]
fn poisson_targets_must_be_counts_with_a_positive_sum() {
    let (x, y) = counts(40, 6);
    let poisson = params(AtomKind::AxisAligned, Criterion::Poisson);
    let mut negative = y.clone();
    negative[[7, 1]] = -0.5;
    let message = fit(&poisson, &x, &negative).unwrap_err();
    assert!(message.contains("negative"), "{message}");
    assert!(message.contains("row 7, output 1"), "{message}");
    let message = fit(&poisson, &x, &Array2::zeros((40, 2))).unwrap_err();
    assert!(message.contains("not strictly positive"), "{message}");
    // One output without counts is allowed (the sum is over all outputs): no split
    // can leave both children some of its counts, so the trees are single leaves.
    let mut one_empty = y.clone();
    one_empty.column_mut(1).fill(0.0);
    let forest = fit(&poisson, &x, &one_empty).unwrap();
    assert!(forest.trees().iter().all(|tree| tree.nodes().len() == 1));
    // Negative values are fine for squared error.
    let squared_error = params(AtomKind::AxisAligned, Criterion::SquaredError);
    assert!(fit(&squared_error, &x, &negative).is_ok());
}
