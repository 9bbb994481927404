"""Tests for indexing (x[idx], x.at[idx]), the gather/scatter/sort primitives and the
zerax.numpy indexing, searching, sorting and set functions.

NumPy is the reference for values, dtypes, shapes and errors; derivatives are checked with
zerax.test_util.check_grads when it exists, else with a local equivalent (forward mode
against central differences, reverse mode by <vjp(ct), t> = <ct, jvp(t)>, recursively).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax._src.interpreters.ad import jvp_rules, transpose_rules
from zerax._src.interpreters.batching import batch_rules
from zerax._src.numpy import index_tricks as T
from zerax._src.numpy import indexing_ops as I
from zerax._src.ops import indexing as ops_ix
from zerax._src.ops import sort as ops_sort

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FEW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def arr(x):
    return zx.Array(np.asarray(x))


def Z(x):
    """A zerax value (check_grads also calls functions on plain NumPy arrays)."""
    return x if hasattr(x, "at") else zx.Array(np.asarray(x))


def assert_same(got, want, exact=True):
    """Values, shape and dtype equal to NumPy's."""
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    assert got_np.dtype == want.dtype, (got_np.dtype, want.dtype)
    if exact:
        np.testing.assert_array_equal(got_np, want)
    else:
        np.testing.assert_allclose(got_np, want, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- derivatives


def _local_check_grads(f, args, order=2, modes=("fwd", "rev"), eps=1e-6, tol=1e-5):
    rng = np.random.default_rng(0)
    args = tuple(np.asarray(a, np.float64) for a in args)
    tangents = tuple(rng.standard_normal(a.shape) for a in args)

    def val(*a):
        return np.asarray(f(*a), np.float64)

    y, t = zx.jvp(f, args, tangents)
    if "fwd" in modes:
        plus = val(*[a + eps * d for a, d in zip(args, tangents)])
        minus = val(*[a - eps * d for a, d in zip(args, tangents)])
        np.testing.assert_allclose(np.asarray(t), (plus - minus) / (2 * eps), rtol=tol, atol=tol)
    ct = rng.standard_normal(np.shape(y))
    if "rev" in modes:
        _, f_vjp = zx.vjp(f, *args)
        cts = f_vjp(ct)
        lhs = sum(np.vdot(np.asarray(c), d) for c, d in zip(cts, tangents))
        np.testing.assert_allclose(lhs, np.vdot(ct, np.asarray(t)), rtol=tol, atol=tol)
    if order > 1:
        if "fwd" in modes:
            _local_check_grads(lambda *a: zx.jvp(f, a, tangents)[1], args, order - 1, modes)
        if "rev" in modes:
            for i in range(len(args)):
                _local_check_grads(lambda *a, i=i: zx.vjp(f, *a)[1](ct)[i], args, order - 1,
                                   modes)


def check_grads(f, args, order=2):
    real = getattr(zx.test_util, "check_grads", None)
    if real is not None:
        real(f, args, order=order, modes=("fwd", "rev"))
    else:
        _local_check_grads(f, args, order=order)


# --------------------------------------------------------------------------- index generation


@st.composite
def index_cases(draw, allow_masks=True, allow_oob=False, traced=False):
    """(shape, index items) where each item is a NumPy-valid index component (usually)."""
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0 if not traced else 1, 4), min_size=ndim,
                                max_size=ndim)))
    items = []
    axis = 0
    used_ellipsis = False
    n_items = draw(st.integers(0, ndim + 2))
    adv_shape = draw(st.sampled_from([(), (2,), (3,), (1, 2), (2, 1), (0,)]))
    for _ in range(n_items):
        kinds = ["none"]
        if axis < ndim:
            kinds += ["int", "slice", "slice", "array", "array"]
            if allow_masks:
                kinds += ["mask"]
        if not used_ellipsis:
            kinds.append("ellipsis")
        if allow_masks:
            kinds.append("bool0")
        kind = draw(st.sampled_from(kinds))
        if kind == "none":
            items.append(None)
        elif kind == "ellipsis":
            items.append(Ellipsis)
            used_ellipsis = True
            axis = max(axis, ndim - sum(1 for i in items if i is not None))  # rough
        elif kind == "bool0":
            items.append(draw(st.booleans()))
        elif kind == "int":
            n = shape[axis]
            if n == 0 and not allow_oob:
                items.append(slice(None))
            else:
                lo, hi = (-n - 2, n + 1) if allow_oob else (-n, n - 1)
                items.append(draw(st.integers(lo, hi)))
            axis += 1
        elif kind == "slice":
            n = shape[axis]
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, -2, -3])))
            items.append(slice(draw(bound), draw(bound), step))
            axis += 1
        elif kind == "array":
            n = shape[axis]
            if n == 0:
                items.append(np.zeros((0,), np.int64) if not traced else slice(None))
            else:
                lo, hi = (-n - 2, n + 1) if allow_oob else (-n, n - 1)
                shp = draw(st.sampled_from([adv_shape, adv_shape, (), (2,)]))
                if 0 in shp and traced:
                    shp = (2,)
                items.append(draw(hnp.arrays(np.int64, shp, elements=st.integers(lo, hi))))
            axis += 1
        else:  # mask
            k = draw(st.integers(1, ndim - axis))
            items.append(draw(hnp.arrays(np.bool_, shape[axis:axis + k])))
            axis += k
    return shape, tuple(items)


