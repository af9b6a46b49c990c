"""boosting.md: the summary of the CSV files benches/boosting.py writes."""

from __future__ import annotations

import numpy as np
from harness import describe, machine, markdown_table, read_csv


def write_summary(out, threads, accuracy_parts):
    """boosting.md in ``out`` from the CSV files the parts of boosting.py wrote there
    (those of ``accuracy_parts``, timing, rounds, scoring; each if present)."""
    about = machine(("numpy", "sklearn", "lightgbm", "morf_rs"))
    lines = [
        "# Gradient boosting over atoms: results",
        "",
        f"Machine: {describe(about)}; threads {threads}.",
        "",
    ]
    accuracy = [
        row for part in accuracy_parts for row in read_csv(out / f"boosting_{part}.csv")
    ]
    if accuracy:
        lines += ["## Test error (mean over seeds, spread = min..max)", ""]
        groups = {}
        for row in accuracy:
            key = (row["experiment"], int(row["n"]), row["model"])
            groups.setdefault(key, []).append(row)
        table = []
        for (experiment, n, model), group in groups.items():
            errors = [float(r["error"]) for r in group]
            fits = [float(r["fit_s"]) for r in group]
            table.append(
                {
                    "experiment": experiment,
                    "n": f"{n:,}",
                    "model": model,
                    "rounds": group[0].get("rounds", ""),
                    "test error": f"{np.mean(errors):.4f}",
                    "spread": f"{min(errors):.4f}..{max(errors):.4f}",
                    "fit (s)": f"{np.mean(fits):.1f}",
                }
            )
        lines += [*markdown_table(table), ""]
    timing = read_csv(out / "boosting_timing.csv")
    if timing:
        lines += [
            f"## Fashion-MNIST, {int(timing[0]['n']):,} images, "
            f"{timing[0]['rounds']} rounds, {timing[0]['leaves']} leaves",
            "",
        ]
        table = [
            {
                "model": row["model"],
                "fit (s)": f"{float(row['fit_s']):.1f}",
                "fit CPU (s)": f"{float(row.get('fit_cpu_s') or 'nan'):.1f}",
                "turns": row.get("turns") or "1",
                "predict_proba 10,000 rows (s)": f"{float(row['predict_s']):.3f}",
                "test error": f"{float(row['error']):.4f}",
            }
            for row in timing
        ]
        lines += [*markdown_table(table), ""]
    by_round = read_csv(out / "boosting_rounds.csv")
    if by_round:
        names = list(dict.fromkeys(row["model"] for row in by_round))
        rounds = list(dict.fromkeys(row["rounds"] for row in by_round))
        error = {(row["model"], row["rounds"]): float(row["error"]) for row in by_round}
        lines += [
            f"## Test error round after round, Fashion-MNIST "
            f"{int(by_round[0]['n']):,} images (`--part rounds`)",
            "",
        ]
        table = [
            {"rounds": k, **{name: f"{error[(name, k)]:.4f}" for name in names}}
            for k in rounds
        ]
        lines += [*markdown_table(table), ""]
    scoring = read_csv(out / "boosting_scoring.csv")
    if scoring:
        first = scoring[0]
        lines += [
            f"## Scoring: predict_proba of {int(first['rows_scored']):,} Fashion-MNIST "
            f"images, {first['rounds']} rounds x 10 classes, {first['leaves']} leaves",
            "",
            f"Fitted on {int(first['n_train']):,} images; best of {first['repeats']} "
            "runs taken in turn (`--part scoring`).",
            "",
        ]
        table = [
            {
                "model": row["model"],
                "threads": row["threads"],
                "predict_proba (s)": f"{float(row['predict_s']):.3f}",
                "test error": f"{float(row['error']):.4f}",
            }
            for row in scoring
        ]
        lines += [*markdown_table(table), ""]
    (out / "boosting.md").write_text("\n".join(lines))
