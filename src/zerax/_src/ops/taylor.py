"""The Taylor-mode (jet) rule of every primitive: the table ``jet_rules`` of
``interpreters/jet.py``, filled in here.

A rule maps the Taylor coefficients of a primitive's operands, ``u = [u0, u1, ..,
uK]`` with ``u(t) = sum_k u_k t^k`` (a coefficient known to be zero is ``None``), to its
output's, with zerax operations only, so jet composes with grad, vmap and jit, and
with itself.  The rules come in kinds:

- *zero*: piecewise-constant or integer outputs (comparisons, floor, argmax, ...);
- *linear*: the primitive applied to each coefficient (shape ops, sums, gathers, FFTs);
- *bilinear*: Leibniz's rule, ``v_k = sum_j op(a_j, b_{k-j})`` (mul, dot_general);
- *piecewise linear*: maps that are locally linear (max, sort, clamp, ...): each
  coefficient goes through the JVP rule, linear in the tangent at the primal's choices;
- *analytic*: elementwise math, by recurrences of O(K^2) operations
  (``ops/taylor_elementwise.py``);
- *composed*: the series of an equivalent composition of primitives (cumprod and
  reduce_prod as log-depth scans of products, scatter_mul);
- *from the JVP rule* (`jet_from_jvp`): ``y' = J(x) x'``, whose first K-1
  coefficients are a jet of order K-1 of the JVP rule: the decompositions, |z| of a
  complex z, custom_jvp
  functions (JAX's jet ignores their rule; zerax follows it, so jet agrees with nested
  jvp) and the internal loop primitives.  Polynomial in K where the JVP rule calls the
  primitive once (each order adds one jet of the order below);
- *sub-programs*: cond, scan, while, jit and checkpoint bind themselves again on the
  `jet_jaxpr` of their bodies: the series of a loop carry advances with the loop.

A custom_vjp function is seen through its primal function (its bwd says nothing of
forward derivatives).  Primitives with no Taylor rule say why in
``prim.unsupported["jet"]``.
"""

from __future__ import annotations

import numpy as np

from ..core.ad_util import Zero, instantiate
from ..core.core import all_primitives, bind, get_aval
from ..interpreters.ad import custom_lin_p, jvp_rules
from ..interpreters.jet import (install_custom_jvp, is_float, jet_flat, jet_jaxpr, jet_rules,
                                split_series_outputs)
from ..ir.ir import eval_jaxpr
from . import elementwise as ew
from .call import jit_p
from .cond import cond_from_programs, cond_p
from .custom_calls import _remat_jvp_fn, remat_jvp_p, remat_p
from .decompositions import _mm, _mT, _tri
from .reduce import _keep_dims, _prefix_scan
from .scan import scan_from_fn, scan_p
from .shape import reshape, transpose
from .slicing import slice_p_bind
from .taylor_elementwise import (ELEMENTWISE, conv, dense, full, nonzero, order_of, scale,
                                 shaped, sub, total, zeros_of)
from .while_loop import while_from_fns, while_p
from ..base.dtypes import kind as dtype_kind

P = all_primitives()

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
            args = [p if not f else zeros_of(p) if s is None or s[k] is None else s[k]
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
        return out, shaped(out, [total(op(a[j], b[k - j]) for j in range(k + 1))
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
    d_primal = [(s[0] if s[0] is not None else zeros_of(p)) if m else None
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
        res.append(nonzero([scale(1.0 / k, ([z0] + zs)[k - 1]) for k in range(1, K + 1)]))
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


def _gather_rule(primals, series, *, indexer, mode, fill_value):
    # linear in the operand; positions out of bounds ("fill") take 0 in the coefficients
    x, *idx = primals
    g = P["gather"]
    out = bind(g, x, *idx, indexer=indexer, mode=mode, fill_value=fill_value)
    fill = 0 if mode == "fill" else None
    return out, [None if t is None else bind(g, t, *idx, indexer=indexer, mode=mode,
                                             fill_value=fill) for t in series[0]]


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
    return primals, [nonzero(t) if is_float(p) else None for p, t in zip(primals, terms)]


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
    fy = [dtype_kind(a.dtype) in "fc" for a in jaxpr.out_avals[nk:]]
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
    s_carry = [nonzero([next(kt) for _ in range(K)]) if f else None for f in fc]
    s_ys = [nonzero([next(yt) for _ in range(K)]) if f else None for f in fy]
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
    return list(outs[:n]), [nonzero([next(it) for _ in range(K)]) if f else None for f in fc]


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


def _abs_rule(primals, series):
    # |z| of a complex z is not piecewise linear: from its JVP rule (which also gives
    # nested jvp's values at z = 0, where |z| is not smooth)
    kind = get_aval(primals[0]).dtype.kind
    return (_from_jvp if kind == "c" else _piecewise_linear)(P["abs"])(primals, series)


# --------------------------------------------------------------------------- the table

_ZERO = ("floor_divide", "sign", "floor", "ceil", "round", "eq", "ne", "lt", "le", "gt", "ge",
         "and", "or", "xor", "not", "shift_left", "shift_right", "is_finite", "isnan",
         "argmax", "argmin", "iota", "stop_gradient", "argsort", "bitcast_convert_type",
         "threefry2x32", "axis_index")
_LINEAR = ("add", "sub", "neg", "real", "imag", "conj", "complex", "convert_element_type",
           "broadcast_in_dim", "reshape", "transpose", "squeeze", "concatenate", "pad",
           "slice", "rev", "dynamic_slice", "dynamic_update_slice", "scatter",
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
for _name, _rule in ELEMENTWISE.items():
    jet_rules[P[_name]] = _rule
jet_rules[P["abs"]] = _abs_rule


jet_rules[P["reduce_prod"]] = _with_own_primal(P["reduce_prod"], _composed(_reduce_prod))
jet_rules[P["cumprod"]] = _with_own_primal(P["cumprod"], _composed(
    lambda x, *, axis, reverse: _prefix_scan(ew.mul, x, axis, reverse)))
jet_rules[P["scatter_mul"]] = _scatter_mul_rule
jet_rules[P["gather"]] = _gather_rule
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
custom_lin_p.unsupported["jet"] = custom_lin_p.unsupported["lower"]

# A primitive declared without a Taylor rule of its own (one added after this table was
# written) gets the rule from its JVP rule: exact, and polynomial in the order when that
# rule calls the primitive once; tests/interpreters/test_jet_primitives.py lists it until
# it is tested there.
for _prim in list(all_primitives().values()):
    if _prim not in jet_rules and "jet" not in _prim.unsupported and _prim in jvp_rules \
            and "jvp" not in _prim.unsupported:
        jet_rules[_prim] = _from_jvp(_prim)
