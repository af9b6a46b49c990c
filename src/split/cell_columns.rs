//! Projections of large nodes on single-cell atoms (the axis-aligned splits of a
//! random forest) from a column-major copy of byte X.
//!
//! Reading rows, a node's samples each cost a trip to memory for the lines of their row
//! the atoms touch (about 11 of a 784-byte row for 28 scattered pixels), however many
//! samples the node holds. A column of byte X is `n_rows` bytes, so from about
//! `n_rows / 16` samples up a node's atoms read fewer lines from their columns, which
//! then stay near the core while the node's samples are gathered from them. The values
//! are the whole numbers the row path sums in integers, so the projections are the same
//! bit for bit.

use crate::atoms::AtomSet;
use crate::data::{Feature, Rows};

/// A node reads columns from this fraction of X's rows up.
const COLUMN_NODE_FRACTION: usize = 16;

/// Whether a node of `n_samples` samples projects from X's columns: X is bytes, the
/// node is large enough, and every atom is one cell with a whole weight summed in
/// integers (`integer_sums`, per atom).
pub(super) fn reads_columns<T: Feature>(
    rows: &Rows<'_, T>,
    n_samples: usize,
    atoms: &AtomSet,
    integer_sums: &[bool],
) -> bool {
    T::as_bytes(&[]).is_some()
        && n_samples * COLUMN_NODE_FRACTION >= rows.n_samples
        && (0..atoms.len()).all(|a| {
            let atom = atoms.get(a);
            atom.window.is_none() && atom.indices.len() == 1 && integer_sums[a]
        })
}

/// Writes `w * x` of each atom's one cell for every node sample (a position in
/// `samples`, whose row is `row_of[sample]`) at `out[a * samples.len() + i]`, reading
/// the cells from X's columns; `node_rows` is scratch for the samples' rows.
pub(super) fn project_from_columns<T: Feature>(
    rows: &Rows<'_, T>,
    row_of: &[u32],
    samples: &[u32],
    atoms: &AtomSet,
    node_rows: &mut Vec<u32>,
    out: &mut [f32],
) {
    let n = samples.len();
    if n == 0 {
        return;
    }
    let n_rows = rows.n_samples;
    let columns = rows.columns();
    node_rows.clear();
    node_rows.extend(samples.iter().map(|&sample| row_of[sample as usize]));
    assert!(
        node_rows.iter().all(|&row| (row as usize) < n_rows),
        "a sample's row is past the end of X"
    );
    for (a, values) in out.chunks_exact_mut(n).enumerate() {
        let atom = atoms.get(a);
        let weight = atom.weights[0] as i32;
        let column = &columns[atom.indices[0] as usize * n_rows..][..n_rows];
        for (value, &row) in values.iter_mut().zip(node_rows.iter()) {
            // SAFETY: every row is below the column's length (checked above).
            let cell = unsafe { column.get_unchecked(row as usize) }.to_i32();
            *value = (weight * cell) as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::rng::Rng;

    proptest! {
        #[test]
        fn columns_give_each_atoms_projection(
            n_rows in 1usize..60,
            n_features in 1usize..30,
            n_atoms in 1usize..10,
            seed in any::<u64>(),
        ) {
            let mut rng = Rng::new(seed, 0);
            let x: Vec<u8> = (0..n_rows * n_features).map(|_| rng.below(256) as u8).collect();
            let rows = Rows::from_slice(&x, n_features);
            // A bootstrap: positions whose rows repeat, and a node of some of them.
            let row_of: Vec<u32> = (0..n_rows).map(|_| rng.below(n_rows) as u32).collect();
            let samples: Vec<u32> =
                (0..n_rows as u32).filter(|_| rng.below(3) > 0).collect();
            let mut atoms = AtomSet::default();
            atoms.clear();
            for _ in 0..n_atoms {
                let weight = [1.0f32, -1.0, 3.0, -200.0][rng.below(4)];
                atoms.push_pairs(&mut [(rng.below(n_features) as u32, weight)]);
            }
            let mut out = vec![f32::NAN; samples.len() * n_atoms];
            project_from_columns(&rows, &row_of, &samples, &atoms, &mut Vec::new(), &mut out);
            for a in 0..n_atoms {
                for (i, &sample) in samples.iter().enumerate() {
                    let row = rows.row(row_of[sample as usize] as usize);
                    prop_assert_eq!(
                        out[a * samples.len() + i].to_bits(),
                        atoms.get(a).project(row).to_bits(),
                        "atom {} sample {}", a, sample
                    );
                }
            }
        }
    }

    #[test]
    fn only_large_nodes_of_single_cells_on_bytes_read_columns() {
        let x = vec![7u8; 64 * 4];
        let rows = Rows::from_slice(&x, 4);
        let floats = vec![7.0f32; 64 * 4];
        let float_rows = Rows::from_slice(&floats, 4);
        let mut atoms = AtomSet::default();
        atoms.clear();
        atoms.push_pairs(&mut [(1, 1.0)]);
        atoms.push_pairs(&mut [(3, -1.0)]);
        assert!(reads_columns(&rows, 4, &atoms, &[true, true]));
        assert!(!reads_columns(&rows, 3, &atoms, &[true, true]));
        assert!(!reads_columns(&rows, 64, &atoms, &[true, false]));
        assert!(!reads_columns(&float_rows, 64, &atoms, &[true, true]));
        atoms.push_pairs(&mut [(0, 1.0), (2, 1.0)]);
        assert!(!reads_columns(&rows, 64, &atoms, &[true, true, true]));
    }
}
