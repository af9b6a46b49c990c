//! The column path of [`NodeProjector`]: chunk after chunk of samples, the cells the
//! atoms read are copied into a column-major block, so that each atom term becomes one
//! multiply-add across the chunk.

use super::{
    list_marked, missing_rows, prefetch, NodeProjector, CHUNK, LANE_GROUP, PREFETCH_DISTANCE,
};
use crate::atoms::AtomSet;
use crate::data::{Feature, Rows};
use crate::split::missing_sums::rescaled_lane_sums;

/// Columns of the column path's block filled together, sample after sample: 8 KiB of
/// `f32` cells, which stay in the first-level cache while the tile fills.
const FILL_TILE: usize = 32;

impl NodeProjector {
    /// Chunk after chunk of samples, the features read are copied into a column block,
    /// then each atom sums its columns across the chunk.
    pub(super) fn project_columns<T: Feature>(
        &mut self,
        rows: &Rows<'_, T>,
        row_of: &[u32],
        samples: &[u32],
        atoms: &AtomSet,
        out: &mut [f32],
    ) {
        self.assign_columns(atoms);
        let n = samples.len();
        let rows_with_missing = missing_rows(rows);
        let any_missing = !rows_with_missing.is_empty();
        let block = &mut self.block;
        block.resize(self.features.len() * CHUNK, 0.0);
        let mut sums = [0.0f32; CHUNK];
        let mut chunk_rows = Vec::with_capacity(CHUNK);
        for chunk_start in (0..n).step_by(CHUNK) {
            let chunk = &samples[chunk_start..n.min(chunk_start + CHUNK)];
            let m = chunk.len();
            let mut chunk_has_missing = false;
            chunk_rows.clear();
            for &sample in chunk {
                let row_index = row_of[sample as usize] as usize;
                chunk_has_missing |= any_missing && rows_with_missing[row_index];
                chunk_rows.push(rows.row(row_index));
            }
            // The block filled a tile of columns at a time: a sample's cells land in
            // columns `CHUNK` cells apart, and all of a node's columns at once leave
            // the first-level cache between one sample and the next.
            let tiles = self.features.chunks(FILL_TILE);
            for (tile, (features, columns)) in
                tiles.zip(block.chunks_mut(FILL_TILE * CHUNK)).enumerate()
            {
                for (s, row) in chunk_rows.iter().enumerate() {
                    if tile == 0 {
                        if let Some(&ahead) = samples.get(chunk_start + s + PREFETCH_DISTANCE) {
                            prefetch(
                                rows.row(row_of[ahead as usize] as usize),
                                &self.line_features,
                            );
                        }
                    }
                    for (column, &feature) in columns.chunks_exact_mut(CHUNK).zip(features) {
                        column[s] = row[feature as usize].to_f32();
                    }
                }
            }
            let mut term = 0;
            for a in 0..atoms.len() {
                let atom = atoms.get(a);
                let weights = atom.weights;
                let columns = &self.term_columns[term..term + weights.len()];
                term += weights.len();
                if atom.window.is_some() {
                    continue;
                }
                if chunk_has_missing && self.rescaled_in_pass[a] {
                    let whole = self.whole_weights[a];
                    for lanes in (0..m).step_by(LANE_GROUP) {
                        let lane_sums = rescaled_lane_sums(block, columns, weights, lanes, whole);
                        sums[lanes..lanes + LANE_GROUP].copy_from_slice(&lane_sums);
                    }
                    out[a * n + chunk_start..][..m].copy_from_slice(&sums[..m]);
                    continue;
                }
                // A few lanes at a time over all terms, so that their sums stay in
                // registers; lanes past `m` add stale cells and are not read.
                for lanes in (0..m).step_by(LANE_GROUP) {
                    let mut lane_sums = [0.0f32; LANE_GROUP];
                    for (&column, &weight) in columns.iter().zip(weights) {
                        let cells = &block[column as usize * CHUNK + lanes..][..LANE_GROUP];
                        for (sum, &cell) in lane_sums.iter_mut().zip(cells) {
                            *sum += weight * cell;
                        }
                    }
                    sums[lanes..lanes + LANE_GROUP].copy_from_slice(&lane_sums);
                }
                out[a * n + chunk_start..][..m].copy_from_slice(&sums[..m]);
            }
        }
    }

    /// Lists the features [`Self::mark_features`] marked, ascending, for the column
    /// block.
    pub(super) fn list_features(&mut self, n_features: usize) {
        self.features.clear();
        list_marked(&self.read, &mut self.features);
        self.column_of.resize(n_features, 0);
    }

    /// Gives each distinct feature a column of the block, and each atom term its column.
    fn assign_columns(&mut self, atoms: &AtomSet) {
        for (column, &feature) in self.features.iter().enumerate() {
            self.column_of[feature as usize] = column as u32;
        }
        self.term_columns.clear();
        for a in 0..atoms.len() {
            let indices = atoms.get(a).indices;
            self.term_columns
                .extend(indices.iter().map(|&f| self.column_of[f as usize]));
        }
    }
}
