//! The values of every model type sum to its output.

use ndarray::{Array2, Axis};

use morf_rs::{
    BoostParams, BoostTargets, Booster, Criterion, Explain, FitControl, Forest, ForestParams,
    ScoreOptions, Targets,
};

use super::*;

#[test]
fn forest_classifier_contributions_sum_to_the_probabilities() {
    for missing in [false, true] {
        let (x, y) = images(200, 3, missing, 1);
        for (name, atoms) in kinds() {
            for honest in [0.0, 0.4] {
                let params = ForestParams {
                    honest_fraction: honest,
                    ..forest_params(atoms.clone())
                };
                let forest = Forest::fit(&params, x.view(), &y, 3, None).unwrap();
                let contributions = forest
                    .contributions(x.view(), &ScoreOptions::new().with_threads(2))
                    .unwrap();
                assert_eq!(contributions.dim(), (200, N_FEATURES + 1, 3));
                let proba = forest
                    .predict_proba(x.view(), &ScoreOptions::new())
                    .unwrap();
                let error = sum_error(&contributions, &proba);
                assert!(
                    error < 1e-6,
                    "{name} honest {honest} missing {missing}: {error}"
                );
            }
        }
    }
}

#[test]
fn forest_regressor_contributions_sum_to_every_output() {
    let (x, labels) = images(150, 5, true, 2);
    let y = Array2::from_shape_fn((150, 2), |(i, k)| {
        labels[i] as f64 * (k as f64 + 1.0) + x[[i, 3]].max(0.0) as f64
    });
    for (name, atoms) in kinds() {
        let params = ForestParams {
            criterion: Criterion::SquaredError,
            ..forest_params(atoms)
        };
        let targets = Targets::Values(y.view());
        let control = FitControl::new();
        let forest = Forest::fit_with(&params, x.view(), targets, None, 0..6, &control).unwrap();
        let contributions = forest
            .contributions(x.view(), &ScoreOptions::new())
            .unwrap();
        let values = forest
            .predict_values(x.view(), &ScoreOptions::new())
            .unwrap();
        let error = sum_error(&contributions, &values);
        assert!(error < 1e-9, "{name}: {error}");
    }
}

#[test]
fn booster_contributions_sum_to_the_raw_scores() {
    for missing in [false, true] {
        for n_classes in [2u32, 3] {
            let (x, y) = images(200, n_classes, missing, 4);
            for (name, atoms) in kinds() {
                let params = BoostParams {
                    n_estimators: 8,
                    atoms,
                    ..BoostParams::default()
                };
                let targets = BoostTargets::Classes {
                    labels: &y,
                    n_classes: n_classes as usize,
                };
                let model = Booster::fit(&params, x.view(), targets, None).unwrap();
                let contributions = model
                    .contributions(x.view(), &ScoreOptions::new().with_threads(2))
                    .unwrap();
                let raw = model.predict_raw(x.view(), &ScoreOptions::new()).unwrap();
                let total = contributions.sum_axis(Axis(1));
                if n_classes == 2 {
                    // The one raw score in output 1; output 0 holds nothing.
                    assert!(contributions
                        .index_axis(Axis(2), 0)
                        .iter()
                        .all(|&v| v == 0.0));
                    let diff = (&total.column(1) - &raw.column(0)).mapv(f64::abs);
                    assert!(diff.iter().all(|&d| d < 1e-9), "{name} binary");
                } else {
                    let error = sum_error(&contributions, &raw);
                    assert!(error < 1e-9, "{name} {n_classes} classes: {error}");
                }
            }
        }
    }
    let (x, labels) = images(200, 4, true, 5);
    let values: Vec<f64> = labels.iter().map(|&l| l as f64).collect();
    let model = Booster::fit(
        &BoostParams {
            n_estimators: 8,
            atoms: patches(),
            ..BoostParams::default()
        },
        x.view(),
        BoostTargets::Values(&values),
        None,
    )
    .unwrap();
    let contributions = model.contributions(x.view(), &ScoreOptions::new()).unwrap();
    assert_eq!(contributions.dim(), (200, N_FEATURES + 1, 1));
    let error = sum_error(
        &contributions,
        &model.predict_raw(x.view(), &ScoreOptions::new()).unwrap(),
    );
    assert!(error < 1e-9, "regression: {error}");
}
