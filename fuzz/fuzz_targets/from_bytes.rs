//! `Forest::from_bytes` on arbitrary bytes: it returns an error or a forest that
//! scores, explains and saves itself without panicking, whose probabilities are
//! distributions.
//!
//! Each input is read twice: as it is, and as header and body followed by their
//! correct checksum, so that the fuzzer reaches the decoder and the validation behind
//! the checksum of version 3.

#![no_main]

use libfuzzer_sys::fuzz_target;
use morf_rs::{Explain, Forest, Inspect, ScoreOptions, Task};
use ndarray::Array2;

/// Widest probe scored, and most classes: wider forests, or forests of more classes
/// (valid up to 2^24, whose probabilities take 128 MiB per row), are only explained and
/// saved, so that each input stays fast.
const MAX_PROBE_FEATURES: usize = 1 << 12;
const MAX_PROBE_CLASSES: usize = 1 << 12;

fuzz_target!(|data: &[u8]| {
    check(data);
    let mut sealed = data.to_vec();
    sealed.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    check(&sealed);
});

fn check(bytes: &[u8]) {
    let Ok(forest) = Forest::from_bytes(bytes) else {
        return;
    };
    let n_features = forest.n_features();
    if n_features <= MAX_PROBE_FEATURES && forest.task().width() <= MAX_PROBE_CLASSES {
        let x = Array2::from_shape_fn((9, n_features), |(i, j)| {
            ((i * 7 + j * 3) % 11) as f32 - 5.0 + 0.25 * i as f32
        });
        let options = ScoreOptions::new();
        match forest.task() {
            Task::Classification { n_classes } => {
                let proba = forest.predict_proba(x.view(), &options).unwrap();
                assert_eq!(proba.dim(), (9, n_classes));
                for row in proba.rows() {
                    assert!(row.iter().all(|&p| (0.0..=1.0).contains(&p)), "{row}");
                    assert!((row.sum() - 1.0).abs() < 1e-9, "{row}");
                }
            }
            Task::Regression { n_outputs } => {
                let values = forest.predict_values(x.view(), &options).unwrap();
                assert_eq!(values.dim(), (9, n_outputs));
            }
        }
        // An error (an honest forest whose leaves cast no vote, a tree too deep) is
        // fine; a panic is not.
        let _ = forest.contributions(x.view(), &options);
        let leaves = forest.apply(x.view(), &options).unwrap();
        assert_eq!(leaves.dim(), (9, forest.trees().len()));
        let _ = forest.split_count_importances();
        let _ = forest.impurity_importances();
    }
    forest.tree_stats();
    assert_eq!(Forest::from_bytes(&forest.to_bytes()).unwrap(), forest);
}