def _as_kind(item, kind):
    """Present an index array as NumPy array, list or zerax Array."""
    if not isinstance(item, np.ndarray):
        return item
    if kind == 1:
        return item.tolist()
    if kind == 2:
        return zx.Array(item)
    return item


# --------------------------------------------------------------------------- getitem vs NumPy


@SETTINGS
@given(index_cases(), st.integers(0, 2), st.data())
def test_getitem_matches_numpy(case, kind, data):
    shape, items = case
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) if shape else \
        np.array(7.0)
    idx = tuple(_as_kind(i, kind) for i in items)
    np_idx = items if kind == 2 else idx  # NumPy itself takes the lists
    if len(idx) == 1 and data.draw(st.booleans()):
        idx, np_idx = idx[0], np_idx[0]
    try:
        want = x[np_idx]
    except IndexError:
        with pytest.raises(IndexError):
            arr(x)[idx]
        return
    assert_same(arr(x)[idx], want)


@SETTINGS
@given(index_cases(allow_oob=True))
def test_getitem_out_of_bounds_static_raises_like_numpy(case):
    shape, items = case
    x = np.ones(shape)
    try:
        want = x[items]
    except IndexError:
        with pytest.raises(IndexError):
            arr(x)[items]
        return
    assert_same(arr(x)[items], want)


def _traced_index_fun(items):
    """f(x, *arrays) indexing x with the arrays (tracers) in place of the int arrays."""
    positions = [i for i, it in enumerate(items) if isinstance(it, np.ndarray)]

    def f(x, *arrays):
        idx = list(items)
        for p, a in zip(positions, arrays):
            idx[p] = a
        return x[tuple(idx)]

    return f, [items[p] for p in positions]


def _clip_items(shape, items):
    """NumPy's view of JAX's gather semantics: wrap negatives, then clamp."""
    out, axis = [], 0
    for it in items:
        if it is None or it is Ellipsis:
            out.append(it)
            if it is Ellipsis:
                axis += len(shape) - sum(1 for j in items if j is not None and j is not Ellipsis)
            continue
        if isinstance(it, np.ndarray):
            n = shape[axis]
            w = np.where(it < 0, it + n, it)
            out.append(np.clip(w, 0, n - 1))
        else:
            out.append(it)
        axis += 1
    return tuple(out)


@SETTINGS
@given(index_cases(allow_masks=False, traced=True), st.booleans())
def test_traced_integer_indices_match_numpy(case, oob):
    shape, items = case
    if not any(isinstance(i, np.ndarray) for i in items):
        return
    rng = np.random.default_rng(len(items))
    x = rng.standard_normal(shape)
    f, arrays = _traced_index_fun(items)
    if oob:  # push some indices out of bounds: JAX semantics clamp them
        arrays = [a * 3 for a in arrays]
        items2 = list(items)
        k = 0
        for i, it in enumerate(items2):
            if isinstance(it, np.ndarray):
                items2[i] = arrays[k]
                k += 1
        items = tuple(items2)
    try:
        want = x[_clip_items(shape, items)]
    except IndexError:
        return  # index arrays that do not broadcast: covered elsewhere
    closed = zx.make_jaxpr(f)(x, *arrays)
    (got,) = closed(x, *arrays)
    assert_same(got, want)


def test_traced_scalar_index_uses_dynamic_slice_and_wraps():
    x = np.arange(12.0).reshape(3, 4)
    f = lambda x, i: x[i, ::-1]  # noqa: E731
    closed = zx.make_jaxpr(f)(x, 1)
    names = [e.primitive.name for e in closed.eqns]
    assert "dynamic_slice" in names and "gather" not in names
    for i in (-3, -1, 0, 2):
        assert_same(closed(x, np.int64(i))[0], x[i, ::-1])
    assert_same(closed(x, np.int64(7))[0], x[2, ::-1])  # clamped
    g = zx.grad(lambda x, i: (x[i] ** 2).sum())
    assert_same(g(x, -1), np.where(np.arange(3)[:, None] == 2, 2 * x, 0.0))


def test_traced_index_array_is_a_gather():
    x = np.arange(10.0)
    closed = zx.make_jaxpr(lambda x, i: x[i])(x, np.array([1, -1]))
    assert [e.primitive.name for e in closed.eqns] == ["gather"]
    assert_same(closed(x, np.array([1, -1, 20, -30]))[0], np.array([1.0, 9.0, 9.0, 0.0]))


