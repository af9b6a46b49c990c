//! Best-first growth (`max_leaf_nodes`) and cost-complexity pruning (`ccp_alpha`).

use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, Criterion, FitControl, Forest, ForestParams, MaxFeatures, Patches, Targets, Tree,
};
use ndarray::{Array2, ArrayView2};

/// 16 uniform features (a 4 x 4 image); a noisy target in x0, x5 and x10, as values
/// and as three classes.
fn noisy(n: usize, seed: u64) -> (Array2<f32>, Array2<f64>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let x = Array2::from_shape_fn((n, 16), |_| rng.unit() as f32);
    let y = Array2::from_shape_fn((n, 1), |(i, _)| {
        (3.0 * x[[i, 0]] + (6.0 * x[[i, 5]]).sin() + x[[i, 10]]) as f64 + 0.5 * rng.unit()
    });
    let classes = (0..n).map(|i| (y[[i, 0]] * 1.2) as u32 % 3).collect();
    (x, y, classes)
}

fn fit(params: &ForestParams, x: ArrayView2<'_, f32>, targets: Targets<'_>) -> Forest {
    let trees = 0..params.n_estimators;
    Forest::fit_with(params, x, targets, None, trees, &FitControl::new()).unwrap()
}

/// Thresholds of a tree's splits, in layout order.
fn thresholds(tree: &Tree) -> Vec<f32> {
    tree.nodes()
        .iter()
        .filter_map(|node| node.split_sides().map(|(_, threshold, _)| threshold))
        .collect()
}

fn atom_kinds() -> [AtomKind; 3] {
    [
        AtomKind::AxisAligned,
        AtomKind::SparseOblique {
            feature_combinations: 1.5,
        },
        AtomKind::Patches(Patches::new(vec![4, 4], vec![1, 1], vec![2, 2])),
    ]
}

