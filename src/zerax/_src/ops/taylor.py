"""The Taylor-mode (jet) rule of every primitive: the entries of ``jet_rules``.

A rule maps the Taylor coefficients of a primitive's operands, ``u = [u0, u1, ..,
uK]`` with ``u(t) = sum_k u_k t^k`` (``interpreters/jet.py``: a coefficient known to be
zero is ``None``), to its output's, with zerax operations only (so jet composes with
grad, vmap and jit, and with itself).  The rules come in kinds:

- *zero*: piecewise-constant or integer outputs (comparisons, floor, argmax, ...);
- *linear*: the primitive applied to each coefficient (shape ops, sums, gathers, FFTs);
- *bilinear*: Leibniz's rule, ``v_k = sum_j op(a_j, b_{k-j})`` (mul, dot_general);
- *piecewise linear*: locally linear maps (max, sort, clamp, ...): every coefficient
  goes through the JVP rule, which is linear in the tangent with the primal's choices;
- *analytic*: recurrences of O(K^2) operations from the function's differential
  equation (exp, log, sin/cos, tanh, powers, erf_inv, the Bessel pairs, ...), or from a
  derivative written without the function itself (``_deriv``: asin, erf, lgamma, ...),
  or Faa di Bruno's formula from closed-form derivatives (Bessel functions of real
  order, spherical Legendre functions);
- *composed*: the series of an equivalent composition of primitives (cumprod as a
  log-depth scan, integer powers by squaring, |z| of a complex z);
- *from the JVP rule* (`jet_from_jvp`): ``y' = J(x) x'``, whose first K-1
  coefficients are a jet of order K-1 of the JVP rule: the decompositions, custom_jvp
  functions (JAX's jet ignores their rule; zerax follows it, so jet agrees with nested
  jvp) and the internal loop primitives.  Its cost is polynomial in K when the JVP
  rule calls the primitive itself once (each order adds one lower-order jet);
- *sub-programs*: cond, scan, while, jit and checkpoint bind themselves again on the
  `jet_jaxpr` of their bodies, the series of a loop carry advancing with the loop.

Primitives with no Taylor rule say why in ``prim.unsupported["jet"]``.
"""

from __future__ import annotations

import math

import numpy as np

from ... import errors
from ..core.ad_util import Zero, instantiate
from ..core.core import ShapedArray, all_primitives, bind, get_aval
from ..interpreters.ad import custom_lin_p, jvp_rules
from ..interpreters.jet import (install_custom_jvp, is_float, jet_flat, jet_jaxpr, jet_rules,
                                split_series_outputs)
from ..ir.ir import eval_jaxpr
from . import elementwise as ew
from . import special_ops as sp
from ._factory import broadcast_to_shape
from .call import jit_p
from .cond import cond_from_programs, cond_p
from .decompositions import _mm, _mT, _tri
from .custom_calls import _remat_jvp_fn, remat_jvp_p, remat_p
from .reduce import _prefix_scan, _keep_dims
from .scan import scan_from_fn, scan_p
from .shape import reshape, transpose
from .slicing import slice_p_bind
from .while_loop import while_from_fns, while_p

P = all_primitives()

# --------------------------------------------------------------------------- arithmetic
# On coefficients that may be None (known zero).


def _c(x, v):
    return np.array(v, dtype=get_aval(x).dtype)


def _zeros(x):
    a = get_aval(x)
    return np.zeros(a.shape, a.dtype)


def add(a, b):
    return b if a is None else a if b is None else ew.add(a, b)


def sub(a, b):
    return (None if b is None else ew.neg(b)) if a is None else a if b is None else ew.sub(a, b)


def mul(a, b):
    return None if a is None or b is None else ew.mul(a, b)


def scale(c, a):
    """``c * a`` for a Python number ``c``."""
    if a is None or c == 0:
        return None
    return a if c == 1 else ew.mul(a, _c(a, c))


def total(terms):
    out = None
    for t in terms:
        out = add(out, t)
    return out


def conv(a, b, k, lo=0):
    """The coefficient ``k`` of the product of series ``a`` and ``b``: sum over
    ``j = lo .. k`` of ``a[j] * b[k-j]``."""
    return total(mul(a[j], b[k - j]) for j in range(lo, k + 1))


def order_of(series):
    return next(len(s) for s in series if s is not None)


def full(x, s, K):
    """``[x0, x1, .., xK]`` (None for the coefficients of a value with no series)."""
    return [x] + (list(s) if s is not None else [None] * K)


def dense(x, s, K):
    """The K coefficients of ``x`` as arrays (zeros where None)."""
    s = s if s is not None else [None] * K
    return [_zeros(x) if t is None else t for t in s]


def _shaped(out, terms):
    """Coefficients broadcast to the output's shape (a 0-d operand of an elementwise
    primitive broadcasts)."""
    shape = tuple(get_aval(out).shape)
    return [t if t is None or tuple(get_aval(t).shape) == shape else broadcast_to_shape(t, shape)
            for t in terms]


def _nonzero(terms):
    return None if terms is None or all(t is None for t in terms) else terms


# --------------------------------------------------------------------------- kinds of rules


def _zero(prim):
    def rule(primals, series, **params):
        out = bind(prim, *primals, **params)
        return out, ([None] * len(out) if prim.multiple_results else None)
    return rule


