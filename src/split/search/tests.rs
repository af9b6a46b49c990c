//! Tests of split search, chiefly against brute force: every threshold of every atom
//! tried from scratch.

use ndarray::Array2;
use proptest::prelude::*;

use super::super::class_criteria::{Entropy, Gini};
use super::super::criterion::{GradientHessian, LocalSamples, Poisson, SquaredError};
use super::*;
use crate::atoms::Atom;

/// Which criterion a brute-force check computes.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Gini,
    Entropy,
    SquaredError(usize),
    /// Gradients in `values_of`, hessians in `weight_of`.
    GradientHessian(f64),
    /// Non-negative values.
    Poisson(usize),
}

/// Weighted impurity `W * I` of `members` (local sample ids), from scratch.
fn weighted_impurity(kind: Kind, local: &LocalSamples, members: &[usize]) -> f64 {
    let total: f64 = members.iter().map(|&s| local.weight_of[s]).sum();
    match kind {
        Kind::Gini | Kind::Entropy => {
            let mut counts = [0.0f64; 4];
            for &s in members {
                counts[local.class_of[s] as usize] += local.weight_of[s];
            }
            let impurity: f64 = counts
                .iter()
                .filter(|&&c| c > 0.0)
                .map(|&c| {
                    let p = c / total;
                    match kind {
                        Kind::Gini => p * (1.0 - p),
                        _ => -p * p.log2(),
                    }
                })
                .sum();
            total * impurity
        }
        Kind::SquaredError(k) => {
            let mut error = 0.0;
            for output in 0..k {
                let value = |s: usize| local.values_of[s * k + output];
                let mean = members
                    .iter()
                    .map(|&s| local.weight_of[s] * value(s))
                    .sum::<f64>()
                    / total;
                error += members
                    .iter()
                    .map(|&s| local.weight_of[s] * (value(s) - mean).powi(2))
                    .sum::<f64>();
            }
            error / k as f64
        }
        Kind::GradientHessian(l2) => {
            let g: f64 = members.iter().map(|&s| local.values_of[s]).sum();
            -g * g / (total + l2)
        }
        Kind::Poisson(k) => {
            let mut deviance = 0.0;
            for output in 0..k {
                let value = |s: usize| local.values_of[s * k + output];
                let sum: f64 = members.iter().map(|&s| local.weight_of[s] * value(s)).sum();
                deviance += members
                    .iter()
                    .filter(|&&s| value(s) > 0.0)
                    .map(|&s| local.weight_of[s] * value(s) * (value(s) * total / sum).ln())
                    .sum::<f64>();
            }
            deviance / k as f64
        }
    }
}

/// Whether a side may be a child by the criterion's own rule: under Poisson,
/// every output has a positive value in it.
fn criterion_allows(kind: Kind, local: &LocalSamples, side: &[usize]) -> bool {
    match kind {
        Kind::Poisson(k) => {
            (0..k).all(|output| side.iter().any(|&s| local.values_of[s * k + output] > 0.0))
        }
        _ => true,
    }
}

/// The decrease of splitting at `z <= threshold`, if both sides are allowed.
fn decrease_at(
    kind: Kind,
    local: &LocalSamples,
    samples: &[u32],
    values: &[f32],
    rule: SplitRule,
    threshold: f32,
    missing_left: bool,
) -> Option<f64> {
    let all: Vec<usize> = samples.iter().map(|&s| s as usize).collect();
    let side = |goes_left: bool| -> Vec<usize> {
        all.iter()
            .zip(values)
            .filter(|(_, &z)| (z <= threshold || (missing_left && z.is_nan())) == goes_left)
            .map(|(&s, _)| s)
            .collect()
    };
    let (left, right) = (side(true), side(false));
    let weight = |side: &[usize]| side.iter().map(|&s| local.weight_of[s]).sum::<f64>();
    if left.len() < rule.min_samples_leaf
        || right.len() < rule.min_samples_leaf
        || weight(&left) <= 0.0
        || weight(&right) <= 0.0
        || weight(&left) < rule.min_weight_leaf
        || weight(&right) < rule.min_weight_leaf
        || !criterion_allows(kind, local, &left)
        || !criterion_allows(kind, local, &right)
    {
        return None;
    }
    Some(
        weighted_impurity(kind, local, &all)
            - weighted_impurity(kind, local, &left)
            - weighted_impurity(kind, local, &right),
    )
}

