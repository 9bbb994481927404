"""Matrix decompositions under ``jit`` (``ops/decompositions.py``): where each runs.

At the top level of a jitted program a decomposition is a call to its NumPy
implementation from the Python glue between the Numba kernels (``host_rules``).
Inside compiled loop and branch bodies, cholesky, lu and triangular_solve of real
matrices are the Numba loop nests below (helpers compiled once, on first use); those
of complex matrices, and qr, eigh, svd and eig (ops/eig.py), call back into Python
there, through an object-mode block (as ``debug_callback`` does:
`lower_util.emit_python_call`), to the same NumPy/LAPACK implementation the top level
calls, so a loop gives the values of the same program without the loop.  Such a kernel
is compiled by Numba in each process (the native cache does not keep kernels that call
back into Python).
"""

from __future__ import annotations

import hashlib

import numpy as np

from ...ops.decompositions import cholesky_p, eigh_p, lu_p, qr_p, svd_p, triangular_solve_p
from ...ops.eig import eig_p
from .fusion import dtype_name
from .lower_util import emit_python_call
from .rules import host_rules, lowering_rules


def _always(eqn) -> bool:
    return True


for _p in (cholesky_p, triangular_solve_p, lu_p, qr_p, eigh_p, svd_p, eig_p):
    host_rules[_p] = _always


def _nb_cholesky(a):
    nb, n, _ = a.shape
    out = np.zeros_like(a)
    for b in range(nb):
        for j in range(n):
            s = a[b, j, j]
            for k in range(j):
                s -= out[b, j, k] * out[b, j, k]
            if not s > 0:
                out[b, :, :] = np.nan
                break
            d = np.sqrt(s)
            out[b, j, j] = d
            for i in range(j + 1, n):
                t = a[b, i, j]
                for k in range(j):
                    t -= out[b, i, k] * out[b, j, k]
                out[b, i, j] = t / d
    return out


def _nb_lu(a):
    nb, m, n = a.shape
    k = min(m, n)
    w = a.copy()
    piv = np.empty((nb, k), np.int32)
    perm = np.empty((nb, m), np.int32)
    for b in range(nb):
        for i in range(m):
            perm[b, i] = i
        for j in range(k):
            p = j
            best = abs(w[b, j, j])
            for i in range(j + 1, m):
                if abs(w[b, i, j]) > best:
                    best, p = abs(w[b, i, j]), i
            piv[b, j] = p
            if p != j:
                for c in range(n):
                    w[b, j, c], w[b, p, c] = w[b, p, c], w[b, j, c]
                perm[b, j], perm[b, p] = perm[b, p], perm[b, j]
            d = w[b, j, j]
            if d != 0:
                for i in range(j + 1, m):
                    w[b, i, j] /= d
            for i in range(j + 1, m):
                f = w[b, i, j]
                for c in range(j + 1, n):
                    w[b, i, c] -= f * w[b, j, c]
    return w, piv, perm


def _nb_triangular_solve(a, b, left, lower, trans, unit):
    nb, m, _ = a.shape
    r, c = b.shape[1], b.shape[2]
    if left:
        x = b.copy()
    else:       # x op(a) = b  <=>  op(a)^T x^T = b^T
        x = np.empty((nb, c, r), b.dtype)
        for q in range(nb):
            for i in range(r):
                for j in range(c):
                    x[q, j, i] = b[q, i, j]
        trans = not trans
    down = lower != trans       # forward substitution
    ncol = x.shape[2]
    for q in range(nb):
        for s in range(m):
            i = s if down else m - 1 - s
            lo, hi = (0, i) if down else (i + 1, m)
            for k in range(lo, hi):
                coef = a[q, k, i] if trans else a[q, i, k]
                for j in range(ncol):
                    x[q, i, j] -= coef * x[q, k, j]
            if not unit:
                d = a[q, i, i]
                for j in range(ncol):
                    x[q, i, j] /= d
    if left:
        return x
    out = np.empty_like(b)
    for q in range(nb):
        for i in range(r):
            for j in range(c):
                out[q, i, j] = x[q, j, i]
    return out


_nb_helpers: dict = {}


def _nb_helper(ctx, fn):
    name = "_zx" + fn.__name__
    compiled = _nb_helpers.get(name)
    if compiled is None:
        import numba
        compiled = _nb_helpers[name] = numba.njit(fn, cache=False, error_model="numpy")
    return ctx.helper(name, compiled)