def _linear(prim):
    """Linear in its float operands together (the others, integers, pass as they are)."""
    def rule(primals, series, **params):
        K = order_of(series)
        out = bind(prim, *primals, **params)
        floats = [is_float(p) for p in primals]
        terms = []
        for k in range(K):
            if all(s is None or s[k] is None for s in series):
                terms.append(None)
                continue
            args = [p if not f else _zeros(p) if s is None or s[k] is None else s[k]
                    for p, s, f in zip(primals, series, floats)]
            terms.append(bind(prim, *args, **params))
        return out, terms
    return rule


def _piecewise_linear(prim):
    """Locally linear (all second derivatives vanish where it is smooth): each
    coefficient is mapped by the JVP rule's tangent map at the primal point."""
    jvp = jvp_rules[prim]

    def rule(primals, series, **params):
        K = order_of(series)
        out = bind(prim, *primals, **params)
        terms = []
        for k in range(K):
            ts = [Zero(get_aval(p)) if s is None or s[k] is None else s[k]
                  for p, s in zip(primals, series)]
            if all(type(t) is Zero for t in ts):
                terms.append(None)
                continue
            _, t = jvp(primals, ts, **params)
            terms.append(None if type(t) is Zero else t)
        return out, terms
    return rule


def _bilinear(prim):
    def rule(primals, series, **params):
        (x, y), (sx, sy) = primals, series
        K = order_of(series)
        a, b = full(x, sx, K), full(y, sy, K)
        op = lambda u, v: None if u is None or v is None else bind(prim, u, v, **params)  # noqa: E731
        out = bind(prim, x, y, **params)
        return out, _shaped(out, [total(op(a[j], b[k - j]) for j in range(k + 1))
                                  for k in range(1, K + 1)])
    return rule


def _composed(fn):
    """The series of the composition ``fn(*primals, **params)`` of other primitives,
    with the primitive's own primal output."""
    def rule(primals, series, **params):
        prim_out, s = jet_flat(lambda *a: [fn(*a, **params)], primals, series,
                               order_of(series))
        return prim_out[0], s[0]
    return rule


def _with_own_primal(prim, rule):
    """``rule``'s series, with the primitive's own primal (bit-for-bit its result)."""
    def wrapped(primals, series, **params):
        _, s = rule(primals, series, **params)
        return bind(prim, *primals, **params), s
    return wrapped


# --------------------------------------------------------------------------- from the JVP


def jet_from_jvp(jvp_fn, primals, series):
    """The series of ``y = f(x)`` from f's JVP ``jvp_fn(primals, tangents) -> (outs,
    tangent outs)`` (lists; Zero for a zero tangent): ``y0 = f(x0)`` and, since
    ``y'(t) = J(x(t)) x'(t)``, the coefficients ``y_k = z_{k-1} / k`` of ``z``, the jet
    of order K-1 of the JVP's tangent map at ``(x(t), x'(t))``.  Returns ``(outs,
    [series or None per output])``."""
    K = order_of(series)
    n = len(primals)
    # x'(t): coefficients (j+1) x_{j+1}, j = 0 .. K-1 (its primal is x_1)
    moving = [s is not None and is_float(p) for p, s in zip(primals, series)]
    d_primal = [(s[0] if s[0] is not None else _zeros(p)) if m else None
                for p, s, m in zip(primals, series, moving)]
    d_series = [[scale(j + 1, s[j]) for j in range(1, K)] if m else None
                for s, m in zip(series, moving)]
    zero_out = []

    def tangent_map(*args):
        ps, it = list(args[:n]), iter(args[n:])
        ts = [next(it) if m else Zero(get_aval(p)) for p, m in zip(ps, moving)]
        outs, t_outs = jvp_fn(ps, ts)
        zero_out[:] = [type(t) is Zero for t in t_outs]
        return list(outs) + [t for t in t_outs if type(t) is not Zero]

    outs, s = jet_flat(tangent_map, list(primals) + [d for d in d_primal if d is not None],
                       [None if t is None else t[:K - 1] for t in series] +
                       [d for d in d_series if d is not None], K - 1)
    n_out = len(zero_out)
    z = iter(zip(outs[n_out:], s[n_out:]))
    res = []
    for o, zero in zip(outs[:n_out], zero_out):
        if zero or not is_float(o):
            res.append(None)
            continue
        z0, zs = next(z)
        zs = [None] * (K - 1) if zs is None else zs
        res.append(_nonzero([scale(1.0 / k, ([z0] + zs)[k - 1]) for k in range(1, K + 1)]))
    return outs[:n_out], res


def _from_jvp(prim):
    jvp = jvp_rules[prim]

    def jvp_fn(ps, ts, params):
        outs, t_outs = jvp(ps, ts, **params)
        if prim.multiple_results:
            return list(outs), list(t_outs)
        return [outs], [t_outs]

    def rule(primals, series, **params):
        outs, s = jet_from_jvp(lambda p, t: jvp_fn(p, t, params), primals, series)
        if not prim.multiple_results:
            return outs[0], s[0]
        return outs, s
    return rule


def _custom_jvp_series(jvp_rule, primals, series, order):
    """A custom_jvp function under jet (``JetTrace.process_custom_jvp``): the user's rule
    receives concrete zeros for zero tangents."""
    def jvp_fn(ps, ts):
        return jvp_rule(ps, [instantiate(t) for t in ts])
    return jet_from_jvp(jvp_fn, primals, series)


install_custom_jvp(_custom_jvp_series)


# --------------------------------------------------------------------------- analytic rules


