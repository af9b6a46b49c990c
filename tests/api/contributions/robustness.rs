//! The same values for any number of threads or rows beside, and clean refusals.

use std::sync::atomic::AtomicBool;

use ndarray::{Array2, Axis};

use morf_rs::{AtomKind, Explain, Forest, ForestParams, HonestPrior, Node, ScoreOptions};

use super::*;

#[test]
fn contributions_are_the_same_for_any_number_of_threads() {
    let (x, y) = images(300, 3, true, 7);
    let forest = Forest::fit(&forest_params(patches()), x.view(), &y, 3, None).unwrap();
    let one = forest
        .contributions(x.view(), &ScoreOptions::new())
        .unwrap();
    assert_eq!(
        one,
        forest
            .contributions(x.view(), &ScoreOptions::new().with_threads(2))
            .unwrap()
    );
    assert_eq!(
        one,
        forest
            .contributions(x.view(), &ScoreOptions::new().with_threads(0))
            .unwrap()
    );
    let never = AtomicBool::new(false);
    let atoms = forest
        .atom_contributions(x.view(), &ScoreOptions::new().with_cancel(&never))
        .unwrap();
    assert_eq!(
        atoms,
        forest
            .atom_contributions(
                x.view(),
                &ScoreOptions::new().with_threads(2).with_cancel(&never)
            )
            .unwrap()
    );
}

#[test]
fn a_rows_values_do_not_depend_on_the_rows_explained_beside_it() {
    // Rows are explained in blocks side by side, the last block's free places
    // filled with its last row: a row alone, first or last in a block, or in a block
    // cut short, gets the same values.
    let (x, y) = images(300, 3, true, 11);
    let forest = Forest::fit(&forest_params(patches()), x.view(), &y, 3, None).unwrap();
    let options = ScoreOptions::new();
    let together = forest
        .contributions(x.slice(ndarray::s![..21, ..]), &options)
        .unwrap();
    for r in [0, 7, 8, 20] {
        let alone = forest
            .contributions(x.slice(ndarray::s![r..r + 1, ..]), &options)
            .unwrap();
        assert_eq!(
            alone.index_axis(Axis(0), 0),
            together.index_axis(Axis(0), r)
        );
    }
    let shifted = forest
        .contributions(x.slice(ndarray::s![3..21, ..]), &options)
        .unwrap();
    assert_eq!(shifted, together.slice(ndarray::s![3..21, .., ..]));
}

#[test]
fn contributions_refuse_what_they_cannot_explain() {
    let (x, y) = images(100, 2, false, 8);
    let params = ForestParams {
        honest_fraction: 0.5,
        honest_prior: HonestPrior::Ignore,
        max_depth: None,
        min_samples_leaf: 1,
        ..forest_params(AtomKind::AxisAligned)
    };
    let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
    let silent = forest
        .trees()
        .iter()
        .flat_map(|t| t.nodes())
        .any(|n| matches!(n, Node::Leaf { value: None }));
    assert!(silent, "the test needs leaves that cast no vote");
    let error = forest
        .contributions(x.view(), &ScoreOptions::new())
        .unwrap_err()
        .to_string();
    assert!(error.contains("cast no vote"), "{error}");

    let forest = Forest::fit(&forest_params(patches()), x.view(), &y, 2, None).unwrap();
    let narrow = Array2::<f32>::zeros((3, N_FEATURES - 1));
    assert!(forest
        .contributions(narrow.view(), &ScoreOptions::new())
        .is_err());
    let mut bad = x.slice(ndarray::s![..3, ..]).to_owned();
    bad[[1, 2]] = f32::INFINITY;
    assert!(forest
        .contributions(bad.view(), &ScoreOptions::new())
        .is_err());
    let cancelled = AtomicBool::new(true);
    let mut out = Array2::zeros((100, (N_FEATURES + 1) * 2));
    let result = forest.contributions_into(
        x.view(),
        out.view_mut(),
        &ScoreOptions::new().with_cancel(&cancelled),
    );
    assert!(result.is_err());
    let mut wrong = Array2::zeros((100, N_FEATURES));
    let never = AtomicBool::new(false);
    assert!(forest
        .contributions_into(
            x.view(),
            wrong.view_mut(),
            &ScoreOptions::new().with_cancel(&never)
        )
        .is_err());
}
