//! Dictionaries through the public API: graph atoms against the families they
//! generalise (no edges: a random forest's atoms; a cycle or a torus: wrapping
//! patches), tested statistically, and mixtures.

use morf_rs::atoms::{AtomKind, AtomSet, GraphAtoms, Patches, SamplingGraph, SignedPatches};
use morf_rs::rng::Rng;

/// `n_draws` atoms of `kind` over `n_features`, as (indices, weights).
fn draw(
    kind: &AtomKind,
    n_features: usize,
    n_draws: usize,
    seed: u64,
) -> Vec<(Vec<u32>, Vec<f32>)> {
    kind.validate(n_features).unwrap();
    let mut sampler = kind.sampler(n_features);
    let mut rng = Rng::new(seed, 0);
    let mut set = AtomSet::default();
    let mut atoms = Vec::new();
    // Nodes of 50 atoms, as trees draw them.
    for _ in 0..n_draws / 50 {
        sampler.sample_node(&mut rng, 50, &mut set);
        atoms.extend(
            (0..set.len()).map(|a| (set.get(a).indices.to_vec(), set.get(a).weights.to_vec())),
        );
    }
    atoms
}

/// Pearson's statistic of `counts` against equal expected counts.
fn chi_square_uniform(counts: &[f64]) -> f64 {
    let expected = counts.iter().sum::<f64>() / counts.len() as f64;
    counts
        .iter()
        .map(|&c| (c - expected).powi(2) / expected)
        .sum()
}

/// Pearson's statistic of two samples' counts over the same cells being alike.
fn chi_square_homogeneity(a: &[f64], b: &[f64]) -> f64 {
    let (total_a, total_b): (f64, f64) = (a.iter().sum(), b.iter().sum());
    let total = total_a + total_b;
    a.iter()
        .zip(b)
        .filter(|(x, y)| **x + **y > 0.0)
        .map(|(&x, &y)| {
            let (expected_a, expected_b) = ((x + y) * total_a / total, (x + y) * total_b / total);
            (x - expected_a).powi(2) / expected_a + (y - expected_b).powi(2) / expected_b
        })
        .sum()
}

fn graph_atoms(graph: SamplingGraph, min_size: usize, max_size: usize, signed: bool) -> AtomKind {
    AtomKind::Graph(GraphAtoms {
        graph,
        min_size,
        max_size,
        signed,
    })
}

fn cycle(n: u32) -> SamplingGraph {
    let edges: Vec<(u32, u32)> = (0..n).map(|v| (v, (v + 1) % n)).collect();
    SamplingGraph::from_edges(n as usize, &edges).unwrap()
}

/// A `side` x `side` torus whose cells touch their eight neighbours.
fn king_torus(side: u32) -> SamplingGraph {
    let mut edges = Vec::new();
    for r in 0..side {
        for c in 0..side {
            for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, side - 1)] {
                edges.push((r * side + c, ((r + dr) % side) * side + (c + dc) % side));
            }
        }
    }
    SamplingGraph::from_edges((side * side) as usize, &edges).unwrap()
}

/// The first cell and length of a run on a cycle of `n` cells, given its sorted cells.
fn cyclic_run(indices: &[u32], n: u32) -> (u32, usize) {
    let gap = indices.windows(2).position(|w| w[1] != w[0] + 1);
    let start = match gap {
        None => indices[0],
        Some(g) => {
            assert_eq!(
                (indices[0], *indices.last().unwrap()),
                (0, n - 1),
                "one run: {indices:?}"
            );
            assert!(
                indices[g + 1..].windows(2).all(|w| w[1] == w[0] + 1),
                "one run: {indices:?}"
            );
            indices[g + 1]
        }
    };
    (start, indices.len())
}

#[test]
fn a_graph_without_edges_gives_a_random_forests_atoms() {
    let n = 40;
    let empty = SamplingGraph::from_edges(n, &[]).unwrap();
    for signed in [false, true] {
        let atoms = draw(&graph_atoms(empty.clone(), 1, 6, signed), n, 40_000, 1);
        let mut counts = vec![0.0; n];
        for (indices, weights) in &atoms {
            assert_eq!((indices.len(), weights.as_slice()), (1, &[1.0f32][..]));
            counts[indices[0] as usize] += 1.0;
        }
        // Uniform over the features: 39 degrees of freedom, 0.999 quantile 72.1.
        let chi = chi_square_uniform(&counts);
        assert!(chi < 72.1, "signed {signed}: chi2 {chi}");
    }
}

