//! The engine parameters from the dict the Python estimators build.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{Criterion, ForestParams, HonestPrior, MaxFeatures, MaxSamples};

/// Reads `params[key]`, or `None` when absent or None.
pub(crate) fn get<'py, T: FromPyObjectOwned<'py>>(
    params: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<Option<T>> {
    match params.get_item(key)? {
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

/// Every key `parse_params` reads; any other is a caller's typo.
const PARAM_KEYS: [&str; 23] = [
    "n_estimators",
    "atoms",
    "dictionary",
    "feature_combinations",
    "image_shape",
    "patch_min",
    "patch_max",
    "wrap",
    "contiguous",
    "max_features",
    "criterion",
    "max_depth",
    "min_samples_split",
    "min_samples_leaf",
    "min_weight_fraction_leaf",
    "min_impurity_decrease",
    "max_leaf_nodes",
    "ccp_alpha",
    "bootstrap",
    "max_samples",
    "honest_fraction",
    "honest_prior",
    "random_state",
];

pub(super) fn parse_params(params: &Bound<'_, PyDict>) -> PyResult<ForestParams> {
    for key in params.keys() {
        let name: String = key.extract()?;
        if !PARAM_KEYS.contains(&name.as_str()) {
            return Err(PyValueError::new_err(format!(
                "unknown engine parameter {name:?}"
            )));
        }
    }
    let mut parsed = ForestParams::default();
    let defaults = ForestParams::default();
    parsed.n_estimators = get(params, "n_estimators")?.unwrap_or(defaults.n_estimators);
    parsed.min_samples_split =
        get(params, "min_samples_split")?.unwrap_or(defaults.min_samples_split);
    parsed.min_samples_leaf = get(params, "min_samples_leaf")?.unwrap_or(defaults.min_samples_leaf);
    parsed.min_weight_fraction_leaf =
        get(params, "min_weight_fraction_leaf")?.unwrap_or(defaults.min_weight_fraction_leaf);
    parsed.min_impurity_decrease =
        get(params, "min_impurity_decrease")?.unwrap_or(defaults.min_impurity_decrease);
    parsed.max_depth = get(params, "max_depth")?;
    parsed.max_leaf_nodes = get(params, "max_leaf_nodes")?;
    parsed.ccp_alpha = get(params, "ccp_alpha")?.unwrap_or(defaults.ccp_alpha);
    parsed.bootstrap = get(params, "bootstrap")?.unwrap_or(defaults.bootstrap);
    parsed.honest_fraction = get(params, "honest_fraction")?.unwrap_or(defaults.honest_fraction);
    parsed.random_state = get(params, "random_state")?.unwrap_or(defaults.random_state);
    parsed.criterion = match get::<String>(params, "criterion")?.as_deref() {
        None | Some("gini") => Criterion::Gini,
        Some("entropy") => Criterion::Entropy,
        Some("squared_error") => Criterion::SquaredError,
        Some("poisson") => Criterion::Poisson,
        Some(other) => {
            return Err(bad_choice(
                "criterion",
                other,
                "'gini', 'entropy', 'squared_error' or 'poisson'",
            ))
        }
    };
    parsed.honest_prior = match get::<String>(params, "honest_prior")?.as_deref() {
        None | Some("empirical") => HonestPrior::Empirical,
        Some("uniform") => HonestPrior::Uniform,
        Some("ignore") => HonestPrior::Ignore,
        Some(other) => {
            return Err(bad_choice(
                "honest_prior",
                other,
                "'ignore', 'uniform' or 'empirical'",
            ))
        }
    };
    parsed.max_features = parse_max_features(params, defaults.max_features)?;
    parsed.max_samples = match params.get_item("max_samples")? {
        Some(value) if !value.is_none() => {
            Some(if value.is_instance_of::<pyo3::types::PyInt>() {
                MaxSamples::Count(get(params, "max_samples")?.expect("not None"))
            } else {
                MaxSamples::Fraction(value.extract().map_err(|_| {
                    PyTypeError::new_err("max_samples must be None, an int or a float")
                })?)
            })
        }
        _ => None,
    };
    parsed.atoms = super::atoms::parse_atoms(params)?;
    Ok(parsed)
}

/// `params["max_features"]`: a name, a count, a fraction or None (every feature);
/// `default` when absent.
pub(crate) fn parse_max_features(
    params: &Bound<'_, PyDict>,
    default: MaxFeatures,
) -> PyResult<MaxFeatures> {
    Ok(match params.get_item("max_features")? {
        None => default,
        Some(value) if value.is_none() => MaxFeatures::All,
        Some(value) => {
            if let Ok(name) = value.extract::<String>() {
                match name.as_str() {
                    "sqrt" => MaxFeatures::Sqrt,
                    "log2" => MaxFeatures::Log2,
                    other => return Err(bad_choice("max_features", other, "'sqrt' or 'log2'")),
                }
            } else if value.is_instance_of::<pyo3::types::PyInt>() {
                MaxFeatures::Count(get(params, "max_features")?.expect("not None"))
            } else {
                MaxFeatures::Fraction(value.extract().map_err(|_| {
                    PyTypeError::new_err(
                        "max_features must be 'sqrt', 'log2', an int, a float or None",
                    )
                })?)
            }
        }
    })
}

pub(crate) fn bad_choice(name: &str, got: &str, allowed: &str) -> PyErr {
    PyValueError::new_err(format!("{name} must be {allowed}, got {got:?}"))
}
