//! Forests saved by earlier builds keep loading and predicting the same.
//!
//! `tests/fixtures/forest_v{N}.bin` is a small forest saved in format version N and
//! `forest_v{N}_proba.bin` its probabilities on `probe_rows()` (little-endian f64), each
//! written by the build that introduced version N: version 1 a patch forest, version 2 a
//! sparse oblique one (single-feature splits are what version 2 added), version 3 a
//! forest of signed patches, patch sums and single features fitted with missing values
//! (weighted atoms and the side missing values take are what version 3 added), and
//! `regression_v3.bin` with `regression_v3_values.bin` a regression forest (leaves of
//! mean values, also new in version 3); version 4 (`regression_v4.bin` too) adds pooled
//! patches (the splits and windows version 4 added). A change to the saved layout must bump
//! `FORMAT_VERSION` and keep reading the older versions, or this test fails.
//! Version 5 (forests) and boosted version 3 record each tree's rule on missing cells:
//! older trees keep theirs (a projection touching a missing cell is missing), newer ones
//! rescale the present cells' sum, so the fixtures of both are scored on rows with
//! missing values.
//! Version 6 (forests), boosted version 4 and isolation version 3 keep impurity
//! decreases (gains) in float64; older ones are widened from float32 as they load.
//! Boosted models have their own version: `booster_v{N}.bin` and `booster_v{N}_proba.bin`
//! (version 2 added pooled splits, version 3 the rule on missing cells), and so do
//! isolation forests: `isolation_v{N}.bin` and `isolation_v{N}_scores.bin`, the anomaly
//! scores (version 2 added the rule on missing cells).
//! `MORF_WRITE_FIXTURES=1 cargo test --test api saved_format` writes the files of the
//! current versions, for a deliberate new version only.

use std::path::PathBuf;
use std::sync::Once;

use morf_rs::atoms::{MissingCells, Patches, Pooled, Reductions, SignedPatches};
use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, BoostParams, BoostTargets, Booster, Criterion, FitControl, Forest, ForestParams,
    HonestPrior, IsolationForest, IsolationParams, MaxFeatures, Node, ScoreOptions, Targets,
    BOOSTER_FORMAT_VERSION, FORMAT_VERSION, ISOLATION_FORMAT_VERSION,
};
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

fn little_endian(values: impl Iterator<Item = f64>) -> Vec<u8> {
    values.flat_map(|v| v.to_le_bytes()).collect()
}

