"""`zerax.data.datasets`: small classic datasets, none of which downloads anything.

* :func:`spiral`: the three-armed spiral of "Deep Learning from Scratch 3" (DeZero).
* :func:`digits`: scikit-learn's bundled 8x8 digits (the ``zerax[datasets]`` extra).
* :func:`mnist`, :func:`fashion_mnist`: the IDX files (gzipped or not) from a local folder.
* :func:`cifar10`: the *binary* release from a local folder (never the pickled one).

Images are float32 in [0, 1], labels int32; each loader returns NumPy arrays
``((x_train, y_train), (x_test, y_test))`` (``spiral`` returns one split).  Files are read
as untrusted: a missing or malformed file raises :class:`zerax.errors.DatasetError` naming
the file and the layout that was expected.
"""

from __future__ import annotations

import gzip
import os
import struct

import numpy as np

from ..errors import DatasetError, MissingDependencyError

__all__ = ["spiral", "digits", "mnist", "fashion_mnist", "cifar10", "read_idx"]


def spiral(train: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """DeZero's spiral: 300 points of 3 interleaved arms, ``(x float32[300, 2], t int32)``.

    The same numbers as DeZero's ``get_spiral`` (seed 1984 for train, 2020 for test),
    drawn from a private generator (NumPy's global random state is left alone).

    >>> from zerax.data import datasets
    >>> x, t = datasets.spiral()
    >>> x.shape, x.dtype, t.shape, sorted(set(t.tolist()))
    ((300, 2), dtype('float32'), (300,), [0, 1, 2])
    """
    rng = np.random.RandomState(1984 if train else 2020)
    num_data, num_class, input_dim = 100, 3, 2
    x = np.zeros((num_data * num_class, input_dim), dtype=np.float32)
    t = np.zeros(num_data * num_class, dtype=np.int32)
    for j in range(num_class):
        for i in range(num_data):
            rate = i / num_data
            radius = 1.0 * rate
            theta = j * 4.0 + 4.0 * rate + rng.randn() * 0.2
            ix = num_data * j + i
            x[ix] = np.array([radius * np.sin(theta), radius * np.cos(theta)]).flatten()
            t[ix] = j
    indices = rng.permutation(num_data * num_class)
    return x[indices], t[indices]


def digits():
    """scikit-learn's 8x8 handwritten digits (1,797 images, bundled: no download).

    Pixels are scaled to [0, 1] as float32, shape ``(n, 64)``; labels int32.  The split
    is fixed in scikit-learn's order: the first 1,437 examples train, the last 360 test.
    Needs scikit-learn (``pip install zerax[datasets]``).

    >>> from zerax.data import datasets
    >>> (x_tr, y_tr), (x_te, y_te) = datasets.digits()
    >>> x_tr.shape, x_te.shape, x_tr.dtype, float(x_tr.max())
    ((1437, 64), (360, 64), dtype('float32'), 1.0)
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise MissingDependencyError(
            "zerax.data.datasets.digits() reads scikit-learn's bundled digits: install the "
            "datasets extra, `pip install zerax[datasets]` (or `pip install scikit-learn`)")\
            from None
    bunch = load_digits()
    x = (np.asarray(bunch.data, dtype=np.float32) / np.float32(16.0))
    y = np.asarray(bunch.target, dtype=np.int32)
    return (x[:1437], y[:1437]), (x[1437:], y[1437:])


# ---------------------------------------------------------------- IDX (MNIST)

_IDX_TYPES = {0x08: np.dtype("u1"), 0x09: np.dtype("i1"), 0x0B: np.dtype(">i2"),
              0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_IDX_LAYOUT = ("an IDX file: 2 zero bytes, a type byte (0x08 ubyte ... 0x0E double), the "
               "number of dimensions, each dimension as a big-endian uint32, then the data")
_MAX_BYTES = 1 << 33  # 8 GiB: no real IDX file comes near; a lying header cannot pass


def _open(path: str):
    if not os.path.isfile(path):
        raise DatasetError(f"dataset file {path!r} not found")
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def _read_exact(f, n: int, path: str, what: str) -> bytes:
    try:
        raw = f.read(n)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise DatasetError(f"{path!r} is not a readable (gzip) file: {e}") from None
    if len(raw) != n:
        raise DatasetError(f"{path!r} ends inside its {what}: expected {_IDX_LAYOUT}")
    return raw


def _at_end(f, path: str) -> bool:
    try:
        return f.read(1) == b""
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise DatasetError(f"{path!r} is not a readable (gzip) file: {e}") from None


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read one IDX file (MNIST's format), gzipped or not, as a NumPy array.

    >>> import os, struct, tempfile
    >>> from zerax.data import datasets
    >>> path = os.path.join(tempfile.mkdtemp(), "labels-idx1-ubyte")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(struct.pack(">BBBBI", 0, 0, 8, 1, 3) + bytes([7, 0, 9]))
    >>> datasets.read_idx(path)
    array([7, 0, 9], dtype=uint8)
    """
    path = os.fspath(path)
    with _open(path) as f:
        magic = _read_exact(f, 4, path, "header")
        if magic[0] != 0 or magic[1] != 0 or magic[2] not in _IDX_TYPES or magic[3] == 0:
            raise DatasetError(f"{path!r} does not start like {_IDX_LAYOUT} (got magic bytes "
                               f"{magic.hex()})")
        dtype, ndim = _IDX_TYPES[magic[2]], magic[3]
        dims = struct.unpack(f">{ndim}I", _read_exact(f, 4 * ndim, path, "dimensions"))
        count = 1
        for d in dims:
            count *= d
        nbytes = count * dtype.itemsize
        if nbytes > _MAX_BYTES:
            raise DatasetError(f"{path!r} declares dimensions {dims} ({nbytes} bytes): not a "
                               "plausible dataset file (corrupt header?)")
        data = _read_exact(f, nbytes, path, f"data ({dims}, {nbytes} bytes)")
        if not _at_end(f, path):
            raise DatasetError(f"{path!r} has bytes beyond the {dims} array its header "
                               f"declares: expected {_IDX_LAYOUT}")
    return np.frombuffer(data, dtype).astype(dtype.newbyteorder("="), copy=True).reshape(dims)


_MNIST_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
                "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def _find(folder: str, stem: str) -> str:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"),
                 stem.replace("-idx", ".idx") + ".gz"):
        p = os.path.join(folder, name)
        if os.path.isfile(p):
            return p
    raise DatasetError(f"{os.path.join(folder, stem)!r} (or .gz) not found; expected the "
                       f"four IDX files {sorted(n for pair in _MNIST_FILES.values() for n in pair)}"
                       " of the MNIST layout in that folder (zerax never downloads them)")


