"""vmap and the Jacobian family: `vmap(f)(xs)` equals stacking `f(x)` over the batch for
random programs, axes and pytrees; composition with grad/jvp/custom rules/checkpoint/
Function; jacfwd/jacrev/hessian against finite differences; errors; the batched program's
shape (an unmapped operand stays unmapped)."""

import functools
import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zerax as zx
import zerax.numpy as znp
from zerax import errors, lax
from zerax.tree_util import tree_flatten, tree_leaves, tree_map, tree_structure

# --------------------------------------------------------------------------- helpers


def _np(x):
    return np.asarray(x)


def _take(a, i, ax):
    """Example ``i`` of ``a`` along ``ax`` as a zerax Array (``a`` itself when unmapped)."""
    return a if ax is None else znp.asarray(np.take(_np(a), i, axis=ax))


def loop_reference(f, args, in_axes, out_axes=0, size=None):
    """``f`` applied example by example (a Python loop) and stacked along ``out_axes``.

    ``in_axes`` / ``out_axes`` are given one per leaf (flat lists) or as a single int."""
    leaves, treedef = tree_flatten(args)
    if not isinstance(in_axes, list):
        in_axes = [in_axes] * len(leaves)
    for a, ax in zip(leaves, in_axes):
        if ax is not None:
            size = np.shape(a)[ax]
    outs = []
    for i in range(size):
        ex = treedef.unflatten([_take(a, i, ax) for a, ax in zip(leaves, in_axes)])
        outs.append(f(*ex))
    out_leaves_per_ex = [tree_leaves(o) for o in outs]
    out_tree = tree_structure(outs[0])
    n = len(out_leaves_per_ex[0])
    if not isinstance(out_axes, list):
        out_axes = [out_axes] * n
    stacked = []
    for k in range(n):
        parts = [_np(o[k]) for o in out_leaves_per_ex]
        if out_axes[k] is None:
            for p in parts[1:]:
                np.testing.assert_array_equal(p, parts[0])
            stacked.append(parts[0])
        else:
            stacked.append(np.stack(parts, axis=out_axes[k]) if parts else None)
    return out_tree.unflatten(stacked)


def assert_tree_close(got, want, rtol=1e-10, atol=1e-10, check_dtype=True):
    g_leaves, g_tree = tree_flatten(got)
    w_leaves, w_tree = tree_flatten(want)
    assert g_tree == w_tree, f"structure {g_tree} != {w_tree}"
    for g, w in zip(g_leaves, w_leaves):
        assert isinstance(g, zx.Array), type(g)
        g, w = _np(g), _np(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        if check_dtype:
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            scale = max(1.0, float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0)))
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True)


def _tol(dtype):
    return 2e-4 if np.dtype(dtype) == np.float32 else 1e-10


# --------------------------------------------------------------------------- 1. property test
#
# A random program is a chain of operations on the per-example value ``v`` (starting at
# ``x``), some of which also use a second input ``y`` (broadcastable to ``x``).  Ops whose
# result is discontinuous in its input (comparisons, argmax, floor, sign, argsort) are only
# applied to values computed exactly (structural ops of the raw data), so rounding
# differences between the batched and the looped program cannot flip them.

def _const(shape, dtype=np.float64):
    n = int(np.prod(shape))
    return ((np.arange(n) % 5 - 2) * 0.5).reshape(shape).astype(dtype)


def _axis(draw, nd):
    return draw(st.integers(-nd, nd - 1))


def _discontinuous(fn, draw, nd):
    return (lambda v, y: fn(v)), False, True, False


def _with_y(fn, keeps_exact, draw, nd):
    return fn, True, False, keeps_exact