/// The projections of the node's `samples` on `atom`, from scratch.
fn projections(
    rows: &Rows<'_, f32>,
    local: &LocalSamples,
    samples: &[u32],
    atom: Atom<'_>,
) -> Vec<f32> {
    samples
        .iter()
        .map(|&s| atom.project(rows.row(local.row_of[s as usize] as usize)))
        .collect()
}

fn search(
    kind: Kind,
    n_classes: usize,
    rows: &Rows<'_, f32>,
    local: &LocalSamples,
    samples: &[u32],
    atoms: &AtomSet,
    rule: SplitRule,
) -> Option<SplitCandidate> {
    macro_rules! with {
        ($criterion:expr) => {{
            let criterion = $criterion;
            let mut node = NodeTargets::default();
            criterion.gather(local, samples, &mut node);
            let scratch = &mut SplitScratch::default();
            best_split(
                &criterion,
                rows,
                &local.row_of,
                samples,
                &node,
                atoms,
                rule,
                scratch,
            )
        }};
    }
    match kind {
        Kind::Gini => with!(Gini { n_classes }),
        Kind::Entropy => with!(Entropy { n_classes }),
        Kind::SquaredError(n_outputs) => with!(SquaredError { n_outputs }),
        Kind::GradientHessian(l2_regularization) => {
            with!(GradientHessian { l2_regularization })
        }
        Kind::Poisson(n_outputs) => with!(Poisson { n_outputs }),
    }
}