def test_list_of_tracers_as_index():
    x = np.arange(10.0)
    closed = zx.make_jaxpr(lambda x, i, j: x[[i, j]])(x, 1, 2)
    assert_same(closed(x, np.int64(3), np.int64(-1))[0], x[[3, -1]])


# --------------------------------------------------------------------------- errors


def test_traced_boolean_mask_raises():
    x = np.arange(5.0)
    with pytest.raises(errors.NonConcreteBooleanIndexError, match="where"):
        zx.make_jaxpr(lambda x: x[x > 2])(x)
    with pytest.raises(errors.NonConcreteBooleanIndexError):
        zx.make_jaxpr(lambda x: x.at[x > 2].get())(x)


def test_boolean_mask_under_grad_is_concrete():
    x = np.array([1.0, -2.0, 3.0])
    g = zx.grad(lambda x: (x[x > 0] ** 2).sum())(x)
    assert_same(g, np.array([2.0, 0.0, 6.0]))


def test_traced_mask_update_is_a_where():
    x = np.arange(6.0).reshape(2, 3)
    f = lambda x: x.at[x > 2].set(0.0)  # noqa: E731
    (got,) = zx.make_jaxpr(f)(x)(x)
    want = x.copy()
    want[want > 2] = 0.0
    assert_same(got, want)
    (got,) = zx.make_jaxpr(lambda x: x.at[x[:, 0] > 1].add(np.array([1.0, 2.0, 3.0])))(x)(x)
    want = x.copy()
    want[x[:, 0] > 1] += np.array([1.0, 2.0, 3.0])
    assert_same(got, want)


@pytest.mark.parametrize("idx,exc", [
    ((0, 0), IndexError), (1.5, IndexError), ("a", IndexError), ((Ellipsis, Ellipsis), IndexError),
    (np.array([1.0]), IndexError), (np.array([True, False]), IndexError), (5, IndexError),
    (([0, 1], [0, 1, 2]), IndexError), (slice(0, 2, 0), ValueError),
])
def test_index_errors(idx, exc):
    x = np.arange(3.0)
    with pytest.raises(exc):
        x[idx]
    with pytest.raises(exc):
        arr(x)[idx]


def test_traced_slice_bound_and_casting():
    x = np.arange(5.0)
    with pytest.raises(errors.ConcretizationError, match="dynamic_slice"):
        zx.make_jaxpr(lambda x, i: x[i:])(x, 1)
    assert_same(arr(np.arange(3)).at[1].set(2.7), np.array([0, 2, 2]))
    assert_same(arr(x)[np.int64(1)], x[1])
    assert_same(arr(x)[zx.Array(np.array(-1))], x[-1])
    assert_same(arr(x)[zx.Array(np.array([True, False, True, False, True]))], x[::2])


def test_immutable_error_points_to_at():
    with pytest.raises(errors.ImmutableArrayError, match="at"):
        arr([1.0])[0] = 2.0


# --------------------------------------------------------------------------- .at[] vs NumPy


@st.composite
def update_cases(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    n0 = shape[0]
    ind = draw(hnp.arrays(np.int64, draw(st.sampled_from([(3,), (2, 2), (5,)])),
                          elements=st.integers(-n0, n0 - 1)))
    form = draw(st.sampled_from(["arr", "arr_slice", "int_arr", "slice", "mask"]))
    if form == "arr":
        idx = (ind,)
    elif form == "arr_slice" and len(shape) > 1:
        idx = (ind, slice(None, None, -1))
    elif form == "int_arr" and len(shape) > 1:
        ind1 = draw(hnp.arrays(np.int64, ind.shape, elements=st.integers(0, shape[1] - 1)))
        idx = (Ellipsis, ind1) if len(shape) == 2 else (0, ind1)
    elif form == "mask":
        idx = (draw(hnp.arrays(np.bool_, shape)),)
    else:
        idx = (slice(1, None), )
    return shape, idx


@SETTINGS
@given(update_cases(), st.sampled_from(["add", "multiply", "min", "max", "set"]),
       st.sampled_from([np.float64, np.int32]), st.booleans())
def test_at_updates_match_numpy(case, op, dtype, scalar):
    shape, idx = case
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 5).astype(dtype)
    target = x[idx].shape
    vals = np.asarray(3, dtype) if scalar else (rng.standard_normal(target) * 5).astype(dtype)
    want = x.copy()
    if op == "set":
        # last-wins for repeats: emulate with an explicit loop over the flat positions
        pos = np.arange(x.size).reshape(shape)[idx]
        flat = want.reshape(-1)
        for p, v in zip(pos.ravel(), np.broadcast_to(vals, target).ravel()):
            flat[p] = v
    else:
        ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum,
                 "max": np.maximum}[op]
        ufunc.at(want, idx, np.broadcast_to(vals, target))
    got = getattr(arr(x).at[idx], op)(vals)
    assert_same(got, want)


