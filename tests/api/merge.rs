//! Forests grown in parts and merged: the same forest as one grown at once.

use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, Criterion, FitControl, Forest, ForestParams, MaxFeatures, MorfError, Patches,
    ScoreOptions, Targets,
};
use ndarray::Array2;

fn data(n: usize, n_features: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
    let x = Array2::from_shape_fn((n, n_features), |(i, j)| {
        rng.below(200) as f32 + if j % 5 == 0 { 30.0 * y[i] as f32 } else { 0.0 }
    });
    (x, y)
}

fn grow(
    params: &ForestParams,
    x: &Array2<f32>,
    y: &[u32],
    trees: std::ops::Range<usize>,
) -> Forest {
    let targets = Targets::Classes {
        labels: y,
        n_classes: 3,
    };
    Forest::fit_with(params, x.view(), targets, None, trees, &FitControl::new()).unwrap()
}

#[test]
fn ranges_grown_apart_merge_into_the_forest_grown_at_once() {
    let (x, y) = data(400, 20, 1);
    let base = ForestParams {
        n_estimators: 11,
        random_state: 9,
        ..ForestParams::default()
    };
    let kinds = [
        base.clone(),
        ForestParams {
            atoms: AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            honest_fraction: 0.25,
            n_threads: 2,
            ..base.clone()
        },
        ForestParams {
            atoms: AtomKind::Patches(Patches::new(vec![4, 5], vec![1, 1], vec![3, 4])),
            max_features: MaxFeatures::Count(12),
            ..base
        },
    ];
    for params in kinds {
        let whole = grow(&params, &x, &y, 0..11);
        for cuts in [vec![0, 11], vec![0, 5, 11], vec![0, 1, 2, 7, 11]] {
            let parts = cuts.windows(2).map(|w| grow(&params, &x, &y, w[0]..w[1]));
            assert_eq!(Forest::merge(parts).unwrap(), whole, "{cuts:?}");
        }
        // Bytes too, since that is what crosses machines.
        let parts = [grow(&params, &x, &y, 0..4), grow(&params, &x, &y, 4..11)];
        let reread = parts.map(|f| Forest::from_bytes(&f.to_bytes()).unwrap());
        assert_eq!(Forest::merge(reread).unwrap().to_bytes(), whole.to_bytes());
    }
}

#[test]
fn merged_forests_average_all_their_trees() {
    let (x, y) = data(300, 20, 2);
    let params = ForestParams {
        n_estimators: 6,
        ..ForestParams::default()
    };
    let a = grow(&params, &x, &y, 0..6);
    let (x_other, y_other) = data(300, 20, 3);
    let b = grow(&params, &x_other, &y_other, 0..6);
    let merged = Forest::merge([a.clone(), b.clone()]).unwrap();
    assert_eq!(merged.trees().len(), 12);
    let (pa, pb) = (
        a.predict_proba(x.view(), &ScoreOptions::new()).unwrap(),
        b.predict_proba(x.view(), &ScoreOptions::new()).unwrap(),
    );
    let mean = (&pa + &pb) / 2.0;
    let merged_proba = merged
        .predict_proba(x.view(), &ScoreOptions::new())
        .unwrap();
    assert!(merged_proba
        .iter()
        .zip(&mean)
        .all(|(m, e)| (m - e).abs() < 1e-6));
}

#[test]
fn forests_of_other_shapes_do_not_merge() {
    let params = ForestParams {
        n_estimators: 2,
        ..ForestParams::default()
    };
    let (x, y) = data(100, 20, 4);
    let forest = grow(&params, &x, &y, 0..2);
    let (narrow, _) = data(100, 19, 4);
    let other_features = grow(&params, &narrow, &y, 0..2);
    let two_classes = Forest::fit(&params, x.view(), &vec![0; 100], 2, None).unwrap();
    assert!(matches!(
        Forest::merge([forest.clone(), other_features]),
        Err(MorfError::ShapeMismatch {
            expected: 20,
            got: 19,
            ..
        })
    ));
    let message = Forest::merge([forest.clone(), two_classes])
        .unwrap_err()
        .to_string();
    assert!(message.contains("number of classes"), "{message}");
    let values = Array2::from_shape_fn((100, 1), |(i, _)| i as f64);
    let regression_params = ForestParams {
        criterion: Criterion::SquaredError,
        ..params.clone()
    };
    let control = FitControl::new();
    let targets = Targets::Values(values.view());
    let regression =
        Forest::fit_with(&regression_params, x.view(), targets, None, 0..2, &control).unwrap();
    let message = Forest::merge([forest.clone(), regression])
        .unwrap_err()
        .to_string();
    assert!(message.contains("regression forest cannot"), "{message}");
    let message = Forest::merge(Vec::new()).unwrap_err().to_string();
    assert!(message.contains("nothing to merge"), "{message}");
    assert_eq!(Forest::merge([forest.clone()]).unwrap(), forest);
}
