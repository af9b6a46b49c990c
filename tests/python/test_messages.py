"""The messages a newcomer meets first: short, one thing to fix, the right noun."""

import re

import numpy as np
import pandas as pd
import pytest

import morf_rs

ESTIMATORS = [
    morf_rs.RandomForestClassifier,
    morf_rs.ManifoldObliqueForestRegressor,
    morf_rs.GradientBoostingClassifier,
    morf_rs.SparseObliqueGradientBoostingRegressor,
]
rng = np.random.default_rng(0)
X = rng.standard_normal((40, 6))
Y = np.arange(40) % 2


def _fit(cls, X_fit=X, y_fit=Y):
    return cls(n_estimators=2, random_state=0).fit(X_fit, y_fit)


@pytest.fixture(params=ESTIMATORS, ids=lambda cls: cls.__name__)
def cls(request):
    return request.param


def test_a_1d_X_says_to_reshape_without_printing_it(cls):
    with pytest.raises(ValueError, match="X must be 2-D") as caught:
        _fit(cls, np.arange(5000.0), np.arange(5000) % 2)
    message = str(caught.value)
    assert message.startswith("X must be 2-D with one sample per row")
    assert "shape (5000,)" in message
    assert "X.reshape(-1, 1)" in message
    assert len(message) < 250  # not the 5,000 values
    fitted = _fit(cls)
    with pytest.raises(ValueError, match=r"1-D array of shape \(6,\)"):
        fitted.predict(X[0])


@pytest.mark.parametrize(
    ("X_text", "where"),
    [
        (np.where(np.arange(6) == 4, "2.5", "1").repeat(40).reshape(6, 40).T, "'1'"),
        (X.astype(object), "'seven' at row 3, column 4"),
        (pd.DataFrame(X).assign(extra="7"), "'7' at column 'extra', row 0"),
    ],
    ids=["numbers-as-text", "word", "dataframe-column"],
)
def test_text_in_X_is_refused_even_when_it_reads_as_numbers(cls, X_text, where):
    if X_text.__class__ is np.ndarray and X_text.dtype == object:
        X_text = X_text.copy()
        X_text[3, 4] = "seven"
    with pytest.raises(ValueError, match="X holds text") as caught:
        _fit(cls, X_text)
    message = str(caught.value)
    assert message.startswith(f"X holds text ({where}")
    assert "X must be numeric. Convert" in message  # two sentences, apart
    assert "np.str_" not in message
    fitted = _fit(cls)
    with pytest.raises(ValueError, match=re.escape("X holds text ('1' at row 0")):
        fitted.predict(np.full((2, 6), "1"))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_infinity_in_y_names_the_row_and_the_fix(cls, bad):
    y = Y.astype(float)
    y[[7, 9]] = bad
    what = "NaN" if np.isnan(bad) else "infinity"
    with pytest.raises(
        ValueError,
        match=rf"^y contains {what} \(first at row 7; 2 row\(s\) in all\); drop",
    ):
        _fit(cls, X, y)


def test_an_unknown_argument_names_the_class(cls):
    with pytest.raises(TypeError, match=rf"{cls.__name__}.*'n_tree'"):
        cls(n_tree=3)


def test_the_infinity_message_speaks_of_no_particular_model(cls):
    X_inf = X.copy()
    X_inf[1, 2] = np.inf
    with pytest.raises(ValueError, match="infinity") as caught:
        _fit(cls, X_inf)
    assert "forest" not in str(caught.value)


def test_booster_docstrings_recommend_only_their_own_parameters():
    for cls in (
        morf_rs.ManifoldObliqueGradientBoostingClassifier,
        morf_rs.ManifoldObliqueGradientBoostingRegressor,
        morf_rs.SparseObliqueGradientBoostingClassifier,
        morf_rs.GradientBoostingRegressor,
    ):
        params = set(cls().get_params())
        named = set(re.findall(r"``(\w+)=", cls.__doc__))
        assert named <= params, named - params
