//! The forest's engine parameters from the dict the Python estimators build.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Deserialize;
use serde_json::Value;

use super::atoms::{parse_atoms, AtomInput, DICTIONARY_KEY};
use super::mapping::{from_dict, present, UnknownKeys};
use crate::{Criterion, ForestParams, HonestPrior, MaxFeatures, MaxSamples};

/// A forest's parameters, by their scikit-learn names; absent or None means the
/// engine's default (`max_features=None` means every feature).
#[derive(Deserialize)]
struct ForestInput {
    n_estimators: Option<usize>,
    #[serde(default, deserialize_with = "present")]
    max_features: Option<Option<Value>>,
    criterion: Option<String>,
    max_depth: Option<usize>,
    min_samples_split: Option<usize>,
    min_samples_leaf: Option<usize>,
    min_weight_fraction_leaf: Option<f64>,
    min_impurity_decrease: Option<f64>,
    max_leaf_nodes: Option<usize>,
    ccp_alpha: Option<f64>,
    max_bins: Option<usize>,
    bootstrap: Option<bool>,
    balanced_classes_per_tree: Option<bool>,
    max_samples: Option<Value>,
    honest_fraction: Option<f64>,
    honest_prior: Option<String>,
    random_state: Option<u64>,
    #[serde(flatten)]
    atoms: AtomInput,
    #[serde(flatten)]
    unknown: UnknownKeys,
}

pub(super) fn parse_params(params: &Bound<'_, PyDict>) -> PyResult<ForestParams> {
    let input: ForestInput = from_dict(params, &[DICTIONARY_KEY], |input: &ForestInput| {
        &input.unknown
    })?;
    let defaults = ForestParams::default();
    Ok(ForestParams {
        n_estimators: input.n_estimators.unwrap_or(defaults.n_estimators),
        atoms: parse_atoms(&input.atoms, params.get_item(DICTIONARY_KEY)?)?,
        max_features: max_features(input.max_features, defaults.max_features)?,
        criterion: match input.criterion.as_deref() {
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
        },
        max_depth: input.max_depth,
        max_leaf_nodes: input.max_leaf_nodes,
        min_samples_split: input
            .min_samples_split
            .unwrap_or(defaults.min_samples_split),
        min_samples_leaf: input.min_samples_leaf.unwrap_or(defaults.min_samples_leaf),
        min_weight_fraction_leaf: input
            .min_weight_fraction_leaf
            .unwrap_or(defaults.min_weight_fraction_leaf),
        min_impurity_decrease: input
            .min_impurity_decrease
            .unwrap_or(defaults.min_impurity_decrease),
        ccp_alpha: input.ccp_alpha.unwrap_or(defaults.ccp_alpha),
        max_bins: input.max_bins,
        bootstrap: input.bootstrap.unwrap_or(defaults.bootstrap),
        balanced_classes_per_tree: input
            .balanced_classes_per_tree
            .unwrap_or(defaults.balanced_classes_per_tree),
        max_samples: match input.max_samples {
            None => None,
            Some(value) => Some(match count_or_fraction("max_samples", value)? {
                CountOrFraction::Count(count) => MaxSamples::Count(count),
                CountOrFraction::Fraction(fraction) => MaxSamples::Fraction(fraction),
            }),
        },
        honest_fraction: input.honest_fraction.unwrap_or(defaults.honest_fraction),
        honest_prior: match input.honest_prior.as_deref() {
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
        },
        random_state: input.random_state.unwrap_or(defaults.random_state),
        n_threads: defaults.n_threads,
    })
}

/// `max_features`: a name, a count, a fraction or None (every feature); `default`
/// when absent.
pub(crate) fn max_features(
    value: Option<Option<Value>>,
    default: MaxFeatures,
) -> PyResult<MaxFeatures> {
    Ok(match value {
        None => default,
        Some(None) => MaxFeatures::All,
        Some(Some(Value::String(name))) => match name.as_str() {
            "sqrt" => MaxFeatures::Sqrt,
            "log2" => MaxFeatures::Log2,
            other => return Err(bad_choice("max_features", other, "'sqrt' or 'log2'")),
        },
        Some(Some(value @ Value::Number(_))) => match count_or_fraction("max_features", value)? {
            CountOrFraction::Count(count) => MaxFeatures::Count(count),
            CountOrFraction::Fraction(fraction) => MaxFeatures::Fraction(fraction),
        },
        Some(Some(_)) => {
            return Err(PyTypeError::new_err(
                "max_features must be 'sqrt', 'log2', an int, a float or None",
            ))
        }
    })
}

/// A value that is a count when an int and a fraction when a float.
pub(crate) enum CountOrFraction {
    /// An int of at least 0.
    Count(usize),
    /// A float.
    Fraction(f64),
}

/// `value` of the parameter `name` as a count or a fraction.
pub(crate) fn count_or_fraction(name: &str, value: Value) -> PyResult<CountOrFraction> {
    match value {
        Value::Number(number) if number.is_f64() => Ok(CountOrFraction::Fraction(
            number.as_f64().expect("a float number"),
        )),
        Value::Number(number) => number
            .as_u64()
            .and_then(|count| usize::try_from(count).ok())
            .map(CountOrFraction::Count)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "parameter {name} must not be negative, got {number}"
                ))
            }),
        _ => Err(PyTypeError::new_err(format!(
            "{name} must be None, an int or a float"
        ))),
    }
}

pub(crate) fn bad_choice(name: &str, got: &str, allowed: &str) -> PyErr {
    PyValueError::new_err(format!("{name} must be {allowed}, got {got:?}"))
}
