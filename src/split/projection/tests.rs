//! Tests of node projection: every path (rows, columns, pooled, missing cells) against
//! the atoms' own projections, bit for bit, and reads past the rows refused.

use proptest::prelude::*;

use super::*;
use crate::atoms::{Reduce, Window, MAX_POOL_AXES};

proptest! {
    #[test]
    fn node_projections_equal_atom_projections_bit_for_bit(
        n in 1usize..200,
        n_features in 1usize..40,
        n_atoms in 1usize..30,
        terms in 1usize..12,
        missing_in_ten in prop::sample::select(vec![0usize, 1, 5]),
        seed in any::<u64>(),
    ) {
        let mut rng = crate::rng::Rng::new(seed, 0);
        let x = ndarray::Array2::from_shape_fn((n + 5, n_features), |_| {
            if rng.below(10) < missing_in_ten {
                f32::NAN
            } else {
                rng.unit() as f32 * 8.0 - 4.0
            }
        });
        let rows = Rows::from_view(x.view()).unwrap();
        let row_of: Vec<u32> = (0..n as u32 + 5).rev().collect();
        let samples: Vec<u32> = (0..n as u32).map(|i| (i * 7) % (n as u32 + 5)).collect();
        // Few features and many terms send atoms through the column path, many
        // features and few terms through the row path; a third of the atoms are
        // pooled, which both paths leave to the pooled projection.
        let mut atoms = AtomSet::default();
        atoms.clear();
        for _ in 0..n_atoms {
            let mut pairs: Vec<(u32, f32)> = Vec::new();
            for _ in 0..terms.min(n_features) {
                let feature = rng.below(n_features) as u32;
                if pairs.iter().all(|&(f, _)| f != feature) {
                    pairs.push((feature, rng.unit() as f32 * 2.0 - 1.0));
                }
            }
            if rng.below(3) == 0 {
                // Pooled over every shift that keeps the atom inside the row.
                let first = pairs.iter().map(|p| p.0).min().unwrap() as i32;
                let last = pairs.iter().map(|p| p.0).max().unwrap() as i32;
                let mut window = Window::unshifted(&[n_features], &[false], Reduce::Max);
                window.low[MAX_POOL_AXES - 1] = -first;
                window.high[MAX_POOL_AXES - 1] = n_features as i32 - 1 - last;
                let mut plain = AtomSet::default();
                plain.clear();
                plain.push_pairs(&mut pairs);
                atoms.push_pooled(plain.get(0), window);
            } else {
                atoms.push_pairs(&mut pairs);
            }
        }
        let mut out = Vec::new();
        NodeProjector::default().project(&rows, &row_of, &samples, &atoms, &mut out);
        for a in 0..atoms.len() {
            let atom = atoms.get(a);
            for (i, &sample) in samples.iter().enumerate() {
                let row = rows.row(row_of[sample as usize] as usize);
                let expected = atom.project(row);
                prop_assert_eq!(out[a * n + i].to_bits(), expected.to_bits());
                if atom.window.is_none() {
                    prop_assert_eq!(
                        out[a * n + i].to_bits(),
                        rescaled_present(atom.indices, atom.weights, row).to_bits()
                    );
                }
            }
        }
    }
}

proptest! {
    #[test]
    fn binary_rows_counted_as_bits_project_as_the_atoms_do(
        n in 1usize..150,
        n_features in 1usize..200,
        n_atoms in 1usize..20,
        terms in 1usize..40,
        signs in prop::sample::select(vec!["ones", "minus ones", "mixed"]),
        seed in any::<u64>(),
    ) {
        let mut rng = crate::rng::Rng::new(seed, 0);
        let x = ndarray::Array2::from_shape_fn((n + 3, n_features), |_| rng.below(2) as u8);
        let rows = Rows::from_view(x.view()).unwrap().with_bits();
        prop_assert!(rows.bits().is_some());
        let row_of: Vec<u32> = (0..n as u32 + 3).rev().collect();
        let samples: Vec<u32> = (0..n as u32).map(|i| (i * 5) % (n as u32 + 3)).collect();
        // Atoms of weights ±1 over cells anywhere in the row, words apart or within
        // one, signs alternating inside a word where mixed.
        let mut atoms = AtomSet::default();
        atoms.clear();
        for _ in 0..n_atoms {
            let mut pairs: Vec<(u32, f32)> = Vec::new();
            for _ in 0..terms.min(n_features) {
                let feature = rng.below(n_features) as u32;
                let weight = match signs {
                    "ones" => 1.0,
                    "minus ones" => -1.0,
                    _ => [1.0, -1.0][rng.below(2)],
                };
                if pairs.iter().all(|&(f, _)| f != feature) {
                    pairs.push((feature, weight));
                }
            }
            if signs == "ones" && rng.below(2) == 0 {
                let mut indices: Vec<u32> = pairs.iter().map(|p| p.0).collect();
                atoms.push_unit(&mut indices);
            } else {
                atoms.push_pairs(&mut pairs);
            }
        }
        let mut out = Vec::new();
        NodeProjector::default().project(&rows, &row_of, &samples, &atoms, &mut out);
        for a in 0..atoms.len() {
            let atom = atoms.get(a);
            for (i, &sample) in samples.iter().enumerate() {
                let expected = atom.project(rows.row(row_of[sample as usize] as usize));
                prop_assert_eq!(out[a * n + i].to_bits(), expected.to_bits());
            }
        }
    }
}

