//! Tests of the unsupervised split search and its two scans.

use ndarray::Array2;

use super::*;
use crate::atoms::AtomKind;
use crate::rng::Rng;

/// The best split of one feature's values, every sample weighing 1; whole values are
/// searched as whole numbers.
fn split_of<C: AtomCosts>(criterion: C, column: &[f32]) -> Option<SplitCandidate> {
    let x = Array2::from_shape_vec((column.len(), 1), column.to_vec()).unwrap();
    let rows = Rows::from_view(x.view()).unwrap();
    let mut atoms = AtomSet::default();
    AtomKind::AxisAligned
        .sampler(1)
        .sample_node(&mut Rng::new(0, 0), 1, &mut atoms);
    let n = column.len() as u32;
    best_unsupervised_split(
        &criterion,
        &rows,
        &(0..n).collect::<Vec<_>>(),
        &vec![1.0; column.len()],
        &(0..n).collect::<Vec<_>>(),
        &atoms,
        1,
        column.iter().all(|v| v.fract() == 0.0),
        &mut UnsupervisedScratch::default(),
    )
}

/// Two modes, at 0 and 10, of 40 and 60 draws spread by up to 1.
fn bimodal() -> Vec<f32> {
    let mut rng = Rng::new(7, 0);
    (0..100)
        .map(|i| {
            let centre = if i < 40 { 0.0 } else { 10.0 };
            centre + (rng.below(1000) as f32 / 500.0 - 1.0)
        })
        .collect()
}

#[test]
fn both_criteria_split_a_bimodal_sample_between_its_modes() {
    let column = bimodal();
    for split in [
        split_of(TwoMeans, &column),
        split_of(FastBic::new(), &column),
    ] {
        let threshold = split.unwrap().threshold;
        assert!(threshold > 1.0 && threshold < 9.0, "threshold {threshold}");
    }
}

#[test]
fn two_means_cuts_the_atom_of_largest_decrease_not_a_nearly_constant_one() {
    // Feature 0 is bimodal; feature 1 is 0 but for one sample, so cutting that
    // sample off leaves two constant sides, of no cost, but decreases little.
    let column = bimodal();
    let n = column.len();
    let x = Array2::from_shape_fn((n, 2), |(i, j)| match j {
        0 => column[i],
        _ => (i == 5) as u8 as f32,
    });
    let rows = Rows::from_view(x.view()).unwrap();
    let mut atoms = AtomSet::default();
    AtomKind::AxisAligned
        .sampler(2)
        .sample_node(&mut Rng::new(0, 0), 2, &mut atoms);
    let all: Vec<u32> = (0..n as u32).collect();
    let split = best_unsupervised_split(
        &TwoMeans,
        &rows,
        &all,
        &vec![1.0; n],
        &all,
        &atoms,
        1,
        false,
        &mut UnsupervisedScratch::default(),
    )
    .unwrap();
    assert_eq!(atoms.get(split.atom).indices, [0]);
    assert!(split.threshold > 1.0 && split.threshold < 9.0);
}

#[test]
fn a_constant_feature_has_no_split() {
    assert!(split_of(TwoMeans, &[3.0; 10]).is_none());
}

/// The Fast-BIC children's cost of the split of `column` at `threshold`, from its
/// definition, for values of rounding variance `rounding`.
fn fast_bic_directly(column: &[f64], threshold: f64, rounding: f64) -> f64 {
    let n = column.len() as f64;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let variance = |v: &[f64]| {
        let m = mean(v);
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64
    };
    let eps = (1e-7 * variance(column)).max(std::f64::consts::TAU * rounding);
    let (left, right): (Vec<f64>, Vec<f64>) = column.iter().partition(|&&x| x <= threshold);
    let bic = |side: &[f64], var: f64| {
        let k = side.len() as f64;
        -2.0 * (k * (k / n).ln() + k / 2.0 * (std::f64::consts::TAU * var + eps).ln())
    };
    let own = (bic(&left, variance(&left)), bic(&right, variance(&right)));
    let shared = (bic(&left, variance(column)), bic(&right, variance(column)));
    let chosen = if own.0 - own.1 < shared.0 - shared.1 {
        own
    } else {
        shared
    };
    -(left.len() as f64 * chosen.0 + right.len() as f64 * chosen.1)
}

#[test]
fn fast_bic_matches_its_definition_at_the_split_it_chooses() {
    // Fractional values, sorted; then whole ones, counted by value, taken as measured
    // and as rounded (a rounding variance of 1/12).
    let whole: Vec<f32> = bimodal().iter().map(|v| (v * 4.0).round()).collect();
    fast_bic_split_matches_its_definition(FastBic::new(), &bimodal(), 0.0);
    fast_bic_split_matches_its_definition(FastBic::new(), &whole, 0.0);
    fast_bic_split_matches_its_definition(FastBic::whole_valued(), &whole, 1.0 / 12.0);
}

