"""`zerax.scipy.optimize.root_scalar`: SciPy's Newton and Halley iterations for a root of
a function of one number, with the derivatives SciPy asks the user for computed by
Taylor mode (`zerax.taylor.derivatives`: f, f' and f'' in one pass) when not given.

The iteration is SciPy's ``newton`` step for step (Halley's correction applied only
while ``|adj| < 1``, the same stopping test ``isclose(p, p0, rtol, xtol)``, the same
counts), as one ``lax.while_loop``: it jits, and vmaps over starting points.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from .... import errors
from ... import numpy as znp
from ...base.dtypes import kind as dtype_kind
from ...lax import control_flow as _cf
from ..taylor import derivatives

__all__ = ["RootResults", "root_scalar"]

_FLAGS = {0: "converged", 1: "convergence error", 2: "convergence error"}   # SciPy's words


class RootResults(NamedTuple):
    """The result of `root_scalar` (SciPy's fields): ``root``; ``iterations``;
    ``function_calls`` (as SciPy counts them: f, f' and f'' one each per iteration when
    the user gives them; one per iteration when they come from one Taylor-mode pass, as
    SciPy counts a function that returns its derivatives); ``converged``; ``status``: 0
    converged, 1 a zero derivative, 2 the iteration limit (``flag``: SciPy's words,
    ``'converged'`` or ``'convergence error'``); ``method``."""
    root: Any
    iterations: Any
    function_calls: Any
    converged: Any
    status: Any
    method: str

    @property
    def flag(self) -> str:
        return _FLAGS[int(self.status)]


def _check_callable(name, fn):
    if fn is not None and not callable(fn):
        raise errors.ZeraxTypeError(
            f"root_scalar: {name} must be a function of x (and args) or None, got {fn!r}; "
            "zerax computes missing derivatives itself (Taylor mode), so leave it out.")


def root_scalar(f: Callable, args: tuple = (), method: Optional[str] = None, bracket=None,
                fprime: Optional[Callable] = None, fprime2: Optional[Callable] = None,
                x0: Any = None, x1: Any = None, xtol: Optional[float] = None,
                rtol: Optional[float] = None, maxiter: Optional[int] = None,
                options: Optional[dict] = None) -> RootResults:
    """A root of ``f(x, *args)``, a function of one number, from ``x0`` (SciPy's
    signature), by ``method="newton"`` (quadratic convergence) or ``"halley"`` (cubic).
    Derivatives not given as ``fprime`` / ``fprime2`` come from one Taylor-mode pass per
    iteration.  Defaults as SciPy's: ``xtol=1.48e-8``, ``rtol=0``, ``maxiter=50``;
    ``method`` defaults to Halley when ``fprime2`` is given, else Newton.

    >>> import zerax.numpy as znp
    >>> from zerax.scipy.optimize import root_scalar
    >>> r = root_scalar(lambda x: x ** 3 - 2 * x - 5, x0=2.0, method="halley")
    >>> round(float(r.root), 12), int(r.iterations), r.flag
    (2.094551481542, 3, 'converged')
    """
    if not isinstance(args, tuple):
        raise errors.ZeraxTypeError(f"root_scalar: args must be a tuple, got {type(args).__name__}")
    meth = (method or ("halley" if fprime2 is not None else "newton")).lower()
    if meth not in ("newton", "halley"):
        raise errors.NotSupportedError(
            f"root_scalar: method {method!r} is not available in zerax; use 'newton' or "
            "'halley' (both from x0, with derivatives from Taylor mode).")
    if bracket is not None or x1 is not None:
        raise errors.NotSupportedError(
            "root_scalar: bracketing and secant methods (bracket=, x1=) are not available "
            "in zerax; give x0 and use method='newton' or 'halley'.")
    if x0 is None:
        raise errors.ZeraxValueError(f"root_scalar: x0 must not be None for {meth}")
    _check_callable("fprime", fprime)
    _check_callable("fprime2", fprime2)
    opts = dict(options or {})
    tol = float(opts.pop("xtol", 1.48e-8 if xtol is None else xtol))
    rtol = float(opts.pop("rtol", 0.0 if rtol is None else rtol))
    maxiter = int(opts.pop("maxiter", 50 if maxiter is None else maxiter))
    if opts:
        raise errors.ZeraxTypeError(f"root_scalar: unknown options {sorted(opts)}")
    halley = meth == "halley"
    order = 2 if halley else 1

    def fun(x):
        return f(x, *args)

    user = fprime is not None and (fprime2 is not None or not halley)
    if user:
        def values(x):
            out = [fun(x), fprime(x, *args)]
            return out + [fprime2(x, *args)] if halley else out
        calls = 1 + order
    else:
        values = derivatives(fun, order)
        calls = 1

    p0 = znp.asarray(x0)
    if dtype_kind(p0.dtype) != "f":
        p0 = p0.astype(float)
    zero = znp.zeros((), np.int32)

    def body(s):
        itr, p, _, status, ncalls = s
        vals = values(p)
        fval, fder = vals[0], vals[1]
        found = fval == 0
        flat = (fder == 0) & ~found
        with np.errstate(divide="ignore", invalid="ignore"):
            step = fval / znp.where(fder == 0, 1.0, fder)
            if halley:
                adj = step * vals[2] / znp.where(fder == 0, 1.0, fder) / 2
                step = znp.where(znp.abs(adj) < 1, step / (1.0 - adj), step)
        p_new = p - step
        close = znp.abs(p_new - p) <= tol + rtol * znp.abs(p)
        done = found | flat | close
        return (znp.where(found, itr, itr + 1), znp.where(found | flat, p, p_new), done,
                znp.where(flat, 1, 0).astype(np.int32),
                ncalls + znp.where(found, 1, calls).astype(np.int32))

    init = (zero, p0, znp.asarray(False), zero, zero)
    itr, root, done, status, ncalls = _cf.while_loop(
        lambda s: ~s[2] & (s[0] < maxiter), body, init)
    status = znp.where(done, status, 2)
    return RootResults(root=root, iterations=itr, function_calls=ncalls,
                       converged=done & (status == 0), status=status, method=meth)
