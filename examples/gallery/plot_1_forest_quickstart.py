"""
Forest quick start
==================

Fit a Manifold Oblique Random Forest (MORF) on images of bars under noise and compare
it with an axis-aligned random forest as the training set grows. MORF's trees split on
sums over random patches of the image, so a bar a few pixels long is one split
direction; a random forest has to find it pixel by pixel.
"""

# sphinx_gallery_thumbnail_number = 2

import matplotlib.pyplot as plt

from morf_rs import ManifoldObliqueForestClassifier, RandomForestClassifier
from morf_rs.datasets import make_bars

# %%
# The data: 28x28 images, one per row of ``X``, flattened row-major. Class 0 holds
# horizontal bars, class 1 vertical ones, both under Gaussian noise.
X_test, y_test = make_bars(1000, noise=1.0, random_state=1)

fig, axes = plt.subplots(1, 4, figsize=(8, 2.2))
for ax, image, label in zip(axes, X_test, y_test):
    ax.imshow(image.reshape(28, 28), cmap="gray")
    ax.set_title(f"class {label}")
    ax.axis("off")

# %%
# Fit both forests on 50 to 400 images. ``patch_min`` and ``patch_max`` bound the
# patches' sides per axis: 2 rows by 2 to 9 columns, as in the papers.
sizes = [50, 100, 200, 400]
errors = {"MORF": [], "random forest": []}
for n in sizes:
    X, y = make_bars(n, noise=1.0, random_state=0)
    morf = ManifoldObliqueForestClassifier(
        image_shape=(28, 28),
        patch_min=(2, 2),
        patch_max=(2, 9),
        n_jobs=-1,
        random_state=0,
    ).fit(X, y)
    forest = RandomForestClassifier(n_jobs=-1, random_state=0).fit(X, y)
    errors["MORF"].append(1 - morf.score(X_test, y_test))
    errors["random forest"].append(1 - forest.score(X_test, y_test))
    morf_error, rf_error = errors["MORF"][-1], errors["random forest"][-1]
    print(f"n = {n}: MORF {morf_error:.3f}, RF {rf_error:.3f}")

fig, ax = plt.subplots(figsize=(5, 3.5))
for name, values in errors.items():
    ax.plot(sizes, values, marker="o", label=name)
ax.set_xscale("log")
ax.set_xlabel("training images")
ax.set_ylabel("test error")
ax.legend()
fig.tight_layout()

# %%
# Which pixels the forest's split directions used: the papers' importance, how often
# each pixel takes part in a chosen patch, reshaped to the image.
fig, ax = plt.subplots(figsize=(3.5, 3.5))
ax.imshow(morf.feature_importances_.reshape(28, 28), cmap="viridis")
ax.set_title("MORF feature importances")
ax.axis("off")
plt.show()