def _ode(u, y0s, rhs):
    """Functions ``y_i(x)`` with ``dy_i/dx = F_i(x, y)`` along ``x = u(t)``:
    ``y_i[k] = (1/k) sum_j j u[j] F_i[k-j]``.  ``rhs(ys, m)`` gives the coefficients
    ``F_i[m]``, knowing ``ys[i][0..m]``.  Returns the full series ``ys``."""
    K = len(u) - 1
    ys = [[y0] for y0 in y0s]
    du = [None] + [scale(j, u[j]) for j in range(1, K + 1)]
    F = []
    for k in range(1, K + 1):
        F.append(rhs(ys, k - 1))
        for i, y in enumerate(ys):
            y.append(scale(1.0 / k, total(mul(du[j], F[k - j][i]) for j in range(1, k + 1))))
    return ys


def _unary(fn):
    """Rule of a unary elementwise primitive from ``fn(u, x0) -> (out, coefficients)``."""
    def rule(primals, series):
        (x,), (s,) = primals, series
        K = order_of(series)
        out, terms = fn(full(x, s, K), x)
        return out, terms
    return rule


def _exp(u, x):
    v0 = ew.exp(x)
    return v0, _ode(u, [v0], lambda ys, m: [ys[0][m]])[0][1:]


def _exp2(u, x):
    v0 = bind(ew.exp2_p, x)
    ln2 = math.log(2.0)
    return v0, _ode(u, [v0], lambda ys, m: [scale(ln2, ys[0][m])])[0][1:]


def _expm1(u, x):
    v0 = bind(ew.expm1_p, x)
    e0 = ew.exp(x)   # (expm1 + 1)' = expm1 + 1
    return v0, _ode(u, [v0], lambda ys, m: [e0 if m == 0 else ys[0][m]])[0][1:]


def _log_like(u, w):
    """``log(w)`` coefficients from ``v' = w'/w``: ``v[k] = (u[k] - (1/k) sum_{j<k} j
    v[j] w[k-j]) / w0`` (``u`` is w's series, but for w0)."""
    K = len(u) - 1
    v = [None] * (K + 1)
    for k in range(1, K + 1):
        acc = total(mul(scale(j, v[j]), w[k - j]) for j in range(1, k))
        v[k] = ew.div(sub(u[k], scale(1.0 / k, acc)), w[0]) if (u[k] is not None or acc is not None) else None
    return v[1:]


def _log(u, x):
    return ew.log(x), _log_like(u, u)


def _log1p(u, x):
    w = [ew.add(x, _c(x, 1.0))] + u[1:]
    return bind(ew.log1p_p, x), _log_like(u, w)


def _power(u, v0, r):
    """``v = u^r`` for a constant exponent ``r`` (array): from ``u v' = r u' v``,
    ``k u0 v[k] = sum_{j=1..k} (r j - (k - j)) u[j] v[k-j]``."""
    K = len(u) - 1
    v = [v0] + [None] * K
    for k in range(1, K + 1):
        acc = total(mul(ew.sub(ew.mul(r, _c(r, float(j))), _c(r, float(k - j))), mul(u[j], v[k - j]))
                    for j in range(1, k + 1) if u[j] is not None)
        v[k] = None if acc is None else ew.div(acc, ew.mul(u[0], _c(u[0], float(k))))
    return v[1:]


def _sqrt(u, x):
    v0 = ew.sqrt(x)
    K = len(u) - 1
    v = [v0] + [None] * K
    two_v0 = ew.mul(v0, _c(v0, 2.0))
    for k in range(1, K + 1):
        acc = sub(u[k], conv(v, v, k, lo=1) if k > 1 else None)
        v[k] = None if acc is None else ew.div(acc, two_v0)
    return v0, v[1:]


def _const_power(prim, r):
    def fn(u, x):
        v0 = bind(prim, x)
        return v0, _power(u, v0, _c(x, r))
    return fn


def _sin_cos(which, sign, prims):
    def fn(u, x):
        s0, c0 = bind(prims[0], x), bind(prims[1], x)
        ys = _ode(u, [s0, c0], lambda ys, m: [ys[1][m], scale(sign, ys[0][m])])
        return ys[which][0], ys[which][1:]
    return fn


def _quadratic_ode(prim, a, b, c):
    """``v' = (a + b v + c v^2) u'``: tan (1, 0, 1), tanh (1, 0, -1), logistic (0, 1, -1)."""
    def fn(u, x):
        v0 = bind(prim, x)

        def rhs(ys, m):
            v = ys[0]
            f = add(scale(b, v[m]), scale(c, conv(v, v, m)))
            return [add(_c(x, a), f) if m == 0 and a else f]
        return v0, _ode(u, [v0], rhs)[0][1:]
    return fn


def _erf_inv(u, x):
    # v' = (sqrt(pi)/2) exp(v^2) u': the series of exp(v^2) is built alongside.
    v0 = bind(ew.erf_inv_p, x)
    c = math.sqrt(math.pi) / 2.0
    w, e = [], []

    def rhs(ys, m):
        v = ys[0]
        w.append(conv(v, v, m))
        e.append(ew.exp(w[0]) if m == 0 else
                 scale(1.0 / m, total(mul(scale(j, w[j]), e[m - j]) for j in range(1, m + 1))))
        return [scale(c, e[m])]
    return v0, _ode(u, [v0], rhs)[0][1:]


