"""
Boosting quick start
====================

Gradient boosting over atoms: each round fits trees to the gradients of the log loss,
and every split searches patches of the image rather than single pixels.
``dictionary="images"`` names the mixture of edges, lines, stripes, patch sums and
single pixels measured best on images. Here it is fitted on scikit-learn's 8x8 digits
and its test error followed round by round.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from morf_rs import (
    GradientBoostingClassifier,
    ManifoldObliqueGradientBoostingClassifier,
)

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, train_size=1000, random_state=0
)

# %%
# Three boosted models with the same rounds and leaves: single pixels (as LightGBM),
# the papers' patch sums (the default dictionary) and the ``"images"`` preset.
rounds = 15
models = {
    "single pixels": GradientBoostingClassifier(n_estimators=rounds, random_state=0),
    "patch sums": ManifoldObliqueGradientBoostingClassifier(
        n_estimators=rounds, image_shape=(8, 8), random_state=0
    ),
    '"images" preset': ManifoldObliqueGradientBoostingClassifier(
        n_estimators=rounds, image_shape=(8, 8), dictionary="images", random_state=0
    ),
}
fig, ax = plt.subplots(figsize=(5, 3.5))
for name, model in models.items():
    model.set_params(n_jobs=-1).fit(X_train, y_train)
    staged_error = [
        np.mean(prediction != y_test) for prediction in model.staged_predict(X_test)
    ]
    ax.plot(range(1, rounds + 1), staged_error, label=name)
    print(f"{name}: test error {staged_error[-1]:.3f} after {model.n_iter_} rounds")
ax.set_xlabel("round")
ax.set_ylabel("test error")
ax.set_yscale("log")
ax.legend()
fig.tight_layout()

# %%
# ``train_score_`` holds minus the mean training loss before the first round and after
# each, so it rises as the model learns.
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(-models['"images" preset'].train_score_)
ax.set_xlabel("round")
ax.set_ylabel("training log loss")
fig.tight_layout()
plt.show()