fn fast_bic_split_matches_its_definition(criterion: FastBic, column: &[f32], rounding: f64) {
    let split = split_of(criterion, column).unwrap();
    let values: Vec<f64> = column.iter().map(|&v| v as f64).collect();
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    let eps = (1e-7 * variance).max(std::f64::consts::TAU * rounding);
    let node = n * n * (std::f64::consts::TAU * variance + eps).ln();
    let directly = |threshold: f64| fast_bic_directly(&values, threshold, rounding);
    let expected = node - directly(split.threshold as f64);
    assert!((split.impurity_decrease - expected).abs() < 1e-8 * expected.abs());
    // And no other threshold costs less.
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    let chosen = directly(split.threshold as f64);
    for pair in sorted.windows(2).filter(|p| p[0] < p[1]) {
        assert!(directly((pair[0] + pair[1]) / 2.0) >= chosen - 1e-9);
    }
}

/// 70 whole values spread over 10..=19, and a block of 30 equal to 20 above them (as
/// a sparse combination of pixels is often 0, its largest value on negative weights).
fn a_spread_and_a_block_of_equal_values_above_it() -> Vec<f32> {
    let mut rng = Rng::new(3, 0);
    (0..100)
        .map(|i| match i {
            0..30 => 20.0,
            _ => 10.0 + rng.below(10) as f32,
        })
        .collect()
}

#[test]
fn whole_valued_fast_bic_does_not_cut_off_a_block_of_equal_values() {
    let column = a_spread_and_a_block_of_equal_values_above_it();
    // Taken as exact, the block has no spread: cutting it off wins.
    let exact = split_of(FastBic::new(), &column).unwrap();
    assert_eq!(exact.threshold, 19.5);
    // Taken as rounded, it has the spread of rounding, and stays with its neighbours.
    let rounded = split_of(FastBic::whole_valued(), &column).unwrap();
    assert!(rounded.threshold < 19.0, "threshold {}", rounded.threshold);
}

/// A node of `n` samples of whole values in `0..span`, whole weights 1 to 3.
fn whole_node(seed: u64, n: usize, span: u32) -> (Vec<f32>, Vec<f64>) {
    let mut rng = Rng::new(seed, 0);
    let values = (0..n)
        .map(|_| rng.below(span as usize) as f32 - 3.0)
        .collect();
    let weights = (0..n).map(|_| 1.0 + rng.below(3) as f64).collect();
    (values, weights)
}

/// The best split of `values` by the sorted scan of whole values and by the
/// counted scan, the latter in the tables of `by_value` as earlier scans left them.
fn sorted_and_counted<C: AtomCosts>(
    criterion: &C,
    values: &[f32],
    weights: &[f64],
    min_leaf: usize,
    by_value: &mut ValueCounts,
) -> (Best, Best) {
    let mut logs = FastBicLogs::default();
    criterion.start_node(&mut logs, weights.iter().sum(), weights);
    let mut sorted = None;
    SortedAtom {
        values,
        whole: true,
    }
    .scan(
        criterion,
        weights,
        min_leaf,
        0,
        &mut Vec::new(),
        &mut Vec::new(),
        &mut Thresholds::default(),
        &mut logs,
        &mut sorted,
    );
    let (low, high) = value_range(values);
    let mut counted = None;
    let atom = CountedAtom {
        values,
        low,
        span: (high - low) as usize + 1,
    };
    atom.scan(
        criterion,
        weights,
        min_leaf,
        0,
        by_value,
        &mut Thresholds::default(),
        &mut logs,
        &mut counted,
    );
    (sorted, counted)
}

#[test]
fn counted_and_sorted_scans_of_whole_values_choose_the_same_split_bit_for_bit() {
    // One set of tables for all the counted scans, as in a tree.
    let by_value = &mut ValueCounts::default();
    for seed in 0..200 {
        let (n, span) = (2 + seed as usize % 40, 2 + seed as u32 % 13);
        let (values, weights) = whole_node(seed, n, span);
        let min_leaf = 1 + seed as usize % 3;
        let bits = |best: Best| best.map(|(d, c)| (d.to_bits(), c.threshold.to_bits()));
        let (sorted, counted) =
            sorted_and_counted(&TwoMeans, &values, &weights, min_leaf, by_value);
        assert_eq!(bits(sorted), bits(counted), "two-means, seed {seed}");
        for fast_bic in [FastBic::new(), FastBic::whole_valued()] {
            let (sorted, counted) =
                sorted_and_counted(&fast_bic, &values, &weights, min_leaf, by_value);
            assert_eq!(bits(sorted), bits(counted), "{fast_bic:?}, seed {seed}");
        }
    }
}

