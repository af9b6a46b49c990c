"""Every public estimator writes its constructor out, documents each parameter and
declares a constraint for each."""

import doctest
import inspect

import pytest

import morf_rs
from morf_rs import _atoms
from morf_rs._estimator import BaseTreeEnsemble

PUBLIC_ESTIMATORS = [
    getattr(morf_rs, name)
    for name in morf_rs.__all__
    if inspect.isclass(getattr(morf_rs, name))
    and issubclass(getattr(morf_rs, name), BaseTreeEnsemble)
    and name != "BaseObliqueForest"
]


@pytest.fixture(params=PUBLIC_ESTIMATORS, ids=lambda cls: cls.__name__)
def public_estimator(request):
    return request.param


def parameters(cls):
    return list(inspect.signature(cls).parameters.values())


def test_every_model_type_and_task_is_covered():
    assert len(PUBLIC_ESTIMATORS) == 18


def test_constructor_is_written_out_typed_and_keyword_only(public_estimator):
    assert "__init__" in public_estimator.__dict__
    params = parameters(public_estimator)
    assert params[0].name == "n_estimators"
    assert params[0].kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert {p.kind for p in params[1:]} == {inspect.Parameter.KEYWORD_ONLY}
    unannotated = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    assert unannotated == []
    # A family's parameters belong to exactly the classes of that family.
    names = {p.name for p in params}
    for family in (_atoms.PatchAtoms, _atoms.ObliqueAtoms):
        own = set(family._parameter_constraints) - {"max_features"}
        assert own
        assert (own <= names) == issubclass(public_estimator, family)
        assert bool(own & names) == issubclass(public_estimator, family)


def test_every_parameter_has_exactly_one_constraint(public_estimator):
    names = [p.name for p in parameters(public_estimator)]
    assert sorted(public_estimator._parameter_constraints) == sorted(names)


def test_constructor_stores_arguments_unchanged(public_estimator):
    model = public_estimator(7, n_jobs=3, random_state=5)
    assert model.n_estimators == 7
    assert model.get_params()["n_jobs"] == 3
    assert model.random_state == 5
    defaults = public_estimator().get_params()
    assert defaults == {p.name: p.default for p in parameters(public_estimator)}
    with pytest.raises(TypeError, match="max_dept"):
        public_estimator(max_dept=3)
    with pytest.raises(TypeError):
        public_estimator(10, "sqrt")  # everything after n_estimators is keyword-only


def test_docstring_documents_every_parameter_once_with_its_default(public_estimator):
    doc = public_estimator.__doc__
    sections = ["Parameters", "Attributes", "Examples"]
    positions = [doc.index(f"\n    {name}\n    ---") for name in sections]
    assert positions == sorted(positions)
    for param in parameters(public_estimator):
        assert doc.count(f"\n    {param.name} : ") == 1, param.name
        line = doc.split(f"\n    {param.name} : ", 1)[1].split("\n", 1)[0]
        documented = line.rsplit("default=", 1)[1]
        assert documented.replace('"', "'") == repr(param.default), param.name


def test_docstring_examples_run(public_estimator):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = finder.find(public_estimator, globs={})
    assert sum(len(test.examples) for test in tests) >= 3
    for test in tests:
        runner.run(test)
    assert runner.failures == 0
