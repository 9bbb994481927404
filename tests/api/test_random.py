"""zerax.random keys and basic samplers: JAX's bits, under every transform, and errors.

Reference values were recorded once from JAX 0.10.2 (JAX_PLATFORMS=cpu,
jax_enable_x64=True, default threefry2x32 with jax_threefry_partitionable=True) by
running the same call with ``jax.random`` in place of ``zerax.random`` and printing
``repr(np.asarray(result))``; the threefry2x32 vectors are Random123's known answers.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.random as zr
from zerax import errors
from zerax._src.api.random.threefry import threefry2x32

K = zr.PRNGKey(42)


# --------------------------------------------------------------------------- the hash

def test_threefry2x32_random123_known_answers():
    keys = np.array([[0, 0], [0xFFFFFFFF, 0xFFFFFFFF], [0x13198A2E, 0x03707344]], np.uint32)
    counts = np.array([[0, 0], [0xFFFFFFFF, 0xFFFFFFFF], [0x243F6A88, 0x85A308D3]], np.uint32)
    expected = np.array([[0x6B200159, 0x99BA4EFE], [0x1CB996FC, 0xBB002BE7],
                         [0xC4923A9C, 0x483DF7A0]], np.uint64)
    args = (keys[:, 0], keys[:, 1], counts[:, 0], counts[:, 1])
    pair = np.asarray(threefry2x32(*args, out="pair"))
    np.testing.assert_array_equal(pair >> np.uint64(32), expected[:, 0])
    np.testing.assert_array_equal(pair & np.uint64(0xFFFFFFFF), expected[:, 1])
    xor = np.asarray(threefry2x32(*args, out="xor"))
    np.testing.assert_array_equal(xor, expected[:, 0] ^ expected[:, 1])
    # jit (the fused Numba lowering, uint32 wrap-around) agrees with eager
    p2 = zx.jit(lambda *a: threefry2x32(*a, out="pair"))(*args)
    np.testing.assert_array_equal(np.asarray(p2), pair)


# --------------------------------------------------------------------------- keys

@pytest.mark.parametrize("seed, expected", [
    (0, [0, 0]), (42, [0, 42]), (-1, [4294967295, 4294967295]),
    (2 ** 63 - 1, [2147483647, 4294967295]), (2 ** 64 - 1, [4294967295, 4294967295]),
    (np.int32(-5), [0, 4294967291]), (np.uint8(200), [0, 200]),
])
def test_prngkey_seeds(seed, expected):
    k = zr.PRNGKey(seed)
    assert k.dtype == np.uint32 and k.shape == (2,)
    np.testing.assert_array_equal(np.asarray(k), expected)
    np.testing.assert_array_equal(np.asarray(zr.key_data(zr.key(seed))), expected)


def test_split_fold_in_bits_match_jax():
    np.testing.assert_array_equal(np.asarray(zr.split(K, 3)), [
        [1832780943, 270669613], [64467757, 2916123636], [2465931498, 255383827]])
    np.testing.assert_array_equal(np.asarray(zr.fold_in(K, 7)), [2547012911, 1371500959])
    np.testing.assert_array_equal(np.asarray(zr.bits(K, (3,), np.uint32)),
                                  [2098992034, 2919706841, 2646866425])
    b64 = zr.bits(K, (3,))   # uint64 by default, as JAX under x64
    assert b64.dtype == np.uint64
    np.testing.assert_array_equal(np.asarray(b64), np.array(
        [7871734211187709741, 276886910877598708, 10591095138341673235], np.uint64))
    np.testing.assert_array_equal(np.asarray(zr.key_data(zr.split(zr.key(7), (2, 2)))), [
        [[3625411723, 1954958720], [195045567, 4062205631]],
        [[966301609, 1948237315], [276534068, 1641862660]]])
    np.testing.assert_array_equal(np.asarray(zr.bits(zr.PRNGKey(0), (5,), np.uint8)),
                                  [167, 146, 40, 53, 183])
    assert int(np.asarray(zr.bits(zr.PRNGKey(1), ()))) == 2179487362436112514
    # fold_in of a NumPy integer uses its low 32 bits (as JAX's asarray(..., uint32))
    np.testing.assert_array_equal(np.asarray(zr.fold_in(zr.PRNGKey(3), np.int64(-1))),
                                  [2506949003, 3416577034])
    np.testing.assert_array_equal(np.asarray(zr.fold_in(zr.PRNGKey(3), 2 ** 32 - 1)),
                                  [2506949003, 3416577034])


def test_typed_keys_behave_like_arrays():
    k = zr.key(7)
    assert k.shape == () and str(k.dtype) == "key<fry>" and zr.key_impl(k) == "threefry2x32"
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 7]"
    ks = zr.split(k, (2, 3))
    assert isinstance(ks, zr.PRNGKeyArray) and ks.shape == (2, 3) and ks.ndim == 2
    assert ks.T.shape == (3, 2) and ks.reshape(6).shape == (6,) and ks[1].shape == (3,)
    assert ks[1, 2].shape == () and ks[None].shape == (1, 2, 3) and len(ks) == 2
    np.testing.assert_array_equal(np.asarray(zr.key_data(ks.T[2, 1])),
                                  np.asarray(zr.key_data(ks[1, 2])))
    assert [x.shape for x in ks] == [(3,), (3,)]
    w = zr.wrap_key_data(zr.key_data(ks))
    assert bool(np.asarray((w == ks).all()))
    assert zr.clone(k) is not k and bool(np.asarray(zr.clone(k) == k))
    # typed in, typed out; raw in, raw out, with the same bits
    np.testing.assert_array_equal(np.asarray(zr.key_data(zr.split(zr.key(42)))),
                                  np.asarray(zr.split(K)))
    assert zr.uniform(zr.key(42), (3,)).tolist() == zr.uniform(K, (3,)).tolist()


# --------------------------------------------------------------------------- samplers vs JAX

def test_samplers_match_jax_recorded():
    np.testing.assert_array_equal(np.asarray(zr.uniform(K, (5,))), [
        0.4267275666499091, 0.015010069515314584, 0.5741444178995352,
        0.7298188969046309, 0.687800341230566])
    np.testing.assert_array_equal(np.asarray(zr.uniform(K, (4,), np.float32)), np.array(
        [0.48870957, 0.6797972, 0.6162715, 0.5610161], np.float32))
    # scaled: u * (maxval - minval) + minval is one fused multiply-add, as in XLA
    np.testing.assert_array_equal(np.asarray(zr.uniform(K, (4,), np.float64, -2.0, 3.0)), [
        0.13363783324954537, -1.924949652423427, 0.8707220894976759, 1.6490944845231543])
    np.testing.assert_array_equal(np.asarray(zr.uniform(K, (4,), np.float32, -2.0, 3.0)),
                                  np.array([0.4435478448867798, 1.3989858627319336,
                                            1.081357479095459, 0.8050804138183594], np.float32))
    np.testing.assert_array_equal(np.asarray(zr.randint(K, (8,), -5, 100)),
                                  [85, 53, 88, 56, 35, 61, 29, 62])
    np.testing.assert_array_equal(np.asarray(zr.permutation(K, 10)),
                                  [7, 4, 2, 5, 3, 6, 8, 9, 0, 1])
    np.testing.assert_array_equal(np.asarray(zr.choice(K, 10, (4,), replace=False)),
                                  [7, 4, 2, 5])
    np.testing.assert_array_equal(
        np.asarray(zr.choice(K, 5, (6,), p=np.array([.1, .2, .3, .2, .2]))), [2, 4, 2, 1, 2, 2])
    np.testing.assert_array_equal(np.asarray(zr.bernoulli(K, 0.3, (10,))),
                                  [0, 1, 0, 0, 0, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(np.asarray(zr.rademacher(K, (6,))), [1, 1, -1, -1, -1, -1])
    # through erf_inv: a few ulps
    np.testing.assert_allclose(np.asarray(zr.normal(K, (5,))), [
        -0.18471174528191162, -2.169824560397754, 0.18693555179382582,
        0.6122653570510959, 0.4896249504757018], rtol=4e-15)
    np.testing.assert_allclose(np.asarray(zr.normal(K, (4,), np.float32)), np.array(
        [-0.028304616, 0.46713185, 0.29570296, 0.15354592], np.float32), rtol=4e-7)
    # complex normal: real and imaginary parts from two subkeys, over sqrt(2)
    z = np.asarray(zr.normal(K, (2,), np.complex128))
    k_re, k_im = zr.split(K)
    np.testing.assert_allclose(z.real, np.asarray(zr.normal(k_re, (2,))) / np.sqrt(2), rtol=1e-15)
    np.testing.assert_allclose(z.imag, np.asarray(zr.normal(k_im, (2,))) / np.sqrt(2), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(zr.truncated_normal(K, -1.0, 2.0, (4,))), [
        0.01998452592513169, -0.9504476695340623, 0.32827144083703297,
        0.693751830608632], rtol=4e-15)


def test_uniform_from_the_bits_by_hand():
    # JAX's recipe on the recorded uint32 bits: mantissa | exponent of 1.0, minus 1
    b = np.asarray(zr.bits(K, (3,), np.uint32))
    expected = ((b >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
    np.testing.assert_array_equal(np.asarray(zr.uniform(K, (3,), np.float32)), expected)


@settings(max_examples=15, deadline=None)
@given(lo=st.integers(-2 ** 40, 2 ** 40), width=st.integers(1, 2 ** 20),
       n=st.integers(1, 50))
def test_randint_within_bounds(lo, width, n):
    x = np.asarray(zr.randint(K, (n,), lo, lo + width))
    assert x.dtype == np.int64 and (x >= lo).all() and (x < lo + width).all()


# --------------------------------------------------------------------------- transforms

_PROGRAMS = {
    "uniform32": lambda k: zr.uniform(k, (2, 3), np.float32, -1.0, 3.0),
    "normal": lambda k: zr.normal(k, (5,)),
    "normal32": lambda k: zr.normal(k, (4,), np.float32),
    "randint": lambda k: zr.randint(k, (6,), -3, 100),
    "permutation": lambda k: zr.permutation(k, 7),
    "split": lambda k: zr.split(k, 3),
    "fold_in": lambda k: zr.fold_in(k, 5),
    "bits64": lambda k: zr.bits(k, (3,)),
    "bernoulli": lambda k: zr.bernoulli(k, 0.3, (5,)),
}


def _all_programs(k):
    return {name: f(k) for name, f in _PROGRAMS.items()}


_JITTED = ("uniform32", "normal", "split", "bits64")


def test_jit_and_vmap_equal_eager():
    # vmap(f) of every program, and one compiled jit(vmap(f)) of a few of them (Numba
    # compiles are slow), equal the eager results stacked
    ks = zr.split(K, 3)
    jitted = zx.jit(zx.vmap(lambda k: {n: _PROGRAMS[n](k) for n in _JITTED}))(ks)
    mapped = zx.vmap(_all_programs)(ks)
    for name, f in _PROGRAMS.items():
        stacked = np.stack([np.asarray(f(ks[i])) for i in range(3)])
        j = np.asarray(jitted[name] if name in jitted else mapped[name])
        assert j.dtype == stacked.dtype, name
        if stacked.dtype.kind == "f" and name.startswith("normal"):
            # erf_inv's log1p: NumPy's eagerly on traced values, vecmath's compiled
            rtol = 1e-6 if stacked.dtype == np.float32 else 1e-14
            np.testing.assert_allclose(j, stacked, rtol=rtol, err_msg=name)
            np.testing.assert_allclose(np.asarray(mapped[name]), stacked, rtol=rtol,
                                       err_msg=name)
            continue
        np.testing.assert_array_equal(j, stacked, err_msg=name)
        np.testing.assert_array_equal(np.asarray(mapped[name]), stacked, err_msg=name)


def test_compiled_eager_paths_equal_the_traced_samplers():
    # split/fold_in/uniform/normal on a concrete key run one Numba kernel (eager.py);
    # they follow the traced sampler (run here under jit) operation for operation
    from zerax._src.api.random import samplers as S, threefry as tf
    k = zr.PRNGKey(7)
    np.testing.assert_array_equal(np.asarray(zr.split(k, (3, 4))),
                                  np.asarray(tf.threefry_split(k, (3, 4))))
    np.testing.assert_array_equal(np.asarray(zr.fold_in(k, 99)),
                                  np.asarray(tf.threefry_fold_in(k, np.uint32(99))))
    n = 2000
    dts = (np.dtype(np.float32), np.dtype(np.float64))

    def traced(kk):   # the traced samplers, compiled once for both dtypes
        return [(S._uniform(kk, (n,), dt, np.array(-2.0), np.array(3.0)),
                 S._normal(kk, (n,), dt)) for dt in dts]

    for dt, (u_jit, n_jit) in zip(dts, zx.jit(traced)(k)):
        u = np.asarray(zr.uniform(k, (n,), dt, -2.0, 3.0))
        np.testing.assert_array_equal(u, np.asarray(u_jit))
        fast = np.asarray(zr.normal(k, (n,), dt))
        jitted = np.asarray(n_jit)
        if dt == np.float32:
            np.testing.assert_array_equal(fast, jitted)
        else:   # LLVM may contract a different multiply-add into an FMA: an ulp
            np.testing.assert_allclose(fast, jitted, rtol=1e-15)


def test_vmap_over_typed_keys_matches_jax():
    out = zx.vmap(lambda k: zr.normal(k, (2,)))(zr.split(zr.key(42), 3))
    np.testing.assert_allclose(np.asarray(out), [
        [-0.7203007280025545, -0.26062232600173396],
        [0.6498920118351406, 0.11847860802469709],
        [-0.3216279737923745, 0.42463557053901824]], rtol=4e-15)


def test_typed_keys_through_jit_scan_and_fori_loop():
    tk = zr.key(1)
    out = zx.jit(lambda k: zr.split(k))(tk)
    assert isinstance(out, zr.PRNGKeyArray) and out.shape == (2,)

    def body(carry, _):
        k, acc = carry
        k, sub = zr.split(k)
        return (k, acc + zr.normal(sub)), None

    (k_end, acc), _ = zx.lax.scan(body, (tk, 0.0), None, length=5)
    k_loop, acc_loop = tk, 0.0
    for _ in range(5):
        k_loop, sub = zr.split(k_loop)
        acc_loop = acc_loop + zr.normal(sub)
    assert float(acc) == float(acc_loop)
    np.testing.assert_array_equal(np.asarray(zr.key_data(k_end)),
                                  np.asarray(zr.key_data(k_loop)))
    folded = zx.lax.fori_loop(0, 3, lambda i, k: zr.fold_in(k, i), tk)
    expected = tk
    for i in range(3):
        expected = zr.fold_in(expected, np.int64(i))
    np.testing.assert_array_equal(np.asarray(zr.key_data(folded)),
                                  np.asarray(zr.key_data(expected)))


def test_grads_by_reparameterisation():
    g = zx.grad(lambda m: zr.uniform(K, (3,), minval=m, maxval=m + 2.0).sum())(1.0)
    assert float(g) == 3.0
    # recorded from jax.grad of the same function
    g = zx.grad(lambda lo: zr.truncated_normal(K, lo, 2.0, (3,)).sum())(-1.0)
    np.testing.assert_allclose(float(g), 1.5588926352412829, rtol=1e-12)
    # against a finite difference (the key is fixed, so the sample is a smooth function)
    f = lambda s: (zr.normal(K, (4,)) * s + 0.5).sum()   # noqa: E731
    zx.test_util.check_grads(f, (1.3,), order=2, modes=("fwd", "rev"))


# --------------------------------------------------------------------------- errors

def test_key_errors():
    with pytest.raises(errors.KeyTypeError, match="uint32 array of shape"):
        zr.normal(np.zeros(3, np.uint32))
    with pytest.raises(errors.KeyTypeError, match="uint32"):
        zr.normal(np.zeros(2, np.int32))
    with pytest.raises(errors.KeyTypeError, match="expected a PRNG key"):
        zr.uniform(42)
    with pytest.raises(errors.KeyTypeError, match="single key"):
        zr.normal(zr.split(K, 2))
    with pytest.raises(errors.KeyTypeError, match="not defined on typed PRNG keys"):
        zr.key(0) + 1
    with pytest.raises(errors.KeyTypeError):
        np.asarray(zr.key(0))
    with pytest.raises(errors.ZeraxTypeError, match="integer"):
        zr.key(1.5)
    with pytest.raises(errors.ZeraxTypeError, match="integer"):
        zr.PRNGKey(np.float64(2.0))
    with pytest.raises(errors.SeedOverflowError):
        zr.PRNGKey(2 ** 64)
    with pytest.raises(OverflowError):
        zr.key(-2 ** 63 - 1)
    with pytest.raises(errors.SeedOverflowError):
        zr.fold_in(K, -1)


def test_sampler_argument_errors():
    with pytest.raises(errors.ShapeError, match="minval"):
        zr.uniform(K, (3,), minval=np.zeros(4))
    with pytest.raises(errors.ShapeError, match="p"):
        zr.bernoulli(K, np.full(5, 0.5), (3,))
    with pytest.raises(errors.ZeraxValueError, match="replace=False"):
        zr.choice(K, 3, (5,), replace=False)
    with pytest.raises(errors.ZeraxValueError, match="float"):
        zr.uniform(K, (2,), np.int32)
    with pytest.raises(errors.KeyTypeError, match="PRNG key"):
        zr.uniform(K, (2,), minval=zr.key(0))
