//! Boosted models trained further (`Booster::fit_more`, scikit-learn's warm_start):
//! the same model, bit for bit, as one fit of all the rounds.

use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, BoostParams, BoostTargets, Booster, EarlyStopping, FitControl, MaxFeatures, Patches,
    ScoreOptions, ValidationSize,
};
use ndarray::Array2;

/// Signals of 12 samples whose class is where a bump sits, in noise; `missing` of
/// the values NaN, and whole numbers 0..=255 when `bytes`.
fn bumps(n: usize, n_classes: usize, missing: f64, bytes: bool) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(7, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % n_classes) as u32).collect();
    let x = Array2::from_shape_fn((n, 12), |(i, j)| {
        if rng.unit() < missing {
            return f32::NAN;
        }
        let bump = if j / 4 == y[i] as usize { 2.0 } else { 0.0 };
        let value = bump + rng.unit() * 3.0;
        if bytes {
            (value * 40.0).round() as f32
        } else {
            value as f32
        }
    });
    (x, y)
}

fn params(n_estimators: usize) -> BoostParams {
    BoostParams {
        n_estimators,
        min_samples_leaf: 3,
        max_leaf_nodes: Some(6),
        atoms: AtomKind::Patches(Patches::new(vec![12], vec![1], vec![4])),
        max_features: MaxFeatures::Count(8),
        random_state: 11,
        ..BoostParams::default()
    }
}

/// `first` rounds then `more` added, beside all at once.
fn check_continued(params: impl Fn(usize) -> BoostParams, x: &Array2<f32>, targets: BoostTargets) {
    let (first, all) = (6, 15);
    let control = FitControl::new();
    let start = Booster::fit(&params(first), x.view(), targets, None).unwrap();
    assert_eq!(start.n_rounds(), first);
    start.predict(x.view(), &ScoreOptions::new()).unwrap();
    let continued = start
        .fit_more(&params(all), x.view(), targets, None, &control)
        .unwrap();
    let at_once = Booster::fit(&params(all), x.view(), targets, None).unwrap();
    assert_eq!(continued.n_rounds(), all);
    assert_eq!(continued, at_once);
    assert_eq!(continued.to_bytes(), at_once.to_bytes());
    // The first model scored before it was continued: its layout must not carry over.
    assert_eq!(
        continued.predict(x.view(), &ScoreOptions::new()).unwrap(),
        at_once.predict(x.view(), &ScoreOptions::new()).unwrap()
    );
}

#[test]
fn added_rounds_give_the_model_of_one_fit() {
    for (n_classes, missing, bytes) in [(2, 0.0, false), (3, 0.0, true), (3, 0.1, false)] {
        let (x, y) = bumps(300, n_classes, missing, bytes);
        let targets = BoostTargets::Classes {
            labels: &y,
            n_classes,
        };
        check_continued(params, &x, targets);
    }
}

#[test]
fn added_rounds_with_subsampling_and_regression_give_the_model_of_one_fit() {
    let (x, y) = bumps(300, 3, 0.0, false);
    let values: Vec<f64> = y.iter().map(|&c| c as f64 * 1.5 - 1.0).collect();
    let subsampled = |n| BoostParams {
        subsample: 0.6,
        ..params(n)
    };
    check_continued(subsampled, &x, BoostTargets::Values(&values));
    let targets = BoostTargets::Classes {
        labels: &y,
        n_classes: 3,
    };
    check_continued(subsampled, &x, targets);
}

#[test]
fn added_rounds_with_early_stopping_give_the_model_of_one_fit() {
    let (x, y) = bumps(400, 3, 0.0, false);
    let targets = BoostTargets::Classes {
        labels: &y,
        n_classes: 3,
    };
    let holding_out = |n| BoostParams {
        early_stopping: Some(EarlyStopping {
            validation_size: ValidationSize::Fraction(0.2),
            n_iter_no_change: 10,
            tol: 0.0,
        }),
        ..params(n)
    };
    check_continued(holding_out, &x, targets);
    let stopping = |n| BoostParams {
        early_stopping: Some(EarlyStopping {
            validation_size: ValidationSize::Fraction(0.2),
            n_iter_no_change: 2,
            tol: 1e-3,
        }),
        learning_rate: 0.5,
        ..params(n)
    };
    // A model that stopped early gains no round: the longer fit stops there too.
    let stopped = Booster::fit(&stopping(200), x.view(), targets, None).unwrap();
    assert!(stopped.n_rounds() < 200);
    let more = stopped
        .fit_more(&stopping(300), x.view(), targets, None, &FitControl::new())
        .unwrap();
    assert_eq!(more, stopped);
}

#[test]
fn adding_rounds_on_other_data_or_settings_is_an_error() {
    let (x, y) = bumps(200, 2, 0.0, false);
    let targets = BoostTargets::Classes {
        labels: &y,
        n_classes: 2,
    };
    let model = Booster::fit(&params(4), x.view(), targets, None).unwrap();
    let control = FitControl::new();
    let fewer = model.fit_more(&params(3), x.view(), targets, None, &control);
    assert!(fewer
        .unwrap_err()
        .to_string()
        .contains("at least the 4 rounds"));
    let three = BoostTargets::Classes {
        labels: &y,
        n_classes: 3,
    };
    let other_loss = model.fit_more(&params(6), x.view(), three, None, &control);
    assert!(other_loss
        .unwrap_err()
        .to_string()
        .contains("data of the first fit"));
    let narrower = x.slice(ndarray::s![.., ..10]).to_owned();
    let other_x = model.fit_more(&params(6), narrower.view(), targets, None, &control);
    assert!(other_x.unwrap_err().to_string().contains("features"));
    let stopping = BoostParams {
        early_stopping: Some(EarlyStopping::default()),
        ..params(6)
    };
    let other_stopping = model.fit_more(&stopping, x.view(), targets, None, &control);
    assert!(other_stopping
        .unwrap_err()
        .to_string()
        .contains("early_stopping"));
}
