//! A boosted model's leaves and paths (apply, decision paths) through the public API,
//! against a walk of each tree row by row.

use crate::common::banded_images;
use morf_rs::{
    AtomKind, BoostParams, BoostTargets, Booster, Inspect, MorfError, Patches, ScoreOptions, Tree,
    NO_NODE,
};
use ndarray::Array2;

/// Three-class models of patch atoms (three trees a round) and of single features.
fn models(x: &Array2<f32>, y: &[u32]) -> Vec<Booster> {
    let patches = AtomKind::Patches(Patches::new(vec![6, 6], vec![1, 1], vec![3, 3]));
    [patches, AtomKind::AxisAligned]
        .into_iter()
        .map(|atoms| {
            let params = BoostParams {
                n_estimators: 6,
                min_samples_leaf: 5,
                atoms,
                ..BoostParams::default()
            };
            let targets = BoostTargets::Classes {
                labels: y,
                n_classes: 3,
            };
            Booster::fit(&params, x.view(), targets, None).unwrap()
        })
        .collect()
}

/// The ids of the children of node `id` of `tree`, or `None` for a leaf.
fn children(tree: &Tree, id: u32) -> Option<(u32, u32)> {
    let (right, ..) = tree.nodes()[id as usize].split_sides()?;
    Some((id + 1, right))
}

#[test]
fn apply_gives_the_leaves_whose_values_sum_to_the_raw_scores() {
    let (x, y, _) = banded_images(300, 1);
    for model in models(&x, &y) {
        let leaves = model.apply(x.view(), &ScoreOptions::new()).unwrap();
        let k_out = model.loss().n_outputs();
        assert_eq!(k_out, 3);
        assert_eq!(leaves.dim(), (x.nrows(), model.trees().len()));
        assert_eq!(
            model
                .apply(x.view(), &ScoreOptions::new().with_threads(2))
                .unwrap(),
            leaves
        );
        let raw = model.predict_raw(x.view(), &ScoreOptions::new()).unwrap();
        for (i, row_leaves) in leaves.rows().into_iter().enumerate() {
            let row = x.row(i).to_vec();
            let mut sums = vec![0.0; k_out];
            for (t, (tree, &leaf)) in model.trees().iter().zip(row_leaves).enumerate() {
                assert_eq!(leaf as usize, tree.leaf_of(&row), "row {i}, tree {t}");
                sums[t % k_out] += tree.leaf_values(leaf as usize).unwrap()[0];
            }
            for (k, sum) in sums.iter().enumerate() {
                assert_eq!(sum + model.baseline()[k], raw[[i, k]]);
            }
        }
    }
}

#[test]
fn decision_paths_lead_from_the_root_to_the_leaves_of_apply() {
    let (x, y, _) = banded_images(120, 2);
    for model in models(&x, &y) {
        let paths = model
            .decision_paths(x.view(), &ScoreOptions::new())
            .unwrap();
        let widths = model.path_widths();
        assert_eq!(widths.len(), model.trees().len());
        assert_eq!(paths.ncols(), widths.iter().sum::<usize>());
        assert_eq!(
            model
                .decision_paths(x.view(), &ScoreOptions::new().with_threads(2))
                .unwrap(),
            paths
        );
        let leaves = model.apply(x.view(), &ScoreOptions::new()).unwrap();
        for (i, row_paths) in paths.rows().into_iter().enumerate() {
            let mut blocks = row_paths.iter().copied();
            for (t, (tree, &width)) in model.trees().iter().zip(&widths).enumerate() {
                let block: Vec<u32> = blocks.by_ref().take(width).collect();
                let path: Vec<u32> = block
                    .iter()
                    .copied()
                    .take_while(|&id| id != NO_NODE)
                    .collect();
                assert!(block[path.len()..].iter().all(|&id| id == NO_NODE));
                assert_eq!(path[0], 0);
                assert_eq!(*path.last().unwrap(), leaves[[i, t]]);
                for pair in path.windows(2) {
                    let (left, right) = children(tree, pair[0]).expect("a split");
                    assert!(pair[1] == left || pair[1] == right);
                }
            }
        }
    }
}

#[test]
fn inspecting_rows_of_the_wrong_width_is_an_error() {
    let (x, y, _) = banded_images(60, 3);
    let model = &models(&x, &y)[1];
    let narrow = Array2::<f32>::zeros((4, 35));
    let shape =
        |r: Result<Array2<u32>, MorfError>| matches!(r, Err(MorfError::ShapeMismatch { .. }));
    assert!(shape(model.apply(narrow.view(), &ScoreOptions::new())));
    assert!(shape(
        model.decision_paths(narrow.view(), &ScoreOptions::new())
    ));
}