@pytest.mark.parametrize("wrap", [lambda f: f, zx.jit], ids=["eager", "jit"])
def test_at_combines_in_the_promoted_dtype(wrap):
    # As JAX: x.at[i].op(v) computes op in the promoted dtype, then casts back to x's
    # (the reference: the promoted computation by hand, then NumPy's cast).
    cases = [(np.array([3, 5]), "multiply", 0, 2.5), (np.array([3, 5]), "add", 0, -0.5),
             (np.array([3, 5]), "multiply", 1, 0.5), (np.array([True, False]), "add", 0, -1),
             (np.array([3, 5]), "min", 0, 2.5), (np.array([3, -5]), "max", 1, -5.5),
             (np.array([1, 2, 3]), "add", np.array([0, 0]), np.array([0.6, 0.6]))]
    combine = {"multiply": np.multiply, "add": np.add, "min": np.minimum, "max": np.maximum}
    for x, op, i, v in cases:
        got = wrap(lambda a, u, op=op, i=i: getattr(znp.asarray(a).at[i], op)(u))(x, v)
        promoted = x.astype(np.result_type(x, v))
        getattr(combine[op], "at")(promoted, i, v)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, promoted.astype(x.dtype))


def test_at_modes_and_get():
    x = np.arange(5.0)
    i = np.array([0, 7, -1, -9])
    with pytest.raises(IndexError):
        arr(x).at[i].add(1.0)
    assert_same(arr(x).at[i].add(1.0, mode="drop"), np.array([1.0, 1, 2, 3, 5]))
    assert_same(arr(x).at[i].add(1.0, mode="clip"), np.array([2.0, 1, 2, 3, 6]))
    assert_same(arr(x).at[i].get(mode="fill", fill_value=-1.0), np.array([0.0, -1, 4, -1]))
    assert_same(arr(x).at[i].get(mode="clip"), np.array([0.0, 4, 4, 0]))
    assert np.isnan(np.asarray(arr(x).at[7].get(mode="fill")))
    assert_same(arr(x).at[1:3].get(), x[1:3])
    assert_same(arr(x).at[[1, 1]].subtract(1.0), np.array([0.0, -1, 2, 3, 4]))
    assert_same(arr(x).at[[1, 1]].divide(2.0), np.array([0.0, 0.25, 2, 3, 4]))
    assert_same(arr(x).at[[2, 2]].power(2.0), np.array([0.0, 1, 16, 3, 4]))
    assert_same(arr(x).at[[1, 2]].mul(3.0), np.array([0.0, 3, 6, 3, 4]))
    # traced indices: out-of-bounds updates are dropped
    f = zx.make_jaxpr(lambda x, i: x.at[i].add(1.0))(x, i)
    assert_same(f(x, i)[0], np.array([1.0, 1, 2, 3, 5]))
    # 0-d boolean and values broadcasting with extra leading 1s
    assert_same(arr(x).at[True].set(np.ones((1, 1, 5))), np.ones((5,)))
    with pytest.raises(errors.ShapeError):
        arr(x).at[[0, 1]].set(np.ones(3))


# --------------------------------------------------------------------------- derivatives


def test_grad_getitem_basic_and_advanced():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5))
    check_grads(lambda x: Z(x)[1:, ::-2], (x,))
    check_grads(lambda x: Z(x)[None, -1, 2:4] * Z(x)[0, :2], (x,))
    i = np.array([0, 3, 3, -1])
    check_grads(lambda x: Z(x)[i, 1:3] ** 2, (x,))
    check_grads(lambda x: Z(x)[[[0], [2]], [1, 1, 4]] * Z(x)[0, 0], (x,))
    check_grads(lambda x: Z(x)[:, np.array([True, False, True, True, False])], (x,))
    # repeated indices accumulate in the gradient (scatter-add)
    g = zx.grad(lambda x: x[np.array([1, 1, 1, 2])].sum())(np.zeros(3))
    assert_same(g, np.array([0.0, 3.0, 1.0]))


def test_grad_at_updates():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3))
    u = rng.standard_normal((4, 3))
    i = np.array([1, 3, 1, 0])  # repeated index 1
    for op in ("set", "add", "multiply", "min", "max"):
        check_grads(lambda x, u, op=op: getattr(Z(x).at[i], op)(u) * 1.5, (x, u))
    # set with repeated indices: only the winning (last) update gets the cotangent
    gu = zx.grad(lambda u: Z(x).at[i].set(u).sum())(u)
    assert_same(gu, np.array([[0.0] * 3, [1.0] * 3, [1.0] * 3, [1.0] * 3]))
    gx = zx.grad(lambda x: x.at[i].set(u).sum())(x)
    assert_same(gx, np.where(np.isin(np.arange(5), i)[:, None], 0.0, np.ones((5, 3))))
    # multiply with a zero update among repeats
    uz = u.copy()
    uz[0, 0] = 0.0
    check_grads(lambda x, u: Z(x).at[i].multiply(u), (x, uz))
    # ties in min: the tangent is averaged
    t = zx.jvp(lambda x, u: Z(x).at[np.array([0, 0])].min(u),
               (np.array([1.0]), np.array([1.0, 2.0])), (np.array([1.0]), np.array([3.0, 5.0])))[1]
    assert_same(t, np.array([2.0]))


