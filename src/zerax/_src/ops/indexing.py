"""Indexing: ``x[idx]`` and ``x.at[idx]`` with NumPy's rules, on the gather and scatter
primitives (`gather`, `index_update`, whose names this module re-exports: it is the one
place to import indexing from).

An index expression is first *normalized* statically (`_parse`): Ellipsis expanded,
slices resolved against the shape, static ints bound-checked, boolean masks (which
must be concrete) turned into integer arrays with ``np.nonzero``, a 0-d boolean turned
into an index over a new size-1 axis (what NumPy does).  Then:

* basic indexing (slices, ints, None) lowers to ``slice``/``rev``/``reshape``, and a
  traced scalar index to ``dynamic_slice``, so derivative programs stay simple (a scalar
  index that varies over a ``vmap`` batch is a gather instead, which batches without a
  loop);
* advanced (integer-array) indexing is the ``gather`` primitive.  Its static param
  ``indexer`` is the normalized index tuple, with ``("a", k)`` standing for the k-th
  index-array operand; its implementation runs NumPy's own indexing, so the result
  (including where the advanced dims go) is NumPy's;
* ``x.at[idx].op(v)`` is one of the ``scatter`` primitives (set, add, mul, min, max)
  with the same ``indexer``; updates are broadcast to the indexed shape first.

Traced index values follow JAX: negative indices wrap; out-of-bounds indices are
clamped in gathers (``mode="clip"``) or give ``fill_value`` (``mode="fill"``) and are
dropped in scatters (``mode="drop"``).  Concrete out-of-bounds indices raise IndexError
like NumPy unless a ``mode`` is given explicitly.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.array import Array
from ..core.core import Tracer, bind, concrete_value
from . import elementwise as ew
from .elementwise import add, convert_element_type, lt, select_n
from .gather import (_INTP, _gather_shape, _zero, along_axis_indexer, batch_indexer,
                     default_fill_value, gather, gather_p, take_along_axis)
from .index_update import (SCATTERS, _updates_to, scatter, scatter_add_p, scatter_max_p,
                           scatter_min_p, scatter_mul_p, scatter_p)
from .shape import (broadcast_in_dim, concatenate, dynamic_slice, reshape, rev,
                    slice_p_bind)
from .values import as_dtype, check_arg, numpy_result_dtype
from ..interpreters.ad import JVPTracer
from ..interpreters.batching import BatchTracer
from ..base.dtypes import kind as dtype_kind

__all__ = ["getitem", "IndexUpdateHelper", "gather", "scatter", "take_along_axis",
           "along_axis_indexer", "gather_p", "scatter_p", "scatter_add_p", "scatter_mul_p",
           "scatter_min_p", "scatter_max_p", "default_fill_value", "batch_indexer"]

# --------------------------------------------------------------------------- parsing


class _Plan:
    """A normalized index: ``entries`` over an array of ``shape`` (the indexed array
    with ``expand`` size-1 axes inserted for 0-d boolean indices).

    Entries: ``None`` (new axis), ``("s", start, size, step)`` (a slice: elements
    ``start + i*step`` for ``i < size``), ``("i", v)`` (a static int), ``("a", k)``
    (advanced: ``arrays[k]``, an int ndarray or an int tracer)."""

    __slots__ = ("shape", "expand", "entries", "arrays")

    def __init__(self, shape, expand, entries, arrays):
        self.shape = tuple(shape)
        self.expand = tuple(expand)
        self.entries = tuple(entries)
        self.arrays = list(arrays)

    @property
    def advanced(self) -> bool:
        return any(e is not None and e[0] == "a" for e in self.entries)


_INVALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
            "integer or boolean arrays are valid indices")


def _flat_items(x):
    if isinstance(x, (list, tuple)):
        for e in x:
            yield from _flat_items(e)
    else:
        yield x


def _list_to_array(items):
    """A (nested) list that holds tracers, as one traced array."""
    if not isinstance(items, (list, tuple)):
        if isinstance(items, Tracer):
            return items
        return np.asarray(items)
    parts = [_list_to_array(e) for e in items]
    if not parts:
        return np.zeros((0,), _INTP)
    dts = {np.dtype(p.dtype) for p in parts}
    if any(d.kind not in "biu" for d in dts):
        raise errors.ZeraxIndexError(_INVALID)
    dtype = np.result_type(*dts)
    parts = [convert_element_type(p, dtype) if isinstance(p, Tracer) else np.asarray(p, dtype)
             for p in parts]
    shapes = {tuple(p.shape) for p in parts}
    if len(shapes) != 1:
        raise errors.ZeraxIndexError(f"an index list holds elements of different shapes {sorted(shapes)}")
    return concatenate([reshape(p, (1,) + tuple(p.shape)) for p in parts], 0)


def _classify(item):
    """One user index item -> (kind, value)."""
    if item is None:
        return ("none", None)
    if item is Ellipsis:
        return ("ellipsis", None)
    if isinstance(item, slice):
        return ("slice", item)
    if isinstance(item, (bool, np.bool_)):
        return ("bool0", bool(item))
    if isinstance(item, (int, np.integer)):
        return ("int", int(item))
    if isinstance(item, Tracer):
        kind = np.dtype(item.dtype).kind
        if kind == "b":
            try:
                value = concrete_value(item, "boolean indexing")
            except errors.ConcretizationError:
                raise errors.NonConcreteBooleanIndexError(
                    f"a traced boolean mask {item.aval.str_short()} was used as an index at "
                    f"{errors.user_frame()}. The result's shape would depend on the mask's "
                    "values, which are not known while tracing. Use "
                    "zerax.numpy.where(mask, x, other) to keep the shape, "
                    "x.at[mask].set(v) for an update, or build the mask from static (NumPy) "
                    "values.") from None
            return _classify(np.asarray(value))
        if kind in "iu":
            return ("arr", item)
        raise errors.ZeraxIndexError(f"{_INVALID}; got a traced array of dtype {np.dtype(item.dtype).name}")
    if type(item) is Array:
        return _classify(item._value)
    if isinstance(item, (list, tuple)):
        if any(isinstance(e, Tracer) for e in _flat_items(item)):
            return _classify(_list_to_array(item))
        try:
            arr = np.asarray(item)
        except (ValueError, TypeError):
            raise errors.ZeraxIndexError(f"{_INVALID}; got the list {item!r:.60}") from None
        if arr.size == 0 and dtype_kind(arr.dtype) == "f":
            arr = arr.astype(_INTP)
        return _classify(arr)
    if isinstance(item, np.ndarray):
        kind = item.dtype.kind
        if kind == "b":
            return ("bool0", bool(item)) if item.ndim == 0 else ("mask", item)
        if kind in "iu":
            return ("int", int(item)) if item.ndim == 0 else ("arr", item)
        raise errors.ZeraxIndexError("arrays used as indices must be of integer (or boolean) type, got "
                         f"dtype {item.dtype.name}")
    raise errors.ZeraxIndexError(f"{_INVALID}; got {type(item).__name__} {item!r:.60}")


def _slice_bound(v):
    if v is None:
        return None
    if isinstance(v, (Array, Tracer)):
        v = concrete_value(v, "using it as a slice bound (for a traced start, use "
                              "zerax.lax.dynamic_slice)")
    try:
        return int(np.asarray(v).__index__()) if not isinstance(v, int) else v
    except (TypeError, AttributeError):
        raise errors.ZeraxTypeError(
            f"slice indices must be integers or None, got {v!r:.40}") from None


def _oob(v, axis, n):
    return errors.ZeraxIndexError(f"index {v} is out of bounds for axis {axis} with size {n}")


def _parse(shape, idx, check: bool = True) -> _Plan:
    """Normalize ``idx`` for an array of ``shape`` (see `_Plan`).  With ``check``,
    concrete indices are bound-checked (IndexError) and their negatives wrapped."""
    shape = tuple(shape)
    if not isinstance(idx, tuple):
        idx = (idx,)
    items = [_classify(it) for it in idx]
    n_ell = sum(1 for k, _ in items if k == "ellipsis")
    if n_ell > 1:
        raise errors.ZeraxIndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(v.ndim if k == "mask" else 1 for k, v in items
                   if k in ("slice", "int", "arr", "mask"))
    if consumed > len(shape):
        raise errors.ZeraxIndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {consumed} were indexed")
    fill = [("slice", slice(None))] * (len(shape) - consumed)
    if n_ell:
        # An Ellipsis that stands for no axes still separates advanced indices (NumPy).
        i = [k for k, _ in items].index("ellipsis")
        items = items[:i] + (fill or [("empty_ellipsis", None)]) + items[i + 1:]
    else:
        items = items + fill

    entries, arrays, expand, new_shape, to_check = [], [], [], [], []
    axis = 0
    for kind, v in items:
        if kind == "none":
            entries.append(None)
            continue
        if kind == "empty_ellipsis":
            entries.append(("e",))
            continue
        if kind == "bool0":
            expand.append(len(new_shape))
            new_shape.append(1)
            entries.append(("a", len(arrays)))
            arrays.append(np.zeros(int(v), _INTP))
            continue
        if kind == "mask":
            want = shape[axis:axis + v.ndim]
            for d, (m, n) in enumerate(zip(v.shape, want)):
                if m != n:
                    raise errors.ZeraxIndexError(
                        f"boolean index did not match indexed array along axis {axis + d}; "
                        f"size of axis is {n} but size of corresponding boolean axis is {m}")
            for d, nz in enumerate(np.nonzero(v)):
                entries.append(("a", len(arrays)))
                arrays.append(nz.astype(_INTP))
                new_shape.append(shape[axis + d])
            axis += v.ndim
            continue
        n = shape[axis]
        if kind == "slice":
            s = v
            step = _slice_bound(s.step)
            if step == 0:
                raise errors.ShapeError("slice step cannot be zero")
            start, stop, step = slice(_slice_bound(s.start), _slice_bound(s.stop),
                                      step).indices(n)
            size = len(range(start, stop, step))
            entries.append(("s", start if size else 0, size, step))
        elif kind == "int":
            if check:
                if not -n <= v < n:
                    raise _oob(v, axis, n)
                v %= n
            entries.append(("i", v))
        else:  # "arr"
            if check and isinstance(v, np.ndarray):
                to_check.append((len(arrays), axis, n))
            entries.append(("a", len(arrays)))
            arrays.append(v)
        new_shape.append(n)
        axis += 1
    if arrays:
        shapes = [tuple(a.shape) for a in arrays]
        try:
            bshape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise errors.ZeraxIndexError("shape mismatch: indexing arrays could not be broadcast together "
                             f"with shapes {' '.join(str(s) for s in shapes)}") from None
        # Concrete index arrays are bound-checked (like NumPy, not when the broadcast index
        # is empty) and their negative entries wrapped.
        for k, ax, n in to_check:
            v = arrays[k].astype(_INTP)
            if v.size and 0 not in bshape and (v.min() < -n or v.max() >= n):
                raise _oob(int(v[(v < -n) | (v >= n)].flat[0]), ax, n)
            arrays[k] = np.where(v < 0, v + n, v)
    return _Plan(new_shape, expand, entries, arrays)


def _expand(x, plan):
    return reshape(x, plan.shape) if plan.expand else x


# --------------------------------------------------------------------------- getitem


def _varies_over_vmap(t):
    """Whether the tracer ``t`` varies over a vmap batch: then a gather (batched without a
    loop) is better than a dynamic_slice."""
    while isinstance(t, JVPTracer):
        t = t.primal
    return isinstance(t, BatchTracer)


def _normalize_scalar_index(t, n):
    """A traced scalar index as int64 with negative values wrapped."""
    t = convert_element_type(t, _INTP)
    if n == 0:
        raise errors.ZeraxIndexError("a traced index cannot address an axis of size 0")
    return select_n(lt(t, _zero(_INTP)), t, add(t, np.array(n, _INTP)))


def _basic_index(x, plan):
    """Slices, static ints, None and traced scalar ints: slice/rev/dynamic_slice/reshape."""
    starts, limits, strides, revs, dyn = [], [], [], [], {}
    out_shape = []
    axis = 0
    for e in plan.entries:
        if e is None:
            out_shape.append(1)
            continue
        if e[0] == "e":
            continue
        n = plan.shape[axis]
        if e[0] == "s":
            _, start, size, step = e
            if size == 0:
                s, lim, st = 0, 0, 1
            elif step > 0:
                s, lim, st = start, start + (size - 1) * step + 1, step
            else:
                s, lim, st = start + (size - 1) * step, start + 1, -step
                if size > 1:
                    revs.append(axis)
            out_shape.append(size)
        elif e[0] == "i":
            s, lim, st = e[1], e[1] + 1, 1
        else:
            s, lim, st = 0, n, 1
            dyn[axis] = _normalize_scalar_index(plan.arrays[e[1]], n)
        starts.append(s)
        limits.append(lim)
        strides.append(st)
        axis += 1
    y = slice_p_bind(x, starts, limits, strides)
    y = rev(y, revs)
    if dyn:
        zero = _zero(_INTP)
        y = dynamic_slice(y, [dyn.get(d, zero) for d in range(y.ndim)],
                          [1 if d in dyn else n for d, n in enumerate(y.shape)])
    return reshape(y, out_shape)


def _as_value(x):
    if isinstance(x, (Array, Tracer)):
        return x
    return Array._wrap(np.array(x))


def getitem(x, idx):
    """``x[idx]`` with NumPy's indexing rules (see the module docstring).

    >>> import numpy as np, zerax as zx
    >>> x = zx.Array(np.array([[1, 2, 3], [4, 5, 6]]))
    >>> x[1, ::-1]
    Array([6, 5, 4], dtype=int64)
    >>> x[:, [0, 0, 2]]
    Array([[1, 1, 3],
           [4, 4, 6]], dtype=int64)
    """
    x = _as_value(x)
    plan = _parse(x.shape, idx, check=True)
    return _apply_plan(x, plan, "clip", None, checked=True)


def _apply_plan(x, plan, mode, fill_value, checked):
    x = _expand(x, plan)
    adv = [e for e in plan.entries if e is not None and e[0] == "a"]
    if checked and all(isinstance(plan.arrays[e[1]], Tracer) and plan.arrays[e[1]].ndim == 0
                       and not _varies_over_vmap(plan.arrays[e[1]]) for e in adv):
        return _basic_index(x, plan)
    return gather(x, plan.arrays, plan.entries, mode=mode, fill_value=fill_value)



# --------------------------------------------------------------------------- .at[]


def _traced_mask(idx):
    """The traced boolean mask when ``idx`` is one (alone or as a 1-tuple)."""
    m = idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx
    if isinstance(m, Tracer) and np.dtype(m.dtype).kind == "b":
        try:
            concrete_value(m, "boolean indexing")
        except errors.ConcretizationError:
            return m
    return None


def _masked_update(x, mask, values, op):
    """``x.at[mask].op(values)`` for a traced mask, as a ``where`` (values must broadcast
    to the selected trailing dims)."""
    k = mask.ndim
    if tuple(mask.shape) != tuple(x.shape[:k]):
        raise IndexError(f"boolean index of shape {tuple(mask.shape)} does not match the "
                         f"indexed array's leading dims {tuple(x.shape[:k])}")
    v = _updates_to(values, x.shape[k:], x.dtype, f"x.at[mask].{op}")
    v = broadcast_in_dim(v, tuple(x.shape), tuple(range(k, x.ndim)))
    m = broadcast_in_dim(mask, tuple(x.shape), tuple(range(k)))
    new = {"set": lambda: v, "add": lambda: ew.add(x, v), "mul": lambda: ew.mul(x, v),
           "min": lambda: ew.minimum(x, v), "max": lambda: ew.maximum(x, v)}[op]()
    return select_n(m, x, new)


def _scatter_update(x, idx, values, op, mode, fname):
    mask = _traced_mask(idx)
    if mask is not None:
        return _masked_update(x, mask, values, op)
    plan = _parse(x.shape, idx, check=mode is None)
    xe = _expand(x, plan)
    shape, _, _ = _gather_shape(plan.shape, plan.entries, [a.shape for a in plan.arrays])
    v = _updates_to(values, shape, x.dtype, fname)
    smode = "clip" if mode == "clip" else "drop"
    out = bind(SCATTERS[op], xe, v, *plan.arrays, indexer=plan.entries, mode=smode)
    return reshape(out, x.shape) if plan.expand else out


_GET_MODES = {None: "clip", "clip": "clip", "promise_in_bounds": "clip", "fill": "fill",
              "drop": "fill"}
_SET_MODES = (None, "clip", "drop", "fill", "promise_in_bounds")


def _check_mode(mode, modes):
    if mode not in modes:
        raise errors.ZeraxTypeError(
            f"unknown indexing mode {mode!r}; expected one of "
            f"{', '.join(repr(m) for m in modes if m is not None)}")


_COMBINE = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


# ``subtract``, ``divide`` and ``power`` combine with NumPy's functions of the same names,
# as `zerax.numpy` computes them (its dtypes, its errors, its eager fast path), here for
# the operands they meet: the updates alone, and two zerax values of one shape and dtype.


def _result_dtype(np_fn, fname, *args):
    try:
        return numpy_result_dtype(np_fn, *args)
    except TypeError:
        kinds = ", ".join(type(a).__name__ if type(a) in (bool, int, float, complex)
                          else np.dtype(a.dtype).name for a in args)
        raise errors.ZeraxTypeError(
            f"zerax.numpy.{fname} is not defined for arguments of type {kinds} "
            "(NumPy refuses the same call).") from None


def _negative(values):
    """``zerax.numpy.negative(values)``."""
    v = check_arg(values, "negative")
    return ew.neg(as_dtype(v, _result_dtype(np.negative, "negative", v)))


def _promoted(fname, np_fn, x, y):
    dtype = _result_dtype(np_fn, fname, x, y)
    return as_dtype(x, dtype), as_dtype(y, dtype)


def _true_divide(x, y):
    """``zerax.numpy.true_divide(x, y)`` for ``x``, ``y`` of one shape and dtype."""
    if type(x) is Array and type(y) is Array and x._value.dtype.kind != "c":
        try:  # concrete values: NumPy's own function, as zerax.numpy's eager path
            return Array._wrap(np.true_divide(x._value, y._value))
        except (ValueError, TypeError, OverflowError):
            pass
    elif isinstance(x, Tracer) and dtype_kind(x.dtype) == "f" and x._weak_type is None and \
            isinstance(y, Tracer) and y.dtype == x.dtype and y.shape == x.shape:
        return ew.div(x, y)
    return ew.div(*_promoted("true_divide", np.true_divide, x, y))


def _power(x, y):
    """``zerax.numpy.power(x, y)`` for ``x``, ``y`` of one shape and dtype."""
    return ew.pow(*_promoted("power", np.power, x, y))


class _IndexUpdateRef:
    """``x.at[idx]``: functional update methods (JAX's API); each returns a new array."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        """``x[idx]``; ``mode="fill"`` gives ``fill_value`` at out-of-bounds indices."""
        _check_mode(mode, tuple(_GET_MODES))
        x = _as_value(self.array)
        plan = _parse(x.shape, self.index, check=mode is None)
        return _apply_plan(x, plan, _GET_MODES[mode], fill_value, checked=mode is None)

    def _update(self, values, op, mode, name):
        _check_mode(mode, _SET_MODES)
        x, fname = _as_value(self.array), f"x.at[idx].{name}"
        if op != "set":
            # As JAX: combine in the promoted dtype, then cast back to x's (an int array
            # multiplied by 2.5 at an index holds int(x * 2.5) there, not x * 2).
            values = check_arg(values, fname)       # (converted once, used below too)
            dtype = numpy_result_dtype(_COMBINE[op], x, values)
            if dtype != np.dtype(x.dtype):
                out = _scatter_update(convert_element_type(x, dtype), self.index, values,
                                      op, mode, fname)
                return convert_element_type(out, x.dtype)
        return _scatter_update(x, self.index, values, op, mode, fname)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = values`` (for repeated indices the last value wins)."""
        return self._update(values, "set", mode, "set")

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] += values``, accumulating over repeated indices (``np.add.at``)."""
        return self._update(values, "add", mode, "add")

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] -= values``, accumulating over repeated indices."""
        return self._update(_negative(values), "add", mode, "subtract")

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] *= values``, accumulating over repeated indices (``np.multiply.at``)."""
        return self._update(values, "mul", mode, "multiply")

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] /= values`` (as JAX: ``x`` divided by the scattered product)."""
        x = _as_value(self.array)
        ones = Array._wrap(np.ones(x.shape, x.dtype))
        return _true_divide(x, _IndexUpdateRef(ones, self.index).multiply(values, mode=mode))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] **= values`` (as JAX: ``x`` to the scattered product)."""
        x = _as_value(self.array)
        ones = Array._wrap(np.ones(x.shape, x.dtype))
        return _power(x, _IndexUpdateRef(ones, self.index).multiply(values, mode=mode))

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = minimum(x[idx], values)``, over repeated indices too."""
        return self._update(values, "min", mode, "min")

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] = maximum(x[idx], values)``, over repeated indices too."""
        return self._update(values, "max", mode, "max")


class IndexUpdateHelper:
    """``x.at``: index it to get the update methods, e.g. ``x.at[0].set(1.0)``.

    >>> import numpy as np, zerax as zx
    >>> x = zx.Array(np.zeros(3))
    >>> x.at[[0, 0, 2]].add(1.0)
    Array([2., 0., 1.], dtype=float64)
    """

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self):
        return f"IndexUpdateHelper({self.array!r})"


__all__ = ["IndexUpdateHelper", "scatter", "scatter_p", "scatter_add_p", "scatter_mul_p",
           "scatter_min_p", "scatter_max_p"]
