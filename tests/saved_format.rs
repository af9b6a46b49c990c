//! Forests saved by earlier builds keep loading and predicting the same.
//!
//! `tests/fixtures/forest_v{N}.bin` is a small forest saved in format version N and
//! `forest_v{N}_proba.bin` its probabilities on `probe_rows()` (little-endian f64), each
//! written by the build that introduced version N: version 1 a patch forest, version 2 a
//! sparse oblique one (single-feature splits are what version 2 added). A change to the
//! saved layout must bump `FORMAT_VERSION` and keep reading the older versions, or this
//! test fails. `MORF_WRITE_FIXTURES=1 cargo test --test saved_format` writes the files
//! of the current version, for a deliberate new version only.

use std::path::PathBuf;

use morf_rs::rng::Rng;
use morf_rs::{AtomKind, Forest, ForestParams, HonestPrior, MaxFeatures, Node, FORMAT_VERSION};
use ndarray::Array2;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// 6x6 images whose class is the row holding a bright bar.
fn probe_rows(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
    let mut x = Array2::from_shape_fn((n, 36), |_| rng.unit() as f32);
    for (i, &class) in y.iter().enumerate() {
        for column in 0..6 {
            x[[i, 6 * (2 * class as usize) + column]] += 1.0;
        }
    }
    (x, y)
}

fn write_current_version(probe: &Array2<f32>) {
    let (x_train, y_train) = probe_rows(120, 1);
    let params = ForestParams {
        n_estimators: 5,
        atoms: AtomKind::SparseOblique {
            feature_combinations: 1.5,
        },
        max_features: MaxFeatures::Count(8),
        honest_fraction: 0.25,
        honest_prior: HonestPrior::Ignore,
        ..ForestParams::default()
    };
    let forest = Forest::fit(&params, x_train.view(), &y_train, 3, None).unwrap();
    let proba: Vec<u8> = forest
        .predict_proba(probe.view(), 1)
        .unwrap()
        .iter()
        .flat_map(|p| p.to_le_bytes())
        .collect();
    std::fs::create_dir_all(fixture("")).unwrap();
    std::fs::write(
        fixture(&format!("forest_v{FORMAT_VERSION}.bin")),
        forest.to_bytes(),
    )
    .unwrap();
    std::fs::write(
        fixture(&format!("forest_v{FORMAT_VERSION}_proba.bin")),
        proba,
    )
    .unwrap();
}

#[test]
fn saved_forests_of_every_version_load_and_predict_as_saved() {
    let (probe, _) = probe_rows(40, 2);
    if std::env::var_os("MORF_WRITE_FIXTURES").is_some() {
        write_current_version(&probe);
    }
    for version in 1..=FORMAT_VERSION {
        let path = fixture(&format!("forest_v{version}.bin"));
        if version == FORMAT_VERSION && !path.exists() {
            // The current version's fixture is written once its layout is final; its
            // forests are tested freshly fitted meanwhile (tests/corrupt_bytes.rs).
            continue;
        }
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), version);
        let forest = Forest::from_bytes(&bytes).unwrap();
        let saved: Vec<f64> = std::fs::read(fixture(&format!("forest_v{version}_proba.bin")))
            .unwrap()
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let proba = forest.predict_proba(probe.view(), 1).unwrap();
        assert_eq!(
            proba.iter().copied().collect::<Vec<_>>(),
            saved,
            "version {version}"
        );
        // Each fixture is a real forest: it separates the three classes.
        assert!(forest.tree_stats().iter().all(|s| s.n_leaves >= 3));
        if version >= 2 {
            let on_feature = |node: &Node| matches!(node, Node::SplitOnFeature { .. });
            assert!(forest
                .trees()
                .iter()
                .any(|t| t.nodes().iter().any(on_feature)));
        }
    }
}
