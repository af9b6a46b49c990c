"""benches/: every benchmark script goes through benches/harness.py, and the
harness's timing and writers do what the scripts rely on (no timing asserted)."""

import ast
import csv
import importlib.util
import sys
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parents[2] / "benches"


@pytest.fixture(scope="module")
def harness():
    spec = importlib.util.spec_from_file_location("harness", BENCHES / "harness.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["harness"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["harness"]


def _scripts():
    """benches/*.py run as programs (a ``__main__`` block); the others are data
    loaders, model recipes and report writers that the scripts import."""
    for path in sorted(BENCHES.glob("*.py")):
        if path.name != "harness.py" and '__name__ == "__main__"' in path.read_text():
            yield path


def _imported_modules(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def _calls_of(tree, owner, attribute):
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == attribute
        and isinstance(node.value, ast.Name)
        and node.value.id == owner
    ]


@pytest.mark.parametrize("path", list(_scripts()), ids=lambda path: path.name)
def test_every_benchmark_script_uses_the_harness(path):
    tree = ast.parse(path.read_text())
    assert "harness" in set(_imported_modules(tree)), (
        f"{path.name} must time, describe the machine and write its tables "
        "through benches/harness.py"
    )
    # Tables go through harness.write_csv; a writer of its own would drift.
    assert not _calls_of(tree, "csv", "DictWriter"), path.name


def test_scripts_are_found():
    names = {path.name for path in _scripts()}
    assert {"compare.py", "boosting.py", "scoring.py", "regression.py"} <= names
    assert "fashion_mnist.py" not in names  # a data loader, no program


def test_best_in_turns_keeps_each_calls_best_and_takes_turns(harness):
    order, durations = [], iter([5, 3, 2, 4, 1, 9])
    now = [0.0]

    def clock():
        return now[0]

    def call(label):
        def run():
            order.append(label)
            now[0] += next(durations)
            return f"{label} {len(order)}"

        return run

    results = {}
    best = harness.best_in_turns(
        {"a": call("a"), "b": call("b")}, rounds=3, clock=clock, results=results
    )
    assert order == ["a", "b", "a", "b", "a", "b"]
    assert best == {"a": 1, "b": 3}
    assert results == {"a": "a 5", "b": "b 6"}


def test_timed_returns_the_result_and_the_clocks_difference(harness):
    ticks = iter([10.0, 12.5])
    result, seconds = harness.timed(lambda: "done", clock=lambda: next(ticks))
    assert (result, seconds) == ("done", 2.5)


def test_peak_memory_sees_an_allocation(harness):
    if not harness.PEAK_MEMORY_SUPPORTED:
        pytest.skip("no resettable high-water mark on this system")
    size = 64 * 2**20

    def allocate():
        block = bytearray(size)
        block[::4096] = b"x" * len(block[::4096])  # touch every page
        return len(block)

    result, _, peak_mb = harness.timed_with_memory(allocate)
    assert result == size
    assert peak_mb >= 0.9 * size / 2**20


def test_csv_rows_are_written_appended_and_read_back(harness, tmp_path):
    path = tmp_path / "deep" / "runs.csv"
    harness.write_csv(path, [{"model": "RF", "fit_s": 1.5}])
    harness.write_csv(path, [{"model": "MORF", "fit_s": 2.25}], append=True)
    with path.open(newline="") as f:
        assert list(csv.reader(f)) == [
            ["model", "fit_s"],
            ["RF", "1.5"],
            ["MORF", "2.25"],
        ]
    assert harness.read_csv(path) == [
        {"model": "RF", "fit_s": "1.5"},
        {"model": "MORF", "fit_s": "2.25"},
    ]
    harness.write_csv(path, [{"model": "SPORF", "fit_s": 3.0}])  # starts over
    assert harness.read_csv(path) == [{"model": "SPORF", "fit_s": "3.0"}]
    harness.write_csv(tmp_path / "none.csv", [])
    assert not (tmp_path / "none.csv").exists()
    assert harness.read_csv(tmp_path / "none.csv") == []


def test_markdown_has_the_title_machine_tables_and_notes(harness, tmp_path):
    path = tmp_path / "out" / "table.md"
    about = {"cpu": "Some CPU", "cores": 2}
    rows = [{"model": "RF", "fit_s": 1.23456, "trees": 100}]
    harness.write_markdown(path, "Fits", rows, about, "Best of 3.")
    assert path.read_text() == (
        "# Fits\n\n- cpu: Some CPU\n- cores: 2\n\n"
        "| model | fit_s | trees |\n|---|---|---|\n| RF | 1.235 | 100 |\n"
        "\nBest of 3.\n"
    )
    sections = {"First": rows, "Empty": [], "Second": [{"x": "y"}]}
    harness.write_markdown(path, "Parts", sections, {})
    text = path.read_text()
    assert "## First\n\n| model | fit_s | trees |" in text
    assert "## Second\n\n| x |\n|---|\n| y |" in text
    assert "Empty" not in text


def test_machine_names_the_cpu_cores_python_and_libraries(harness):
    about = harness.machine(("csv", "a_module_that_is_not_there"))
    assert {"cpu", "cores", "python", "csv"} <= set(about)
    assert "a_module_that_is_not_there" not in about
    assert harness.describe(about).startswith(f"{about['cpu']}, {about['cores']} cores")


def test_quick_runs_write_under_the_ignored_quick_folder(harness, tmp_path):
    assert harness.output_folder(True) == BENCHES / "results" / "quick"
    probe = "made_by_test_benches_harness"
    assert harness.output_folder(False, under=probe) == BENCHES / "results" / probe
    (BENCHES / "results" / probe).rmdir()
    assert harness.output_folder(True, tmp_path, "ignored") == tmp_path
    ignored = (BENCHES.parent / ".gitignore").read_text().splitlines()
    assert "/benches/results/quick/" in ignored


def test_wall_and_cpu_times_come_from_the_same_turns(harness):
    order = []
    calls = {label: (lambda label=label: order.append(label)) for label in "ab"}
    wall, cpu = harness.best_wall_and_cpu(calls, rounds=2)
    assert order == ["a", "b", "a", "b"]
    assert set(wall) == set(cpu) == {"a", "b"}
    assert all(
        0 <= seconds < float("inf") for seconds in [*wall.values(), *cpu.values()]
    )


def test_machine_names_the_commit_the_figures_are_of(harness):
    import subprocess

    def git(*args):
        command = ["git", "-C", str(BENCHES), *args]
        return subprocess.run(command, capture_output=True, text=True)

    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        pytest.skip("benches/ is not in a git checkout")
    changed = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    commit = harness.machine()["commit"]
    assert commit == head.stdout.strip() + ("+changes" if changed else "")


def test_load_core_gives_each_build_its_own_module(tmp_path, monkeypatch):
    """benches' A/B of builds in one process (engine_scoring.py, contributions.py):
    each build loaded is its own module, not the first one loaded again."""
    from morf_rs import _core

    monkeypatch.syspath_prepend(str(BENCHES))
    spec = importlib.util.spec_from_file_location(
        "engine_scoring", BENCHES / "engine_scoring.py"
    )
    engine_scoring = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(engine_scoring)
    builds = []
    for name in ("first", "second"):
        build = tmp_path / name / "_core.abi3.so"
        build.parent.mkdir()
        build.write_bytes(Path(_core.__file__).read_bytes())
        builds.append(build)
    loaded = [engine_scoring.load_core(build) for build in builds]
    assert [Path(module.__file__).resolve() for module in loaded] == builds
    assert loaded[0] is not loaded[1]
    assert loaded[1].Forest is not loaded[0].Forest
