//! The circle experiment of the MORF papers (SPEC (A)): 100 cells on a cycle, class 0
//! holds two segments of ones of length 5, class 1 segments of lengths 4 and 6. Only the
//! segment lengths differ, so a forest must see neighbouring cells together; MORF with
//! wrapping 1-D patches does, an axis-aligned forest stays near chance.
//!
//! Run with `cargo run --release --example circle`.

use std::time::Instant;

use morf_rs::rng::Rng;
use morf_rs::{AtomKind, Forest, ForestParams, MaxFeatures, Patches, ScoreOptions};
use ndarray::Array2;

const N_CELLS: usize = 100;

/// `n` samples, half of each class, from `rng`.
fn circle_data(n: usize, rng: &mut Rng) -> (Array2<f32>, Vec<u32>) {
    let mut x = Array2::zeros((n, N_CELLS));
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let class = (i % 2) as u32;
        let lengths = if class == 0 { [5, 5] } else { [4, 6] };
        // The first segment starts anywhere; the second starts past a gap of at least one
        // cell on both sides, wrapping around the cycle.
        let first = rng.below(N_CELLS);
        let free = N_CELLS - lengths[0] - lengths[1] - 2;
        let second = first + lengths[0] + 1 + rng.below(free + 1);
        for (start, length) in [(first, lengths[0]), (second, lengths[1])] {
            for cell in start..start + length {
                x[[i, cell % N_CELLS]] = 1.0;
            }
        }
        y.push(class);
    }
    (x, y)
}

fn test_error(forest: &Forest, x: &Array2<f32>, y: &[u32]) -> f64 {
    let predicted = forest
        .predict(x.view(), &ScoreOptions::new().with_threads(0))
        .expect("same features as in training");
    predicted.iter().zip(y).filter(|(p, t)| p != t).count() as f64 / y.len() as f64
}

fn main() -> Result<(), morf_rs::MorfError> {
    let mut rng = Rng::new(7, 0);
    let (x_train, y_train) = circle_data(1000, &mut rng);
    let (x_test, y_test) = circle_data(10_000, &mut rng);

    let morf = ForestParams {
        atoms: AtomKind::Patches(
            Patches::new(vec![N_CELLS], vec![3], vec![12]).with_wrap(vec![true]),
        ),
        max_features: MaxFeatures::Fraction(0.5),
        n_threads: 0,
        ..ForestParams::default()
    };
    let axis_aligned = ForestParams {
        n_threads: 0,
        ..ForestParams::default()
    };

    println!("circle experiment: 1000 training samples, 10000 test samples, 100 trees");
    for (name, params) in [
        ("MORF (wrapping patches)", &morf),
        ("axis-aligned forest", &axis_aligned),
    ] {
        let start = Instant::now();
        let forest = Forest::fit(params, x_train.view(), &y_train, 2, None)?;
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "{name:<24} test error {:.3}   fit {seconds:.2} s",
            test_error(&forest, &x_test, &y_test)
        );
    }
    println!("(chance is 0.5)");
    Ok(())
}
