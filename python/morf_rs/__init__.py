"""morf_rs: Manifold Oblique Random Forests with a Rust engine.

Three families of scikit-learn forests share one engine and differ in the split
directions their trees try: :class:`ManifoldObliqueForestClassifier` and
:class:`ManifoldObliqueForestRegressor` (patches of an image or windows of a
signal), :class:`SparseObliqueForestClassifier` and
:class:`SparseObliqueForestRegressor` (sparse random combinations of features),
:class:`RandomForestClassifier` and :class:`RandomForestRegressor` (single
features). :mod:`morf_rs.dictionary` holds the atom families a MORF forest
may mix (signed and weighted patches, single features, neighbourhoods in a
graph). The same atom families split the trees of gradient-boosted models:
:class:`ManifoldObliqueGradientBoostingClassifier` and its regressor,
:class:`SparseObliqueGradientBoostingClassifier` and
:class:`GradientBoostingClassifier` (single features). :mod:`morf_rs.datasets`
generates the papers' simulated experiments. :mod:`morf_rs.dask` (``pip install
morf_rs[dask]``, imported on its own) scores dask arrays and dataframes and grows
forests on a Dask cluster. :func:`save` and :func:`load` write and read a fitted
estimator as a model file of data (no pickle), which ``python -m morf_rs predict``
scores in batches. :class:`UnsupervisedRandomForest`,
:class:`UnsupervisedSparseObliqueForest` and :class:`UnsupervisedManifoldObliqueForest`
grow trees without labels, for the similarity of samples and clustering.
"""

import importlib.metadata as _metadata

from morf_rs import datasets, dictionary, stats
from morf_rs._base import BaseObliqueForest
from morf_rs._boosted_classifiers import (
    ManifoldObliqueGradientBoostingClassifier,
    SparseObliqueGradientBoostingClassifier,
)
from morf_rs._boosted_regressors import (
    ManifoldObliqueGradientBoostingRegressor,
    SparseObliqueGradientBoostingRegressor,
)
from morf_rs._contributions import AtomContributions
from morf_rs._forest_classifiers import (
    ManifoldObliqueForestClassifier,
    SparseObliqueForestClassifier,
)
from morf_rs._forest_regressors import (
    ManifoldObliqueForestRegressor,
    SparseObliqueForestRegressor,
)
from morf_rs._gradient_boosting import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
)
from morf_rs._inspect import TreeStructure
from morf_rs._isolation import (
    IsolationForest,
    ManifoldObliqueIsolationForest,
    SparseObliqueIsolationForest,
)
from morf_rs._random_forests import RandomForestClassifier, RandomForestRegressor
from morf_rs._savefile import load, save
from morf_rs._unsupervised_forests import (
    UnsupervisedManifoldObliqueForest,
    UnsupervisedRandomForest,
    UnsupervisedSparseObliqueForest,
)

try:
    __version__ = _metadata.version("morf_rs")
except _metadata.PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "unknown"

__all__ = [
    "AtomContributions",
    "BaseObliqueForest",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "IsolationForest",
    "ManifoldObliqueGradientBoostingClassifier",
    "ManifoldObliqueGradientBoostingRegressor",
    "ManifoldObliqueForestClassifier",
    "ManifoldObliqueForestRegressor",
    "ManifoldObliqueIsolationForest",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "SparseObliqueForestClassifier",
    "SparseObliqueForestRegressor",
    "SparseObliqueGradientBoostingClassifier",
    "SparseObliqueGradientBoostingRegressor",
    "SparseObliqueIsolationForest",
    "TreeStructure",
    "UnsupervisedManifoldObliqueForest",
    "UnsupervisedRandomForest",
    "UnsupervisedSparseObliqueForest",
    "__version__",
    "datasets",
    "dictionary",
    "load",
    "save",
    "stats",
]


def __dir__():
    # What dir() and tab completion list: the public names, not helper imports.
    return __all__
