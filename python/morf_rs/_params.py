"""The estimators' parameters, each declared once with its default and its docs.

scikit-learn reads an estimator's parameters from the signature of its
``__init__``. Rather than repeat twenty parameters in the ``__init__`` of every
classifier, regressor and atom family, each group is declared here once and
:func:`make_init` builds the ``__init__`` (and the numpydoc ``Parameters``
section) of a class from the groups it uses.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass


@dataclass(frozen=True)
class Param:
    """One constructor parameter: its name, default and numpydoc entry."""

    name: str
    default: object
    # First line "name : type, default=..." is generated; this is the description.
    kind: str
    doc: str

    def with_default(self, default):
        """The same parameter with another default (a task's own)."""
        return dataclasses.replace(self, default=default)

    def numpydoc(self):
        lines = [f"    {self.name} : {self.kind}, default={self.default!r}"]
        lines += [f"        {line}" for line in self.doc.strip().splitlines()]
        return "\n".join(lines)


N_ESTIMATORS = Param("n_estimators", 100, "int", "Number of trees.")

MAX_FEATURES_OBLIQUE = Param(
    "max_features",
    "sqrt",
    'int, float, "sqrt", "log2" or None',
    """
Candidate atoms per split: a count, a fraction of n_features, sqrt or log2
of n_features, or n_features. May exceed n_features.
""",
)

MAX_FEATURES_AXIS = Param(
    "max_features",
    "sqrt",
    'int, float, "sqrt", "log2" or None',
    """
Features tried per split: a count (<= n_features), a fraction in (0, 1] of
n_features, sqrt or log2 of n_features, or n_features.
""",
)

# Growth of one tree, shared by every ensemble of these trees.
TREE_PARAMS = (
    Param(
        "max_depth",
        None,
        "int",
        "Maximum depth of a tree; None grows until leaves are pure.",
    ),
    Param(
        "min_samples_split",
        2,
        "int or float",
        """
Fewest samples a node needs to be split (a float is a fraction of
n_samples).
""",
    ),
    Param(
        "min_samples_leaf",
        1,
        "int or float",
        """
Fewest samples on each side of a split (a float is a fraction of
n_samples).
""",
    ),
    Param(
        "min_weight_fraction_leaf",
        0.0,
        "float in [0, 0.5]",
        """
Least weight on each side of a split, as a fraction of the total weight of
the tree's sample (sample weights times bootstrap counts).
""",
    ),
    Param(
        "max_leaf_nodes",
        None,
        "int or None",
        """
Most leaves per tree (at least 2). Trees then grow best first, as
scikit-learn's do: the leaf whose best split decreases the weighted
impurity most is split next, until a tree has max_leaf_nodes leaves or no
leaf may be split (max_depth and the other rules still apply). None grows
depth first without a limit on leaves.
""",
    ),
    Param(
        "min_impurity_decrease",
        0.0,
        "float",
        "A node is split only if the weighted impurity decreases at least this much.",
    ),
    Param(
        "ccp_alpha",
        0.0,
        "non-negative float",
        """
Minimal cost-complexity pruning: each grown tree is cut back to its
smallest subtree minimising R(T) + ccp_alpha * n_leaves(T), with R(T) the
weighted impurity of its leaves relative to the weight of the samples that
grew it (honest trees: the structure part, before the leaves are filled).
0 prunes nothing.
""",
    ),
)

# Sampling and honesty of the trees of a forest.
FOREST_PARAMS = (
    Param(
        "bootstrap",
        True,
        "bool",
        "Grow each tree on a bootstrap sample instead of the whole training set.",
    ),
    Param(
        "oob_score",
        False,
        "bool or callable",
        """
Score every training sample with the trees that never saw it (out-of-bag):
sets ``oob_score_`` (accuracy for classifiers, R^2 for regressors, or
``oob_score(y, prediction)`` for a callable) and ``oob_decision_function_``
(classifiers) or ``oob_prediction_`` (regressors). Needs ``bootstrap=True``.
""",
    ),
    Param(
        "max_samples",
        None,
        "int or float",
        """
Size of each tree's sample (a float is a fraction of n_samples); None uses
n_samples.
""",
    ),
    Param(
        "honest_fraction",
        0.0,
        "float in [0, 1)",
        """
Fraction of each tree's sample set aside to fill the leaves (honest trees);
the rest grows the splits. 0 disables honesty.
""",
    ),
    Param(
        "honest_prior",
        "empirical",
        '{"ignore", "uniform", "empirical"}',
        """
What a leaf that got no honest sample predicts: nothing (the tree does not
vote), the uniform distribution (classifiers only), or the tree's whole
sample: its class frequencies or its mean target.
""",
    ),
)

CLASSIFIER_CRITERION = Param(
    "criterion",
    "gini",
    '{"gini", "entropy", "log_loss"}',
    'Impurity measure of a split ("log_loss" is "entropy").',
)

REGRESSOR_CRITERION = Param(
    "criterion",
    "squared_error",
    '{"squared_error", "poisson"}',
    """
Impurity measure of a split: the mean squared error of the targets, or half the
mean Poisson deviance ("poisson", for counts and rates: y must be non-negative with
a positive sum, and no split leaves a child whose targets sum to 0).
""",
)

CLASSIFIER_PARAMS = (
    Param(
        "class_weight",
        None,
        'dict, "balanced" or None',
        "Weights of the classes, multiplied into sample_weight.",
    ),
)

# Execution, last in every signature.
RUN_PARAMS = (
    Param(
        "n_jobs",
        None,
        "int",
        "Threads for fit and predict: None is 1, -1 all cores, -2 all but one; "
        "never more than the available cores.",
    ),
    Param(
        "random_state",
        None,
        "int, RandomState instance or None",
        "Seed of the trees; the same int gives the same forest for any n_jobs.",
    ),
    Param(
        "verbose",
        0,
        "int",
        """
1 or more reports the progress of fit on stderr: trees grown, time spent
and an estimate of the time left, as a tqdm bar when tqdm is installed and
stderr is a terminal, otherwise as a line at each tenth of the trees.
""",
    ),
    Param(
        "warm_start",
        False,
        "bool",
        """
When True, fit adds to the fitted model, on the same data, up to
``n_estimators`` trees (forests) or rounds (boosted models), training only
what is added. Tree or round i depends only on random_state, i and what came
before, so 50 and then 50 more give the model of 100 fitted at once, bit for
bit. A boosted model that early stopping stopped gains no round.
""",
    ),
)


# Gradient boosting: rounds, trees, bins, sampling and early stopping.
N_ROUNDS = Param(
    "n_estimators",
    100,
    "int",
    """
Boosting rounds (scikit-learn's max_iter). A round adds one tree per class,
or one tree for two classes and for regression.
""",
)

LEARNING_RATE = Param(
    "learning_rate", 0.1, "float", "Shrinkage of every leaf value (> 0)."
)

MAX_FEATURES_BOOSTING_OBLIQUE = Param(
    "max_features",
    1.0,
    'int, float, "sqrt", "log2" or None',
    """
Atoms drawn afresh each round and tried at every node of that round's
trees: a count, a fraction of n_features, sqrt or log2 of n_features, or
n_features. May exceed n_features; fit time grows with it.
""",
)

MAX_FEATURES_BOOSTING_AXIS = Param(
    "max_features",
    1.0,
    'int, float, "sqrt", "log2" or None',
    """
Features drawn afresh each round and tried at every node of that round's
trees: a count (<= n_features), a fraction in (0, 1] of n_features, sqrt
or log2 of n_features, or n_features.
""",
)

BOOSTING_PARAMS = (
    Param(
        "max_leaf_nodes",
        31,
        "int or None",
        "Most leaves per tree, grown best first; None for no limit.",
    ),
    Param(
        "max_depth", None, "int or None", "Deepest a leaf may be; None for no limit."
    ),
    Param("min_samples_leaf", 20, "int", "Fewest samples a leaf may hold."),
    Param("l2_regularization", 0.0, "float", "L2 penalty on leaf values (>= 0)."),
    Param(
        "max_bins",
        255,
        "int",
        """
Most bins (2 to 256) an atom's projections are put in for split search,
at quantiles of the round's projections.
""",
    ),
    Param(
        "subsample",
        1.0,
        "float in (0, 1]",
        "Fraction of the samples, drawn afresh each round, that its trees learn from.",
    ),
    Param(
        "early_stopping",
        "auto",
        '"auto" or bool',
        """
Hold out validation_fraction of the samples and stop when their loss has
not improved by more than tol for n_iter_no_change rounds. "auto" turns it
on above 10,000 samples, as scikit-learn does.
""",
    ),
    Param(
        "validation_fraction",
        0.1,
        "int or float",
        """
Samples held out for early stopping: a fraction in (0, 1) or a count
(stratified by class for classifiers).
""",
    ),
    Param(
        "n_iter_no_change",
        10,
        "int",
        "Rounds without improvement after which early stopping stops.",
    ),
    Param(
        "tol", 1e-7, "float", "Smallest improvement of the held-out loss that counts."
    ),
)


def make_init(params):
    """An ``__init__`` taking ``params`` (the first positional, the rest keyword-only)
    that stores each argument unchanged under its own name, as scikit-learn expects.
    """
    names = [p.name for p in params]
    duplicated = {name for name in names if names.count(name) > 1}
    if duplicated:
        raise TypeError(f"parameters declared twice: {sorted(duplicated)}")
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for position, param in enumerate(params):
        kind = (
            inspect.Parameter.POSITIONAL_OR_KEYWORD
            if position == 0
            else inspect.Parameter.KEYWORD_ONLY
        )
        parameters.append(inspect.Parameter(param.name, kind, default=param.default))
    signature = inspect.Signature(parameters)

    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name in names:
            setattr(self, name, bound.arguments[name])

    __init__.__signature__ = signature
    return __init__


def parameters_section(params):
    """The numpydoc ``Parameters`` section documenting ``params``."""
    entries = "\n".join(p.numpydoc() for p in params)
    return f"    Parameters\n    ----------\n{entries}\n"


_EXAMPLES_HEADING = "\n    Examples\n    --------\n"


def complete_estimator_class(cls, shared_attributes_doc):
    """Give ``cls`` its scikit-learn ``__init__`` from ``cls._parameters()`` and, for a
    public class whose docstring has an Examples section, the Parameters and
    Attributes sections before it (docstrings are absent under -OO)."""
    cls.__init__ = make_init(cls._parameters())
    cls.__init__.__qualname__ = f"{cls.__qualname__}.__init__"
    doc = cls.__dict__.get("__doc__")
    if doc and _EXAMPLES_HEADING in doc:
        head, examples = doc.split(_EXAMPLES_HEADING, 1)
        cls.__doc__ = (
            head.rstrip()
            + "\n\n"
            + parameters_section(cls._parameters())
            + "\n    Attributes\n    ----------\n"
            + cls._task_attributes_doc
            + shared_attributes_doc
            + cls._atom_attributes_doc
            + _EXAMPLES_HEADING
            + examples
        )
