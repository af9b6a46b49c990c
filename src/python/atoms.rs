//! The atom dictionary of the engine parameters: one family, or a mixture.

use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::{bad_choice, get};
use crate::atoms::{GraphAtoms, Pooled, Reductions, SamplingGraph, SignedPatches};
use crate::{AtomKind, Patches};

/// Keys of a family in `params["dictionary"]`, besides "family" and "probability".
const FAMILY_KEYS: [&str; 13] = [
    "patch_min",
    "patch_max",
    "bands",
    "feature_combinations",
    "n_nodes",
    "edges",
    "min_size",
    "max_size",
    "signed",
    "base",
    "shift_min",
    "shift_max",
    "reduce",
];

/// The dictionary `params` name: "axis", "oblique", "patch" (the papers' families), or
/// "dictionary", a mixture listed in `params["dictionary"]`.
pub(super) fn parse_atoms(params: &Bound<'_, PyDict>) -> PyResult<AtomKind> {
    Ok(match get::<String>(params, "atoms")?.as_deref() {
        None | Some("axis") => AtomKind::AxisAligned,
        Some("oblique") => AtomKind::SparseOblique {
            feature_combinations: get(params, "feature_combinations")?.unwrap_or(1.5),
        },
        Some("patch") => AtomKind::Patches(patches(params, params)?),
        Some("dictionary") => {
            let families = params
                .get_item("dictionary")?
                .ok_or_else(|| PyValueError::new_err("atoms 'dictionary' needs dictionary"))?;
            let families = families
                .cast::<PyList>()
                .map_err(|_| PyTypeError::new_err("dictionary must be a list of dicts"))?;
            let mut mixture = Vec::with_capacity(families.len());
            for family in families.iter() {
                let family = family
                    .cast::<PyDict>()
                    .map_err(|_| PyTypeError::new_err("dictionary must be a list of dicts"))?;
                let probability: f64 = get(family, "probability")?.ok_or_else(|| {
                    PyValueError::new_err("each family of the dictionary needs a probability")
                })?;
                mixture.push((parse_family(params, family)?, probability));
            }
            AtomKind::Mixture(mixture)
        }
        Some(other) => {
            return Err(bad_choice(
                "atoms",
                other,
                "'axis', 'oblique', 'patch' or 'dictionary'",
            ))
        }
    })
}

fn parse_family(params: &Bound<'_, PyDict>, family: &Bound<'_, PyDict>) -> PyResult<AtomKind> {
    for key in family.keys() {
        let name: String = key.extract()?;
        if name != "family" && name != "probability" && !FAMILY_KEYS.contains(&name.as_str()) {
            return Err(PyValueError::new_err(format!(
                "unknown dictionary family parameter {name:?}"
            )));
        }
    }
    let name: String = get(family, "family")?
        .ok_or_else(|| PyValueError::new_err("each family of the dictionary needs a name"))?;
    let required = |key: &str| -> PyResult<usize> {
        get(family, key)?.ok_or_else(|| PyValueError::new_err(format!("{name} needs {key}")))
    };
    Ok(match name.as_str() {
        "axis" => AtomKind::AxisAligned,
        "oblique" => AtomKind::SparseOblique {
            feature_combinations: get(family, "feature_combinations")?.unwrap_or(1.5),
        },
        "patches" => AtomKind::Patches(patches(params, family)?),
        "signed" => AtomKind::SignedPatches(SignedPatches::new(
            patches(params, family)?,
            required("bands")?,
        )),
        "bumps" => AtomKind::Bumps(patches(params, family)?),
        "gabors" => AtomKind::Gabors(patches(params, family)?),
        "graph" => AtomKind::Graph(GraphAtoms {
            graph: graph(family, required("n_nodes")?)?,
            min_size: required("min_size")?,
            max_size: required("max_size")?,
            signed: get(family, "signed")?.unwrap_or(false),
        }),
        "pooled" => {
            let base = family
                .get_item("base")?
                .ok_or_else(|| PyValueError::new_err("pooled atoms need a base family"))?;
            let base = base
                .cast::<PyDict>()
                .map_err(|_| PyTypeError::new_err("a pooled family's base must be a dict"))?;
            let per_axis = |key: &str| -> PyResult<Vec<usize>> {
                get(family, key)?
                    .ok_or_else(|| PyValueError::new_err(format!("pooled atoms need {key}")))
            };
            AtomKind::Pooled(Pooled {
                family: Box::new(parse_family(params, base)?),
                shift_min: per_axis("shift_min")?,
                shift_max: per_axis("shift_max")?,
                reduce: match get::<String>(family, "reduce")?.as_deref() {
                    None | Some("max") => Reductions::Max,
                    Some("min") => Reductions::Min,
                    Some("both") => Reductions::Both,
                    Some(other) => {
                        return Err(bad_choice("reduce", other, "'max', 'min' or 'both'"))
                    }
                },
            })
        }
        other => {
            return Err(bad_choice(
                "family",
                other,
                "'axis', 'oblique', 'patches', 'signed', 'bumps', 'gabors', 'graph' or \
                 'pooled'",
            ))
        }
    })
}

/// Patches over `params`' image, with the extents `extents` gives.
fn patches(params: &Bound<'_, PyDict>, extents: &Bound<'_, PyDict>) -> PyResult<Patches> {
    let image_shape: Vec<usize> = get(params, "image_shape")?
        .ok_or_else(|| PyValueError::new_err("patch atoms need image_shape"))?;
    let n_axes = image_shape.len();
    let per_axis = |key: &str| -> PyResult<Vec<usize>> {
        get(extents, key)?.ok_or_else(|| PyValueError::new_err(format!("patch atoms need {key}")))
    };
    Ok(
        Patches::new(image_shape, per_axis("patch_min")?, per_axis("patch_max")?)
            .with_wrap(get(params, "wrap")?.unwrap_or_else(|| vec![false; n_axes]))
            .with_contiguous(get(params, "contiguous")?.unwrap_or_else(|| vec![true; n_axes])),
    )
}

/// The graph of `family["edges"]`, a (n_edges, 2) uint32 array, on `n_nodes` nodes.
fn graph(family: &Bound<'_, PyDict>, n_nodes: usize) -> PyResult<SamplingGraph> {
    let edges = family
        .get_item("edges")?
        .ok_or_else(|| PyValueError::new_err("graph atoms need edges"))?;
    let edges: PyReadonlyArray2<'_, u32> = edges.extract().map_err(|_| {
        PyTypeError::new_err("graph edges must be a 2-D numpy array of dtype uint32")
    })?;
    if edges.shape()[1] != 2 {
        return Err(PyValueError::new_err(format!(
            "graph edges must have shape (n_edges, 2), got {:?}",
            edges.shape()
        )));
    }
    let edges = edges.as_array();
    let pairs: Vec<(u32, u32)> = edges.rows().into_iter().map(|e| (e[0], e[1])).collect();
    SamplingGraph::from_edges(n_nodes, &pairs).map_err(|e| PyValueError::new_err(e.to_string()))
}