def _op_builders():
    """name -> builder(draw, nd) -> (fn(v, y), uses_y, needs_exact, keeps_exact)."""
    b = {}

    def unary(fn, keeps=False):
        return lambda draw, nd: (lambda v, y: fn(v), False, False, keeps)

    for name, fn in [("sin", znp.sin), ("cos", znp.cos), ("tanh", znp.tanh),
                     ("exp_tanh", lambda v: znp.exp(znp.tanh(v))),
                     ("log1p_abs", lambda v: znp.log1p(znp.abs(v))),
                     ("sqrt_abs", lambda v: znp.sqrt(znp.abs(v))),
                     ("square", znp.square), ("mul_weak", lambda v: v * 2.5),
                     ("rsub_weak", lambda v: 1 - v), ("add_int", lambda v: v + 1),
                     ("cumsum_flat", znp.cumsum)]:
        b[name] = unary(fn)
    for name, fn in [("negative", znp.negative), ("abs", znp.abs),
                     ("clip", lambda v: znp.clip(v, -1, 1)), ("pad", lambda v: znp.pad(v, 1)),
                     ("ravel", znp.ravel), ("transpose_all", znp.transpose),
                     ("squeeze", lambda v: znp.squeeze(v) if 1 in v.shape else v),
                     ("broadcast_to", lambda v: znp.broadcast_to(v, (2,) + tuple(v.shape))),
                     ("reshape_rev", lambda v: znp.reshape(v, tuple(v.shape)[::-1]))]:
        b[name] = unary(fn, keeps=True)

    def indexing(draw, nd):
        if nd == 0:
            return None
        idx = draw(st.sampled_from([0, -1, slice(None, None, -1), slice(1, None),
                                    slice(None, None, 2), (Ellipsis, slice(-1, None)),
                                    (Ellipsis, 0), (None, Ellipsis)]))
        return (lambda v, y: v[idx]), False, False, True
    b["indexing"] = indexing
    for name, fn in [("sign", znp.sign), ("floor", znp.floor),
                     ("where_pos", lambda v: znp.where(v > 0, v, -2 * v)),
                     ("select", lambda v: znp.select([v > 0.5, v < -0.5], [v, -v], 0.25)),
                     ("any_pos", lambda v: znp.any(v > 0)),
                     ("argmax_flat", znp.argmax)]:
        b[name] = functools.partial(_discontinuous, fn)
    for name, fn in [("add_y", znp.add), ("sub_y", znp.subtract), ("mul_y", znp.multiply),
                     ("div_y", lambda v, y: v / (1 + y * y)), ("atan2_y", znp.arctan2),
                     ("hypot_y", znp.hypot)]:
        b[name] = functools.partial(_with_y, fn, False)
    for name, fn in [("max_y", znp.maximum), ("min_y", znp.minimum),
                     ("concat_y", lambda v, y: znp.concatenate(
                         [v, znp.broadcast_to(y, v.shape)], axis=-1))]:
        b[name] = functools.partial(_with_y, fn, True)
    b["where_y"] = lambda draw, nd: (lambda v, y: znp.where(v > y, v, y), True, True, True)

    def reduction(draw, nd):
        name = draw(st.sampled_from(["sum", "mean", "prod", "max", "min", "argmax", "argmin",
                                     "all"]))
        kind = draw(st.sampled_from(["none", "int", "tuple"])) if nd else "none"
        if kind == "int":
            axis = _axis(draw, nd)
        elif kind == "tuple" and nd >= 2:
            axis = tuple(draw(st.lists(st.integers(0, nd - 1), min_size=2, max_size=2,
                                       unique=True)))
            axis = tuple(a - nd if draw(st.booleans()) else a for a in axis)
        else:
            axis = None
        if name in ("argmax", "argmin") and isinstance(axis, tuple):
            axis = None
        keepdims = draw(st.booleans()) and name not in ("argmax", "argmin")
        fn = getattr(znp, name)
        exact_needed = name in ("argmax", "argmin", "all")
        if name == "all":
            return (lambda v, y: znp.all(v > 0, axis=axis, keepdims=keepdims),
                    False, True, False)
        kw = {"keepdims": True} if keepdims else {}
        return (lambda v, y: fn(v, axis=axis, **kw), False, exact_needed,
                name in ("max", "min"))
    b["reduce"] = reduction

    def cumsum(draw, nd):
        axis = _axis(draw, nd) if nd else None
        return (lambda v, y: znp.cumsum(v, axis=axis)), False, False, False
    b["cumsum"] = cumsum

    def sort(draw, nd):
        axis = _axis(draw, nd) if nd else None
        if draw(st.booleans()):
            return (lambda v, y: znp.sort(v, axis=axis)), False, False, True
        return (lambda v, y: znp.argsort(v, axis=axis, stable=True)), False, True, False
    b["sort"] = sort

    def transpose(draw, nd):
        perm = tuple(draw(st.permutations(range(nd))))
        return (lambda v, y: znp.transpose(v, perm)), False, False, True
    b["transpose"] = transpose

    def moveaxis(draw, nd):
        if nd == 0:
            return None
        src, dst = _axis(draw, nd), _axis(draw, nd)
        return (lambda v, y: znp.moveaxis(v, src, dst)), False, False, True
    b["moveaxis"] = moveaxis

    def expand_dims(draw, nd):
        axis = draw(st.integers(-(nd + 1), nd))
        return (lambda v, y: znp.expand_dims(v, axis)), False, False, True
    b["expand_dims"] = expand_dims

    def concat_self(draw, nd):
        if nd == 0:
            return None
        axis = _axis(draw, nd)
        return (lambda v, y: znp.concatenate([v, -v], axis=axis)), False, False, True
    b["concat_self"] = concat_self

    def stack_self(draw, nd):
        axis = draw(st.integers(-(nd + 1), nd))
        return (lambda v, y: znp.stack([v, znp.abs(v)], axis=axis)), False, False, True
    b["stack_self"] = stack_self

    def flip(draw, nd):
        axis = _axis(draw, nd) if nd else None
        return (lambda v, y: znp.flip(v, axis=axis)), False, False, True
    b["flip"] = flip

    def matmul_const(draw, nd):
        if nd == 0:
            return None
        left = draw(st.booleans()) and nd >= 2

        def fn(v, y):
            if left:
                return _const((2, v.shape[-2])) @ v
            return v @ _const((v.shape[-1], 2))
        return fn, False, False, False
    b["matmul_const"] = matmul_const

    def self_products(draw, nd):
        kind = draw(st.sampled_from(["gram", "einsum", "dot", "tensordot"]))
        if kind == "gram":
            return (lambda v, y: v @ znp.swapaxes(v, -1, -2)), False, False, False
        if kind == "einsum":
            return (lambda v, y: znp.einsum("...i,...i->...", v, v)), False, False, False
        if kind == "dot":
            return (lambda v, y: znp.dot(v, v) if v.ndim == 0 else
                    znp.dot(v, v[::-1]) if v.ndim == 1 else
                    znp.dot(v, znp.swapaxes(v, -1, -2))), False, False, False
        return (lambda v, y: znp.tensordot(v, v, axes=min(v.ndim, 2))), False, False, False
    b["self_products"] = self_products

    def y_products(draw, nd):
        kind = draw(st.sampled_from(["matmul", "einsum"]))
        if kind == "matmul":
            return (lambda v, y: v @ y), True, False, False
        return (lambda v, y: znp.einsum("...i,...i->...", v, znp.broadcast_to(y, v.shape)),
                True, False, False)
    b["y_products"] = y_products

    def swapaxes(draw, nd):
        if nd < 2:
            return None
        a1, a2 = _axis(draw, nd), _axis(draw, nd)
        return (lambda v, y: znp.swapaxes(v, a1, a2)), False, False, True
    b["swapaxes"] = swapaxes
    return b


_OPS = _op_builders()
_OP_NAMES = sorted(_OPS)


@st.composite
def vmap_cases(draw):
    dtype = np.dtype(draw(st.sampled_from([np.float64, np.float32, np.int64])))
    x_shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    k = draw(st.integers(0, len(x_shape)))
    y_shape = tuple(draw(st.sampled_from([1, s])) for s in x_shape[len(x_shape) - k:])
    y_dtype = np.dtype(draw(st.sampled_from([dtype, np.float64, np.float32])))
    size = draw(st.integers(1, 4))
    ax_x = draw(st.none() | st.integers(-(len(x_shape) + 1), len(x_shape)))
    ax_y = draw(st.none() | st.integers(-(len(y_shape) + 1), len(y_shape)))

    def batched(shape, ax, dt):
        full = shape if ax is None else shape[:ax % (len(shape) + 1)] + (size,) + \
            shape[ax % (len(shape) + 1):]
        vals = st.integers(-4, 4).map(lambda i: i / 2)
        if dt.kind == "i":
            vals = st.integers(-3, 3)
        return draw(hnp.arrays(dt, full, elements=vals))

    xb, yb = batched(x_shape, ax_x, dtype), batched(y_shape, ax_y, y_dtype)
    x0, y0 = _take(xb, 0, ax_x), _take(yb, 0, ax_y)

    # Draw the chain of operations, keeping only those that apply to the example.
    steps, names, v, exact, uses_y = [], [], znp.asarray(x0), True, False
    # Op names come from a seeded Random (uniform over the pool: hypothesis's own choices
    # strongly prefer the first names and repeat seeds); their parameters are drawn by
    # hypothesis.  The seed mixes in the shapes and axes so that programs vary.
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rnd = random.Random(f"{seed}/{x_shape}/{y_shape}/{dtype}/{y_dtype}/{ax_x}/{ax_y}/{size}")
    for _ in range(rnd.randint(1, 6)):
        for name in rnd.sample(_OP_NAMES, 8):
            built = _OPS[name](draw, v.ndim)
            if built is None:
                continue
            fn, needs_y, needs_exact, keeps_exact = built
            if needs_exact and not (exact or v.dtype.kind in "biu"):
                continue
            try:
                new_v = fn(v, znp.asarray(y0))
            except errors.ZeraxError:
                continue
            if new_v.size > 400:
                continue
            steps.append(fn)
            names.append(name)
            exact = exact and (keeps_exact or new_v.dtype.kind in "biu")
            uses_y |= needs_y
            v = new_v
            break

    def body(x, y):
        v = x
        for fn in steps:
            v = fn(v, y)
        return v

    v_mapped = ax_x is not None or (uses_y and ax_y is not None)
    out_kind = draw(st.sampled_from(["single", "tuple", "dict"]))
    extras = draw(st.sampled_from(["y", "const", "sum"]))
    extra_mapped = {"y": ax_y is not None, "const": False, "sum": v_mapped}[extras]

    def extra(v, y):
        if extras == "y":
            return znp.cos(y) * 2
        if extras == "const":
            return znp.ones(2, dtype=np.float32)
        return znp.sum(v)

    if out_kind == "single":
        prog = body
    elif out_kind == "tuple":
        def prog(x, y):
            v = body(x, y)
            return v, extra(v, y)
    else:
        def prog(x, y):
            v = body(x, y)
            return {"a": v, "b": [extra(v, y)]}  # leaves in the order v, extra

    out0 = prog(x0, y0)
    ranks = [np.ndim(o) for o in tree_leaves(out0)]
    mapped = [v_mapped] if out_kind == "single" else [v_mapped, extra_mapped]

    def out_axis(rank, is_mapped):
        choice = st.integers(-(rank + 1), rank)
        return draw(choice if is_mapped else st.none() | choice)

    leaf_axes = [out_axis(r, m) for r, m in zip(ranks, mapped)]
    if out_kind == "single":
        out_axes = leaf_axes[0]
    elif draw(st.booleans()) and not any(a is None for a in leaf_axes):
        common = draw(st.integers(-(min(ranks) + 1), min(ranks)))
        out_axes, leaf_axes = common, [common] * len(ranks)
    elif out_kind == "tuple":
        out_axes = tuple(leaf_axes)
    else:
        out_axes = {"a": leaf_axes[0], "b": [leaf_axes[1]]}

    call = draw(st.sampled_from(["tuple", "dict", "int"]))
    if call == "int" and ax_x != ax_y:
        call = "tuple"
    axis_size = size if (ax_x is None and ax_y is None) or draw(st.booleans()) else None
    return {"prog": prog, "xb": xb, "yb": yb, "ax_x": ax_x, "ax_y": ax_y,
            "out_axes": out_axes, "leaf_axes": leaf_axes, "call": call,
            "axis_size": axis_size, "size": size, "dtype": dtype, "ops": names}


