"""Pytrees <-> (named tensors, JSON description), for :mod:`zerax.io`.

A tree is flattened with :mod:`zerax.tree_util` (so modules, NamedTuple optimiser states
and every registered pytree node work).  Each leaf becomes one of:

* ``array``: a zerax or NumPy array (or NumPy scalar), stored as one tensor; complex
  arrays are stored as pairs of floats (a trailing axis of 2), which every safetensors
  reader understands;
* ``key``: a typed random key, stored as its raw ``uint32`` key data;
* ``scalar``/``str``: a Python bool, int, float or string, kept exactly in the JSON;
* ``static``: anything else (a function in a module, an activation...), which is not
  saved: it comes back from the ``like`` tree.

The structure is saved as JSON too (dicts, lists, tuples, None and the type names of other
nodes), which is what lets :func:`zerax.io.load` rebuild dicts, lists and tuples without
``like`` and check that a ``like`` tree matches the file.
"""

from __future__ import annotations

import numpy as np

import zerax
import zerax.random as _random
from .. import tree_util as tu
from ..errors import CheckpointError

_SCALARS = (bool, int, float)


def path_name(path) -> str:
    """'layers.0.weight' for a key path (the tensor name in the file)."""
    parts = []
    for k in path:
        if isinstance(k, tu.DictKey):
            parts.append(str(k.key))
        elif isinstance(k, tu.SequenceKey):
            parts.append(str(k.idx))
        elif isinstance(k, tu.GetAttrKey):
            parts.append(str(k.name))
        else:
            parts.append(str(getattr(k, "key", k)))
    return ".".join(parts) if parts else "value"


def _key_module():
    """`zerax.random` when it has typed keys (key_data/wrap_key_data), else None."""
    return _random if hasattr(_random, "key_data") and hasattr(_random, "wrap_key_data") else None


def _is_key(x) -> bool:
    dt = getattr(x, "dtype", None)
    if dt is None or isinstance(dt, np.dtype):
        return False
    zr = _key_module()
    return zr is not None and "key" in str(dt)


def _key_impl_name(x) -> str:
    zr = _key_module()
    impl = zr.key_impl(x) if hasattr(zr, "key_impl") else None
    name = getattr(impl, "name", None) or (str(impl) if impl is not None else "threefry2x32")
    return name


def is_bfloat16(dt: np.dtype) -> bool:
    """Whether ``dt`` is ml_dtypes' bfloat16 (stored as safetensors' BF16)."""
    return dt.kind == "V" and dt.name == "bfloat16"


def stored_dtype(name) -> np.dtype | None:
    """The dtype a checkpoint's description names, if it is one a checkpoint holds
    (numbers, bools, bfloat16); None otherwise."""
    try:
        dt = zerax.numpy.dtype(name)      # (knows "bfloat16": imports ml_dtypes then)
    except TypeError:
        return None
    if dt.hasobject or (dt.kind not in "biufc" and not is_bfloat16(dt)):
        return None
    return dt


def _c_order(arr: np.ndarray) -> np.ndarray:
    """C-contiguous and little-endian, as the file stores it (0-d arrays stay 0-d)."""
    return np.asarray(arr, dtype=arr.dtype.newbyteorder("<"), order="C")


def encode_leaf(x, name: str):
    """(description, tensor or None) for one leaf."""
    if isinstance(x, zerax.Array) or isinstance(x, (np.ndarray, np.generic)):
        arr = np.asarray(x)
        if arr.dtype.hasobject or (arr.dtype.kind in "USVMm" and not is_bfloat16(arr.dtype)):
            raise CheckpointError(f"leaf {name!r} is an array of dtype {arr.dtype}, which a "
                                  "checkpoint cannot hold (numbers and bools only)")
        desc = {"kind": "array", "dtype": arr.dtype.name, "shape": list(arr.shape),
                "numpy": isinstance(x, (np.ndarray, np.generic))}
        if arr.dtype.kind == "c":
            arr = _c_order(arr).reshape(-1).view(arr.real.dtype).reshape(arr.shape + (2,))
        return desc, _c_order(arr)
    if _is_key(x):
        zr = _key_module()
        data = np.asarray(zr.key_data(x))
        return ({"kind": "key", "impl": _key_impl_name(x), "shape": list(np.shape(x))},
                _c_order(data))
    if type(x) is bool:
        return {"kind": "scalar", "type": "bool", "value": x}, None
    if type(x) is int:
        return {"kind": "scalar", "type": "int", "value": str(x)}, None
    if type(x) is float:  # hex keeps every bit, and nan/inf, in plain JSON
        return {"kind": "scalar", "type": "float", "value": x.hex()}, None
    if type(x) is str:
        return {"kind": "str", "value": x}, None
    if hasattr(x, "aval"):  # a tracer (concrete arrays were handled above)
        raise CheckpointError(f"leaf {name!r} is a traced value ({type(x).__name__}); save "
                              "concrete arrays, outside jit/grad/vmap")
    return {"kind": "static", "type": type(x).__qualname__}, None