def test_grad_under_tracing_with_traced_indices():
    x = np.arange(6.0)
    f = lambda x, i: (x[i] ** 2).sum() + x.at[i].add(x[i]).sum()  # noqa: E731
    i = np.array([1, 1, -1])
    g_eager = zx.grad(f)(x, i)
    closed = zx.make_jaxpr(zx.grad(f))(x, i)
    assert_same(closed(x, i)[0], np.asarray(g_eager))
    want = np.ones(6)  # d/dx of x.at[i].add(x[i]).sum() is 1 + counts
    np.add.at(want, [1, 1, 5], 2 * x[[1, 1, 5]] + 1)
    assert_same(g_eager, want)


# --------------------------------------------------------------------------- sort


floats_with_nan = st.floats(-10, 10, allow_nan=False) | st.just(np.nan) | st.just(-0.0)


@SETTINGS
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5),
                  elements=floats_with_nan), st.integers(-1, 2), st.booleans())
def test_sort_argsort_match_numpy(x, axis, descending):
    axis = axis % x.ndim
    want_idx = np.argsort(x, axis=axis, kind="stable")
    if descending:
        want_idx = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
        want_idx = x.shape[axis] - 1 - want_idx
    got_idx = I.argsort(x, axis=axis, descending=descending)
    assert_same(got_idx, want_idx.astype(np.int64))
    want = np.take_along_axis(x, want_idx, axis)
    assert_same(I.sort(x, axis=axis, descending=descending), want)
    if not descending:
        assert_same(I.sort(x, axis=axis), np.sort(x, axis=axis, kind="stable"))


@FEW
@given(hnp.arrays(np.int32, st.integers(0, 8), elements=st.integers(-3, 3)))
def test_sort_ints_and_axis_none(x):
    assert_same(I.sort(x), np.sort(x))
    assert_same(I.argsort(x, stable=True), np.argsort(x, kind="stable"))
    m = x.reshape(-1, 1) if x.size else x.reshape(0, 1)
    assert_same(I.sort(m, axis=None), np.sort(m, axis=None))


def test_sort_grad_and_jaxpr():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4))
    check_grads(lambda x: I.sort(x, axis=0) * np.arange(4.0), (x,))
    check_grads(lambda x: I.sort(x, axis=1, descending=True) ** 2, (x,))
    g = zx.grad(lambda x: (I.sort(x) * np.array([1.0, 2.0, 3.0])).sum())(np.array([3.0, 1.0, 2.0]))
    assert_same(g, np.array([3.0, 1.0, 2.0]))
    closed = zx.make_jaxpr(lambda x: I.sort(x))(x)
    assert [e.primitive.name for e in closed.eqns] == ["sort"]
    assert_same(closed(x)[0], np.sort(x))


def test_partition_properties():
    x = np.array([5.0, 1.0, 4.0, 2.0, 3.0])
    p = np.asarray(I.partition(x, 2))
    assert p[2] == np.partition(x, 2)[2]
    assert np.all(p[:2] <= p[2]) and np.all(p[3:] >= p[2])
    ap = np.asarray(I.argpartition(x, [1, 3]))
    assert x[ap[1]] == np.sort(x)[1] and x[ap[3]] == np.sort(x)[3]
    with pytest.raises(errors.ShapeError):
        I.partition(x, 5)


def test_lexsort():
    rng = np.random.default_rng(4)
    keys = [rng.integers(0, 3, 10), rng.integers(0, 3, 10), rng.integers(0, 2, 10)]
    assert_same(I.lexsort(keys), np.lexsort(keys).astype(np.int64))
    k2 = rng.integers(0, 3, (3, 4))
    assert_same(I.lexsort(k2, axis=0), np.lexsort(k2, axis=0).astype(np.int64))


# --------------------------------------------------------------------------- zerax.numpy


@FEW
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                  elements=st.floats(-5, 5)),
       st.sampled_from([0, 1.5, np.float32(2.0), np.array([1, 2], np.int32)]))
def test_where_matches_numpy(x, other):
    cond = x > 0
    try:
        want = np.where(cond, x, other)
    except ValueError:
        with pytest.raises(errors.ShapeError):
            I.where(cond, x, other)
        return
    assert_same(I.where(cond, x, other), want)
    assert_same(I.where(cond, other, 7), np.where(cond, other, 7))


def test_where_grad_and_one_arg():
    check_grads(lambda x, y: I.where(x > 0, x * y, y), (np.array([1.0, -2.0, 3.0]),
                                                        np.array([0.5, 2.0, -1.0])))
    assert_same(I.where(np.array([[0, 1], [2, 0]]))[1], np.where(np.array([[0, 1], [2, 0]]))[1])


