//! Behaviour of gradient boosting through the public API: fitting, scoring, and
//! refusing bad input, each in a module of its own over the data made here.

mod bad_input;
mod fit;
mod scoring;

use morf_rs::rng::Rng;
use morf_rs::{AtomKind, BoostTargets, Booster, MorfError, Patches, ScoreOptions};
use ndarray::Array2;

/// noise.
pub(crate) fn three_classes(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let x = Array2::from_shape_fn((n, 10), |_| rng.unit() as f32);
    let y = (0..n)
        .map(|i| {
            (0..3)
                .max_by(|&a, &b| x[[i, a]].total_cmp(&x[[i, b]]))
                .unwrap() as u32
        })
        .collect();
    (x, y)
}

/// A smooth target of two of 10 features.
pub(crate) fn regression(n: usize, seed: u64) -> (Array2<f32>, Vec<f64>) {
    let mut rng = Rng::new(seed, 0);
    let x = Array2::from_shape_fn((n, 10), |_| (rng.unit() * 4.0 - 2.0) as f32);
    let y = (0..n)
        .map(|i| (x[[i, 0]] as f64).sin() + (x[[i, 3]] as f64).powi(2))
        .collect();
    (x, y)
}

pub(crate) fn classes(labels: &[u32], n_classes: usize) -> BoostTargets<'_> {
    BoostTargets::Classes { labels, n_classes }
}

/// Asserts that the log loss of `model`'s probabilities on `x` (scored on 2 threads)
/// is the training loss it recorded for its last round: rows in a round's sample follow
/// bins, the others thresholds, and scoring must put every row in the same leaf.
pub(crate) fn assert_scored_loss_is_the_recorded_one(model: &Booster, x: &Array2<f32>, y: &[u32]) {
    let proba = model
        .predict(x.view(), &ScoreOptions::new().with_threads(2))
        .unwrap();
    let log_loss = y
        .iter()
        .enumerate()
        .map(|(i, &label)| -proba[[i, label as usize]].ln())
        .sum::<f64>()
        / y.len() as f64;
    let recorded = *model.train_loss().last().unwrap();
    assert!(
        (log_loss - recorded).abs() < 1e-9,
        "scored {log_loss}, recorded while training {recorded}"
    );
}

pub(crate) fn accuracy(model: &Booster, x: &Array2<f32>, y: &[u32]) -> f64 {
    let proba = model.predict(x.view(), &ScoreOptions::new()).unwrap();
    let hits = proba
        .rows()
        .into_iter()
        .zip(y)
        .filter(|(row, &label)| {
            let best = (0..row.len())
                .max_by(|&a, &b| row[a].total_cmp(&row[b]))
                .unwrap();
            best as u32 == label
        })
        .count();
    hits as f64 / y.len() as f64
}

pub(crate) fn patches_1d(n_features: usize) -> AtomKind {
    AtomKind::Patches(Patches::new(vec![n_features], vec![1], vec![3]))
}

/// What the trees of `rounds` add to the raw scores of `x`'s rows, on `n_threads`.
pub(crate) fn rounds_raw(
    model: &Booster,
    x: &Array2<f32>,
    rounds: std::ops::Range<usize>,
    n_threads: usize,
) -> Result<Array2<f64>, MorfError> {
    let mut raw = Array2::zeros((x.nrows(), model.loss().n_outputs()));
    let options = ScoreOptions::new().with_threads(n_threads);
    model.predict_raw_rounds_into(x.view(), rounds, raw.view_mut(), &options)?;
    Ok(raw)
}