def _div_rule(primals, series):
    (a, b), (sa, sb) = primals, series
    K = order_of(series)
    out = ew.div(a, b)
    if sb is None:      # linear in the numerator
        return out, _shaped(out, [None if t is None else ew.div(t, b) for t in sa])
    u, w = full(a, sa, K), full(b, sb, K)
    v = [out] + [None] * K
    for k in range(1, K + 1):
        acc = sub(u[k], total(mul(v[j], w[k - j]) for j in range(k)))
        v[k] = None if acc is None else ew.div(acc, b)
    return out, _shaped(out, v[1:])


def _pow_rule(primals, series):
    (x, y), (sx, sy) = primals, series
    K = order_of(series)
    out = ew.pow(x, y)
    if sy is None:      # a constant exponent: the power recurrence (exact for x < 0)
        r = y if tuple(get_aval(y).shape) == tuple(get_aval(out).shape) else \
            broadcast_to_shape(y, get_aval(out).shape)
        return out, _power(full(x, sx, K), out, r)
    # x^y = exp(y log x), as JAX's jet
    _, ws = jet_flat(lambda a, b: [ew.mul(b, ew.log(a))], [x, y], [sx, sy], K)
    w = full(None, ws[0], K)
    return out, _shaped(out, _ode(w, [out], lambda ys, m: [ys[0][m]])[0][1:])


def _pow_by_squaring(x, n):
    if n < 0:
        return _pow_by_squaring(ew.div(_c(x, 1.0), x), -n)
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else ew.mul(result, base)
        n >>= 1
        if n:
            base = ew.mul(base, base)
    return result


def _integer_pow_rule(primals, series, *, y):
    (x,), (s,) = primals, series
    out = bind(ew.integer_pow_p, x, y=y)
    if y == 0:
        return out, None
    _, terms = jet_flat(lambda a: [_pow_by_squaring(a, y)], [x], [s], order_of(series))
    return out, terms[0]


def _deriv(prim, *partials):
    """Rule from the partial derivatives ``partials[i](*primals)`` (zerax functions not
    using the primitive's own value; None where the JVP rule refuses): with ``c_i`` the
    series of partial i to order K-1, ``v[k] = (1/k) sum_i sum_j j u_i[j] c_i[k-j]``."""
    jvp = jvp_rules[prim]

    def rule(primals, series, **params):
        K = order_of(series)
        out = bind(prim, *primals, **params)
        acc = [None] * (K + 1)
        for i, (fn, s) in enumerate(zip(partials, series)):
            if s is None or all(t is None for t in s):
                continue
            if fn is None:   # the JVP rule raises its error for this operand
                ts = [Zero(get_aval(p)) for p in primals]
                ts[i] = s[next(k for k, t in enumerate(s) if t is not None)]
                jvp(primals, ts, **params)
                raise errors.NotSupportedError(f"{prim.name} has no derivative in operand {i}")
            c0, cs = jet_flat(lambda *a: [fn(*a, **params)], primals,
                              [None if t is None else t[:K - 1] for t in series], K - 1)
            c = [c0[0]] + (cs[0] if cs[0] is not None else [None] * (K - 1))
            u = full(primals[i], s, K)
            for k in range(1, K + 1):
                acc[k] = add(acc[k], scale(1.0 / k, total(mul(scale(j, u[j]), c[k - j])
                                                          for j in range(1, k + 1))))
        return out, _shaped(out, acc[1:])
    return rule


def _faa_di_bruno(u, derivs):
    """Coefficients of ``f(u(t))`` from ``derivs[j] = f^(j)(u0)``, j = 0..K: the sum of
    ``derivs[j] / j! h^j`` with ``h = u - u0``."""
    K = len(u) - 1
    h = [None] + list(u[1:])
    v = [None] * (K + 1)
    hp = h
    for j in range(1, K + 1):
        if j > 1:
            hp = [None] * j + [conv(hp, h, k, lo=j - 1) for k in range(j, K + 1)]
        c = scale(1.0 / math.factorial(j), derivs[j])
        for k in range(j, K + 1):
            v[k] = add(v[k], mul(c, hp[k]))
    return v[1:]


def _with_derivs(prim, arg, derivs_fn):
    """Rule from the derivatives in operand ``arg`` (the others must have no series):
    ``derivs_fn(K, *primals) -> [f, f', .., f^(K)]`` at the primal point."""
    jvp = jvp_rules[prim]

    def rule(primals, series, **params):
        K = order_of(series)
        for i, s in enumerate(series):
            if i != arg and _nonzero(s) is not None:
                ts = [Zero(get_aval(p)) for p in primals]
                ts[i] = next(t for t in s if t is not None)
                jvp(primals, ts, **params)   # raises the JVP rule's error
                raise errors.NotSupportedError(f"{prim.name} has no derivative in operand {i}")
        out = bind(prim, *primals, **params)
        derivs = derivs_fn(K, *primals)
        return out, _shaped(out, _faa_di_bruno(full(primals[arg], series[arg], K), derivs))
    return rule


def _bessel_derivs(fn, plus):
    """``F_v^(j) = 2^-j sum_i (+-1)^i C(j, i) F_{v-j+2i}`` for J (minus) and I (plus)."""
    def derivs(K, v, x):
        out = [None]
        for j in range(1, K + 1):
            acc = None
            for i in range(j + 1):
                c = math.comb(j, i) * (1.0 if plus or i % 2 == 0 else -1.0) / 2.0 ** j
                acc = add(acc, scale(c, fn(ew.add(v, _c(v, float(2 * i - j))), x)))
            out.append(acc)
        return out
    return derivs


