"""Every Python snippet of README.md and of the documentation runs as written.

Collects each ```python block of README.md, each ``.. code-block:: python`` of
docs/**/*.rst and the ``>>>`` examples of those pages, and runs each on its own, as a
script in an empty directory (they may write model files), so a snippet that needs a
name it does not define, data nobody makes or an argument that no longer exists fails
here. The API pages must list every public name, so none goes undocumented.
"""

from __future__ import annotations

import doctest
import re
import textwrap
from pathlib import Path

import pytest

import morf_rs

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_README_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_RST_BLOCK = re.compile(
    r"^\.\. code-block:: python\n(?:[ \t]+:.*\n)*\n((?:[ \t]+.*\n|[ \t]*\n)+)", re.M
)


def _line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def readme_snippets(text, where="README.md"):
    """(name, code) of each ```python block of a Markdown text."""
    return [
        (f"{where}:{_line_of(text, match.start())}", match.group(1))
        for match in _README_BLOCK.finditer(text)
    ]


def rst_snippets(text, where):
    """(name, code) of each ``.. code-block:: python`` of a reStructuredText text."""
    return [
        (f"{where}:{_line_of(text, match.start())}", textwrap.dedent(match.group(1)))
        for match in _RST_BLOCK.finditer(text)
    ]


def _doc_pages():
    return sorted(DOCS.rglob("*.rst")) if DOCS.is_dir() else []


def _all_snippets():
    snippets = readme_snippets((ROOT / "README.md").read_text(encoding="utf-8"))
    for page in _doc_pages():
        if "_build" in page.parts or "generated" in page.parts:
            continue
        where = str(page.relative_to(ROOT))
        snippets += rst_snippets(page.read_text(encoding="utf-8"), where)
    return snippets


SNIPPETS = _all_snippets()


def _run(code, name):
    if re.search(r"^\s*(import|from) dask\b|morf_rs import dask", code, re.M):
        pytest.importorskip("dask")
        pytest.importorskip("distributed")
    exec(compile(code, name, "exec"), {"__name__": "__main__"})


@pytest.mark.parametrize(("name", "code"), SNIPPETS, ids=[s[0] for s in SNIPPETS])
def test_snippet_runs(name, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _run(code, name)


@pytest.mark.parametrize(
    "page",
    [page for page in _doc_pages() if ">>>" in page.read_text(encoding="utf-8")],
    ids=lambda page: str(page.relative_to(ROOT)),
)
def test_doctests_of_page(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = page.read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(
        text, {"__name__": "__main__"}, page.name, str(page), 0
    )
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    runner.run(test)
    assert runner.failures == 0, f"{runner.failures} doctest(s) of {page} failed"


def test_the_collection_finds_the_snippets():
    # README's quick starts (forest and booster) and the guide's pages are collected:
    # a change of fence or directive cannot leave the test running nothing.
    readme = [name for name, _ in SNIPPETS if name.startswith("README.md")]
    assert len(readme) >= 2
    assert any(
        "ManifoldObliqueGradientBoostingClassifier" in code
        for name, code in SNIPPETS
        if name.startswith("README.md")
    )
    if DOCS.is_dir():
        assert sum(name.startswith("docs/guide/") for name, _ in SNIPPETS) >= 10


def test_a_failing_snippet_fails(tmp_path, monkeypatch):
    # What the collection hands to _run is checked, not merely compiled: an
    # undefined name, as README's Dask block once had, raises.
    markdown = "text\n\n```python\nprint(X_train.shape)\n```\n"
    rst = ".. code-block:: python\n\n   import math\n   math.sqrt(adjacency)\n\nend\n"
    ((name, code),) = readme_snippets(markdown)
    assert name == "README.md:3"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NameError, match="X_train"):
        _run(code, name)
    ((name, code),) = rst_snippets(rst, "page.rst")
    with pytest.raises(NameError, match="adjacency"):
        _run(code, name)


# The submodules with API pages, and the optional packages each needs to import.
OPTIONAL_MODULES = {
    "dictionary": (),
    "datasets": (),
    "dask": ("dask", "distributed"),
    "onnx": ("onnx",),
    "stats": (),
    "plot": ("matplotlib",),
}


def _documented_names():
    text = (DOCS / "api.rst").read_text(encoding="utf-8")
    documented = set()
    module = "morf_rs"
    for line in text.splitlines():
        if line.startswith(".. currentmodule::"):
            module = line.split("::")[1].strip()
        elif re.fullmatch(r"   [A-Za-z_]\w*", line):
            documented.add(f"{module}.{line.strip()}")
    return documented


@pytest.mark.skipif(not DOCS.is_dir(), reason="no docs/ beside the tests")
def test_api_pages_list_every_public_name():
    import importlib

    modules = {"morf_rs": morf_rs}
    for name, needs in OPTIONAL_MODULES.items():
        for package in needs:
            pytest.importorskip(package)
        modules[f"morf_rs.{name}"] = importlib.import_module(f"morf_rs.{name}")
    public = {
        f"{module_name}.{name}"
        for module_name, module in modules.items()
        for name in module.__all__
        if not name.startswith("__") and f"morf_rs.{name}" not in modules
    }
    missing = sorted(public - _documented_names())
    assert not missing, f"docs/api.rst lists no page for {missing}"