def _idx_split(folder: str, split: str):
    img_path, lab_path = (_find(folder, s) for s in _MNIST_FILES[split])
    images, labels = read_idx(img_path), read_idx(lab_path)
    if images.ndim != 3 or images.dtype != np.uint8:
        raise DatasetError(f"{img_path!r} holds a {images.dtype} array of shape "
                           f"{images.shape}; expected uint8 images (n, rows, cols)")
    if labels.ndim != 1 or labels.dtype != np.uint8:
        raise DatasetError(f"{lab_path!r} holds a {labels.dtype} array of shape "
                           f"{labels.shape}; expected uint8 labels (n,)")
    if len(images) != len(labels):
        raise DatasetError(f"{img_path!r} holds {len(images)} images but {lab_path!r} "
                           f"{len(labels)} labels")
    if labels.size and labels.max() > 9:
        raise DatasetError(f"{lab_path!r} holds label {int(labels.max())}; expected 0..9")
    return images.astype(np.float32) / np.float32(255.0), labels.astype(np.int32)


def mnist(path: str | os.PathLike):
    """MNIST from the four IDX files (gzipped or not) in the folder ``path``.

    Images float32 in [0, 1] of shape ``(n, 28, 28)``, labels int32:
    ``((x_train, y_train), (x_test, y_test))``.  Nothing is downloaded.
    """
    folder = os.fspath(path)
    return _idx_split(folder, "train"), _idx_split(folder, "test")


def fashion_mnist(path: str | os.PathLike):
    """Fashion-MNIST (Zalando) from its four IDX files in the folder ``path``: the same file
    names and layout as :func:`mnist`."""
    return mnist(path)


# ---------------------------------------------------------------- CIFAR-10 (binary)

_CIFAR_RECORD = 1 + 3 * 32 * 32
_CIFAR_LAYOUT = ("CIFAR-10's binary release: records of 1 label byte (0..9) and 3072 pixel "
                 "bytes (1024 red, 1024 green, 1024 blue, row-major 32x32)")


def _cifar_file(path: str) -> tuple[np.ndarray, np.ndarray]:
    if not os.path.isfile(path):
        raise DatasetError(f"{path!r} not found; expected {_CIFAR_LAYOUT} in data_batch_1.bin "
                           "... data_batch_5.bin and test_batch.bin (zerax never downloads)")
    size = os.path.getsize(path)
    if size == 0 or size % _CIFAR_RECORD:
        raise DatasetError(f"{path!r} is {size} bytes, not a whole number of "
                           f"{_CIFAR_RECORD}-byte records: expected {_CIFAR_LAYOUT}")
    raw = np.fromfile(path, dtype=np.uint8).reshape(-1, _CIFAR_RECORD)
    labels = raw[:, 0]
    if labels.max() > 9:
        raise DatasetError(f"{path!r} holds label {int(labels.max())}; expected "
                           f"{_CIFAR_LAYOUT} (is this the CIFAR-100 release?)")
    images = raw[:, 1:].reshape(-1, 3, 32, 32).astype(np.float32) / np.float32(255.0)
    return images, labels.astype(np.int32)


def cifar10(path: str | os.PathLike):
    """CIFAR-10 from the *binary* release in the folder ``path`` (``cifar-10-batches-bin``
    or its parent).  Images float32 in [0, 1], channels first ``(n, 3, 32, 32)`` as
    zerax.nn's convolutions take them; labels int32.  The pickled "python" release is
    refused: loading it would execute code from the file.
    """
    folder = os.fspath(path)
    inner = os.path.join(folder, "cifar-10-batches-bin")
    if os.path.isdir(inner):
        folder = inner
    if (not os.path.exists(os.path.join(folder, "data_batch_1.bin"))
            and os.path.exists(os.path.join(folder, "data_batch_1"))):
        raise DatasetError(f"{folder!r} holds CIFAR-10's pickled 'python' release, which zerax "
                           "does not load (unpickling executes code from the file); use the "
                           "binary release (cifar-10-binary.tar.gz)")
    train = [_cifar_file(os.path.join(folder, f"data_batch_{i}.bin")) for i in range(1, 6)]
    test = _cifar_file(os.path.join(folder, "test_batch.bin"))
    x_tr = np.concatenate([x for x, _ in train])
    y_tr = np.concatenate([y for _, y in train])
    return (x_tr, y_tr), test