def _sph_legendre_derivs(K, n, m, t):
    """d/dtheta P_n^m = h (up(n, m) P_n^{m+1} - down(n, m) P_n^{m-1}), h = +-1/2 by the
    sign of sin(theta) (the JVP rule's), applied j times to a combination of orders."""
    half = ew.select_n(ew.lt(ew.sin(t), _c(t, 0.0)), _c(t, 0.5), _c(t, -0.5))
    zero, one = _c(n, 0.0), _c(n, 1.0)

    def up(mm):
        return ew.sqrt(ew.maximum(ew.mul(ew.add(ew.add(n, mm), one), ew.sub(n, mm)), zero))

    def down(mm):
        return ew.sqrt(ew.maximum(ew.mul(ew.add(n, mm), ew.add(ew.sub(n, mm), one)), zero))

    combo, out = {0: None}, [None]   # order offset -> coefficient (None: 1)
    for _ in range(K):
        new = {}
        for o, c in combo.items():
            mm = ew.add(m, _c(m, float(o)))
            for o2, f in ((o + 1, up(mm)), (o - 1, ew.neg(down(mm)))):
                term = ew.mul(half, f) if c is None else ew.mul(c, ew.mul(half, f))
                new[o2] = add(new.get(o2), term)
        combo = new
        out.append(total(ew.mul(c, sp.sph_legendre(n, ew.add(m, _c(m, float(o))), t))
                         for o, c in combo.items()))
    return out


def _pair(prim, which, fns, rhs_fn):
    """The rule of one function of a pair ``(y0, y1)`` solving a linear ODE in x."""
    def rule(primals, series):
        (x,), (s,) = primals, series
        K = order_of(series)
        u = full(x, s, K)
        y0s = [fns[0](x), fns[1](x)]
        ys = _ode(u, y0s, rhs_fn(u, x))
        return bind(prim, x), ys[which][1:]
    return rule


def _over_x(u, x, limit):
    """``r = y / x`` built coefficient by coefficient (``r[m]`` needs ``y[0..m]``); the
    value ``limit`` and zero coefficients where x0 == 0 (the JVP rules' ``_over_x``)."""
    at_zero = ew.eq(x, _c(x, 0.0))
    safe = ew.select_n(at_zero, x, _c(x, 1.0))
    r = []

    def coef(y, m):
        acc = sub(y[m], total(mul(r[j], u[m - j]) for j in range(m)))
        q = _zeros(x) if acc is None else ew.div(acc, safe)
        r.append(ew.select_n(at_zero, q, _c(x, limit) if m == 0 else _c(x, 0.0)))
        return r[m]
    return coef


def _j_rhs(u, x):        # J0' = -J1, J1' = J0 - J1/x (1/2 at 0)
    r = _over_x(u, x, 0.5)
    return lambda ys, m: [ew.neg(ys[1][m]) if ys[1][m] is not None else None,
                          sub(ys[0][m], r(ys[1], m))]


def _y_rhs(u, x):        # Y0' = -Y1, Y1' = Y0 - Y1/x
    r = []

    def rhs(ys, m):
        acc = sub(ys[1][m], total(mul(r[j], u[m - j]) for j in range(m)))
        r.append(None if acc is None else ew.div(acc, x))
        return [None if ys[1][m] is None else ew.neg(ys[1][m]), sub(ys[0][m], r[m])]
    return rhs


def _ie_rhs(u, x):       # i0e' = i1e - s i0e, i1e' = i0e - s i1e - i1e/x, s = sign(x)
    r = _over_x(u, x, 0.5)
    sgn = bind(ew.sign_p, x)
    return lambda ys, m: [sub(ys[1][m], mul(sgn, ys[0][m])),
                          sub(sub(ys[0][m], mul(sgn, ys[1][m])), r(ys[1], m))]


# --------------------------------------------------------------------------- structured


def _select_in(x, axes):
    """x reshaped as (kept..., n) with the reduced axes last."""
    keep = _keep_dims(x.shape, axes)
    kept = [x.shape[i] for i in keep]
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    return reshape(transpose(x, keep + tuple(axes)), kept + [n]), len(kept)


def _reduce_prod(x, *, axes):
    # a log-depth scan of products, then its last element: O(K^2 log n) for the series
    v, last = _select_in(x, axes)
    n = v.shape[last]
    if n == 0:
        return bind(P["reduce_prod"], x, axes=axes)
    scanned = _prefix_scan(ew.mul, v, last, False)
    start = [0] * v.ndim
    start[last] = n - 1
    return reshape(slice_p_bind(scanned, start, v.shape), [v.shape[i] for i in range(last)])


def _scatter_mul_rule(primals, series, *, indexer, mode):
    x, u, *idx = primals
    sx, su = series[0], series[1]
    kw = dict(indexer=indexer, mode=mode)
    out = bind(P["scatter_mul"], x, u, *idx, **kw)
    K = order_of(series)
    if su is None:      # linear in the operand
        return out, [None if t is None else bind(P["scatter_mul"], t, u, *idx, **kw) for t in sx]
    # x * Q, Q = the product of the updates at each position (its JVP rule calls
    # scatter_mul once: a polynomial jet_from_jvp)
    ones = np.ones(get_aval(x).shape, get_aval(x).dtype)
    (q,), (sq,) = jet_from_jvp(
        lambda p, t: [[a] for a in jvp_rules[P["scatter_mul"]](p, t, **kw)],
        [ones, u, *idx], [None, su] + [None] * len(idx))
    a, b = full(x, sx, K), full(q, sq, K)
    return out, [conv(a, b, k) for k in range(1, K + 1)]


