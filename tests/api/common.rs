//! Data shared by several test files.

use morf_rs::rng::Rng;
use ndarray::Array2;

/// Two noisy classes in 12 features where only feature 3 carries the label.
pub fn one_informative_feature(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let x = Array2::from_shape_fn((n, 12), |(i, j)| {
        let noise = rng.unit() as f32;
        if j == 3 {
            noise + 1.5 * y[i] as f32
        } else {
            noise
        }
    });
    (x, y)
}
