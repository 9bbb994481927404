"""Checking the equations of a program read from a file, before anything runs them.

A primitive's shape rule trusts its parameters (they were made by zerax); a file's are
not.  So each equation read is checked here: its parameter names are exactly those its
primitive takes (read from the signature of its rules), each value has the kind its name
means (``axes``: a tuple of ints, ``body_jaxpr``: a program, ...), and a primitive that
holds sub-programs takes operands of the types they expect (a loop body returns what it
carries).  Then the shape rule runs (`program.Decoder`).  A parameter name this module
does not know is refused at export time already, so a program that exports also loads.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from ...core.avals import ShapedArray
from ...ir.ir import Jaxpr
from ....errors import ExportError

def _ints(v, lo=None):
    return type(v) is tuple and all(type(x) is int and (lo is None or x >= lo) for x in v)


def _nonneg_int(v):
    return type(v) is int and v >= 0


def _positive_int(v):
    return type(v) is int and v >= 1


def _dtype(v):
    return isinstance(v, np.dtype)


def _program(v):
    return type(v) is Jaxpr and not v.constvars


def _indexer_entry(e):
    if e is None:
        return True
    if type(e) is not tuple or not e or e[0] not in ("s", "i", "a", "e"):
        return False
    return {"s": len(e) == 4 and _ints(e[1:]), "i": len(e) == 2 and type(e[1]) is int,
            "a": len(e) == 2 and _nonneg_int(e[1]), "e": len(e) == 1}[e[0]]


def _dimension_numbers(v):
    return (type(v) is tuple and len(v) == 2 and all(
        type(p) is tuple and len(p) == 2 and all(_ints(q, 0) for q in p) for p in v))


# parameter name -> what its value must be
KINDS = {
    "axes": lambda v: _ints(v, 0), "dimensions": lambda v: _ints(v, 0),
    "permutation": lambda v: _ints(v, 0), "broadcast_dimensions": lambda v: _ints(v, 0),
    "shape": lambda v: _ints(v, 0), "new_sizes": lambda v: _ints(v, 0),
    "start_indices": lambda v: _ints(v), "limit_indices": lambda v: _ints(v),
    "strides": lambda v: v is None or _ints(v, 1), "slice_sizes": lambda v: _ints(v, 0),
    "window": lambda v: _ints(v, 1), "dilation": lambda v: _ints(v, 1),
    "spatial": lambda v: _ints(v, 0), "fft_lengths": lambda v: _ints(v, 0),
    "padding_config": lambda v: type(v) is tuple and all(
        type(p) is tuple and len(p) == 3 and _ints(p) and p[2] >= 0 for p in v),
    "dimension_numbers": _dimension_numbers,
    "dimension": _nonneg_int, "axis": _nonneg_int, "length": _nonneg_int,
    "num_consts": _nonneg_int, "num_carry": _nonneg_int, "cond_nconsts": _nonneg_int,
    "body_nconsts": _nonneg_int, "checkpoint_every": _positive_int, "unroll": _positive_int,
    "y": lambda v: type(v) is int, "m": _nonneg_int,
    "reverse": lambda v: type(v) is bool, "lower": lambda v: type(v) is bool,
    "left_side": lambda v: type(v) is bool, "transpose_a": lambda v: type(v) is bool,
    "conjugate_a": lambda v: type(v) is bool,
    "unit_diagonal": lambda v: type(v) is bool, "full_matrices": lambda v: type(v) is bool,
    "compute_uv": lambda v: type(v) is bool, "tiled": lambda v: type(v) is bool,
    "compute_left_eigenvectors": lambda v: type(v) is bool,
    "compute_right_eigenvectors": lambda v: type(v) is bool,
    "enable_eigvec_derivs": lambda v: type(v) is bool,
    "fc": lambda v: type(v) is tuple and all(type(x) is bool for x in v),
    "nz_bc": lambda v: type(v) is tuple and all(type(x) is bool for x in v),
    "new_dtype": _dtype, "dtype": _dtype, "index_dtype": _dtype,
    "preferred_element_type": lambda v: v is None or _dtype(v),
    "mode": lambda v: v in ("clip", "fill", "drop"),
    "fft_type": lambda v: v in ("FFT", "IFFT", "RFFT", "IRFFT"),
    "out": lambda v: type(v) is str and len(v) < 16,
    "name": lambda v: type(v) is str and len(v) < 1000,
    "fill_value": lambda v: v is None or type(v) in (bool, int, float, complex),
    "indexer": lambda v: type(v) is tuple and all(_indexer_entry(e) for e in v),
    "axis_name": lambda v: type(v) is tuple and all(type(x) is str for x in v),
    "axis_size": lambda v: _ints(v, 1),
    "jaxpr": _program, "body_jaxpr": _program, "cond_jaxpr": _program,
    "branches": lambda v: type(v) is tuple and len(v) >= 1 and all(_program(b) for b in v),
}

# primitives whose rules take their parameters as **params: named here
_EXPLICIT = {
    "while_lin": frozenset({"body_jaxpr", "body_nconsts", "checkpoint_every", "cond_jaxpr",
                            "cond_nconsts", "fc", "nz_bc"}),
    "while_transpose": frozenset({"body_jaxpr", "body_nconsts", "checkpoint_every",
                                  "cond_jaxpr", "cond_nconsts", "fc", "nz_bc"}),
}


@functools.lru_cache(maxsize=None)
def param_names(prim) -> tuple[frozenset, frozenset]:
    """The parameters ``prim`` takes, and those it requires: the keyword-only
    parameters of its shape rule or implementation (the first written as a Python
    function without ``**params``); an elementwise primitive implemented by a NumPy
    ufunc takes none."""
    if prim.name in _EXPLICIT:
        return _EXPLICIT[prim.name], _EXPLICIT[prim.name]
    for fn in (prim.abstract_eval, prim.impl):
        if fn is None or not inspect.isfunction(fn):
            continue
        ps = inspect.signature(fn).parameters.values()
        if any(p.kind is p.VAR_KEYWORD for p in ps):
            continue
        kw = [p for p in ps if p.kind is p.KEYWORD_ONLY]
        return (frozenset(p.name for p in kw),
                frozenset(p.name for p in kw if p.default is p.empty))
    return frozenset(), frozenset()


def check_names(prim, params, where: str) -> None:
    """The parameter names of an equation: those of its primitive, each with a kind."""
    names, required = param_names(prim)
    extra, missing = set(params) - names, required - set(params)
    if extra or missing:
        what = f"no parameter(s) {sorted(extra)}" if extra else \
            f"the parameter(s) {sorted(missing)}, which are missing"
        raise ExportError(f"{where}: primitive '{prim.name}' takes {what}")
    unknown = [k for k in params if k not in KINDS]
    if unknown:
        raise ExportError(f"{where}: the export format does not know the parameter(s) "
                          f"{unknown} of primitive '{prim.name}' (add their kind to "
                          "zerax/_src/api/export/validate.py)")


def check_eqn(prim, params, in_avals, where: str) -> None:
    """An equation read from a file: names, kinds, and the operands of sub-programs."""
    check_names(prim, params, where)
    for k, v in params.items():
        if not KINDS[k](v):
            raise ExportError(f"{where}: parameter {k!r} of '{prim.name}' has an invalid value "
                              f"{str(v)[:80]}")
    in_avals = list(in_avals)
    if in_avals:    # an axis of the (first) operand: in range (0 also for a 0-d one)
        rank = max(len(in_avals[0].shape), 1)
        for k in ("axis", "dimension", "axes", "dimensions"):
            v = params.get(k)
            if v is not None and any(a >= rank for a in (v if isinstance(v, tuple) else (v,))):
                raise ExportError(f"{where}: parameter {k!r} of '{prim.name}' is {v}, out of "
                                  f"range for an operand of rank {rank}")
    rule = _STRUCTURE.get(prim.name)
    if rule is not None:
        rule(params, in_avals, where)


def _same(got, want, what, where):
    if list(got) != list(want):
        raise ExportError(f"{where}: {what} is {list(want)}, but the operands are {list(got)}")


def _call(params, avals, where):
    _same(avals, params["jaxpr"].in_avals, "the called program's input", where)


def _checkpoint_jvp(params, avals, where):
    ins = params["jaxpr"].in_avals
    _same(avals, list(ins) + list(ins), "the checkpointed program's input (twice)", where)


def _cond(params, avals, where):
    if not avals or avals[0].shape != () or avals[0].dtype.kind not in "iu":
        raise ExportError(f"{where}: cond's first operand must be an integer scalar")
    outs = params["branches"][0].out_avals
    for b in params["branches"]:
        _same(avals[1:], b.in_avals, "a branch's input", where)
        _same(b.out_avals, outs, "the first branch's output", where)


def _while(params, avals, where):
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    if cn + bn > len(avals):
        raise ExportError(f"{where}: while has {len(avals)} operands, fewer than its "
                          f"{cn} + {bn} constants")
    carry = avals[cn + bn:]
    _same(avals[:cn] + carry, params["cond_jaxpr"].in_avals, "the loop condition's input",
          where)
    _same(params["cond_jaxpr"].out_avals, [ShapedArray((), np.bool_)],
          "a boolean scalar (the condition's output)", where)
    _same(avals[cn:cn + bn] + carry, params["body_jaxpr"].in_avals, "the loop body's input",
          where)
    _same(params["body_jaxpr"].out_avals, carry, "the carried values", where)


def _scan(params, avals, where):
    nc, nk, n = params["num_consts"], params["num_carry"], params["length"]
    if nc + nk > len(avals):
        raise ExportError(f"{where}: scan has {len(avals)} operands, fewer than its "
                          f"{nc} constants and {nk} carried values")
    xs = avals[nc + nk:]
    if any(not x.shape or x.shape[0] != n for x in xs):
        raise ExportError(f"{where}: scan's sequences must have a leading axis of its "
                          f"length {n}")
    body = params["jaxpr"]
    _same(avals[:nc + nk] + [ShapedArray(x.shape[1:], x.dtype) for x in xs], body.in_avals,
          "the scan body's input", where)
    if len(body.out_avals) < nk:
        raise ExportError(f"{where}: the scan body returns fewer values than it carries")
    _same(body.out_avals[:nk], avals[nc:nc + nk], "the carried values", where)


_STRUCTURE = {"jit": _call, "checkpoint": _call, "checkpoint_jvp": _checkpoint_jvp,
              "cond": _cond, "while": _while, "scan": _scan}
