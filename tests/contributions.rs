//! Contributions (TreeSHAP over atoms): the values sum to every model's output, equal
//! Shapley values computed by brute force over each tree's atoms, and do not depend
//! on the number of threads.

use std::sync::atomic::AtomicBool;

use ndarray::{Array2, Axis};

use morf_rs::atoms::{Patches, Pooled, Reductions};
use morf_rs::{
    AtomKind, BoostParams, BoostTargets, Booster, Criterion, Explain, FitControl, Forest,
    ForestParams, HonestPrior, Leaves, MaxFeatures, Node, ScoreOptions, Targets, Tree,
};

const SIDE: usize = 4;
const N_FEATURES: usize = SIDE * SIDE;

/// Rows of 4x4 images whose class (of `n_classes`) is set by the sums of patches, with
/// NaN in a tenth of the cells when `missing`.
fn images(n: usize, n_classes: u32, missing: bool, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut x = Array2::zeros((n, N_FEATURES));
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        for j in 0..N_FEATURES {
            x[[i, j]] = (next() * 2.0 - 1.0) as f32;
        }
        let score = x[[i, 0]] + x[[i, 1]] + x[[i, 4]] - x[[i, 10]] - x[[i, 15]];
        y.push(((score + 2.5).max(0.0) as u32 * n_classes / 5).min(n_classes - 1));
        if missing {
            for j in 0..N_FEATURES {
                if next() < 0.1 {
                    x[[i, j]] = f32::NAN;
                }
            }
        }
    }
    (x, y)
}

fn patches() -> AtomKind {
    AtomKind::Patches(Patches::new(vec![SIDE, SIDE], vec![1, 1], vec![2, 3]))
}

fn kinds() -> Vec<(&'static str, AtomKind)> {
    vec![
        ("RF", AtomKind::AxisAligned),
        (
            "SPORF",
            AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
        ),
        ("MORF", patches()),
        (
            "pooled",
            AtomKind::Pooled(Pooled {
                family: Box::new(AtomKind::Patches(Patches::new(
                    vec![SIDE, SIDE],
                    vec![1, 1],
                    vec![2, 2],
                ))),
                shift_min: vec![1, 1],
                shift_max: vec![2, 2],
                reduce: Reductions::Both,
            }),
        ),
    ]
}

fn forest_params(atoms: AtomKind) -> ForestParams {
    ForestParams {
        n_estimators: 6,
        atoms,
        max_features: MaxFeatures::Count(6),
        max_depth: Some(6),
        random_state: 3,
        ..ForestParams::default()
    }
}

/// The largest difference between the sum over features (and the expected value) of
/// `contributions` and `output`.
fn sum_error(contributions: &ndarray::Array3<f64>, output: &Array2<f64>) -> f64 {
    let total = contributions.sum_axis(Axis(1));
    assert_eq!(total.dim(), output.dim());
    (&total - output).iter().fold(0.0, |m, d| m.max(d.abs()))
}

#[test]
fn forest_classifier_contributions_sum_to_the_probabilities() {
    for missing in [false, true] {
        let (x, y) = images(200, 3, missing, 1);
        for (name, atoms) in kinds() {
            for honest in [0.0, 0.4] {
                let params = ForestParams {
                    honest_fraction: honest,
                    ..forest_params(atoms.clone())
                };
                let forest = Forest::fit(&params, x.view(), &y, 3, None).unwrap();
                let contributions = forest
                    .contributions(x.view(), &ScoreOptions::new().with_threads(2))
                    .unwrap();
                assert_eq!(contributions.dim(), (200, N_FEATURES + 1, 3));
                let proba = forest
                    .predict_proba(x.view(), &ScoreOptions::new())
                    .unwrap();
                let error = sum_error(&contributions, &proba);
                assert!(
                    error < 1e-6,
                    "{name} honest {honest} missing {missing}: {error}"
                );
            }
        }
    }
}

