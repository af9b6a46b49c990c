//! Writes the seed corpus of the `from_bytes` target: small saved forests of every atom
//! kind, honest and not, each as saved and without its checksum (the target appends
//! the right one), and the saved forests of earlier format versions.
//!
//! `cargo run --bin write_seeds` (from `fuzz/`) fills `corpus/from_bytes/`.

use std::path::Path;

use morf_rs::rng::Rng;
use morf_rs::{AtomKind, Forest, ForestParams, HonestPrior, MaxFeatures, Patches};
use ndarray::Array2;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = root.join("corpus/from_bytes");
    std::fs::create_dir_all(&corpus).unwrap();
    let mut rng = Rng::new(0, 0);
    let y: Vec<u32> = (0..60).map(|i| i % 3).collect();
    let x = Array2::from_shape_fn((60, 6), |(i, j)| {
        rng.unit() as f32 + if j / 2 == y[i] as usize { 1.0 } else { 0.0 }
    });
    let base = ForestParams {
        n_estimators: 2,
        max_depth: Some(4),
        ..ForestParams::default()
    };
    let kinds = [
        base.clone(),
        ForestParams {
            atoms: AtomKind::Patches(Patches::new(vec![2, 3], vec![1, 1], vec![2, 3])),
            honest_fraction: 0.5,
            honest_prior: HonestPrior::Ignore,
            ..base.clone()
        },
        ForestParams {
            atoms: AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            max_features: MaxFeatures::Count(8),
            ..base
        },
    ];
    for (k, params) in kinds.iter().enumerate() {
        let bytes = Forest::fit(params, x.view(), &y, 3, None)
            .unwrap()
            .to_bytes();
        std::fs::write(corpus.join(format!("fitted_{k}")), &bytes).unwrap();
        std::fs::write(
            corpus.join(format!("fitted_{k}_unsealed")),
            &bytes[..bytes.len() - 4],
        )
        .unwrap();
    }
    for version in [1, 2] {
        let name = format!("forest_v{version}.bin");
        std::fs::copy(
            root.join("../tests/fixtures").join(&name),
            corpus.join(name),
        )
        .unwrap();
    }
}