proptest! {
    #[test]
    fn finds_the_brute_force_best_split(
        n in 2usize..300,
        not_in_node in 0usize..20,
        n_features in 1usize..4,
        n_classes in 1usize..4,
        kind in 0usize..9,
        min_samples_leaf in 1usize..4,
        min_weight_fraction in prop::sample::select(vec![0.0, 0.1, 0.3]),
        halves in any::<bool>(),
        far_apart in any::<bool>(),
        count_whole in any::<bool>(),
        offset in prop::sample::select(vec![0.0, 1e6]),
        missing in prop::sample::select(vec![0.0, 0.0, 0.1, 0.4]),
        seed in any::<u64>(),
    ) {
        // Gini, entropy, squared error with 1 to 3 outputs (far from 0 or not),
        // boosting's gradients and hessians with and without a penalty, or Poisson
        // deviance of 1 or 2 outputs.
        let kind = [
            Kind::Gini, Kind::Entropy, Kind::SquaredError(1), Kind::SquaredError(2),
            Kind::SquaredError(3), Kind::GradientHessian(0.0), Kind::GradientHessian(0.5),
            Kind::Poisson(1), Kind::Poisson(2),
        ][kind];
        // Gradients far from 0 would make the costs from scratch too coarse;
        // Poisson's counts start at 0.
        let offset = if matches!(kind, Kind::GradientHessian(_) | Kind::Poisson(_)) { 0.0 } else { offset };
        let mut rng = crate::rng::Rng::new(seed, 0);
        // Few distinct values, so that ties between samples are common: whole numbers
        // close together (counted, or sorted by counting), far apart (sorted by
        // comparison), or halves (always sorted by comparison).
        let scale = match (halves, far_apart) {
            (true, _) => 0.5,
            (false, false) => 1.0,
            (false, true) => 1000.0,
        };
        let n_local = n + not_in_node;
        // Missing cells (NaN, of either sign) where asked for.
        let x = Array2::from_shape_fn((n_local, n_features), |_| {
            let value = (rng.below(5) as f32 - 2.0) * scale;
            let nan = if rng.below(2) == 0 { f32::NAN } else { -f32::NAN };
            if rng.unit() < missing { nan } else { value }
        });
        let has_missing = x.iter().any(|v| v.is_nan());
        // Local samples stand for shuffled rows, and the node holds some of them in
        // shuffled order, so that rows, local ids and node positions all differ.
        let mut row_of: Vec<u32> = (0..n_local as u32).collect();
        let mut samples = row_of.clone();
        for order in [&mut row_of, &mut samples] {
            for i in (1..n_local).rev() {
                order.swap(i, rng.below(i + 1));
            }
        }
        samples.truncate(n);
        let n_outputs = match kind {
            Kind::SquaredError(k) | Kind::Poisson(k) => k,
            Kind::GradientHessian(_) => 1,
            _ => 0,
        };
        let local = LocalSamples {
            row_of,
            class_of: (0..n_local).map(|_| rng.below(n_classes) as u32).collect(),
            weight_of: (0..n_local).map(|_| [0.5, 1.0, 2.0][rng.below(3)]).collect(),
            // Few distinct values too, so that pure nodes and ties occur; for
            // Poisson, counts that are mostly 0, so that sides without any occur.
            values_of: (0..n_local * n_outputs).map(|_| {
                let value: f64 = [0.0, 1.5, -3.0, 7.25][rng.below(n_classes + 1)];
                match kind {
                    Kind::Poisson(_) if rng.below(3) > 0 => 0.0,
                    Kind::Poisson(_) => value.abs(),
                    _ => offset + value,
                }
            }).collect(),
        };
        let rows = Rows::from_view(x.view()).unwrap();
        prop_assert_eq!(rows.whole_range(3).is_some(), !has_missing && (!halves || x.iter().all(|v| v.fract() == 0.0)));
        let mut atoms = AtomSet::default();
        atoms.clear();
        for f in 0..n_features as u32 {
            atoms.push_unit(&mut [f]);
        }
        // An oblique atom too, whose projections are sums.
        atoms.push_pairs(&mut [(0, 1.0), ((n_features - 1) as u32, -1.0)]);
        // Whole weights beyond ±1 keep projections whole; a fractional one does not.
        atoms.push_pairs(&mut [(0, 2.0), ((n_features - 1) as u32, -3.0)]);
        atoms.push_pairs(&mut [((n_features - 1) as u32, 0.5)]);
        let node_weight: f64 = samples.iter().map(|&s| local.weight_of[s as usize]).sum();
        let rule = SplitRule {
            min_samples_leaf,
            min_weight_leaf: min_weight_fraction * node_weight,
            whole_range: rows.whole_range(3).filter(|_| count_whole),
            missing_values: has_missing,
            max_bins: None,
        };
        let found = search(kind, n_classes, &rows, &local, &samples, &atoms, rule);

        let projections = |a: usize| projections(&rows, &local, &samples, atoms.get(a));
        // Every threshold at a present value with missing values on either side,
        // and present apart from missing; no split on an atom whose present
        // values are all equal.
        let mut brute_best: Option<f64> = None;
        for a in 0..atoms.len() {
            let values = projections(a);
            let present: Vec<f32> = values.iter().copied().filter(|z| !z.is_nan()).collect();
            if present.iter().all(|&z| Some(&z) == present.first()) {
                continue;
            }
            for t in present.iter().copied().chain([f32::MAX]) {
                for missing_left in [false, true] {
                    if let Some(d) = decrease_at(kind, &local, &samples, &values, rule, t, missing_left) {
                        brute_best = Some(brute_best.map_or(d, |b: f64| b.max(d)));
                    }
                }
            }
        }
        // Squared errors of values near 1e6 are differences of large numbers when
        // computed from scratch.
        let tolerance = |best: f64| 1e-9 * (1.0 + best.abs()) + if offset > 0.0 { 1e-3 } else { 0.0 };
        match (found, brute_best) {
            (None, None) => {}
            (Some(split), Some(best)) => {
                let values = projections(split.atom);
                // A side for missing values exactly where the atom has some.
                prop_assert_eq!(split.missing_left.is_some(), values.iter().any(|z| z.is_nan()));
                let missing_left = split.missing_left.unwrap_or(false);
                let achieved = decrease_at(kind, &local, &samples, &values, rule, split.threshold, missing_left)
                    .expect("the chosen split is allowed");
                prop_assert!((achieved - best).abs() <= tolerance(best), "achieved {achieved}, best {best}");
                prop_assert!((split.impurity_decrease - best).abs() <= tolerance(best), "{} vs {best}", split.impurity_decrease);
                // The threshold sits strictly below the next value up, or above
                // every value when present values are split from missing ones.
                prop_assert!(values.iter().any(|&z| z <= split.threshold));
                prop_assert!(values.iter().any(|&z| z > split.threshold) || split.threshold == f32::MAX);
            }
            // A node whose values are all equal is pure: no split is sought.
            (None, Some(best)) if best.abs() <= tolerance(0.0) => {}
            (found, brute) => prop_assert!(false, "engine {found:?}, brute force {brute:?}"),
        }
    }
}