#[test]
fn bits_project_only_nodes_whose_atoms_all_have_weights_of_one() {
    let x = ndarray::Array2::from_shape_fn((4, 70), |(i, f)| ((i + f) % 3 == 0) as u8);
    let rows = Rows::from_view(x.view()).unwrap().with_bits();
    let bits = rows.bits().unwrap();
    let mut atoms = AtomSet::default();
    atoms.clear();
    atoms.push_unit(&mut [3, 4, 66]);
    let mut sums = crate::split::bit_sums::BitSums::default();
    assert!(sums.prepare(&atoms, bits.words_per_row()));
    atoms.push_pairs(&mut [(5, 1.0), (6, 2.0)]);
    assert!(!sums.prepare(&atoms, bits.words_per_row()));
    // Such a node is projected cell by cell, with the same values.
    let (row_of, samples) = ([0, 1, 2, 3], [3, 1, 0]);
    let mut out = Vec::new();
    NodeProjector::default().project(&rows, &row_of, &samples, &atoms, &mut out);
    for a in 0..2 {
        for (i, &sample) in samples.iter().enumerate() {
            assert_eq!(
                out[a * 3 + i],
                atoms.get(a).project(rows.row(sample as usize))
            );
        }
    }
}

/// The rule of [`MissingCells::RescaledPresent`] written out: the present terms
/// summed in order, times the whole weight over the present weight when a cell
/// is missing; missing when every cell is.
fn rescaled_present(indices: &[u32], weights: &[f32], row: &[f32]) -> f32 {
    let (mut sum, mut present, mut whole) = (0.0f32, 0.0f32, 0.0f32);
    for (&index, &weight) in indices.iter().zip(weights) {
        let cell = row[index as usize];
        whole += weight.abs();
        if !cell.is_nan() {
            sum += weight * cell;
            present += weight.abs();
        }
    }
    match present {
        0.0 => f32::NAN,
        _ if present == whole => sum,
        _ => sum * (whole / present),
    }
}

#[test]
fn a_patch_with_missing_cells_projects_to_its_rescaled_present_sum() {
    // Rows of 4 cells; the atom reads cells 0, 1 and 3 with unit weights.
    let nan = f32::NAN;
    let x = ndarray::array![
        [1.0, 2.0, 7.0, 3.0],
        [1.0, nan, 7.0, 3.0],
        [nan, nan, 7.0, nan],
        [nan, nan, 7.0, 5.0]
    ];
    let rows = Rows::from_view(x.view()).unwrap();
    let row_of: Vec<u32> = (0..4).collect();
    let mut atoms = AtomSet::default();
    atoms.clear();
    atoms.push_unit(&mut [0, 1, 3]);
    // A few samples take the atom's own projection, many the vectorised paths
    // (rows, and columns when the terms outnumber the features).
    for (n, atom_copies) in [(4, 1), (40, 1), (40, 8)] {
        let samples: Vec<u32> = (0..n).map(|i| i % 4).collect();
        while atoms.len() < atom_copies {
            atoms.push_unit(&mut [0, 1, 3]);
        }
        let mut out = Vec::new();
        NodeProjector::default().project(&rows, &row_of, &samples, &atoms, &mut out);
        for values in out.chunks(n as usize) {
            for (value, &sample) in values.iter().zip(&samples) {
                match sample {
                    0 => assert_eq!(*value, 6.0),
                    1 => assert_eq!(*value, 4.0 * 1.5),
                    2 => assert!(value.is_nan()),
                    _ => assert_eq!(*value, 15.0),
                }
            }
        }
    }
}

