"""The CSVs, summary.md and the importance figure of benches/dictionaries.py."""

from __future__ import annotations

import math

import numpy as np
from harness import command_line, describe, machine, markdown_table, read_csv, write_csv


class Table:
    """Rows appended to one CSV of the output folder."""

    def __init__(self, name: str, args):
        self.path = args.out / f"{name}.csv"
        if args.fresh and self.path.exists():
            self.path.unlink()

    def add(self, **row):
        write_csv(self.path, [row], append=True)
        print(
            ", ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                for k, v in row.items()
            ),
            flush=True,
        )


def plot_importance(maps, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(maps)
    columns = 4
    rows = math.ceil(len(names) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3 * columns, 3.5 * rows))
    for ax in axes.flat:
        ax.axis("off")
    for ax, name in zip(axes.flat, names):
        ax.imshow(np.asarray(maps[name]).reshape(28, 28), cmap="viridis")
        ax.set_title(name, fontsize=8)
    fig.suptitle(
        "Fashion-MNIST, Sneaker (7) against Ankle boot (9), 100 images each, 500 trees"
    )
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(out / "importance.png", dpi=110)
    plt.close(fig)


def _read(out, name):
    return read_csv(out / f"{name}.csv")


def _spread(rows, keys):
    """Mean and standard deviation of the test error over seeds, per ``keys``."""
    groups = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(
            float(row["test_error"])
        )
    return {k: (float(np.mean(v)), float(np.std(v)), len(v)) for k, v in groups.items()}


def report(args):
    lines = [
        "# Atom dictionaries: measured",
        "",
        f"Written by `{command_line()}`; see the docstring of "
        "benches/dictionaries.py for the parts and settings.",
        "",
        f"Machine: {describe(machine())}.",
        "",
    ]
    for path in sorted(args.out.glob("fashion*.csv")):
        fashion = _read(args.out, path.stem)
        lines += [
            f"## Fashion-MNIST ({path.name})",
            "",
        ]
        table = [
            {
                "model": row["model"],
                "trees": row["trees"],
                "training images": row["n"],
                "threads": row["threads"],
                "fit (s)": f"{float(row['fit_s']):.1f}",
                "test error": f"{float(row['test_error']):.4f}",
            }
            for row in fashion
        ]
        lines += [*markdown_table(table), ""]
    scan = _read(args.out, "scan")
    if scan:
        lines += [
            "## Scan: what the images dictionary was chosen from",
            "",
            "One forest each (seed 0), 100 trees, bootstrap=False unless named.",
            "",
        ]
        table = [
            {
                "data": row["data"],
                "training samples": row["n"],
                "model": row["model"],
                "max_features": row["max_features"],
                "fit (s)": f"{float(row['fit_s']):.1f}",
                "test error": f"{float(row['test_error']):.4f}",
            }
            for row in scan
        ]
        lines += [*markdown_table(table), ""]
    for name, keys, title in (
        ("signals", ("experiment", "n", "model"), "Seed experiments and MNIST-1D"),
        ("graphs", ("data", "n", "model"), "Graphs"),
    ):
        stats = _spread(_read(args.out, name), keys)
        if not stats:
            continue
        lines += [
            f"## {title}",
            "",
            "Test error, mean ± standard deviation over seeds.",
            "",
        ]
        table = [
            {
                keys[0]: key[0],
                "n": key[1],
                "model": key[2],
                "test error": f"{mean:.4f} ± {sd:.4f}",
                "seeds": count,
            }
            for key, (mean, sd, count) in stats.items()
        ]
        lines += [*markdown_table(table), ""]
    if (args.out / "importance.png").exists():
        lines += ["## Importance maps", "", "![importance](importance.png)", ""]
    (args.out / "summary.md").write_text("\n".join(lines))
