use proptest::prelude::*;

use super::*;

proptest! {
    #[test]
    fn finds_the_best_allowed_boundary_by_brute_force(
        entries in prop::collection::vec((-5i32..5, 1u32..4, 0u32..4), 1..30),
        missing in prop::option::of((-5i32..5, 1u32..4, 0u32..4)),
        min_samples_leaf in 1u32..6,
        l2 in 0.0f64..2.0,
    ) {
        let bin = |&(g, h, n): &(i32, u32, u32)| Bin { g: g as f32 * n as f32, h: h as f32 * n as f32, n };
        let mut bins: Vec<Bin> = entries.iter().map(bin).collect();
        let present = bins.len();
        // The missing bin, last, with or without samples.
        let missing_bin = missing.as_ref().map(bin);
        bins.extend(missing_bin);
        let total = bins.iter().fold(Sums::default(), |a, &b| a + b);
        let limits = SplitLimits::boosting(min_samples_leaf, l2);
        let found = best_bin_split(&bins, missing.is_some(), total, 3, &limits);
        let score = |s: Sums| s.g * s.g / (s.h + l2);
        let has_missing = missing_bin.is_some_and(|m| m.n > 0);
        // Every boundary after an occupied present bin, missing samples right, then
        // left; (gain, left sums, missing side).
        let mut expected: Option<(f64, Sums, Option<bool>)> = None;
        for missing_left in [false, true] {
            if missing_left && !has_missing {
                continue;
            }
            for b in 0..present {
                let mut left = bins[..=b].iter().fold(Sums::default(), |a, &x| a + x);
                if missing_left {
                    left = left + missing_bin.unwrap();
                }
                let right = total - left;
                if bins[b].n == 0 || left.n < min_samples_leaf || right.n < min_samples_leaf
                    || left.h < GradientHessian::MIN_CHILD_HESSIAN
                    || right.h < GradientHessian::MIN_CHILD_HESSIAN {
                    continue;
                }
                let gain = score(left) + score(right) - score(total);
                let side = has_missing.then_some(missing_left);
                if gain > 0.0 && expected.is_none_or(|(g, _, _)| gain > g) {
                    expected = Some((gain, left, side));
                }
            }
        }
        match (found, expected) {
            (None, None) => {}
            (Some(split), Some((gain, _, _))) => {
                // Scores are compared in f32: any boundary within its rounding of
                // the best will do, and its gain is reported exactly.
                let mut left = bins[..=split.bin as usize].iter().fold(Sums::default(), |a, &x| a + x);
                if split.missing_left == Some(true) {
                    left = left + missing_bin.unwrap();
                }
                let exact = score(left) + score(total - left) - score(total);
                prop_assert!((split.gain - exact).abs() <= 1e-9 * exact.abs().max(1.0));
                prop_assert!(split.gain >= gain - 1e-5 * score(total).max(1.0), "found {split:?}, best gain {gain}");
                prop_assert_eq!(split.left, left);
                prop_assert_eq!(split.atom, 3);
                prop_assert_eq!(split.missing_left.is_some(), has_missing);
                prop_assert!((split.bin as usize) < present);
            }
            // A gain within f32 rounding of zero may be missed.
            (None, Some((gain, _, _))) => prop_assert!(gain <= 1e-5 * score(total).max(1.0)),
            (found, expected) => prop_assert!(false, "found {found:?}, expected {expected:?}"),
        }
    }

    #[test]
    fn with_a_bin_per_value_the_histogram_scan_finds_the_exact_scans_gain(
        samples in prop::collection::vec((0u8..12, -4i8..5, 1u8..4), 2..80),
        min_samples_leaf in 1u32..5,
        l2 in prop::sample::select(vec![0.0, 0.5, 3.0]),
    ) {
        // Whole gradients and hessians keep the f32 bin sums exact.
        let x = ndarray::Array2::from_shape_fn((samples.len(), 1), |(i, _)| samples[i].0 as f32);
        let rows = crate::data::Rows::from_view(x.view()).unwrap();
        let local = crate::split::LocalSamples {
            row_of: (0..samples.len() as u32).collect(),
            weight_of: samples.iter().map(|s| s.2 as f64).collect(),
            values_of: samples.iter().map(|s| s.1 as f64).collect(),
            class_of: Vec::new(),
        };
        let limits = SplitLimits::boosting(min_samples_leaf, l2);
        let ids: Vec<u32> = (0..samples.len() as u32).collect();
        let mut node = crate::split::NodeTargets::default();
        limits.criterion.gather(&local, &ids, &mut node);
        let mut atoms = crate::atoms::AtomSet::default();
        atoms.clear();
        atoms.push_unit(&mut [0]);
        let rule = crate::split::SplitRule {
            min_samples_leaf: min_samples_leaf as usize,
            min_weight_leaf: limits.min_child_weight,
            whole_range: None,
            missing_values: false,
            max_bins: None,
        };
        let exact = crate::split::best_split(
            &limits.criterion, &rows, &local.row_of, &ids, &node, &atoms, rule,
            &mut crate::split::SplitScratch::default(),
        );
        let mut bins = vec![Bin::default(); 12];
        for &(z, g, h) in &samples {
            let bin = &mut bins[z as usize];
            bin.g += g as f32;
            bin.h += h as f32;
            bin.n += 1;
        }
        let total = bins.iter().fold(Sums::default(), |a, &b| a + b);
        let found = best_bin_split(&bins, false, total, 0, &limits);
        let tolerance = 1e-5 * (total.g * total.g).max(1.0);
        match (found, exact) {
            (Some(found), Some(exact)) => {
                prop_assert!((found.gain - exact.impurity_decrease).abs() <= tolerance,
                    "histogram {found:?}, exact {exact:?}");
            }
            (None, Some(exact)) => prop_assert!(exact.impurity_decrease <= tolerance),
            (Some(found), None) => prop_assert!(found.gain <= tolerance),
            (None, None) => {}
        }
    }
}