@settings(max_examples=30, deadline=None)
@given(vmap_cases())
def test_vmap_of_random_programs_equals_stacked_loop(case):
    prog, xb, yb = case["prog"], case["xb"], case["yb"]
    ax_x, ax_y, size = case["ax_x"], case["ax_y"], case["size"]
    want = loop_reference(prog, (xb, yb), [ax_x, ax_y], case["leaf_axes"], size=size)
    kw = {"out_axes": case["out_axes"], "axis_size": case["axis_size"]}
    if case["call"] == "tuple":
        got = zx.vmap(prog, in_axes=(ax_x, ax_y), **kw)(xb, yb)
    elif case["call"] == "int":
        got = zx.vmap(prog, in_axes=ax_x, **kw)(xb, yb)
    else:
        got = zx.vmap(lambda d: prog(d["x"], d["y"]), in_axes=({"x": ax_x, "y": ax_y},),
                      **kw)({"x": xb, "y": yb})
    rtol = max(_tol(case["dtype"]), _tol(yb.dtype))
    assert_tree_close(got, want, rtol=rtol, atol=rtol)


# A systematic sweep: every op of a fixed list, on a rank-3 example (2, 3, 4) with a second
# operand y (3, 4), at every batch position of x and with y mapped or not.

_W34 = _const((4, 2)) + 0.25
_SWEEP = {
    "sin_add": lambda v, y: znp.sin(v) + y,
    "mul_div": lambda v, y: v * y / (1 + y * y),
    "atan2": lambda v, y: znp.arctan2(v, y),
    "max_min": lambda v, y: znp.maximum(v, y) - znp.minimum(v, 2 * y),
    "where": lambda v, y: znp.where(v > y, v, 1.0),
    "select": lambda v, y: znp.select([v > 0.5, y < 0], [v, y], -1.0),
    "clip_mapped_bound": lambda v, y: znp.clip(v, y, 1.0),
    "scalar_y": lambda v, y: v * y[1, 2],
    "sum0": lambda v, y: znp.sum(v, axis=0),
    "sum1_keep": lambda v, y: znp.sum(v, axis=1, keepdims=True),
    "sum_all": lambda v, y: znp.sum(v),
    "sum02": lambda v, y: znp.sum(v, axis=(0, -1)),
    "max1": lambda v, y: znp.max(v, axis=1),
    "min_neg": lambda v, y: znp.min(v, axis=-1, keepdims=True),
    "prod2": lambda v, y: znp.prod(v, axis=2),
    "mean01": lambda v, y: znp.mean(v, axis=(0, 1)),
    "var1": lambda v, y: znp.var(v, axis=1),
    "argmax1": lambda v, y: znp.argmax(v, axis=1),
    "argmin0": lambda v, y: znp.argmin(v, axis=0),
    "argmax_all": lambda v, y: znp.argmax(v),
    "any2": lambda v, y: znp.any(v > 0.5, axis=2),
    "cumsum0": lambda v, y: znp.cumsum(v, axis=0),
    "cumsum_neg": lambda v, y: znp.cumsum(v, axis=-1),
    "cumprod1": lambda v, y: znp.cumprod(v, axis=1),
    "cumsum_flat": lambda v, y: znp.cumsum(v),
    "sort0": lambda v, y: znp.sort(v, axis=0),
    "sort_neg": lambda v, y: znp.sort(v, axis=-1),
    "argsort1": lambda v, y: znp.argsort(v, axis=1),
    "reshape": lambda v, y: znp.reshape(v, (4, 6)),
    "ravel": lambda v, y: znp.ravel(v),
    "transpose": lambda v, y: znp.transpose(v, (2, 0, 1)),
    "moveaxis": lambda v, y: znp.moveaxis(v, 0, -1),
    "swapaxes": lambda v, y: znp.swapaxes(v, 0, 1),
    "expand_squeeze": lambda v, y: znp.squeeze(znp.expand_dims(v, 2) * 2, 2),
    "expand_neg": lambda v, y: znp.expand_dims(v, -1),
    "broadcast_to": lambda v, y: znp.broadcast_to(v[:, :1], (7, 2, 3, 4)),
    "concat0": lambda v, y: znp.concatenate([v, -v], axis=0),
    "concat_y": lambda v, y: znp.concatenate([v[0], y], axis=1),
    "stack_y": lambda v, y: znp.stack([v[1], y], axis=-1),
    "flip": lambda v, y: znp.flip(v, axis=1),
    "pad": lambda v, y: znp.pad(v, ((0, 0), (1, 2), (0, 1))),
    "lax_pad_mapped_value": lambda v, y: lax.pad(v[0], y[0, 0], ((1, 0, 1), (0, 2, 0))),
    "slices": lambda v, y: v[1:, ::2, ::-1],
    "int_index": lambda v, y: v[..., 0] + v[0, :, 1][None, :],
    "newaxis": lambda v, y: v[None, :, 1],
    "gather": lambda v, y: v[:, np.array([0, 2, 2])],
    "take": lambda v, y: znp.take(v, np.array([3, 0]), axis=-1),
    "roll": lambda v, y: znp.roll(v, 1, axis=1),
    "tile_repeat": lambda v, y: znp.repeat(znp.tile(v, (1, 2, 1)), 2, axis=0),
    "tril": lambda v, y: znp.tril(v),
    "diagonal": lambda v, y: znp.diagonal(v, axis1=1, axis2=2),
    "matmul_const": lambda v, y: v @ _W34,
    "const_matmul": lambda v, y: _W34.T @ v[0].T,
    "matmul_y": lambda v, y: v @ y.T,
    "matvec_y": lambda v, y: v @ y[0],
    "gram": lambda v, y: v @ znp.swapaxes(v, -1, -2),
    "einsum": lambda v, y: znp.einsum("ijk,jk->ij", v, y),
    "einsum_outer": lambda v, y: znp.einsum("ij,k->ikj", y, v[0, 0]),
    "tensordot": lambda v, y: znp.tensordot(v, y, axes=2),
    "dot": lambda v, y: znp.dot(v, y[0]),
    "outer": lambda v, y: znp.outer(v[0, 0], y[1]),
    "dynamic_slice": lambda v, y: lax.dynamic_slice(v, (0, 1, 1), (2, 2, 2)),
    "dynamic_update_slice": lambda v, y: lax.dynamic_update_slice(v, y[None, :2, :2], (1, 1, 2)),
    "at_set": lambda v, y: znp.asarray(v).at[:, 1].set(y[0]),
    "at_add": lambda v, y: znp.asarray(v).at[0, np.array([0, 0, 2])].add(y[0]),
}


