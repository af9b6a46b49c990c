//! The contributions of rows, computed in parallel: every tree's TreeSHAP values of
//! each row, shared among features or kept per atom.

use ndarray::{Array2, Array3, ArrayView2, ArrayViewMut2};

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use super::blocks::{block_rows, enough_rows_for_wide_blocks, BlockScratch, ScratchPool};
use super::lanes::{Isa, Lanes, BLOCK_ROWS, SMALL_BLOCK_ROWS};
use super::players::{atom_key, ExplainedTree};
use super::share::share_block;
use super::treeshap::{tree_shap, PlayerValues};
use super::AtomContributions;
use crate::atoms::Atom;
use crate::data::Feature;
use crate::error::{invalid, Result};
use crate::runtime::control::is_cancelled;
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::{new_output, output_rows, score_rows_in_chunks};

/// Deepest tree whose contributions are computed: TreeSHAP walks a tree recursively.
pub const MAX_EXPLAINED_DEPTH: usize = 1024;

/// Bytes of the table of values per atom and output that one thread may take for
/// blocks of [`BLOCK_ROWS`] rows: a model with more atoms and outputs is explained in
/// blocks of [`SMALL_BLOCK_ROWS`], whose table is a quarter of the size.
const WIDE_TABLE_BYTES: usize = 256 << 20;

/// A model's trees prepared for TreeSHAP, with what they add up to.
pub struct Explainer<'m> {
    n_features: usize,
    /// The model's outputs: classes, regression outputs, or 1.
    width: usize,
    trees: Vec<ExplainedTree<'m>>,
    /// The distinct atoms of all trees: each is projected, and its value shared
    /// among its features, once per row.
    atoms: Vec<Atom<'m>>,
    /// Per tree, per player, its atom in `atoms`.
    tree_atoms: Vec<Vec<u32>>,
    /// 0, 1, 2, ...: the players of a tree, each its own row of values.
    each_player: Vec<u32>,
    /// What the model predicts knowing nothing of a row, per output.
    expected: Vec<f64>,
    /// The widest vectors of the processor.
    isa: Isa,
}

/// One row's per-atom contributions: (tree, node) per entry, and their values.
#[derive(Default)]
struct RowAtoms {
    atoms: Vec<(u32, u32)>,
    values: Vec<f64>,
}