#[test]
fn a_cycle_gives_the_runs_of_wrapping_one_dimensional_patches() {
    let (n, low, high) = (30u32, 3, 8);
    let from_graph = draw(
        &graph_atoms(cycle(n), low, high, false),
        n as usize,
        36_000,
        2,
    );
    let patches = Patches::new(vec![n as usize], vec![low], vec![high]).with_wrap(vec![true]);
    let from_patches = draw(&AtomKind::Patches(patches), n as usize, 36_000, 3);
    // (start, length) of every run, one cell each: 30 x 6 = 180 cells.
    let histogram = |atoms: &[(Vec<u32>, Vec<f32>)]| {
        let mut counts = vec![0.0; n as usize * (high - low + 1)];
        for (indices, weights) in atoms {
            assert!(weights.iter().all(|&w| w == 1.0));
            let (start, length) = cyclic_run(indices, n);
            assert!((low..=high).contains(&length));
            counts[start as usize * (high - low + 1) + length - low] += 1.0;
        }
        counts
    };
    let (graph_counts, patch_counts) = (histogram(&from_graph), histogram(&from_patches));
    // 179 degrees of freedom: 243.2 is the 0.999 quantile.
    for counts in [&graph_counts, &patch_counts] {
        let chi = chi_square_uniform(counts);
        assert!(chi < 243.2, "uniform start and length: chi2 {chi}");
    }
    let chi = chi_square_homogeneity(&graph_counts, &patch_counts);
    assert!(chi < 243.2, "graph runs against patch runs: chi2 {chi}");
}

#[test]
fn a_king_move_torus_gives_the_squares_of_wrapping_patches() {
    let side = 12u32;
    let n = (side * side) as usize;
    for extent in [3u32, 5] {
        let size = (extent * extent) as usize;
        let from_graph = draw(
            &graph_atoms(king_torus(side), size, size, false),
            n,
            28_800,
            4,
        );
        let patches = Patches::new(
            vec![side as usize; 2],
            vec![extent as usize; 2],
            vec![extent as usize; 2],
        )
        .with_wrap(vec![true, true]);
        let from_patches = draw(&AtomKind::Patches(patches), n, 28_800, 5);
        // Every atom a wrapped square; count the squares by their first cell.
        let histogram = |atoms: &[(Vec<u32>, Vec<f32>)]| {
            let mut counts = vec![0.0; n];
            for (indices, _) in atoms {
                let rows: Vec<u32> = indices.iter().map(|i| i / side).collect();
                let columns: Vec<u32> = indices.iter().map(|i| i % side).collect();
                let (mut r, mut c) = (rows.clone(), columns.clone());
                r.sort();
                r.dedup();
                c.sort();
                c.dedup();
                let (top, length_r) = cyclic_run(&r, side);
                let (left, length_c) = cyclic_run(&c, side);
                assert_eq!(
                    (length_r, length_c, indices.len()),
                    (extent as usize, extent as usize, size)
                );
                counts[(top * side + left) as usize] += 1.0;
            }
            counts
        };
        let (graph_counts, patch_counts) = (histogram(&from_graph), histogram(&from_patches));
        // 143 degrees of freedom: 201.0 is the 0.999 quantile.
        let chi = chi_square_uniform(&graph_counts);
        assert!(chi < 201.0, "extent {extent}: uniform position, chi2 {chi}");
        let chi = chi_square_homogeneity(&graph_counts, &patch_counts);
        assert!(
            chi < 201.0,
            "extent {extent}: graph squares against patches, chi2 {chi}"
        );
    }
}

