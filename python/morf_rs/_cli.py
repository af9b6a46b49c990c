"""Command line for saved models: ``predict`` scores a file in chunks, ``info``
describes a model file.

Input is read a chunk of rows at a time (``.npy`` memory-mapped, Parquet by row
groups, CSV by pandas' chunks) and the output written chunk by chunk (``.npy``
through a memory-mapped file, or CSV), so inputs larger than memory can be scored.
Every expected failure (a bad file, a wrong shape) ends in one line on stderr and
exit status 1.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from morf_rs._savefile import FILE_FORMAT_VERSION, load, read_model_file

__all__ = ["add_commands", "run_command"]

# Input bytes scored at a time when --chunk-rows is not given.
_CHUNK_BYTES = 64 << 20
# Seconds between progress lines.
_PROGRESS_EVERY = 1.0
# Errors that mean "this input or model cannot be used", reported in one line.
_EXPECTED_ERRORS = (
    OSError,
    ValueError,
    TypeError,
    EOFError,
    ImportError,
    KeyError,
    MemoryError,
)


def add_commands(commands):
    """Add ``predict`` and ``info`` to the subparsers ``commands``."""
    predict = commands.add_parser(
        "predict",
        help="score a .npy, Parquet or CSV file with a saved model",
        description=(
            "Score INPUT with MODEL (written by morf_rs.save) and write the "
            "predictions to OUTPUT, a chunk of rows at a time. INPUT: .npy (read "
            "memory-mapped), .parquet (needs pyarrow) or .csv (needs pandas; a "
            "header row, one column per feature). OUTPUT: .npy or .csv."
        ),
    )
    predict.add_argument("model", metavar="MODEL", help="model file from morf_rs.save")
    predict.add_argument("input", metavar="INPUT", help="rows to score")
    predict.add_argument(
        "-o", "--output", required=True, metavar="OUTPUT", help=".npy or .csv file"
    )
    predict.add_argument(
        "--proba",
        action="store_true",
        help="class probabilities (one column per class) instead of labels",
    )
    predict.add_argument(
        "--n-jobs", type=int, default=-1, help="threads (-1: all cores; default -1)"
    )
    predict.add_argument(
        "--chunk-rows",
        type=int,
        default=None,
        metavar="N",
        help="rows scored at a time (default: about 64 MiB of input)",
    )
    predict.add_argument(
        "-q", "--quiet", action="store_true", help="no progress on stderr"
    )
    info = commands.add_parser(
        "info",
        help="describe a saved model",
        description="Print what MODEL (written by morf_rs.save) is.",
    )
    info.add_argument("model", metavar="MODEL", help="model file from morf_rs.save")


def run_command(args, out=None, err=None):
    """Run ``predict`` or ``info``; the exit status (1 with one line on ``err``
    for an input or model that cannot be used). ``out`` and ``err`` default to
    stdout and stderr as they are when called."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        if args.command == "predict":
            predict(args, err)
        else:
            info(args.model, out)
    except _EXPECTED_ERRORS as error:
        print(f"morf_rs {args.command}: error: {_one_line(error)}", file=err)
        return 1
    except KeyboardInterrupt:
        print(f"morf_rs {args.command}: interrupted", file=err)
        return 130
    return 0


def _one_line(error):
    message = " ".join(str(error).split())
    if isinstance(error, OSError) and error.filename is not None:
        message = f"{error.strerror or message}: {error.filename}"
    return message


def info(path, out):
    """Print what the model file at ``path`` holds."""
    model = load(path)
    header, model_bytes = read_model_file(path)
    boosted = model._model_attribute == "_booster"
    kind = "boosted model" if boosted else model._model_noun
    engine = getattr(model, model._model_attribute)
    lines = [
        ("type", f"{type(model).__name__} ({kind})"),
        ("file format", str(FILE_FORMAT_VERSION)),
        # The engine's bytes open with 4 magic bytes and a little-endian u16 version.
        (
            "model bytes",
            f"{len(model_bytes):,} ({kind} format "
            f"{int.from_bytes(model_bytes[4:6], 'little')})",
        ),
        ("saved by", f"morf_rs {header['morf_rs_version']}"),
        ("features", str(model.n_features_in_)),
    ]
    if hasattr(model, "image_shape_"):
        lines.append(("image shape", str(tuple(model.image_shape_))))
    if hasattr(model, "classes_"):
        classes = ", ".join(str(c) for c in model.classes_.tolist())
        lines.append(("classes", f"{len(model.classes_)}: {classes}"))
    if hasattr(model, "n_outputs_"):
        lines.append(("outputs", str(model.n_outputs_)))
    if boosted:
        lines.append(("rounds", str(engine.n_rounds)))
    else:
        lines.append(("trees", str(engine.n_estimators)))
    for name, value in lines:
        print(f"{name + ':':<13}{value}", file=out)


def predict(args, err):
    """Score args.input with args.model into args.output, chunk by chunk."""
    if args.chunk_rows is not None and args.chunk_rows < 1:
        raise ValueError("--chunk-rows must be at least 1.")
    model = load(args.model)
    model.set_params(n_jobs=args.n_jobs)
    if args.proba and not hasattr(model, "predict_proba"):
        raise ValueError(
            f"--proba needs a classifier; {args.model} holds a {type(model).__name__}."
        )
    score = model.predict_proba if args.proba else model.predict
    n_rows, chunks = _read_chunks(args.input, model, args.chunk_rows)
    writer = None
    progress = _Progress(None if args.quiet else err, n_rows)
    done = 0
    try:
        for chunk in chunks:
            values = score(chunk)
            if writer is None:
                writer = _writer(args.output, n_rows, values, model, args.proba)
            writer.write(done, values)
            done += len(values)
            progress.update(done)
        if writer is None:  # no rows: an empty output of the right width
            empty = _empty_scores(model, args.proba)
            writer = _writer(args.output, 0, empty, model, args.proba)
    except BaseException:
        # A failure part way (a bad value in a later chunk, Ctrl-C) leaves no
        # output that looks whole.
        if writer is not None:
            writer.close()
            os.unlink(args.output)
        raise
    finally:
        chunks.close()
    writer.close()
    progress.finish(done)