def decode_scalar(desc: dict, name: str):
    t, v = desc.get("type"), desc.get("value")
    try:
        if t == "bool" and type(v) is bool:
            return v
        if t == "int" and isinstance(v, str) and len(v) <= 4300:
            return int(v)
        if t == "float" and isinstance(v, str) and len(v) <= 64:
            return float.fromhex(v)
    except ValueError:
        pass
    raise CheckpointError(f"the metadata of leaf {name!r} holds a malformed Python scalar "
                          f"{desc!r:.200}")


def encode_structure(tree, leaves_iter) -> dict:
    """The JSON description of ``tree``'s nodes; leaves are numbered in flatten order."""
    if tree is None:
        return {"t": "none"}
    children_paths, _ = tu.tree_flatten_with_path(tree, is_leaf=lambda x: x is not tree)
    if len(children_paths) == 1 and children_paths[0][0] == () and children_paths[0][1] is tree:
        return {"t": "leaf", "i": next(leaves_iter)}
    children = [c for _, c in children_paths]
    if type(tree) is dict:
        keys = [k[0].key for k, _ in children_paths]
        for k in keys:
            if type(k) not in (str, int):
                raise CheckpointError(f"zerax.io saves dicts with str or int keys, got the key "
                                      f"{k!r} of type {type(k).__name__}")
        return {"t": "dict", "k": [[type(k).__name__, k] for k in keys],
                "c": [encode_structure(c, leaves_iter) for c in children]}
    if type(tree) in (list, tuple):
        return {"t": type(tree).__name__,
                "c": [encode_structure(c, leaves_iter) for c in children]}
    zr = _key_module()
    if zr is not None and isinstance(tree, getattr(zr, "PRNGKeyArray", ())):
        # zerax's typed keys are pytree nodes over their uint32 key data: rebuildable.
        return {"t": "key", "impl": _key_impl_name(tree),
                "c": [encode_structure(c, leaves_iter) for c in children]}
    return {"t": "node", "type": type(tree).__qualname__,
            "c": [encode_structure(c, leaves_iter) for c in children]}


def decode_structure(s, leaves: list, depth: int = 0):
    """Rebuild dicts, lists, tuples and None from the JSON description (no ``like``)."""
    if depth > 500 or not isinstance(s, dict):
        raise CheckpointError("the tree structure in the checkpoint metadata is malformed")
    t = s.get("t")
    if t == "none":
        return None
    if t == "leaf":
        i = s.get("i")
        if type(i) is not int or not 0 <= i < len(leaves):
            raise CheckpointError(f"the tree structure refers to leaf {i!r:.20}, but the "
                                  f"checkpoint has {len(leaves)} leaves")
        return leaves[i]
    c = s.get("c")
    if not isinstance(c, list):
        raise CheckpointError("the tree structure in the checkpoint metadata is malformed")
    if t == "dict":
        keys = s.get("k")
        if not isinstance(keys, list) or len(keys) != len(c):
            raise CheckpointError("a dict in the checkpoint's tree structure is malformed")
        out = {}
        for kk, child in zip(keys, c):
            if (not isinstance(kk, list) or len(kk) != 2
                    or (kk[0], type(kk[1])) not in (("str", str), ("int", int))):
                raise CheckpointError("a dict key in the checkpoint's tree structure is "
                                      "malformed")
            out[kk[1]] = decode_structure(child, leaves, depth + 1)
        return out
    if t == "list":
        return [decode_structure(x, leaves, depth + 1) for x in c]
    if t == "tuple":
        return tuple(decode_structure(x, leaves, depth + 1) for x in c)
    if t == "key":
        zr = _key_module()
        impl = s.get("impl")
        if zr is None or len(c) != 1 or not isinstance(impl, str):
            raise CheckpointError("a random key in the checkpoint's tree structure is malformed"
                                  " (or this zerax has no zerax.random to rebuild it)")
        data = decode_structure(c[0], leaves, depth + 1)
        try:
            return zr.wrap_key_data(data, impl=impl)
        except Exception as e:  # an unknown impl name or key data of the wrong shape
            raise CheckpointError(f"cannot rebuild a random key of impl {impl[:40]!r} from "
                                  f"the checkpoint: {e}") from None
    if t == "node":
        raise CheckpointError(
            f"the checkpoint holds a {str(s.get('type'))[:80]} (a custom pytree node), which "
            "load() can rebuild only from a template: pass like=<a tree of the same "
            "structure> (a freshly initialised model or optimiser state)")
    raise CheckpointError(f"unknown node kind {t!r:.40} in the checkpoint's tree structure")