@pytest.mark.parametrize("name", sorted(_SWEEP))
def test_each_op_under_vmap_at_every_batch_position(name):
    f = _SWEEP[name]
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    x, y = rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 4))
    n = 5
    for ax_x in (0, 1, 2, -1, None):
        for ax_y in (None, 1):
            if ax_x is None and ax_y is None:
                continue
            xb = x if ax_x is None else np.stack([x * (i + 1) - i for i in range(n)], ax_x)
            yb = y if ax_y is None else np.stack([y + i for i in range(n)], ax_y)
            for out_axes in (0, -1):
                want = loop_reference(f, (xb, yb), [ax_x, ax_y], out_axes)
                got = zx.vmap(f, in_axes=(ax_x, ax_y), out_axes=out_axes)(xb, yb)
                assert_tree_close(got, want, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- 2. axes, pytrees


def test_nested_vmap_with_different_axes():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4, 5))      # outer over axis 0, inner over the last axis
    b = rng.normal(size=(6, 2, 3))      # outer over axis 2, inner unmapped
    f = lambda u, w: znp.tanh(znp.sum(u) * w) + u[0]
    inner = zx.vmap(f, in_axes=(-1, None), out_axes=1)
    got = zx.vmap(inner, in_axes=(0, 2), out_axes=-1)(a, b)
    want = np.empty((6, 5, 2, 3))
    for i in range(3):
        w = b[:, :, i]
        for j in range(5):
            want[:, j, :, i] = np.tanh(a[i, :, j].sum() * w) + a[i, 0, j]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # the same through the generic loop reference, one level at a time
    inner_ref = lambda u, w: loop_reference(f, (u, w), [-1, None], 1)
    np.testing.assert_allclose(got, loop_reference(inner_ref, (a, b), [0, 2], -1), rtol=1e-12)


def test_nested_vmap_closing_over_the_outer_batched_value():
    xs, ys = np.arange(3.0), np.arange(4.0) / 4
    got = zx.vmap(lambda x: zx.vmap(lambda y: znp.sin(x * y) + x)(ys))(xs)
    np.testing.assert_allclose(got, np.sin(xs[:, None] * ys) + xs[:, None], rtol=1e-14)
    # an inner output that varies only over the outer batch is broadcast by the inner vmap
    got = zx.vmap(lambda x: zx.vmap(lambda y: 2 * x, out_axes=0)(ys), out_axes=1)(xs)
    np.testing.assert_array_equal(got, np.broadcast_to(2 * xs, (4, 3)))


def test_vmap_pytree_in_axes_prefix_dicts_and_tuples():
    rng = np.random.default_rng(1)
    params = {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=(5, 2))}
    data = (rng.normal(size=(3, 5)), rng.normal(size=(2,)))

    def f(p, d):
        x, shift = d
        return {"out": znp.tanh(x @ p["w"] + p["b"]) + shift, "n": znp.sum(x)}

    in_axes = ({"w": None, "b": 0}, (1, None))
    got = zx.vmap(f, in_axes=in_axes)(params, data)
    want = loop_reference(f, (params, data), [0, None, 1, None])   # leaves: b, w, x, shift
    assert_tree_close(got, want, rtol=1e-12)
    # A single axis for a whole subtree, out_axes as a prefix of the output.
    bigger = {"w": params["w"], "b": params["b"][0]}
    got = zx.vmap(f, in_axes=(None, (1, None)), out_axes={"out": 1, "n": 0})(bigger, data)
    want = loop_reference(f, (bigger, data), [None, None, 1, None], [0, 1])  # leaves n, out
    assert_tree_close(got, want, rtol=1e-12)
    # one integer for a whole tuple subtree maps every leaf in it
    data2 = (data[0].T, rng.normal(size=(5, 2)))
    got = zx.vmap(f, in_axes=(None, 0), out_axes=-1)(bigger, data2)
    want = loop_reference(f, (bigger, data2), [None, None, 0, 0], -1)
    assert_tree_close(got, want, rtol=1e-12)
    # in_axes given as a list is the tuple of per-argument axes, as in JAX
    got = zx.vmap(f, in_axes=[{"w": None, "b": 0}, (1, None)])(params, data)
    assert_tree_close(got, loop_reference(f, (params, data), [0, None, 1, None]), rtol=1e-12)


def test_vmap_with_none_leaves_and_none_arguments():
    x = np.arange(6.0).reshape(3, 2)
    got = zx.vmap(lambda a, cfg: a * 2 if cfg is None else a, in_axes=(0, None))(x, None)
    np.testing.assert_array_equal(got, 2 * x)
    assert zx.vmap(lambda a: None)(x) is None


def test_axis_size_with_all_in_axes_none():
    w = np.array([1.0, 2.0])
    got = zx.vmap(lambda v: znp.sin(v), in_axes=None, axis_size=4)(w)
    assert got.shape == (4, 2) and got.dtype == np.float64
    np.testing.assert_array_equal(got, np.broadcast_to(np.sin(w), (4, 2)))
    got = zx.vmap(lambda: znp.arange(3), axis_size=2, out_axes=1)()
    np.testing.assert_array_equal(got, np.broadcast_to(np.arange(3)[:, None], (3, 2)))
    assert got.dtype == np.int64
    got = zx.vmap(lambda v: v * 2, in_axes=0, axis_size=3)(np.arange(3.0))
    np.testing.assert_array_equal(got, [0.0, 2.0, 4.0])


def test_kwargs_are_mapped_over_axis_0():
    # JAX's rule: in_axes names the positional arguments; every leaf of a keyword argument
    # maps over its leading axis (values recorded from jax.vmap).
    xs = np.arange(6.0).reshape(3, 2)
    scales = np.array([[10.0, 100.0], [1.0, 2.0], [3.0, 4.0]])
    got = zx.vmap(lambda x, *, scale: x * scale)(xs, scale=scales)
    np.testing.assert_array_equal(got, xs * scales)
    got = zx.vmap(lambda x, s=1.0: x + s, in_axes=1)(xs, s=np.ones(2))
    np.testing.assert_array_equal(got, [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])
    # in_axes=None leaves the positional argument whole; the keyword pytree is mapped.
    got = zx.vmap(lambda x, d: x * d["a"] + d["b"], in_axes=None)(
        xs, d={"a": np.arange(3.0), "b": np.ones((3, 1))})
    np.testing.assert_array_equal(got, [xs * a + 1.0 for a in range(3)])
    # an unmapped value goes through functools.partial, as in JAX
    got = zx.vmap(functools.partial(lambda x, *, scale: x * scale, scale=scales[0]))(xs)
    np.testing.assert_array_equal(got, xs * scales[0])


