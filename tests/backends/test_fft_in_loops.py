"""FFTs inside compiled loop and branch bodies: every n/axis/norm variant of
``zerax.numpy.fft`` in a ``scan`` body against numpy.fft (float64 and float32, powers
of two and Bluestein lengths), carries through ``fori_loop`` and ``while_loop``,
``cond`` and ``switch`` branches against Python loops, ``vmap`` of a loop, derivatives
(jit of grad against eager grad, and check_grads of the jitted loop), and a program
with such a loop loaded from the warm disk cache by a fresh process.  Few programs,
each holding many transforms, compiled once per module.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import lax
from zerax.test_util import check_grads

RNG = np.random.default_rng(14)

# (name, zerax.numpy.fft or numpy.fft function name, kwargs, input kind): the input
# of each step has shape (4, 6): axis lengths 4 (radix-2) and 6 (Bluestein); n pads or
# truncates to other lengths (1, 5, 7, 9, 1000, 1024).
VARIANTS = [
    ("fft", "fft", {}, "c"),
    ("fft n=5", "fft", {"n": 5}, "c"),
    ("fft n=9 ortho", "fft", {"n": 9, "norm": "ortho"}, "c"),
    ("fft n=1", "fft", {"n": 1}, "c"),
    ("fft n=1000", "fft", {"n": 1000}, "c"),
    ("fft axis=0 forward", "fft", {"axis": 0, "norm": "forward"}, "c"),
    ("ifft", "ifft", {}, "c"),
    ("ifft n=7 forward", "ifft", {"n": 7, "norm": "forward"}, "c"),
    ("ifft axis=0 ortho", "ifft", {"axis": 0, "norm": "ortho"}, "c"),
    ("rfft", "rfft", {}, "r"),
    ("rfft n=7", "rfft", {"n": 7}, "r"),
    ("rfft n=1024", "rfft", {"n": 1024}, "r"),
    ("rfft axis=0 ortho", "rfft", {"axis": 0, "norm": "ortho"}, "r"),
    ("irfft", "irfft", {}, "c"),
    ("irfft n=7", "irfft", {"n": 7}, "c"),
    ("irfft n=4 axis=0 forward", "irfft", {"n": 4, "axis": 0, "norm": "forward"}, "c"),
    ("hfft n=9", "hfft", {"n": 9}, "c"),
    ("ihfft ortho", "ihfft", {"norm": "ortho"}, "r"),
    ("fft2", "fft2", {}, "c"),
    ("ifft2 s=(3,5)", "ifft2", {"s": (3, 5)}, "c"),
    ("rfft2 ortho", "rfft2", {"norm": "ortho"}, "r"),
    ("irfft2 s=(4,7)", "irfft2", {"s": (4, 7)}, "c"),
    ("fftn axes=(1,0)", "fftn", {"axes": (1, 0)}, "c"),
    ("ifftn forward", "ifftn", {"norm": "forward"}, "c"),
    ("rfftn s=(5,6)", "rfftn", {"s": (5, 6), "axes": (0, 1)}, "r"),
    ("irfftn axes=(0,)", "irfftn", {"axes": (0,)}, "c"),
]
STEPS, SHAPE = 3, (4, 6)
# float32 differs only in the conversions at either end: a few variants suffice
SINGLE = ("fft n=9 ortho", "ifft axis=0 ortho", "rfft n=7", "irfft", "hfft n=9",
          "rfft2 ortho", "irfftn axes=(0,)")


def _variants(dtype):
    return [v for v in VARIANTS if dtype == np.float64 or v[0] in SINGLE]


def _inputs(dtype):
    real = RNG.normal(size=(STEPS,) + SHAPE)
    cplx = real + 1j * RNG.normal(size=(STEPS,) + SHAPE)
    single = dtype == np.float32
    return (real.astype(np.float32 if single else np.float64),
            cplx.astype(np.complex64 if single else np.complex128))


def _assert_close(got, want, single):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        (got.dtype, got.shape, want.dtype, want.shape)
    # float32: numpy's float32 arithmetic against the native transform's float64
    # (rounded once), so the tolerance is numpy's own error, a few float32 ulps of
    # the largest value times log2 n
    rtol = 2e-6 if single else 1e-12
    scale = float(np.max(np.abs(want), initial=1.0))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


def _variant_scan(xs, zs):
    """One scan whose body applies every variant to its step's inputs."""
    def body(carry, xz):
        x, z = xz
        outs = tuple(getattr(znp.fft, fn)(x if kind == "r" else z, **kw)
                     for _, fn, kw, kind in _variants(xs.dtype))
        return carry + znp.sum(znp.abs(outs[0])), outs
    return lax.scan(body, znp.zeros((), xs.dtype), (xs, zs))


