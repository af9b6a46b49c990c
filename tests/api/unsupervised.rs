//! Unsupervised forests through the public API: growth without labels for every atom
//! kind, the similarity of samples, and determinism across thread counts.

use morf_rs::rng::Rng;
use morf_rs::{
    similarity_from_leaves, AtomKind, ClusteringCriterion, FitControl, Forest, Inspect, MaxSamples,
    Patches, ScoreOptions, UnsupervisedForest, UnsupervisedParams,
};
use ndarray::Array2;

/// Three groups of 30 rows of 16 features (a 4 x 4 image), each group bright in its
/// own quarter of the image, with noise.
fn three_groups() -> (Array2<f32>, Vec<usize>) {
    let mut rng = Rng::new(3, 0);
    let groups: Vec<usize> = (0..90).map(|i| i / 30).collect();
    let x = Array2::from_shape_fn((90, 16), |(i, j)| {
        let (row, column) = (j / 4, j % 4);
        let quarter = 2 * (row / 2) + column / 2;
        let bright = if quarter == groups[i] { 6.0 } else { 0.0 };
        bright + rng.normal() as f32
    });
    (x, groups)
}

fn atom_kinds() -> Vec<AtomKind> {
    vec![
        AtomKind::AxisAligned,
        AtomKind::SparseOblique {
            feature_combinations: 1.5,
        },
        AtomKind::Patches(Patches::new(vec![4, 4], vec![1, 1], vec![2, 2])),
    ]
}

fn params(atoms: AtomKind, criterion: ClusteringCriterion) -> UnsupervisedParams {
    UnsupervisedParams {
        n_estimators: 40,
        atoms,
        criterion,
        min_samples_split: 4,
        random_state: 11,
        ..UnsupervisedParams::default()
    }
}

#[test]
fn samples_of_a_group_are_more_alike_than_samples_of_different_groups() {
    let (x, groups) = three_groups();
    for atoms in atom_kinds() {
        for criterion in [ClusteringCriterion::TwoMeans, ClusteringCriterion::FastBic] {
            let forest =
                UnsupervisedForest::fit(&params(atoms.clone(), criterion), x.view()).unwrap();
            let similarity = forest.similarity(x.view(), &ScoreOptions::new()).unwrap();
            let (mut within, mut between) = ((0.0, 0), (0.0, 0));
            for i in 0..90 {
                assert_eq!(similarity[[i, i]], 1.0);
                for j in 0..90 {
                    assert_eq!(similarity[[i, j]], similarity[[j, i]]);
                    let side = if groups[i] == groups[j] {
                        &mut within
                    } else {
                        &mut between
                    };
                    side.0 += similarity[[i, j]];
                    side.1 += 1;
                }
            }
            let (within, between) = (within.0 / within.1 as f64, between.0 / between.1 as f64);
            assert!(
                within > 5.0 * between,
                "{atoms:?} {criterion:?}: within {within}, between {between}"
            );
        }
    }
}

#[test]
fn the_forest_is_the_same_for_any_number_of_threads() {
    let (x, _) = three_groups();
    for atoms in atom_kinds() {
        for criterion in [ClusteringCriterion::TwoMeans, ClusteringCriterion::FastBic] {
            let grow = |n_threads| {
                let params = UnsupervisedParams {
                    n_threads,
                    bootstrap: true,
                    max_samples: Some(MaxSamples::Fraction(0.8)),
                    ..params(atoms.clone(), criterion)
                };
                UnsupervisedForest::fit(&params, x.view()).unwrap()
            };
            let one = grow(1);
            assert_eq!(one.forest().to_bytes(), grow(2).forest().to_bytes());
            assert_eq!(one.forest().to_bytes(), grow(0).forest().to_bytes());
            let leaves = one.apply(x.view(), &ScoreOptions::new()).unwrap();
            assert_eq!(
                similarity_from_leaves(leaves.view(), 1).unwrap(),
                similarity_from_leaves(leaves.view(), 2).unwrap()
            );
        }
    }
}

#[test]
fn the_similarity_is_the_share_of_trees_in_which_two_samples_share_a_leaf() {
    let (x, _) = three_groups();
    let params = params(AtomKind::AxisAligned, ClusteringCriterion::TwoMeans);
    let forest = UnsupervisedForest::fit(&params, x.view()).unwrap();
    let leaves = forest.apply(x.view(), &ScoreOptions::new()).unwrap();
    let similarity = forest
        .similarity(x.view(), &ScoreOptions::new().with_threads(2))
        .unwrap();
    for i in 0..90 {
        for j in 0..90 {
            let shared = (0..40)
                .filter(|&t| leaves[[i, t]] == leaves[[j, t]])
                .count();
            assert_eq!(similarity[[i, j]], shared as f64 / 40.0);
        }
    }
}

