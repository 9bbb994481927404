"""Shared helpers of the Taylor-mode tests: the independent reference, nested jvp.

``nested_jvp_series(f, primals, series, K)`` is ``[g(0), g'(0), .., g^(K)(0)]`` for
``g(t) = f(x(t))`` on the path ``x(t) = x0 + sum_k x_k t^k / k!`` (jet's convention),
each derivative by one more forward-mode JVP in the scalar ``t``: K nested
differentiations, exponential in K, independent of the Taylor rules under test."""

import math

import numpy as np

import zerax as zx


def _path(x0, terms, t):
    x = x0
    for k, xk in enumerate(terms, 1):
        x = x + xk * (t ** k) / math.factorial(k)
    return x


def nested_jvp_series(f, primals, series, K):
    def g(t):
        return f(*[_path(p, s, t) for p, s in zip(primals, series)])

    def all_orders(k):
        if k == 0:
            return lambda t: [g(t)]
        lower = all_orders(k - 1)

        def both(t):
            vals, tans = zx.jvp(lower, (t,), (np.ones((), np.float64),))
            return list(vals) + [tans[-1]]
        return both

    return [np.asarray(v) for v in all_orders(K)(np.zeros((), np.float64))]


def jet_series(f, primals, series):
    y, ys = zx.jet(f, primals, series)
    return [np.asarray(y)] + [np.asarray(t) for t in ys]


def assert_jet_matches_nested_jvp(f, primals, series, rtol=1e-7, atol=1e-9):
    K = len(series[0])
    got = jet_series(f, primals, series)
    want = nested_jvp_series(f, primals, series, K)
    assert len(got) == len(want) == K + 1
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"order {k}")
