"""zerax.numpy.pad against NumPy 2: every mode's values and dtypes, errors, derivatives
(check_grads) and tracing (make_jaxpr)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import zerax.numpy as znp
from zerax import errors
from zerax.test_util import check_grads

from np_helpers import (  # noqa: E402 - shared test helpers
    SETTINGS, arrays, assert_same, assert_traced_matches,
)

# --------------------------------------------------------------------------- pad


@st.composite
def pad_widths(draw, ndim):
    kind = draw(st.integers(0, 3))
    w = st.integers(0, 5)
    if kind == 0:
        return draw(w)
    if kind == 1:
        return (draw(w), draw(w))
    if kind == 2:
        return ((draw(w), draw(w)),)
    return tuple((draw(w), draw(w)) for _ in range(ndim))


@SETTINGS
@given(arrays(max_dims=3, max_side=4), st.data())
def test_pad_modes(x, data):
    width = data.draw(pad_widths(x.ndim))
    for mode in ("edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean",
                 "linear_ramp"):
        try:
            with np.errstate(all="ignore"):
                want = np.pad(x, width, mode=mode)
        except TypeError:  # a pad width NumPy refuses (e.g. an empty tuple)
            with pytest.raises(errors.ZeraxTypeError):
                znp.pad(x, width, mode=mode)
            return
        except ValueError:  # e.g. extending an empty axis
            with pytest.raises(errors.ShapeError):
                znp.pad(x, width, mode=mode)
            continue
        exact = mode not in ("mean", "linear_ramp") or x.dtype.kind not in "f"
        if mode in ("mean", "linear_ramp") and x.dtype.kind in "iub":
            if x.dtype.kind == "b":
                continue
            got = znp.pad(x, width, mode=mode)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.max(np.abs(np.asarray(got, float) - want), initial=0) <= 1
            continue
        assert_same(znp.pad(x, width, mode=mode), want, exact=exact,
                    rtol=1e-5 if x.dtype == np.float32 else 1e-12)
    cv = data.draw(st.sampled_from([0, 3, (1, 2), ((1, 2),), None]))
    if cv is None:
        cv = tuple((i, -i) for i in range(x.ndim)) if x.ndim else 4
    if x.dtype.kind == "u":
        cv = np.abs(np.array(cv)).tolist()
    assert_same(znp.pad(x, width, constant_values=cv), np.pad(x, width, constant_values=cv))
    stat = data.draw(st.integers(1, 3))
    if x.size and x.dtype.kind in "fi":
        assert_same(znp.pad(x, width, mode="maximum", stat_length=stat),
                    np.pad(x, width, mode="maximum", stat_length=stat))
        assert_same(znp.pad(x, width, mode="linear_ramp", end_values=(5, -1)),
                    np.pad(x, width, mode="linear_ramp", end_values=(5, -1)),
                    exact=x.dtype.kind != "f", rtol=1e-5)


def test_pad_errors_and_traced_value():
    with pytest.raises(errors.ShapeError):
        znp.pad(znp.ones(3), -1)
    with pytest.raises(errors.ZeraxTypeError):
        znp.pad(znp.ones(3), 1.5)
    y = np.arange(6).reshape(2, 3)
    assert_same(znp.pad(y, {1: (1, 2)}, mode="wrap"), np.pad(y, {1: (1, 2)}, mode="wrap"))
    assert_same(znp.pad(y, {-2: 1}), np.pad(y, {0: 1}))
    with pytest.raises(errors.ShapeError):
        znp.pad(znp.ones(0), 1, mode="edge")
    with pytest.raises(errors.NotSupportedError):
        znp.pad(znp.ones(3), 1, mode="median")
    with pytest.raises(errors.ZeraxTypeError):
        znp.pad(znp.ones(3), 1, mode="edge", constant_values=2)
    with pytest.raises(errors.NotSupportedError):
        znp.pad(znp.ones(3), 1, mode="reflect", reflect_type="odd")
    f = lambda x, c: znp.pad(x, ((1, 2), (0, 1)), constant_values=c)
    x = np.arange(6.0).reshape(2, 3)
    assert_traced_matches(f, x, 9.0)
    check_grads(f, (x, 9.0), order=2)
    g = lambda x, c: znp.pad(x, 1, constant_values=c)
    c = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert_same(g(x, c), np.pad(x, 1, constant_values=c))
    assert_traced_matches(g, x, c)

# --------------------------------------------------------------------------- derivatives

X34 = np.linspace(-1.0, 2.0, 12).reshape(3, 4)

GRAD_CASES = {
    "pad_constant": (lambda x: znp.pad(x, ((1, 2), (3, 0)), constant_values=2.0), (X34,)),
    "pad_edge": (lambda x: znp.pad(x, 2, mode="edge"), (X34,)),
    "pad_reflect": (lambda x: znp.pad(x, ((5, 1), (0, 6)), mode="reflect"), (X34,)),
    "pad_symmetric": (lambda x: znp.pad(x, (4, 3), mode="symmetric"), (X34,)),
    "pad_wrap": (lambda x: znp.pad(x, ((7, 2), (1, 9)), mode="wrap"), (X34,)),
    "pad_mean": (lambda x: znp.pad(x, 2, mode="mean", stat_length=2), (X34,)),
    "pad_maximum": (lambda x: znp.pad(x, 2, mode="maximum"), (X34,)),
    "pad_ramp": (lambda x: znp.pad(x, 2, mode="linear_ramp", end_values=1.0), (X34,)),
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