#[test]
fn poisson_splits_never_leave_a_side_without_counts() {
    // Mostly zero counts, so that the best split by deviance alone often puts
    // only zeros on one side; counted, sorted by counting and sorted scans all
    // turn such splits down, and a split is found whenever an allowed one exists.
    let mut rng = crate::rng::Rng::new(17, 0);
    let mut found = 0;
    for _ in 0..3000 {
        let n = 2 + rng.below(30);
        let n_outputs = 1 + rng.below(2);
        let scale = [1.0f32, 0.5, 1000.0][rng.below(3)];
        let x = Array2::from_shape_fn((n, 2), |_| rng.below(4) as f32 * scale);
        let rows = Rows::from_view(x.view()).unwrap();
        let local = LocalSamples {
            row_of: (0..n as u32).collect(),
            class_of: Vec::new(),
            weight_of: (0..n).map(|_| [0.3, 1.0, 1.7][rng.below(3)]).collect(),
            values_of: (0..n * n_outputs)
                .map(|_| [0.0, 0.0, 0.0, 1.0, 2.5][rng.below(5)])
                .collect(),
        };
        let samples: Vec<u32> = (0..n as u32).collect();
        let mut atoms = AtomSet::default();
        atoms.clear();
        atoms.push_unit(&mut [0]);
        atoms.push_unit(&mut [1]);
        let rule = SplitRule {
            min_samples_leaf: 1 + rng.below(2),
            min_weight_leaf: 0.0,
            whole_range: rows.whole_range(3).filter(|_| rng.below(2) == 0),
            missing_values: false,
            max_bins: None,
        };
        let kind = Kind::Poisson(n_outputs);
        let split = search(kind, 0, &rows, &local, &samples, &atoms, rule);
        let allowed = |atom: usize, threshold: f32| {
            let values: Vec<f32> = x.column(atom).to_vec();
            decrease_at(kind, &local, &samples, &values, rule, threshold, false)
        };
        let any_allowed =
            (0..2).any(|atom| x.column(atom).iter().any(|&t| allowed(atom, t).is_some()));
        match split {
            Some(split) => {
                found += 1;
                assert!(allowed(split.atom, split.threshold).is_some(), "{split:?}");
            }
            None => assert!(!any_allowed),
        }
    }
    assert!(found > 500, "{found} splits");
}

#[test]
fn projections_that_are_not_whole_after_all_stay_inside_the_tables() {
    // X written by another thread after its whole range was taken: the rule says
    // the projections are whole, and they are not. A wrong split is acceptable,
    // an index out of bounds is not.
    let pool = [
        0.0f32,
        1.0,
        2.0,
        0.5,
        2.75,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e30,
        -1e30,
        8_388_607.0,
        -0.0,
    ];
    let mut rng = crate::rng::Rng::new(9, 0);
    for _ in 0..2000 {
        let n = 2 + rng.below(40);
        let x = Array2::from_shape_fn((n, 2), |_| pool[rng.below(pool.len())]);
        let rows = Rows::from_view(x.view()).unwrap();
        let local = LocalSamples {
            row_of: (0..n as u32).collect(),
            class_of: (0..n).map(|i| (i % 3) as u32).collect(),
            weight_of: vec![1.0; n],
            values_of: (0..n).map(|i| i as f64).collect(),
        };
        let samples: Vec<u32> = (0..n as u32).collect();
        let mut atoms = AtomSet::default();
        atoms.clear();
        atoms.push_unit(&mut [0]);
        atoms.push_unit(&mut [0, 1]);
        let rule = SplitRule {
            min_samples_leaf: 1 + rng.below(2),
            min_weight_leaf: 0.0,
            whole_range: Some((0.0, 2.0)),
            missing_values: rng.below(2) == 0,
            max_bins: None,
        };
        for kind in [Kind::Gini, Kind::SquaredError(1)] {
            search(kind, 3, &rows, &local, &samples, &atoms, rule);
        }
    }
}

/// Each value's bin as the binned search makes them: `bins` equal widths over the
/// values' range.
fn bins_of(values: &[f32], bins: usize) -> Vec<f32> {
    let (low, high) = value_range(values);
    let scale = bins as f32 / (high - low);
    values
        .iter()
        .map(|&v| (((v - low) * scale) as u32).min(bins as u32 - 1) as f32)
        .collect()
}

