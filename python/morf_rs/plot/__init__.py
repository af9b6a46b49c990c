"""Plots of fitted morf_rs models with matplotlib (``pip install morf_rs[plot]``).

Each function draws on the matplotlib Axes it is given (``ax``), or on a new
figure's, and returns that Axes:

* :func:`importance_map`: a model's feature importances over its image grid,
  or along its signal.
* :func:`contribution_map`: one sample's per-feature contributions over its
  image (a diverging colormap centred at 0, the image in grey underneath) or
  along its signal.
* :func:`tree_splits`: the first splits of a tree, each drawn as its atom's
  weights over the image grid and titled with its threshold.
* :func:`staged_error`: a gradient-boosted model's error rate (classifiers) or
  mean squared error (regressors) after each round, on one or several sets.

Images are drawn with rows down and columns across, as ``reshape(image_shape)``
lays the features out; models and images of one axis are drawn along it.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import numpy as np
>>> from morf_rs import ManifoldObliqueForestClassifier
>>> from morf_rs.plot import importance_map
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 64))
>>> y = (X.reshape(-1, 8, 8)[:, 2:5, 3:6].sum(axis=(1, 2)) > 0).astype(int)
>>> forest = ManifoldObliqueForestClassifier(
...     image_shape=(8, 8), n_estimators=10, random_state=0
... ).fit(X, y)
>>> ax = importance_map(forest)
>>> ax.images[0].get_array().shape
(8, 8)
"""

from morf_rs.plot._maps import contribution_map, importance_map
from morf_rs.plot._rounds import staged_error
from morf_rs.plot._trees import tree_splits

__all__ = ["contribution_map", "importance_map", "staged_error", "tree_splits"]

# The API pages and doctests find the functions here, where users import them.
for _function in (contribution_map, importance_map, staged_error, tree_splits):
    _function.__module__ = __name__
del _function


def __dir__():
    return __all__
