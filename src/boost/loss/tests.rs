use super::*;

#[test]
fn spread_is_what_the_link_sees() {
    // Softmax: a row's scores apart, whatever their common shift.
    let softmax = Loss::MultinomialLogLoss { n_classes: 3 };
    assert_eq!(
        softmax.largest_spread(&[1.0, 2.0, 4.0, 500.0, 500.5, 499.0]),
        Some(3.0)
    );
    // Binary: the log-odds' distance from even odds.
    assert_eq!(
        Loss::BinaryLogLoss.largest_spread(&[0.5, -7.0, 3.0]),
        Some(7.0)
    );
    assert_eq!(Loss::SquaredError.largest_spread(&[1e9]), None);
}

/// Numerical derivatives of `mean_loss` (times the total weight) for one sample.
fn check_derivatives(loss: Loss, targets: BoostTargets<'_>, raw: &[f64]) {
    let weights = [1.7];
    let rows = [0u32];
    let data = Sampled {
        targets,
        weights: &weights,
        rows: &rows,
    };
    let k_out = loss.n_outputs();
    let mut g = vec![Vec::new(); k_out];
    let mut h = vec![Vec::new(); k_out];
    loss.gradients(&data, raw, &mut g, &mut h);
    let eps = 1e-4;
    for k in 0..k_out {
        let at = |delta: f64| {
            let mut moved = raw.to_vec();
            moved[k] += delta;
            weights[0] * loss.mean_loss(&data, &moved)
        };
        let numeric_g = (at(eps) - at(-eps)) / (2.0 * eps);
        let numeric_h = (at(eps) - 2.0 * at(0.0) + at(-eps)) / (eps * eps);
        assert!(
            (g[k][0] as f64 - numeric_g).abs() < 1e-3,
            "{loss:?} output {k}: gradient {} against {numeric_g}",
            g[k][0]
        );
        assert!(
            (h[k][0] as f64 - numeric_h).abs() < 1e-2,
            "{loss:?} output {k}: hessian {} against {numeric_h}",
            h[k][0]
        );
    }
}

#[test]
fn gradients_and_hessians_are_the_losses_derivatives() {
    check_derivatives(Loss::SquaredError, BoostTargets::Values(&[2.5]), &[0.75]);
    for label in [0u32, 1] {
        let targets = BoostTargets::Classes {
            labels: &[label],
            n_classes: 2,
        };
        check_derivatives(Loss::BinaryLogLoss, targets, &[0.3]);
        check_derivatives(Loss::BinaryLogLoss, targets, &[-2.0]);
    }
    for label in 0u32..3 {
        let targets = BoostTargets::Classes {
            labels: &[label],
            n_classes: 3,
        };
        check_derivatives(targets.loss(), targets, &[0.2, -0.7, 1.1]);
    }
}

#[test]
fn multinomial_gradients_of_many_samples_follow_each_samples_softmax() {
    // More samples than one task takes, drawn out of order, so that every task's
    // chunk of every output must line up with its samples.
    let n_classes = 4;
    let n = 3 * ROWS_PER_TASK + 17;
    let labels: Vec<u32> = (0..n).map(|i| (i * 7 % n_classes) as u32).collect();
    let weights: Vec<f64> = (0..n).map(|i| 0.5 + (i % 3) as f64).collect();
    let raw: Vec<f64> = (0..n * n_classes)
        .map(|i| ((i * 37 % 101) as f64 - 50.0) / 9.0)
        .collect();
    let rows: Vec<u32> = (0..n as u32).rev().step_by(2).chain(0..40).collect();
    let targets = BoostTargets::Classes {
        labels: &labels,
        n_classes,
    };
    let data = Sampled {
        targets,
        weights: &weights,
        rows: &rows,
    };
    let mut g = vec![Vec::new(); n_classes];
    let mut h = vec![Vec::new(); n_classes];
    targets.loss().gradients(&data, &raw, &mut g, &mut h);
    for (p, &row) in rows.iter().enumerate() {
        let row = row as usize;
        let scores = &raw[row * n_classes..(row + 1) * n_classes];
        for k in 0..n_classes {
            let q = softmax_at(scores, k);
            let is_k = f64::from(labels[row] as usize == k);
            assert_eq!(
                g[k][p],
                (weights[row] * (q - is_k)) as f32,
                "sample {p}, class {k}"
            );
            assert_eq!(
                h[k][p],
                (weights[row] * q * (1.0 - q)) as f32,
                "sample {p}, class {k}"
            );
        }
    }
}

#[test]
fn baselines_minimise_the_loss_of_a_constant() {
    let labels = [0u32, 1, 1, 2, 2, 2];
    let weights = [1.0, 2.0, 1.0, 0.5, 0.5, 1.0];
    let rows: Vec<u32> = (0..6).collect();
    for n_classes in [3usize, 2] {
        let labels: Vec<u32> = labels
            .iter()
            .map(|&l| l.min(n_classes as u32 - 1))
            .collect();
        let targets = BoostTargets::Classes {
            labels: &labels,
            n_classes,
        };
        let data = Sampled {
            targets,
            weights: &weights,
            rows: &rows,
        };
        let loss = targets.loss();
        let base = loss.baseline(&data);
        let raw_of = |b: &[f64]| {
            b.iter()
                .cycle()
                .take(6 * b.len())
                .copied()
                .collect::<Vec<_>>()
        };
        let mut g = vec![Vec::new(); loss.n_outputs()];
        let mut h = vec![Vec::new(); loss.n_outputs()];
        loss.gradients(&data, &raw_of(&base), &mut g, &mut h);
        for gk in &g {
            let total: f32 = gk.iter().sum();
            assert!(total.abs() < 1e-6, "{loss:?}: gradient sum {total}");
        }
    }
    let values = [1.0, 4.0, -2.0, 3.0, 0.0, 1.5];
    let data = Sampled {
        targets: BoostTargets::Values(&values),
        weights: &weights,
        rows: &rows,
    };
    let mean: f64 = values.iter().zip(&weights).map(|(v, w)| v * w).sum::<f64>() / 6.0;
    assert!((Loss::SquaredError.baseline(&data)[0] - mean).abs() < 1e-12);
}

#[test]
fn probabilities_sum_to_one_and_follow_the_scores() {
    let mut out = [0.0; 3];
    Loss::MultinomialLogLoss { n_classes: 3 }.transform(&[1000.0, 999.0, -5.0], &mut out);
    assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!(out[0] > out[1] && out[1] > out[2]);
    let mut two = [0.0; 2];
    Loss::BinaryLogLoss.transform(&[0.0], &mut two);
    assert_eq!(two, [0.5, 0.5]);
}