#[test]
fn forest_regressor_contributions_sum_to_every_output() {
    let (x, labels) = images(150, 5, true, 2);
    let y = Array2::from_shape_fn((150, 2), |(i, k)| {
        labels[i] as f64 * (k as f64 + 1.0) + x[[i, 3]].max(0.0) as f64
    });
    for (name, atoms) in kinds() {
        let params = ForestParams {
            criterion: Criterion::SquaredError,
            ..forest_params(atoms)
        };
        let targets = Targets::Values(y.view());
        let control = FitControl::new();
        let forest = Forest::fit_with(&params, x.view(), targets, None, 0..6, &control).unwrap();
        let contributions = forest
            .contributions(x.view(), &ScoreOptions::new())
            .unwrap();
        let values = forest
            .predict_values(x.view(), &ScoreOptions::new())
            .unwrap();
        let error = sum_error(&contributions, &values);
        assert!(error < 1e-9, "{name}: {error}");
    }
}

#[test]
fn booster_contributions_sum_to_the_raw_scores() {
    for missing in [false, true] {
        for n_classes in [2u32, 3] {
            let (x, y) = images(200, n_classes, missing, 4);
            for (name, atoms) in kinds() {
                let params = BoostParams {
                    n_estimators: 8,
                    atoms,
                    ..BoostParams::default()
                };
                let targets = BoostTargets::Classes {
                    labels: &y,
                    n_classes: n_classes as usize,
                };
                let model = Booster::fit(&params, x.view(), targets, None).unwrap();
                let contributions = model
                    .contributions(x.view(), &ScoreOptions::new().with_threads(2))
                    .unwrap();
                let raw = model.predict_raw(x.view(), &ScoreOptions::new()).unwrap();
                let total = contributions.sum_axis(Axis(1));
                if n_classes == 2 {
                    // The one raw score in output 1; output 0 holds nothing.
                    assert!(contributions
                        .index_axis(Axis(2), 0)
                        .iter()
                        .all(|&v| v == 0.0));
                    let diff = (&total.column(1) - &raw.column(0)).mapv(f64::abs);
                    assert!(diff.iter().all(|&d| d < 1e-9), "{name} binary");
                } else {
                    let error = sum_error(&contributions, &raw);
                    assert!(error < 1e-9, "{name} {n_classes} classes: {error}");
                }
            }
        }
    }
    let (x, labels) = images(200, 4, true, 5);
    let values: Vec<f64> = labels.iter().map(|&l| l as f64).collect();
    let model = Booster::fit(
        &BoostParams {
            n_estimators: 8,
            atoms: patches(),
            ..BoostParams::default()
        },
        x.view(),
        BoostTargets::Values(&values),
        None,
    )
    .unwrap();
    let contributions = model.contributions(x.view(), &ScoreOptions::new()).unwrap();
    assert_eq!(contributions.dim(), (200, N_FEATURES + 1, 1));
    let error = sum_error(
        &contributions,
        &model.predict_raw(x.view(), &ScoreOptions::new()).unwrap(),
    );
    assert!(error < 1e-9, "regression: {error}");
}

/// The path-dependent value of coalition `players` (`in_coalition(node)` says
/// whether a node's atom plays) for `row` in `tree`: leaves reached by following the
/// row at the coalition's splits and both sides, by cover, elsewhere.
fn coalition_value(
    tree: &Tree,
    row: &[f32],
    id: usize,
    in_coalition: &dyn Fn(usize) -> bool,
) -> f64 {
    let leaf_value = |id: usize| match tree.leaves() {
        Leaves::Classes { .. } => tree.posterior(id).unwrap()[1] as f64,
        Leaves::Values { .. } => tree.leaf_values(id).unwrap()[0],
    };
    let (right, threshold, missing_left) = match tree.nodes()[id] {
        Node::Leaf { .. } => return leaf_value(id),
        Node::Split {
            right,
            threshold,
            missing_left,
            ..
        }
        | Node::SplitOnFeature {
            right,
            threshold,
            missing_left,
            ..
        }
        | Node::SplitPooled {
            right,
            threshold,
            missing_left,
            ..
        } => (right as usize, threshold, missing_left),
    };
    if in_coalition(id) {
        let value = tree.split_atom(id).unwrap().project(row);
        let left = value <= threshold || (missing_left && value.is_nan());
        let child = if left { id + 1 } else { right };
        return coalition_value(tree, row, child, in_coalition);
    }
    let weights = tree.node_weights();
    let (wl, wr) = (weights[id + 1] as f64, weights[right] as f64);
    (wl * coalition_value(tree, row, id + 1, in_coalition)
        + wr * coalition_value(tree, row, right, in_coalition))
        / (wl + wr)
}

