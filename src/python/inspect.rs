//! Inspection for every model binding: the leaves and paths of rows through the
//! trees ([`Inspect`]), and a tree's structure as numpy arrays, for users to draw,
//! export or study it.

use ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{score_rows, value_error, Samples};
use crate::atoms::{Reduce, MAX_POOL_AXES};
use crate::error::try_filled;
use crate::{Inspect, Leaves, Node, Tree};

/// The leaf id of each row of `x` in each of `model`'s `n_trees` trees
/// ([`Inspect::apply_into`]), written into `out` when given, else into a new array.
pub(super) fn apply<'py, M: Inspect + Sync>(
    py: Python<'py>,
    model: &M,
    n_trees: usize,
    x: &Bound<'py, PyAny>,
    n_threads: usize,
    out: Option<Bound<'py, PyArray2<i64>>>,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let samples = Samples::borrow(x)?;
    let out = match out {
        Some(out) => out,
        None => {
            let n_rows = x.len()?;
            let ids = try_filled(n_rows, n_trees, 0i64, "the leaf ids").map_err(value_error)?;
            Array2::from_shape_vec((n_rows, n_trees), ids)
                .expect("one value per sample and tree")
                .into_pyarray(py)
        }
    };
    {
        let mut write = out.try_readwrite()?;
        let target = write.as_array_mut();
        with_view!(samples, |view| score_rows(
            py,
            view.nrows(),
            n_trees,
            n_threads,
            |options| model.apply_into(view, target, options)
        ))?;
    }
    Ok(out)
}

/// The nodes each row of `x` passes through in `model`'s `n_trees` trees
/// ([`Inspect::decision_paths_into`]), written into `out`.
pub(super) fn decision_paths<'py, M: Inspect + Sync>(
    py: Python<'py>,
    model: &M,
    n_trees: usize,
    x: &Bound<'py, PyAny>,
    n_threads: usize,
    out: Bound<'py, PyArray2<u32>>,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let samples = Samples::borrow(x)?;
    {
        let mut write = out.try_readwrite()?;
        let target = write.as_array_mut();
        with_view!(samples, |view| score_rows(
            py,
            view.nrows(),
            n_trees,
            n_threads,
            |options| model.decision_paths_into(view, target, options)
        ))?;
    }
    Ok(out)
}

/// Marks "no child" and "no threshold" at leaves, as scikit-learn's `tree_` does.
const UNDEFINED: i64 = -1;
const NO_THRESHOLD: f64 = -2.0;

/// `pool_reduce` of splits that are not pooled, of maxima, and of minima.
const NOT_POOLED: i8 = 0;
const REDUCE_MAX: i8 = 1;
const REDUCE_MIN: i8 = -1;

/// Tree `index` of `trees` (a `model`'s) as [`tree_arrays`] gives it, or a ValueError
/// that says how many trees there are.
pub(super) fn tree_arrays_at<'py>(
    py: Python<'py>,
    trees: &[Tree],
    model: &str,
    index: usize,
    n_axes: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let tree = trees.get(index).ok_or_else(|| {
        PyValueError::new_err(format!(
            "tree index {index} out of range: the {model} has {} trees",
            trees.len()
        ))
    })?;
    tree_arrays(py, tree, n_axes)
}

