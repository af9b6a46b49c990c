import numpy as np
import pytest

from morf_rs import (
    ManifoldObliqueForestClassifier,
    RandomForestClassifier,
    SparseObliqueForestClassifier,
)

FOREST_CLASSES = [
    ManifoldObliqueForestClassifier,
    SparseObliqueForestClassifier,
    RandomForestClassifier,
]


@pytest.fixture(params=FOREST_CLASSES, ids=lambda cls: cls.__name__)
def forest_class(request):
    return request.param


def make_blobs_data(n_samples=120, n_features=10, n_classes=3, random_state=0):
    """Separable-ish float64 data: class k has its mean shifted by k."""
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % n_classes
    X = rng.standard_normal((n_samples, n_features)) + y[:, None]
    return X, y


@pytest.fixture
def data():
    return make_blobs_data()