proptest! {
    #[test]
    fn a_group_scanned_together_finds_what_its_atoms_scanned_alone_find(
        samples in prop::collection::vec((-5i32..5, 1u32..4), 1..120),
        n_bins in prop::collection::vec(1usize..40, 1..=GROUP),
        has_missing_bin in any::<bool>(),
        min_samples_leaf in 1u32..4,
        l2 in 0.0f64..2.0,
        seed in any::<u64>(),
    ) {
        // One node's samples binned by each atom (the last bin holding the missing
        // samples where there is one): the atoms' scans side by side, in lanes,
        // against each atom's scans alone. Lanes do not mix: the very same split.
        let mut rng = crate::rng::Rng::new(seed, 0);
        let histograms: Vec<Vec<Bin>> = n_bins
            .iter()
            .map(|&n_bins| {
                let mut bins = vec![Bin::default(); n_bins];
                for &(g, h) in &samples {
                    let bin = &mut bins[rng.below(n_bins)];
                    bin.g += g as f32 * 0.37;
                    bin.h += h as f32;
                    bin.n += 1;
                }
                bins
            })
            .collect();
        let total = histograms[0].iter().fold(Sums::default(), |a, &b| a + b);
        let limits = SplitLimits::boosting(min_samples_leaf, l2);
        let slices: Vec<&[Bin]> = histograms.iter().map(Vec::as_slice).collect();
        let together = best_group_split(&slices, 5, has_missing_bin, total, &limits);
        let mut alone = None;
        for (a, bins) in slices.iter().enumerate() {
            let found = best_bin_split(bins, has_missing_bin, total, 5 + a as u32, &limits);
            alone = BinSplit::better(alone, found);
        }
        prop_assert_eq!(together, alone);
    }
}

#[test]
fn ties_go_to_the_earlier_atom_whatever_the_order_compared() {
    let split = |atom, bin| BinSplit {
        gain: 1.0,
        atom,
        bin,
        left: Sums::default(),
        missing_left: None,
    };
    let (a, b) = (Some(split(2, 5)), Some(split(7, 1)));
    assert_eq!(BinSplit::better(a, b), a);
    assert_eq!(BinSplit::better(b, a), a);
    let stronger = Some(BinSplit {
        gain: 2.0,
        ..split(9, 0)
    });
    assert_eq!(BinSplit::better(a, stronger), stronger);
}
