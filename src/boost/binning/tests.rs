use ndarray::Array2;
use proptest::prelude::*;

use super::*;
use crate::rng::Rng;

#[test]
fn tables_of_whole_values_give_the_bins_the_search_gives() {
    // Edges on whole numbers too, where "below" must stay strict.
    let mut edges = [f32::INFINITY; MAX_EDGES];
    edges[..4].copy_from_slice(&[-3.0, 0.0, 2.5, 7.0]);
    let mut table = Vec::new();
    bins_of_whole_values(&edges, -5, 9, &mut table);
    let searched: Vec<u8> = (-5..=9).map(|v| bin_of(&edges, v as f32)).collect();
    assert_eq!(table, searched);
}

#[test]
fn positions_outside_the_edge_sample_are_binned_as_those_inside() {
    // More samples than the edge sample: its positions are binned from the
    // projections that set the edges, the others projected a block at a time.
    let n = EDGE_SAMPLE + 1_500;
    let mut rng = Rng::new(7, 0);
    let x = Array2::from_shape_fn((n + 10, 4), |_| rng.unit() as f32 * 8.0 - 4.0);
    let rows = Rows::from_view(x.view()).unwrap();
    let row_of: Vec<u32> = (0..n as u32)
        .map(|p| (p * 13 + 5) % (n as u32 + 10))
        .collect();
    let mut atoms = AtomSet::default();
    atoms.clear();
    for a in 0..3u32 {
        atoms.push_pairs(&mut [(a, 1.0), (a + 1, -0.75)]);
    }
    let mut binned = BinnedAtoms::default();
    binned.bin(
        &rows,
        &row_of,
        atoms.clone(),
        64,
        false,
        &mut Rng::new(7, 1),
    );
    for a in 0..atoms.len() {
        let edges: &[f32; MAX_EDGES] = binned.edges[a * MAX_EDGES..][..MAX_EDGES]
            .try_into()
            .unwrap();
        for (p, &row) in row_of.iter().enumerate() {
            let z = atoms.get(a).project(rows.row(row as usize));
            assert_eq!(
                binned.bin_at(a, p),
                bin_of(edges, z),
                "atom {a} position {p}"
            );
        }
    }
}

#[test]
fn rounds_split_among_many_tasks_give_each_distinct_value_its_own_bin_in_order() {
    // Positions shared among several edge-sample and binning tasks (the last of each
    // shorter), atoms of few distinct values: each value's bin is its rank, and the
    // counts are the values' counts, wherever a position was projected.
    let n = 2 * TASK_ROWS + 5 * EDGE_TASK_ROWS + 17;
    assert!(n < EDGE_SAMPLE);
    let mut rng = Rng::new(3, 0);
    let x = Array2::from_shape_fn((n, 3), |_| rng.below(9) as u8);
    let rows = Rows::from_view(x.view()).unwrap();
    let row_of: Vec<u32> = (0..n as u32).rev().collect();
    let mut atoms = AtomSet::default();
    atoms.clear();
    for a in 0..(GROUP as u32 + 3) {
        atoms.push_pairs(&mut [
            (a % 3, 1.0),
            ((a + 1) % 3, if a % 2 == 0 { 2.0 } else { -1.0 }),
        ]);
    }
    let mut binned = BinnedAtoms::default();
    binned.bin(
        &rows,
        &row_of,
        atoms.clone(),
        255,
        false,
        &mut Rng::new(3, 1),
    );
    for a in 0..atoms.len() {
        let z: Vec<f32> = row_of
            .iter()
            .map(|&row| atoms.get(a).project(rows.row(row as usize)))
            .collect();
        let mut distinct = z.clone();
        distinct.sort_by(f32::total_cmp);
        distinct.dedup();
        assert_eq!(binned.n_bins(a), distinct.len(), "atom {a}");
        let counts = &binned.counts(a / GROUP)[a % GROUP];
        for (p, z) in z.iter().enumerate() {
            let rank = distinct.partition_point(|d| d < z);
            assert_eq!(binned.bin_at(a, p) as usize, rank, "atom {a} position {p}");
        }
        for (rank, value) in distinct.iter().enumerate() {
            let count = z.iter().filter(|&z| z == value).count();
            assert_eq!(counts[rank] as usize, count, "atom {a} value {value}");
        }
    }
}

