"""Exporting once for every size: programs with symbolic dimensions.

zerax's tracing works on concrete shapes.  To export a function for a symbolic size
``b``, it is traced at several sizes (*probes*: a grid of two values per dimension
variable, and one more point to verify) and the programs are compared: they must be the
same but for their integers; each integer that differs is fitted, exactly, by a
polynomial in the variables with integer coefficients, one degree in each variable
(``b``, ``2*b + 1``, ``b*n``), and checked at the verification point.  Constants whose
shape depends on a variable (``zeros((x.shape[0], 3))``, ``arange(x.shape[0])``) become
equations (a broadcast fill, an ``iota``); a float constant that is a size or its
reciprocal (a mean's ``1/b``) becomes a symbolic literal.  A program whose *structure*
depends on the sizes (Python branching on a shape, a strided window whose output size
is a floor division) cannot be written once: that is an `ExportError` naming where the
programs differ.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from ...core.shape_poly import DimExpr
from ...core.avals import ShapedArray
from ...ir.ir import Eqn, Jaxpr, Literal, Var
from ...ops.elementwise import add_p, mul_p
from ...ops.shape import broadcast_in_dim_p, iota_p
from ....errors import ExportError
from .program import Encoder, float_json, poly_json
from ...base.dtypes import kind as dtype_kind

MAX_VARIABLES = 4
# (not sizes models are often made of: 16, 32, 28, 10, 13 features... that would let two
# different shapes coincide at a probe and be merged)
_PRIMES = [p for p in range(37, 500) if all(p % q for q in range(2, int(p ** 0.5) + 1))]


def variables_of(avals) -> tuple[list[str], object]:
    """The dimension variables of ``avals`` (in order of appearance) and their scope."""
    names, scope = [], None
    for a in avals:
        for d in a.shape:
            if isinstance(d, DimExpr):
                for v in d.variables():
                    if v not in names:
                        names.append(v)
                if d.variables():
                    if scope is not None and d.scope is not scope and \
                            d.scope.constraints and scope.constraints:
                        raise ExportError("the arguments' symbolic dimensions come from "
                                          "different SymbolicScopes")
                    if scope is None or not scope.constraints:
                        scope = d.scope
    return names, scope


def probe_values(names, scope) -> dict[str, tuple[int, int, int]]:
    """Three distinct sizes per variable (two to fit, one to verify): primes from 37
    up (no variable shares one with another), within the variable's bounds."""
    used, out = set(), {}
    for name in names:
        lo, hi = scope.bounds(name) if scope is not None else (1, None)
        lo = max(lo, 2)
        pool = [p for p in _PRIMES if p >= lo and (hi is None or p <= hi) and p not in used]
        if len(pool) < 3:
            top = hi if hi is not None else lo + 1000
            pool = [v for v in range(lo, top + 1) if v not in used][:3]
            if len(pool) < 3:
                pool = list(range(lo, top + 1))[:3]
        if len(pool) < 3:
            raise ExportError(f"the dimension variable {name!r} is bounded to [{lo}, {hi}]: "
                              "too few sizes to export it symbolically; export with a "
                              "concrete size")
        out[name] = tuple(pool[:3])
        used.update(pool[:3])
    return out


def probe_points(names, scope) -> tuple[list[dict], list[dict]]:
    """The grid of points the programs are fitted on, and the verification point."""
    vals = probe_values(names, scope)
    grid = [dict(zip(names, choice))
            for choice in itertools.product(*[vals[n][:2] for n in names])]
    return grid, [{n: vals[n][2] for n in names}]


def _monomials(names):
    return [m for k in range(len(names) + 1) for m in itertools.combinations(names, k)]