@FEW
@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.integers(0, 2)))
def test_nonzero_family(x):
    for got, want in zip(I.nonzero(x), np.nonzero(x)):
        assert_same(got, want)
    assert_same(I.flatnonzero(x), np.flatnonzero(x))
    assert_same(I.argwhere(x), np.argwhere(x))
    size = 3
    got = I.nonzero(x, size=size, fill_value=-1)
    closed = zx.make_jaxpr(lambda x: I.nonzero(x, size=size, fill_value=-1))(x)
    for g, c, w in zip(got, closed(x), np.nonzero(x)):
        want = np.full(size, -1, np.int64)
        k = min(size, w.size)
        want[:k] = w[:k]
        assert_same(g, want)
        assert_same(c, want)


def test_nonzero_errors():
    with pytest.raises(errors.ShapeError):
        I.nonzero(np.array(1))
    with pytest.raises(errors.ConcretizationError):
        zx.make_jaxpr(lambda x: I.nonzero(x))(np.ones(3))
    with pytest.raises(errors.ConcretizationError):
        zx.make_jaxpr(lambda x: znp.unique(x))(np.ones(3))


@FEW
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.floats(-5, 5)), st.data())
def test_take_and_take_along_axis(x, data):
    axis = data.draw(st.integers(0, x.ndim - 1))
    n = x.shape[axis]
    ind = data.draw(hnp.arrays(np.int64, (3,), elements=st.integers(-n - 2, n + 1)))
    for mode in ("clip", "wrap"):
        assert_same(I.take(x, ind, axis=axis, mode=mode), np.take(x, ind, axis=axis, mode=mode))
    ok = np.clip(ind, -n, n - 1)
    assert_same(I.take(x, ok, axis=axis), np.take(x, ok, axis=axis))
    assert_same(I.take(x, ok, axis=axis, mode="raise"), np.take(x, ok, axis=axis))
    filled = np.asarray(I.take(x, ind, axis=axis, fill_value=-100.0))
    bad = (ind < -n) | (ind >= n)
    assert np.all(np.take(filled, np.nonzero(bad)[0], axis=axis) == -100.0)
    perm = np.argsort(x, axis=axis)
    assert_same(I.take_along_axis(x, perm, axis=axis), np.take_along_axis(x, perm, axis=axis))
    assert_same(I.take_along_axis(x, perm.ravel()[:2], axis=None),
                np.take_along_axis(x, perm.ravel()[:2], axis=None))
    vals = np.full(perm.shape, 9.0)
    want = x.copy()
    np.put_along_axis(want, perm, vals, axis)
    assert_same(I.put_along_axis(x, perm, vals, axis, inplace=False), want)


def test_take_grad_and_errors():
    x = np.random.default_rng(5).standard_normal((3, 4))
    check_grads(lambda x: I.take(x, np.array([0, 2, 2]), axis=1), (x,))
    check_grads(lambda x: I.take_along_axis(x, np.argsort(x, axis=0), axis=0), (x,))
    with pytest.raises(IndexError):
        I.take(x, [5], axis=1, mode="raise")
    with pytest.raises(errors.ZeraxTypeError):
        I.take(x, [1.0])
    with pytest.raises(errors.NotSupportedError):
        I.put_along_axis(x, np.zeros((3, 1), np.int64), 1.0, 1)
    want = np.arange(5)
    np.put(want, [0, 2], [-44, -55])
    assert_same(I.put(np.arange(5), [0, 2], [-44, -55], inplace=False), want)


def test_choose_select_compress_extract():
    a = np.array([0, 1, 2, 1])
    choices = [np.array([1, 2, 3, 4]), 10, np.array([20.0, 30, 40, 50])]
    assert_same(I.choose(a, choices), np.choose(a, choices))
    assert_same(I.choose([3, -1, 5, 2], choices, mode="clip"),
                np.choose([3, -1, 5, 2], choices, mode="clip"))
    assert_same(I.choose([3, -1, 5, 2], choices, mode="wrap"),
                np.choose([3, -1, 5, 2], choices, mode="wrap"))
    x = np.arange(6)
    for default in (0, -1.5, np.float32(0)):
        assert_same(I.select([x < 3, x > 4], [x, x ** 2], default),
                    np.select([x < 3, x > 4], [x, x ** 2], default))
    c32 = np.ones(6, np.float32)
    assert_same(I.select([x < 3], [c32], 0), np.select([x < 3], [c32], 0))
    with pytest.raises(errors.ZeraxTypeError):
        I.select([x], [x])
    m = np.array([[1, 2], [3, 4], [5, 6]])
    for cond, axis in (([0, 1], 0), ([False, True], 1), ([True, False, True], None)):
        assert_same(I.compress(cond, m, axis=axis), np.compress(cond, m, axis=axis))
    assert_same(I.extract(m % 2 == 0, m), np.extract(m % 2 == 0, m))
    check_grads(lambda c: I.select([x < 2, x > 3], [c, c ** 2], 1.0), (np.linspace(-1, 1, 6),))


