//! Criterion benchmarks of the kernels: projecting a node on its atoms (directly and
//! through running sums), split search at several node sizes (sorted, counted, and with
//! missing values), sorting a node's keys, and batch scoring. `cargo bench --bench
//! kernels --features bench-internals`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use morf_rs::atoms::{AtomKind, AtomSet, Patches};
use morf_rs::internals::{
    best_split, position_key, sort_by_value, Gini, LocalSamples, NodeProjector, NodeTargets,
    Poisson, Rows, RunningSums, SplitCriterion, SplitRule, SplitScratch, SquaredError,
};
use morf_rs::rng::Rng;
use morf_rs::{Forest, ForestParams, MaxFeatures, ScoreOptions};
use ndarray::Array2;

const SIDE: usize = 28;

/// Random 28x28 "images" with a bright square whose position depends on the class.
fn images(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
    let mut x = Array2::from_shape_fn((n, SIDE * SIDE), |_| rng.unit() as f32);
    for (i, &class) in y.iter().enumerate() {
        let corner = 4 + 6 * class as usize + rng.below(4);
        for r in corner..corner + 4 {
            for c in corner..corner + 4 {
                x[[i, r * SIDE + c]] += 1.0;
            }
        }
    }
    (x, y)
}

fn patch_atoms() -> AtomKind {
    AtomKind::Patches(Patches::new(vec![SIDE, SIDE], vec![2, 2], vec![2, 5]))
}

fn node_atoms(n_atoms: usize) -> AtomSet {
    let mut atoms = AtomSet::default();
    patch_atoms()
        .sampler(SIDE * SIDE)
        .sample_node(&mut Rng::new(1, 1), n_atoms, &mut atoms);
    atoms
}

fn projection(c: &mut Criterion) {
    let (x, _) = images(10_000, 2);
    let rows = Rows::from_view(x.view()).unwrap();
    let row_of: Vec<u32> = (0..rows.n_samples as u32).collect();
    // Patches of an image seldom overlap (each atom reads its own cells); 1-D patches
    // over half of a 100-cell cycle overlap heavily, which takes the column path.
    let cycle = Array2::from_shape_fn((10_000, 100), |(i, j)| ((i * 7 + j * 3) % 11) as f32);
    let cycle_rows = Rows::from_view(cycle.view()).unwrap();
    let mut cycle_atoms = AtomSet::default();
    AtomKind::Patches(Patches::new(vec![100], vec![3], vec![12]).with_wrap(vec![true]))
        .sampler(100)
        .sample_node(&mut Rng::new(1, 1), 50, &mut cycle_atoms);
    // The same cycle patches read through the rows' running sums, two cells per run.
    let RunningSums::Floats(cycle_sums) = cycle_rows.running_sums() else {
        unreachable!("running sums of up to 1000 need floats")
    };
    let mut cycle_sum_atoms = AtomSet::default();
    cycle_atoms.to_running_sums(&mut cycle_sum_atoms);
    let mut group = c.benchmark_group("node_projection");
    for (name, rows, atoms) in [
        ("28 image patches x 10000 rows", &rows, node_atoms(28)),
        ("50 cycle patches x 10000 rows", &cycle_rows, cycle_atoms),
        (
            "50 cycle patches via running sums x 10000 rows",
            &cycle_sums,
            cycle_sum_atoms,
        ),
    ] {
        let mut projector = NodeProjector::default();
        let mut out = Vec::new();
        group.throughput(Throughput::Elements((rows.n_samples * atoms.len()) as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                projector.project(rows, &row_of, &row_of, &atoms, &mut out);
                black_box(out.len())
            })
        });
    }
    group.finish();
}