def test_kwargs_mapped_keys_match_the_loop():
    # The Equinox idiom: vmap(partial(model, ...))(images, key=keys).
    keys = zx.random.split(zx.random.PRNGKey(0), 4)
    xs = np.arange(8.0).reshape(4, 2)

    def noisy(x, *, key, scale):
        return x + scale * zx.random.normal(key, x.shape)

    f = functools.partial(noisy, scale=0.5)
    got = zx.vmap(f)(xs, key=keys)
    want = np.stack([np.asarray(f(xs[i], key=keys[i])) for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-15)
    got_jit = zx.jit(zx.vmap(f))(xs, key=keys)
    np.testing.assert_allclose(got_jit, want, rtol=1e-15)


def test_kwargs_mapped_errors():
    xs = np.arange(6.0).reshape(3, 2)
    with pytest.raises(errors.ZeraxValueError, match="keyword-argument leaf 0.*rank 0"):
        zx.vmap(lambda x, s: x * s)(xs, s=2.0)
    with pytest.raises(errors.ZeraxValueError, match="inconsistent sizes"):
        zx.vmap(lambda x, s: x * s)(xs, s=np.ones(4))


def test_out_axes_none_for_unbatched_outputs_and_dtypes_preserved():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    w = np.ones(2, np.float64)
    a, b = zx.vmap(lambda u, v: (u * 2, v + 1), in_axes=(0, None), out_axes=(0, None))(x, w)
    assert a.dtype == np.float32 and a.shape == (3, 2)
    assert b.dtype == np.float64 and b.shape == (2,)
    i = zx.vmap(lambda u: znp.argmax(u))(x)
    assert i.dtype == np.int64 and list(_np(i)) == [1, 1, 1]
    m = zx.vmap(lambda u: u > 2)(x)
    assert m.dtype == np.bool_


# --------------------------------------------------------------------------- 3. with autodiff


def _mlp(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(m, n)) / np.sqrt(m), 0.1 * rng.normal(size=n))
            for m, n in itertools.pairwise(sizes)]


def _predict(params, x):
    h = x
    for w, b in params[:-1]:
        h = znp.tanh(h @ w + b)
    w, b = params[-1]
    return h @ w + b


def _loss(params, x, y):
    return znp.sum((_predict(params, x) - y) ** 2)


def test_per_example_gradients_of_an_mlp_match_a_loop():
    params = _mlp([4, 8, 8, 2])
    rng = np.random.default_rng(2)
    xs, ys = rng.normal(size=(6, 4)), rng.normal(size=(6, 2))
    got = zx.vmap(zx.grad(_loss), in_axes=(None, 0, 0))(params, xs, ys)
    want = loop_reference(zx.grad(_loss), (params, xs, ys),
                          [None] * 6 + [0, 0])
    assert_tree_close(got, want, rtol=1e-11, atol=1e-12)
    # the batch axis can sit anywhere
    got_t = zx.vmap(zx.grad(_loss), in_axes=(None, 1, 0), out_axes=-1)(params, xs.T, ys)
    assert_tree_close(got_t, tree_map(lambda a: np.moveaxis(_np(a), 0, -1), want),
                      rtol=1e-11, atol=1e-12)


def test_grad_of_a_function_that_uses_vmap():
    params = _mlp([3, 5, 1], seed=3)
    rng = np.random.default_rng(3)
    xs, ys = rng.normal(size=(7, 3)), rng.normal(size=(7, 1))

    def batch_loss(p):
        return znp.mean(zx.vmap(_loss, in_axes=(None, 0, 0))(p, xs, ys))

    got = zx.grad(batch_loss)(params)
    per = [zx.grad(_loss)(params, xs[i], ys[i]) for i in range(7)]
    want = tree_map(lambda *gs: np.mean([_np(g) for g in gs], axis=0), *per)
    assert_tree_close(got, want, rtol=1e-11, atol=1e-12)
    # and with respect to the mapped inputs: the gradient of each example's row
    gx = zx.grad(lambda x: znp.sum(zx.vmap(_loss, in_axes=(None, 0, 0))(params, x, ys)))(xs)
    want_x = np.stack([_np(zx.grad(_loss, argnums=1)(params, xs[i], ys[i])) for i in range(7)])
    np.testing.assert_allclose(gx, want_x, rtol=1e-11, atol=1e-12)


def test_jvp_of_vmap_and_vmap_of_jvp():
    rng = np.random.default_rng(4)
    xs, ts = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    w = rng.normal(size=(3, 3))
    f = lambda x: znp.tanh(x @ w) * znp.sum(x ** 2)
    y, t = zx.jvp(zx.vmap(f), (xs,), (ts,))
    pairs = [zx.jvp(f, (xs[i],), (ts[i],)) for i in range(5)]
    np.testing.assert_allclose(y, np.stack([_np(p[0]) for p in pairs]), rtol=1e-13)
    np.testing.assert_allclose(t, np.stack([_np(p[1]) for p in pairs]), rtol=1e-12)
    y2, t2 = zx.vmap(lambda x, tx: zx.jvp(f, (x,), (tx,)))(xs, ts)
    np.testing.assert_allclose(y2, y, rtol=1e-13)
    np.testing.assert_allclose(t2, t, rtol=1e-12)
    # one tangent for the whole batch (in_axes None on the tangent)
    _, t3 = zx.vmap(lambda x, tx: zx.jvp(f, (x,), (tx,)), in_axes=(0, None))(xs, ts[0])
    want3 = np.stack([_np(zx.jvp(f, (xs[i],), (ts[0],))[1]) for i in range(5)])
    np.testing.assert_allclose(t3, want3, rtol=1e-12)