fn read_little_endian(name: &str) -> Vec<f64> {
    std::fs::read(fixture(name))
        .unwrap()
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// `probe_rows` with one value in eight missing: what version 3 is fitted on and scores.
fn rows_with_missing_values(n: usize, seed: u64) -> Array2<f32> {
    let (mut x, _) = probe_rows(n, seed);
    let mut rng = Rng::new(seed + 100, 0);
    x.iter_mut()
        .filter(|_| rng.unit() < 0.125)
        .for_each(|v| *v = f32::NAN);
    x
}

/// The rows a fixture of `version` is scored on: from version 3, some values missing.
fn probe_for(version: u16) -> Array2<f32> {
    if version >= 3 {
        rows_with_missing_values(40, 2)
    } else {
        probe_rows(40, 2).0
    }
}

fn current_dictionary() -> AtomKind {
    let image = Patches::new(vec![6, 6], vec![1, 1], vec![3, 3]);
    AtomKind::Mixture(vec![
        (
            AtomKind::SignedPatches(SignedPatches::new(image.clone(), 3)),
            0.5,
        ),
        (AtomKind::Patches(image.clone()), 0.15),
        (
            AtomKind::Pooled(Pooled {
                family: Box::new(AtomKind::Patches(image)),
                shift_min: vec![1, 1],
                shift_max: vec![3, 6],
                reduce: Reductions::Both,
            }),
            0.15,
        ),
        (AtomKind::AxisAligned, 0.2),
    ])
}

fn write_current_version() {
    let probe = probe_for(FORMAT_VERSION);
    let x_train = rows_with_missing_values(150, 1);
    let (_, y_train) = probe_rows(150, 1);
    let params = ForestParams {
        n_estimators: 5,
        atoms: current_dictionary(),
        max_features: MaxFeatures::Count(8),
        honest_fraction: 0.25,
        honest_prior: HonestPrior::Ignore,
        ..ForestParams::default()
    };
    let forest = Forest::fit(&params, x_train.view(), &y_train, 3, None).unwrap();
    let proba = forest
        .predict_proba(probe.view(), &ScoreOptions::new())
        .unwrap();
    std::fs::create_dir_all(fixture("")).unwrap();
    let write = |name: String, bytes: Vec<u8>| std::fs::write(fixture(&name), bytes).unwrap();
    write(format!("forest_v{FORMAT_VERSION}.bin"), forest.to_bytes());
    write(
        format!("forest_v{FORMAT_VERSION}_proba.bin"),
        little_endian(proba.iter().copied()),
    );

    // The target is the brightness of the bar row, the class, plus noise.
    let mut rng = Rng::new(4, 0);
    let values = Array2::from_shape_fn((y_train.len(), 2), |(i, output)| {
        f64::from(y_train[i]) * (output + 1) as f64 + rng.unit()
    });
    let params = ForestParams {
        criterion: Criterion::SquaredError,
        ..params
    };
    let regression = Forest::fit_with(
        &params,
        x_train.view(),
        Targets::Values(values.view()),
        None,
        0..params.n_estimators,
        &FitControl::new(),
    )
    .unwrap();
    let predicted = regression
        .predict_values(probe.view(), &ScoreOptions::new())
        .unwrap();
    write(
        format!("regression_v{FORMAT_VERSION}.bin"),
        regression.to_bytes(),
    );
    write(
        format!("regression_v{FORMAT_VERSION}_values.bin"),
        little_endian(predicted.iter().copied()),
    );

    let x_train = booster_rows(BOOSTER_FORMAT_VERSION, 150, 1);
    let params = BoostParams {
        n_estimators: 10,
        atoms: current_dictionary(),
        max_features: MaxFeatures::Count(8),
        ..BoostParams::default()
    };
    let labels = BoostTargets::Classes {
        labels: &y_train,
        n_classes: 3,
    };
    let booster = Booster::fit(&params, x_train.view(), labels, None).unwrap();
    let proba = booster
        .predict(
            booster_rows(BOOSTER_FORMAT_VERSION, 40, 2).view(),
            &ScoreOptions::new(),
        )
        .unwrap();
    write(
        format!("booster_v{BOOSTER_FORMAT_VERSION}.bin"),
        booster.to_bytes(),
    );
    write(
        format!("booster_v{BOOSTER_FORMAT_VERSION}_proba.bin"),
        little_endian(proba.iter().copied()),
    );

    let isolation =
        IsolationForest::fit(&isolation_params(), rows_with_missing_values(150, 1).view()).unwrap();
    let scores = isolation
        .anomaly_scores(rows_with_missing_values(40, 2).view(), &ScoreOptions::new())
        .unwrap();
    write(
        format!("isolation_v{ISOLATION_FORMAT_VERSION}.bin"),
        isolation.to_bytes(),
    );
    write(
        format!("isolation_v{ISOLATION_FORMAT_VERSION}_scores.bin"),
        little_endian(scores.iter().copied()),
    );
}

/// What every isolation fixture was grown with, on rows with missing values.
fn isolation_params() -> IsolationParams {
    IsolationParams {
        n_estimators: 5,
        max_samples: Some(64),
        atoms: AtomKind::Patches(Patches::new(vec![6, 6], vec![1, 1], vec![3, 3])),
        random_state: 3,
        ..IsolationParams::default()
    }
}

/// The rows a booster fixture of `version` is fitted on (150) and scores (40): from
/// version 3, some values missing.
fn booster_rows(version: u16, n: usize, seed: u64) -> Array2<f32> {
    if version >= 3 {
        rows_with_missing_values(n, seed)
    } else {
        probe_rows(n, seed).0
    }
}

/// The rule on missing cells of the trees of a model saved in `version`, where
/// `rescaled_from` is the first version whose trees rescale present cells.
fn missing_cells_of(version: u16, rescaled_from: u16) -> MissingCells {
    if version >= rescaled_from {
        MissingCells::RescaledPresent
    } else {
        MissingCells::AnyCellMissing
    }
}

/// Writes the current version's files once, before either test reads them.
fn write_fixtures_if_asked() {
    static WRITE: Once = Once::new();
    if std::env::var_os("MORF_WRITE_FIXTURES").is_some() {
        WRITE.call_once(write_current_version);
    }
}

#[test]
fn saved_forests_of_every_version_load_and_predict_as_saved() {
    write_fixtures_if_asked();
    for version in 1..=FORMAT_VERSION {
        let probe = probe_for(version);
        let bytes = std::fs::read(fixture(&format!("forest_v{version}.bin"))).unwrap();
        assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), version);
        let forest = Forest::from_bytes(&bytes).unwrap();
        let rule = missing_cells_of(version, 5);
        assert!(forest.trees().iter().all(|t| t.missing_cells() == rule));
        let saved = read_little_endian(&format!("forest_v{version}_proba.bin"));
        let proba = forest
            .predict_proba(probe.view(), &ScoreOptions::new())
            .unwrap();
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
        if version >= 3 {
            let splits: Vec<(bool, bool)> = forest
                .trees()
                .iter()
                .flat_map(|tree| {
                    tree.nodes().iter().filter_map(|node| match *node {
                        Node::Split {
                            atom_start,
                            atom_len,
                            missing_left,
                            ..
                        } => {
                            let atom = tree.atom(atom_start, atom_len);
                            Some((atom.weights.iter().any(|&w| w < 0.0), missing_left))
                        }
                        Node::SplitOnFeature { missing_left, .. }
                        | Node::SplitPooled { missing_left, .. } => Some((false, missing_left)),
                        Node::Leaf { .. } => None,
                    })
                })
                .collect();
            assert!(splits.iter().any(|&(signed, _)| signed), "no signed atom");
            assert!(splits.iter().any(|&(_, left)| left), "no missing-left side");
            assert!(
                splits.iter().any(|&(_, left)| !left),
                "no missing-right side"
            );
        }
        if version >= 4 {
            assert!(
                forest.trees().iter().any(has_pooled_split),
                "no pooled split"
            );
        }
    }
}

