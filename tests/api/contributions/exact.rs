//! The atoms' values are the Shapley values of each tree's atoms, by brute force and leaf by
//! leaf.

use std::sync::atomic::AtomicBool;

use ndarray::Axis;

use morf_rs::{Explain, Forest, ForestParams, Leaves, MaxFeatures, ScoreOptions, Tree};

use super::*;

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
    let Some((right, threshold, missing_left)) = tree.nodes()[id].split_sides() else {
        return leaf_value(id);
    };
    let right = right as usize;
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
        let (right, threshold, missing_left) =
            tree.nodes()[id].split_sides().expect("a split node");
        let right = right as usize;
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