def _empty_scores(model, proba):
    if proba:
        return np.empty((0, len(model.classes_)))
    if hasattr(model, "classes_"):
        return model.classes_[:0]
    n_outputs = getattr(model, "n_outputs_", 1)
    return np.empty((0,) if n_outputs == 1 else (0, n_outputs))


def _chunk_rows(requested, n_features, itemsize):
    if requested is not None:
        return requested
    return max(1, _CHUNK_BYTES // max(1, n_features * itemsize))


def _read_chunks(path, model, requested_rows):
    """(number of rows, iterator over chunks of rows) of the input file."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".npy":
        try:
            X = np.load(path, mmap_mode="r", allow_pickle=False)
        except ValueError as error:
            raise ValueError(
                f"{path} cannot be read as an array of numbers ({error}); save X "
                "with np.save as a numeric array."
            ) from None
        if X.ndim != 2:
            raise ValueError(
                f"{path} holds an array of shape {X.shape}; give one sample per row "
                "(a 2-D array, X.reshape(len(X), -1) for images)."
            )
        step = _chunk_rows(requested_rows, X.shape[1], X.dtype.itemsize)
        return len(X), (X[start : start + step] for start in range(0, len(X), step))
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        file = pq.ParquetFile(path)
        step = _chunk_rows(requested_rows, len(file.schema_arrow), 8)
        n_rows = file.metadata.num_rows
        batches = file.iter_batches(batch_size=step)
        return n_rows, (_frame(b.to_pandas(), model) for b in batches)
    if suffix == ".csv":
        import pandas as pd

        step = requested_rows or 65_536
        # A first pass counts the rows, so that the output has its size at once.
        try:
            with pd.read_csv(path, chunksize=step, usecols=[0]) as chunks:
                n_rows = sum(len(c) for c in chunks)
        except (pd.errors.EmptyDataError, pd.errors.ParserError) as error:
            raise ValueError(
                f"{path} cannot be read as CSV rows ({error}); give a header row and "
                "one column per feature."
            ) from None
        return n_rows, _csv_chunks(path, step, model)
    raise ValueError(f"{path}: give a .npy, .parquet or .csv input file.")


def _csv_chunks(path, step, model):
    import pandas as pd

    # The reader closes (its file and its parser) when the scoring closes this
    # generator, also after a failure: not later, while the interpreter exits.
    with pd.read_csv(path, chunksize=step) as reader:
        for chunk in reader:
            yield _frame(chunk, model)


def _frame(frame, model):
    # Column names are checked against the model's when it was fitted with them;
    # otherwise the columns are taken in order.
    return frame if hasattr(model, "feature_names_in_") else frame.to_numpy()


def _writer(path, n_rows, first, model, proba):
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".npy":
        dtype = first.dtype
        if dtype.kind == "O":
            # Labels that are Python objects (text from a DataFrame) are written as
            # text wide enough for every class.
            dtype = model.classes_.astype(str).dtype
        return _NpyWriter(path, n_rows, first, dtype)
    if suffix == ".csv":
        if proba:
            columns = [str(c) for c in model.classes_]
        elif first.ndim == 2:
            columns = [f"prediction_{k}" for k in range(first.shape[1])]
        else:
            columns = ["prediction"]
        return _CsvWriter(path, columns)
    raise ValueError(f"{path}: give a .npy or .csv output file.")


class _NpyWriter:
    """Rows written into a memory-mapped .npy of the final shape."""

    def __init__(self, path, n_rows, first, dtype):
        self._out = np.lib.format.open_memmap(
            path, mode="w+", dtype=dtype, shape=(n_rows, *first.shape[1:])
        )

    def write(self, start, values):
        self._out[start : start + len(values)] = values

    def close(self):
        self._out.flush()
        del self._out


class _CsvWriter:
    """Rows appended to a CSV file under a header of column names."""

    def __init__(self, path, columns):
        self._file = open(path, "w", newline="")  # noqa: SIM115 (closed by close)
        print(",".join(columns), file=self._file)

    def write(self, start, values):
        values = np.asarray(values)
        np.savetxt(
            self._file,
            values.reshape(len(values), -1),
            delimiter=",",
            fmt="%s" if values.dtype.kind in "OUSb" else "%.17g",
        )

    def close(self):
        self._file.close()


class _Progress:
    """Rows scored so far, on ``stream`` at most every second (None: silent)."""

    def __init__(self, stream, n_rows):
        self._stream = stream
        self._n_rows = n_rows
        self._start = self._last = time.monotonic()

    def update(self, done):
        now = time.monotonic()
        if self._stream is not None and now - self._last >= _PROGRESS_EVERY:
            self._last = now
            percent = 100 * done / max(self._n_rows, 1)
            print(
                f"scored {done:,}/{self._n_rows:,} rows ({percent:.0f}%)",
                file=self._stream,
                flush=True,
            )

    def finish(self, done):
        if self._stream is not None:
            seconds = time.monotonic() - self._start
            print(f"scored {done:,} rows in {seconds:.1f} s", file=self._stream)
