//! The atom dictionary of the engine parameters: one family, or a mixture.

use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use serde::Deserialize;

use super::bad_choice;
use crate::atoms::{GraphAtoms, Pooled, Reductions, SamplingGraph, SignedPatches};
use crate::{AtomKind, Patches};

/// The key of the families of a mixture (`atoms="dictionary"`), a list of dicts that
/// may hold numpy arrays, read from the Python dict itself rather than through serde.
pub(super) const DICTIONARY_KEY: &str = "dictionary";

/// The atom parameters a forest and a boosted model share (flattened into theirs).
#[derive(Deserialize)]
pub(super) struct AtomInput {
    atoms: Option<String>,
    feature_combinations: Option<f64>,
    image_shape: Option<Vec<usize>>,
    patch_min: Option<Vec<usize>>,
    patch_max: Option<Vec<usize>>,
    wrap: Option<Vec<bool>>,
    contiguous: Option<Vec<bool>>,
}

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

/// The dictionary `input` names: "axis", "oblique", "patch" (the papers' families),
/// or "dictionary", the mixture `dictionary` lists.
pub(super) fn parse_atoms(
    input: &AtomInput,
    dictionary: Option<Bound<'_, PyAny>>,
) -> PyResult<AtomKind> {
    Ok(match input.atoms.as_deref() {
        None | Some("axis") => AtomKind::AxisAligned,
        Some("oblique") => AtomKind::SparseOblique {
            feature_combinations: input.feature_combinations.unwrap_or(1.5),
        },
        Some("patch") => AtomKind::Patches(patches(
            input,
            input.patch_min.clone(),
            input.patch_max.clone(),
        )?),
        Some("dictionary") => {
            let families = dictionary
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
                mixture.push((parse_family(input, family)?, probability));
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

fn parse_family(image: &AtomInput, family: &Bound<'_, PyDict>) -> PyResult<AtomKind> {
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
        "patches" => AtomKind::Patches(family_patches(image, family)?),
        "signed" => AtomKind::SignedPatches(SignedPatches::new(
            family_patches(image, family)?,
            required("bands")?,
        )),
        "bumps" => AtomKind::Bumps(family_patches(image, family)?),
        "gabors" => AtomKind::Gabors(family_patches(image, family)?),
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
                family: Box::new(parse_family(image, base)?),
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

/// Patches over `image`'s image_shape, wrap and contiguous, with the extents a
/// family of the dictionary gives.
fn family_patches(image: &AtomInput, family: &Bound<'_, PyDict>) -> PyResult<Patches> {
    patches(image, get(family, "patch_min")?, get(family, "patch_max")?)
}

/// Patches over `image`'s image_shape, wrap and contiguous, with these extents.
fn patches(
    image: &AtomInput,
    patch_min: Option<Vec<usize>>,
    patch_max: Option<Vec<usize>>,
) -> PyResult<Patches> {
    let image_shape = image
        .image_shape
        .clone()
        .ok_or_else(|| PyValueError::new_err("patch atoms need image_shape"))?;
    let n_axes = image_shape.len();
    let needed = |extents: Option<Vec<usize>>, key: &str| {
        extents.ok_or_else(|| PyValueError::new_err(format!("patch atoms need {key}")))
    };
    Ok(Patches::new(
        image_shape,
        needed(patch_min, "patch_min")?,
        needed(patch_max, "patch_max")?,
    )
    .with_wrap(image.wrap.clone().unwrap_or_else(|| vec![false; n_axes]))
    .with_contiguous(
        image
            .contiguous
            .clone()
            .unwrap_or_else(|| vec![true; n_axes]),
    ))
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

/// Reads `family[key]` of a family of the dictionary, or `None` when absent or None.
fn get<'py, T: FromPyObjectOwned<'py>>(
    family: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<Option<T>> {
    match family.get_item(key)? {
        Some(value) if !value.is_none() => value.extract::<T>().map(Some).map_err(|error| {
            let error: PyErr = error.into();
            if error.is_instance_of::<PyOverflowError>(value.py()) {
                let negative = value.lt(0).unwrap_or(false);
                return PyValueError::new_err(if negative {
                    format!("parameter {key} must not be negative, got {value}")
                } else {
                    format!("parameter {key} is too large: got {value}, at most 2^64 - 1")
                });
            }
            PyTypeError::new_err(format!(
                "parameter {key} has the wrong type: got {}",
                value
                    .get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ))
        }),
        _ => Ok(None),
    }
}
