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

/// 6x6 images of whole values 0..=9; the class is the brightest of three bands of
/// rows, and a regression target their weighted sum.
pub fn banded_images(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>, Vec<f64>) {
    let mut rng = Rng::new(seed, 0);
    let x = Array2::from_shape_fn((n, 36), |_| (rng.unit() * 10.0).floor() as f32);
    let band = |i: usize, b: usize| x.row(i).iter().skip(12 * b).take(12).sum::<f32>();
    let y = (0..n)
        .map(|i| {
            (0..3)
                .max_by(|&a, &b| band(i, a).total_cmp(&band(i, b)))
                .unwrap() as u32
        })
        .collect();
    let values = (0..n)
        .map(|i| (band(i, 0) - 0.5 * band(i, 2)) as f64)
        .collect();
    (x, y, values)
}
