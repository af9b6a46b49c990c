//! Behaviour of the whole forest through the public API: the same forest however it
//! is grown, scored or stored, and what it learns, each in a module of its own over
//! the data made here.

mod learning;
mod reproducible;

use morf_rs::atoms::{GraphAtoms, SamplingGraph, SignedPatches};
use morf_rs::rng::Rng;
use morf_rs::{AtomKind, Forest, ForestParams, MaxFeatures, Patches, ScoreOptions};
use ndarray::Array2;

/// The circle experiment on 60 cells: class 0 holds two runs of 5 ones, class 1 runs
/// of 4 and 6, apart from each other and anywhere on the cycle.
pub(crate) fn runs_on_a_cycle(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    const CELLS: usize = 60;
    let mut rng = Rng::new(seed, 0);
    let mut x = Array2::zeros((n, CELLS));
    let y: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    for i in 0..n {
        let lengths = if y[i] == 0 { [5, 5] } else { [4, 6] };
        let first = rng.below(CELLS);
        let second = first + lengths[0] + 1 + rng.below(CELLS - lengths[0] - lengths[1] - 1);
        for (start, length) in [(first, lengths[0]), (second, lengths[1])] {
            for cell in start..start + length {
                x[[i, cell % CELLS]] = 1.0;
            }
        }
    }
    (x, y)
}

pub(crate) fn error_rate(forest: &Forest, x: &Array2<f32>, y: &[u32]) -> f64 {
    let predicted = forest.predict(x.view(), &ScoreOptions::new()).unwrap();
    predicted.iter().zip(y).filter(|(p, t)| p != t).count() as f64 / y.len() as f64
}

pub(crate) fn all_kinds() -> Vec<ForestParams> {
    let base = ForestParams {
        n_estimators: 12,
        random_state: 42,
        ..ForestParams::default()
    };
    vec![
        base.clone(),
        ForestParams {
            atoms: AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            ..base.clone()
        },
        ForestParams {
            atoms: AtomKind::Patches(
                Patches::new(vec![3, 4], vec![1, 2], vec![2, 4]).with_wrap(vec![false, true]),
            ),
            max_features: MaxFeatures::Count(20),
            honest_fraction: 0.3,
            ..base.clone()
        },
        ForestParams {
            atoms: every_family(vec![3, 4]),
            max_features: MaxFeatures::Count(20),
            ..base
        },
    ]
}

/// A dictionary holding every family, over features seen as an image of `shape` whose
/// last axis wraps, or as a ring.
pub(crate) fn every_family(shape: Vec<usize>) -> AtomKind {
    let n_axes = shape.len();
    let n_features: usize = shape.iter().product();
    let mut wrap = vec![false; n_axes];
    wrap[n_axes - 1] = true;
    let image = Patches::new(shape, vec![1; n_axes], vec![2; n_axes]).with_wrap(wrap);
    let ring: Vec<(u32, u32)> = (0..n_features as u32)
        .map(|v| (v, (v + 1) % n_features as u32))
        .collect();
    let graph = |signed| GraphAtoms {
        graph: SamplingGraph::from_edges(n_features, &ring).unwrap(),
        min_size: 1,
        max_size: 4,
        signed,
    };
    AtomKind::Mixture(vec![
        (AtomKind::Patches(image.clone()), 0.2),
        (
            AtomKind::SignedPatches(SignedPatches::new(image.clone(), 2)),
            0.15,
        ),
        (
            AtomKind::SignedPatches(SignedPatches::new(image.clone(), 3)),
            0.1,
        ),
        (AtomKind::Bumps(image.clone()), 0.1),
        (AtomKind::Gabors(image), 0.1),
        (AtomKind::AxisAligned, 0.1),
        (
            AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            0.05,
        ),
        (AtomKind::Graph(graph(false)), 0.1),
        (AtomKind::Graph(graph(true)), 0.1),
    ])
}
