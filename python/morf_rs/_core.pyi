"""Type stub of the private Rust extension; use the classes in morf_rs instead."""

from collections.abc import Callable, Sequence
from typing import Literal, TypedDict, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "BOOSTER_FORMAT_VERSION",
    "FORMAT_VERSION",
    "MAX_ESTIMATORS",
    "Booster",
    "Forest",
    "IsolationForest",
    "_panic_in_engine",
    "fit_unsupervised",
    "similarity_matrix",
    "agglomerative_clusters",
    "coleman_test",
    "oob_tree_posteriors",
    "score_metric",
]

# Version of the bytes written by Forest.to_bytes.
FORMAT_VERSION: int
# Version of the bytes written by Booster.to_bytes.
BOOSTER_FORMAT_VERSION: int
# Most trees a forest may have.
MAX_ESTIMATORS: int

def _panic_in_engine() -> None: ...

_Matrix = npt.NDArray[np.float32] | npt.NDArray[np.float64] | npt.NDArray[np.uint8]

class _Family(TypedDict, total=False):
    family: Literal["axis", "oblique", "patches", "signed", "bumps", "gabors", "graph"]
    probability: float
    patch_min: list[int]
    patch_max: list[int]
    bands: int
    feature_combinations: float
    n_nodes: int
    edges: npt.NDArray[np.uint32]
    min_size: int
    max_size: int
    signed: bool

class _Params(TypedDict, total=False):
    n_estimators: int
    atoms: Literal["axis", "oblique", "patch", "dictionary"]
    dictionary: list[_Family]
    feature_combinations: float
    image_shape: list[int]
    patch_min: list[int]
    patch_max: list[int]
    wrap: list[bool]
    contiguous: list[bool]
    max_features: Literal["sqrt", "log2"] | int | float | None
    criterion: Literal["gini", "entropy", "squared_error", "poisson"]
    max_depth: int | None
    min_samples_split: int
    min_samples_leaf: int
    min_weight_fraction_leaf: float
    min_impurity_decrease: float
    max_leaf_nodes: int | None
    ccp_alpha: float
    bootstrap: bool
    balanced_classes_per_tree: bool
    max_samples: int | float | None
    honest_fraction: float
    honest_prior: Literal["ignore", "uniform", "empirical"]
    random_state: int

def fit_unsupervised(
    x: _Matrix,
    criterion: Literal["twomeans", "fastbic"],
    params: _Params,
    n_threads: int,
    trees: tuple[int, int] | None = None,
) -> tuple[Forest, npt.NDArray[np.int64]]: ...
def similarity_matrix(
    leaves: npt.NDArray[np.int64], n_threads: int
) -> npt.NDArray[np.float64]: ...
def agglomerative_clusters(
    leaves: npt.NDArray[np.int64],
    n_clusters: int,
    linkage: Literal["average", "complete", "single"],
    n_threads: int,
) -> npt.NDArray[np.int64]: ...

@final
class Forest:
    """A trained forest; X is a 2-D float32, float64 or uint8 array."""

    @staticmethod
    def fit(
        x: _Matrix,
        y: npt.NDArray[np.uint32],
        n_classes: int,
        sample_weight: npt.NDArray[np.float64] | None,
        params: _Params,
        n_threads: int,
        progress: Callable[[int, int], object] | None = None,
        trees: tuple[int, int] | None = None,
    ) -> Forest: ...
    @staticmethod
    def fit_regression(
        x: _Matrix,
        y: npt.NDArray[np.float64],
        sample_weight: npt.NDArray[np.float64] | None,
        params: _Params,
        n_threads: int,
        progress: Callable[[int, int], object] | None = None,
        trees: tuple[int, int] | None = None,
    ) -> Forest: ...
    def predict_values(
        self,
        x: _Matrix,
        n_threads: int,
        out: npt.NDArray[np.float64] | None = None,
    ) -> npt.NDArray[np.float64]: ...
    def predict_proba(
        self,
        x: _Matrix,
        n_threads: int,
        out: npt.NDArray[np.float64] | None = None,
    ) -> npt.NDArray[np.float64]: ...
    def predict(self, x: _Matrix, n_threads: int) -> npt.NDArray[np.uint32]: ...
    def apply(
        self,
        x: _Matrix,
        n_threads: int,
        out: npt.NDArray[np.int64] | None = None,
    ) -> npt.NDArray[np.int64]: ...
    def oob_predict(
        self, x: _Matrix, params: _Params, n_threads: int
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.uint32]]: ...
    @staticmethod
    def tree_sample_counts(
        params: _Params, n_samples: int, tree: int
    ) -> npt.NDArray[np.uint32]: ...
    def path_widths(self) -> list[int]: ...
    def decision_paths(
        self, x: _Matrix, n_threads: int, out: npt.NDArray[np.uint32]
    ) -> npt.NDArray[np.uint32]: ...
    def tree_arrays(
        self, index: int, n_axes: int
    ) -> dict[str, npt.NDArray[np.generic]]: ...
    def contributions(
        self, x: _Matrix, n_threads: int, out: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]: ...
    def atom_contributions(
        self, x: _Matrix, n_threads: int
    ) -> dict[str, npt.NDArray[np.generic]]: ...
    def split_count_importances(self) -> npt.NDArray[np.float64]: ...
    def impurity_importances(self) -> npt.NDArray[np.float64]: ...
    def tree_stats(self) -> dict[str, npt.NDArray[np.generic]]: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def merge(forests: Sequence[Forest]) -> Forest: ...
    @staticmethod
    def from_bytes(data: bytes) -> Forest: ...
    @property
    def n_features(self) -> int: ...
    @property
    def n_classes(self) -> int | None: ...
    @property
    def n_outputs(self) -> int: ...
    @property
    def n_estimators(self) -> int: ...

