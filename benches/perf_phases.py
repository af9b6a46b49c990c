"""Shares of a fit's CPU samples by phase, from a perf profile with call chains.

    perf record --call-graph dwarf,16384 -F 500 -o fit.data -- \
        python benches/profile_fit.py booster
    perf script -i fit.data --comm "morf_rs engine" -F comm,ip,sym | \
        python benches/perf_phases.py

With ``--out FOLDER`` the shares are also written to FOLDER/perf_phases.csv and .md
(``--quick`` runs on a few built-in samples, to check the script, and writes to
benches/results/quick/).

Each sample goes to the phase of the innermost frame of its call chain (inlined frames
included) that names one, else to "other"; a fit runs on the "morf_rs engine" thread,
so filtering on it leaves out Python, data loading and predict_proba.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from harness import machine, markdown_table, output_folder, write_csv, write_markdown

# perf script lines of two samples, for --quick.
QUICK_SAMPLES = """\
morf_rs engine
\t7f00 morf_rs::tree::NodeProjector::project
\t7f01 morf_rs::forest::fit

morf_rs engine
\t7f02 core::slice::sort::quicksort
\t7f03 morf_rs::split::best_split

"""

# Innermost match wins, so a sort inside split search counts as sorting, a projection
# inside binning as projection. Tried in this order within one frame.
PHASES = (
    (
        "projection",
        (
            "NodeProjector",
            "Atom::project",
            "project_rows",
            "project_columns",
            "project_pooled",
        ),
    ),
    (
        "sort",
        (
            "sort_by_value",
            "sort_whole_values",
            "sort_generally",
            "smallsort",
            "quicksort",
            "radix",
        ),
    ),
    ("histogram build", ("histogram::build", "build<")),
    ("histogram subtract", ("histogram::subtract", "subtract")),
    (
        "split scan",
        (
            "scan_sorted",
            "scan_counted",
            "boost::split::scan",
            "best_bin_split",
            "NodeScan",
            "gather_classes",
        ),
    ),
    (
        "binning",
        ("quantile_edges", "bin_of", "BinnedAtoms", "AtomEdges", "place_edges"),
    ),
    ("partition", ("split_node",)),
    ("atom sampling", ("AtomSampler", "append_atoms", "sample_node", "Sampler")),
    ("gradients", ("boost::loss", "Loss", "gradients")),
    ("memset (clearing buffers)", ("memset",)),
)


def phase_of(frames: list[str]) -> str:
    # A forest node's samples are sent left or right by projecting them again on the
    # chosen atom, in find_split outside split search.
    text = "".join(frames)
    if "find_split" in text and "best_split" not in text and "Sampler" not in text:
        return "partition"
    for frame in frames:
        for phase, needles in PHASES:
            if any(needle in frame for needle in needles):
                return phase
    return "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for perf_phases.csv and .md")
    parser.add_argument("--quick", action="store_true", help="built-in samples")
    args = parser.parse_args()
    lines = QUICK_SAMPLES.splitlines(keepends=True) if args.quick else sys.stdin
    counts: Counter[str] = Counter()
    frames: list[str] = []
    for line in lines:
        if line.strip():
            if not line[0].isspace():
                frames = []
            else:
                frames.append(line.split(None, 1)[-1])
            continue
        if frames:
            counts[phase_of(frames)] += 1
        frames = []
    if frames:
        counts[phase_of(frames)] += 1
    total = sum(counts.values())
    rows = [
        {"phase": phase, "samples": count, "share_pct": 100 * count / total}
        for phase, count in counts.most_common()
    ]
    print(f"{total} samples")
    print("\n".join(markdown_table(rows)))
    if args.quick or args.out:
        folder = output_folder(args.quick, args.out)
        write_csv(folder / "perf_phases.csv", rows)
        write_markdown(
            folder / "perf_phases.md",
            f"Shares of a fit's CPU samples by phase ({total} samples)",
            rows,
            machine(),
        )


if __name__ == "__main__":
    main()