fn same_atom(a: &morf_rs::atoms::Atom<'_>, b: &morf_rs::atoms::Atom<'_>) -> bool {
    a.indices == b.indices && a.weights == b.weights && a.window == b.window
}

/// Shapley values of every distinct atom of `tree` for `row`, by enumerating
/// coalitions: (first node of the atom, value).
fn brute_force_shapley(tree: &Tree, row: &[f32]) -> Vec<(u32, f64)> {
    let mut first_nodes: Vec<usize> = Vec::new();
    let mut player_of = vec![usize::MAX; tree.nodes().len()];
    for (id, player) in player_of.iter_mut().enumerate() {
        if let Some(atom) = tree.split_atom(id) {
            let same = first_nodes
                .iter()
                .position(|&f| same_atom(&tree.split_atom(f).unwrap(), &atom));
            *player = same.unwrap_or_else(|| {
                first_nodes.push(id);
                first_nodes.len() - 1
            });
        }
    }
    let n = first_nodes.len();
    let factorial = |k: usize| (1..=k).map(|v| v as f64).product::<f64>();
    let values: Vec<f64> = (0..1usize << n)
        .map(|set| coalition_value(tree, row, 0, &|id| set >> player_of[id] & 1 == 1))
        .collect();
    (0..n)
        .map(|i| {
            let mut phi = 0.0;
            for set in 0..1usize << n {
                if set >> i & 1 == 1 {
                    continue;
                }
                let size = set.count_ones() as usize;
                let weight = factorial(size) * factorial(n - size - 1) / factorial(n);
                phi += weight * (values[set | 1 << i] - values[set]);
            }
            (first_nodes[i] as u32, phi)
        })
        .collect()
}

#[test]
fn atom_contributions_are_the_shapley_values_of_each_trees_atoms() {
    let (x, y) = images(120, 2, true, 6);
    for (name, atoms) in kinds() {
        let params = ForestParams {
            max_depth: Some(4),
            ..forest_params(atoms)
        };
        let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
        let rows = x.slice(ndarray::s![..10, ..]);
        let never = AtomicBool::new(false);
        let atoms = forest
            .atom_contributions(rows, &ScoreOptions::new().with_cancel(&never))
            .unwrap();
        let n_trees = forest.trees().len() as f64;
        for r in 0..rows.nrows() {
            let row = rows.row(r).to_vec();
            for (t, tree) in forest.trees().iter().enumerate() {
                let expected = brute_force_shapley(tree, &row);
                for (node, phi) in expected {
                    let found = (0..atoms.sample.len())
                        .find(|&e| {
                            atoms.sample[e] as usize == r
                                && atoms.tree[e] as usize == t
                                && atoms.node[e] == node
                        })
                        .map_or(0.0, |e| atoms.values[[e, 1]] * n_trees);
                    assert!(
                        (found - phi).abs() < 1e-9,
                        "{name}: row {r} tree {t} node {node}: {found} != {phi}"
                    );
                }
            }
        }
        // The per-atom values of a row sum as the per-feature ones do.
        let per_feature = forest.contributions(rows, &ScoreOptions::new()).unwrap();
        for r in 0..rows.nrows() {
            let total: f64 = (0..atoms.sample.len())
                .filter(|&e| atoms.sample[e] as usize == r)
                .map(|e| atoms.values[[e, 1]])
                .sum::<f64>()
                + atoms.expected_value[1];
            let features = per_feature.index_axis(Axis(0), r).column(1).sum();
            assert!((total - features).abs() < 1e-9, "{name}: row {r}");
        }
    }
}