class _BoostParams(TypedDict, total=False):
    n_estimators: int
    learning_rate: float
    max_leaf_nodes: int | None
    max_depth: int | None
    min_samples_leaf: int
    l2_regularization: float
    max_bins: int
    subsample: float
    atoms: Literal["axis", "oblique", "patch", "dictionary"]
    dictionary: list[_Family]
    feature_combinations: float
    image_shape: list[int]
    patch_min: list[int]
    patch_max: list[int]
    wrap: list[bool]
    contiguous: list[bool]
    max_features: Literal["sqrt", "log2"] | int | float | None
    early_stopping: bool
    validation_fraction: int | float
    n_iter_no_change: int
    tol: float
    random_state: int

@final
class Booster:
    """A trained boosted model; X is a 2-D float32, float64 or uint8 array."""

    @staticmethod
    def fit(
        x: _Matrix,
        y: npt.NDArray[np.uint32] | npt.NDArray[np.float64],
        n_classes: int,
        sample_weight: npt.NDArray[np.float64] | None,
        params: _BoostParams,
        n_threads: int,
        progress: Callable[[int, int], object] | None = None,
        previous: Booster | None = None,
    ) -> Booster: ...
    def predict_raw_rounds(
        self,
        x: _Matrix,
        start: int,
        end: int,
        n_threads: int,
        out: npt.NDArray[np.float64] | None = None,
    ) -> npt.NDArray[np.float64]: ...
    def transform(self, raw: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...
    def apply(
        self,
        x: _Matrix,
        n_threads: int,
        out: npt.NDArray[np.int64] | None = None,
    ) -> npt.NDArray[np.int64]: ...
    def path_widths(self) -> list[int]: ...
    def decision_paths(
        self, x: _Matrix, n_threads: int, out: npt.NDArray[np.uint32]
    ) -> npt.NDArray[np.uint32]: ...
    def tree_arrays(
        self, index: int, n_axes: int
    ) -> dict[str, npt.NDArray[np.generic]]: ...
    def contributions(
        self, x: _Matrix, n_threads: int, out: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]: ...
    def atom_contributions(
        self, x: _Matrix, n_threads: int
    ) -> dict[str, npt.NDArray[np.generic]]: ...
    def split_count_importances(self) -> npt.NDArray[np.float64]: ...
    def gain_importances(self) -> npt.NDArray[np.float64]: ...
    def tree_stats(self) -> dict[str, npt.NDArray[np.generic]]: ...
    def baseline(self) -> npt.NDArray[np.float64]: ...
    def train_loss(self) -> npt.NDArray[np.float64]: ...
    def validation_loss(self) -> npt.NDArray[np.float64]: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> Booster: ...
    @property
    def n_features(self) -> int: ...
    @property
    def n_rounds(self) -> int: ...
    @property
    def n_outputs(self) -> int: ...
    @property
    def n_classes(self) -> int: ...

class _IsolationParams(TypedDict, total=False):
    n_estimators: int
    max_samples: int | None
    max_features: int | None
    atoms: Literal["axis", "oblique", "patch", "dictionary"]
    dictionary: list[_Family]
    feature_combinations: float
    image_shape: list[int]
    patch_min: list[int]
    patch_max: list[int]
    wrap: list[bool]
    contiguous: list[bool]
    random_state: int

@final
class IsolationForest:
    """A trained isolation forest; X is a 2-D float32, float64 or uint8 array."""

    @staticmethod
    def fit(
        x: _Matrix,
        params: _IsolationParams,
        n_threads: int,
        sample_weight: npt.NDArray[np.float64] | None = None,
    ) -> IsolationForest: ...
    def with_more_trees(
        self,
        x: _Matrix,
        params: _IsolationParams,
        n_threads: int,
        sample_weight: npt.NDArray[np.float64] | None = None,
    ) -> IsolationForest: ...
    def anomaly_scores(
        self, x: _Matrix, n_threads: int, out: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]: ...
    def apply(
        self,
        x: _Matrix,
        n_threads: int,
        out: npt.NDArray[np.int64] | None = None,
    ) -> npt.NDArray[np.int64]: ...
    def leaf_path_lengths(self) -> list[npt.NDArray[np.float64]]: ...
    def path_widths(self) -> list[int]: ...
    def decision_paths(
        self, x: _Matrix, n_threads: int, out: npt.NDArray[np.uint32]
    ) -> npt.NDArray[np.uint32]: ...
    def tree_arrays(
        self, index: int, n_axes: int
    ) -> dict[str, npt.NDArray[np.generic]]: ...
    def tree_stats(self) -> dict[str, npt.NDArray[np.generic]]: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> IsolationForest: ...
    @property
    def n_features(self) -> int: ...
    @property
    def max_samples(self) -> int: ...
    @property
    def n_estimators(self) -> int: ...

_Truth = npt.NDArray[np.uint32] | npt.NDArray[np.float64]

def oob_tree_posteriors(
    forest: Forest, x: _Matrix, params: _Params, first_tree: int, n_threads: int
) -> npt.NDArray[np.float64]: ...
def score_metric(
    metric: str, y: _Truth, posteriors: npt.NDArray[np.float64]
) -> float: ...
def coleman_test(
    y: _Truth,
    original: npt.NDArray[np.float64],
    permuted: npt.NDArray[np.float64],
    metric: str,
    n_repeats: int,
    seed: int,
    n_threads: int,
) -> tuple[float, float, npt.NDArray[np.float64]]: ...