/// `tree` as a dict of arrays indexed by node id: `children_left`, `children_right`
/// (-1 at leaves), `threshold` (-2 at leaves), `atom_ptr` (the atom of node `i` is
/// `atom_features[atom_ptr[i]..atom_ptr[i + 1]]` with `atom_weights` alike; empty at
/// leaves), `value` (n_nodes, width: leaf class distributions or mean values; 0 for
/// splits and leaves that cast no vote), `votes` (whether a node is a leaf that
/// votes), `missing_go_to_left` (where a split sends a missing projection), `n_node_samples`, `weighted_n_node_samples`, `impurity_decrease`,
/// and for pooled splits (whose atom is then the base atom) `pool_reduce` (1: maximum,
/// -1: minimum, 0: not pooled) with `pool_shift_low` and `pool_shift_high` (n_nodes,
/// `n_axes`: the window's shifts per image axis; 0 where not pooled) and `pool_wrap`
/// (alike: whether the axis wraps), and `prior` (width: the mean target of a value
/// tree's sample, what a forest predicts where no tree votes; 0 for class trees),
/// and `rescales_missing_cells` (the tree's rule on missing cells, `MissingCells`).
fn tree_arrays<'py>(py: Python<'py>, tree: &Tree, n_axes: usize) -> PyResult<Bound<'py, PyDict>> {
    let n_axes = n_axes.clamp(1, MAX_POOL_AXES);
    let nodes = tree.nodes();
    let n_nodes = nodes.len();
    let width = tree.leaves().width();
    let mut left = vec![UNDEFINED; n_nodes];
    let mut right = vec![UNDEFINED; n_nodes];
    let mut threshold = vec![NO_THRESHOLD; n_nodes];
    let mut atom_ptr = Vec::with_capacity(n_nodes + 1);
    let mut atom_features: Vec<i64> = Vec::new();
    let mut atom_weights: Vec<f32> = Vec::new();
    let mut value = vec![0.0f64; n_nodes * width];
    let mut votes = vec![false; n_nodes];
    let mut missing_go_to_left = vec![false; n_nodes];
    let mut reduce = vec![NOT_POOLED; n_nodes];
    let mut shift_low = vec![0i64; n_nodes * n_axes];
    let mut shift_high = vec![0i64; n_nodes * n_axes];
    let mut wrap = vec![false; n_nodes * n_axes];
    atom_ptr.push(0i64);
    for (id, node) in nodes.iter().enumerate() {
        match *node {
            Node::Split {
                right: r,
                threshold: t,
                atom_start,
                atom_len,
                missing_left,
            } => {
                let atom = tree.atom(atom_start, atom_len);
                atom_features.extend(atom.indices.iter().map(|&f| f as i64));
                atom_weights.extend_from_slice(atom.weights);
                (left[id], right[id], threshold[id]) = (id as i64 + 1, r as i64, t as f64);
                missing_go_to_left[id] = missing_left;
            }
            Node::SplitOnFeature {
                right: r,
                threshold: t,
                feature,
                weight,
                missing_left,
            } => {
                atom_features.push(feature as i64);
                atom_weights.push(weight);
                (left[id], right[id], threshold[id]) = (id as i64 + 1, r as i64, t as f64);
                missing_go_to_left[id] = missing_left;
            }
            Node::SplitPooled {
                right: r,
                threshold: t,
                atom_start,
                atom_len,
                window,
                missing_left,
            } => {
                let atom = tree.atom(atom_start, atom_len);
                atom_features.extend(atom.indices.iter().map(|&f| f as i64));
                atom_weights.extend_from_slice(atom.weights);
                (left[id], right[id], threshold[id]) = (id as i64 + 1, r as i64, t as f64);
                missing_go_to_left[id] = missing_left;
                let window = &tree.windows[window as usize];
                let axes = MAX_POOL_AXES - n_axes;
                for axis in 0..n_axes {
                    shift_low[id * n_axes + axis] = window.low[axes + axis] as i64;
                    shift_high[id * n_axes + axis] = window.high[axes + axis] as i64;
                    wrap[id * n_axes + axis] = window.wrap[axes + axis];
                }
                reduce[id] = match window.reduce {
                    Reduce::Max => REDUCE_MAX,
                    Reduce::Min => REDUCE_MIN,
                };
            }
            Node::Leaf { .. } => {
                let row = &mut value[id * width..(id + 1) * width];
                match tree.leaves() {
                    Leaves::Classes { .. } => {
                        if let Some(p) = tree.posterior(id) {
                            row.iter_mut().zip(p).for_each(|(v, &p)| *v = p as f64);
                            votes[id] = true;
                        }
                    }
                    Leaves::Values { .. } => {
                        if let Some(means) = tree.leaf_values(id) {
                            row.copy_from_slice(means);
                            votes[id] = true;
                        }
                    }
                }
            }
        }
        atom_ptr.push(atom_features.len() as i64);
    }
    let dict = PyDict::new(py);
    dict.set_item("children_left", left.into_pyarray(py))?;
    dict.set_item("children_right", right.into_pyarray(py))?;
    dict.set_item("threshold", threshold.into_pyarray(py))?;
    dict.set_item("atom_ptr", atom_ptr.into_pyarray(py))?;
    dict.set_item("atom_features", atom_features.into_pyarray(py))?;
    dict.set_item("atom_weights", atom_weights.into_pyarray(py))?;
    let value = ndarray::Array2::from_shape_vec((n_nodes, width), value)
        .expect("one value per node and column");
    dict.set_item("value", value.into_pyarray(py))?;
    dict.set_item("votes", votes.into_pyarray(py))?;
    dict.set_item("missing_go_to_left", missing_go_to_left.into_pyarray(py))?;
    let samples: Vec<i64> = tree.node_samples().iter().map(|&n| n as i64).collect();
    dict.set_item("n_node_samples", samples.into_pyarray(py))?;
    let weights: Vec<f64> = tree.node_weights().iter().map(|&w| w as f64).collect();
    dict.set_item("weighted_n_node_samples", weights.into_pyarray(py))?;
    let decreases = tree.impurity_decreases.clone();
    dict.set_item("impurity_decrease", decreases.into_pyarray(py))?;
    dict.set_item("pool_reduce", reduce.into_pyarray(py))?;
    for (name, shifts) in [
        ("pool_shift_low", shift_low),
        ("pool_shift_high", shift_high),
    ] {
        let shifts = ndarray::Array2::from_shape_vec((n_nodes, n_axes), shifts)
            .expect("one shift per node and axis");
        dict.set_item(name, shifts.into_pyarray(py))?;
    }
    let wrap = ndarray::Array2::from_shape_vec((n_nodes, n_axes), wrap)
        .expect("one flag per node and axis");
    dict.set_item("pool_wrap", wrap.into_pyarray(py))?;
    let prior = match tree.leaves() {
        Leaves::Values { prior, .. } => prior.clone(),
        Leaves::Classes { .. } => vec![0.0; width],
    };
    dict.set_item("prior", prior.into_pyarray(py))?;
    let rescales = tree.missing_cells() == crate::atoms::MissingCells::RescaledPresent;
    dict.set_item("rescales_missing_cells", rescales)?;
    Ok(dict)
}
