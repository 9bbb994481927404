"""vmap of indexing: the batching rules of gather, the scatters, sort and argsort.

For hypothesis-chosen shapes, index expressions and in_axes, ``zerax.vmap(f)`` must equal
stacking ``f`` over the batch with a Python loop; and the batched programs must not
loop (their size does not grow with the batch).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FEW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def take_example(a, axis, b):
    """Example ``b`` of ``a`` batched along ``axis`` (``a`` itself when unmapped)."""
    return a if axis is None else np.take(a, b, axis=axis)


def batched(draw, example, mapped, size, bounds=(0, 0)):
    """(array, in_axis): ``size`` variations of ``example`` (integers within ``bounds``)
    stacked along a random axis, or ``example`` itself (in_axis None) when not
    ``mapped``."""
    if not mapped:
        return example, None
    ax = draw(st.integers(0, example.ndim))
    parts = [draw_like(draw, example, bounds) for _ in range(size)]
    a = np.stack(parts, axis=ax)
    return a, draw(st.sampled_from([ax, ax - a.ndim]))


def draw_like(draw, example, bounds=(0, 0)):
    if example.dtype.kind in "iu":
        lo, hi = bounds
        return np.asarray(draw(st.lists(st.integers(lo, hi), min_size=example.size,
                                        max_size=example.size)),
                          example.dtype).reshape(example.shape)
    vals = draw(st.lists(st.sampled_from([-2.0, -0.5, 0.0, 1.0, 1.5, 3.0]),
                         min_size=example.size, max_size=example.size))
    return np.asarray(vals, example.dtype).reshape(example.shape)


def loop(f, args, axes, size):
    outs = [f(*[znp.asarray(take_example(a, ax, b)) for a, ax in zip(args, axes)])
            for b in range(size)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack([np.asarray(o[k]) for o in outs]) for k in range(len(outs[0])))
    return np.stack([np.asarray(o) for o in outs])


def assert_same(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


def check_vmap(f, args, axes, size):
    got = zx.vmap(f, in_axes=tuple(axes))(*args)
    want = loop(f, args, axes, size)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            assert_same(g, w)
    else:
        assert_same(got, want)


# --------------------------------------------------------------------------- index cases


@st.composite
def index_vmap_cases(draw, oob=False):
    """An operand, an index expression with some int-array (or traced scalar) entries,
    and for each of them whether it is mapped.  Returns (size, x, x_axis, items, arrays,
    array_axes) where ``items`` holds ("arr", k) for the k-th array argument."""
    size = draw(st.integers(1, 3))
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    adv = draw(st.sampled_from([(), (2,), (3,), (2, 3), (1, 2)]))
    n_used = draw(st.integers(1, ndim))
    # often two separated advanced entries (NumPy then puts their dims first)
    kinds = draw(st.one_of(
        st.lists(st.sampled_from(["slice", "int", "arr", "arr"]), min_size=n_used,
                 max_size=n_used),
        st.permutations(["arr", "slice", "arr", "int"][:n_used])))
    ell = draw(st.one_of(st.none(), st.integers(0, n_used)))  # Ellipsis before item `ell`
    axes = list(range(n_used)) if ell is None else \
        list(range(ell)) + list(range(ndim - n_used + ell, ndim))
    items, examples = [], []
    for kind, axis in zip(kinds, axes):
        n = shape[axis]
        if kind == "slice":
            start = draw(st.sampled_from([None, 0, 1, -1]))
            stop = draw(st.sampled_from([None, n, -1, 2]))
            step = draw(st.sampled_from([None, 1, 2, -1]))
            items.append(slice(start, stop, step))
        elif kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        else:
            k = draw(st.integers(0, len(adv)))
            ex_shape = tuple(d if draw(st.booleans()) else 1 for d in adv[len(adv) - k:])
            items.append(("arr", len(examples)))
            examples.append((np.zeros(ex_shape, np.int64), n))
    if ell is not None:
        items.insert(ell, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    x_mapped = draw(st.booleans())
    mapped = [draw(st.booleans()) for _ in examples]
    if not x_mapped and not any(mapped):
        if examples:
            mapped[0] = True
        else:
            x_mapped = True
    arrays, array_axes = [], []
    for (ex, n), m in zip(examples, mapped):
        bounds = (-n - 2, n + 1) if oob else (-n, n - 1)
        a, ax = batched(draw, draw_like(draw, ex, bounds), m, size, bounds)
        arrays.append(a)
        array_axes.append(ax)
    x_ex = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 3.0
    x, x_axis = batched(draw, x_ex, x_mapped, size)
    return size, x, x_axis, items, arrays, array_axes


def build_index(items, arrays):
    return tuple(arrays[it[1]] if isinstance(it, tuple) else it for it in items)


@SETTINGS
@given(index_vmap_cases())
def test_vmap_getitem(case):
    size, x, x_axis, items, arrays, array_axes = case

    def f(x, *arrs):
        return znp.asarray(x)[build_index(items, arrs)]

    check_vmap(f, [x] + arrays, [x_axis] + array_axes, size)
    # the NumPy reference for each example, too
    want = np.stack([take_example(x, x_axis, b)[build_index(
        items, [take_example(a, ax, b) for a, ax in zip(arrays, array_axes)])]
        for b in range(size)])
    assert_same(zx.vmap(f, in_axes=tuple([x_axis] + array_axes))(x, *arrays), want)


@SETTINGS
@given(index_vmap_cases(oob=True), st.sampled_from(["fill", "clip"]))
def test_vmap_get_modes(case, mode):
    size, x, x_axis, items, arrays, array_axes = case

    def f(x, *arrs):
        return znp.asarray(x).at[build_index(items, arrs)].get(mode=mode, fill_value=-7.0)

    check_vmap(f, [x] + arrays, [x_axis] + array_axes, size)


OPS = ["set", "add", "mul", "min", "max"]


@SETTINGS
@given(index_vmap_cases(), st.sampled_from(OPS), st.data())
def test_vmap_at_updates(case, op, data):
    size, x, x_axis, items, arrays, array_axes = case
    x_ex = take_example(x, x_axis, 0)
    shape = np.shape(x_ex[build_index(items, [take_example(a, ax, 0)
                                              for a, ax in zip(arrays, array_axes)])])
    # updates of the indexed shape, or a scalar / trailing part broadcast into it
    u_shape = data.draw(st.sampled_from([shape, (), shape[len(shape) - 1:]]))
    u_ex = np.zeros(u_shape)
    u, u_axis = batched(data.draw, u_ex, data.draw(st.booleans()), size)
    drop = data.draw(st.booleans())

    def f(x, u, *arrs):
        ref = znp.asarray(x).at[build_index(items, arrs)]
        return getattr(ref, op)(u, mode="drop" if drop else None)

    check_vmap(f, [x, u] + arrays, [x_axis, u_axis] + array_axes, size)


@SETTINGS
@given(index_vmap_cases(oob=True), st.sampled_from(OPS), st.data())
def test_vmap_at_updates_out_of_bounds(case, op, data):
    size, x, x_axis, items, arrays, array_axes = case
    u, u_axis = batched(data.draw, np.array(2.5), data.draw(st.booleans()), size)
    mode = data.draw(st.sampled_from(["drop", "clip"]))

    def f(x, u, *arrs):
        return getattr(znp.asarray(x).at[build_index(items, arrs)], op)(u, mode=mode)

    check_vmap(f, [x, u] + arrays, [x_axis, u_axis] + array_axes, size)


@FEW
@given(st.integers(1, 3), st.integers(1, 3), st.integers(2, 4), st.data())
def test_vmap_take_along_axis_and_sort(size, rows, cols, data):
    axis = data.draw(st.sampled_from([0, 1, -1]))
    x_ex = np.zeros((rows, cols))
    i_ex = np.zeros((rows, cols) if axis != 0 else (2, cols), np.int64)
    n = rows if axis == 0 else cols
    x_m, i_m = data.draw(st.sampled_from([(True, False), (False, True), (True, True)]))
    x, xa = batched(data.draw, x_ex, x_m, size)
    i, ia = batched(data.draw, draw_like(data.draw, i_ex, (-n, n - 1)), i_m, size, (-n, n - 1))
    check_vmap(lambda x, i: znp.take_along_axis(x, i, axis=axis), [x, i], [xa, ia], size)
    xs, xsa = batched(data.draw, x_ex, True, size)
    xs = np.where(xs == 1.5, np.nan, xs)  # ties and NaNs
    check_vmap(lambda x: znp.sort(x, axis=axis), [xs], [xsa], size)
    check_vmap(lambda x: znp.argsort(x, axis=axis), [xs], [xsa], size)
    check_vmap(lambda x: znp.argsort(x, axis=axis, descending=True), [xs], [xsa], size)
    # argsort + take_along_axis is sort
    got = zx.vmap(lambda x: znp.take_along_axis(x, znp.argsort(x, axis=axis), axis=axis),
                  in_axes=xsa)(xs)
    assert_same(got, loop(lambda x: np.sort(x, axis=axis), [xs], [xsa], size))


# --------------------------------------------------------------------------- derivatives


def f_index(x, i, j):
    """A function of ``x`` through gathers and scatters (duplicates in ``i`` on purpose)."""
    y = x.at[i].add(x[j] * 2.0)
    y = y.at[j].mul(znp.sin(x[i]) + 2.0)
    y = y.at[0].max(x[1])
    return (znp.sort(y) * np.arange(1.0, 6.0)).sum() + (y[i] ** 2).sum()


@FEW
@given(st.integers(1, 3), st.data())
def test_vmap_grad_of_indexing(size, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    i_ex, j_ex = np.zeros(3, np.int64), np.zeros(3, np.int64)
    x_m, i_m, j_m = data.draw(st.sampled_from(
        [(True, False, False), (False, True, True), (True, True, False), (True, True, True)]))
    x = rng.standard_normal((size, 5)) if x_m else rng.standard_normal(5)
    i, ia = batched(data.draw, i_ex, i_m, size, (-5, 4))
    j, ja = batched(data.draw, j_ex, j_m, size, (-5, 4))
    args, axes = [x, i, j], [0 if x_m else None, ia, ja]
    g = zx.grad(f_index)
    got = zx.vmap(g, in_axes=tuple(axes))(*args)
    want = loop(g, args, axes, size)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    # and forward mode: vmap of a jvp
    t = np.ones(5)
    jv = zx.vmap(lambda x, i, j: zx.jvp(lambda x: f_index(x, i, j), (x,), (t,))[1],
                 in_axes=tuple(axes))(*args)
    np.testing.assert_allclose(np.asarray(jv), (np.asarray(got) * t).sum(-1), rtol=1e-10,
                               atol=1e-10)


def test_vmap_grad_of_scatter_set_and_min():
    def f(x, u, i):
        y = znp.asarray(x).at[i].set(u * x[2])
        return (y.at[i].min(u) ** 2).sum()

    xs = np.array([[1.0, -2.0, 3.0, 0.5], [0.3, 0.2, -1.0, 2.0]])
    us = np.array([[0.5, -1.0], [2.0, 0.1]])
    i = np.array([[0, 3], [1, 1]])
    for argnums in (0, 1, (0, 1)):
        g = zx.grad(f, argnums=argnums)
        got = zx.vmap(g)(xs, us, i)
        want = [g(xs[b], us[b], i[b]) for b in range(2)]
        if isinstance(argnums, tuple):
            for k in range(2):
                np.testing.assert_allclose(np.asarray(got[k]),
                                           np.stack([np.asarray(w[k]) for w in want]))
        else:
            np.testing.assert_allclose(np.asarray(got), np.stack([np.asarray(w) for w in want]))


# --------------------------------------------------------------------------- special cases


def test_vmap_scalar_index_is_a_gather():
    """``x[i]`` with a batched scalar ``i`` is one gather, not a per-example loop."""
    x = np.arange(12.0).reshape(4, 3)
    i = np.array([3, -1, 0, 2, 1])
    assert_same(zx.vmap(lambda i: zx.Array(x)[i])(i), x[i])
    assert_same(zx.vmap(lambda i: zx.Array(x)[1, i % 3])(i), x[1, i % 3])
    jaxpr = zx.make_jaxpr(zx.vmap(lambda i: zx.Array(x)[i, 1]))(i)
    names = [e.primitive.name for e in jaxpr.eqns]
    assert "gather" in names and "dynamic_slice" not in names and "concatenate" not in names


@pytest.mark.parametrize("which", ["getitem", "x_only", "set", "add", "mul", "min", "sort",
                                   "argsort"])
def test_batched_programs_do_not_loop(which):
    """The number of equations of the batched program does not depend on the batch size."""
    fns = {
        "getitem": (lambda x, i: x[:, i], (0, 0)),
        "x_only": (lambda x, i: x[i, 1:], (0, None)),
        "set": (lambda x, i: x.at[i].set(x[0]), (0, 0)),
        "add": (lambda x, i: x.at[:, i].add(1.0), (None, 0)),
        "mul": (lambda x, i: x.at[i].mul(x[1]), (0, None)),
        "min": (lambda x, i: x.at[i, i].min(-1.0), (1, 0)),
        "sort": (lambda x, i: znp.sort(x, axis=0), (1, None)),
        "argsort": (lambda x, i: znp.argsort(x, axis=1), (0, None)),
    }
    f, axes = fns[which]
    counts = []
    for size in (2, 5):
        x = np.ones((size, 3, 3)) if axes[0] == 0 else np.ones((3, size, 3)) if axes[0] == 1 \
            else np.ones((3, 3))
        i = np.zeros((size, 2), np.int64) if axes[1] == 0 else np.array([0, 2])
        jaxpr = zx.make_jaxpr(zx.vmap(f, in_axes=axes))(x, i)
        counts.append(len(jaxpr.eqns))
        want = loop(f, [x, i], list(axes), size)
        assert_same(jaxpr(x, i)[0], want)
    assert counts[0] == counts[1], counts


def test_vmap_masks_and_out_axes():
    x = np.arange(24.0).reshape(2, 3, 4)
    mask = np.array([True, False, True, True])
    # a concrete mask over a batched operand
    assert_same(zx.vmap(lambda x: x[:, mask], in_axes=1, out_axes=-1)(x),
                np.stack([x[:, b][:, mask] for b in range(3)], -1))
    # a batched (traced) mask in an update
    masks = x > 10.0
    got = zx.vmap(lambda x, m: x.at[m].set(0.0))(x, masks)
    assert_same(got, np.where(masks, 0.0, x))
    with pytest.raises(zx.errors.NonConcreteBooleanIndexError):
        zx.vmap(lambda x, m: x[m])(x, masks)


A_EX = np.array([[1], [-2]])        # (2, 1)
B_EX = np.array([0, 2, -1])         # (3,)
LAYOUTS = [
    ("a", slice(None), "b"), (slice(None), "a", "b"), ("a", "b"), (None, "a", None, "b"),
    (0, slice(None), "b"), (slice(None), 1, "b"), (Ellipsis, "a"), ("a", Ellipsis, "b"),
    (slice(None), None, "a", "b", None), (slice(1, None), "a"), ("a",), (1, slice(None, 2)),
    (slice(None), slice(None, None, -2)),
]
MAPPINGS = [(x, a, b) for x in (None, 0, 2, -1) for a in (None, 0, 1) for b in (None, -1)
            if (x, a, b) != (None, None, None)]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_vmap_every_layout_and_mapping(layout):
    """Each index layout (NumPy's placement rules for advanced dims) with each combination
    of mapped operand and index arrays, for a gather and two scatters."""
    size = 2
    rng = np.random.default_rng(0)
    x_ex = np.zeros((2, 3, 4, 5))

    def stack(ex, ax, lo, hi):
        if ax is None:
            return ex
        parts = [rng.integers(lo, hi, ex.shape) if ex.dtype.kind == "i" else
                 rng.standard_normal(ex.shape) for _ in range(size)]
        return np.stack(parts, axis=ax)

    def index(a, b):
        return tuple(a if t == "a" else b if t == "b" else t for t in layout)

    for xa, aa, ba in MAPPINGS:
        x = stack(x_ex, xa, 0, 0) if xa is not None else rng.standard_normal(x_ex.shape)
        a = stack(A_EX, aa, -2, 2)
        b = stack(B_EX, ba, -3, 3)
        want_shape = x_ex[index(A_EX, B_EX)].shape
        u = rng.standard_normal((size,) + want_shape)
        args, axes = [x, a, b, u], [xa, aa, ba, 0]
        check_vmap(lambda x, a, b, u: znp.asarray(x)[index(a, b)], args, axes, size)
        check_vmap(lambda x, a, b, u: znp.asarray(x).at[index(a, b)].add(u), args, axes, size)
        check_vmap(lambda x, a, b, u: znp.asarray(x).at[index(a, b)].set(u[0]), args,
                   [xa, aa, ba, None], size)