/// Shapley values of every distinct atom of `tree` for `row` leaf by leaf: a leaf of
/// value `v` whose path's distinct atoms pass on the fractions `z_j` (the row
/// unknown) and `o_j` (known) of the cover gives atom `i`
/// `v (o_i − z_i) Σ_s c_s s! (d−1−s)! / d!`, `c_s` the coefficient of `x^s` in
/// `Π_{j≠i} (z_j + o_j x)`. Returns (first node of the atom, value) per atom, and the
/// number of splits on an atom split on higher up their path.
fn shapley_leaf_by_leaf(tree: &Tree, row: &[f32]) -> (Vec<(u32, f64)>, usize) {
    let mut values: Vec<(u32, f64)> = Vec::new();
    let mut repeated = 0;
    let factorial = |k: usize| (1..=k).map(|v| v as f64).product::<f64>();
    // Depth first: (node, path of (first node of the atom, zero, one)).
    let mut stack = vec![(0usize, Vec::<(u32, f64, f64)>::new())];
    while let Some((id, path)) = stack.pop() {
        let Some(atom) = tree.split_atom(id) else {
            let v = match tree.leaves() {
                Leaves::Classes { .. } => tree.posterior(id).unwrap()[1] as f64,
                Leaves::Values { .. } => tree.leaf_values(id).unwrap()[0],
            };
            let d = path.len();
            for (i, &(node, zero, one)) in path.iter().enumerate() {
                let mut coefficients = vec![1.0];
                for (j, &(_, z, o)) in path.iter().enumerate() {
                    if j != i {
                        let mut next = vec![0.0; coefficients.len() + 1];
                        for (s, &c) in coefficients.iter().enumerate() {
                            next[s] += c * z;
                            next[s + 1] += c * o;
                        }
                        coefficients = next;
                    }
                }
                let weighted: f64 = (coefficients.iter().enumerate())
                    .map(|(s, &c)| c * factorial(s) * factorial(d - 1 - s) / factorial(d))
                    .sum();
                let phi = v * (one - zero) * weighted;
                match values.iter_mut().find(|(n, _)| *n == node) {
                    Some(entry) => entry.1 += phi,
                    None => values.push((node, phi)),
                }
            }
            continue;
        };
        let (right, threshold, missing_left) = match tree.nodes()[id] {
            Node::Split {
                right,
                threshold,
                missing_left,
                ..
            }
            | Node::SplitOnFeature {
                right,
                threshold,
                missing_left,
                ..
            }
            | Node::SplitPooled {
                right,
                threshold,
                missing_left,
                ..
            } => (right as usize, threshold, missing_left),
            Node::Leaf { .. } => unreachable!(),
        };
        let value = atom.project(row);
        let left = value <= threshold || (missing_left && value.is_nan());
        let weights = tree.node_weights();
        let (wl, wr) = (weights[id + 1] as f64, weights[right] as f64);
        let first = (0..=id)
            .find(|&f| tree.split_atom(f).is_some_and(|a| same_atom(&a, &atom)))
            .unwrap() as u32;
        for (child, fraction, taken) in [
            (id + 1, wl / (wl + wr), left),
            (right, wr / (wl + wr), !left),
        ] {
            let mut path = path.clone();
            let one = if taken { 1.0 } else { 0.0 };
            match path.iter_mut().find(|(n, _, _)| *n == first) {
                Some(entry) => {
                    repeated += 1;
                    entry.1 *= fraction;
                    entry.2 *= one;
                }
                None => path.push((first, fraction, one)),
            }
            stack.push((child, path));
        }
    }
    (values, repeated)
}

#[test]
fn atom_contributions_of_deep_trees_are_their_leaves_shapley_values() {
    let (x, y) = images(400, 2, true, 9);
    let params = ForestParams {
        n_estimators: 3,
        atoms: patches(),
        max_features: MaxFeatures::Count(4),
        max_depth: None,
        random_state: 5,
        ..ForestParams::default()
    };
    let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
    let deepest = forest.trees().iter().map(|t| t.stats().max_depth).max();
    assert!(
        deepest.unwrap() >= 12,
        "the test needs deep trees: {deepest:?}"
    );
    let rows = x.slice(ndarray::s![..8, ..]);
    let atoms = forest
        .atom_contributions(rows, &ScoreOptions::new())
        .unwrap();
    let n_trees = forest.trees().len() as f64;
    let mut repeated = 0;
    for r in 0..rows.nrows() {
        let row = rows.row(r).to_vec();
        for (t, tree) in forest.trees().iter().enumerate() {
            let (expected, repeats) = shapley_leaf_by_leaf(tree, &row);
            repeated += repeats;
            for (node, phi) in expected {
                let found = (0..atoms.sample.len())
                    .find(|&e| {
                        atoms.sample[e] as usize == r
                            && atoms.tree[e] as usize == t
                            && atoms.node[e] == node
                    })
                    .map_or(0.0, |e| atoms.values[[e, 1]] * n_trees);
                assert!(
                    (found - phi).abs() < 1e-9,
                    "row {r} tree {t} node {node}: {found} != {phi}"
                );
            }
        }
    }
    assert!(
        repeated > 0,
        "the test needs atoms split on twice on a path"
    );
}

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