def _triangular_solve_rule(primals, series, **params):
    """``op(A) X = B``: ``X_k = op(A0)^-1 (B_k - sum_{j>=1} op(A_j) X_{k-j})``."""
    (a, b), (sa, sb) = primals, series
    K = order_of(series)
    tri = P["triangular_solve"]
    x = bind(tri, a, b, **params)
    A, B = full(a, sa, K), full(b, sb, K)
    lower, unit = params["lower"], params["unit_diagonal"]
    X = [x] + [None] * K
    for k in range(1, K + 1):
        rhs = B[k]
        for j in range(1, k + 1):
            if A[j] is None or X[k - j] is None:
                continue
            da = _tri(A[j], (-1 if lower else 1) if unit else 0, lower)
            op = _mT(da) if params["transpose_a"] else da
            rhs = sub(rhs, _mm(op, X[k - j]) if params["left_side"] else _mm(X[k - j], op))
        X[k] = None if rhs is None else bind(tri, a, rhs, **params)
    return x, X[1:]


# --------------------------------------------------------------------------- sub-programs


def _terms(primals, series, mask, K):
    return [t for p, s, m in zip(primals, series, mask) if m for t in dense(p, s, K)]


def _call_series(outs, n_out, K):
    primals, terms = split_series_outputs(outs, n_out, K)
    return primals, [_nonzero(t) if is_float(p) else None for p, t in zip(primals, terms)]


def _jit_rule(primals, series, *, jaxpr, name):
    K = order_of(series)
    mask = [s is not None and is_float(p) for p, s in zip(primals, series)]
    jj, consts = jet_jaxpr(jaxpr, K, mask)
    outs = bind(jit_p, *consts, *primals, *_terms(primals, series, mask, K), jaxpr=jj,
                name=f"jet({name})")
    return _call_series(outs, len(jaxpr.outvars), K)


def _remat_rule(primals, series, *, jaxpr):
    K = order_of(series)
    mask = [s is not None and is_float(p) for p, s in zip(primals, series)]
    jj, consts = jet_jaxpr(jaxpr, K, mask)
    outs = bind(remat_p, *consts, *primals, *_terms(primals, series, mask, K), jaxpr=jj)
    return _call_series(outs, len(jaxpr.outvars), K)


def _cond_rule(primals, series, *, branches):
    index, *ops = primals
    s_ops = series[1:]
    K = order_of(series)
    mask = [s is not None and is_float(o) for o, s in zip(ops, s_ops)]
    outs = cond_from_programs(index, [jet_jaxpr(b, K, mask) for b in branches],
                              list(ops) + _terms(ops, s_ops, mask, K), "jet_cond")
    return _call_series(outs, len(branches[0].outvars), K)


def _scan_rule(primals, series, *, jaxpr, length, reverse, num_consts, num_carry, unroll=1):
    K = order_of(series)
    nc, nk = num_consts, num_carry
    consts, init, xs = primals[:nc], primals[nc:nc + nk], primals[nc + nk:]
    s_c, s_k, s_x = series[:nc], series[nc:nc + nk], series[nc + nk:]
    m_c = [s is not None and is_float(c) for c, s in zip(consts, s_c)]
    fc = [is_float(c) for c in init]           # every float carry carries a series
    m_x = [s is not None and is_float(x) for x, s in zip(xs, s_x)]
    jj, jconsts = jet_jaxpr(jaxpr, K, m_c + fc + m_x)
    c_terms, k_terms = _terms(consts, s_c, m_c, K), _terms(init, s_k, fc, K)
    x_terms = _terms(xs, s_x, m_x, K)
    n_out, ny = len(jaxpr.outvars), len(jaxpr.outvars) - nk
    fy = [a.dtype.kind in "fc" for a in jaxpr.out_avals[nk:]]
    n_j = len(jconsts)

    def body(cs, carry, x):
        outs = eval_jaxpr(jj, [], *cs[:n_j], *cs[n_j:n_j + nc], *carry[:nk], *x[:len(xs)],
                          *cs[n_j + nc:], *carry[nk:], *x[len(xs):])
        prim, terms = split_series_outputs(outs, n_out, K)
        new_carry = list(prim[:nk]) + [t for ts, f in zip(terms[:nk], fc) if f for t in ts]
        ys = list(prim[nk:]) + [t for ts, f in zip(terms[nk:], fy) if f for t in ts]
        return new_carry, ys

    final, ys = scan_from_fn(body, list(jconsts) + list(consts) + c_terms,
                             list(init) + k_terms, list(xs) + x_terms, length, reverse,
                             "jet_scan", unroll)
    kt, yt = iter(final[nk:]), iter(ys[ny:])
    s_carry = [_nonzero([next(kt) for _ in range(K)]) if f else None for f in fc]
    s_ys = [_nonzero([next(yt) for _ in range(K)]) if f else None for f in fy]
    return list(final[:nk]) + list(ys[:ny]), s_carry + s_ys