#[test]
fn whole_values_split_where_their_fractional_copies_do() {
    // The same values, once whole and once shifted by a quarter (not whole): the
    // exact sums of the first and the sums about the mean of the second rank the
    // thresholds alike.
    let whole: Vec<f32> = bimodal().iter().map(|v| (v * 4.0).round()).collect();
    let shifted: Vec<f32> = whole.iter().map(|v| v + 0.25).collect();
    for (a, b) in [
        (split_of(TwoMeans, &whole), split_of(TwoMeans, &shifted)),
        (
            split_of(FastBic::new(), &whole),
            split_of(FastBic::new(), &shifted),
        ),
    ] {
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a.threshold + 0.25, b.threshold);
        let scale = a.impurity_decrease.abs().max(1.0);
        assert!((a.impurity_decrease - b.impurity_decrease).abs() < 1e-9 * scale);
    }
}

/// The decrease of splitting `column` at `threshold` by `criterion`'s public costs,
/// from moments about the column's mean.
fn public_decrease<C: UnsupervisedCriterion>(criterion: C, column: &[f32], threshold: f32) -> f64 {
    let mean = column.iter().map(|&v| v as f64).sum::<f64>() / column.len() as f64;
    let (mut left, mut node) = (Moments::default(), Moments::default());
    for &value in column {
        node.add(value as f64 - mean, 1.0);
        if value <= threshold {
            left.add(value as f64 - mean, 1.0);
        }
    }
    let right = Moments {
        weight: node.weight - left.weight,
        sum: node.sum - left.sum,
        sum_squares: node.sum_squares - left.sum_squares,
    };
    criterion.node_cost(&node) - criterion.children_cost(&left, &right, &node)
}

#[test]
fn the_public_costs_give_the_decrease_split_search_finds() {
    let column = bimodal();
    let close = |searched: f64, public: f64| {
        assert!(
            (searched - public).abs() <= 1e-9 * public.abs(),
            "{searched} against {public}"
        )
    };
    let split = split_of(TwoMeans, &column).unwrap();
    close(
        split.impurity_decrease,
        public_decrease(TwoMeans, &column, split.threshold),
    );
    let split = split_of(FastBic::new(), &column).unwrap();
    close(
        split.impurity_decrease,
        public_decrease(FastBic::new(), &column, split.threshold),
    );
    // Whole values, taken as rounded.
    let whole: Vec<f32> = column.iter().map(|v| (v * 4.0).round()).collect();
    let split = split_of(FastBic::whole_valued(), &whole).unwrap();
    close(
        split.impurity_decrease,
        public_decrease(FastBic::whole_valued(), &whole, split.threshold),
    );
}

#[test]
fn offering_an_atoms_thresholds_together_keeps_what_offering_each_in_turn_keeps() {
    let offered_in_turn = |best: &mut Best, node_cost: f64, costs: &[f64]| {
        for (k, &cost) in costs.iter().enumerate() {
            offer(best, node_cost - cost, 1, || k as f32);
        }
    };
    let mut rng = Rng::new(5, 0);
    // Few distinct costs, so that the largest decrease ties; NaN and infinite costs
    // in some; a best so far below, equal to and above the atom's.
    for case in 0..400 {
        // No threshold at all where min_samples_leaf leaves none.
        let len = case % 13;
        let mut costs: Vec<f64> = (0..len).map(|_| rng.below(4) as f64).collect();
        match if len == 0 { 4 } else { case % 5 } {
            0 => costs[rng.below(len)] = f64::NAN,
            1 => costs.iter_mut().for_each(|cost| *cost = f64::INFINITY),
            2 => costs[0] = f64::INFINITY,
            _ => {}
        }
        for before in [None, Some(6.0), Some(7.0), Some(9.0)] {
            let start: Best = before.map(|decrease| {
                let candidate = SplitCandidate {
                    atom: 0,
                    threshold: -1.0,
                    impurity_decrease: decrease,
                    missing_left: None,
                };
                (decrease, candidate)
            });
            let (mut together, mut in_turn) = (start, start);
            offer_thresholds(&mut together, 10.0, &costs, 1, |k| k as f32);
            offered_in_turn(&mut in_turn, 10.0, &costs);
            let key = |best: Best| best.map(|(d, c)| (d.to_bits(), c.atom, c.threshold.to_bits()));
            assert_eq!(key(together), key(in_turn), "{costs:?} after {before:?}");
        }
    }
}