impl<'m> Explainer<'m> {
    /// The explainer of a model of `n_features` features and `width` outputs whose
    /// prediction is `base` plus the sum of what `trees` add.
    pub(crate) fn new(
        n_features: usize,
        width: usize,
        base: Vec<f64>,
        trees: Vec<ExplainedTree<'m>>,
    ) -> Explainer<'m> {
        let mut expected = base;
        let mut keys: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut atoms = Vec::new();
        let mut tree_atoms = Vec::with_capacity(trees.len());
        for tree in &trees {
            let slots: Vec<u32> = (0..tree.n_players())
                .map(|player| {
                    let atom = tree.player_atom(player);
                    let next = keys.len() as u32;
                    let slot = *keys.entry(atom_key(&atom)).or_insert(next);
                    if slot == next {
                        atoms.push(atom);
                    }
                    slot
                })
                .collect();
            tree_atoms.push(slots);
            let values = tree.expected_value();
            for (e, v) in expected[tree.column..].iter_mut().zip(values) {
                *e += v;
            }
        }
        // Atoms in the order of their first feature: sharing them one after another
        // then adds into the sums of nearby features, which stay in cache.
        let mut order: Vec<u32> = (0..atoms.len() as u32).collect();
        order.sort_by_key(|&a| atoms[a as usize].indices.first().copied());
        let mut place = vec![0u32; atoms.len()];
        for (to, &from) in order.iter().enumerate() {
            place[from as usize] = to as u32;
        }
        let atoms: Vec<Atom<'m>> = order.iter().map(|&a| atoms[a as usize]).collect();
        for slots in &mut tree_atoms {
            slots
                .iter_mut()
                .for_each(|slot: &mut u32| *slot = place[*slot as usize]);
        }
        let most_players = trees.iter().map(|tree| tree.n_players()).max();
        Explainer {
            n_features,
            width,
            trees,
            atoms,
            tree_atoms,
            each_player: (0..most_players.unwrap_or(0) as u32).collect(),
            expected,
            isa: Isa::detect(),
        }
    }

    /// Per row, feature and output, the contributions; the last slot along axis 1 is
    /// the expected value. Shape (samples, features + 1, outputs).
    pub(crate) fn contributions<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<Array3<f64>> {
        let columns = self.contribution_columns()?;
        let mut out = new_output(x.nrows(), columns, "the contributions")?;
        self.contributions_into(x, out.view_mut(), options)?;
        let shape = (x.nrows(), self.n_features + 1, self.width);
        Ok(out
            .into_shape_with_order(shape)
            .expect("one value per row, feature and output"))
    }

    /// [`contributions`](Self::contributions) written into `out`, a row-major array of
    /// shape (samples, (features + 1) * outputs).
    pub(crate) fn contributions_into<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        out: ArrayViewMut2<'_, f64>,
        options: &ScoreOptions<'_>,
    ) -> Result<()> {
        let columns = self.contribution_columns()?;
        let what = "feature and output (and the expected value)";
        let out = output_rows(out, x.nrows(), columns, what)?;
        let cancel = options.cancel_flag();
        options.install_costly(x.nrows(), |threads| {
            match self.wide_blocks(x.nrows(), threads) {
                true => self.contributions_in_blocks::<T, BLOCK_ROWS>(x, out, threads, cancel),
                false => {
                    self.contributions_in_blocks::<T, SMALL_BLOCK_ROWS>(x, out, threads, cancel)
                }
            }
        })?
    }

    /// Whether `n_rows` rows on `threads` threads are explained in blocks of
    /// [`BLOCK_ROWS`] rather than [`SMALL_BLOCK_ROWS`]: where they make at least two
    /// such blocks a thread (so that a last block short of rows is a small part of
    /// the work), and the model's table of values per atom and output stays small
    /// enough.
    fn wide_blocks(&self, n_rows: usize, threads: usize) -> bool {
        let table = (self.atoms.len() as u128) * (self.width as u128);
        let wide_bytes = table * std::mem::size_of::<Lanes<BLOCK_ROWS>>() as u128;
        enough_rows_for_wide_blocks(n_rows, threads) && wide_bytes <= WIDE_TABLE_BYTES as u128
    }

    /// [`contributions_into`](Self::contributions_into) on `threads` threads in
    /// blocks of `N` rows, into `out` (row-major, a row of values per row of `x`).
    fn contributions_in_blocks<T: Feature, const N: usize>(
        &self,
        x: ArrayView2<'_, T>,
        out: &mut [f64],
        threads: usize,
        cancel: &AtomicBool,
    ) -> Result<()> {
        let columns = self.contribution_columns()?;
        let chunks = threads.min(x.nrows().div_ceil(N));
        let pool = ScratchPool::<N>::for_chunks(chunks, self.atoms.len() * self.width)?;
        score_rows_in_chunks(
            self.n_features,
            x,
            out,
            columns,
            N,
            threads,
            cancel,
            // Each chunk is one block.
            |_, rows, out| {
                let mut scratch = pool.take();
                let (n, lanes) = block_rows::<T, N>(rows);
                self.block_contributions(&lanes, n, out, &mut scratch, cancel);
                pool.give_back(scratch);
            },
        )
    }

    /// The exact per-atom contributions of every row of `x`.
    pub(crate) fn atom_contributions<T: Feature>(
        &self,
        x: ArrayView2<'_, T>,
        options: &ScoreOptions<'_>,
    ) -> Result<AtomContributions> {
        let mut per_row: Vec<RowAtoms> = Vec::new();
        per_row
            .try_reserve_exact(x.nrows())
            .map_err(|_| crate::MorfError::OutOfMemory {
                what: "the atom contributions",
                bytes: x.nrows() as u128 * std::mem::size_of::<RowAtoms>() as u128,
            })?;
        per_row.resize_with(x.nrows(), RowAtoms::default);
        let cancel = options.cancel_flag();
        options.install_costly(x.nrows(), |threads| {
            // One tree's values per player are kept at a time, whatever the model.
            match enough_rows_for_wide_blocks(x.nrows(), threads) {
                true => self.atoms_in_blocks::<T, BLOCK_ROWS>(x, &mut per_row, threads, cancel),
                false => {
                    self.atoms_in_blocks::<T, SMALL_BLOCK_ROWS>(x, &mut per_row, threads, cancel)
                }
            }
        })??;
        let n_entries = per_row.iter().map(|row| row.atoms.len()).sum();
        let mut result = AtomContributions {
            sample: Vec::with_capacity(n_entries),
            tree: Vec::with_capacity(n_entries),
            node: Vec::with_capacity(n_entries),
            values: Array2::zeros((0, 0)),
            expected_value: self.expected.clone(),
        };
        let mut values = Vec::with_capacity(n_entries * self.width);
        for (sample, row) in per_row.into_iter().enumerate() {
            for (tree, node) in row.atoms {
                result.sample.push(sample as u32);
                result.tree.push(tree);
                result.node.push(node);
            }
            values.extend(row.values);
        }
        result.values = Array2::from_shape_vec((n_entries, self.width), values)
            .expect("one value per entry and output");
        Ok(result)
    }

    /// [`atom_contributions`](Self::atom_contributions)' entries of each row of `x`
    /// into `per_row`, on `threads` threads in blocks of `N` rows.
    fn atoms_in_blocks<T: Feature, const N: usize>(
        &self,
        x: ArrayView2<'_, T>,
        per_row: &mut [RowAtoms],
        threads: usize,
        cancel: &AtomicBool,
    ) -> Result<()> {
        let pool = ScratchPool::<N>::default();
        score_rows_in_chunks(
            self.n_features,
            x,
            per_row,
            1,
            N,
            threads,
            cancel,
            // Each chunk is one block.
            |_, rows, out| {
                let mut scratch = pool.take();
                let (_, lanes) = block_rows::<T, N>(rows);
                self.block_atoms(&lanes, out, &mut scratch, cancel);
                pool.give_back(scratch);
            },
        )
    }

    /// Values per row of the contributions: (features + 1) * outputs.
    fn contribution_columns(&self) -> Result<usize> {
        (self.n_features + 1)
            .checked_mul(self.width)
            .ok_or_else(|| invalid("X", "too many features and outputs to explain"))
    }

    /// Projects the rows of a block on every atom.
    fn project<T: Feature, const N: usize>(&self, rows: &[&[T]; N], scratch: &mut BlockScratch<N>) {
        scratch.projections.clear();
        (scratch.projections)
            .extend((self.atoms.iter()).map(|atom| std::array::from_fn(|l| atom.project(rows[l]))));
    }

    /// Writes the contributions of the first `n` rows of a block into `out`: per row,
    /// per feature, then the expected value, `width` outputs each. Stops between
    /// trees once `cancel` is set, leaving `out` unspecified.
    fn block_contributions<T: Feature, const N: usize>(
        &self,
        rows: &[&[T]; N],
        n: usize,
        out: &mut [f64],
        scratch: &mut BlockScratch<N>,
        cancel: &AtomicBool,
    ) {
        let width = self.width;
        self.project(rows, scratch);
        // Every tree's values per atom first, then each atom's shared once.
        scratch.phi.resize(self.atoms.len() * width, Lanes::ZERO);
        for (tree, atoms) in self.trees.iter().zip(&self.tree_atoms) {
            if is_cancelled(cancel) {
                // The table must be all 0 for the next block.
                scratch.phi.fill(Lanes::ZERO);
                return;
            }
            let values = PlayerValues {
                values: &mut scratch.phi,
                rows: atoms,
                stride: width,
                column: tree.column,
            };
            let shap = &mut scratch.shap;
            tree_shap(tree, &scratch.projections, atoms, values, shap, self.isa);
        }
        out.fill(0.0);
        let columns = out.len() / n;
        let shares = &mut scratch.shares;
        let phi = &mut scratch.phi;
        share_block(
            &self.atoms,
            phi,
            width,
            rows,
            n,
            out,
            columns,
            shares,
            self.isa,
        );
        for row_out in out.chunks_exact_mut(columns) {
            row_out[self.n_features * width..].copy_from_slice(&self.expected);
        }
    }

    /// Records the contributions per tree and atom of the rows of a block into `out`,
    /// one per row. Stops between trees once `cancel` is set.
    fn block_atoms<T: Feature, const N: usize>(
        &self,
        rows: &[&[T]; N],
        out: &mut [RowAtoms],
        scratch: &mut BlockScratch<N>,
        cancel: &AtomicBool,
    ) {
        let width = self.width;
        self.project(rows, scratch);
        for (t, (tree, atoms)) in self.trees.iter().zip(&self.tree_atoms).enumerate() {
            if is_cancelled(cancel) {
                return;
            }
            scratch.tree_phi.clear();
            (scratch.tree_phi).resize(tree.n_players() * tree.width, Lanes::ZERO);
            let values = PlayerValues {
                values: &mut scratch.tree_phi,
                rows: &self.each_player,
                stride: tree.width,
                column: 0,
            };
            let shap = &mut scratch.shap;
            tree_shap(tree, &scratch.projections, atoms, values, shap, self.isa);
            for (l, out) in out.iter_mut().enumerate() {
                let players = scratch.tree_phi.chunks_exact(tree.width).enumerate();
                for (player, values) in players {
                    if values.iter().all(|v| v.0[l] == 0.0) {
                        continue;
                    }
                    out.atoms.push((t as u32, tree.first_node[player]));
                    let start = out.values.len();
                    out.values.resize(start + width, 0.0);
                    let row_values = &mut out.values[start + tree.column..][..tree.width];
                    for (o, v) in row_values.iter_mut().zip(values) {
                        *o = v.0[l];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;
    use std::sync::atomic::AtomicBool;

    use super::super::lanes::{Isa, SMALL_BLOCK_ROWS};
    use super::super::sealed::Explained;
    use crate::atoms::Patches;
    use crate::{AtomKind, Forest, ForestParams, MaxFeatures, ScoreOptions};

    #[test]
    fn every_vector_and_block_width_gives_the_same_values() {
        // 6x6 images, a tenth of the cells missing, classes set by patch sums.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let (n, side) = (300, 6);
        let mut x = Array2::<f32>::zeros((n, side * side));
        let mut y = Vec::with_capacity(n);
        for i in 0..n {
            for j in 0..side * side {
                x[[i, j]] = (next() * 2.0 - 1.0) as f32;
            }
            let score = x[[i, 0]] + x[[i, 7]] - x[[i, 20]] + x[[i, 35]];
            y.push(((score + 2.0).max(0.0) as u32).min(2));
            for j in 0..side * side {
                if next() < 0.1 {
                    x[[i, j]] = f32::NAN;
                }
            }
        }
        let params = ForestParams {
            n_estimators: 4,
            atoms: AtomKind::Patches(Patches::new(vec![side, side], vec![1, 1], vec![2, 3])),
            max_features: MaxFeatures::Count(6),
            random_state: 4,
            ..ForestParams::default()
        };
        let forest = Forest::fit(&params, x.view(), &y, 3, None).unwrap();
        let mut explainer = forest.explainer().unwrap();
        let rows = x.slice(ndarray::s![..140, ..]);
        // On one thread, four full blocks of 32 rows, and one of 12.
        assert!(explainer.wide_blocks(rows.nrows(), 1));
        let options = ScoreOptions::new().with_threads(1);
        let widest = explainer.contributions(rows, &options).unwrap();
        let columns = explainer.contribution_columns().unwrap();
        for isa in [Isa::Plain, Isa::Avx2, Isa::Avx512] {
            if isa == Isa::Avx512 && Isa::widest() != Isa::Avx512
                || isa == Isa::Avx2 && Isa::widest() == Isa::Plain
            {
                continue; // not on this processor
            }
            explainer.isa = isa;
            let values = explainer.contributions(rows, &options).unwrap();
            assert_eq!(values, widest, "{isa:?}");
            // The same rows in blocks of the other width.
            let mut small = vec![0.0; rows.nrows() * columns];
            (explainer.contributions_in_blocks::<f32, SMALL_BLOCK_ROWS>(
                rows,
                &mut small,
                1,
                &AtomicBool::new(false),
            ))
            .unwrap();
            assert_eq!(small, widest.as_slice().unwrap(), "{isa:?}, small blocks");
        }
    }
}
