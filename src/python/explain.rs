//! Bindings of contributions (TreeSHAP over atoms), shared by forests and boosted
//! models: the engine runs without the GIL, and Ctrl-C stops it.

use std::sync::atomic::AtomicBool;

use numpy::{IntoPyArray, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::interrupt::{run_interruptible, INLINE_WALKS};
use super::{value_error, Samples};
use crate::{Explain, ScoreOptions};

/// Scoring walks one explained row costs, roughly: TreeSHAP visits every node of
/// every tree for each row.
const WALKS_PER_ROW: usize = 1 << 10;

/// Runs `work` on `n_rows` rows of `model` without the GIL; Ctrl-C stops it unless
/// it is short enough to run on the calling thread.
fn run<M: Explain + Sync, R: Send>(
    py: Python<'_>,
    model: &M,
    n_rows: usize,
    n_threads: usize,
    work: impl FnOnce(&ScoreOptions<'_>) -> crate::Result<R> + Send,
) -> PyResult<R> {
    let cancel = AtomicBool::new(false);
    let options = ScoreOptions::new()
        .with_threads(n_threads)
        .with_cancel(&cancel);
    let walks = n_rows
        .saturating_mul(model.n_explained_trees())
        .saturating_mul(WALKS_PER_ROW);
    let result = if walks < INLINE_WALKS {
        py.detach(|| work(&options))
    } else {
        run_interruptible(py, &cancel, || work(&options), || Ok(()))?
    };
    result.map_err(value_error)
}

/// The contributions of `x`'s rows written into `out`, shape (n_samples,
/// (n_features + 1) * n_outputs).
pub(super) fn contributions<'py, M: Explain + Sync>(
    py: Python<'py>,
    model: &M,
    x: &Bound<'py, PyAny>,
    n_threads: usize,
    out: Bound<'py, PyArray2<f64>>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let samples = Samples::borrow(x)?;
    {
        let mut write = out.try_readwrite()?;
        let target = write.as_array_mut();
        with_view!(samples, |view| run(
            py,
            model,
            view.nrows(),
            n_threads,
            |options| { model.contributions_into(view, target, options) }
        ))?;
    }
    Ok(out)
}

/// The per-atom contributions of `x`'s rows as a dict of arrays: `sample`, `tree`,
/// `node` (int64, one per entry), `values` (entries, outputs) and `expected_value`.
pub(super) fn atom_contributions<'py, M: Explain + Sync>(
    py: Python<'py>,
    model: &M,
    x: &Bound<'py, PyAny>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let samples = Samples::borrow(x)?;
    let atoms = with_view!(samples, |view| run(
        py,
        model,
        view.nrows(),
        n_threads,
        |options| { model.atom_contributions(view, options) }
    ))?;
    let widen = |v: Vec<u32>| v.into_iter().map(i64::from).collect::<Vec<_>>();
    let dict = PyDict::new(py);
    dict.set_item("sample", widen(atoms.sample).into_pyarray(py))?;
    dict.set_item("tree", widen(atoms.tree).into_pyarray(py))?;
    dict.set_item("node", widen(atoms.node).into_pyarray(py))?;
    dict.set_item("values", atoms.values.into_pyarray(py))?;
    dict.set_item("expected_value", atoms.expected_value.into_pyarray(py))?;
    Ok(dict)
}
