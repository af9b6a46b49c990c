"""The named dictionaries ``dictionary="signals"`` and ``"images"``: measured
mixtures of the families of :mod:`morf_rs.dictionary`, with the number of candidate
atoms they were measured at."""

from __future__ import annotations

import math

from morf_rs.dictionary import (
    AxisAligned,
    Gabors,
    Patches,
    Pooled,
    SignedPatches,
)

__all__ = ["PRESETS", "preset"]

PRESETS = ("signals", "images")


def preset(name, geometry):
    """The families of preset ``name`` over ``geometry`` and its ``max_features``.

    ``"signals"``: single samples, and signed patches (edges and lines), Gabor-like
    stripes and patch sums up to 8 samples long, most of them pooled over the whole
    signal (maximum or minimum), 200 candidates. MNIST-1D (4,000 / 1,000), boosted
    300 rounds: test error 0.032 to 0.039 over three seeds against 0.117 and 0.126
    for the same families unpooled; the forest 0.070 to 0.078 (benches/pooled.py).

    ``"images"``: the five families benches/boosting.py recommends for images
    (single pixels, edges, lines, Gabor-like stripes, patch sums, extents 1 to 5),
    each image family half plain and half pooled (maximum or minimum) over windows
    of 2 to 8 shifts per axis, 400 candidates. Fashion-MNIST 10,000 / 10,000,
    boosted 50 rounds: test error 0.1043 against 0.1088 unpooled (benches/pooled.py),
    for 1.26 times the fit time and 1.6 times the scoring time (benches/profiles.md).

    Both leave out what the image cannot hold: signed patches of more bands than
    its longest contiguous axis has cells, and, without a contiguous axis, the
    signed patches and stripes, which run along one.
    """
    if name not in PRESETS:
        raise ValueError(
            f"dictionary {name!r} is not a preset; the presets are "
            f"{', '.join(repr(p) for p in PRESETS)}."
        )
    shape = geometry.image_shape
    # Edges, lines and stripes run along an ordered (contiguous) axis: a preset over
    # an image without one leaves them out.
    ordered = [n for n, c in zip(shape, geometry.contiguous) if c]
    if name == "signals":
        high = [min(8, length) for length in shape]
        extents = dict(patch_min=1, patch_max=high)
        both = dict(reduce="both")
        bands = bands_of(ordered, 0.25, 0.2)
        families = [
            (AxisAligned(), 0.1),
            *[(Pooled(SignedPatches(bands=b, **extents), **both), p) for b, p in bands],
            *([(Pooled(Gabors(**extents), **both), 0.25)] if ordered else []),
            (Pooled(Patches(**extents), **both), 0.1),
            (Patches(**extents), 0.1),
        ]
        return _normalised(families), 200
    extents = dict(patch_min=1, patch_max=[min(5, length) for length in shape])
    window = dict(
        shift_min=[min(2, length) for length in shape],
        shift_max=[min(8, length) for length in shape],
        reduce="both",
    )
    families = [(AxisAligned(), 0.1)]
    signed = bands_of(ordered, 0.3, 0.2)
    for family, p in (
        *[(SignedPatches(bands=b, **extents), p) for b, p in signed],
        *([(Gabors(**extents), 0.3)] if ordered else []),
        (Patches(**extents), 0.1),
    ):
        families += [(family, p / 2), (Pooled(family, **window), p / 2)]
    return _normalised(families), 400


def bands_of(ordered, edges, lines):
    """(bands, probability) of the signed patches an image whose contiguous axes
    have the lengths ``ordered`` can hold."""
    return [(b, p) for b, p in ((2, edges), (3, lines)) if max(ordered, default=0) >= b]


def _normalised(families):
    """``families`` with probabilities rescaled to sum to 1 (a preset may leave out
    families the image cannot hold)."""
    total = math.fsum(p for _, p in families)
    return [(family, p / total) for family, p in families]
