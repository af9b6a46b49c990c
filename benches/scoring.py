"""Batch scoring side by side: morf_rs, scikit-learn and treeple, 1 to N threads.

    python benches/scoring.py               # 1e4, 1e5, 1e6 rows -> benches/results/
    python benches/scoring.py --quick       # a minute or two -> benches/results/quick/
    python benches/scoring.py --threads 1 4 16 --rows 1000000
    python benches/scoring.py --report-only    # redraw scoring.md and the plot

The setting of issue 11: Fashion-MNIST, 100 trees per forest grown on 10,000 training
images with all threads, then predict_proba over batches of float32 rows of 784 pixels
(the 70,000 images repeated to the batch size) at each thread count, in this one
process, every library on the same arrays. Each figure is the best of a few calls, the
models taking turns call by call, so that a slow spell of the machine falls on all of
them. Then a batch written to a uint8 memmap is scored by morf_rs and scikit-learn
under a sampler of the process's private (anonymous) resident memory, which shows
what each holds beyond the output while it reads X from the file.

Writes scoring.csv, scoring_memmap.csv, scoring_meta.json, scoring.png and scoring.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

import numpy as np
import scoring_report
from fashion_mnist import load_fashion_mnist
from harness import (
    best_in_turns,
    machine,
    output_folder,
    release_freed_memory,
    timed,
    write_csv,
)
from models import Patches, available_models

FASHION_PATCHES = Patches((28, 28), (2, 2), (2, 5), False, "sqrt")
FOREST_ORDER = ("RF", "SPORF", "MORF")


def parse_args(argv=None) -> argparse.Namespace:
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small batches, 20 trees")
    parser.add_argument("--rows", type=int, nargs="+", help="batch sizes")
    parser.add_argument(
        "--threads",
        type=int,
        nargs="+",
        help="thread counts (default 1, 2, 4, 8, 16 up to this machine's cores)",
    )
    parser.add_argument("--trees", type=int, help="trees per forest (default 100)")
    parser.add_argument("--train", type=int, default=10_000, help="training images")
    parser.add_argument("--rounds", type=int, default=2, help="calls per figure")
    parser.add_argument(
        "--models",
        nargs="+",
        help="labels such as 'morf_rs RF' 'sklearn RF' (default: all that import)",
    )
    parser.add_argument("--memmap-rows", type=int, help="rows of the memmap batch")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args(argv)
    args.rows = args.rows or (
        [10_000, 100_000] if args.quick else [10**4, 10**5, 10**6]
    )
    default_threads = [t for t in (1, 2, 4, 8, 16) if t <= cores]
    args.threads = sorted(set(args.threads or default_threads))
    args.trees = args.trees or (20 if args.quick else 100)
    args.memmap_rows = args.memmap_rows or max(args.rows)
    args.out = output_folder(args.quick, args.out)
    return args


def fashion_batch(X_all: np.ndarray, n_rows: int) -> np.ndarray:
    """n_rows float32 images: all of Fashion-MNIST's, repeated as often as needed."""
    reps = -(-n_rows // len(X_all))
    return np.ascontiguousarray(np.tile(X_all, (reps, 1))[:n_rows], dtype=np.float32)


def time_scoring(fitted, batches, threads, rounds) -> list[dict]:
    rows = []
    for X in batches:
        for t in threads:
            for _, est in fitted:
                est.set_params(n_jobs=t)
            calls = {
                model.label: partial(est.predict_proba, X) for model, est in fitted
            }
            best = best_in_turns(calls, rounds)
            for model, _ in fitted:
                rows.append(
                    {
                        "library": model.library,
                        "forest": model.forest,
                        "rows": len(X),
                        "threads": t,
                        "predict_proba_s": best[model.label],
                        "rows_per_s": len(X) / best[model.label],
                    }
                )
                print(
                    f"{model.label:>16} {len(X):>9,} rows {t:>3} threads "
                    f"{best[model.label]:8.3f} s",
                    flush=True,
                )
    return rows


class AnonPeak:
    """The largest private resident memory (RssAnon) of this process while inside,
    sampled every 2 ms by a thread (the engine and numpy release the GIL)."""

    def __enter__(self) -> AnonPeak:
        release_freed_memory()  # so that the output's pages count
        self.base = self.peak = _rss_anon()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, _rss_anon())

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_anon())


def _rss_anon() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


def memmap_scoring(fitted, X_all, n_rows, threads) -> list[dict]:
    """Score a uint8 memmap of n_rows images (as they would be stored) with the
    largest thread count, measuring the private memory each library adds."""
    rows = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("MORF_BENCH_TMP")) as tmp:
        path = Path(tmp) / "images.u8"
        X = np.memmap(path, dtype=np.uint8, mode="w+", shape=(n_rows, X_all.shape[1]))
        for start in range(0, n_rows, len(X_all)):
            stop = min(n_rows, start + len(X_all))
            X[start:stop] = X_all[: stop - start]
        X.flush()
        del X
        for model, est in fitted:
            if model.forest != "RF":
                continue
            X = np.memmap(
                path, dtype=np.uint8, mode="r", shape=(n_rows, X_all.shape[1])
            )
            est.set_params(n_jobs=threads)
            with AnonPeak() as memory:
                proba, seconds = timed(partial(est.predict_proba, X))
            output = proba.nbytes
            del proba, X
            rows.append(
                {
                    "library": model.library,
                    "forest": model.forest,
                    "rows": n_rows,
                    "threads": threads,
                    "file_mb": n_rows * X_all.shape[1] / 2**20,
                    "output_mb": output / 2**20,
                    "peak_private_mb": (memory.peak - memory.base) / 2**20,
                    "predict_proba_s": seconds,
                }
            )
            print(f"memmap {model.label}: {rows[-1]}", flush=True)
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.report_only:
        scoring_report.write(args.out)
        return 0
    models, notes = available_models()
    if args.models:
        models = [m for m in models if m.label in args.models]
    models.sort(key=lambda m: (FOREST_ORDER.index(m.forest), m.library))
    X_train, y_train = load_fashion_mnist("train")
    X_test, _ = load_fashion_mnist("test")
    X_all = np.concatenate([X_train, X_test]).astype(np.uint8)
    rng = np.random.default_rng(0)
    train = rng.choice(len(X_train), args.train, replace=False)
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    load_before = os.getloadavg()[0]
    fitted = []
    for model in models:
        est = model.build(FASHION_PATCHES, args.trees, max(args.threads), 0)
        _, fit_s = timed(partial(est.fit, X_train[train], y_train[train]))
        print(f"fitted {model.label} in {fit_s:.1f} s", flush=True)
        est.predict_proba(X_train[:100])  # thread pools started outside the timing
        fitted.append((model, est))
    batches = [fashion_batch(X_all, n) for n in sorted(args.rows)]
    timings = time_scoring(fitted, batches, args.threads, args.rounds)
    del batches
    memmap = memmap_scoring(fitted, X_all, args.memmap_rows, max(args.threads))
    write_csv(args.out / "scoring.csv", timings)
    write_csv(args.out / "scoring_memmap.csv", memmap)
    about = machine(("morf_rs", "sklearn", "treeple", "numpy"))
    meta = {
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "started": started,
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": f"{about['cpu']}, {about['cores']} cores",
        "load_average_before": load_before,
        "versions": {k: v for k, v in about.items() if k not in ("cpu", "cores")},
        "trees": args.trees,
        "train_images": args.train,
        "rounds": args.rounds,
        "notes": notes,
    }
    (args.out / "scoring_meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    scoring_report.write(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
