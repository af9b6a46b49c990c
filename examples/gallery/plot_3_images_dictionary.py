"""
Images with a dictionary
========================

The papers' MORF splits on sums over patches. A dictionary mixes other atom families:
signed patches (+1 beside -1: edges; -1/+2/-1: lines), Gabor-like stripes, single
pixels, and pooled atoms that count a pattern wherever it lies in a window. This
example compares forests over three dictionaries on scikit-learn's 8x8 digits and
draws the split directions of the root nodes.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from morf_rs import ManifoldObliqueForestClassifier
from morf_rs.dictionary import AxisAligned, SignedPatches

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, train_size=600, random_state=0
)

# %%
# Three forests of 100 trees, the same patch extents (1 to 3 pixels a side).
dictionaries = {
    "patch sums (papers)": None,
    "edges, lines, pixels": [
        (SignedPatches(bands=2), 0.55),
        (SignedPatches(bands=3), 0.35),
        (AxisAligned(), 0.1),
    ],
    '"images" preset': "images",
}
forests = {}
for name, dictionary in dictionaries.items():
    forests[name] = ManifoldObliqueForestClassifier(
        image_shape=(8, 8),
        patch_min=1,
        patch_max=3,
        dictionary=dictionary,
        max_features=16 if dictionary != "images" else None,
        bootstrap=False,
        n_jobs=-1,
        random_state=0,
    ).fit(X_train, y_train)
errors = {name: 1 - forest.score(X_test, y_test) for name, forest in forests.items()}
for name, error in errors.items():
    print(f"{name}: test error {error:.3f}")

fig, ax = plt.subplots(figsize=(5, 2.5))
ax.barh(list(errors), list(errors.values()))
ax.set_xlabel("test error")
fig.tight_layout()

# %%
# The split direction at the root of the first trees of the edges-and-lines forest:
# each atom's weights drawn on the 8x8 image (red +, blue -).
forest = forests["edges, lines, pixels"]
fig, axes = plt.subplots(1, 6, figsize=(9, 1.9))
for tree_index, ax in enumerate(axes):
    features, weights = forest.tree_structure(tree_index).atom(0)
    image = np.zeros(64)
    image[features] = weights
    limit = np.abs(image).max()
    ax.imshow(image.reshape(8, 8), cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.set_title(f"tree {tree_index}")
    ax.axis("off")
plt.show()