def _while_rule(primals, series, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
                checkpoint_every):
    K = order_of(series)
    n_cc, n_bc = cond_nconsts, body_nconsts
    cc, bc, init = primals[:n_cc], primals[n_cc:n_cc + n_bc], primals[n_cc + n_bc:]
    s_bc, s_k = series[n_cc:n_cc + n_bc], series[n_cc + n_bc:]
    m_bc = [s is not None and is_float(c) for c, s in zip(bc, s_bc)]
    fc = [is_float(c) for c in init]
    n = len(init)
    jj, jconsts = jet_jaxpr(body_jaxpr, K, m_bc + fc)
    bc_terms = _terms(bc, s_bc, m_bc, K)

    def cond(carry):
        return eval_jaxpr(cond_jaxpr, [], *cc, *carry[:n])[0]

    def body(carry):
        outs = eval_jaxpr(jj, [], *jconsts, *bc, *carry[:n], *bc_terms, *carry[n:])
        prim, terms = split_series_outputs(outs, n, K)
        return list(prim) + [t for ts, f in zip(terms, fc) if f for t in ts]

    outs = while_from_fns(cond, body, list(init) + _terms(init, s_k, fc, K), "jet_while",
                          checkpoint_every)
    it = iter(outs[n:])
    return list(outs[:n]), [_nonzero([next(it) for _ in range(K)]) if f else None for f in fc]


def _custom_jvp_call_rule(primals, series, *, call_jaxpr, jvp, num_consts):
    def jvp_fn(ps, ts):
        return jvp(list(ps[num_consts:]), [instantiate(t) for t in ts[num_consts:]])
    return jet_from_jvp(jvp_fn, primals, series)


def _custom_vjp_call_rule(primals, series, *, call_jaxpr, fwd, bwd, num_consts):
    # forward mode knows a custom_vjp function only through its primal program
    return jet_flat(lambda *a: eval_jaxpr(call_jaxpr, [], *a), primals, series,
                    order_of(series))


def _debug_callback_rule(primals, series, **params):
    return bind(P["debug_callback"], *primals, **params), []


# --------------------------------------------------------------------------- the table

_ZERO = ("floor_divide", "sign", "floor", "ceil", "round", "eq", "ne", "lt", "le", "gt", "ge",
         "and", "or", "xor", "not", "shift_left", "shift_right", "is_finite", "isnan",
         "argmax", "argmin", "iota", "stop_gradient", "argsort", "bitcast_convert_type",
         "threefry2x32", "axis_index")
_LINEAR = ("add", "sub", "neg", "real", "imag", "conj", "complex", "convert_element_type",
           "broadcast_in_dim", "reshape", "transpose", "squeeze", "concatenate", "pad",
           "slice", "rev", "dynamic_slice", "dynamic_update_slice", "gather", "scatter",
           "scatter_add", "select_n", "reduce_sum", "cumsum", "window_patches",
           "window_patches_add", "fft", "psum", "all_gather")
_PIECEWISE_LINEAR = ("max", "min", "clamp", "rem", "sort", "reduce_max", "reduce_min",
                     "cummax", "cummin", "scatter_min", "scatter_max")
_FROM_JVP = ("cholesky", "lu", "qr", "eigh", "svd", "eig", "while_lin", "while_transpose")

for _name in _ZERO:
    jet_rules[P[_name]] = _zero(P[_name])
for _name in _LINEAR:
    jet_rules[P[_name]] = _linear(P[_name])
for _name in _PIECEWISE_LINEAR:
    jet_rules[P[_name]] = _piecewise_linear(P[_name])
for _name in _FROM_JVP:
    jet_rules[P[_name]] = _from_jvp(P[_name])
for _name in ("mul", "dot_general"):
    jet_rules[P[_name]] = _bilinear(P[_name])


def _abs_rule(primals, series):
    (x,) = primals
    if get_aval(x).dtype.kind != "c":
        return _piecewise_linear(P["abs"])(primals, series)
    return _with_own_primal(P["abs"], _composed(
        lambda z: ew.sqrt(ew.add(ew.mul(ew.real(z), ew.real(z)),
                                 ew.mul(ew.imag(z), ew.imag(z))))))(primals, series)


_UNARY = {
    "exp": _exp, "exp2": _exp2, "expm1": _expm1, "log": _log, "log1p": _log1p,
    "sqrt": _sqrt, "rsqrt": _const_power(P["rsqrt"], -0.5), "cbrt": _const_power(P["cbrt"], 1 / 3),
    "sin": _sin_cos(0, -1.0, (P["sin"], P["cos"])), "cos": _sin_cos(1, -1.0, (P["sin"], P["cos"])),
    "sinh": _sin_cos(0, 1.0, (P["sinh"], P["cosh"])),
    "cosh": _sin_cos(1, 1.0, (P["sinh"], P["cosh"])),
    "tan": _quadratic_ode(P["tan"], 1.0, 0.0, 1.0), "tanh": _quadratic_ode(P["tanh"], 1.0, 0.0, -1.0),
    "logistic": _quadratic_ode(P["logistic"], 0.0, 1.0, -1.0), "erf_inv": _erf_inv,
}
for _name, _fn in _UNARY.items():
    jet_rules[P[_name]] = _unary(_fn)

_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _one_minus_sq(x):
    return ew.sub(_c(x, 1.0), ew.mul(x, x))


def _acosh_partial(x):
    one = _c(x, 1.0)
    if get_aval(x).dtype.kind == "c":
        return ew.div(one, ew.mul(ew.sqrt(ew.sub(x, one)), ew.sqrt(ew.add(x, one))))
    return ew.rsqrt(ew.mul(ew.sub(x, one), ew.add(x, one)))


def _atan2_partial(first):
    def fn(y, x):
        den = ew.add(ew.mul(x, x), ew.mul(y, y))
        return ew.div(x, den) if first else ew.neg(ew.div(y, den))
    return fn


