"""The digits examples' helpers (examples/train_digits.py): the ensemble/TTA prediction
against a NumPy softmax average, the seed lists and the members' seeds.  The examples'
accuracy runs take minutes and are not tests; their figures are in the docstrings."""

import importlib.util
import pathlib

import numpy as np
import pytest

import zerax.random as zr
from zerax import data, nn

_PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


@pytest.fixture(scope="module")
def ex():
    spec = importlib.util.spec_from_file_location("train_digits_example", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _softmax(z):
    z = z - z.max(1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(1, keepdims=True)


def _numpy_logits(lin, x):
    return x.astype(np.float64) @ np.asarray(lin.weight, np.float64).T + np.asarray(lin.bias)


def test_predict_averages_softmax_over_members_and_views(ex):
    x = np.random.default_rng(0).random((5, 64)).astype(np.float32)
    models = [nn.Linear(64, 10, key=zr.key(k)) for k in (1, 2)]
    ref = np.mean([_softmax(_numpy_logits(m, x)) for m in models], axis=0)
    np.testing.assert_allclose(ex.predict(models, x), ref, rtol=1e-5, atol=1e-6)
    # TTA: the original and `tta` moved copies, drawn as the example documents.
    rng = np.random.default_rng([3, 777])
    views = [x] + [ex.augment_images(x, rng) for _ in range(2)]
    ref = np.mean([_softmax(_numpy_logits(m, v)) for m in models for v in views], axis=0)
    got = ex.predict(models, x, tta=2, seed=3)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.sum(1), 1.0, rtol=1e-12)


def test_augment_images_keeps_shape_and_is_seeded(ex):
    x = np.random.default_rng(1).random((4, 64)).astype(np.float32)
    a = ex.augment_images(x, np.random.default_rng(5))
    assert a.shape == x.shape and a.dtype == x.dtype
    np.testing.assert_array_equal(a, ex.augment_images(x, np.random.default_rng(5)))
    ref = data.transforms.random_affine(x, np.random.default_rng(5), shape=(8, 8),
                                        rotation=12, scale=0.1, shift=1.0)
    np.testing.assert_array_equal(a, ref)


def test_seed_lists(ex):
    assert ex.seed_list("3") == [3]
    assert ex.seed_list("0-3") == [0, 1, 2, 3]
    assert ex.seed_list("0,2-3,7") == [0, 2, 3, 7]
    # Member 0 is the single model of the seed; the others never collide with seeds 0-999.
    assert ex.member_seeds(4, 3) == [4, 1004, 2004]
    assert ex.member_seeds(4, 1) == [4]