proptest! {
    #[test]
    fn binned_search_finds_the_best_split_between_bins(
        n in 40usize..300,
        n_features in 1usize..4,
        n_classes in 1usize..4,
        kind in 0usize..4,
        min_samples_leaf in 1usize..4,
        bins in 2usize..6,
        whole_weights in any::<bool>(),
        whole_values in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let kind = [Kind::Gini, Kind::Entropy, Kind::SquaredError(1), Kind::SquaredError(2)][kind];
        let mut rng = crate::rng::Rng::new(seed, 0);
        // Whole values spanning more than the bins (counted in bins, or by value where
        // an atom spans few), or fractions (always in bins).
        let x = Array2::from_shape_fn((n, n_features), |_| {
            if whole_values { rng.below(12) as f32 } else { (rng.unit() * 40.0 - 20.0) as f32 }
        });
        let n_outputs = match kind {
            Kind::SquaredError(k) => k,
            _ => 0,
        };
        let local = LocalSamples {
            row_of: (0..n as u32).collect(),
            class_of: (0..n).map(|_| rng.below(n_classes) as u32).collect(),
            // Whole weights are counted in integers, others in f64 sums.
            weight_of: (0..n)
                .map(|_| if whole_weights { [1.0, 2.0][rng.below(2)] } else { [0.5, 1.0, 2.5][rng.below(3)] })
                .collect(),
            values_of: (0..n * n_outputs).map(|_| [0.0, 1.5, -3.0, 7.25][rng.below(4)]).collect(),
        };
        let samples: Vec<u32> = (0..n as u32).rev().collect();
        let rows = Rows::from_view(x.view()).unwrap();
        let mut atoms = AtomSet::default();
        atoms.clear();
        for f in 0..n_features as u32 {
            atoms.push_unit(&mut [f]);
        }
        atoms.push_pairs(&mut [(0, 2.0), ((n_features - 1) as u32, -3.0)]);
        let rule = SplitRule {
            min_samples_leaf,
            min_weight_leaf: 0.0,
            whole_range: rows.whole_range(3),
            missing_values: false,
            max_bins: Some(bins),
        };
        let found = search(kind, n_classes, &rows, &local, &samples, &atoms, rule);

        let projections = |a: usize| projections(&rows, &local, &samples, atoms.get(a));
        // Every boundary between present bins of every atom, from scratch.
        let mut brute_best: Option<f64> = None;
        for a in 0..atoms.len() {
            let values = projections(a);
            if values.iter().all(|&z| z == values[0]) {
                continue;
            }
            let binned = bins_of(&values, bins);
            for b in 0..bins - 1 {
                if let Some(d) = decrease_at(kind, &local, &samples, &binned, rule, b as f32, false) {
                    brute_best = Some(brute_best.map_or(d, |best: f64| best.max(d)));
                }
            }
        }
        let tolerance = |best: f64| 1e-9 * (1.0 + best.abs());
        match (found, brute_best) {
            (None, None) => {}
            (Some(split), Some(best)) => {
                let values = projections(split.atom);
                let achieved = decrease_at(kind, &local, &samples, &values, rule, split.threshold, false)
                    .expect("the chosen split is allowed");
                prop_assert!((achieved - best).abs() <= tolerance(best), "achieved {achieved}, best {best}");
                prop_assert!((split.impurity_decrease - best).abs() <= tolerance(best));
                // The samples part at the threshold as their bins do.
                let binned = bins_of(&values, bins);
                let side = |left: bool| binned.iter().zip(&values).filter(move |(_, &z)| (z <= split.threshold) == left).map(|(&b, _)| b);
                let left_top = side(true).fold(f32::NEG_INFINITY, f32::max);
                let right_bottom = side(false).fold(f32::INFINITY, f32::min);
                prop_assert!(left_top < right_bottom, "bins {left_top} left, {right_bottom} right");
            }
            (None, Some(best)) if best.abs() <= tolerance(0.0) => {}
            (found, brute) => prop_assert!(false, "engine {found:?}, brute force {brute:?}"),
        }
    }

    #[test]
    fn bins_covering_every_whole_value_search_exactly(
        n in 2usize..200,
        n_classes in 1usize..4,
        span in 2usize..8,
        extra_bins in 0usize..4,
        seed in any::<u64>(),
    ) {
        let mut rng = crate::rng::Rng::new(seed, 0);
        let x = Array2::from_shape_fn((n, 3), |_| rng.below(span) as f32);
        let local = LocalSamples {
            row_of: (0..n as u32).collect(),
            class_of: (0..n).map(|_| rng.below(n_classes) as u32).collect(),
            weight_of: (0..n).map(|_| [1.0, 2.0][rng.below(2)]).collect(),
            values_of: Vec::new(),
        };
        let samples: Vec<u32> = (0..n as u32).collect();
        let rows = Rows::from_view(x.view()).unwrap();
        let mut atoms = AtomSet::default();
        atoms.clear();
        for f in 0..3 {
            atoms.push_unit(&mut [f]);
        }
        let rule = |max_bins| SplitRule {
            min_samples_leaf: 1,
            min_weight_leaf: 0.0,
            whole_range: rows.whole_range(1),
            missing_values: false,
            max_bins,
        };
        let exact = search(Kind::Gini, n_classes, &rows, &local, &samples, &atoms, rule(None));
        let binned = search(Kind::Gini, n_classes, &rows, &local, &samples, &atoms, rule(Some(span + extra_bins)));
        prop_assert_eq!(exact, binned);
    }
}

