//! Scoring: raw scores against a walk of each tree, threads and layouts of X, missing values.

use morf_rs::atoms::SignedPatches;
use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, BoostParams, BoostTargets, Booster, MaxFeatures, Node, Patches, ScoreOptions,
};
use ndarray::Array2;

use super::*;
use crate::common::banded_images;

/// Each row's raw scores from the trees walked one by one, row by row, through the
/// public tree API: the sum over `rounds`' trees of their leaf values in tree order.
fn walked_raw_scores(
    model: &Booster,
    x: &Array2<f32>,
    rounds: std::ops::Range<usize>,
) -> Array2<f64> {
    let k_out = model.loss().n_outputs();
    let trees = &model.trees()[rounds.start * k_out..rounds.end * k_out];
    let mut raw = Array2::zeros((x.nrows(), k_out));
    for (row, mut out) in x.rows().into_iter().zip(raw.rows_mut()) {
        let row = row.to_vec();
        for (t, tree) in trees.iter().enumerate() {
            let leaf = tree.leaf_of(&row);
            out[t % k_out] += tree.leaf_values(leaf).map_or(0.0, |values| values[0]);
        }
    }
    raw
}

/// Rows of `x` with one feature set to where a single-feature split's projection
/// equals its threshold, one row per such split of `model` (where a value gives it).
fn rows_on_thresholds(model: &Booster, x: &Array2<f32>) -> Array2<f32> {
    let mut rows = Vec::new();
    for tree in model.trees() {
        for node in tree.nodes() {
            if let Node::SplitOnFeature {
                feature,
                weight,
                threshold,
                ..
            } = *node
            {
                let value = threshold / weight;
                if weight * value == threshold {
                    let mut row = x.row(rows.len() % x.nrows()).to_owned();
                    row[feature as usize] = value;
                    rows.push(row);
                }
            }
        }
    }
    let views: Vec<_> = rows.iter().map(|row| row.view()).collect();
    ndarray::stack(ndarray::Axis(0), &views).unwrap()
}

#[test]
fn scoring_gives_bit_for_bit_the_raw_scores_of_a_walk_of_each_tree() {
    // 293 rows: blocks of rows cut at several places, the last one partial.
    let (x, y, values) = banded_images(293, 21);
    let (x_test, _, _) = banded_images(293, 22);
    let image = Patches::new(vec![6, 6], vec![1, 1], vec![3, 3]);
    let dictionary = AtomKind::Mixture(vec![
        (
            AtomKind::SignedPatches(SignedPatches::new(image.clone(), 2)),
            0.3,
        ),
        (AtomKind::Gabors(image.clone()), 0.3),
        (AtomKind::Patches(image), 0.2),
        (AtomKind::AxisAligned, 0.2),
    ]);
    for atoms in [dictionary, AtomKind::AxisAligned] {
        let params = BoostParams {
            n_estimators: 6,
            atoms: atoms.clone(),
            max_features: MaxFeatures::Count(20),
            min_samples_leaf: 3,
            ..BoostParams::default()
        };
        let classifier = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
        let regressor =
            Booster::fit(&params, x.view(), BoostTargets::Values(&values), None).unwrap();
        for model in [classifier, regressor] {
            // Fresh rows and scaled rows fall between the thresholds (midpoints); the
            // rows made to meet them exactly must go left.
            let scaled = x.mapv(|v| v * 0.37 - 1.1);
            let on_thresholds = rows_on_thresholds(&model, &x_test);
            assert!(on_thresholds.nrows() > 5, "{}", on_thresholds.nrows());
            let mut with_missing = x_test.clone();
            with_missing
                .iter_mut()
                .step_by(7)
                .for_each(|v| *v = f32::NAN);
            for rows in [&x, &x_test, &scaled, &on_thresholds, &with_missing] {
                let mut expected = walked_raw_scores(&model, rows, 0..6);
                for mut row in expected.rows_mut() {
                    row += &ndarray::ArrayView1::from(model.baseline());
                }
                assert_eq!(
                    model
                        .predict_raw(rows.view(), &ScoreOptions::new())
                        .unwrap(),
                    expected,
                    "{atoms:?}"
                );
                assert_eq!(
                    rounds_raw(&model, rows, 2..5, 1).unwrap(),
                    walked_raw_scores(&model, rows, 2..5),
                    "{atoms:?}, rounds 2..5"
                );
                // A few rows alone, as a call for one row scores them.
                for n in [1, 5, 8, 9] {
                    let few = rows.slice(ndarray::s![..n, ..]);
                    assert_eq!(
                        model.predict_raw(few, &ScoreOptions::new()).unwrap(),
                        expected.slice(ndarray::s![..n, ..]),
                        "{atoms:?}, {n} rows"
                    );
                }
            }
            // The same rows as float64 and as bytes score the same.
            let x64 = x.mapv(f64::from);
            let x8 = x.mapv(|v| v as u8);
            let raw = model.predict_raw(x.view(), &ScoreOptions::new()).unwrap();
            assert_eq!(
                model.predict_raw(x64.view(), &ScoreOptions::new()).unwrap(),
                raw
            );
            assert_eq!(
                model.predict_raw(x8.view(), &ScoreOptions::new()).unwrap(),
                raw
            );
        }
    }
}

