//! The contributions of rows, computed in parallel: every tree's TreeSHAP values of
//! each row, shared among features or kept per atom.

use ndarray::{Array2, Array3, ArrayView2, ArrayViewMut2};

use std::collections::HashMap;

use super::players::{atom_key, ExplainedTree};
use super::share::feature_shares;
use super::treeshap::{tree_shap, PlayerValues, Scratch};
use super::AtomContributions;
use crate::atoms::Atom;
use crate::data::Feature;
use crate::error::{invalid, Result};
use crate::runtime::control::is_cancelled;
use crate::runtime::options::ScoreOptions;
use crate::runtime::rows::{new_output, output_rows, score_row_chunks};

/// Deepest tree whose contributions are computed: TreeSHAP walks a tree recursively.
pub const MAX_EXPLAINED_DEPTH: usize = 1024;

/// Rows explained together: explaining one row takes as long as scoring thousands,
/// so chunks are small and threads share even a few rows.
const EXPLAIN_CHUNK: usize = 16;

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
}

/// One thread's buffers.
#[derive(Default)]
struct RowScratch {
    shap: Scratch,
    /// Per atom, the row's projection.
    projections: Vec<f32>,
    /// Per atom (or player), the values of each output.
    phi: Vec<f64>,
    shares: Vec<(u32, f64)>,
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
            score_row_chunks(
                self.n_features,
                x,
                out,
                columns,
                EXPLAIN_CHUNK,
                threads,
                cancel,
                |_, rows, out| {
                    let mut scratch = RowScratch::default();
                    for (r, row_out) in out.chunks_exact_mut(columns).enumerate() {
                        if is_cancelled(cancel) {
                            return;
                        }
                        self.row_contributions(rows.row(r), row_out, &mut scratch);
                    }
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
                    let mut scratch = RowScratch::default();
                    for (r, row_out) in out.iter_mut().enumerate() {
                        if is_cancelled(cancel) {
                            return;
                        }
                        self.row_atoms(rows.row(r), row_out, &mut scratch);
                    }
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

    /// Projects `row` on every atom.
    fn project<T: Feature>(&self, row: &[T], scratch: &mut RowScratch) {
        scratch.projections.clear();
        (scratch.projections).extend(self.atoms.iter().map(|atom| atom.project(row)));
    }

    /// Writes `row`'s contributions into `out`: per feature, then the expected value,
    /// `width` outputs each.
    fn row_contributions<T: Feature>(&self, row: &[T], out: &mut [f64], scratch: &mut RowScratch) {
        let width = self.width;
        self.project(row, scratch);
        // Every tree's values per atom first, then each atom's shared once.
        scratch.phi.clear();
        scratch.phi.resize(self.atoms.len() * width, 0.0);
        for (tree, atoms) in self.trees.iter().zip(&self.tree_atoms) {
            let values = PlayerValues {
                values: &mut scratch.phi,
                rows: atoms,
                stride: width,
                column: tree.column,
            };
            tree_shap(tree, &scratch.projections, atoms, values, &mut scratch.shap);
        }
        out.fill(0.0);
        for (atom, values) in self.atoms.iter().zip(scratch.phi.chunks_exact(width)) {
            if values.iter().all(|&v| v == 0.0) {
                continue;
            }
            feature_shares(atom, row, &mut scratch.shares);
            for &(feature, share) in &scratch.shares {
                let at = feature as usize * width;
                for (o, &v) in out[at..at + width].iter_mut().zip(values) {
                    *o += share * v;
                }
            }
        }
        out[self.n_features * width..].copy_from_slice(&self.expected);
    }

    /// Records `row`'s contributions per tree and atom into `out`.
    fn row_atoms<T: Feature>(&self, row: &[T], out: &mut RowAtoms, scratch: &mut RowScratch) {
        let width = self.width;
        self.project(row, scratch);
        for (t, (tree, atoms)) in self.trees.iter().zip(&self.tree_atoms).enumerate() {
            scratch.phi.clear();
            scratch.phi.resize(tree.n_players() * tree.width, 0.0);
            let values = PlayerValues {
                values: &mut scratch.phi,
                rows: &self.each_player,
                stride: tree.width,
                column: 0,
            };
            tree_shap(tree, &scratch.projections, atoms, values, &mut scratch.shap);
            for (player, values) in scratch.phi.chunks_exact(tree.width).enumerate() {
                if values.iter().all(|&v| v == 0.0) {
                    continue;
                }
                out.atoms.push((t as u32, tree.first_node[player]));
                let start = out.values.len();
                out.values.resize(start + width, 0.0);
                out.values[start + tree.column..][..tree.width].copy_from_slice(values);
            }
        }
    }
}