/// The Gini split of samples of one feature (`values`, of two classes `classes`) on that
/// feature's unit atom, searched with `max_bins`.
fn split_one_feature(
    values: &[f32],
    classes: &[u32],
    max_bins: Option<usize>,
) -> Option<SplitCandidate> {
    let n = values.len();
    let x = Array2::from_shape_fn((n, 1), |(i, _)| values[i]);
    let local = LocalSamples {
        row_of: (0..n as u32).collect(),
        class_of: classes.to_vec(),
        weight_of: vec![1.0; n],
        values_of: Vec::new(),
    };
    let samples: Vec<u32> = (0..n as u32).collect();
    let rows = Rows::from_view(x.view()).unwrap();
    let mut atoms = AtomSet::default();
    atoms.clear();
    atoms.push_unit(&mut [0]);
    let rule = SplitRule {
        min_samples_leaf: 1,
        min_weight_leaf: 0.0,
        whole_range: rows.whole_range(1),
        missing_values: false,
        max_bins,
    };
    search(Kind::Gini, 2, &rows, &local, &samples, &atoms, rule)
}

#[test]
fn a_range_too_narrow_for_bins_is_searched_as_without_them() {
    // Two values so close that bins over their range would need an infinite scale.
    let tiny = 2e-38f32;
    assert!((32.0 / tiny).is_infinite());
    let values: Vec<f32> = (0..64)
        .map(|i| if i % 2 == 0 { 0.0 } else { tiny })
        .collect();
    let classes: Vec<u32> = (0..64).map(|i| i % 2).collect();
    let exact = split_one_feature(&values, &classes, None);
    let binned = split_one_feature(&values, &classes, Some(32));
    assert!(exact.is_some_and(|split| split.threshold >= 0.0 && split.threshold < tiny));
    assert_eq!(binned, exact);
}

#[test]
fn fewer_samples_than_bins_are_searched_exactly() {
    // 0..=7 of one class, 8 and 100 of the other: the exact split is 7.5, where 16 bins
    // over 0..=100 (6.25 wide) put 7 and 8 in one bin and cannot part them.
    let values = [0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 100.0];
    let threshold = |copies: usize, max_bins: Option<usize>| {
        let values = values.repeat(copies);
        let classes: Vec<u32> = values.iter().map(|&v| u32::from(v >= 8.0)).collect();
        split_one_feature(&values, &classes, max_bins).map(|split| split.threshold)
    };
    // Ten samples, sixteen bins: the exact split.
    assert_eq!(threshold(1, None), Some(7.5));
    assert_eq!(threshold(1, Some(16)), Some(7.5));
    // Twenty samples are counted in the bins, which part them elsewhere.
    assert_eq!(threshold(2, None), Some(7.5));
    assert_ne!(threshold(2, Some(16)), Some(7.5));
}

