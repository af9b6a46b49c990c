"""scoring.md and scoring.png from the CSVs benches/scoring.py writes."""

from __future__ import annotations

import json
from pathlib import Path

from harness import markdown_table, read_csv

TARGET_ROWS = 1_000_000
TARGET_THREADS = 16


def _read(path: Path) -> list[dict]:
    rows = read_csv(path)
    for row in rows:
        for key, value in row.items():
            if key not in ("library", "forest"):
                row[key] = float(value)
    return rows


def _label(row: dict) -> str:
    return f"{row['library']} {row['forest']}"


def _seconds(rows: list[dict]) -> dict[tuple[str, int, int], float]:
    return {
        (_label(r), int(r["rows"]), int(r["threads"])): r["predict_proba_s"]
        for r in rows
    }


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    return f"{seconds:.3g}" if seconds < 100 else f"{seconds:.0f}"


def _timing_tables(rows: list[dict]) -> list[str]:
    seconds = _seconds(rows)
    labels = list(dict.fromkeys(_label(r) for r in rows))
    threads = sorted({int(r["threads"]) for r in rows})
    lines = []
    for n in sorted({int(r["rows"]) for r in rows}):
        lines += [
            f"**{n:,} rows** (predict_proba seconds; speed-up from {threads[0]} to "
            f"{threads[-1]} threads)",
            "",
        ]
        table = []
        for label in labels:
            cells = [seconds.get((label, n, t)) for t in threads]
            first, last = cells[0], cells[-1]
            speedup = f"{first / last:.1f}x" if first and last else "–"
            table.append(
                {
                    "model": label,
                    **{f"{t} thr.": _fmt(c) for t, c in zip(threads, cells)},
                    "speed-up": speedup,
                }
            )
        lines += [*markdown_table(table), ""]
        pairs = [
            (t, seconds.get(("sklearn RF", n, t)), seconds.get(("morf_rs RF", n, t)))
            for t in threads
        ]
        ratios = [
            f"{theirs / ours:.2f}x at {t} thr."
            for t, theirs, ours in pairs
            if theirs and ours
        ]
        if ratios:
            lines += [
                "morf_rs RF against scikit-learn RF: " + ", ".join(ratios) + " faster.",
                "",
            ]
    return lines


def _targets(rows: list[dict], cores: int) -> list[str]:
    seconds = _seconds(rows)
    n, t = TARGET_ROWS, TARGET_THREADS

    def get(label, threads):
        return seconds.get((label, n, threads))

    table = []
    missing = (
        f"not measured: this run had no {n:,}-row batch at {t} threads "
        f"(machine: {cores} cores)"
    )
    ours, sklearn = get("morf_rs RF", t), get("sklearn RF", t)
    if ours and sklearn:
        ratio = sklearn / ours
        cell = (f"{ratio:.2f}x", "yes" if ratio >= 4 else "**no**")
    else:
        cell = (missing, "–")
    table.append(
        {
            "target": f"RF predict_proba >= 4x faster than scikit-learn at {t} threads",
            "measured": cell[0],
            "met": cell[1],
        }
    )
    for forest in ("RF", "MORF"):
        one, many = get(f"morf_rs {forest}", 1), get(f"morf_rs {forest}", t)
        if one and many:
            ratio = one / many
            cell = (f"{ratio:.1f}x", "yes" if ratio >= 12 else "**no**")
        else:
            cell = (missing, "–")
        table.append(
            {
                "target": f"{forest}: {t} threads >= 12x faster than 1",
                "measured": cell[0],
                "met": cell[1],
            }
        )
    return [*markdown_table(table), ""]


def _memmap_table(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    lines = [
        "## A uint8 memmap",
        "",
        "predict_proba over images stored as a uint8 memmap; private memory is the "
        "peak of the process's anonymous resident memory above its level before the "
        "call (sampled every 2 ms), so pages of the file in the page cache do not "
        "count, while a float copy of X does.",
        "",
    ]
    table = [
        {
            "model": _label(r),
            "rows": f"{int(r['rows']):,}",
            "threads": int(r["threads"]),
            "file MB": f"{r['file_mb']:.0f}",
            "output MB": f"{r['output_mb']:.0f}",
            "peak private MB": f"{r['peak_private_mb']:.0f}",
            "seconds": _fmt(r["predict_proba_s"]),
        }
        for r in rows
    ]
    return [*lines, *markdown_table(table), ""]


def _plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(int(r["rows"]) for r in rows)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label in dict.fromkeys(_label(r) for r in rows):
        points = sorted(
            (int(r["threads"]), r["predict_proba_s"])
            for r in rows
            if _label(r) == label and int(r["rows"]) == n
        )
        threads, seconds = zip(*points)
        style = "-" if label.startswith("morf_rs") else "--"
        (line,) = ax.plot(threads, seconds, style, marker="o", label=label)
        if label.startswith("morf_rs"):
            ideal = [seconds[0] * threads[0] / t for t in threads]
            ax.plot(threads, ideal, ":", color=line.get_color(), linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted({int(r["threads"]) for r in rows})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_xlabel("threads")
    ax.set_ylabel("predict_proba seconds")
    ax.set_title(
        f"predict_proba over {n:,} Fashion-MNIST rows (dotted: linear scaling)"
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write(out: Path) -> None:
    rows = _read(out / "scoring.csv")
    memmap = _read(out / "scoring_memmap.csv")
    meta = json.loads((out / "scoring_meta.json").read_text())
    cores = int(meta["machine"].rsplit(",", 1)[1].split()[0])
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    lines = [
        "# Batch scoring: morf_rs beside scikit-learn and treeple",
        "",
        f"Made by `python benches/{meta['command']}`, {meta['started']} to "
        f"{meta['finished']}.",
        f"Machine: {meta['machine']}, load average {meta['load_average_before']:.2f} "
        "before the run.",
        f"Versions: {versions}.",
        "",
        f"Fashion-MNIST: every forest has {meta['trees']} trees grown on "
        f"{meta['train_images']:,} training images (MORF: patches 2x(2..5), "
        "max_features sqrt; SPORF and RF: sqrt), then predict_proba over float32 "
        "batches of the 70,000 images repeated, best of "
        f"{meta['rounds']} calls with the models taking turns.",
        "",
        *(f"- {note}" for note in meta["notes"].values()),
        "",
        f"## Targets (issue 11; {TARGET_ROWS:,} rows)",
        "",
        *_targets(rows, cores),
        "## Seconds per batch",
        "",
        *_timing_tables(rows),
        "![predict_proba seconds against threads](scoring.png)",
        "",
        *_memmap_table(memmap),
    ]
    (out / "scoring.md").write_text("\n".join(lines))
    _plot(rows, out / "scoring.png")
