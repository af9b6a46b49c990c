//! Progress reports and cancellation of fit and scoring.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, FitControl, Forest, ForestParams, Inspect, MorfError, Patches, Progress,
    ScoreOptions, Targets,
};
use ndarray::Array2;

/// Whole-valued rows of 40 cells, class 1 holding a longer run: trees grow deep enough
/// (mean leaf depth above 8) that fits take the byte-copy and running-sums paths.
fn runs(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let mut x = Array2::zeros((n, 40));
    for (i, &label) in y.iter().enumerate() {
        let length = 3 + 2 * label as usize + rng.below(3);
        let start = rng.below(40);
        for cell in start..start + length {
            x[[i, cell % 40]] = 1.0 + rng.below(3) as f32;
        }
    }
    (x, y)
}

/// All trees of `params`, on two classes.
fn fit_with(
    params: &ForestParams,
    x: &Array2<f32>,
    y: &[u32],
    control: &FitControl<'_>,
) -> Result<Forest, MorfError> {
    let targets = Targets::Classes {
        labels: y,
        n_classes: 2,
    };
    let trees = 0..params.n_estimators;
    Forest::fit_with(params, x.view(), targets, None, trees, control)
}

fn kinds() -> Vec<ForestParams> {
    let base = ForestParams {
        n_estimators: 9,
        random_state: 3,
        ..ForestParams::default()
    };
    vec![
        base.clone(),
        ForestParams {
            atoms: AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            ..base.clone()
        },
        ForestParams {
            atoms: AtomKind::Patches(
                Patches::new(vec![40], vec![2], vec![8]).with_wrap(vec![true]),
            ),
            honest_fraction: 0.3,
            ..base
        },
    ]
}

#[test]
fn a_control_never_changes_the_forest_for_any_number_of_threads() {
    let (x, y) = runs(300, 1);
    let never = AtomicBool::new(false);
    let report = |_: Progress| {};
    for params in kinds() {
        let expected = Forest::fit(&params, x.view(), &y, 2, None)
            .unwrap()
            .to_bytes();
        for n_threads in [1, 2, 3] {
            let params = ForestParams {
                n_threads,
                ..params.clone()
            };
            let control = FitControl::new().with_progress(&report).with_cancel(&never);
            let forest = fit_with(&params, &x, &y, &control).unwrap();
            assert_eq!(
                forest.to_bytes(),
                expected,
                "{:?}, {n_threads} threads",
                params.atoms
            );
        }
    }
}

#[test]
fn progress_counts_every_tree_once_in_order() {
    let (x, y) = runs(200, 2);
    for params in kinds() {
        for n_threads in [1, 3] {
            let seen = Mutex::new(Vec::new());
            let report = |progress: Progress| seen.lock().unwrap().push(progress);
            let params = ForestParams {
                n_threads,
                ..params.clone()
            };
            fit_with(&params, &x, &y, &FitControl::new().with_progress(&report)).unwrap();
            let expected: Vec<Progress> = (1..=params.n_estimators)
                .map(|trees_done| Progress {
                    trees_done,
                    n_trees: params.n_estimators,
                })
                .collect();
            assert_eq!(*seen.lock().unwrap(), expected);
        }
    }
    // A range counts its own trees.
    let seen = Mutex::new(Vec::new());
    let report = |progress: Progress| seen.lock().unwrap().push(progress.trees_done);
    let targets = Targets::Classes {
        labels: &y,
        n_classes: 2,
    };
    let control = FitControl::new().with_progress(&report);
    Forest::fit_with(&kinds()[0], x.view(), targets, None, 5..12, &control).unwrap();
    assert_eq!(*seen.lock().unwrap(), (1..=7).collect::<Vec<_>>());
}

#[test]
fn a_flag_set_before_the_fit_grows_nothing() {
    let (x, y) = runs(100, 3);
    let cancel = AtomicBool::new(true);
    let calls = Mutex::new(0);
    let report = |_: Progress| *calls.lock().unwrap() += 1;
    let control = FitControl::new()
        .with_progress(&report)
        .with_cancel(&cancel);
    for params in kinds() {
        let result = fit_with(&params, &x, &y, &control);
        assert_eq!(result, Err(MorfError::Cancelled));
    }
    assert_eq!(*calls.lock().unwrap(), 0);
}

#[test]
fn a_flag_set_during_the_fit_stops_it_at_the_next_tree() {
    let (x, y) = runs(200, 4);
    for params in kinds() {
        let params = ForestParams {
            n_estimators: 50,
            n_threads: 1,
            ..params
        };
        let cancel = AtomicBool::new(false);
        let done = Mutex::new(0);
        let report = |progress: Progress| {
            *done.lock().unwrap() = progress.trees_done;
            if progress.trees_done == 3 {
                cancel.store(true, Ordering::Relaxed);
            }
        };
        let control = FitControl::new()
            .with_progress(&report)
            .with_cancel(&cancel);
        let result = fit_with(&params, &x, &y, &control);
        assert_eq!(result, Err(MorfError::Cancelled));
        assert_eq!(*done.lock().unwrap(), 3, "{:?}", params.atoms);
    }
}

#[test]
fn scoring_stops_when_the_flag_is_set_and_is_unchanged_otherwise() {
    let (x, y) = runs(300, 5);
    for params in kinds() {
        let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
        for n_threads in [1, 2] {
            let never = AtomicBool::new(false);
            assert_eq!(
                forest
                    .predict_proba(
                        x.view(),
                        &ScoreOptions::new()
                            .with_threads(n_threads)
                            .with_cancel(&never)
                    )
                    .unwrap(),
                forest
                    .predict_proba(x.view(), &ScoreOptions::new().with_threads(n_threads))
                    .unwrap()
            );
            assert_eq!(
                forest
                    .apply(
                        x.view(),
                        &ScoreOptions::new()
                            .with_threads(n_threads)
                            .with_cancel(&never)
                    )
                    .unwrap(),
                forest
                    .apply(x.view(), &ScoreOptions::new().with_threads(n_threads))
                    .unwrap()
            );
            let cancel = AtomicBool::new(true);
            assert_eq!(
                forest.predict_proba(
                    x.view(),
                    &ScoreOptions::new()
                        .with_threads(n_threads)
                        .with_cancel(&cancel)
                ),
                Err(MorfError::Cancelled)
            );
            assert_eq!(
                forest.apply(
                    x.view(),
                    &ScoreOptions::new()
                        .with_threads(n_threads)
                        .with_cancel(&cancel)
                ),
                Err(MorfError::Cancelled)
            );
        }
    }
}