proptest! {
    #[test]
    fn binary_rows_searched_through_bits_split_as_through_cells(
        n in 1usize..400,
        n_features in 1usize..140,
        n_atoms in 1usize..12,
        cells in 1usize..20,
        kind in 0usize..4,
        n_classes in 1usize..4,
        min_samples_leaf in 1usize..4,
        whole_weights in any::<bool>(),
        signs in any::<bool>(),
        max_bins in prop::sample::select(vec![None, Some(2usize), Some(4), Some(9), Some(16), Some(64)]),
        seed in any::<u64>(),
    ) {
        // The same node searched on binary X with and without its bits: the bits are
        // counted over the values an atom may take, and must choose the same split as
        // the cells' sums, whose range decides how they are counted or sorted (which
        // matters where weights are not whole), or binned where bins are asked for.
        let kind = [Kind::Gini, Kind::Entropy, Kind::SquaredError(1), Kind::SquaredError(2)][kind];
        let mut rng = crate::rng::Rng::new(seed, 0);
        let n_local = n + 3;
        let x = Array2::from_shape_fn((n_local, n_features), |_| rng.below(2) as f32);
        let row_of: Vec<u32> = (0..n_local as u32).rev().collect();
        let samples: Vec<u32> = (0..n as u32).map(|i| (i * 7 + 1) % n_local as u32).collect();
        let n_outputs = match kind {
            Kind::SquaredError(k) => k,
            _ => 0,
        };
        let local = LocalSamples {
            row_of,
            class_of: (0..n_local).map(|_| rng.below(n_classes) as u32).collect(),
            weight_of: (0..n_local)
                .map(|_| if whole_weights { [1.0, 2.0, 3.0] } else { [0.5, 1.25, 0.3] }[rng.below(3)])
                .collect(),
            values_of: (0..n_local * n_outputs).map(|_| [0.0, 1.5, -3.0][rng.below(3)]).collect(),
        };
        let mut atoms = AtomSet::default();
        atoms.clear();
        for _ in 0..n_atoms {
            let mut pairs: Vec<(u32, f32)> = Vec::new();
            for _ in 0..cells.min(n_features) {
                let feature = rng.below(n_features) as u32;
                let weight = if signs { [1.0, -1.0][rng.below(2)] } else { 1.0 };
                if pairs.iter().all(|&(f, _)| f != feature) {
                    pairs.push((feature, weight));
                }
            }
            atoms.push_pairs(&mut pairs);
        }
        let rule = SplitRule {
            min_samples_leaf,
            min_weight_leaf: 0.0,
            whole_range: Some((0.0, 1.0)),
            missing_values: false,
            max_bins,
        };
        let cells_rows = Rows::from_view(x.view()).unwrap();
        let bit_rows = Rows::from_view(x.view()).unwrap().with_bits();
        prop_assert!(bit_rows.bits().is_some());
        let through_cells = search(kind, n_classes, &cells_rows, &local, &samples, &atoms, rule);
        let through_bits = search(kind, n_classes, &bit_rows, &local, &samples, &atoms, rule);
        prop_assert_eq!(through_cells, through_bits);
    }
}

#[test]
fn a_split_found_through_bits_leaves_its_atoms_projections_for_the_tree() {
    let mut rng = crate::rng::Rng::new(3, 0);
    let x = Array2::from_shape_fn((300, 70), |(i, f)| {
        ((f < 10 && i % 2 == 0) || rng.below(9) == 0) as u8 as f32
    });
    let rows = Rows::from_view(x.view()).unwrap().with_bits();
    let local = LocalSamples {
        row_of: (0..300).collect(),
        class_of: (0..300).map(|i| (i % 2 == 0) as u32).collect(),
        weight_of: vec![1.0; 300],
        values_of: Vec::new(),
    };
    let samples: Vec<u32> = (0..300).rev().collect();
    let mut atoms = AtomSet::default();
    atoms.clear();
    atoms.push_unit(&mut [40, 41, 65]);
    atoms.push_unit(&mut [2, 3, 4, 66, 67]);
    atoms.push_unit(&mut [20, 30]);
    let rule = SplitRule {
        min_samples_leaf: 1,
        min_weight_leaf: 0.0,
        whole_range: Some((0.0, 1.0)),
        missing_values: false,
        max_bins: None,
    };
    let criterion = Gini { n_classes: 2 };
    let mut node = NodeTargets::default();
    criterion.gather(&local, &samples, &mut node);
    let mut scratch = SplitScratch::default();
    let candidate = best_split(
        &criterion,
        &rows,
        &local.row_of,
        &samples,
        &node,
        &atoms,
        rule,
        &mut scratch,
    )
    .unwrap();
    assert_eq!(candidate.atom, 1);
    let expected = projections(&rows, &local, &samples, atoms.get(1));
    assert_eq!(scratch.projections(1, samples.len()), expected);
}
