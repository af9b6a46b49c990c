//! Pooled atoms in whole models: they learn what fixed positions cannot, save and load,
//! and give the same model for any number of threads.

use morf_rs::atoms::{Patches, Pooled, Reductions};
use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, BoostParams, BoostTargets, Booster, Forest, ForestParams, MaxFeatures, Node,
    ScoreOptions,
};
use ndarray::Array2;

const LENGTH: usize = 32;

/// Signals of `LENGTH` noisy steps. Class 1 holds a bump (three neighbours raised by
/// 3) at a random place, class 0 the same total spread as three lone spikes: every
/// fixed window sums alike in both classes on average, only "somewhere, three in a
/// row" tells them apart.
fn shifted_bumps(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let mut x = Array2::from_shape_fn((n, LENGTH), |_| rng.below(3) as f32);
    for (i, &class) in y.iter().enumerate() {
        if class == 1 {
            let start = rng.below(LENGTH - 2);
            (start..start + 3).for_each(|j| x[[i, j]] += 3.0);
        } else {
            let mut spikes: Vec<usize> = Vec::new();
            while spikes.len() < 3 {
                let j = rng.below(LENGTH);
                if spikes.iter().all(|&s| s.abs_diff(j) > 2) {
                    spikes.push(j);
                }
            }
            spikes.iter().for_each(|&j| x[[i, j]] += 3.0);
        }
    }
    (x, y)
}

fn patches() -> AtomKind {
    AtomKind::Patches(Patches::new(vec![LENGTH], vec![3], vec![3]))
}

fn pooled_patches(reduce: Reductions) -> AtomKind {
    AtomKind::Pooled(Pooled {
        family: Box::new(patches()),
        shift_min: vec![LENGTH],
        shift_max: vec![LENGTH],
        reduce,
    })
}

fn forest_params(atoms: AtomKind) -> ForestParams {
    ForestParams {
        n_estimators: 20,
        atoms,
        max_features: MaxFeatures::Count(4),
        random_state: 7,
        ..ForestParams::default()
    }
}

fn error(predicted: impl Iterator<Item = u32>, y: &[u32]) -> f64 {
    predicted.zip(y).filter(|(p, y)| p != *y).count() as f64 / y.len() as f64
}

fn forest_error(forest: &Forest, x: &Array2<f32>, y: &[u32]) -> f64 {
    let proba = forest
        .predict_proba(x.view(), &ScoreOptions::new())
        .unwrap();
    error(proba.rows().into_iter().map(|p| u32::from(p[1] > p[0])), y)
}

#[test]
fn pooled_patches_find_a_bump_wherever_it_lies_and_plain_ones_do_not() {
    let (x, y) = shifted_bumps(300, 1);
    let (x_test, y_test) = shifted_bumps(400, 2);
    let plain = Forest::fit(&forest_params(patches()), x.view(), &y, 2, None).unwrap();
    let pooled = Forest::fit(
        &forest_params(pooled_patches(Reductions::Max)),
        x.view(),
        &y,
        2,
        None,
    )
    .unwrap();
    let (plain_error, pooled_error) = (
        forest_error(&plain, &x_test, &y_test),
        forest_error(&pooled, &x_test, &y_test),
    );
    assert!(pooled_error < 0.03, "pooled test error {pooled_error}");
    assert!(
        plain_error > 0.12 && plain_error > 4.0 * pooled_error,
        "plain test error {plain_error}, pooled {pooled_error}"
    );

    let params = BoostParams {
        n_estimators: 20,
        atoms: pooled_patches(Reductions::Both),
        max_features: MaxFeatures::Count(4),
        ..BoostParams::default()
    };
    let labels = BoostTargets::Classes {
        labels: &y,
        n_classes: 2,
    };
    let booster = Booster::fit(&params, x.view(), labels, None).unwrap();
    let proba = booster
        .predict(x_test.view(), &ScoreOptions::new())
        .unwrap();
    let boosted_error = error(
        proba.rows().into_iter().map(|p| u32::from(p[1] > p[0])),
        &y_test,
    );
    assert!(boosted_error < 0.03, "boosted test error {boosted_error}");
}

#[test]
fn pooled_models_save_load_and_do_not_depend_on_threads() {
    let (mut x, y) = shifted_bumps(200, 3);
    // Missing values follow the rule of every atom.
    x[[0, 5]] = f32::NAN;
    x[[7, 30]] = f32::NAN;
    let (mut probe, _) = shifted_bumps(50, 4);
    probe[[1, 2]] = f32::NAN;
    let mut params = forest_params(pooled_patches(Reductions::Both));
    params.n_threads = 1;
    let one = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
    params.n_threads = 2;
    let two = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
    assert_eq!(one, two);
    let pooled_splits = one
        .trees()
        .iter()
        .flat_map(|tree| tree.nodes())
        .filter(|node| matches!(node, Node::SplitPooled { .. }))
        .count();
    assert!(pooled_splits > 20);
    let restored = Forest::from_bytes(&one.to_bytes()).unwrap();
    assert_eq!(restored, one);
    let proba = one
        .predict_proba(probe.view(), &ScoreOptions::new().with_threads(2))
        .unwrap();
    assert_eq!(
        restored
            .predict_proba(probe.view(), &ScoreOptions::new())
            .unwrap(),
        proba
    );
    assert!(proba.iter().all(|p| p.is_finite()));

    let boost = |n_threads| {
        let params = BoostParams {
            n_estimators: 10,
            atoms: pooled_patches(Reductions::Both),
            max_features: MaxFeatures::Count(6),
            n_threads,
            ..BoostParams::default()
        };
        let labels = BoostTargets::Classes {
            labels: &y,
            n_classes: 2,
        };
        Booster::fit(&params, x.view(), labels, None).unwrap()
    };
    let (one, two) = (boost(1), boost(2));
    assert_eq!(one, two);
    let restored = Booster::from_bytes(&one.to_bytes()).unwrap();
    assert_eq!(restored, one);
    // Blocks of rows and rows one by one score pooled splits alike.
    let proba = one.predict(probe.view(), &ScoreOptions::new()).unwrap();
    for i in 0..4 {
        let single = restored
            .predict(probe.slice(ndarray::s![i..i + 1, ..]), &ScoreOptions::new())
            .unwrap();
        assert_eq!(single.row(0), proba.row(i));
    }
}

#[test]
fn importances_credit_every_feature_a_window_covers() {
    let (x, y) = shifted_bumps(200, 5);
    let mut params = forest_params(pooled_patches(Reductions::Max));
    params.n_estimators = 3;
    let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
    // Global windows cover the whole signal: every feature is credited.
    let importances = forest.split_count_importances().unwrap();
    assert!(importances.iter().all(|&v| v > 0.0), "{importances:?}");
}
