//! A Python parameter dict read into a serde struct, so that each engine parameter is
//! named once, by a field of the struct, and a key no field names is refused.
//!
//! The estimators pass plain values (None, bool, int, float, str, lists of those); they
//! cross as JSON values, which serde then reads into the struct. Errors name the
//! parameter and say what it must be: TypeError for a value of the wrong type,
//! ValueError for one out of range or a key no field names.

use std::collections::BTreeMap;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// The keys of a mapping that no field of the struct took; a field
/// `#[serde(flatten)] unknown: UnknownKeys` collects them (`deny_unknown_fields` does
/// not work beside flattened fields).
pub(super) type UnknownKeys = BTreeMap<String, IgnoredAny>;

/// For a field `Option<Option<T>>` with `#[serde(default, deserialize_with =
/// "present")]`: `None` when the key is absent, `Some(None)` when it is None.
pub(super) fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// `params` read into `T`, leaving out the keys in `skipped` (values serde cannot hold,
/// which the caller reads itself); `unknown` gives the keys no field of `T` took.
pub(super) fn from_dict<T: DeserializeOwned>(
    params: &Bound<'_, PyDict>,
    skipped: &[&str],
    unknown: impl Fn(&T) -> &UnknownKeys,
) -> PyResult<T> {
    let mut entries = Map::new();
    for (key, value) in params.iter() {
        let key: String = key
            .extract()
            .map_err(|_| PyTypeError::new_err("engine parameter names must be strings"))?;
        if !skipped.contains(&key.as_str()) {
            let value = to_json(&key, &value)?;
            entries.insert(key, value);
        }
    }
    let parsed = match serde_json::from_value::<T>(Value::Object(entries.clone())) {
        Ok(parsed) => parsed,
        Err(error) => return Err(blame::<T>(entries, error)),
    };
    if let Some(name) = unknown(&parsed).keys().next() {
        return Err(PyValueError::new_err(format!(
            "unknown engine parameter {name:?}"
        )));
    }
    Ok(parsed)
}

/// `error` as the Python exception it stands for, naming the entry that fails on its
/// own (every field of `T` is optional, so only a bad value fails alone).
fn blame<T: DeserializeOwned>(entries: Map<String, Value>, error: serde_json::Error) -> PyErr {
    for (key, value) in entries {
        let single = Value::Object(Map::from_iter([(key.clone(), value)]));
        if let Err(error) = serde_json::from_value::<T>(single) {
            return classify(&format!("parameter {key}"), error);
        }
    }
    classify("an engine parameter", error)
}

/// A serde error about `subject` as a TypeError (a value of the wrong type) or a
/// ValueError (a value out of range).
fn classify(subject: &str, error: serde_json::Error) -> PyErr {
    let message = error.to_string();
    if message.starts_with("invalid type") {
        PyTypeError::new_err(format!("{subject} has the wrong type: {message}"))
    } else {
        PyValueError::new_err(format!("{subject} is invalid: {message}"))
    }
}

/// `value` as JSON; ints beyond 64 bits and non-finite floats are refused here, since
/// JSON cannot hold them.
fn to_json(key: &str, value: &Bound<'_, PyAny>) -> PyResult<Value> {
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(Value::String(value.extract()?));
    }
    if let Ok(list) = value.cast::<PyList>() {
        return list.iter().map(|item| to_json(key, &item)).collect();
    }
    if let Ok(tuple) = value.cast::<PyTuple>() {
        return tuple.iter().map(|item| to_json(key, &item)).collect();
    }
    if !value.is_instance_of::<PyFloat>() {
        if let Ok(count) = value.extract::<u64>() {
            return Ok(Value::from(count));
        }
        if let Ok(count) = value.extract::<i64>() {
            return Ok(Value::from(count));
        }
        if value.is_instance_of::<PyInt>() {
            return Err(PyValueError::new_err(format!(
                "parameter {key} is too large: got {value}, at most 2^64 - 1"
            )));
        }
    }
    if let Ok(number) = value.extract::<f64>() {
        return serde_json::Number::from_f64(number)
            .map(Value::Number)
            .ok_or_else(|| {
                PyValueError::new_err(format!("parameter {key} must be finite, got {value}"))
            });
    }
    Err(PyTypeError::new_err(format!(
        "parameter {key} has the wrong type: got {}",
        value
            .get_type()
            .name()
            .map_or_else(|_| "?".into(), |name| name.to_string())
    )))
}