def test_vmap_of_vmap_of_grad():
    rng = np.random.default_rng(5)
    xs = rng.normal(size=(3, 4, 2))
    f = lambda x: znp.sum(znp.sin(x) * x[::-1]) ** 2
    got = zx.vmap(zx.vmap(zx.grad(f), in_axes=1), in_axes=0)(np.swapaxes(xs, 1, 2))
    want = np.stack([np.stack([_np(zx.grad(f)(xs[i, j])) for j in range(4)])
                     for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # grad of grad under vmap (second derivatives per example)
    g2 = zx.vmap(zx.grad(zx.grad(lambda s: znp.sin(s) * s ** 2)))(xs[:, 0, 0])
    s = xs[:, 0, 0]
    np.testing.assert_allclose(g2, -s ** 2 * np.sin(s) + 4 * s * np.cos(s) + 2 * np.sin(s),
                               rtol=1e-12)


def test_check_grads_through_vmap_to_second_order():
    from zerax.test_util import check_grads
    rng = np.random.default_rng(8)
    xs, w = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    f = zx.vmap(lambda x, v: znp.tanh(x @ v) * znp.sum(x ** 2), in_axes=(0, None))
    check_grads(f, (xs, w), order=2, modes=("fwd", "rev"))
    g = zx.vmap(lambda x, v: znp.sin(x) * v, in_axes=(1, None), out_axes=1)
    check_grads(g, (xs, rng.normal(size=4)), order=2, modes=("fwd", "rev"))


# --------------------------------------------------------------------------- 4. custom rules


@zx.custom_jvp
def _cj(x):
    return znp.sin(x)


@_cj.defjvp
def _cj_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _cj(x), 2.0 * x * t          # deliberately not cos(x): we can see the rule is used


@zx.custom_vjp
def _cv(x, y):
    return znp.sin(x) * y


def _cv_fwd(x, y):
    return _cv(x, y), (x, y)


def _cv_bwd(res, g):
    x, y = res
    return 3.0 * x * y * g, 5.0 * g      # deliberately not the true derivative


_cv.defvjp(_cv_fwd, _cv_bwd)


class _Cube(zx.Function):
    def forward(self, x, y):
        return x ** 3 * y

    def backward(self, gy):
        x, _ = self.inputs
        return 7.0 * x * gy, -1.0 * gy  # deliberately not the true derivative


_cube = _Cube()
_ckpt = zx.checkpoint(lambda x, y: znp.sin(znp.cos(x)) * y)

# (function of (x, y), its value, d/dx as the rules define it, d/dy likewise)
_CUSTOM = {
    "custom_jvp": (lambda x, y: _cj(x) * y, lambda x, y: np.sin(x) * y,
                   lambda x, y: 2 * x * y, lambda x, y: np.sin(x)),
    "custom_vjp": (_cv, lambda x, y: np.sin(x) * y, lambda x, y: 3 * x * y,
                   lambda x, y: 5.0 + 0 * x),
    "Function": (_cube, lambda x, y: x ** 3 * y, lambda x, y: 7 * x + 0 * y,
                 lambda x, y: -1.0 + 0 * x),
    "checkpoint": (_ckpt, lambda x, y: np.sin(np.cos(x)) * y,
                   lambda x, y: -np.cos(np.cos(x)) * np.sin(x) * y,
                   lambda x, y: np.sin(np.cos(x))),
}


@pytest.mark.parametrize("name", sorted(_CUSTOM))
@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (1, 0)])
def test_custom_rules_checkpoint_and_function_under_vmap(name, in_axes):
    fn, val, dx, dy = _CUSTOM[name]
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    xa = {0: x, None: x[0], 1: x.T}[in_axes[0]]
    ya = {0: y, None: y[0]}[in_axes[1]]
    ex = lambda i: (x[i] if in_axes[0] is not None else x[0],
                    y[i] if in_axes[1] is not None else y[0])
    got = zx.vmap(fn, in_axes=in_axes)(xa, ya)
    assert isinstance(got, zx.Array)
    np.testing.assert_allclose(got, np.stack([val(*ex(i)) for i in range(4)]), rtol=1e-12)
    np.testing.assert_allclose(got, loop_reference(fn, (xa, ya), list(in_axes)), rtol=1e-14)

    # grad of vmap: d/dx and d/dy of sum(c * vmap(fn)(x, y))
    c = np.arange(1.0, 13.0).reshape(4, 3)
    gx, gy = zx.grad(lambda a, b: znp.sum(c * zx.vmap(fn, in_axes=in_axes)(a, b)),
                     argnums=(0, 1))(xa, ya)
    wx = np.stack([c[i] * dx(*ex(i)) for i in range(4)])
    wy = np.stack([c[i] * dy(*ex(i)) for i in range(4)])
    wx = wx.T if in_axes[0] == 1 else (wx.sum(0) if in_axes[0] is None else wx)
    wy = wy.sum(0) if in_axes[1] is None else wy
    np.testing.assert_allclose(gx, wx, rtol=1e-12)
    np.testing.assert_allclose(gy, wy, rtol=1e-12)

    # vmap of grad, against the loop of grads
    g = zx.grad(lambda a, b: znp.sum(fn(a, b) * c[0]), argnums=(0, 1))
    got_g = zx.vmap(g, in_axes=in_axes)(xa, ya)
    assert_tree_close(got_g, loop_reference(g, (xa, ya), list(in_axes)), rtol=1e-12)


def test_custom_jvp_rule_is_used_by_forward_mode_under_vmap():
    xs = np.linspace(-1.0, 1.0, 5)
    _, t = zx.jvp(zx.vmap(_cj), (xs,), (np.ones(5),))
    np.testing.assert_allclose(t, 2 * xs, rtol=1e-14)
    t2 = zx.vmap(lambda x: zx.jvp(_cj, (x,), (1.0,))[1])(xs)
    np.testing.assert_allclose(t2, 2 * xs, rtol=1e-14)
    np.testing.assert_allclose(zx.vmap(zx.grad(zx.grad(_cj)))(xs), 2.0 + 0 * xs)
    # checkpoint: forward mode inside and outside vmap, and a batched closure
    f = zx.checkpoint(lambda a: znp.sin(a) * a)
    _, t = zx.jvp(zx.vmap(f), (xs,), (np.ones(5),))
    np.testing.assert_allclose(t, np.cos(xs) * xs + np.sin(xs), rtol=1e-13)
    v = np.array([0.5, -2.0])
    got = zx.vmap(zx.grad(lambda x: znp.sum(zx.checkpoint(lambda w: znp.sin(w * x))(v))))(xs)
    np.testing.assert_allclose(got, np.cos(xs[:, None] * v) @ v, rtol=1e-13)


# --------------------------------------------------------------------------- 5. Jacobians


def numerical_jacobian(f, x, eps=1e-6):
    """Central differences of ``f`` at the float64 array ``x``: out.shape + x.shape."""
    x = np.asarray(x, np.float64)
    y0 = _np(f(x))
    jac = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        jac[(...,) + idx] = (_np(f(x + e)) - _np(f(x - e))) / (2 * eps)
    return jac


def _fun_pool():
    w = _const((3, 2)) + 0.3
    return {
        "vec->vec": lambda x: znp.tanh(x) * znp.sum(x ** 2),
        "vec->mat": lambda x: znp.outer(znp.sin(x), x[::-1]),
        "vec->scalar": lambda x: znp.sum(znp.exp(znp.tanh(x)) * x),
        "mat->vec": lambda x: znp.sum(znp.cos(x), axis=0) * x[0],
        "mat->mat": lambda x: znp.tanh(x.T @ x),
        "matmul": lambda x: znp.sin(x @ w),
    }


_FUNS = _fun_pool()


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(_FUNS)),
       x=hnp.arrays(np.float64, st.sampled_from([(3,), (2, 3), (3, 3)]),
                    elements=st.floats(-1.5, 1.5, allow_subnormal=False)))