#[test]
fn signed_graph_atoms_on_a_cycle_are_signed_patches() {
    // Half the run +1, the other half -1 beside it, on either side equally often.
    let (n, low, high) = (30u32, 2, 9);
    let atoms = draw(
        &graph_atoms(cycle(n), low, high, true),
        n as usize,
        20_000,
        6,
    );
    let mut minus_after = 0;
    for (indices, weights) in &atoms {
        let (start, length) = cyclic_run(indices, n);
        assert!((low..=high).contains(&length));
        let weight_at = |offset: usize| {
            let cell = (start + offset as u32) % n;
            weights[indices.iter().position(|&i| i == cell).unwrap()]
        };
        let along: Vec<f32> = (0..length).map(weight_at).collect();
        let plus = length.div_ceil(2);
        let mut sorted = along.clone();
        if along[0] == 1.0 {
            minus_after += 1;
        } else {
            sorted.reverse();
        }
        let expected: Vec<f32> = (0..length)
            .map(|i| if i < plus { 1.0 } else { -1.0 })
            .collect();
        assert_eq!(sorted, expected, "{along:?}");
    }
    let share = minus_after as f64 / atoms.len() as f64;
    assert!(
        (share - 0.5).abs() < 0.02,
        "-1 after the +1 run in {share} of atoms"
    );
}

#[test]
fn graphs_are_symmetrised_and_checked() {
    let graph = SamplingGraph::from_edges(4, &[(0, 1), (1, 0), (2, 1), (3, 3), (0, 1)]).unwrap();
    assert_eq!((graph.n_nodes(), graph.n_edges()), (4, 2));
    assert_eq!(
        (graph.neighbours(1), graph.neighbours(3)),
        (&[0, 2][..], &[][..])
    );
    let error = SamplingGraph::from_edges(4, &[(0, 4)])
        .unwrap_err()
        .to_string();
    assert!(error.contains("outside 0..4"), "{error}");
    assert!(SamplingGraph::from_edges(0, &[]).is_err());

    let message = |kind: AtomKind, n: usize| kind.validate(n).unwrap_err().to_string();
    assert!(message(graph_atoms(graph.clone(), 1, 2, false), 5).contains("has 4 nodes but X has 5"));
    for (low, high) in [(0, 2), (3, 2), (1, 5)] {
        assert!(message(graph_atoms(graph.clone(), low, high, false), 4).contains("min_size"));
    }
}

#[test]
fn mixtures_draw_each_family_with_its_probability() {
    // Wrapping, so that no atom loses cells past a border.
    let image = Patches::new(vec![10, 10], vec![2, 2], vec![3, 3]).with_wrap(vec![true, true]);
    let kind = AtomKind::Mixture(vec![
        (AtomKind::AxisAligned, 0.2),
        (
            AtomKind::SignedPatches(SignedPatches::new(image.clone(), 2)),
            0.5,
        ),
        (AtomKind::Patches(image.clone()), 0.3),
    ]);
    let atoms = draw(&kind, 100, 20_000, 7);
    let single = atoms.iter().filter(|(i, _)| i.len() == 1).count() as f64;
    let signed = atoms.iter().filter(|(_, w)| w.contains(&-1.0)).count() as f64;
    let total = atoms.len() as f64;
    assert!(
        (single / total - 0.2).abs() < 0.01,
        "axis share {}",
        single / total
    );
    assert!(
        (signed / total - 0.5).abs() < 0.01,
        "signed share {}",
        signed / total
    );

    let message = |families: Vec<(AtomKind, f64)>| {
        AtomKind::Mixture(families)
            .validate(100)
            .unwrap_err()
            .to_string()
    };
    assert!(message(vec![]).contains("at least one family"));
    assert!(message(vec![
        (AtomKind::AxisAligned, 0.5),
        (AtomKind::AxisAligned, 0.4)
    ])
    .contains("sum to 0.9"));
    assert!(message(vec![
        (AtomKind::AxisAligned, 1.5),
        (AtomKind::AxisAligned, -0.5)
    ])
    .contains(">= 0"));
    assert!(message(vec![(AtomKind::AxisAligned, f64::NAN)]).contains("finite"));
    let misfit = AtomKind::Patches(Patches::new(vec![10, 9], vec![1, 1], vec![2, 2]));
    assert!(message(vec![(misfit, 1.0)]).contains("image_shape"));
}

#[test]
fn a_mixture_of_one_family_draws_as_the_family_does() {
    let patches = AtomKind::Patches(Patches::new(vec![10, 10], vec![2, 2], vec![3, 5]));
    let alone = draw(&patches, 100, 1000, 8);
    for kind in [
        AtomKind::Mixture(vec![(patches.clone(), 1.0)]),
        AtomKind::Mixture(vec![(AtomKind::AxisAligned, 0.0), (patches.clone(), 1.0)]),
    ] {
        assert_eq!(draw(&kind, 100, 1000, 8), alone);
    }
}
