"""
Missing values
==============

NaN in ``X`` marks a missing value, at fit and at predict. Each split learns where
samples with a missing projection go. A patch sum is missing wherever its patch touches
a missing pixel, so patch forests lose directions when pixels go missing at random
and few when a block of the image is hidden. This example removes pixels of the 8x8
digits both ways.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingClassifier,
    RandomForestClassifier,
)

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, train_size=1000, random_state=0
)
rng = np.random.default_rng(0)


def at_random(X, fraction):
    """Each pixel missing with probability ``fraction``."""
    return np.where(rng.random(X.shape) < fraction, np.nan, X)


def block(X, side):
    """A ``side`` x ``side`` square of each image missing, at a random place."""
    images = X.reshape(-1, 8, 8).copy()
    for image in images:
        row, column = rng.integers(0, 8 - side + 1, size=2)
        image[row : row + side, column : column + side] = np.nan
    return images.reshape(len(X), 64)


def models():
    return {
        "random forest": RandomForestClassifier(n_estimators=50, n_jobs=-1),
        "MORF": ManifoldObliqueForestClassifier(
            n_estimators=50, image_shape=(8, 8), patch_min=1, patch_max=3, n_jobs=-1
        ),
        "boosted MORF": ManifoldObliqueGradientBoostingClassifier(
            n_estimators=20, image_shape=(8, 8), patch_min=1, patch_max=3, n_jobs=-1
        ),
    }


# %%
# Pixels missing at random, in the training and the test images alike.
fractions = [0.0, 0.2, 0.4]
damages = {"at random": [at_random, fractions], "a square": [block, [0, 3, 5]]}
fig, axes = plt.subplots(1, 2, figsize=(8, 3), sharey=True)
for ax, (title, (damage, levels)) in zip(axes, damages.items()):
    errors = {name: [] for name in models()}
    for level in levels:
        for name, model in models().items():
            model.set_params(random_state=0)
            model.fit(damage(X_train, level), y_train)
            errors[name].append(1 - model.score(damage(X_test, level), y_test))
    for name, values in errors.items():
        ax.plot(levels, values, marker="o", label=name)
        print(f"{title}, {name}: " + ", ".join(f"{e:.3f}" for e in values))
    ax.set_title(f"pixels missing {title}")
    ax.set_xlabel("fraction" if damage is at_random else "side of the square")
axes[0].set_ylabel("test error")
axes[0].legend(fontsize="small")
fig.tight_layout()

# %%
# One test image with a missing square, as the model saw it.
fig, ax = plt.subplots(figsize=(2, 2))
ax.imshow(block(X_test[:1], 3).reshape(8, 8), cmap="gray_r")
ax.axis("off")
plt.show()
