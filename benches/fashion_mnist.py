"""Fashion-MNIST from the Debian package ``dataset-fashion-mnist`` (gzipped IDX)."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np

DEFAULT_ROOT = Path("/usr/share/datasets/fashion-mnist")

CLASS_NAMES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)

_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


def _read_idx(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype_code != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file")
    shape = struct.unpack(f">{ndim}I", data[4 : 4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_fashion_mnist(
    split: str = "train", root: Path | str = DEFAULT_ROOT
) -> tuple[np.ndarray, np.ndarray]:
    """Return (X, y) for ``split`` ("train": 60,000 images, "test": 10,000).

    X is float32 of shape (n, 784): the 28x28 images row-major with pixel values 0..255;
    y is uint8 labels 0..9 (see CLASS_NAMES).
    """
    root = Path(root)
    image_file, label_file = (root / name for name in _FILES[split])
    missing = [str(p) for p in (image_file, label_file) if not p.is_file()]
    if missing:
        raise FileNotFoundError(
            f"Fashion-MNIST files not found: {', '.join(missing)}. "
            "Install them with `apt-get install dataset-fashion-mnist` "
            f"(Debian/Ubuntu), or pass the folder holding the {split} IDX files."
        )
    images = _read_idx(image_file)
    labels = _read_idx(label_file)
    if images.shape[0] != labels.shape[0]:
        raise ValueError(
            f"{split}: {images.shape[0]} images but {labels.shape[0]} labels"
        )
    return images.reshape(images.shape[0], -1).astype(np.float32), labels
