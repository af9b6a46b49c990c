"""morf_rs: Manifold Oblique Random Forests with a Rust engine.

Three scikit-learn classifiers share one engine and differ in the split
directions their trees try: :class:`ManifoldObliqueForestClassifier` (patches of
an image or windows of a signal), :class:`SparseObliqueForestClassifier` (sparse
random combinations of features) and :class:`RandomForestClassifier` (single
features). :mod:`morf_rs.dictionary` holds the atom families a MORF forest
may mix (signed and weighted patches, single features, neighbourhoods in a
graph), and :mod:`morf_rs.datasets` generates the papers' simulated
experiments.
"""

from importlib.metadata import PackageNotFoundError, version

from morf_rs._forest import (
    BaseObliqueForest,
    ManifoldObliqueForestClassifier,
    RandomForestClassifier,
    SparseObliqueForestClassifier,
)

try:
    __version__ = version("morf_rs")
except PackageNotFoundError:  # imported from a source tree without installing
    __version__ = "unknown"

__all__ = [
    "BaseObliqueForest",
    "ManifoldObliqueForestClassifier",
    "RandomForestClassifier",
    "SparseObliqueForestClassifier",
    "__version__",
]