@FEW
@given(hnp.arrays(np.float64, st.integers(0, 8), elements=floats_with_nan),
       hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
                  elements=floats_with_nan))
def test_searchsorted_digitize_isin(a, v):
    a = np.sort(a)
    for side in ("left", "right"):
        assert_same(I.searchsorted(a, v, side), np.searchsorted(a, v, side))
        closed = zx.make_jaxpr(lambda a, v: I.searchsorted(a, v, side))(a, v)
        assert_same(closed(a, v)[0], np.searchsorted(a, v, side))
    assert_same(znp.isin(v, a), np.isin(v, a))
    assert_same(znp.isin(v, a, invert=True), np.isin(v, a, invert=True))
    assert_same(zx.make_jaxpr(lambda v, a: znp.isin(v, a))(v, a)(v, a)[0], np.isin(v, a))
    b = a[~np.isnan(a)]
    vv = v[~np.isnan(v)] if v.ndim else v
    if not np.isnan(vv).any():
        for right in (False, True):
            assert_same(I.digitize(vv, b, right), np.digitize(vv, b, right))
            assert_same(I.digitize(vv, b[::-1], right), np.digitize(vv, b[::-1], right))


def test_searchsorted_sorter_and_ints():
    a = np.array([3, 1, 2, 2])
    s = np.argsort(a)
    assert_same(I.searchsorted(a, [2, 0, 5], sorter=s), np.searchsorted(a, [2, 0, 5], sorter=s))
    assert_same(I.searchsorted(np.array([1, 2, 3]), 2.5), np.searchsorted(np.array([1, 2, 3]), 2.5))


@FEW
@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=5),
                  elements=st.integers(-2, 2)),
       hnp.arrays(np.int64, st.integers(0, 6), elements=st.integers(-2, 2)))