proptest! {
    #[test]
    fn byte_rows_bin_as_the_same_float_rows_do(
        n in 1usize..300,
        n_atoms in 1usize..40,
        max_bins in 2usize..=256,
        seed in any::<u64>(),
    ) {
        // Whole weights from -3 to 3 (whole projections: bins from a table) and
        // halves (searched), on pixels from 0 to 255.
        let mut rng = Rng::new(seed, 0);
        let x = Array2::from_shape_fn((n, 6), |_| rng.below(256) as f32);
        let bytes = x.mapv(|v| v as u8);
        let mut atoms = AtomSet::default();
        atoms.clear();
        for a in 0..n_atoms {
            let weight = |rng: &mut Rng| rng.below(7) as f32 - 3.0 + if a % 5 == 4 { 0.5 } else { 0.0 };
            let mut pairs = [((a % 6) as u32, weight(&mut rng)), (((a + 1) % 6) as u32, weight(&mut rng))];
            atoms.push_pairs(&mut pairs[..1 + a % 2]);
        }
        let row_of: Vec<u32> = (0..n as u32).collect();
        let (mut from_floats, mut from_bytes) = (BinnedAtoms::default(), BinnedAtoms::default());
        let rows = Rows::from_view(x.view()).unwrap();
        from_floats.bin(&rows, &row_of, atoms.clone(), max_bins, false, &mut Rng::new(seed, 1));
        let rows = Rows::from_view(bytes.view()).unwrap();
        from_bytes.bin(&rows, &row_of, atoms.clone(), max_bins, false, &mut Rng::new(seed, 1));
        for a in 0..n_atoms {
            prop_assert_eq!(from_bytes.n_bins(a), from_floats.n_bins(a));
            for p in 0..n {
                prop_assert_eq!(from_bytes.bin_at(a, p), from_floats.bin_at(a, p), "atom {} position {}", a, p);
            }
        }
    }

    #[test]
    fn bins_order_projections_as_their_thresholds_do(
        n in 1usize..400,
        n_atoms in 1usize..40,
        max_bins in 2usize..=256,
        whole in any::<bool>(),
        missing in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut rng = Rng::new(seed, 0);
        let x = Array2::from_shape_fn((n + 3, 5), |_| {
            let v = rng.unit() as f32 * 20.0 - 10.0;
            let v = if whole { v.round() } else { v };
            if missing && rng.below(8) == 0 { f32::NAN } else { v }
        });
        let rows = Rows::from_view(x.view()).unwrap();
        let row_of: Vec<u32> = (0..n as u32).map(|i| (i * 7 + 1) % (n as u32 + 3)).collect();
        let mut atoms = AtomSet::default();
        atoms.clear();
        for a in 0..n_atoms {
            atoms.push_pairs(&mut [((a % 5) as u32, 1.0), (((a + 2) % 5) as u32, -0.5)]);
        }
        let mut binned = BinnedAtoms::default();
        binned.bin(&rows, &row_of, atoms.clone(), max_bins, missing, &mut Rng::new(seed, 1));
        prop_assert_eq!(binned.n_atoms(), n_atoms);
        // With missing values, at most 255 bins for present values and one more.
        let most = if missing { max_bins.min(255) + 1 } else { max_bins };
        for a in 0..n_atoms {
            let n_bins = binned.n_bins(a);
            prop_assert!((1..=most).contains(&n_bins));
            let missing_bin = binned.missing_bin(a);
            prop_assert_eq!(missing_bin, missing.then(|| n_bins - 1));
            let present_bins = n_bins - usize::from(missing);
            let column: Vec<u8> = (0..n).map(|p| binned.bin_at(a, p)).collect();
            let counts = &binned.counts(a / GROUP)[a % GROUP];
            for (bin, &count) in counts.iter().enumerate() {
                let in_bin = column.iter().filter(|&&b| b as usize == bin).count();
                prop_assert_eq!(count as usize, in_bin, "atom {} bin {}", a, bin);
            }
            let z: Vec<f32> = row_of.iter().map(|&row| atoms.get(a).project(rows.row(row as usize))).collect();
            for (p, &z) in z.iter().enumerate() {
                if z.is_nan() {
                    prop_assert_eq!(Some(column[p] as usize), missing_bin);
                    continue;
                }
                prop_assert!((column[p] as usize) < present_bins);
                for b in 0..n_bins - 1 {
                    prop_assert_eq!(column[p] as usize <= b, z <= binned.threshold(a, b));
                }
            }
            // Few distinct values: a bin each, so that the bins are exact.
            let mut distinct: Vec<f32> = z.iter().copied().filter(|z| !z.is_nan()).collect();
            distinct.sort_by(f32::total_cmp);
            distinct.dedup();
            if distinct.len() < most {
                let present: Vec<usize> = (0..n).filter(|&p| !z[p].is_nan()).collect();
                for &p in &present {
                    for &q in &present {
                        prop_assert_eq!(column[p] == column[q], z[p] == z[q]);
                    }
                }
            }
        }
    }
}