proptest! {
    #[test]
    fn byte_projections_summed_in_integers_equal_atom_projections_bit_for_bit(
        n in 1usize..100,
        n_features in 1usize..40,
        terms in 1usize..12,
        max_weight in prop::sample::select(vec![1i32, 3, 1 << 9]),
        seed in any::<u64>(),
    ) {
        let mut rng = crate::rng::Rng::new(seed, 0);
        // Zeros (signed zero products), 255s and a few whole weights large enough
        // that some atoms' sums leave the range f32 holds exactly; fractional
        // weights for the rest.
        let x = ndarray::Array2::from_shape_fn((n, n_features), |_| match rng.below(4) {
            0 => 0u8,
            1 => 255,
            _ => rng.below(256) as u8,
        });
        let rows = Rows::from_view(x.view()).unwrap();
        let row_of: Vec<u32> = (0..n as u32).collect();
        let samples: Vec<u32> = (0..n as u32).rev().collect();
        let mut atoms = AtomSet::default();
        atoms.clear();
        for _ in 0..20 {
            let mut pairs: Vec<(u32, f32)> = Vec::new();
            for _ in 0..terms.min(n_features) {
                let feature = rng.below(n_features) as u32;
                let weight = match rng.below(5) {
                    0 => rng.unit() as f32 - 0.5,
                    1 => (1 << 16) as f32 * if rng.below(2) == 0 { 1.0 } else { -1.0 },
                    _ => (rng.below(2 * max_weight as usize + 1) as i32 - max_weight) as f32,
                };
                if pairs.iter().all(|&(f, _)| f != feature) {
                    pairs.push((feature, weight));
                }
            }
            atoms.push_pairs(&mut pairs);
        }
        let mut out = Vec::new();
        NodeProjector::default().project(&rows, &row_of, &samples, &atoms, &mut out);
        for a in 0..atoms.len() {
            for (i, &sample) in samples.iter().enumerate() {
                let expected = atoms.get(a).project(rows.row(sample as usize));
                prop_assert_eq!(out[a * n + i].to_bits(), expected.to_bits());
            }
        }
    }
}

#[test]
#[should_panic(expected = "past the end of the rows")]
fn atoms_reading_past_the_rows_are_refused_before_any_read() {
    let x = ndarray::Array2::<u8>::zeros((40, 3));
    let rows = Rows::from_view(x.view()).unwrap();
    let samples: Vec<u32> = (0..40).collect();
    let mut atoms = AtomSet::default();
    atoms.clear();
    atoms.push_pairs(&mut [(0, 1.0), (3, 1.0)]);
    NodeProjector::default().project(&rows, &samples, &samples, &atoms, &mut Vec::new());
}

#[test]
fn features_read_are_counted_with_one_listed_per_cache_line() {
    let mut atoms = AtomSet::default();
    atoms.clear();
    atoms.push_pairs(&mut [(3, 1.0), (5, 1.0), (17, 1.0)]);
    atoms.push_pairs(&mut [(5, 1.0), (64, 1.0), (127, 1.0), (129, 1.0)]);
    let mut projector = NodeProjector::default();
    assert_eq!(projector.mark_features(130, &atoms, 16), 6);
    assert_eq!(projector.line_features, [3, 17, 64, 127, 129]);
    assert_eq!(projector.mark_features(130, &atoms, 64), 6);
    assert_eq!(projector.line_features, [3, 64, 129]);
    projector.list_features(130);
    assert_eq!(projector.features, [3, 5, 17, 64, 127, 129]);
}

#[test]
fn unit_atoms_sum_in_integers_exactly_when_their_weights_say_so() {
    // Around the bound `cells * max_whole <= 2^24`, reached exactly at 65,536 x 256.
    for n_cells in [1usize, 7, 65_535, 65_536, 65_537, 65_793, 65_794] {
        let mut atoms = AtomSet::default();
        atoms.push_unit(&mut (0..n_cells as u32).collect::<Vec<_>>());
        assert!(atoms.has_unit_weights(0));
        for max_whole in [0, 1, 255, 256, 1000] {
            assert_eq!(
                unit_sums_exactly_in_integers(n_cells, max_whole),
                sums_exactly_in_integers(atoms.get(0), max_whole),
                "{n_cells} cells, values up to {max_whole}"
            );
        }
    }
}