def test_set_functions(a, b):
    got = znp.unique(a, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        assert_same(g, w.astype(np.int64) if w.dtype.kind in "iu" else w)
    got = znp.unique(a, return_inverse=True, axis=0)
    want = np.unique(a, return_inverse=True, axis=0)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert_same(znp.union1d(a, b), np.union1d(a, b))
    assert_same(znp.intersect1d(a, b), np.intersect1d(a, b))
    for g, w in zip(znp.intersect1d(a, b, return_indices=True),
                    np.intersect1d(a, b, return_indices=True)):
        assert_same(g, w)
    assert_same(znp.setdiff1d(a, b), np.setdiff1d(a, b))
    assert_same(znp.setxor1d(a, b), np.setxor1d(a, b))
    assert_same(znp.isin(a, b), np.isin(a, b))


def test_unique_floats_and_grad():
    x = np.array([2.0, np.nan, 1.0, 2.0, np.nan])
    assert_same(znp.unique(x), np.unique(x))
    assert_same(znp.unique(x, equal_nan=False), np.unique(x, equal_nan=False))
    g = zx.grad(lambda x: (znp.unique(x) ** 2).sum())(np.array([3.0, 1.0, 3.0]))
    assert_same(g, np.array([6.0, 2.0, 0.0]))


@FEW
@given(hnp.arrays(np.int64, st.integers(0, 10), elements=st.integers(0, 6)),
       st.integers(0, 9))
def test_bincount(x, minlength):
    assert_same(I.bincount(x, minlength=minlength), np.bincount(x, minlength=minlength))
    w = np.linspace(0, 1, x.size)
    assert_same(I.bincount(x, weights=w), np.bincount(x, weights=w))
    closed = zx.make_jaxpr(lambda x: I.bincount(x, length=4))(x)
    assert_same(closed(x)[0], np.bincount(x[x < 4], minlength=4)[:4])
    with pytest.raises(errors.ConcretizationError):
        zx.make_jaxpr(lambda x: I.bincount(x))(x)


@FEW
@given(hnp.arrays(np.float64, st.integers(0, 12), elements=st.floats(-4, 4)),
       st.sampled_from([1, 3, 10]))
def test_histogram(a, bins):
    for kw in ({}, {"range": (-1.0, 2.0)}, {"density": True}):
        if kw.get("density") and a.size == 0:
            continue
        got, ge = I.histogram(a, bins, **kw)
        want, we = np.histogram(a, bins, **kw)
        assert_same(ge, we)
        assert_same(got, want, exact=not kw.get("density"))
    if a.size:
        got, ge = zx.make_jaxpr(lambda a: I.histogram(a, bins))(a)(a)
        want, we = np.histogram(a, bins)
        assert_same(ge, we)
        assert_same(got, want)
    edges = [-3.0, -0.5, 0.0, 2.5]
    got, _ = I.histogram(a, edges, weights=np.ones_like(a) * 0.5)
    assert_same(got, np.histogram(a, edges, weights=np.ones_like(a) * 0.5)[0])


def test_index_helpers():
    for f in ("tril_indices", "triu_indices"):
        for g, w in zip(getattr(T, f)(4, 1, 5), getattr(np, f)(4, 1, 5)):
            assert_same(g, w)
    m = np.zeros((3, 5))
    for f in ("tril_indices_from", "triu_indices_from"):
        for g, w in zip(getattr(T, f)(m, -1), getattr(np, f)(m, -1)):
            assert_same(g, w)
    for g, w in zip(T.diag_indices(3, 3), np.diag_indices(3, 3)):
        assert_same(g, w)
    for g, w in zip(T.diag_indices_from(np.zeros((2, 2))), np.diag_indices_from(np.zeros((2, 2)))):
        assert_same(g, w)
    for g, w in zip(T.ix_([0, 2], [True, False, True], np.array([1])),
                    np.ix_([0, 2], [True, False, True], np.array([1]))):
        assert_same(g, w)
    x = np.arange(12.0).reshape(3, 4)
    assert_same(arr(x)[T.ix_([0, 2], [1, 3])], x[np.ix_([0, 2], [1, 3])])


@FEW
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_unravel_ravel_multi_index(shape, data):
    size = int(np.prod(shape))
    flat = data.draw(hnp.arrays(np.int64, (5,), elements=st.integers(0, size - 1)))
    for order in ("C", "F"):
        got = T.unravel_index(flat, shape, order=order)
        want = np.unravel_index(flat, shape, order=order)
        for g, w in zip(got, want):
            assert_same(g, w)
        assert_same(T.ravel_multi_index(want, shape, order=order),
                    np.ravel_multi_index(want, shape, order=order))
    coords = tuple(c + 7 for c in np.unravel_index(flat, shape))
    for mode in ("wrap", "clip"):
        assert_same(T.ravel_multi_index(coords, shape, mode=mode),
                    np.ravel_multi_index(coords, shape, mode=mode))
    # out of range: clipped, negatives counted from the end, as JAX (eagerly as under jit)
    for g, w in zip(T.unravel_index(np.array([size, -1, -size - 5]), shape),
                    np.unravel_index(np.array([size - 1, size - 1, 0]), shape)):
        assert_same(g, w)
    closed = zx.make_jaxpr(lambda i: T.unravel_index(i, shape))(flat)
    for g, w in zip(closed(flat), np.unravel_index(flat, shape)):
        assert_same(g, w)


def test_fill_diagonal():
    for shape, wrap in (((5, 3), True), ((5, 3), False), ((3, 5), False), ((3, 3, 3), False)):
        want = np.zeros(shape)
        np.fill_diagonal(want, [1.0, 2.0], wrap=wrap)
        assert_same(T.fill_diagonal(np.zeros(shape), [1.0, 2.0], wrap=wrap, inplace=False), want)
    with pytest.raises(errors.NotSupportedError):
        T.fill_diagonal(np.zeros((2, 2)), 1.0)
    check_grads(lambda x, v: T.fill_diagonal(x, v, inplace=False),
                (np.ones((3, 3)), np.array([2.0, 3.0, 4.0])))


# --------------------------------------------------------------------------- primitives


def test_gather_shape_rule_matches_numpy_on_many_layouts():
    shape = (2, 3, 4, 5)
    a, b = np.zeros((2, 1), np.int64), np.zeros((3,), np.int64)
    layouts = [
        (a, slice(None), b), (slice(None), a, b), (a, b), (None, a, None, b),
        (0, slice(None), b), (slice(None), 1, b), (Ellipsis, a), (a, Ellipsis, b),
        (slice(None), None, a, b, None),
    ]
    x = np.zeros(shape)
    for idx in layouts:
        assert arr(x)[idx].shape == x[idx].shape, idx
        closed = zx.make_jaxpr(lambda x, i, j: x[tuple(i if t is a else j if t is b else t
                                                       for t in idx)])(x, a, b)
        assert closed.out_avals[0].shape == x[idx].shape


def test_primitives_registered_with_rules():
    for p in (ops_ix.gather_p, ops_ix.scatter_p, ops_ix.scatter_add_p, ops_ix.scatter_mul_p,
              ops_ix.scatter_min_p, ops_ix.scatter_max_p, ops_sort.sort_p, ops_sort.argsort_p):
        assert p.impl is not None and p.abstract_eval is not None and p in jvp_rules
        assert p in batch_rules
    for p in (ops_ix.gather_p, ops_ix.scatter_p, ops_ix.scatter_add_p, ops_ix.scatter_mul_p):
        assert p in transpose_rules


def test_long_chain_of_updates_differentiates():
    def f(x):
        for k in range(300):
            x = x.at[k % 3].add(x[(k + 1) % 3] * 1e-3)
        return x.sum()
    g = zx.grad(f)(np.ones(3))
    assert np.all(np.isfinite(np.asarray(g)))
