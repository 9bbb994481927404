"""`zerax.io.save`, `zerax.io.load` and `zerax.io.load_metadata`: one pytree <-> one
safetensors file (tensors named by their path in the tree; the structure, dtypes, shapes and
zerax's version as JSON in the file's ``__metadata__``).  Written atomically; read as
untrusted input.  The package `zerax.io` re-exports them, and `zerax.io.checkpoint` builds
its `CheckpointManager` on them.
"""

from __future__ import annotations

import json
import os

import numpy as np

import zerax
from .. import tree_util as tu
from ..errors import CheckpointError

from . import _sharded
from . import _safetensors as _st
from ._tree import (_key_module, decode_scalar, decode_structure, encode_leaf, encode_structure,
                    path_name, stored_dtype)

__all__ = ["save", "load", "load_metadata"]

_FORMAT = "zerax"


def _unique_names(paths) -> list[str]:
    names, seen = [], set()
    for p in paths:
        name = base = path_name(p)
        i = 1
        while name in seen:  # 'a.b' as one key and as a path: keep both, distinctly
            name, i = f"{base}#{i}", i + 1
        seen.add(name)
        names.append(name)
    return names


def save(path: str | os.PathLike, tree, *, metadata: dict[str, str] | None = None,
         durable: bool = False) -> None:
    """Save a pytree to one safetensors file at ``path``, atomically.

    Array leaves (zerax or NumPy) become tensors named by their path in the tree; Python
    bools, ints, floats and strings are kept exactly in the JSON metadata; other leaves
    (functions inside a module) are not saved and come back from ``like`` in :func:`load`.
    ``metadata`` adds your own str -> str entries to the file's ``__metadata__``.

    The file is always written atomically: to a temporary file beside ``path``, renamed
    over it when complete, so a crash or an error mid-save leaves the previous file (or
    none), never a half-written one.  ``durable=True`` also fsyncs the file and its
    directory, so the save survives a power loss or OS crash too, at the price of waiting
    for the disk (several times the write itself for a large file).  The default, like
    ``numpy.save``, ``torch.save`` and safetensors' ``save_file``, leaves that to the OS;
    :class:`CheckpointManager`, which deletes older checkpoints, is durable by default.

    An array split over the processes of a mesh (``zx.device_put(x, NamedSharding(...))``)
    is saved by every process calling ``save``: each writes its blocks to
    ``<path>.part<process>``, then process 0 writes ``path`` (see :func:`load` to read
    it onto another mesh).

    >>> import os, tempfile, zerax.numpy as znp
    >>> from zerax import io
    >>> path = os.path.join(tempfile.mkdtemp(), "params.safetensors")
    >>> io.save(path, {"w": znp.ones((2, 3)), "b": znp.zeros(3), "step": 7})
    >>> io.load(path)["w"].shape, io.load(path)["step"]
    ((2, 3), 7)
    """
    path = os.fspath(path)
    with_paths, _ = tu.tree_flatten_with_path(tree)
    names = _unique_names([p for p, _ in with_paths])
    split = [(name, leaf) for name, (_, leaf) in zip(names, with_paths)
             if _sharded.is_split(leaf)]
    split_descs = {d["name"]: d for d in _sharded.save_parts(path, split, bool(durable))} \
        if split else {}
    tensors, leaves = [], []
    for name, (_, leaf) in zip(names, with_paths):
        if name in split_descs:
            leaves.append(split_descs[name])
            continue
        desc, arr = encode_leaf(leaf, name)
        desc["name"] = name
        leaves.append(desc)
        if arr is not None:
            tensors.append((name, arr))
    structure = encode_structure(tree, iter(range(len(leaves))))
    meta = {"format": _FORMAT, "zerax.version": zerax.__version__,
            "zerax.leaves": json.dumps(leaves, separators=(",", ":")),
            "zerax.tree": json.dumps(structure, separators=(",", ":"))}
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str) or k in meta:
            raise CheckpointError(f"metadata entries must be str -> str and not one of "
                                  f"{sorted(meta)}; got {k!r}: {type(v).__name__}")
        meta[k] = v
    if split:   # every part written before the main file, which process 0 writes
        _sharded.sync()
        if zerax.process_index() != 0:
            _sharded.sync()
            return
    try:
        _st.write_file(path, tensors, meta, durable=bool(durable))
    except OSError as e:
        raise CheckpointError(f"cannot write checkpoint {path!r}: {e}") from None
    finally:
        if split:
            _sharded.sync()