def _solver(names, grid):
    """The inverse of the grid's interpolation matrix (exact, in fractions)."""
    monos = _monomials(names)
    n = len(monos)
    a = [[Fraction(int(np.prod([env[v] for v in m], dtype=object)) if m else 1)
          for m in monos] + [Fraction(int(i == j)) for j in range(n)]
         for i, env in enumerate(grid)]
    for col in range(n):   # Gauss-Jordan: the grid design makes the matrix invertible
        piv = next(r for r in range(col, n) if a[r][col] != 0)
        a[col], a[piv] = a[piv], a[col]
        p = a[col][col]
        a[col] = [x / p for x in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return monos, [row[n:] for row in a]


class _Fit:
    def __init__(self, names, grid, checks, name):
        self.names, self.grid, self.checks, self.name = names, grid, checks, name
        self.points = grid + checks
        self.monos, self.inv = _solver(names, grid)

    def poly(self, values) -> DimExpr | None:
        """The polynomial taking ``values`` at the points (None if there is none)."""
        k = len(self.grid)
        coefs = [sum(row[j] * values[j] for j in range(k)) for row in self.inv]
        if any(c.denominator != 1 for c in coefs):
            return None
        d = DimExpr({m: int(c) for m, c in zip(self.monos, coefs)})
        if any(d.evaluate(env) != v for env, v in zip(self.points, values)):
            return None
        return d

    def mismatch(self, path, a, b, i, j):
        where = _path_str(path)
        raise ExportError(
            f"exporting {self.name} with symbolic dimensions {', '.join(self.names)}: the "
            f"program traced for {self.points[i]} differs from the one traced for "
            f"{self.points[j]} at {where} ({_brief(a)} vs {_brief(b)}). The program depends "
            "on these sizes in a way one program cannot express (Python code branching on a "
            "shape, or a size that is not a polynomial in them, such as the output of a "
            "strided window). Export with concrete sizes for these dimensions.")


def _path_str(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "the top"


def _brief(x) -> str:
    t = repr(x)
    return t if len(t) < 60 else t[:57] + "..."


def fit(nodes, ctx: _Fit, path=(), atoms=False):
    """One JSON value from the programs of all points: equal parts kept, integers that
    differ fitted as symbolic dimensions (not variable numbers: those must agree)."""
    first = nodes[0]
    t = type(first)
    for j, n in enumerate(nodes):
        if type(n) is not t:
            ctx.mismatch(path, first, n, 0, j)
    if t is dict:
        keys = list(first)
        for j, n in enumerate(nodes):
            if list(n) != keys:
                ctx.mismatch(path, keys, list(n), 0, j)
        if set(keys) == {"literal", "dtype"}:
            return _fit_literal(nodes, ctx, path)
        return {k: fit([n[k] for n in nodes], ctx, path + (k,),
                       atoms=k in ("in", "outvars", "consts")) for k in keys}
    if t is list:
        for j, n in enumerate(nodes):
            if len(n) != len(first):
                ctx.mismatch(path + ("length",), len(first), len(n), 0, j)
        return [fit([n[i] for n in nodes], ctx, path + (i,), False)
                if not atoms else _same([n[i] for n in nodes], ctx, path + (i,))
                for i in range(len(first))]
    if t is int and not atoms:
        if all(n == first for n in nodes):
            return first
        d = ctx.poly(nodes)
        if d is None:
            j = next(j for j, n in enumerate(nodes) if n != first)
            ctx.mismatch(path, first, nodes[j], 0, j)
        return d.constant() if d.is_constant() else {"dim": poly_json(d)}
    return _same(nodes, ctx, path)


def _same(nodes, ctx, path):
    first = nodes[0]
    if isinstance(first, dict):   # a literal among an equation's inputs
        return fit(nodes, ctx, path)
    for j, n in enumerate(nodes):
        if n != first or type(n) is not type(first):
            ctx.mismatch(path, first, n, 0, j)
    return first


def _fit_literal(nodes, ctx, path):
    dtype = nodes[0]["dtype"]
    vals = [n["literal"] for n in nodes]
    if any(n["dtype"] != dtype for n in nodes):
        ctx.mismatch(path + ("dtype",), dtype, "another dtype", 0, 1)
    if all(v == vals[0] for v in vals):
        return nodes[0]
    dt = np.dtype(dtype)
    if dt.kind in "iu" and all(type(v) is int for v in vals):
        d = ctx.poly(vals)
        if d is not None:
            return {"literal": {"dim": poly_json(d)}, "dtype": dtype}
    elif dtype_kind(dt) == "f" and all(isinstance(v, str) for v in vals):
        fl = [float.fromhex(v) for v in vals]
        if all(np.isfinite(x) and x == int(x) for x in fl):
            d = ctx.poly([int(x) for x in fl])
            if d is not None and all(
                    float_json(np.asarray(float(d.evaluate(env))).astype(dt)) == v
                    for env, v in zip(ctx.points, vals)):
                return {"literal": {"dim": poly_json(d)}, "dtype": dtype}
        if all(np.isfinite(x) and x != 0 for x in fl):
            recips = [int(round(1.0 / x)) for x in fl]
            d = ctx.poly(recips)
            if d is not None and all(
                    float_json(np.asarray(1.0 / d.evaluate(env)).astype(dt)) == v
                    for env, v in zip(ctx.points, vals)):
                return {"literal": {"reciprocal": poly_json(d)}, "dtype": dtype}
    raise ExportError(
        f"exporting {ctx.name} with symbolic dimensions {', '.join(ctx.names)}: the constant "
        f"at {_path_str(path)} takes the values {vals[:3]} for the sizes {ctx.points[:3]}, "
        "which is neither a size nor the reciprocal of one. Export with concrete sizes, or "
        "compute the value from the arrays (for example with zerax.numpy.mean).")


# --------------------------------------------------------------------------- constants

def _fill(arr: np.ndarray):
    """The repeated value of an array of one repeated value (its bits), else None."""
    if arr.size == 0 or arr.ndim == 0:
        return None
    flat = arr.reshape(-1)
    if (flat.view(np.uint8).reshape(arr.size, -1) == flat[:1].view(np.uint8)).all():
        return flat[0]
    return None


def _iota(arr: np.ndarray):
    """``(axis, scale, offset)`` when ``arr`` counts along one axis, ``offset + scale *
    i`` (an ``arange`` maybe scaled and shifted), else None."""
    if dtype_kind(arr.dtype) not in "iuf" or arr.ndim == 0 or arr.size < 2:
        return None
    for d in range(arr.ndim):
        if arr.shape[d] < 2:
            continue
        line = np.moveaxis(arr, d, 0).reshape(arr.shape[d], -1)[:, 0]
        offset, scale = line[0], line[1] - line[0]
        shape = [1] * arr.ndim
        shape[d] = arr.shape[d]
        count = np.arange(arr.shape[d]).astype(arr.dtype)
        if scale != 1:
            count = count * scale
        if offset != 0:
            count = count + offset
        if np.broadcast_to(count.reshape(shape), arr.shape).tobytes() == \
                arr.tobytes():
            return d, scale, offset
    return None


def _const_kind(arrs):
    """How a constant whose shape depends on the sizes is rebuilt from equations, the
    same way at every size: ``("fill", value)``, ``("iota", axis)``, or ``("broadcast",
    base, kept axes)`` for a constant repeated along the axes whose sizes vary (a bias
    broadcast over the batch by vmap); None if none fits."""
    fills = [_fill(a) for a in arrs]
    if fills[0] is not None and all(
            f is not None and np.asarray(f).tobytes() == np.asarray(fills[0]).tobytes()
            for f in fills):
        return ("fill", fills[0])
    counts = [_iota(a) for a in arrs]
    if counts[0] is not None and all(
            c is not None and c[0] == counts[0][0] and c[1] == counts[0][1]
            and c[2] == counts[0][2] for c in counts):
        return ("iota",) + counts[0]
    if len({a.ndim for a in arrs}) != 1:
        return None
    varying = [d for d in range(arrs[0].ndim) if len({a.shape[d] for a in arrs}) > 1]
    kept = tuple(d for d in range(arrs[0].ndim) if d not in varying)
    bases = []
    for a in arrs:
        base = a[tuple(0 if d in varying else slice(None) for d in range(a.ndim))]
        full = base.reshape([a.shape[d] if d in kept else 1 for d in range(a.ndim)])
        if np.broadcast_to(full, a.shape).tobytes() != a.tobytes():
            return None
        bases.append(base.copy())
    if not varying or not all(_same_array(bases[0], b) for b in bases):
        return None
    return ("broadcast", bases[0], kept)


def _as_equations(var, kind, arr):
    """The equations rebuilding constant ``var`` (of value ``arr`` at this size), and the
    new constant they read (or None)."""
    if kind[0] == "fill":
        return [Eqn(broadcast_in_dim_p, [Literal(np.asarray(kind[1], arr.dtype))], [var],
                    {"shape": tuple(arr.shape), "broadcast_dimensions": ()})], None
    if kind[0] == "iota":
        _, d, scale, offset = kind
        eqns, out = [], var
        if offset != 0:   # built backwards: the last equation defines var
            mid = Var(var.aval)
            eqns.append(Eqn(add_p, [mid, Literal(np.asarray(offset, arr.dtype))], [out], {}))
            out = mid
        if scale != 1:
            mid = Var(var.aval)
            eqns.append(Eqn(mul_p, [mid, Literal(np.asarray(scale, arr.dtype))], [out], {}))
            out = mid
        eqns.append(Eqn(iota_p, [], [out], {"dtype": arr.dtype, "shape": tuple(arr.shape),
                                            "dimension": d}))
        return eqns[::-1], None
    base = kind[1]
    bvar = Var(ShapedArray(base.shape, base.dtype))
    return [Eqn(broadcast_in_dim_p, [bvar], [var],
                {"shape": tuple(arr.shape), "broadcast_dimensions": kind[2]})], (bvar, base)


def _same_array(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def symbolic_program(trace, in_avals, name):
    """``(program JSON, constants, out_tree)`` of ``trace(sizes) -> (jaxpr, consts,
    out_tree)`` (``jaxpr``'s leading inputs are the constants), for the symbolic
    ``in_avals``."""
    names, scope = variables_of(in_avals)
    if not names:
        jaxpr, consts, out_tree = trace({})
        enc = Encoder()
        return enc.closed(_with_constvars(jaxpr, len(consts)), consts), enc.consts, out_tree
    if len(names) > MAX_VARIABLES:
        raise ExportError(f"exporting {name}: at most {MAX_VARIABLES} dimension variables "
                          f"are supported, got {names}")
    grid, checks = probe_points(names, scope)
    points = grid + checks
    traced = []
    for env in points:
        jaxpr, consts, out_tree = trace(env)
        traced.append((_with_constvars(jaxpr, len(consts)),
                       [np.asarray(getattr(c, "_value", c)) for c in consts], out_tree))
    ctx = _Fit(names, grid, checks, name)
    out_tree = traced[0][2]
    for j, (_, _, t) in enumerate(traced):
        if t != out_tree:
            ctx.mismatch(("output structure",), out_tree, t, 0, j)
    counts = [len(c) for _, c, _ in traced]
    if len(set(counts)) != 1:
        ctx.mismatch(("number of constants",), counts[0], counts[-1], 0, len(counts) - 1)
    # constants that depend on the sizes become equations
    moved = []
    for i in range(counts[0]):
        arrs = [c[i] for _, c, _ in traced]
        if all(_same_array(arrs[0], a) for a in arrs):
            continue
        kind = _const_kind(arrs)
        if kind is None:
            raise ExportError(
                f"exporting {name} with symbolic dimensions {', '.join(names)}: a constant "
                f"array ({arrs[0].dtype}{list(arrs[0].shape)} for {points[0]}) depends on "
                "the sizes and is not a fill, a count or a broadcast of a constant (zeros, "
                "full, arange). Compute it from the arguments instead, or export with "
                "concrete sizes.")
        moved.append((i, kind))
    encoded, tables = [], []
    for k, (jaxpr, consts, _) in enumerate(traced):
        jaxpr, consts = _move_constants(jaxpr, consts, moved)
        enc = Encoder()
        encoded.append(enc.closed(jaxpr, consts))
        tables.append(enc.consts)
    for i in range(len(tables[0])):
        if not all(_same_array(tables[0][i], t[i]) for t in tables):
            raise ExportError(f"exporting {name}: constant {i} differs between sizes")
    return fit(encoded, ctx), tables[0], out_tree


def _with_constvars(jaxpr, n):
    """A program whose first ``n`` inputs are constants, with them as constvars."""
    return Jaxpr(jaxpr.invars[:n], jaxpr.invars[n:], jaxpr.outvars, jaxpr.eqns)


def _move_constants(jaxpr, consts, moved):
    if not moved:
        return jaxpr, consts
    idx = {i for i, _ in moved}
    eqns, new_vars, new_consts = [], [], []
    for i, kind in moved:
        new_eqns, extra = _as_equations(jaxpr.constvars[i], kind, consts[i])
        eqns.extend(new_eqns)
        if extra is not None:
            new_vars.append(extra[0])
            new_consts.append(extra[1])
    keep = [k for k in range(len(consts)) if k not in idx]
    new = Jaxpr([jaxpr.constvars[k] for k in keep] + new_vars, jaxpr.invars, jaxpr.outvars,
                eqns + list(jaxpr.eqns))
    return new, [consts[k] for k in keep] + new_consts