#[test]
fn missing_values_and_bad_settings_are_refused_with_their_name() {
    let (mut x, _) = three_groups();
    let defaults = params(AtomKind::AxisAligned, ClusteringCriterion::TwoMeans);
    let bad = UnsupervisedParams {
        min_samples_split: 1,
        ..defaults.clone()
    };
    let error = UnsupervisedForest::fit(&bad, x.view()).unwrap_err();
    assert!(error.to_string().contains("min_samples_split"), "{error}");
    x[[5, 3]] = f32::NAN;
    let error = UnsupervisedForest::fit(&defaults, x.view()).unwrap_err();
    assert!(error.to_string().contains("missing values"), "{error}");
    let empty = Array2::<f32>::zeros((0, 4));
    assert!(UnsupervisedForest::fit(&defaults, empty.view()).is_err());
}

#[test]
fn fast_bic_takes_whole_x_as_rounded_and_float_x_as_measured() {
    // One feature: 70 rows spread over 10..=19 and a block of 30 rows at 20 above them.
    let mut rng = Rng::new(3, 0);
    let whole = Array2::from_shape_fn((100, 1), |(i, _)| match i {
        0..30 => 20.0,
        _ => 10.0 + rng.below(10) as f32,
    });
    let params = UnsupervisedParams {
        n_estimators: 1,
        criterion: ClusteringCriterion::FastBic,
        max_depth: Some(1),
        ..UnsupervisedParams::default()
    };
    // The rows that share the root's side with the block.
    let with_the_block = |x: &Array2<f32>| {
        let forest = UnsupervisedForest::fit(&params, x.view()).unwrap();
        let leaves = forest.apply(x.view(), &ScoreOptions::new()).unwrap();
        (0..100)
            .filter(|&i| leaves[[i, 0]] == leaves[[0, 0]])
            .count()
    };
    // Whole values are known to a rounding error: the block has that spread, and
    // keeps neighbours.
    assert!(with_the_block(&whole) > 30);
    // The same values a quarter up are not whole: taken as exact, the block has no
    // spread, and is cut off alone.
    assert_eq!(with_the_block(&(&whole + 0.25)), 30);
}

#[test]
fn the_leaves_given_with_the_fit_are_those_the_rows_reach() {
    let (x, _) = three_groups();
    // Whole values in 0..=255 (grown as bytes), other whole values, and fractions.
    let bytes = x.mapv(|v| (v * 20.0 + 100.0).round().clamp(0.0, 255.0));
    let whole = x.mapv(|v| (v * 300.0).round());
    let control = FitControl::new();
    // Gabor filters' fractional weights: projections rounded, so walked again.
    let gabors = AtomKind::Gabors(Patches::new(vec![4, 4], vec![2, 2], vec![3, 3]));
    for x in [bytes, whole, x] {
        for atoms in atom_kinds().into_iter().chain([gabors.clone()]) {
            for bootstrap in [false, true] {
                let params = UnsupervisedParams {
                    bootstrap,
                    ..params(atoms.clone(), ClusteringCriterion::TwoMeans)
                };
                let (forest, leaves) =
                    UnsupervisedForest::fit_with_leaves(&params, x.view(), &control).unwrap();
                assert_eq!(forest, UnsupervisedForest::fit(&params, x.view()).unwrap());
                let reached = forest.apply(x.view(), &ScoreOptions::new()).unwrap();
                assert_eq!(leaves, reached, "{atoms:?}, bootstrap {bootstrap}");
            }
        }
    }
}

#[test]
fn trees_grown_apart_and_merged_are_the_forest_grown_at_once() {
    let (x, _) = three_groups();
    let control = FitControl::new();
    let params = UnsupervisedParams {
        bootstrap: true,
        ..params(AtomKind::AxisAligned, ClusteringCriterion::FastBic)
    };
    let grow =
        |trees| UnsupervisedForest::fit_trees_with_leaves(&params, x.view(), trees, &control);
    let (first, first_leaves) = grow(0..15).unwrap();
    let (rest, rest_leaves) = grow(15..40).unwrap();
    let merged = Forest::merge([first.into_forest(), rest.into_forest()]).unwrap();
    let at_once = UnsupervisedForest::fit(&params, x.view()).unwrap();
    assert_eq!(&merged, at_once.forest());
    let (_, all_leaves) = grow(0..40).unwrap();
    let joined = ndarray::concatenate![ndarray::Axis(1), first_leaves, rest_leaves];
    assert_eq!(joined, all_leaves);
    for trees in [0..0, 30..41] {
        let error = grow(trees).unwrap_err().to_string();
        assert!(error.contains("no range of trees"), "{error}");
    }
}