fn has_pooled_split(tree: &morf_rs::Tree) -> bool {
    tree.nodes()
        .iter()
        .any(|node| matches!(node, Node::SplitPooled { .. }))
}

#[test]
fn saved_regression_forests_load_and_predict_as_saved() {
    write_fixtures_if_asked();
    // Regression forests came with version 3.
    for version in 3..=FORMAT_VERSION {
        let bytes = std::fs::read(fixture(&format!("regression_v{version}.bin"))).unwrap();
        let forest = Forest::from_bytes(&bytes).unwrap();
        let predicted = forest
            .predict_values(probe_for(version).view(), &ScoreOptions::new())
            .unwrap();
        assert_eq!(predicted.ncols(), 2);
        assert_eq!(
            predicted.iter().copied().collect::<Vec<_>>(),
            read_little_endian(&format!("regression_v{version}_values.bin")),
            "version {version}"
        );
    }
}

#[test]
fn saved_boosters_of_every_version_load_and_predict_as_saved() {
    write_fixtures_if_asked();
    for version in 1..=BOOSTER_FORMAT_VERSION {
        let bytes = std::fs::read(fixture(&format!("booster_v{version}.bin"))).unwrap();
        let booster = Booster::from_bytes(&bytes).unwrap();
        assert_eq!(booster.n_rounds(), 10);
        let rule = missing_cells_of(version, 3);
        assert!(booster.trees().iter().all(|t| t.missing_cells() == rule));
        let proba = booster
            .predict(booster_rows(version, 40, 2).view(), &ScoreOptions::new())
            .unwrap();
        assert_eq!(
            proba.iter().copied().collect::<Vec<_>>(),
            read_little_endian(&format!("booster_v{version}_proba.bin")),
            "booster version {version}"
        );
        if version >= 2 {
            assert!(
                booster.trees().iter().any(has_pooled_split),
                "no pooled split"
            );
        }
    }
}

#[test]
fn saved_isolation_forests_of_every_version_load_and_score_as_saved() {
    write_fixtures_if_asked();
    let probe = rows_with_missing_values(40, 2);
    for version in 1..=ISOLATION_FORMAT_VERSION {
        let bytes = std::fs::read(fixture(&format!("isolation_v{version}.bin"))).unwrap();
        let model = IsolationForest::from_bytes(&bytes).unwrap();
        assert_eq!((model.trees().len(), model.max_samples()), (5, 64));
        let rule = missing_cells_of(version, 2);
        assert!(model.trees().iter().all(|t| t.missing_cells() == rule));
        let scores = model
            .anomaly_scores(probe.view(), &ScoreOptions::new())
            .unwrap();
        assert_eq!(
            scores.to_vec(),
            read_little_endian(&format!("isolation_v{version}_scores.bin")),
            "isolation version {version}"
        );
        // Saved again, the model reads back in the current version as it was.
        assert_eq!(
            IsolationForest::from_bytes(&model.to_bytes()).unwrap(),
            model
        );
    }
}