#[test]
fn best_first_trees_have_max_leaf_nodes_leaves() {
    let (x, y, classes) = noisy(300, 1);
    for atoms in atom_kinds() {
        for honest_fraction in [0.0, 0.3] {
            for max_leaf_nodes in [2, 5, 17] {
                let params = ForestParams {
                    n_estimators: 4,
                    atoms: atoms.clone(),
                    max_leaf_nodes: Some(max_leaf_nodes),
                    honest_fraction,
                    ..ForestParams::default()
                };
                let regression = ForestParams {
                    criterion: Criterion::SquaredError,
                    ..params.clone()
                };
                let forests = [
                    fit(
                        &params,
                        x.view(),
                        Targets::Classes {
                            labels: &classes,
                            n_classes: 3,
                        },
                    ),
                    fit(&regression, x.view(), Targets::Values(y.view())),
                ];
                for forest in forests {
                    for stats in forest.tree_stats() {
                        assert_eq!(stats.n_leaves, max_leaf_nodes, "{atoms:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn best_first_growth_keeps_the_other_stopping_rules() {
    let (x, y, _) = noisy(600, 2);
    for (max_depth, min_samples_leaf, most_leaves) in [(Some(2), 1, 4), (None, 100, 3)] {
        let params = ForestParams {
            n_estimators: 4,
            max_features: MaxFeatures::All,
            criterion: Criterion::SquaredError,
            max_leaf_nodes: Some(40),
            max_depth,
            min_samples_leaf,
            ..ForestParams::default()
        };
        for stats in fit(&params, x.view(), Targets::Values(y.view())).tree_stats() {
            assert!(
                stats.n_leaves >= 2 && stats.n_leaves <= most_leaves,
                "{stats:?}"
            );
            assert!(stats.max_depth <= max_depth.unwrap_or(usize::MAX));
        }
    }
}

#[test]
fn best_first_without_a_binding_limit_grows_the_depth_first_tree() {
    // Every feature at every node, no bootstrap and leaves of 10 samples or more: no
    // two splits of a node tie, so the tree is unique.
    let (x, y, _) = noisy(400, 3);
    let depth_first = ForestParams {
        n_estimators: 2,
        criterion: Criterion::SquaredError,
        max_features: MaxFeatures::All,
        bootstrap: false,
        min_samples_leaf: 10,
        ..ForestParams::default()
    };
    let best_first = ForestParams {
        max_leaf_nodes: Some(100_000),
        ..depth_first.clone()
    };
    let a = fit(&depth_first, x.view(), Targets::Values(y.view()));
    let b = fit(&best_first, x.view(), Targets::Values(y.view()));
    assert!(a.trees()[0].stats().n_leaves > 20);
    for (a, b) in a.trees().iter().zip(b.trees()) {
        for (i, (p, q)) in a.nodes().iter().zip(b.nodes()).enumerate() {
            assert_eq!(p, q, "node {i}");
        }
        assert_eq!(a.node_samples(), b.node_samples());
        assert_eq!(a.node_weights(), b.node_weights());
        assert_eq!(a.leaves(), b.leaves());
    }
    assert_eq!(a.trees(), b.trees());
}

/// One feature 0..100 and a target with steps of 10 at 50, 3 at 25 and 0.1 at 75.
fn steps() -> (Array2<f32>, Array2<f64>) {
    let x = Array2::from_shape_fn((100, 1), |(i, _)| i as f32);
    let y = Array2::from_shape_fn((100, 1), |(i, _)| {
        10.0 * f64::from(u8::from(i >= 50))
            + 3.0 * f64::from(u8::from(i >= 25))
            + 0.1 * f64::from(u8::from(i >= 75))
    });
    (x, y)
}

fn one_tree(x: ArrayView2<'_, f32>, y: ArrayView2<'_, f64>, params: ForestParams) -> Tree {
    let params = ForestParams {
        n_estimators: 1,
        criterion: Criterion::SquaredError,
        max_features: MaxFeatures::All,
        bootstrap: false,
        ..params
    };
    fit(&params, x, Targets::Values(y)).trees()[0].clone()
}

#[test]
fn best_first_splits_the_leaf_that_gains_most() {
    let (x, y) = steps();
    let grown = |max_leaf_nodes| {
        let tree = one_tree(
            x.view(),
            y.view(),
            ForestParams {
                max_leaf_nodes: Some(max_leaf_nodes),
                ..ForestParams::default()
            },
        );
        let mut found = thresholds(&tree);
        found.sort_by(f32::total_cmp);
        found
    };
    assert_eq!(grown(2), [49.5]);
    // The step of 3 (left child) before that of 0.1 (right child), though the
    // right child is grown later in depth-first order.
    assert_eq!(grown(3), [24.5, 49.5]);
    assert_eq!(grown(4), [24.5, 49.5, 74.5]);
    assert_eq!(grown(5), [24.5, 49.5, 74.5]);
}

#[test]
fn ccp_alpha_prunes_the_splits_that_do_not_pay_for_their_leaf() {
    let (x, y) = steps();
    let pruned = |ccp_alpha| {
        let tree = one_tree(
            x.view(),
            y.view(),
            ForestParams {
                ccp_alpha,
                ..ForestParams::default()
            },
        );
        let mut found = thresholds(&tree);
        found.sort_by(f32::total_cmp);
        found
    };
    // The split at 74.5 decreases the squared error of its 50 samples by
    // 50 * 0.05^2 = 0.125, or 0.00125 of the 100 samples' weight.
    assert_eq!(pruned(0.0), [24.5, 49.5, 74.5]);
    assert_eq!(pruned(0.0012), [24.5, 49.5, 74.5]);
    assert_eq!(pruned(0.0013), [24.5, 49.5]);
    // The split at 24.5: 50 samples, 2.25 each side apart: 50 * 1.5^2 / 100 = 1.125.
    assert_eq!(pruned(1.1), [24.5, 49.5]);
    assert_eq!(pruned(1.2), [49.5]);
    assert!(pruned(1e9).is_empty());
}

#[test]
fn pruned_trees_are_subtrees_of_the_grown_ones() {
    let (x, _, classes) = noisy(300, 4);
    for atoms in atom_kinds() {
        for honest_fraction in [0.0, 0.3] {
            for max_leaf_nodes in [None, Some(30)] {
                let params = |ccp_alpha| ForestParams {
                    n_estimators: 3,
                    atoms: atoms.clone(),
                    honest_fraction,
                    max_leaf_nodes,
                    ccp_alpha,
                    ..ForestParams::default()
                };
                let labels = || Targets::Classes {
                    labels: &classes,
                    n_classes: 3,
                };
                let grown = fit(&params(0.0), x.view(), labels());
                let mut previous_leaves: Vec<usize> =
                    grown.tree_stats().iter().map(|s| s.n_leaves).collect();
                for ccp_alpha in [0.002, 0.01, 0.05] {
                    let pruned = fit(&params(ccp_alpha), x.view(), labels());
                    for (t, (small, large)) in pruned.trees().iter().zip(grown.trees()).enumerate()
                    {
                        let leaves = small.stats().n_leaves;
                        assert!(leaves <= previous_leaves[t], "{atoms:?} {ccp_alpha}");
                        previous_leaves[t] = leaves;
                        // Every split kept is one of the grown tree's.
                        let small_thresholds = thresholds(small);
                        let large_thresholds = thresholds(large);
                        assert!(small_thresholds
                            .iter()
                            .all(|t| large_thresholds.contains(t)));
                    }
                }
                assert!(previous_leaves.iter().any(|&leaves| leaves < 10));
            }
        }
    }
}

#[test]
fn the_same_trees_for_any_number_of_threads() {
    let (x, y, classes) = noisy(300, 5);
    for atoms in atom_kinds() {
        for (max_leaf_nodes, ccp_alpha) in [(Some(12), 0.0), (None, 0.004), (Some(20), 0.004)] {
            let params = |n_threads| ForestParams {
                n_estimators: 6,
                atoms: atoms.clone(),
                max_leaf_nodes,
                ccp_alpha,
                honest_fraction: 0.2,
                n_threads,
                ..ForestParams::default()
            };
            let labels = Targets::Classes {
                labels: &classes,
                n_classes: 3,
            };
            let one = fit(&params(1), x.view(), labels).to_bytes();
            let labels = Targets::Classes {
                labels: &classes,
                n_classes: 3,
            };
            assert_eq!(one, fit(&params(2), x.view(), labels).to_bytes());
            let regression = |n_threads| ForestParams {
                criterion: Criterion::SquaredError,
                ..params(n_threads)
            };
            assert_eq!(
                fit(&regression(1), x.view(), Targets::Values(y.view())).to_bytes(),
                fit(&regression(2), x.view(), Targets::Values(y.view())).to_bytes()
            );
        }
    }
}