fn split_search(c: &mut Criterion) {
    let (x, y) = images(20_000, 3);
    // Binary images take whole values: their projections are counted, not sorted.
    let binary = x.mapv(|v| (v > 1.0) as u8 as f32);
    // A fifth of the pixels missing: most patch projections are missing too.
    let mut rng = Rng::new(4, 0);
    let missing = x.mapv(|v| if rng.unit() < 0.2 { f32::NAN } else { v });
    let atoms = node_atoms(28);
    let mut group = c.benchmark_group("split_search");
    for (values, x) in [
        ("real", &x),
        ("binary", &binary),
        ("real 20% missing", &missing),
    ] {
        let rows = Rows::from_view(x.view()).unwrap();
        let rule = SplitRule {
            min_samples_leaf: 1,
            min_weight_leaf: 0.0,
            whole_range: rows.whole_range(1),
            missing_values: rows.check_values().unwrap(),
            max_bins: None,
        };
        for n in [100usize, 1_000, 10_000] {
            let local = LocalSamples {
                row_of: (0..n as u32).collect(),
                class_of: y[..n].to_vec(),
                weight_of: vec![1.0; n],
                // A regression target: the class plus a little of the first pixel.
                values_of: (0..n)
                    .map(|i| y[i] as f64 + 0.01 * x[[i, 0]] as f64)
                    .collect(),
            };
            let samples: Vec<u32> = (0..n as u32).collect();
            let mut scratch = SplitScratch::default();
            let mut node = NodeTargets::default();
            group.throughput(Throughput::Elements((n * atoms.len()) as u64));
            let name = format!("28 patch atoms, {values} values, gini");
            let gini = Gini { n_classes: 3 };
            gini.gather(&local, &samples, &mut node);
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    best_split(
                        &gini,
                        &rows,
                        &local.row_of,
                        &samples,
                        &node,
                        &atoms,
                        rule,
                        &mut scratch,
                    )
                })
            });
            let name = format!("28 patch atoms, {values} values, squared error");
            let squared_error = SquaredError { n_outputs: 1 };
            squared_error.gather(&local, &samples, &mut node);
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    best_split(
                        &squared_error,
                        &rows,
                        &local.row_of,
                        &samples,
                        &node,
                        &atoms,
                        rule,
                        &mut scratch,
                    )
                })
            });
            // The same target (non-negative) under Poisson deviance.
            let name = format!("28 patch atoms, {values} values, poisson");
            let poisson = Poisson { n_outputs: 1 };
            poisson.gather(&local, &samples, &mut node);
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    best_split(
                        &poisson,
                        &rows,
                        &local.row_of,
                        &samples,
                        &node,
                        &atoms,
                        rule,
                        &mut scratch,
                    )
                })
            });
        }
    }
    group.finish();
}

/// A node's sort keys as split search makes them: the key of a float projection (here a
/// sum of three uniform values, as a patch of noise gives) over the sample's position.
fn sort_keys(n: usize, rng: &mut Rng) -> Vec<u64> {
    (0..n)
        .map(|position| {
            let value = (rng.unit() + rng.unit() + rng.unit()) as f32;
            position_key(value, position as u32)
        })
        .collect()
}

fn sorting(c: &mut Criterion) {
    let mut rng = Rng::new(5, 0);
    let mut group = c.benchmark_group("sort_keys");
    for n in [16usize, 64, 128, 256, 700, 2_000] {
        // Many arrays a batch, so that each timed call sorts unsorted keys.
        let arrays: Vec<Vec<u64>> = (0..20_000 / n + 1)
            .map(|_| sort_keys(n, &mut rng))
            .collect();
        group.throughput(Throughput::Elements((n * arrays.len()) as u64));
        let mut scratch = Vec::new();
        group.bench_with_input(BenchmarkId::new("sort_by_value", n), &n, |b, _| {
            b.iter_batched_ref(
                || arrays.clone(),
                |arrays| {
                    for keys in arrays.iter_mut() {
                        sort_by_value(keys, &mut scratch);
                    }
                },
                criterion::BatchSize::LargeInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("sort_unstable", n), &n, |b, _| {
            b.iter_batched_ref(
                || arrays.clone(),
                |arrays| arrays.iter_mut().for_each(|keys| keys.sort_unstable()),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn scoring(c: &mut Criterion) {
    let (x, y) = images(2_000, 4);
    let params = ForestParams {
        n_estimators: 100,
        atoms: patch_atoms(),
        max_features: MaxFeatures::Sqrt,
        n_threads: 0,
        ..ForestParams::default()
    };
    let forest = Forest::fit(&params, x.view(), &y, 3, None).unwrap();
    let (batch, _) = images(10_000, 5);
    let mut group = c.benchmark_group("predict_proba");
    group.sample_size(10);
    group.throughput(Throughput::Elements(batch.nrows() as u64));
    for threads in [1usize, 2] {
        group.bench_with_input(
            BenchmarkId::new("100 trees x 10000 rows, threads", threads),
            &threads,
            |b, &t| {
                b.iter(|| {
                    forest
                        .predict_proba(batch.view(), &ScoreOptions::new().with_threads(t))
                        .unwrap()
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, projection, split_search, sorting, scoring);
criterion_main!(benches);