@pytest.fixture(scope="module", params=[np.float64, np.float32], ids=["f64", "f32"])
def variant_results(request):
    xs, zs = _inputs(request.param)
    f = zx.jit(_variant_scan)
    text = f.lower(xs, zs).as_text()
    return request.param, xs, zs, f(xs, zs), text


def test_every_variant_in_a_scan_body_matches_numpy(variant_results):
    dtype, xs, zs, (total, outs), text = variant_results
    # the transforms are host calls in the loop's kernel (not host steps between kernels)
    assert text.startswith("kernel ") and "\n\nhost " not in text and " fft(" in text
    single = dtype == np.float32
    variants = _variants(dtype)
    assert len(outs) == len(variants)
    for (name, fn, kw, kind), got in zip(variants, outs):
        inputs = xs if kind == "r" else zs
        want = np.stack([getattr(np.fft, fn)(v, **kw) for v in inputs])
        try:
            _assert_close(got, want, single)
        except AssertionError as e:
            raise AssertionError(f"{name} ({np.dtype(dtype).name}): {e}") from None
    first = variants[0]
    want_total = sum(np.sum(np.abs(getattr(np.fft, first[1])(z, **first[2]))) for z in zs)
    np.testing.assert_allclose(float(total), want_total, rtol=1e-5 if single else 1e-12)


# --------------------------------------------------------------------------- carries

def _loops(c, x, pred, index):
    """fori_loop and while_loop with FFTs of their carries; cond and switch branches."""
    def step(i, c):                      # a unitary transform and back, and a phase
        return znp.fft.ifft(znp.fft.fft(c, norm="ortho") * (1.0 + 0.1j), norm="ortho") \
            * 0.9 + znp.fft.fft(c)[::-1] * 0.01

    fori = lax.fori_loop(0, 4, step, c)

    def smooth(v):                       # a low-pass filter, of Bluestein length 7
        spec = znp.fft.rfft(v)
        return znp.fft.irfft(spec * znp.exp(-znp.arange(spec.shape[0]) * 0.5), n=v.shape[0])

    def not_flat(state):
        v, k = state
        return znp.logical_and(znp.max(v) - znp.min(v) > 0.5, k < 50)

    smoothed, count = lax.while_loop(not_flat, lambda s: (smooth(s[0]), s[1] + 1), (x, 0))
    branch = lax.cond(pred, lambda v: znp.fft.fft(v).real, lambda v: znp.fft.ihfft(v).imag[:1]
                      * znp.ones_like(v), x)
    switched = lax.switch(index, [lambda v: znp.fft.rfft(v)[:3],
                                  lambda v: znp.fft.ifft(v)[2:5],
                                  lambda v: znp.fft.fft(v * 2.0, n=16)[:3]], x)
    return fori, smoothed, count, branch, switched


def _loops_numpy(c, x, pred, index):
    for _ in range(4):
        c = np.fft.ifft(np.fft.fft(c, norm="ortho") * (1.0 + 0.1j), norm="ortho") * 0.9 \
            + np.fft.fft(c)[::-1] * 0.01
    v, k = x, 0
    while np.max(v) - np.min(v) > 0.5 and k < 50:
        spec = np.fft.rfft(v)
        v, k = np.fft.irfft(spec * np.exp(-np.arange(spec.shape[0]) * 0.5), n=x.shape[0]), k + 1
    branch = np.fft.fft(x).real if pred else np.fft.ihfft(x).imag[:1] * np.ones_like(x)
    switched = [np.fft.rfft(x)[:3], np.fft.ifft(x)[2:5], np.fft.fft(x * 2.0, n=16)[:3]][index]
    return c, v, k, branch, switched


@pytest.fixture(scope="module")
def loops():
    return zx.jit(_loops)