def test_jacfwd_jacrev_match_finite_differences_and_each_other(name, x):
    f = _FUNS[name]
    jf, jr = zx.jacfwd(f)(x), zx.jacrev(f)(x)
    want = numerical_jacobian(f, x)
    assert jf.shape == jr.shape == want.shape
    assert jf.dtype == jr.dtype == np.float64
    np.testing.assert_allclose(jf, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(jr, jf, rtol=1e-12, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(x=hnp.arrays(np.float64, st.integers(1, 4),
                    elements=st.floats(-1.5, 1.5, allow_subnormal=False)))
def test_hessian_matches_closed_form_and_finite_differences(x):
    f = lambda v: znp.sum(znp.sin(v) * v[0]) + znp.sum(v ** 3) * znp.sum(v)
    h = zx.hessian(f)(x)
    n = x.size
    # closed form: f = x0 * S + C * T with S = sum sin, C = sum v^3, T = sum v
    want = np.zeros((n, n))
    want[0, :] += np.cos(x)
    want[:, 0] += np.cos(x)
    want[np.diag_indices(n)] += -x[0] * np.sin(x)
    want += 3 * x[:, None] ** 2 + 3 * x[None, :] ** 2
    want[np.diag_indices(n)] += 6 * x * x.sum()
    assert h.shape == (n, n) and h.dtype == np.float64
    np.testing.assert_allclose(h, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(h, numerical_jacobian(zx.grad(f), x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(h, zx.jacrev(zx.jacfwd(f))(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h, zx.jacfwd(zx.jacfwd(f))(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("jac", [zx.jacfwd, zx.jacrev], ids=["jacfwd", "jacrev"])
def test_jacobian_of_pytrees_has_output_outer_input_inner_structure(jac):
    d = {"a": np.array([0.3, -0.7, 1.1]), "b": np.array([[0.5, 1.0, -1.5], [2.0, 0.1, 0.2]])}

    def f(d):
        return {"s": znp.sum(d["a"] * d["b"][0]), "v": (d["a"] * 2.0, znp.sin(d["b"]))}

    got = jac(f)(d)
    assert tree_structure(got) == tree_structure(
        {"s": {"a": 0, "b": 0}, "v": ({"a": 0, "b": 0}, {"a": 0, "b": 0})})
    out0 = f(d)
    for out_key, out_leaf, block in [("s", out0["s"], got["s"]),
                                     ("v0", out0["v"][0], got["v"][0]),
                                     ("v1", out0["v"][1], got["v"][1])]:
        for in_key in ("a", "b"):
            assert block[in_key].shape == tuple(out_leaf.shape) + d[in_key].shape, \
                (out_key, in_key)

            def partial(z, in_key=in_key, out_key=out_key):
                dd = dict(d)
                dd[in_key] = z
                o = f(dd)
                return {"s": o["s"], "v0": o["v"][0], "v1": o["v"][1]}[out_key]

            np.testing.assert_allclose(block[in_key], numerical_jacobian(partial, d[in_key]),
                                       rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got["v"][0]["a"], 2 * np.eye(3))
    np.testing.assert_array_equal(got["v"][0]["b"], np.zeros((3, 2, 3)))


@pytest.mark.parametrize("jac", [zx.jacfwd, zx.jacrev], ids=["jacfwd", "jacrev"])
def test_jacobian_argnums_tuple_and_has_aux(jac):
    a, b = np.array([0.5, -1.0]), np.array([2.0, 0.25, -0.5])
    f = lambda u, v: znp.outer(znp.sin(u), v ** 2)
    ja, jb = jac(f, argnums=(0, 1))(a, b)
    assert ja.shape == (2, 3, 2) and jb.shape == (2, 3, 3)
    np.testing.assert_allclose(ja, numerical_jacobian(lambda u: f(u, b), a), atol=1e-7)
    np.testing.assert_allclose(jb, numerical_jacobian(lambda v: f(a, v), b), atol=1e-7)
    single = jac(f, argnums=1)(a, b)
    assert isinstance(single, zx.Array)
    np.testing.assert_allclose(single, jb, rtol=1e-14)
    (jt,) = jac(f, argnums=(1,))(a, b)
    np.testing.assert_allclose(jt, jb, rtol=1e-14)

    def g(u, v):
        return znp.tanh(u) * znp.sum(v), {"norm": znp.sum(u ** 2), "v": v}

    (ju, jv), aux = jac(g, argnums=(0, 1), has_aux=True)(a, b)
    assert float(aux["norm"]) == pytest.approx(float(np.sum(a ** 2)))
    np.testing.assert_array_equal(aux["v"], b)
    np.testing.assert_allclose(ju, np.diag((1 - np.tanh(a) ** 2) * b.sum()), rtol=1e-13)
    np.testing.assert_allclose(jv, np.tanh(a)[:, None] * np.ones((2, 3)), rtol=1e-13)


def test_hessian_of_pytree_inputs_argnums_and_aux():
    a, b = np.array([0.5, -1.0]), np.array([2.0, 3.0])

    def f(u, v):
        return znp.sum(u ** 2 * v) + znp.sum(u) * znp.sum(v ** 3), {"u": u}

    (haa, hab), (hba, hbb) = zx.hessian(lambda u, v: f(u, v)[0], argnums=(0, 1))(a, b)
    np.testing.assert_allclose(haa, np.diag(2 * b), rtol=1e-13)
    np.testing.assert_allclose(hab, np.diag(2 * a) + 3 * b[None, :] ** 2, rtol=1e-13)
    np.testing.assert_allclose(hba, hab.T, rtol=1e-13)
    np.testing.assert_allclose(hbb, np.diag(6 * b * a.sum()), rtol=1e-13)
    h, aux = zx.hessian(f, has_aux=True)(a, b)
    np.testing.assert_allclose(h, haa, rtol=1e-13)
    np.testing.assert_array_equal(aux["u"], a)
    d = {"p": np.array([0.2, 0.4]), "q": np.array(1.5)}
    hd = zx.hessian(lambda t: t["q"] ** 2 * znp.sum(t["p"] ** 3))(d)
    assert tree_structure(hd) == tree_structure({"p": {"p": 0, "q": 0}, "q": {"p": 0, "q": 0}})
    np.testing.assert_allclose(hd["p"]["p"], np.diag(6 * d["p"] * 1.5 ** 2), rtol=1e-13)
    np.testing.assert_allclose(hd["p"]["q"], 2 * 1.5 * 3 * d["p"] ** 2, rtol=1e-13)
    np.testing.assert_allclose(hd["q"]["q"], 2 * np.sum(d["p"] ** 3), rtol=1e-13)
    assert hd["q"]["p"].shape == (2,) and hd["p"]["q"].shape == (2,)


def test_jacobians_of_scalars_float32_and_vmap_of_jacobians():
    assert float(zx.jacfwd(lambda s: s ** 3)(2.0)) == 12.0
    assert float(zx.jacrev(lambda s: s ** 3)(2.0)) == 12.0
    assert float(zx.hessian(lambda s: s ** 3)(2.0)) == 12.0
    x32 = np.array([1.0, 2.0], np.float32)
    for jac in (zx.jacfwd, zx.jacrev, zx.hessian):
        r = jac(lambda v: znp.sum(v ** 3) * v)(x32)
        assert r.dtype == np.float32
    xs = np.random.default_rng(7).normal(size=(4, 3))
    f = lambda v: znp.sin(v) * v[0]
    jf = zx.vmap(zx.jacfwd(f))(xs)
    jr = zx.vmap(zx.jacrev(f))(xs)
    want = np.stack([numerical_jacobian(f, x) for x in xs])
    np.testing.assert_allclose(jf, want, atol=1e-7)
    np.testing.assert_allclose(jr, jf, rtol=1e-13)
    with pytest.raises(errors.IntegerInputError):
        zx.jacfwd(lambda v: v * 2)(np.arange(3))
    with pytest.raises(errors.IntegerInputError):
        zx.jacrev(lambda v: v * 2)(np.arange(3))


# --------------------------------------------------------------------------- 6. errors


def test_inconsistent_mapped_sizes_name_the_leaves_and_sizes():
    with pytest.raises(errors.ZeraxValueError) as e:
        zx.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    msg = str(e.value)
    assert "3" in msg and "4" in msg and "leaves [0]" in msg and "leaves [1]" in msg
    with pytest.raises(errors.ZeraxValueError) as e:
        zx.vmap(lambda d: d["x"] + d["y"][0], in_axes=({"x": 0, "y": 1},))(
            {"x": np.ones(2), "y": np.ones((2, 5))})
    assert "5" in str(e.value) and "2" in str(e.value)
    with pytest.raises(errors.ZeraxValueError, match="size"):
        zx.vmap(lambda a: a, axis_size=5)(np.ones(3))


def test_out_axes_none_on_a_batched_output_is_an_error():
    with pytest.raises(errors.ZeraxValueError, match="out_axes=None"):
        zx.vmap(lambda a: a * 2, out_axes=None)(np.ones(3))
    with pytest.raises(errors.ZeraxValueError, match="out_axes=None"):
        zx.vmap(lambda a, b: (b, a), in_axes=(0, None), out_axes=(None, None))(
            np.ones(3), np.ones(2))


def test_in_axes_and_out_axes_out_of_range():
    x = np.ones((2, 3))
    for ax in (2, -3, 5):
        with pytest.raises(errors.ZeraxValueError, match="out of range"):
            zx.vmap(lambda a: a, in_axes=ax)(x)
    with pytest.raises(errors.ZeraxValueError, match="out of range"):
        zx.vmap(lambda a: a)(3.0)                    # a scalar has no axis to map
    for ax in (2, -3):
        with pytest.raises(errors.ZeraxValueError, match="out of range"):
            zx.vmap(lambda a: a, out_axes=ax)(np.ones(3))


def test_in_axes_tree_that_does_not_match_the_arguments():
    x = np.ones((2, 3))
    with pytest.raises(errors.ZeraxValueError):
        zx.vmap(lambda a, b: a + b, in_axes=(0,))(x, x)
    with pytest.raises(errors.ZeraxValueError):
        zx.vmap(lambda a, b: a + b, in_axes=(0, 0, 0))(x, x)
    with pytest.raises(errors.ZeraxValueError, match="prefix"):
        zx.vmap(lambda d: d["x"], in_axes=({"y": 0},))({"x": x})
    with pytest.raises(errors.ZeraxValueError, match="prefix"):
        zx.vmap(lambda t: t[0], in_axes=((0, 0, 0),))((x, x))
    with pytest.raises(errors.ZeraxValueError, match="prefix"):
        zx.vmap(lambda a: (a, a), out_axes=(0, 0, 0))(x)
    with pytest.raises(errors.ZeraxTypeError):
        zx.vmap(lambda a: a, in_axes=1.5)(x)
    with pytest.raises(errors.ZeraxTypeError):
        zx.vmap(lambda a: a, in_axes=("0",))(x)
    with pytest.raises(errors.ZeraxValueError, match="at least one mapped"):
        zx.vmap(lambda a: a, in_axes=None)(x)


def test_python_control_flow_on_batched_values_is_a_concretization_error():
    with pytest.raises(errors.ConcretizationError):
        zx.vmap(lambda a: a if a > 0 else -a)(np.ones(3))
    with pytest.raises(errors.ConcretizationError):
        zx.vmap(lambda a: np.asarray(a))(np.ones(3))


# --------------------------------------------------------------------------- 7. structure


def _prims(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def test_batched_matmul_is_one_dot_general_and_unmapped_operands_stay_unmapped():
    w = _const((4, 2)) + 0.1
    xs = np.ones((5, 4))
    jx = zx.make_jaxpr(zx.vmap(lambda x: x @ w))(xs)
    assert _prims(jx) == ["dot_general"]
    assert tuple(jx.out_avals[0].shape) == (5, 2)
    jx = zx.make_jaxpr(zx.vmap(lambda x: x @ w, in_axes=1))(xs.T)
    assert _prims(jx).count("dot_general") == 1 and "transpose" not in _prims(jx)
    # the unmapped argument w is neither broadcast nor transposed, and a value computed
    # from it alone keeps its unbatched shape
    jx = zx.make_jaxpr(zx.vmap(lambda x, v: (x @ v, v * 2.0), in_axes=(0, None),
                               out_axes=(0, None)))(xs, w)
    assert sorted(_prims(jx)) == ["dot_general", "mul"]
    mul = next(e for e in jx.jaxpr.eqns if e.primitive.name == "mul")
    assert tuple(mul.outvars[0].aval.shape) == (4, 2)
    out = zx.vmap(lambda x, v: (x @ v, v * 2.0), in_axes=(0, None), out_axes=(0, None))(xs, w)
    np.testing.assert_allclose(out[0], xs @ w)
    np.testing.assert_allclose(out[1], 2 * w)


def test_elementwise_ops_keep_the_batch_axis_where_it_is():
    # x mapped on axis 1: elementwise work happens in place, one transpose at most (at the end)
    xs = np.ones((3, 5))
    jx = zx.make_jaxpr(zx.vmap(lambda x: znp.sin(x) * 2.0 + x, in_axes=1))(xs)
    assert _prims(jx).count("transpose") <= 1
    assert "broadcast_in_dim" not in _prims(jx)
    jx = zx.make_jaxpr(zx.vmap(lambda x: znp.sin(x) * 2.0 + x, in_axes=1, out_axes=1))(xs)
    assert "transpose" not in _prims(jx)


# --------------------------------------------------------------------------- bugs found
# Each test below failed when written; see the report that accompanied this file.


def test_jacfwd_of_an_integer_output_gives_zeros_of_the_output_dtype():
    # JAX: jacfwd(lambda a: (a ** 3, jnp.argmax(a)))(x)[1] is zeros of argmax's integer
    # dtype, shape out.shape + in.shape.  zerax returned an array of dtype `void`.
    _, j_int = zx.jacfwd(lambda a: (a ** 3, znp.argmax(a)))(np.ones(3))
    assert j_int.shape == (3,)
    assert np.dtype(j_int.dtype).kind in "iuf", j_int.dtype
    np.testing.assert_array_equal(_np(j_int).astype(np.float64), np.zeros(3))


def test_bool_in_axes_is_rejected_like_jax():
    # JAX: TypeError "vmap in_axes must be an int, None, or a tuple ...", got True.
    # zerax treated True as axis 1.
    with pytest.raises(errors.ZeraxTypeError):
        zx.vmap(lambda a: a, in_axes=True)(np.ones((2, 3)))


def test_jacfwd_has_aux_without_a_pair_raises_a_zerax_error():
    # jacrev says clearly "must return a pair (output, auxiliary data)" (ZeraxTypeError);
    # jacfwd let a raw builtins TypeError "iteration over a 0-d array" escape.
    with pytest.raises(errors.ZeraxTypeError):
        zx.jacfwd(lambda a: znp.sum(a * a), has_aux=True)(np.ones(3))
