"""Figures and summary.md from what compare.py writes.

Inputs in the output folder: runs.csv, predict_scaling.csv, meta.json, importance.npz.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
from harness import markdown_table, read_csv
from report_figures import curves, importance_plot, scaling_plot

ORDER = (
    "morf_rs MORF",
    "treeple MORF",
    "morf_rs SPORF",
    "treeple SPORF",
    "morf_rs RF",
    "sklearn RF",
)
TITLES = {
    "circle": "(A) circle",
    "bars": "(B) orthogonal bars",
    "impulse": "(C) impulse",
    "multivariate": "(D) multivariate",
    "fashion": "Fashion-MNIST",
}
OURS_MORF, TREEPLE_MORF = "morf_rs MORF", "treeple MORF"
OURS_RF, SKLEARN_RF = "morf_rs RF", "sklearn RF"
NUMERIC = ("n", "seed", "threads", "n_estimators", "n_test", "batch_rows")


def _read_csv(path: Path) -> list[dict]:
    rows = read_csv(path)
    for row in rows:
        for key, value in row.items():
            if key in NUMERIC:
                row[key] = int(value)
            elif key not in ("library", "forest", "experiment"):
                row[key] = float(value) if value not in ("", "nan") else math.nan
        row["label"] = f"{row['library']} {row['forest']}"
        if "pickle_bytes" in row:
            row["pickle_mb"] = row["pickle_bytes"] / 1e6
    return rows


class Runs:
    """runs.csv grouped by (model label, experiment, n)."""

    def __init__(self, rows: list[dict]):
        self.groups: dict[tuple[str, str, int], list[dict]] = defaultdict(list)
        for row in rows:
            self.groups[row["label"], row["experiment"], row["n"]].append(row)
        self.experiments = [e for e in TITLES if any(k[1] == e for k in self.groups)]
        present = {k[0] for k in self.groups}
        self.labels = [lab for lab in ORDER if lab in present]

    def sizes(self, experiment: str, label: str | None = None) -> list[int]:
        return sorted(
            {k[2] for k in self.groups if k[1] == experiment and label in (None, k[0])}
        )

    def has(self, label: str, experiment: str, n: int) -> bool:
        return (label, experiment, n) in self.groups

    def values(self, label: str, experiment: str, n: int, metric: str) -> np.ndarray:
        return np.array(
            [
                r.get(metric, math.nan)
                for r in self.groups.get((label, experiment, n), [])
            ],
            float,
        )

    def mean(self, label, experiment, n, metric) -> float:
        v = self.values(label, experiment, n, metric)
        return float(np.nanmean(v)) if v.size else math.nan

    def sd(self, label, experiment, n, metric) -> float:
        v = self.values(label, experiment, n, metric)
        return float(np.nanstd(v, ddof=1)) if v.size > 1 else 0.0

    def n_test(self, experiment: str) -> int:
        return next(
            r["n_test"]
            for k, rs in self.groups.items()
            if k[1] == experiment
            for r in rs
        )


def _fmt(x: float) -> str:
    """Three significant figures, thousands grouped; a dash for a missing value."""
    if math.isnan(x):
        return "–"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}" if abs(x) < 1 else f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}"


def _error_tolerance(runs: Runs, a: str, b: str, exp: str, n: int) -> float:
    """How far apart two mean test errors may be and still count as equal.

    The larger of the two standard deviations over seeds and the binomial standard
    error of the difference on the test set (which is all there is with one seed).
    """
    pa, pb = (runs.mean(m, exp, n, "test_error") for m in (a, b))
    binomial = math.sqrt((pa * (1 - pa) + pb * (1 - pb)) / runs.n_test(exp))
    spread = max(runs.sd(m, exp, n, "test_error") for m in (a, b))
    return max(spread, binomial)


def _pairs(runs: Runs, a: str, b: str, large: bool) -> list[tuple[str, int]]:
    """(experiment, n) where both models ran; ``large``: n >= 1000 or Fashion-MNIST."""
    return [
        (e, n)
        for e in runs.experiments
        for n in runs.sizes(e)
        if runs.has(a, e, n)
        and runs.has(b, e, n)
        and (not large or n >= 1000 or e == "fashion")
    ]


def _worst_ratio(runs: Runs, a: str, b: str, metric: str, large: bool):
    """min of mean(b) / mean(a) over the shared points: how well a beats b at worst."""
    ratios = [
        (runs.mean(b, e, n, metric) / runs.mean(a, e, n, metric), e, n)
        for e, n in _pairs(runs, a, b, large)
    ]
    return min(ratios) if ratios else None


def _error_points(runs: Runs, a: str, b: str) -> tuple[int, str | None]:
    """How often and where a's test error is above b's beyond the spread."""
    pairs = _pairs(runs, a, b, large=False)
    if not pairs:
        return 0, None
    worse = [
        f"{e} n={n:,}"
        for e, n in pairs
        if runs.mean(a, e, n, "test_error") - runs.mean(b, e, n, "test_error")
        > _error_tolerance(runs, a, b, e, n)
    ]
    where = f" ({', '.join(worse)})" if worse else ""
    return len(
        worse
    ), f"worse beyond the spread at {len(worse)} of {len(pairs)} points{where}"


def _targets(runs: Runs, scaling: list[dict]) -> list[str]:
    """A table row per target of issue 4: what was measured and whether it is met."""
    table = []

    def add(target: str, measured: str | None, met: bool) -> None:
        verdict = "–" if measured is None else "yes" if met else "**no**"
        table.append(
            {"target": target, "measured": measured or "not measured", "met": verdict}
        )

    def at_worst(r, what: str = "") -> str | None:
        return r and f"{r[0]:.2f}x{what} at worst ({r[1]} n={r[2]:,})"

    r = _worst_ratio(runs, OURS_MORF, TREEPLE_MORF, "fit_s", large=True)
    add(
        "MORF fit >= 4x faster than treeple's patch forest (n >= 1000, Fashion-MNIST)",
        at_worst(r),
        bool(r) and r[0] >= 4,
    )
    worse, found = _error_points(runs, OURS_MORF, TREEPLE_MORF)
    add(
        "MORF test error no worse than treeple's (every experiment and n)",
        found,
        not worse,
    )
    r = _worst_ratio(runs, OURS_RF, SKLEARN_RF, "fit_s", large=True)
    add(
        "our RF fit no slower than scikit-learn's (n >= 1000, Fashion-MNIST)",
        at_worst(r),
        bool(r) and r[0] >= 1,
    )
    worse, found = _error_points(runs, OURS_RF, SKLEARN_RF)
    add(
        "our RF test error equal to scikit-learn's (every experiment and n)",
        found,
        not worse,
    )

    proba = {(r["label"], r["threads"]): r["predict_proba_s"] for r in scaling}
    threads = sorted({r["threads"] for r in scaling})
    speedups = [
        (proba[SKLEARN_RF, t] / proba[OURS_RF, t], t)
        for t in threads
        if (SKLEARN_RF, t) in proba and (OURS_RF, t) in proba
    ]
    add(
        "predict_proba >= 2x faster than scikit-learn (10,000 rows, RF vs RF)",
        ", ".join(f"{x:.2f}x with {t} thread(s)" for x, t in speedups) or None,
        all(x >= 2 for x, _ in speedups),
    )
    ours = [proba[OURS_RF, t] for t in threads if (OURS_RF, t) in proba]
    scale = ours[0] / ours[-1] if len(ours) > 1 else None
    add(
        "our predict_proba scales with threads (at least 75% of linear)",
        scale and f"{scale:.2f}x faster with {threads[-1]} threads than with 1",
        bool(scale) and scale >= 0.75 * threads[-1],
    )

    r = _worst_ratio(runs, OURS_MORF, TREEPLE_MORF, "pickle_bytes", large=False)
    add(
        "pickle >= 20x smaller than treeple's patch forest",
        at_worst(r, " smaller"),
        bool(r) and r[0] >= 20,
    )
    # Below n = 1000 both rises are a fraction of a MB: page and allocator granularity.
    r = _worst_ratio(runs, OURS_MORF, TREEPLE_MORF, "peak_mem_mb", large=True)
    add(
        "peak fit memory below treeple's patch forest (n >= 1000, Fashion-MNIST)",
        r and f"treeple's / ours: {r[0]:.2f} at worst ({r[1]} n={r[2]:,})",
        bool(r) and r[0] > 1,
    )

    circle = [
        n for e, n in _pairs(runs, OURS_MORF, TREEPLE_MORF, False) if e == "circle"
    ]
    err = {
        (m, n): runs.mean(m, "circle", n, "test_error")
        for m in (OURS_MORF, TREEPLE_MORF)
        for n in circle
    }
    add(
        "circle: MORF with wrap below treeple without, beyond the spread, at every n",
        ", ".join(
            f"n={n:,}: {err[OURS_MORF, n]:.3f} vs {err[TREEPLE_MORF, n]:.3f}"
            for n in circle
        )
        or None,
        all(
            err[OURS_MORF, n]
            < err[TREEPLE_MORF, n]
            - _error_tolerance(runs, OURS_MORF, TREEPLE_MORF, "circle", n)
            for n in circle
        ),
    )
    seam = {
        (m, n): runs.mean(m, "circle", n, "seam_error")
        for m in (OURS_MORF, TREEPLE_MORF)
        for n in circle
    }
    if not any(math.isnan(v) for v in seam.values()):
        add(
            "circle, test rows with a segment across the seam (where wrap matters): "
            "MORF with wrap below treeple at every n",
            ", ".join(
                f"n={n:,}: {seam[OURS_MORF, n]:.3f} vs {seam[TREEPLE_MORF, n]:.3f}"
                for n in circle
            )
            or None,
            all(seam[OURS_MORF, n] < seam[TREEPLE_MORF, n] for n in circle),
        )
    return markdown_table(table)


def _key_sizes(runs: Runs, exp: str) -> list[int]:
    sizes = runs.sizes(exp)
    # Fashion-MNIST also at the reference point, 10,000 images.
    reference = 10_000
    if exp == "fashion" and reference in sizes and sizes[-1] != reference:
        return [reference, sizes[-1]]
    return sizes[-1:]


def _key_table(runs: Runs, exp: str, n: int) -> list[str]:
    seeds = max(len(runs.values(lab, exp, n, "test_error")) for lab in runs.labels)
    lines = [
        f"**{TITLES[exp]}**, n = {n:,} ({seeds} seed(s), "
        f"test set {runs.n_test(exp):,} rows)",
        "",
    ]
    table = []
    for lab in runs.labels:
        if not runs.has(lab, exp, n):
            continue

        def m(metric: str, lab=lab) -> float:
            return runs.mean(lab, exp, n, metric)

        sd = runs.sd(lab, exp, n, "test_error")
        table.append(
            {
                "model": lab,
                "test error": f"{m('test_error'):.3f} ± {sd:.3f}",
                "fit s": _fmt(m("fit_s")),
                "predict_proba s": _fmt(m("predict_s")),
                "pickle MB": _fmt(m("pickle_mb")),
                "peak fit MB": _fmt(m("peak_mem_mb")),
                "max depth": f"{m('max_depth'):.1f}",
                "leaves": f"{m('n_leaves'):,.0f}",
            }
        )
    return [*lines, *markdown_table(table), ""]


def _scaling_table(scaling: list[dict], scaling_n: int) -> list[str]:
    lines = [
        f"## Predict on a {scaling[0]['batch_rows']:,}-row batch",
        "",
        f"Fashion-MNIST models fitted on n = {scaling_n:,}; best of 5 calls, the "
        "models taking turns.",
        "",
    ]
    table = [
        {
            "model": lab,
            "threads": r["threads"],
            "predict_proba s": f"{r['predict_proba_s']:.3f}",
            "predict s": f"{r['predict_s']:.3f}",
        }
        for lab in ORDER
        for r in sorted(
            (r for r in scaling if r["label"] == lab), key=lambda r: r["threads"]
        )
    ]
    return [*lines, *markdown_table(table), ""]


METHOD = """\
Hyperparameters follow the seeds' Table S2. MORF: circle patches 1x3..12 with wrap
and max_features 0.5; bars 2x2..9, sqrt; impulse 1x2..12, 0.3; multivariate 2x5..10,
sqrt; Fashion-MNIST 2x2..5, sqrt. SPORF (1.5 nonzeros per atom) and RF: max_features
sqrt. Test error is on a fixed test set; fit and predict_proba are wall-clock seconds;
pickle is the `pickle.dump` size; peak fit memory is the rise of the process's resident
set during fit (the kernel's high-water mark, reset just before fit), so native
allocations count too. Errors are means ± standard deviation over seeds; "beyond the
spread" means by more than the larger of those deviations and the test set's binomial
standard error.
"""


def _retiming(meta: dict) -> list[str]:
    if "fit_rounds" not in meta:  # results made before fits were timed again
        return []
    return [
        f"Where every fit of a round (one n and seed) took at most "
        f"{meta['retime_under_s']:g} s, the round was fitted {meta['fit_rounds']} "
        "times over, the models taking turns, and each fit time is the model's best.",
        "",
    ]


def _summary(runs: Runs, scaling: list[dict], meta: dict, figures: list[str]) -> str:
    v = meta["versions"]
    cfg = meta["config"]
    lines = [
        "# Benchmark: morf_rs beside scikit-learn and treeple",
        "",
        f"Made by `python benches/{meta['command']}` (preset `{meta['preset']}`), "
        f"{meta['started']} to {meta['finished']}.",
        f"Machine: {meta['cpu']}, {meta['cores_available']} cores, load average "
        f"{meta['load_before']:.2f} before the run. Every library ran in one process "
        f"on the same arrays with n_jobs={meta['threads']} and "
        f"{meta['n_estimators']} trees.",
        f"Versions: morf_rs {v['morf_rs']}, scikit-learn {v['scikit-learn']}, "
        f"treeple {v['treeple']}, numpy {v['numpy']}, Python {v['python']}.",
        "",
        METHOD,
        *_retiming(meta),
        *(f"- {note}" for note in meta["notes"]),
        "",
        "## Targets (issue 4)",
        "",
        *_targets(runs, scaling),
        "",
        "## Key figures",
        "",
    ]
    for exp in runs.experiments:
        for n in _key_sizes(runs, exp):
            lines += _key_table(runs, exp, n)
    if scaling:
        lines += _scaling_table(scaling, cfg["scaling_n"])
    if meta["failures"]:
        lines += ["## Failures", "", *(f"- {f}" for f in meta["failures"]), ""]
    lines += ["## Figures", "", *(f"- [{f}]({f})" for f in figures), ""]
    return "\n".join(lines)


def write_all(out: Path) -> None:
    runs = Runs(_read_csv(out / "runs.csv"))
    scaling = _read_csv(out / "predict_scaling.csv")
    meta = json.loads((out / "meta.json").read_text())
    figures = []
    if runs.experiments:
        plots = {
            "error_vs_n.png": (
                [("test_error", "test error", False)],
                "Test error against training size (seeds' Fig. 2)",
            ),
            "time_vs_n.png": (
                [
                    ("fit_s", "fit seconds", True),
                    ("predict_s", "predict_proba s", True),
                ],
                "Fit and predict time (seeds' Fig. S1)",
            ),
            "tree_complexity.png": (
                [
                    ("max_depth", "max depth", False),
                    ("mean_leaf_depth", "mean leaf depth", False),
                    ("n_leaves", "leaves per tree", True),
                ],
                "Tree complexity, mean over trees (seeds' Fig. 3)",
            ),
            "size_vs_n.png": (
                [
                    ("pickle_mb", "pickle MB", True),
                    ("peak_mem_mb", "peak fit MB", True),
                ],
                "Pickled model size and peak fit memory",
            ),
        }
        for name, (metrics, title) in plots.items():
            curves(runs, metrics, out / name, title, TITLES)
            figures.append(name)
    if scaling:
        scaling_plot(scaling, out / "predict_scaling.png", ORDER)
        figures.append("predict_scaling.png")
    if (out / "importance.npz").is_file():
        with np.load(out / "importance.npz") as f:
            importance_plot(dict(f), out / "importance_fashion.png")
        figures.append("importance_fashion.png")
    (out / "summary.md").write_text(_summary(runs, scaling, meta, figures))