@pytest.mark.parametrize("pred,index", [(True, 0), (False, 1), (True, 2)])
def test_carries_and_branches_match_python_loops(loops, pred, index):
    c = RNG.normal(size=8) + 1j * RNG.normal(size=8)
    x = RNG.normal(size=7) * 3.0
    got = loops(c, x, pred, index)
    want = _loops_numpy(c, x, pred, index)
    assert int(got[2]) == want[2] > 0
    for g, w in zip(got, want):
        if np.ndim(w) or isinstance(w, np.ndarray):
            _assert_close(g, np.asarray(w), single=False)


# --------------------------------------------------------------------------- transforms

def _filter_loop(x):
    """A scan whose carry goes through rfft, a complex gain and irfft each step."""
    gain = znp.exp(-0.3 * znp.arange(x.shape[-1] // 2 + 1)) * (1.0 - 0.2j)

    def body(c, w):
        c = znp.fft.irfft(znp.fft.rfft(c) * gain, n=c.shape[-1]) + w * c
        return c, znp.sum(znp.abs(znp.fft.fft(c)) ** 2)

    c, ys = lax.scan(body, x, znp.array([0.5, 0.25, 0.125]))
    return znp.sum(c * c) + znp.sum(ys) * 0.01


def test_vmap_of_a_loop_matches_each_example():
    xs = RNG.normal(size=(3, 6))
    got = zx.jit(zx.vmap(_filter_loop))(xs)
    want = [float(_filter_loop(x)) for x in xs]      # eager: numpy.fft in the loop
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_derivatives_through_a_compiled_loop():
    x = RNG.normal(size=6)
    eager = np.asarray(zx.grad(_filter_loop)(x))
    np.testing.assert_allclose(np.asarray(zx.jit(zx.grad(_filter_loop))(x)), eager,
                               rtol=1e-11, atol=1e-12)
    # forward and reverse mode of the jitted loop against finite differences
    check_grads(zx.jit(_filter_loop), (x,), order=1, modes=("fwd", "rev"))


# --------------------------------------------------------------------------- disk cache

CHILD = """
    import json
    import numpy as np, zerax as zx, zerax.numpy as znp
    from zerax._src.backends.cpu import compile as cc

    def body(c, _):
        c = znp.fft.irfft(znp.fft.rfft(c) * 0.75, n=c.shape[0]) + znp.fft.fft(c).real * 0.1
        return c, znp.fft.fft2(znp.reshape(c, (2, 3)).astype(np.float32))

    x = np.linspace(-1.0, 1.0, 6)
    c, ys = zx.jit(lambda x: zx.lax.scan(body, x, None, length=4))(x)
    print("REPORT " + json.dumps({
        "stats": dict(cc.stats),
        "c": np.asarray(c).tolist(), "ys": [np.asarray(ys).real.tolist(),
                                            np.asarray(ys).imag.tolist()],
        "ys_dtype": str(ys.dtype)}))
"""


def _child(base):
    env = dict(os.environ, ZERAX_CACHE_DIR=str(base / "cache"),
               ZERAX_CACHE_KEY=str(base / "zerax.key"))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("REPORT ")][-1]
    return json.loads(line[len("REPORT "):])


def test_a_loop_with_ffts_loads_from_the_warm_disk_cache(tmp_path):
    (tmp_path / "cache").mkdir(mode=0o700)
    cold = _child(tmp_path)
    warm = _child(tmp_path)
    assert cold["stats"]["compiled"] >= 1
    # the second process runs the kernel from the cache: LLVM compiles nothing (the
    # kernel's host calls are rebuilt from the program)
    assert warm["stats"] == {"compiled": 0, "loaded": cold["stats"]["compiled"]}
    assert warm["c"] == cold["c"] and warm["ys"] == cold["ys"]
    c, ys = np.linspace(-1.0, 1.0, 6), []
    for _ in range(4):
        c = np.fft.irfft(np.fft.rfft(c) * 0.75, n=6) + np.fft.fft(c).real * 0.1
        ys.append(np.fft.fft2(c.reshape(2, 3).astype(np.float32)))
    np.testing.assert_allclose(warm["c"], c, rtol=1e-12, atol=1e-12)
    assert warm["ys_dtype"] == "complex64"
    got = np.asarray(warm["ys"][0]) + 1j * np.asarray(warm["ys"][1])
    np.testing.assert_allclose(got, np.stack(ys), rtol=2e-6, atol=1e-5)
