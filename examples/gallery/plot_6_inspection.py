"""
Inspecting a forest
===================

A fitted forest exposes its trees as numpy arrays (:class:`morf_rs.TreeStructure`): each
split's atom (features and weights), threshold, children and leaf values, with the
paths of samples and the feature importances. This example draws the first splits of a
MORF tree on the bars and where the forest looked.
"""

# sphinx_gallery_thumbnail_number = 2

import matplotlib.pyplot as plt
import numpy as np

from morf_rs import ManifoldObliqueForestClassifier
from morf_rs.datasets import make_bars

X, y = make_bars(400, noise=1.0, random_state=0)
forest = ManifoldObliqueForestClassifier(
    image_shape=(28, 28),
    patch_min=(2, 2),
    patch_max=(2, 9),
    n_jobs=-1,
    random_state=0,
).fit(X, y)

# %%
# The root and its two children in tree 0: each split sends a sample left when the sum
# of its pixels under the patch is at most the threshold.
tree = forest.tree_structure(0)
nodes = [0, tree.children_left[0], tree.children_right[0]]
fig, axes = plt.subplots(1, 3, figsize=(8, 3))
for ax, node in zip(axes, nodes):
    image = np.zeros(28 * 28)
    if not tree.is_leaf[node]:
        features, weights = tree.atom(node)
        image[features] = weights
        ax.set_title(f"node {node}: sum <= {tree.threshold[node]:.1f}")
    else:
        ax.set_title(f"node {node}: a leaf")
    ax.imshow(image.reshape(28, 28), cmap="Greys")
    ax.set_xticks([])  # keep the frame: it is the image's border
    ax.set_yticks([])
fig.tight_layout()

# %%
# The papers' importance (how often each pixel takes part in a split) beside the
# impurity-weighted one.
fig, axes = plt.subplots(1, 2, figsize=(7, 3.5))
for ax, (title, values) in zip(
    axes,
    [
        ("feature_importances_", forest.feature_importances_),
        ("impurity_importances_", forest.impurity_importances_),
    ],
):
    ax.imshow(values.reshape(28, 28), cmap="viridis")
    ax.set_title(title)
    ax.axis("off")
fig.tight_layout()

# %%
# Depth and leaves of every tree (``tree_stats_``), and the path of one image:
# ``decision_path`` marks the nodes it passes through, every tree's nodes one after
# the other.
stats = forest.tree_stats_
print(
    "max depth: mean",
    np.mean(stats["max_depth"]),
    "leaves: mean",
    np.mean(stats["n_leaves"]),
)
paths, n_nodes_ptr = forest.decision_path(X[:1])
print(
    "nodes on image 0's path in tree 0:",
    paths[0, n_nodes_ptr[0] : n_nodes_ptr[1]].indices,
)
fig, ax = plt.subplots(figsize=(5, 3))
ax.hist(stats["max_depth"], bins=10)
ax.set_xlabel("depth of a tree")
ax.set_ylabel("trees")
fig.tight_layout()
plt.show()
