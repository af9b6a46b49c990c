"""Measure how soon Ctrl-C stops a long fit or predict_proba.

A timer thread simulates Ctrl-C (``_thread.interrupt_main``) at a random moment of
a call that would otherwise run for minutes, and the time from the signal to the
KeyboardInterrupt is recorded: MORF and RF fits of 1,000 trees on Fashion-MNIST's
60,000 training images, and predict_proba of an RF forest on 1,000,000 rows. Writes
benches/results/interrupt_latency.csv and .md.

    python benches/interrupt_latency.py            # about 2 minutes on 2 cores
    python benches/interrupt_latency.py --quick    # a check, to results/quick/
"""

from __future__ import annotations

import _thread
import argparse
import sys
import threading
import time
from pathlib import Path

import numpy as np

from morf_rs import ManifoldObliqueForestClassifier, RandomForestClassifier

sys.path.insert(0, str(Path(__file__).parent))
from fashion_mnist import load_fashion_mnist  # noqa: E402
from harness import machine, output_folder, write_csv, write_markdown  # noqa: E402


def latency(call, delay):
    """Seconds from a simulated Ctrl-C, `delay` s into `call`, to KeyboardInterrupt."""
    fired = []

    def interrupt():
        fired.append(time.perf_counter())
        _thread.interrupt_main()

    timer = threading.Timer(delay, interrupt)
    timer.start()
    try:
        call()
    except KeyboardInterrupt:
        stopped = time.perf_counter()
    else:
        timer.cancel()
        raise RuntimeError("the call ended before the interrupt; make it longer")
    timer.join()
    return stopped - fired[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="1 trial each")
    parser.add_argument("--out", type=Path, help="folder (default benches/results)")
    args = parser.parse_args()
    # Quick: fewer rows to score, the interrupt sooner, so that the call still
    # outlasts it.
    large_rows, predict_window = 1_000_000, (0.3, 2.0)
    if args.quick:
        args.trials, large_rows, predict_window = 1, 200_000, (0.05, 0.1)

    X, y = load_fashion_mnist("train")
    rng = np.random.default_rng(0)
    fits = {
        "MORF fit": ManifoldObliqueForestClassifier(
            n_estimators=1000, image_shape=(28, 28), patch_min=2, patch_max=5
        ),
        "RF fit": RandomForestClassifier(n_estimators=1000),
    }
    calls = {}
    for name, forest in fits.items():
        forest.set_params(n_jobs=args.n_jobs, random_state=0)
        calls[name] = (lambda f=forest: f.fit(X, y), (0.3, 3.0))
    scorer = RandomForestClassifier(n_estimators=30, n_jobs=args.n_jobs, random_state=0)
    scorer.fit(X[:5000], y[:5000])
    X_large = np.repeat(X, -(-large_rows // len(X)), axis=0)[:large_rows]
    calls[f"RF predict_proba, {large_rows:,} rows"] = (
        lambda: scorer.predict_proba(X_large),
        predict_window,
    )

    rows = []
    for name, (call, (low, high)) in calls.items():
        for trial in range(args.trials):
            seconds = latency(call, rng.uniform(low, high))
            rows.append({"call": name, "trial": trial, "latency_ms": 1000 * seconds})
            print(f"{name}: {1000 * seconds:.0f} ms", flush=True)

    out = output_folder(args.quick, args.out)
    write_csv(out / "interrupt_latency.csv", rows)
    table = []
    for name in calls:
        values = [r["latency_ms"] for r in rows if r["call"] == name]
        table.append(
            {
                "call": name,
                "median (ms)": f"{np.median(values):.0f}",
                "max (ms)": f"{max(values):.0f}",
            }
        )
    write_markdown(
        out / "interrupt_latency.md",
        "Ctrl-C latency",
        table,
        machine(),
        f"Fashion-MNIST 60,000 training images, n_jobs={args.n_jobs}, "
        f"{args.trials} trials each; milliseconds from the signal to "
        "KeyboardInterrupt.",
    )


if __name__ == "__main__":
    main()
