//! The contributions of rows, computed in parallel: every tree's TreeSHAP values of
//! each row, shared among features or kept per atom.

use ndarray::{Array2, Array3, ArrayView2, ArrayViewMut2};

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::lanes::{Isa, Lanes, LANES};
use super::players::{atom_key, ExplainedTree};
use super::share::{share_block, BlockShares};
use super::treeshap::{tree_shap, PlayerValues, Scratch};
use super::AtomContributions;
use crate::atoms::Atom;
use crate::data::{Feature, Rows};
use crate::error::{invalid, try_filled, Result};
use crate::runtime::control::is_cancelled;
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::{new_output, output_rows, score_row_chunks};

/// Deepest tree whose contributions are computed: TreeSHAP walks a tree recursively.
pub const MAX_EXPLAINED_DEPTH: usize = 1024;

/// Rows explained together: explaining one row takes as long as scoring thousands,
/// so chunks are small (two blocks of [`LANES`] rows) and threads share even a few
/// rows.
const EXPLAIN_CHUNK: usize = 2 * LANES;

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

/// The buffers of one chunk of rows at a time.
#[derive(Default)]
struct BlockScratch {
    shap: Scratch,
    /// Per atom, the projections of the block's rows.
    projections: Vec<[f32; LANES]>,
    /// Per atom and output, the block's values; all 0 between blocks.
    phi: Vec<Lanes>,
    /// Per player of one tree and output, the block's values.
    tree_phi: Vec<Lanes>,
    shares: BlockShares,
}

/// The buffers of one call, which its chunks take in turn: a chunk is a few blocks,
/// and the buffers hold a value per atom, output and lane.
#[derive(Default)]
struct ScratchPool(Mutex<Vec<BlockScratch>>);

impl ScratchPool {
    /// Buffers for `chunks` chunks at once, each with a table of `table` values per
    /// lane (atoms times outputs), or [`MorfError::OutOfMemory`](crate::MorfError)
    /// when the memory cannot be had: a model of many atoms and outputs needs 64
    /// bytes per atom and output on each thread.
    fn for_chunks(chunks: usize, table: usize) -> Result<ScratchPool> {
        let what = "the contributions' values per atom and output";
        let scratches = (0..chunks)
            .map(|_| {
                let phi = try_filled(table, 1, Lanes::ZERO, what)?;
                Ok(BlockScratch {
                    phi,
                    ..BlockScratch::default()
                })
            })
            .collect::<Result<_>>()?;
        Ok(ScratchPool(Mutex::new(scratches)))
    }

    fn take(&self) -> BlockScratch {
        let mut pool = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        pool.pop().unwrap_or_default()
    }

    fn give_back(&self, scratch: BlockScratch) {
        let mut pool = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        pool.push(scratch);
    }
}

/// The rows of block `block` of `rows` (at most [`LANES`]), and its lanes' rows: the
/// last row again in the lanes past them.
fn block_rows<'r, T: Feature>(rows: &'r Rows<'_, T>, block: usize) -> (usize, [&'r [T]; LANES]) {
    let first = block * LANES;
    let n = (rows.n_samples - first).min(LANES);
    (n, std::array::from_fn(|l| rows.row(first + l.min(n - 1))))
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
            let slots = (0..tree.n_players())
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
            let chunks = threads.min(x.nrows().div_ceil(EXPLAIN_CHUNK));
            let pool = ScratchPool::for_chunks(chunks, self.atoms.len() * self.width)?;
            score_row_chunks(
                self.n_features,
                x,
                out,
                columns,
                EXPLAIN_CHUNK,
                threads,
                cancel,
                |_, rows, out| {
                    let mut scratch = pool.take();
                    for (block, out) in out.chunks_mut(LANES * columns).enumerate() {
                        if is_cancelled(cancel) {
                            break;
                        }
                        let (n, lanes) = block_rows(rows, block);
                        self.block_contributions(&lanes, n, out, &mut scratch);
                    }
                    pool.give_back(scratch);
                },
            )
        })?
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
        let pool = ScratchPool::default();
        options.install_costly(x.nrows(), |threads| {
            score_row_chunks(
                self.n_features,
                x,
                &mut per_row,
                1,
                EXPLAIN_CHUNK,
                threads,
                cancel,
                |_, rows, out| {
                    let mut scratch = pool.take();
                    for (block, out) in out.chunks_mut(LANES).enumerate() {
                        if is_cancelled(cancel) {
                            break;
                        }
                        let (_, lanes) = block_rows(rows, block);
                        self.block_atoms(&lanes, out, &mut scratch);
                    }
                    pool.give_back(scratch);
                },
            )
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

    /// Values per row of the contributions: (features + 1) * outputs.
    fn contribution_columns(&self) -> Result<usize> {
        (self.n_features + 1)
            .checked_mul(self.width)
            .ok_or_else(|| invalid("X", "too many features and outputs to explain"))
    }

    /// Projects the rows of a block on every atom.
    fn project<T: Feature>(&self, rows: &[&[T]; LANES], scratch: &mut BlockScratch) {
        scratch.projections.clear();
        (scratch.projections)
            .extend((self.atoms.iter()).map(|atom| std::array::from_fn(|l| atom.project(rows[l]))));
    }

    /// Writes the contributions of the first `n` rows of a block into `out`: per row,
    /// per feature, then the expected value, `width` outputs each.
    fn block_contributions<T: Feature>(
        &self,
        rows: &[&[T]; LANES],
        n: usize,
        out: &mut [f64],
        scratch: &mut BlockScratch,
    ) {
        let width = self.width;
        self.project(rows, scratch);
        // Every tree's values per atom first, then each atom's shared once.
        scratch.phi.resize(self.atoms.len() * width, Lanes::ZERO);
        for (tree, atoms) in self.trees.iter().zip(&self.tree_atoms) {
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
    /// one per row.
    fn block_atoms<T: Feature>(
        &self,
        rows: &[&[T]; LANES],
        out: &mut [RowAtoms],
        scratch: &mut BlockScratch,
    ) {
        let width = self.width;
        self.project(rows, scratch);
        for (t, (tree, atoms)) in self.trees.iter().zip(&self.tree_atoms).enumerate() {
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

    use super::super::lanes::Isa;
    use super::super::sealed::Explained;
    use crate::atoms::Patches;
    use crate::{AtomKind, Forest, ForestParams, MaxFeatures, ScoreOptions};

    #[test]
    fn every_vector_width_gives_the_same_values() {
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
        let rows = x.slice(ndarray::s![..29, ..]);
        let options = ScoreOptions::new();
        let widest = explainer.contributions(rows, &options).unwrap();
        for isa in [Isa::Plain, Isa::Avx2, Isa::Avx512] {
            if isa == Isa::Avx512 && Isa::detect() != Isa::Avx512
                || isa == Isa::Avx2 && Isa::detect() == Isa::Plain
            {
                continue; // not on this processor
            }
            explainer.isa = isa;
            let values = explainer.contributions(rows, &options).unwrap();
            assert_eq!(values, widest, "{isa:?}");
        }
    }
}