def _nb_stack(ctx, atom):
    """An operand as a (batch, m, n) C array in the generated code."""
    shape = tuple(atom.aval.shape)
    batch = int(np.prod(shape[:-2], dtype=np.int64))
    name = ctx.fresh("m")
    ctx.emit(f"{name} = np.ascontiguousarray({ctx.name(atom)}).reshape("
             f"({batch}, {shape[-2]}, {shape[-1]}))")
    return name


def _nb_bind(ctx, var, text):
    name = ctx.out(var)
    ctx.emit(f"{name} = np.ascontiguousarray({text}).reshape({tuple(var.aval.shape)!r})")


def _cholesky_lower_numba(ctx, eqn):
    ctx.emit(f"# cholesky {eqn.invars[0].aval.str_short()}")
    a = _nb_stack(ctx, eqn.invars[0])
    _nb_bind(ctx, eqn.outvars[0], f"{_nb_helper(ctx, _nb_cholesky)}({a})")


def _lu_lower_numba(ctx, eqn):
    ctx.emit(f"# lu {eqn.invars[0].aval.str_short()}")
    a = _nb_stack(ctx, eqn.invars[0])
    res = [ctx.fresh("r") for _ in range(3)]
    ctx.emit(f"{', '.join(res)} = {_nb_helper(ctx, _nb_lu)}({a})")
    for var, r in zip(eqn.outvars, res):
        _nb_bind(ctx, var, r)


def _triangular_solve_lower_numba(ctx, eqn):
    p = eqn.params
    ctx.emit(f"# triangular_solve {eqn.invars[0].aval.str_short()} "
             f"{eqn.invars[1].aval.str_short()}")
    a, b = _nb_stack(ctx, eqn.invars[0]), _nb_stack(ctx, eqn.invars[1])
    flags = ", ".join(str(bool(p[f])) for f in ("left_side", "lower", "transpose_a",
                                                  "unit_diagonal"))
    _nb_bind(ctx, eqn.outvars[0], f"{_nb_helper(ctx, _nb_triangular_solve)}({a}, {b}, {flags})")


def _real_or_host(rule):
    """``rule`` (a real loop nest) for real operands; complex ones call the NumPy
    implementation, as qr does (`_in_loop_host_lower`)."""
    def lower(ctx, eqn):
        if any(np.dtype(a.aval.dtype).kind == "c" for a in eqn.invars):
            return _in_loop_host_lower(ctx, eqn)
        return rule(ctx, eqn)
    return lower


lowering_rules[cholesky_p] = _real_or_host(_cholesky_lower_numba)
lowering_rules[lu_p] = _real_or_host(_lu_lower_numba)
lowering_rules[triangular_solve_p] = _real_or_host(_triangular_solve_lower_numba)


def _in_loop_host_lower(ctx, eqn):
    """A decomposition inside a compiled loop body: outputs allocated in the kernel,
    filled by the primitive's NumPy implementation in object mode."""
    prim = eqn.primitive
    params = {k: eqn.params[k] for k in sorted(eqn.params)}
    n_out = len(eqn.outvars)
    # Named by primitive, parameters and arity: compiled programs are memoised by their
    # source text, and the same decomposition must give the same text in every process.
    digest = hashlib.sha1(repr((prim.name, params, n_out)).encode()).hexdigest()[:12]
    name = f"_zx_host_{prim.name}_{digest}"
    ins = [ctx.name(a) for a in eqn.invars]
    outs = []
    for v in eqn.outvars:
        out = ctx.out(v)
        ctx.emit(f"{out} = np.empty({tuple(v.aval.shape)!r}, {dtype_name(v.aval.dtype)})")
        outs.append(out)
    ctx.emit(f"# {prim.name} " + " x ".join(a.aval.str_short() for a in eqn.invars) +
             " (calls back into NumPy)")
    emit_python_call(ctx, name, _writer(prim, params, n_out), ins + outs)


def _writer(prim, params, n_out):
    """``(operands..., outputs...) -> None``: the primitive's NumPy implementation, its
    results written into the ``n_out`` output arrays the kernel allocated."""
    impl = prim.impl

    def call(*arrays):
        ins, outs = arrays[:len(arrays) - n_out], arrays[len(arrays) - n_out:]
        res = impl(*[np.asarray(a) for a in ins], **params)
        for out, r in zip(outs, res if prim.multiple_results else (res,)):
            out[...] = r
    return call


for _p in (qr_p, eigh_p, svd_p, eig_p):
    lowering_rules[_p] = _in_loop_host_lower
