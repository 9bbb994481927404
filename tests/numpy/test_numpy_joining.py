"""zerax.numpy joining and splitting (concatenate, stack, append, block, split, delete,
insert, ...) against NumPy 2: values, dtypes, errors, derivatives (check_grads) and tracing
(make_jaxpr)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import zerax.numpy as znp
from zerax import errors
from zerax.test_util import check_grads

from np_helpers import (  # noqa: E402 - shared test helpers
    SETTINGS, arrays, assert_same, assert_traced_matches, small_shapes,
)

# --------------------------------------------------------------------------- joining


@st.composite
def joinable(draw, min_n=1, max_n=4, stack=False):
    shape = draw(small_shapes(min_dims=0 if stack else 1, max_dims=3))
    axis = draw(st.integers(-len(shape) - (1 if stack else 0),
                            max(len(shape) - (0 if stack else 1), 0))) if shape or stack else 0
    n = draw(st.integers(min_n, max_n))
    xs = []
    for _ in range(n):
        s = list(shape)
        if not stack and s:
            s[axis] = draw(st.integers(0, 3))
        xs.append(draw(arrays(shape=tuple(s))))
    return xs, axis


@SETTINGS
@given(joinable())
def test_concatenate(args):
    xs, axis = args
    assert_same(znp.concatenate(xs, axis), np.concatenate(xs, axis))
    assert_same(znp.concat(xs, axis=axis), np.concat(xs, axis=axis))
    assert_same(znp.concatenate(xs, axis=None), np.concatenate(xs, axis=None))
    assert_same(znp.concatenate([znp.array(x) for x in xs], axis, dtype=np.float64),
                np.concatenate(xs, axis, dtype=np.float64))


@SETTINGS
@given(joinable(stack=True))
def test_stack_family(args):
    xs, axis = args
    assert_same(znp.stack(xs, axis), np.stack(xs, axis))
    for name in ("vstack", "hstack", "dstack", "column_stack"):
        try:
            want = getattr(np, name)(xs)
        except ValueError:
            with pytest.raises(errors.ShapeError):
                getattr(znp, name)(xs)
        else:
            assert_same(getattr(znp, name)(xs), want)
    if xs[0].ndim:
        assert_same(znp.unstack(xs[0], axis=axis % xs[0].ndim),
                    np.unstack(xs[0], axis=axis % xs[0].ndim))


def test_join_errors_and_promotion():
    with pytest.raises(errors.ShapeError):
        znp.concatenate([znp.ones((2, 3)), znp.ones((3, 2))])
    with pytest.raises(errors.ShapeError):
        znp.concatenate([znp.ones(2), znp.ones((1, 2))])
    with pytest.raises(errors.ShapeError):
        znp.concatenate([1.0, 2.0])
    with pytest.raises(errors.ShapeError):
        znp.concatenate([])
    with pytest.raises(errors.ShapeError):
        znp.stack([znp.ones(2), znp.ones(3)])
    with pytest.raises(errors.ZeraxTypeError):
        znp.concatenate([znp.ones(2), znp.ones(2)], dtype=np.int32)
    with pytest.raises(errors.NotSupportedError):
        znp.concatenate([znp.ones(2)], out=np.ones(2))
    xs = [np.int32([1, 2]), [3.5], np.uint8([4])]
    assert_same(znp.concatenate(xs), np.concatenate(xs))
    assert_same(znp.concatenate(np.ones((2, 3))), np.concatenate(np.ones((2, 3))))


@SETTINGS
@given(arrays(min_dims=1, max_dims=3), arrays(min_dims=0, max_dims=3), st.data())
def test_append(x, v, data):
    assert_same(znp.append(x, v), np.append(x, v))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    same = x.copy()
    assert_same(znp.append(x, same, axis=axis), np.append(x, same, axis=axis))


def test_block():
    a, b = np.eye(2), np.arange(2.0)
    c = np.int32([[7]])
    cases = [[a, a], [[a, a], [a, a]], [[a], [b.reshape(1, 2)]], [b, 3.0], 5.0,
             [[c, np.int32([[1, 2]])], [np.ones((1, 3), np.float32)]]]
    for case in cases:
        assert_same(znp.block(case), np.block(case))
    with pytest.raises(errors.ShapeError):
        znp.block([[a], a])
    with pytest.raises(errors.ZeraxTypeError):
        znp.block((a, a))

# --------------------------------------------------------------------------- splitting


@SETTINGS
@given(arrays(min_dims=1, max_dims=3, max_side=6), st.data())
def test_split(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    secs = data.draw(st.integers(1, 5))
    assert_same(znp.array_split(x, secs, axis), np.array_split(x, secs, axis))
    if n % secs == 0:
        assert_same(znp.split(x, secs, axis), np.split(x, secs, axis))
    else:
        with pytest.raises(errors.ShapeError):
            znp.split(x, secs, axis)
    idx = data.draw(st.lists(st.integers(-n - 2, n + 2), max_size=4))
    assert_same(znp.split(x, idx, axis), np.split(x, idx, axis))
    assert_same(znp.array_split(x, np.array(idx, dtype=np.int64), axis),
                np.array_split(x, np.array(idx, dtype=np.int64), axis))
    for name, min_nd in (("hsplit", 1), ("vsplit", 2), ("dsplit", 3)):
        if x.ndim < min_nd:
            with pytest.raises(errors.ShapeError):
                getattr(znp, name)(x, 1)
        else:
            assert_same(getattr(znp, name)(x, [1]), getattr(np, name)(x, [1]))


@SETTINGS
@given(arrays(min_dims=1, max_dims=3, max_side=5), st.data())
def test_delete_insert(x, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    n = x.size if axis is None else x.shape[axis]
    obj = data.draw(st.one_of(
        st.integers(-n, n - 1) if n else st.just([]),
        st.lists(st.integers(-n, n - 1), max_size=3) if n else st.just([]),
        st.builds(slice, st.integers(-3, 3), st.integers(-3, 3), st.sampled_from([1, 2, -1]))))
    assert_same(znp.delete(x, obj, axis), np.delete(x, obj, axis))
    if isinstance(obj, slice):
        obj = obj.indices(n)[0] if n else 0
    ins = data.draw(st.one_of(st.integers(-n, n), st.lists(st.integers(-n, n), max_size=3)))
    vals = data.draw(st.sampled_from([5, [1, 2], [[3]]]))
    try:
        want = np.insert(x, ins, vals, axis)
    except ValueError:
        with pytest.raises(errors.ShapeError):
            znp.insert(x, ins, vals, axis)
    else:
        assert_same(znp.insert(x, ins, vals, axis), want)

# --------------------------------------------------------------------------- derivatives

X34 = np.linspace(-1.0, 2.0, 12).reshape(3, 4)
X234 = np.linspace(-1.0, 2.0, 24).reshape(2, 3, 4)

GRAD_CASES = {
    "concatenate": (lambda x, y: znp.concatenate([x, y, x], axis=1), (X34, X34[:, :2] * 3)),
    "concatenate_none": (lambda x, y: znp.concatenate([x, y], axis=None), (X34, X234)),
    "stack": (lambda x, y: znp.stack([x, y], axis=-1), (X34, 2 * X34)),
    "hstack": (lambda x, y: znp.hstack([x, y]), (X34, X34)),
    "split": (lambda x: znp.concatenate([s * (i + 1) for i, s in
                                         enumerate(znp.split(x, [1, 3], axis=1))], 1), (X34,)),
    "array_split": (lambda x: znp.array_split(x, 3, axis=0)[1] * 3, (X34,)),
    "insert": (lambda x, v: znp.insert(x, [1, 1, 3], v, axis=1), (X34, np.arange(3.0))),
    "delete": (lambda x: znp.delete(x, [0, 2], axis=1), (X34,)),
    "block": (lambda x, y: znp.block([[x, y], [y, x]]), (X34, 2 * X34)),
    "unstack": (lambda x: znp.unstack(x, axis=1)[2], (X34,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grads(name):
    f, args = GRAD_CASES[name]

    def nonlinear(*a):
        return znp.sin(f(*a)) * 1.5
    check_grads(nonlinear, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_traced(name):
    f, args = GRAD_CASES[name]
    assert_traced_matches(f, *args)
