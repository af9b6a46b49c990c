"""The figures of summary.md (benches/report.py): curves against n, thread scaling,
importance maps."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

if TYPE_CHECKING:
    from report import Runs

COLOURS = {"MORF": "tab:red", "SPORF": "tab:blue", "RF": "tab:green"}
STYLES = {"morf_rs": ("-", "o"), "treeple": ("--", "s"), "sklearn": (":", "^")}


class _PlainLogFormatter(matplotlib.ticker.LogFormatter):
    """Log-axis labels as plain numbers (0.2, 3, 40): they read faster than 2e-01."""

    def _num_to_string(self, x, vmin, vmax):
        return f"{x:g}"


def _log_y(ax) -> None:
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(_PlainLogFormatter(labelOnlyBase=False))
    ax.yaxis.set_minor_formatter(
        _PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5))
    )


def _line_style(label: str) -> dict:
    library, forest = label.split()
    linestyle, marker = STYLES[library]
    return dict(
        color=COLOURS[forest],
        linestyle=linestyle,
        marker=marker,
        markersize=4,
        label=label,
    )


def curves(
    runs: Runs,
    metrics: list[tuple[str, str, bool]],
    path: Path,
    title: str,
    titles: dict[str, str],
) -> None:
    """One column per experiment (titled from ``titles``), one row per (metric,
    y label, log y).

    One line per model: the mean over seeds, with a band of +- one standard deviation.
    """
    cols = len(runs.experiments)
    fig, axes = plt.subplots(
        len(metrics), cols, figsize=(3.6 * cols, 2.9 * len(metrics)), squeeze=False
    )
    for j, exp in enumerate(runs.experiments):
        for i, (metric, ylabel, logy) in enumerate(metrics):
            ax = axes[i, j]
            for label in runs.labels:
                ns = runs.sizes(exp, label)
                if not ns:
                    continue
                mean = np.array([runs.mean(label, exp, n, metric) for n in ns])
                sd = np.array([runs.sd(label, exp, n, metric) for n in ns])
                ax.plot(ns, mean, **_line_style(label))
                ax.fill_between(
                    ns,
                    mean - sd,
                    mean + sd,
                    color=COLOURS[label.split()[1]],
                    alpha=0.12,
                )
            ax.set_xscale("log")
            if logy:
                _log_y(ax)
            ax.grid(alpha=0.3, which="both")
            if i == 0:
                ax.set_title(titles[exp])
            if i == len(metrics) - 1:
                ax.set_xlabel("training samples n")
            if j == 0:
                ax.set_ylabel(ylabel)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def scaling_plot(scaling: list[dict], path: Path, order: Sequence[str]) -> None:
    """predict_proba seconds against threads, one line per model of ``order``."""
    fig, ax = plt.subplots(figsize=(6, 4))
    labels = [lab for lab in order if any(r["label"] == lab for r in scaling)]
    for label in labels:
        rows = sorted(
            (r for r in scaling if r["label"] == label), key=lambda r: r["threads"]
        )
        ax.plot(
            [r["threads"] for r in rows],
            [r["predict_proba_s"] for r in rows],
            **_line_style(label),
        )
    threads = sorted({r["threads"] for r in scaling})
    ax.set_xscale("log", base=2)
    ax.set_xticks(threads, [str(t) for t in threads])
    _log_y(ax)
    ax.set_xlabel("threads (n_jobs)")
    ax.set_ylabel("predict_proba seconds")
    ax.set_title(f"predict_proba on {scaling[0]['batch_rows']:,} Fashion-MNIST rows")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def importance_plot(maps: dict[str, np.ndarray], path: Path) -> None:
    """Two classes' mean images, their difference, and each forest's importances."""
    from fashion_mnist import CLASS_NAMES

    means = [k for k in maps if k.startswith("mean ")]
    a, b = (maps[k] for k in means)
    top = [
        (maps[means[0]], CLASS_NAMES[int(means[0][5:])]),
        (maps[means[1]], CLASS_NAMES[int(means[1][5:])]),
        (np.abs(a - b), "|difference|"),
    ]
    bottom = [(maps[k], f"{k} importance") for k in ("RF", "SPORF", "MORF")]
    fig, axes = plt.subplots(2, 3, figsize=(9, 6.6), layout="constrained")
    for ax, (img, title) in zip(axes.ravel(), top + bottom):
        ax.imshow(img, cmap="viridis")
        ax.set_title(title, fontsize=10)
        ax.axis("off")
    fig.suptitle(
        "Fashion-MNIST, 100 images per class: class means (top), "
        "morf_rs feature_importances_ (bottom)"
    )
    fig.savefig(path, dpi=110)
    plt.close(fig)
