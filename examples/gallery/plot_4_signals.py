"""
Signals
=======

The papers' circle experiment: 100 cells on a discretised circle, class 0 holding two
segments of 5 ones, class 1 one of 4 and one of 6, at random places. A random forest
sees 100 unrelated columns; MORF's windows of neighbouring cells see a segment at
once, and ``wrap=True`` lets them continue around the seam. ``dictionary="signals"``
mixes single cells with signed windows, stripes and sums, most of them pooled over the
whole signal, so a pattern counts wherever it lies.
"""

import matplotlib.pyplot as plt

from morf_rs import (
    ManifoldObliqueForestClassifier,
    ManifoldObliqueGradientBoostingClassifier,
    RandomForestClassifier,
)
from morf_rs.datasets import make_circle

X, y = make_circle(400, random_state=0)
X_test, y_test = make_circle(2000, random_state=1)

fig, axes = plt.subplots(2, 1, figsize=(6, 1.8), sharex=True)
for ax, label in zip(axes, (0, 1)):
    ax.imshow(X[y == label][:1], cmap="Greys", aspect="auto")
    ax.set_yticks([])
    ax.set_ylabel(f"class {label}", rotation=0, ha="right", va="center")
axes[1].set_xlabel("cell")
fig.tight_layout()

# %%
# A random forest, the papers' MORF (windows of 3 to 12 cells that wrap, half the
# features as candidates), and the ``"signals"`` preset in a forest and a boosted
# model.
models = {
    "random forest": RandomForestClassifier(n_jobs=-1, random_state=0),
    "MORF (papers)": ManifoldObliqueForestClassifier(
        image_shape=(100,),
        patch_min=3,
        patch_max=12,
        wrap=True,
        max_features=0.5,
        n_jobs=-1,
        random_state=0,
    ),
    'MORF "signals"': ManifoldObliqueForestClassifier(
        n_estimators=50,
        image_shape=(100,),
        dictionary="signals",
        n_jobs=-1,
        random_state=0,
    ),
    'boosted "signals"': ManifoldObliqueGradientBoostingClassifier(
        n_estimators=20,
        image_shape=(100,),
        dictionary="signals",
        n_jobs=-1,
        random_state=0,
    ),
}
errors = {}
for name, model in models.items():
    errors[name] = 1 - model.fit(X, y).score(X_test, y_test)
    print(f"{name}: test error {errors[name]:.4f}")

fig, ax = plt.subplots(figsize=(5, 2.5))
ax.barh(list(errors), list(errors.values()))
ax.set_xlabel("test error")
fig.tight_layout()
plt.show()
