//! Missing values (NaN) in X: every kind of forest trains on them and scores them the
//! same whatever the number of threads, each split keeps the side they go to (saved
//! and loaded with it), and without missing values at training they follow the larger
//! child.

use morf_rs::rng::Rng;
use morf_rs::{AtomKind, Forest, ForestParams, Inspect, MaxFeatures, Patches, ScoreOptions, Tree};
use ndarray::Array2;

/// 4x4 images whose class is which half is brighter; a fraction `missing` of the
/// pixels NaN, and pixel 5 missing more often in class 1.
fn images(n: usize, missing: f64, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let x = Array2::from_shape_fn((n, 16), |(i, j)| {
        let bright = (j < 8) == (y[i] == 1);
        let extra = if y[i] == 1 && j == 5 { missing } else { 0.0 };
        if rng.unit() < missing + extra {
            f32::NAN
        } else {
            rng.unit() as f32 + if bright { 0.5 } else { 0.0 }
        }
    });
    (x, y)
}

fn forest_kinds() -> Vec<ForestParams> {
    let base = ForestParams {
        n_estimators: 6,
        random_state: 11,
        ..ForestParams::default()
    };
    vec![
        base.clone(),
        ForestParams {
            atoms: AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            max_features: MaxFeatures::Count(6),
            ..base.clone()
        },
        ForestParams {
            atoms: AtomKind::Patches(Patches::new(vec![4, 4], vec![1, 1], vec![2, 2])),
            max_features: MaxFeatures::Count(6),
            ..base
        },
    ]
}

/// The split nodes of `tree` with their id, right child and missing side.
fn splits(tree: &Tree) -> impl Iterator<Item = (usize, usize, bool)> + '_ {
    tree.nodes().iter().enumerate().filter_map(|(id, node)| {
        let (right, _, missing_left) = node.split_sides()?;
        Some((id, right as usize, missing_left))
    })
}

#[test]
fn every_forest_kind_is_the_same_for_any_number_of_threads() {
    let (x, y) = images(300, 0.2, 1);
    let (probe, _) = images(200, 0.3, 2);
    for params in forest_kinds() {
        let fit = |n_threads| {
            let params = ForestParams {
                n_threads,
                ..params.clone()
            };
            Forest::fit(&params, x.view(), &y, 2, None).unwrap()
        };
        let one = fit(1);
        let proba = one
            .predict_proba(probe.view(), &ScoreOptions::new())
            .unwrap();
        assert!(proba.iter().all(|p| p.is_finite()));
        for n_threads in [2, 3] {
            let other = fit(n_threads);
            assert_eq!(one.to_bytes(), other.to_bytes(), "{:?}", params.atoms);
            assert_eq!(
                other
                    .predict_proba(probe.view(), &ScoreOptions::new().with_threads(n_threads))
                    .unwrap(),
                proba
            );
        }
    }
}

#[test]
fn splits_learn_a_side_for_missing_values_and_keep_it_when_saved() {
    let (x, y) = images(400, 0.2, 3);
    let (probe, probe_y) = images(400, 0.2, 4);
    for params in forest_kinds() {
        let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
        let sides: Vec<bool> = forest
            .trees()
            .iter()
            .flat_map(|tree| splits(tree).map(|(_, _, left)| left))
            .collect();
        // Both sides are learned somewhere.
        assert!(sides.iter().any(|&left| left) && sides.iter().any(|&left| !left));
        let loaded = Forest::from_bytes(&forest.to_bytes()).unwrap();
        assert_eq!(loaded.trees(), forest.trees());
        let proba = forest
            .predict_proba(probe.view(), &ScoreOptions::new())
            .unwrap();
        assert_eq!(
            loaded
                .predict_proba(probe.view(), &ScoreOptions::new())
                .unwrap(),
            proba
        );
        let predicted = forest.predict(probe.view(), &ScoreOptions::new()).unwrap();
        let accuracy = predicted
            .iter()
            .zip(&probe_y)
            .filter(|(p, y)| p == y)
            .count();
        assert!(accuracy > 300, "{:?}: {accuracy} of 400", params.atoms);
    }
}

#[test]
fn without_missing_values_at_training_they_follow_the_larger_child() {
    let (x, y) = images(300, 0.0, 5);
    for params in forest_kinds() {
        let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
        for tree in forest.trees() {
            let counts = tree.node_samples();
            for (id, right, missing_left) in splits(tree) {
                assert_eq!(missing_left, counts[id + 1] > counts[right], "node {id}");
            }
        }
        // A row missing everywhere walks down the larger children to one leaf.
        let nowhere = Array2::from_elem((1, 16), f32::NAN);
        let leaves = forest.apply(nowhere.view(), &ScoreOptions::new()).unwrap();
        for (tree, &leaf) in forest.trees().iter().zip(leaves.iter()) {
            let mut id = 0;
            while let Some((_, right, missing_left)) = splits(tree).find(|s| s.0 == id) {
                id = if missing_left { id + 1 } else { right };
            }
            assert_eq!(leaf as usize, id);
        }
    }
}

#[test]
fn infinity_is_refused_at_fit_and_predict() {
    let (mut x, y) = images(50, 0.1, 6);
    let forest = Forest::fit(&ForestParams::default(), x.view(), &y, 2, None).unwrap();
    x[[7, 3]] = f32::INFINITY;
    for error in [
        Forest::fit(&ForestParams::default(), x.view(), &y, 2, None).unwrap_err(),
        forest.predict(x.view(), &ScoreOptions::new()).unwrap_err(),
    ] {
        let message = error.to_string();
        assert!(
            message.contains("infinity (first at row 7, column 3)"),
            "{message}"
        );
    }
}

#[test]
fn forests_saved_before_missing_values_send_them_right() {
    for version in [1, 2] {
        let path = format!(
            "{}/tests/fixtures/forest_v{version}.bin",
            env!("CARGO_MANIFEST_DIR")
        );
        let forest = Forest::from_bytes(&std::fs::read(path).unwrap()).unwrap();
        for tree in forest.trees() {
            assert!(splits(tree).all(|(_, _, missing_left)| !missing_left));
        }
        let nowhere = Array2::from_elem((2, forest.n_features()), f32::NAN);
        let proba = forest
            .predict_proba(nowhere.view(), &ScoreOptions::new())
            .unwrap();
        assert!(proba.iter().all(|p| p.is_finite()));
    }
}