def load_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The ``__metadata__`` of a safetensors file (validated, without reading the tensors).

    >>> import os, tempfile, zerax.numpy as znp
    >>> from zerax import io
    >>> path = os.path.join(tempfile.mkdtemp(), "m.safetensors")
    >>> io.save(path, [znp.ones(2)], metadata={"note": "hello"})
    >>> io.load_metadata(path)["note"]
    'hello'
    """
    path = os.fspath(path)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise CheckpointError(f"cannot open checkpoint {path!r}: {e}") from None
    with f:
        _, metadata, _ = _st.read_header(f, path, os.fstat(f.fileno()).st_size)
    return metadata


def _leaf_descriptions(metadata: dict[str, str], arrays: dict, path: str):
    """The validated per-leaf descriptions of a zerax file."""
    leaves = _st.parse_json(metadata.get("zerax.leaves", ""), f"the leaf list of {path!r}")
    if not isinstance(leaves, list) or not all(
            isinstance(d, dict) and isinstance(d.get("name"), str) for d in leaves):
        raise CheckpointError(f"the leaf list in the metadata of {path!r} is malformed")
    used = set()
    for d in leaves:
        kind, name = d.get("kind"), d["name"]
        if kind == "sharded":
            _sharded.check_description(d, path)
        elif kind in ("array", "key"):
            if name not in arrays or name in used:
                raise CheckpointError(f"the metadata of {path!r} refers to tensor {name!r}, "
                                      "which the file does not hold (or refers to it twice)")
            used.add(name)
            arr = arrays[name]
            shape = d.get("shape")
            if kind == "array":
                dt = stored_dtype(d.get("dtype"))
                if dt is None:
                    raise CheckpointError(f"leaf {name!r} of {path!r} has an unsupported dtype "
                                          f"{d.get('dtype')!r:.40}")
                want_shape = list(shape) + [2] if dt.kind == "c" and isinstance(shape, list) \
                    else shape
                base = dt if dt.kind != "c" else np.dtype(dt.char.lower())
                if list(arr.shape) != want_shape or arr.dtype != base.newbyteorder("<"):
                    raise CheckpointError(
                        f"leaf {name!r} of {path!r} is described as {dt}{shape} in the metadata "
                        f"but stored as {arr.dtype}{list(arr.shape)} (a header that lies)")
            elif not isinstance(shape, list) or arr.dtype != np.dtype("<u4"):
                raise CheckpointError(f"random key {name!r} of {path!r} is malformed")
        elif kind not in ("scalar", "str", "static"):
            raise CheckpointError(f"leaf {name!r} of {path!r} has an unknown kind "
                                  f"{kind!r:.40}")
        elif kind == "str" and not isinstance(d.get("value"), str):
            raise CheckpointError(f"string leaf {name!r} of {path!r} is malformed")
    if len(used) != len(arrays):
        extra = sorted(set(arrays) - used)[:5]
        raise CheckpointError(f"{path!r} holds tensors {extra} that its metadata does not "
                              "place in the tree")
    return leaves


def _wrap(arr: np.ndarray) -> zerax.Array:
    # The buffer was just read from the file and nobody else holds it: wrap it without the
    # copy zerax.Array(...) makes (halves the time of loading a large checkpoint).
    wrap = getattr(zerax.Array, "_wrap", None)
    return wrap(arr) if wrap is not None else zerax.Array(arr)


def _materialise(desc: dict, arrays: dict, name: str, path: str, as_numpy: bool | None,
                 sharding=None, parts=None):
    kind = desc["kind"]
    if kind == "sharded":
        read = parts.reader(desc)
        if sharding is not None:
            return zerax.make_array_from_callback(tuple(desc["shape"]), sharding, read)
        whole = read(tuple(slice(0, n) for n in desc["shape"]))
        return whole if as_numpy else _wrap(whole)
    if kind == "array":
        arr = arrays[desc["name"]]
        dt = zerax.numpy.dtype(desc["dtype"])
        if dt.kind == "c":
            arr = arr.reshape(-1).view(dt).reshape(desc["shape"])
        arr = arr.astype(dt.newbyteorder("="), copy=False)
        if sharding is not None:
            return zerax.device_put(arr, sharding)
        numpy_leaf = desc.get("numpy") is True if as_numpy is None else as_numpy
        return arr if numpy_leaf else _wrap(arr)
    if kind == "key":
        zr = _key_module()
        if zr is None:
            raise CheckpointError(f"leaf {name!r} of {path!r} is a typed random key, and this "
                                  "zerax has no zerax.random.wrap_key_data to rebuild it")
        return zr.wrap_key_data(_wrap(arrays[desc["name"]]), impl=desc.get("impl"))
    if kind == "scalar":
        return decode_scalar(desc, name)
    if kind == "str":
        return desc["value"]
    return None  # static: only reachable with like (checked by the caller)


def _check_like_leaf(desc: dict, leaf, name: str, path: str) -> None:
    kind = desc["kind"]
    if kind in ("array", "sharded"):
        if isinstance(leaf, (zerax.Array, np.ndarray, np.generic, zerax.ShapeDtypeStruct)):
            want = (tuple(leaf.shape), np.dtype(leaf.dtype))
            got = (tuple(desc["shape"]), np.dtype(desc["dtype"]))
            if want != got:
                raise CheckpointError(
                    f"leaf {name!r}: the checkpoint {path!r} holds a {got[1]}{list(got[0])} "
                    f"array where like= has a {want[1]}{list(want[0])} one (a different model "
                    "size or dtype?)")
            return
        raise CheckpointError(f"leaf {name!r}: the checkpoint {path!r} holds an array where "
                              f"like= has a {type(leaf).__name__}")
    if kind == "static":
        return
    if kind == "key":
        return
    if kind in ("scalar", "str") and isinstance(leaf, (bool, int, float, str, np.generic,
                                                       np.ndarray, zerax.Array)):
        return
    raise CheckpointError(f"leaf {name!r}: the checkpoint {path!r} holds a {kind} where "
                          f"like= has a {type(leaf).__name__}")


def _parts(leaves: list, path: str):
    """The part files of a checkpoint with split arrays (None without)."""
    counts = {d["parts"] for d in leaves if d["kind"] == "sharded"}
    if not counts:
        return None
    if len(counts) != 1:
        raise CheckpointError(f"the split arrays of {path!r} name different numbers of parts")
    parts = _sharded.Parts(path, counts.pop())
    for d in leaves:
        if d["kind"] == "sharded":
            parts.check(d)
    return parts


def _without_keys(s, depth: int = 0):
    """The JSON tree with each random key node replaced by its one child (the tree's
    shape, for matching ``shardings=`` against it, without building keys)."""
    if depth > 500 or not isinstance(s, dict):
        return s
    c = s.get("c")
    if s.get("t") == "key" and isinstance(c, list) and len(c) == 1:
        return _without_keys(c[0], depth + 1)
    if isinstance(c, list):
        return dict(s, c=[_without_keys(x, depth + 1) for x in c])
    return s


def _is_sharding(x) -> bool:
    return x is None or isinstance(x, zerax.sharding.NamedSharding)


def _leaf_shardings(shardings, tree, n: int, path: str) -> list:
    """One NamedSharding (or None) per leaf of ``tree`` from the prefix tree
    ``shardings``."""
    if _is_sharding(shardings):
        return [shardings] * n
    sdef = tu.tree_structure(shardings, is_leaf=_is_sharding)
    try:
        subtrees = sdef.flatten_up_to(tree)
    except (ValueError, TypeError):
        raise CheckpointError(f"shardings= is not a prefix of the structure of {path!r}'s "
                              "tree (give one NamedSharding, or a tree of them and None)") \
            from None
    out = []
    for s, sub in zip(tu.tree_leaves(shardings, is_leaf=_is_sharding), subtrees):
        out.extend([s] * len(tu.tree_leaves(sub)))
    return out


def load(path: str | os.PathLike, like=None, *, shardings=None):
    """Load a pytree saved by :func:`save` (or any safetensors file).

    Without ``like``, dicts, lists, tuples and None are rebuilt and arrays come back as
    zerax Arrays (NumPy arrays stay NumPy); Python bools, ints, floats and strings come
    back as they were; 0-d arrays and NumPy scalars come back as 0-d arrays (as
    ``numpy.load`` gives back a saved NumPy scalar; a zerax or JAX scalar is a 0-d array).  A file from another
    writer comes back as a flat ``{name: Array}`` dict.  With ``like`` (a tree of the same
    structure: a fresh model, an optimiser state, ``ShapeDtypeStruct`` leaves...) the
    result has ``like``'s structure and types (a NumPy scalar in ``like`` gives a NumPy
    scalar); each array must have ``like``'s shape and dtype, and leaves that were not
    saved (functions) are taken from ``like``.  Any mismatch or damaged file raises
    :class:`zerax.errors.CheckpointError`.

    ``shardings`` (a ``NamedSharding``, or a prefix tree of them and None) splits the
    arrays over a mesh as they are loaded: each process reads only the blocks that
    overlap its own (from a checkpoint of arrays split over processes, saved on any
    mesh and number of processes) and keeps its part.  An array saved split and loaded
    without a sharding comes back whole.

    >>> import os, tempfile, zerax.numpy as znp
    >>> from zerax import io
    >>> path = os.path.join(tempfile.mkdtemp(), "t.safetensors")
    >>> io.save(path, (znp.arange(3.0), [1.5, "relu"]))
    >>> io.load(path)
    (Array([0., 1., 2.], dtype=float64), [1.5, 'relu'])
    >>> io.load(path, like=(znp.zeros(3), [0.0, "tanh"]))[1]
    [1.5, 'relu']
    """
    path = os.fspath(path)
    arrays, metadata = _st.read_file(path)
    if metadata.get("format") != _FORMAT:
        return _load_foreign(path, arrays, like)
    leaves = _leaf_descriptions(metadata, arrays, path)
    parts = _parts(leaves, path)
    if like is None:
        for d in leaves:
            if d["kind"] == "static":
                raise CheckpointError(
                    f"leaf {d['name']!r} of {path!r} is a {str(d.get('type'))[:60]} that was "
                    "not saved (only arrays and Python scalars are); pass like=<a tree of the "
                    "same structure> to take it from there")
        structure = _st.parse_json(metadata.get("zerax.tree", ""), f"the tree of {path!r}")
        shards = _leaf_shardings(shardings, None if _is_sharding(shardings) else
                                 decode_structure(_without_keys(structure),
                                                  list(range(len(leaves)))),
                                 len(leaves), path)
        values = [_materialise(d, arrays, d["name"], path, None, s, parts)
                  for d, s in zip(leaves, shards)]
        return decode_structure(structure, values)
    with_paths, treedef = tu.tree_flatten_with_path(like)
    shards = _leaf_shardings(shardings, like, len(with_paths), path)
    names = _unique_names([p for p, _ in with_paths])
    if len(names) != len(leaves):
        raise CheckpointError(f"the checkpoint {path!r} holds {len(leaves)} leaves but like= "
                              f"has {len(names)}: not the same tree structure")
    out = []
    for name, (_, leaf), desc, sharding in zip(names, with_paths, leaves, shards):
        if name != desc["name"]:
            raise CheckpointError(f"the checkpoint {path!r} has leaf {desc['name']!r} where "
                                  f"like= has {name!r}: not the same tree structure")
        _check_like_leaf(desc, leaf, name, path)
        if desc["kind"] == "static":
            out.append(leaf)
        else:
            as_numpy = isinstance(leaf, (np.ndarray, np.generic)) \
                if desc["kind"] in ("array", "sharded") else None
            value = _materialise(desc, arrays, name, path, as_numpy, sharding, parts)
            if desc["kind"] == "array" and isinstance(leaf, np.generic) and sharding is None:
                value = value[()]  # a NumPy scalar in like: the same, not a 0-d array
            out.append(value)
    return tu.tree_unflatten(treedef, out)


def _load_foreign(path: str, arrays: dict, like):
    """A safetensors file from another writer: a flat dict, or matched by name to like."""
    def value(a):
        return _wrap(a.astype(a.dtype.newbyteorder("="), copy=False))
    if like is None:
        return {name: value(a) for name, a in arrays.items()}
    with_paths, treedef = tu.tree_flatten_with_path(like)
    names = _unique_names([p for p, _ in with_paths])
    out = []
    for name, (_, leaf) in zip(names, with_paths):
        if not isinstance(leaf, (zerax.Array, np.ndarray, np.generic, zerax.ShapeDtypeStruct)):
            out.append(leaf)
            continue
        if name not in arrays:
            raise CheckpointError(f"like= needs a tensor named {name!r}, which {path!r} does "
                                  f"not hold (it holds {sorted(arrays)[:8]})")
        a = arrays.pop(name)
        if tuple(a.shape) != tuple(leaf.shape) or a.dtype != np.dtype(leaf.dtype):
            raise CheckpointError(f"tensor {name!r} of {path!r} is {a.dtype}{list(a.shape)}, "
                                  f"like= wants {np.dtype(leaf.dtype)}{list(leaf.shape)}")
        out.append(a.astype(a.dtype.newbyteorder("="), copy=False)
                   if isinstance(leaf, (np.ndarray, np.generic)) else value(a))
    if arrays:
        raise CheckpointError(f"{path!r} holds tensors {sorted(arrays)[:8]} that like= has no "
                              "place for")
    return tu.tree_unflatten(treedef, out)

