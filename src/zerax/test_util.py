"""Testing helpers: `check_grads` checks derivatives against finite differences.

Forward mode is compared with a central difference along a random direction; reverse
mode with the identity ``<vjp(ct), t> == <ct, jvp(t)>`` and with the same central
difference; higher orders recurse on the derivative functions themselves.
"""

from __future__ import annotations

import numpy as np

from ._src.core import tree
from ._src.interpreters.ad import jvp, vjp

__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp"]

_DEFAULT_TOL = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 2e-2,
                np.dtype(np.float16): 1e-1}
_DEFAULT_EPS = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 1e-2,
                np.dtype(np.float16): 1e-1}


def _np(x):
    return np.asarray(x)


def _tol(dtypes, given):
    if given is not None:
        return given
    return max(_DEFAULT_TOL.get(np.dtype(d), 1e-5) for d in dtypes) if dtypes else 1e-5


def _flat_fun(f, args):
    """``f`` as a function of the float leaves of ``args`` returning float output leaves."""
    leaves, in_tree = tree.tree_flatten(tuple(args))
    leaves = [_np(x) for x in leaves]
    is_float = [x.dtype.kind in "fc" for x in leaves]

    def flat(*float_leaves):
        it = iter(float_leaves)
        full = [next(it) if m else x for x, m in zip(leaves, is_float)]
        out = f(*tree.tree_unflatten(in_tree, full))
        return [o for o in tree.tree_leaves(out) if np.dtype(o.dtype).kind in "fc"]

    return flat, [x for x, m in zip(leaves, is_float) if m]


def numerical_jvp(flat_f, primals, tangents, eps):
    plus = flat_f(*[p + eps * t for p, t in zip(primals, tangents)])
    minus = flat_f(*[p - eps * t for p, t in zip(primals, tangents)])
    return [(_np(a) - _np(b)) / (2 * eps) for a, b in zip(plus, minus)]


def _assert_close(got, want, atol, rtol, what):
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = _np(g).astype(np.float64), _np(w).astype(np.float64)
        if g.shape != w.shape:
            raise AssertionError(f"{what}: output {i} has shape {g.shape}, expected {w.shape}")
        if not np.allclose(g, w, atol=atol, rtol=rtol, equal_nan=True):
            err = np.max(np.abs(g - w)) if g.size else 0.0
            raise AssertionError(f"{what}: output {i} differs (max abs error {err:.3g}):\n"
                                 f"got      {g}\nexpected {w}")


def _random_like(rng, xs):
    return [rng.standard_normal(np.shape(x)).astype(_np(x).dtype) for x in xs]


def check_jvp(flat_f, primals, atol, rtol, eps, rng):
    tangents = _random_like(rng, primals)
    _, tan_out = jvp(flat_f, tuple(primals), tuple(tangents))
    want = numerical_jvp(flat_f, primals, tangents, eps)
    _assert_close(tan_out, want, atol, rtol, "forward mode vs finite difference")
    return tangents


def check_vjp(flat_f, primals, atol, rtol, eps, rng):
    out, f_vjp = vjp(flat_f, *primals)
    cts = _random_like(rng, out)
    tangents = _random_like(rng, primals)
    cts_in = f_vjp(list(cts))
    lhs = sum(float(np.vdot(_np(c), t).real) for c, t in zip(cts_in, tangents))
    numeric = numerical_jvp(flat_f, primals, tangents, eps)
    rhs = sum(float(np.vdot(c, _np(n)).real) for c, n in zip(cts, numeric))
    scale = max(1.0, abs(rhs), sum(np.abs(_np(n)).sum() for n in numeric))
    if not abs(lhs - rhs) <= atol * scale + rtol * abs(rhs):
        raise AssertionError(
            f"reverse mode: <vjp(ct), t> = {lhs!r} but <ct, finite-difference jvp(t)> = {rhs!r}")
    return cts


def check_grads(f, args, order: int, modes=("fwd", "rev"), atol=None, rtol=None, eps=None,
                seed: int = 0):
    """Check ``f``'s derivatives at ``args`` up to ``order`` in the given ``modes``.

    >>> import zerax.numpy as znp
    >>> check_grads(lambda x: znp.sin(x) * x, (0.5,), order=2)
    """
    if isinstance(modes, str):
        modes = (modes,)
    rng = np.random.RandomState(seed)
    flat_f, primals = _flat_fun(f, args)
    if not primals:
        return
    dtypes = [p.dtype for p in primals]
    atol = _tol(dtypes, atol)
    rtol = _tol(dtypes, rtol)
    eps = eps if eps is not None else max(_DEFAULT_EPS.get(np.dtype(d), 1e-5) for d in dtypes)

    def recurse(fun, prims, k):
        if "fwd" in modes:
            tangents = check_jvp(fun, prims, atol, rtol, eps, rng)
            if k > 1:
                def jvp_fun(*p, _t=tangents):
                    return list(jvp(fun, tuple(p), tuple(_t))[1])
                recurse(jvp_fun, prims, k - 1)
        if "rev" in modes:
            cts = check_vjp(fun, prims, atol, rtol, eps, rng)
            if k > 1:
                def vjp_fun(*p, _c=cts):
                    return list(vjp(fun, *p)[1](list(_c)))
                recurse(vjp_fun, prims, k - 1)

    recurse(flat_f, primals, order)