#[test]
fn scores_are_the_same_for_any_number_of_threads_and_layout_of_x() {
    // 293 rows: each number of threads cuts them into chunks of another size.
    let (x, y, _) = banded_images(293, 23);
    let params = BoostParams {
        n_estimators: 5,
        atoms: AtomKind::SignedPatches(SignedPatches::new(
            Patches::new(vec![6, 6], vec![1, 1], vec![4, 4]),
            2,
        )),
        max_features: MaxFeatures::Count(20),
        min_samples_leaf: 3,
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
    let x = x.mapv(|v| v * 0.29 + 0.013);
    let one = model.predict_raw(x.view(), &ScoreOptions::new()).unwrap();
    let column_major = x.t().as_standard_layout().into_owned().reversed_axes();
    for n_threads in [2, 3, 4] {
        assert_eq!(
            model
                .predict_raw(x.view(), &ScoreOptions::new().with_threads(n_threads))
                .unwrap(),
            one,
            "{n_threads} threads"
        );
        assert_eq!(
            model
                .predict_raw(
                    column_major.view(),
                    &ScoreOptions::new().with_threads(n_threads)
                )
                .unwrap(),
            one,
            "{n_threads} threads, column-major X"
        );
    }
}

/// Two classes told apart only by whether feature 7 is missing, and three classes
/// (as [`three_classes`]) with missing cells at random in every feature.
fn with_missing_values(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>, Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 1);
    let (mut informative, _) = three_classes(n, seed);
    let labels: Vec<u32> = (0..n).map(|_| rng.below(2) as u32).collect();
    for (i, &label) in labels.iter().enumerate() {
        if label == 1 {
            informative[[i, 7]] = f32::NAN;
        }
    }
    let (mut x, y) = three_classes(n, seed + 1);
    x.mapv_inplace(|v| if rng.below(10) == 0 { f32::NAN } else { v });
    (informative, labels, x, y)
}

#[test]
fn missing_values_go_to_the_side_learnt_at_fit() {
    let (x, y, _, _) = with_missing_values(600, 1);
    let (x_test, y_test, _, _) = with_missing_values(600, 2);
    for atoms in [
        AtomKind::AxisAligned,
        AtomKind::SparseOblique {
            feature_combinations: 2.0,
        },
    ] {
        let params = BoostParams {
            n_estimators: 5,
            max_features: match atoms {
                AtomKind::AxisAligned => MaxFeatures::All,
                _ => MaxFeatures::Count(20),
            },
            atoms: atoms.clone(),
            ..BoostParams::default()
        };
        let model = Booster::fit(&params, x.view(), classes(&y, 2), None).unwrap();
        // Only a split of present from missing values (or a missing side beside a
        // threshold) tells the classes apart.
        assert_eq!(accuracy(&model, &x_test, &y_test), 1.0, "{atoms:?}");
        let reloaded = Booster::from_bytes(&model.to_bytes()).unwrap();
        assert_eq!(
            reloaded
                .predict(x_test.view(), &ScoreOptions::new().with_threads(2))
                .unwrap(),
            model.predict(x_test.view(), &ScoreOptions::new()).unwrap()
        );
    }
}

#[test]
fn with_missing_values_training_and_scoring_agree_and_threads_do_not_matter() {
    let (_, _, x, y) = with_missing_values(900, 3);
    let params = BoostParams {
        n_estimators: 12,
        subsample: 0.6,
        max_bins: 256,
        atoms: AtomKind::SparseOblique {
            feature_combinations: 2.0,
        },
        max_features: MaxFeatures::Count(30),
        ..BoostParams::default()
    };
    let model = Booster::fit(&params, x.view(), classes(&y, 3), None).unwrap();
    // Rows in a round's sample follow bins, the others thresholds and learnt sides,
    // as scoring does: both must reach the same leaves.
    assert_scored_loss_is_the_recorded_one(&model, &x, &y);
    assert!(accuracy(&model, &x, &y) > 0.8);
    let with_threads = |n_threads| {
        let params = BoostParams {
            n_threads,
            ..params.clone()
        };
        Booster::fit(&params, x.view(), classes(&y, 3), None)
            .unwrap()
            .to_bytes()
    };
    let one = with_threads(1);
    assert!(one == with_threads(2) && one == with_threads(3));
}
