"""Parameters declared once per group, constructors and docs built from them."""

import doctest
import inspect

import pytest

import morf_rs
from morf_rs import _atoms, _params
from morf_rs._forest import __all__ as FOREST_NAMES

PUBLIC_FORESTS = [
    getattr(morf_rs, name) for name in FOREST_NAMES if name != "BaseObliqueForest"
]


@pytest.fixture(params=PUBLIC_FORESTS, ids=lambda cls: cls.__name__)
def public_forest(request):
    return request.param


def test_constructor_takes_the_parameters_of_its_groups(public_forest):
    signature = inspect.signature(public_forest)
    names = list(signature.parameters)
    expected = [p.name for p in public_forest._parameters()]
    assert names == expected
    assert names[0] == "n_estimators"
    kinds = [p.kind for p in signature.parameters.values()]
    assert kinds[1:] == [inspect.Parameter.KEYWORD_ONLY] * (len(kinds) - 1)
    # A family's parameters belong to exactly the classes of that family.
    for family in (_atoms.PatchAtoms, _atoms.ObliqueAtoms):
        own = {p.name for p in family._atom_parameters}
        assert own
        assert (own <= set(names)) == issubclass(public_forest, family)
        assert bool(own & set(names)) == issubclass(public_forest, family)


def test_constructor_stores_arguments_unchanged(public_forest):
    forest = public_forest(7, max_depth=3, random_state=5)
    assert forest.n_estimators == 7
    assert forest.get_params()["max_depth"] == 3
    assert forest.random_state == 5
    defaults = public_forest().get_params()
    assert defaults == {p.name: p.default for p in public_forest._parameters()}
    with pytest.raises(TypeError, match="max_dept"):
        public_forest(max_dept=3)
    with pytest.raises(TypeError):
        public_forest(10, "sqrt")  # everything after n_estimators is keyword-only


def test_docstring_documents_every_parameter_once(public_forest):
    doc = public_forest.__doc__
    sections = ["Parameters", "Attributes", "Examples"]
    positions = [doc.index(f"\n    {name}\n    ---") for name in sections]
    assert positions == sorted(positions)
    for param in public_forest._parameters():
        assert doc.count(f"\n    {param.name} : ") == 1, param.name


def test_docstring_examples_run(public_forest):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = finder.find(public_forest, globs={})
    assert sum(len(test.examples) for test in tests) >= 3
    for test in tests:
        runner.run(test)
    assert runner.failures == 0


def test_a_parameter_declared_twice_is_refused():
    with pytest.raises(TypeError, match="declared twice"):
        _params.make_init((_params.N_ESTIMATORS, _params.N_ESTIMATORS))
