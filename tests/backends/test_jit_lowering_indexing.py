"""Lowerings of the indexing primitives (gather, the scatters) and of sort/argsort:
``zerax.jit(f)`` must give eager ``f``'s values, dtypes and shapes.

Index arrays are jit arguments, so inside the compiled program they are traced values:
negative entries wrap, and out-of-bounds ones are clamped (gathers), give the fill value
(``mode="fill"``) or are dropped (scatters).  Eager ``f`` with concrete out-of-bounds
indices raises IndexError like NumPy, so the reference for those is the traced program
evaluated by the primitives' NumPy implementations (`eval_jaxpr`); with in-bounds
indices the compiled result is also compared with eager ``f`` itself.

Each test compiles one program holding many equations, and
hypothesis varies only values, never shapes or dtypes (later examples reuse the program).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
import zerax.numpy as znp
from zerax import lax
from zerax._src.ir.ir import eval_jaxpr

# every test runs once per backend (the backend fixture, tests/conftest.py)
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.usefixtures("backend")]

SETTINGS = settings(max_examples=10, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def elements(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return st.booleans()
    if dtype.kind in "iu":
        return st.integers(-3, 3)  # small: many ties and repeated values
    # Few distinct values (ties), signed zeros, infinities and NaNs.
    return st.sampled_from([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.0, -1.0, 2.5, 0.5, -2.0])


def values(dtype, shape):
    return hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype))


def indices(shape, lo, hi, dtype=np.int64):
    return hnp.arrays(np.dtype(dtype), shape, elements=st.integers(lo, hi))


def assert_same(jitted, expected):
    jl, el = zx.tree_util.tree_leaves(jitted), zx.tree_util.tree_leaves(expected)
    assert len(jl) == len(el)
    for k, (j, e) in enumerate(zip(jl, el)):
        j, e = np.asarray(j), np.asarray(e)
        assert j.dtype == e.dtype, (k, j.dtype, e.dtype)
        assert j.shape == e.shape, (k, j.shape, e.shape)
        if e.dtype.kind in "fc":
            tol = 1e-12 if e.dtype.itemsize >= 8 else 1e-6
            np.testing.assert_allclose(j, e, rtol=tol, atol=tol, err_msg=f"output {k}")
        else:
            np.testing.assert_array_equal(j, e, err_msg=f"output {k}")


def traced_reference(f, *args):
    """``f`` traced with every argument abstract, evaluated by the NumPy impls."""
    closed = zx.make_jaxpr(f)(*args)
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def eager(f, *args):
    return f(*[zx.Array(np.asarray(a)) for a in args])


def check(f, args, in_bounds):
    out = zx.jit(f)(*args)
    assert_same(out, traced_reference(f, *args))
    if in_bounds:
        assert_same(out, eager(f, *args))
    return out


def prims_of(f, *args):
    return str(zx.make_jaxpr(f)(*args))


# --------------------------------------------------------------------------- gather

XS = (4, 5, 6)
OTHER = [np.float32, np.int32, np.bool_]  # besides float64: a few gathers/scatters each


def getitem_program(x, i, j, k, s, ta, *others):
    """Basic, advanced and mixed indexing by traced index arrays of several dtypes."""
    out = [
        x[:, i], x[:, j, i], x[j, 1:4, i], x[None, i, ::-2, -1], x[s, i],
        x[k, j], x[[0, 2, -1], :, i], x[np.array([True, False, True, True]), 1:3],
        znp.take_along_axis(x, ta, axis=1),
        x.at[i].get(mode="fill", fill_value=-1),
        x.at[s, 2, i[0]].get(mode="fill"),  # 0-d traced indices: a 0-d result
        x.at[:, i, 7].get(mode="fill"),     # a static out-of-bounds int: all fill values
        x.at[:, i, 7].get(mode="clip"),     # ... clamped
    ]
    for y in others:  # (4, 5) arrays of the other dtypes: their fill values
        out.append(y.at[i].get(mode="fill"))
    return out


@SETTINGS
@given(data=st.data())
def test_getitem(data):
    inb = data.draw(st.booleans(), "in_bounds")
    lo, hi = (-4, 3) if inb else (-9, 9)
    x = data.draw(values(np.float64, XS), "x")
    i = data.draw(indices((3,), lo, hi), "i")
    j = data.draw(indices((2, 1), lo, hi, np.int32), "j")
    k = data.draw(indices((3,), 0, hi, np.uint8), "k")
    s = data.draw(indices((), lo, hi), "s")
    ta = data.draw(indices((4, 2, 6), -5 if inb else -8, 4 if inb else 8), "ta")
    others = [data.draw(values(d, (4, 5)), np.dtype(d).name) for d in OTHER]
    check(getitem_program, (x, i, j, k, s, ta, *others), inb)


def test_getitem_clamps_like_numpy():
    """Independent of the impl: traced indices wrap, then clamp (or fill)."""
    x = np.arange(24.0).reshape(4, 6)
    i = np.array([-1, -6, -9, 0, 5, 6, 40])

    def f(x, i):
        return x[:, i], x.at[:, i].get(mode="fill", fill_value=-1.0), x[i % 4, i]

    a, b, c = zx.jit(f)(x, i)
    w = np.where(i < 0, i + 6, i)
    np.testing.assert_array_equal(a, x[:, np.clip(w, 0, 5)])
    np.testing.assert_array_equal(b, np.where((w >= 0) & (w < 6), x[:, np.clip(w, 0, 5)], -1.0))
    np.testing.assert_array_equal(c, x[i % 4, np.clip(w, 0, 5)])


def edge_program(x, i, s):
    x0 = x[s, 2]  # a 0-d value (held as a scalar by the compiled code)
    e = x[:, :0]
    return [
        e.at[:, i].get(mode="fill"),   # indexing an axis of size 0: fill values
        e.at[:, i].get(mode="clip"),   # ... zeros
        x[i[:0]],                      # an empty result
        x0.at[None].get(mode="clip"),  # a gather of a 0-d operand
        x0.at[()].add(1.5),            # a scatter into a 0-d operand with a 0-d update
        x.at[:, 9].set(1.0, mode="drop"), x.at[:, 9].set(1.0, mode="clip"),
        e.at[:, i].add(1.0),
    ]


@SETTINGS
@given(x=values(np.float64, (3, 5)), i=indices((4,), -8, 8), s=indices((), -4, 4))
def test_gather_scatter_edge_cases(x, i, s):
    out = zx.jit(edge_program)(x, i, s)
    assert_same(out, traced_reference(edge_program, x, i, s))


def test_large_gather_runs_in_parallel():
    x = np.arange(400 * 300, dtype=np.float64).reshape(400, 300)
    i = np.arange(400)[::-1] - 200

    def f(x, i):
        return x[i]

    text = zx.jit(f).lower(x, i).as_text()
    assert "parallel for" in text
    assert_same(zx.jit(f)(x, i), eager(f, x, np.where(i < 0, i + 400, i)))


# --------------------------------------------------------------------------- scatter

SX = (5, 4)


def scatter_program(x, i, j, s, u1, u2, u3, v, y32, yi, yb):
    w = u1[:, 0]
    out = [
        x.at[i].set(u1), x.at[i].add(u1), x.at[i].multiply(u1), x.at[i].min(u1),
        x.at[i].max(u1),
        x.at[:, j].add(u2), x.at[i, j[0]].min(w), x.at[i, 1].set(v), x.at[s, 2].max(v),
        x.at[i].add(u1, mode="clip"), x.at[i[:, None], j[None, :]].set(u3),
        x.at[np.array([True, False, True, False, True])].multiply(u1[:3]),
    ]
    # The other dtypes (their own accumulation code: for bool, add is `or`, min is `and`);
    # the updates are the operand's rows reversed.
    out += [y32.at[i].add(y32[::-1]), yi.at[i].add(yi[::-1]), yi.at[i].min(yi[::-1]),
            yb.at[i].add(yb[::-1]), yb.at[i].min(yb[::-1])]
    return out


@SETTINGS
@given(data=st.data())
def test_scatter(data):
    inb = data.draw(st.booleans(), "in_bounds")
    lo, hi = (-4, 3) if inb else (-7, 7)
    x = data.draw(values(np.float64, SX), "x")
    i = data.draw(indices((6,), lo, hi), "i")  # 6 indices into 5 rows: always repeats
    j = data.draw(indices((3,), lo, hi, np.int32), "j")
    s = data.draw(indices((), lo, hi), "s")
    u1 = data.draw(values(np.float64, (6, 4)), "u1")
    u2 = data.draw(values(np.float64, (5, 3)), "u2")
    u3 = data.draw(values(np.float64, (6, 3)), "u3")
    v = data.draw(values(np.float64, ()), "v")
    others = [data.draw(values(d, (6, 4)), np.dtype(d).name) for d in OTHER]
    check(scatter_program, (x, i, j, s, u1, u2, u3, v, *others), inb)


def test_scatter_accumulates_like_numpy():
    """Independent of the impl: repeated indices accumulate, the last set wins,
    out-of-bounds updates are dropped (after wrapping negative indices)."""
    x = np.zeros(4)
    i = np.array([1, 1, -1, 3, 7, -5, 1])
    u = np.arange(1.0, 8.0)

    def f(x, i, u):
        return x.at[i].add(u), x.at[i].set(u), x.at[i].max(u), x.at[i].add(u, mode="clip")

    add, set_, mx, clip = zx.jit(f)(x, i, u)
    keep = (i >= -4) & (i < 4)
    pos = np.where(i < 0, i + 4, i)
    ref = np.zeros(4)
    np.add.at(ref, pos[keep], u[keep])
    np.testing.assert_array_equal(add, ref)
    np.testing.assert_array_equal(set_, [0.0, 7.0, 0.0, 4.0])
    np.testing.assert_array_equal(mx, [0.0, 7.0, 0.0, 4.0])
    ref = np.zeros(4)
    np.add.at(ref, np.clip(pos, 0, 3), u)
    np.testing.assert_array_equal(clip, ref)


# --------------------------------------------------------------------------- sort


def sort_program(x, y, z32, zi, zb):
    return [znp.sort(x, axis=-1), znp.sort(x, axis=0), znp.argsort(x, axis=-1),
            znp.argsort(x, axis=0), znp.argsort(y),
            znp.sort(z32, axis=0), znp.argsort(zi, axis=-1), znp.argsort(zb, axis=0)]


def sort_reference(x, y, z32, zi, zb):
    return [np.sort(x, -1, kind="stable"), np.sort(x, 0, kind="stable"),
            np.argsort(x, -1, kind="stable"), np.argsort(x, 0, kind="stable"),
            np.argsort(y, kind="stable"),
            np.sort(z32, 0, kind="stable"), np.argsort(zi, -1, kind="stable"),
            np.argsort(zb, 0, kind="stable")]


@SETTINGS
@given(data=st.data())
def test_sort_argsort(data):
    # Lanes longer than the insertion-sorted runs (16) exercise the merges.
    x = data.draw(values(np.float64, (3, 37)), "x")
    y = data.draw(values(np.float64, (70,)), "y")
    others = [data.draw(values(d, (3, 37)), np.dtype(d).name) for d in OTHER]
    args = (x, y, *others)
    out = check(sort_program, args, True)
    for k, (a, b) in enumerate(zip(out, sort_reference(*args))):
        a = np.asarray(a)
        np.testing.assert_array_equal(a, b, err_msg=f"output {k}")
        if a.dtype.kind == "f":  # stability also orders -0.0 and 0.0 as given
            np.testing.assert_array_equal(np.signbit(a), np.signbit(b), err_msg=f"output {k}")
    assert all(np.asarray(out[k]).dtype == np.int64 for k in (2, 3, 4, 6, 7))


@SETTINGS
@given(data=st.data())
def test_complex(data):
    parts = st.sampled_from([np.nan, 0.0, 1.0, -1.0])
    cx = st.builds(complex, parts, parts)
    x = data.draw(hnp.arrays(np.complex128, (2, 20), elements=cx), "x")
    u = data.draw(hnp.arrays(np.complex128, (4,), elements=cx), "u")
    i = data.draw(indices((4,), -2, 1), "i")

    def f(x, u, i):
        return [znp.sort(x), znp.argsort(x, axis=-1), x.at[0, i].min(u), x.at[1, i].max(u)]

    out = check(f, (x, u, i), True)
    np.testing.assert_array_equal(out[0], np.sort(x, kind="stable"))
    np.testing.assert_array_equal(out[1], np.argsort(x, kind="stable"))


# --------------------------------------------------------------------------- transforms


def grad_loss(x, u, i):
    w = np.linspace(-1.0, 1.0, 4)
    g = x[i]                                   # gather (transposes to scatter_add)
    h = x.at[:, i[:2]].get(mode="fill", fill_value=0.0)
    s1 = x.at[i].add(u)
    s2 = x.at[i].set(u)                        # (its transpose uses scatter and gather)
    srt = znp.sort(x, axis=0)                  # (its derivative is a gather by argsort)
    return (znp.sum(znp.sin(g) * w) + znp.sum(h ** 2) + znp.sum(s1 ** 2) +
            znp.sum(s2 * w) + znp.sum(srt[-1] * w))


@SETTINGS
@given(x=hnp.arrays(np.float64, (3, 4), elements=st.sampled_from([0.5, -1.0, 2.0, 0.0, 1.5])),
       u=hnp.arrays(np.float64, (5, 4), elements=st.sampled_from([0.5, -1.0, 2.0, 0.0, 3.0])),
       i=indices((5,), -3, 2))
def test_jit_of_grad(x, u, i):
    g = zx.grad(grad_loss, argnums=(0, 1))
    text = prims_of(g, x, u, i)
    for name in ("gather[", "scatter_add[", "scatter[", "argsort["):
        assert name in text, name
    assert_same(zx.jit(g)(x, u, i), eager(g, x, u, i))


def test_jit_of_vmap():
    xs = np.arange(60.0).reshape(3, 4, 5)
    ids = np.array([[0, -1, 3], [2, 2, 9], [-7, 1, 0]])
    us = np.arange(27.0).reshape(3, 3, 3)

    def f(x, i, u):
        return x[:, i], x.at[i].get(mode="fill"), x.at[:3, i[:2]].add(u[:, :2])

    fb = zx.vmap(f)
    assert_same(zx.jit(fb)(xs, ids, us), traced_reference(fb, xs, ids, us))


def test_indices_carried_by_a_loop():
    """0-d indices held as scalars (a loop counter, a value read in the loop body)."""
    x = np.arange(12.0).reshape(6, 2)
    idx = np.array([0, 3, 3, -1, 7, 1])

    def f(x, idx):
        def body(k, acc):
            row = x.at[k].get(mode="fill", fill_value=0.0)
            return acc.at[idx[k]].add(row * 2.0)
        out = lax.fori_loop(0, 6, body, znp.zeros((4, 2)))
        return out, znp.sort(out, axis=0)

    out = zx.jit(f)(x, idx)
    assert_same(out, traced_reference(f, x, idx))
    ref = np.zeros((4, 2))
    np.add.at(ref, [0, 3, 3, 3, 1], 2.0 * x[[0, 1, 2, 3, 5]])  # index 7 is dropped
    np.testing.assert_array_equal(out[0], ref)
