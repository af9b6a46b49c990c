"""Public namespaces show what they export and nothing else."""

import importlib

import pytest

import morf_rs
from morf_rs import datasets, dictionary


@pytest.mark.parametrize("name", ["morf_rs", "morf_rs.datasets", "morf_rs.dictionary"])
def test_dir_and_star_import_give_exactly_all(name):
    module = importlib.import_module(name)
    public = sorted(module.__all__)
    star = {}
    exec(f"from {name} import *", star)
    assert sorted(k for k in star if k != "__builtins__") == public
    listed = [n for n in dir(module) if not n.startswith("_") or n in public]
    assert sorted(listed) == public
    for attribute in public:
        getattr(module, attribute)


@pytest.mark.parametrize(
    ("module", "helpers"),
    [
        (morf_rs, ["version", "PackageNotFoundError", "np", "annotations"]),
        (datasets, ["np", "annotations", "math", "numbers", "CIRCLE_LENGTH"]),
        (dictionary, ["np", "sp", "annotations", "dataclass", "Geometry"]),
    ],
)
def test_imported_helpers_are_not_exported(module, helpers):
    assert not set(helpers) & (set(module.__all__) | set(dir(module)))


def test_what_each_module_exports():
    assert set(datasets.__all__) == {
        name for name in vars(datasets) if name.startswith("make_")
    }
    estimators = [
        name for name in morf_rs.__all__ if name.endswith(("Classifier", "Regressor"))
    ]
    assert len(estimators) >= 3
    assert morf_rs.datasets is datasets
    assert morf_rs.dictionary is dictionary