_DERIV = {
    "asin": (lambda x: ew.rsqrt(_one_minus_sq(x)),),
    "acos": (lambda x: ew.neg(ew.rsqrt(_one_minus_sq(x))),),
    "atan": (lambda x: ew.div(_c(x, 1.0), ew.add(_c(x, 1.0), ew.mul(x, x))),),
    "asinh": (lambda x: ew.rsqrt(ew.add(ew.mul(x, x), _c(x, 1.0))),),
    "acosh": (_acosh_partial,),
    "atanh": (lambda x: ew.div(_c(x, 1.0), _one_minus_sq(x)),),
    "erf": (lambda x: ew.mul(_c(x, _SQRT_PI), ew.exp(ew.neg(ew.mul(x, x)))),),
    "erfc": (lambda x: ew.mul(_c(x, -_SQRT_PI), ew.exp(ew.neg(ew.mul(x, x)))),),
    "lgamma": (ew.digamma,),
    "digamma": (lambda x: ew.polygamma(1, x),),
    "polygamma": (lambda x, *, m: ew.polygamma(m + 1, x),),
    "atan2": (_atan2_partial(True), _atan2_partial(False)),
    "expi": (lambda x: ew.div(ew.exp(x), x),),
    "igamma": (sp.igamma_grad_a, sp._igamma_dx),
    "igammac": (lambda a, x: ew.neg(sp.igamma_grad_a(a, x)),
                lambda a, x: ew.neg(sp._igamma_dx(a, x))),
    "igamma_grad_a": (None, lambda a, x: ew.mul(sp._igamma_dx(a, x),
                                                ew.sub(ew.log(x), ew.digamma(a)))),
    "regularized_incomplete_beta": (None, None, lambda a, b, x: sp._betainc_dx(
        _c(x, 1.0), None, a, b, x)),
    "zeta": (None, lambda s, q: ew.neg(ew.mul(s, sp.zeta(ew.add(s, _c(s, 1.0)), q)))),
    "expn": (None, lambda n, x: sp._expn_dx(_c(x, 1.0), None, n, x)),
}
for _name, _partials in _DERIV.items():
    jet_rules[P[_name]] = _deriv(P[_name], *_partials)
jet_rules[P["bessel_jv"]] = _with_derivs(P["bessel_jv"], 1, _bessel_derivs(sp.bessel_jv, False))
jet_rules[P["bessel_iv"]] = _with_derivs(P["bessel_iv"], 1, _bessel_derivs(sp.bessel_iv, True))
jet_rules[P["sph_legendre"]] = _with_derivs(P["sph_legendre"], 2, _sph_legendre_derivs)
jet_rules[P["bessel_j0"]] = _pair(P["bessel_j0"], 0, (sp.bessel_j0, sp.bessel_j1), _j_rhs)
jet_rules[P["bessel_j1"]] = _pair(P["bessel_j1"], 1, (sp.bessel_j0, sp.bessel_j1), _j_rhs)
jet_rules[P["bessel_y0"]] = _pair(P["bessel_y0"], 0, (sp.bessel_y0, sp.bessel_y1), _y_rhs)
jet_rules[P["bessel_y1"]] = _pair(P["bessel_y1"], 1, (sp.bessel_y0, sp.bessel_y1), _y_rhs)
jet_rules[P["bessel_i0e"]] = _pair(P["bessel_i0e"], 0, (sp.bessel_i0e, sp.bessel_i1e), _ie_rhs)
jet_rules[P["bessel_i1e"]] = _pair(P["bessel_i1e"], 1, (sp.bessel_i0e, sp.bessel_i1e), _ie_rhs)

jet_rules[P["abs"]] = _abs_rule
jet_rules[P["div"]] = _div_rule
jet_rules[P["pow"]] = _pow_rule
jet_rules[P["integer_pow"]] = _integer_pow_rule
jet_rules[P["reduce_prod"]] = _with_own_primal(P["reduce_prod"], _composed(_reduce_prod))
jet_rules[P["cumprod"]] = _with_own_primal(P["cumprod"], _composed(
    lambda x, *, axis, reverse: _prefix_scan(ew.mul, x, axis, reverse)))
jet_rules[P["scatter_mul"]] = _scatter_mul_rule
jet_rules[P["triangular_solve"]] = _triangular_solve_rule
jet_rules[jit_p] = _jit_rule
jet_rules[remat_p] = _remat_rule
jet_rules[remat_jvp_p] = lambda primals, series, *, jaxpr: jet_flat(
    lambda *a: _remat_jvp_fn(jaxpr, a), primals, series, order_of(series))
jet_rules[cond_p] = _cond_rule
jet_rules[scan_p] = _scan_rule
jet_rules[while_p] = _while_rule
jet_rules[P["custom_jvp_call"]] = _custom_jvp_call_rule
jet_rules[P["custom_vjp_call"]] = _custom_vjp_call_rule
jet_rules[P["debug_callback"]] = _debug_callback_rule

for _name in ("pmax", "pmin"):
    P[_name].unsupported["jet"] = P[_name].unsupported["jvp"]
P["function_call"].unsupported["jet"] = (
    "a zerax.Function is differentiated through its backward only, which says nothing "
    "about its higher derivatives; write it with zerax operations (or as a custom_jvp)")
custom_lin_p.unsupported["jet"] = custom_lin_p.unsupported["lower_numba"]
