"""Benchmark workloads of `zerax.nn` (issue 16): a CNN and an MLP training step under
`filter_jit`, and the eager forward pass of the MLP, against the same networks in
Equinox on JAX (``eqx.filter_jit``, which is ``jax.jit`` of the model's arrays; JAX eager).

Both sides hold identical float32 parameters (drawn once with NumPy and written into each
model), so the results are compared. Imported at the end of workloads.py.
"""

from __future__ import annotations

import numpy as np
from registry import Case, Target, workload

ISSUE_NN = "issue 16"

MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 128
CNN_BATCH = 64


def _jax():
    """Import JAX on the CPU in float64 mode (the models are float32 explicitly)."""
    import os
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _set_params(nn_mod, model, arrays, asarray):
    """``model`` with its floating-point leaves replaced by ``arrays`` (in order)."""
    params, static = nn_mod.partition(model, nn_mod.is_inexact_array)
    leaves, treedef = _tree(nn_mod).tree_flatten(params)
    new = [asarray(a) for a in arrays]
    assert [tuple(x.shape) for x in leaves] == [a.shape for a in arrays]
    return nn_mod.combine(_tree(nn_mod).tree_unflatten(treedef, new), static)


def _tree(nn_mod):
    if nn_mod.__name__.startswith("zerax"):
        import zerax.tree_util as tu
        return tu
    import jax.tree_util as tu
    return tu


def _param_arrays(shapes, seed):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) / np.sqrt(max(1, np.prod(s[1:])))).astype(np.float32)
            for s in shapes]


# ------------------------------------------------------------------ MLP
def _mlp_data():
    rng = np.random.default_rng(16)
    x = rng.standard_normal((MLP_BATCH, MLP_SIZES[0])).astype(np.float32)
    y = rng.integers(0, MLP_SIZES[-1], MLP_BATCH)
    shapes = []
    for i, o in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        shapes += [(o, i), (o,)]
    return _param_arrays(shapes, 17), x, y


def _zx_mlp():
    import zerax.nn as nn
    import zerax.numpy as znp
    import zerax.random as zr
    arrays, x, y = _mlp_data()
    model = nn.MLP(MLP_SIZES[0], MLP_SIZES[-1], MLP_SIZES[1], len(MLP_SIZES) - 2,
                   key=zr.key(0))
    return _set_params(nn, model, arrays, znp.asarray), znp.asarray(x), znp.asarray(y)


def _eqx_mlp():
    _jax()
    import equinox as eqx
    import jax.numpy as jnp
    import jax.random as jr
    arrays, x, y = _mlp_data()
    model = eqx.nn.MLP(MLP_SIZES[0], MLP_SIZES[-1], MLP_SIZES[1], len(MLP_SIZES) - 2,
                       dtype=jnp.float32, key=jr.key(0))
    return _set_params(eqx, model, arrays, jnp.asarray), jnp.asarray(x), jnp.asarray(y)


def _xent(xx, log_softmax):
    def loss(model, x, y, vmap):
        logits = vmap(model)(x)
        return -xx.mean(log_softmax(logits)[xx.arange(y.shape[0]), y])
    return loss


NN_MLP = workload(
    "nn_mlp_step", "nn.MLP training step (filter_jit(filter_grad))",
    cases=[Case("main", f"{'-'.join(map(str, MLP_SIZES))}, batch {MLP_BATCH}, float32")],
    description="Gradient of the mean cross-entropy of `nn.MLP` (ReLU) over a vmapped "
                "batch, under `nn.filter_jit(nn.filter_grad(loss))`; the anchor is the same "
                "network in Equinox under `eqx.filter_jit(eqx.filter_grad(loss))` (jax.jit).",
    targets=[Target("jax_jit", 1.1, "<= 1.1x jax.jit", ISSUE_NN)],
    rounds=7,
)


@NN_MLP.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.nn as nn
    import zerax.numpy as znp
    model, x, y = _zx_mlp()
    loss = _xent(znp, zx.nn.log_softmax)
    step = nn.filter_jit(nn.filter_grad(lambda m, x, y: loss(m, x, y, zx.vmap)))
    leaves = zx.tree_util.tree_leaves
    return lambda: leaves(step(model, x, y))


@NN_MLP.contender("jax_jit", "jax.jit (Equinox)")
def _(case):
    jax = _jax()
    import equinox as eqx
    import jax.numpy as jnp
    model, x, y = _eqx_mlp()
    loss = _xent(jnp, jax.nn.log_softmax)
    step = eqx.filter_jit(eqx.filter_grad(lambda m, x, y: loss(m, x, y, jax.vmap)))
    leaves = jax.tree_util.tree_leaves
    return lambda: jax.block_until_ready(leaves(step(model, x, y)))


NN_MLP_EAGER = workload(
    "nn_mlp_eager", "nn.MLP eager forward",
    cases=[Case("main", f"{'-'.join(map(str, MLP_SIZES))}, batch {MLP_BATCH}, float32")],
    description="`vmap(model)(x)` of the MLP above with no jit anywhere: the per-call cost "
                "of the module calls, vmap and the eager primitives; the anchor is JAX "
                "eager on the same Equinox network.",
    targets=[Target("jax", 0.3, "<= 0.3x JAX eager", ISSUE_NN)],
    rounds=7,
)


@NN_MLP_EAGER.contender("zerax")
def _(case):
    import zerax as zx
    model, x, _ = _zx_mlp()
    f = zx.vmap(model)
    return lambda: f(x)


@NN_MLP_EAGER.contender("jax")
def _(case):
    jax = _jax()
    model, x, _ = _eqx_mlp()
    f = jax.vmap(model)
    return lambda: jax.block_until_ready(f(x))


# ------------------------------------------------------------------ CNN
CNN_SHAPES = [(32, 1, 3, 3), (32, 1, 1), (64, 32, 3, 3), (64, 1, 1), (10, 64 * 5 * 5), (10,)]


def _cnn_data():
    rng = np.random.default_rng(18)
    images = rng.standard_normal((CNN_BATCH, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, CNN_BATCH)
    return _param_arrays(CNN_SHAPES, 19), images, labels


def _flatten(x):
    return x.reshape(-1)


def _cnn_class(base, nn_mod, relu, split):
    class CNN(base):
        layers: list

        def __init__(self, key, dtype):
            k1, k2, k3 = split(key, 3)
            self.layers = [nn_mod.Conv2d(1, 32, 3, key=k1, dtype=dtype), relu,
                           nn_mod.MaxPool2d(2, 2),
                           nn_mod.Conv2d(32, 64, 3, key=k2, dtype=dtype), relu,
                           nn_mod.MaxPool2d(2, 2),
                           _flatten, nn_mod.Linear(64 * 5 * 5, 10, key=k3, dtype=dtype)]

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x
    return CNN


NN_CNN = workload(
    "nn_cnn_step", "CNN training step (filter_jit(filter_grad))",
    cases=[Case("main", f"conv32-pool-conv64-pool-linear10, batch {CNN_BATCH} of 1x28x28, "
                        "float32")],
    description="Forward and backward of issue 16's CNN (two 3x3 convolutions with ReLU and "
                "2x2 max pooling, a linear layer) on a vmapped batch, under "
                "`nn.filter_jit(nn.filter_grad(loss))`; the anchor is the same network in "
                "Equinox (`lax.conv_general_dilated`) under `eqx.filter_jit` (jax.jit).",
    targets=[Target("jax_jit", 1.2, "<= 1.2x jax.jit", ISSUE_NN)],
    rounds=5,
)


@NN_CNN.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.nn as nn
    import zerax.numpy as znp
    import zerax.random as zr
    arrays, images, labels = _cnn_data()
    model = _cnn_class(nn.Module, nn, zx.nn.relu, zr.split)(zr.key(0), np.float32)
    model = _set_params(nn, model, arrays, znp.asarray)
    loss = _xent(znp, zx.nn.log_softmax)
    step = nn.filter_jit(nn.filter_grad(lambda m, x, y: loss(m, x, y, zx.vmap)))
    x, y = znp.asarray(images), znp.asarray(labels)
    leaves = zx.tree_util.tree_leaves
    return lambda: leaves(step(model, x, y))


@NN_CNN.contender("jax_jit", "jax.jit (Equinox)")
def _(case):
    jax = _jax()
    import equinox as eqx
    import jax.numpy as jnp
    import jax.random as jr
    arrays, images, labels = _cnn_data()
    model = _cnn_class(eqx.Module, eqx.nn, jax.nn.relu, jr.split)(jr.key(0), jnp.float32)
    model = _set_params(eqx, model, arrays, jnp.asarray)
    loss = _xent(jnp, jax.nn.log_softmax)
    step = eqx.filter_jit(eqx.filter_grad(lambda m, x, y: loss(m, x, y, jax.vmap)))
    x, y = jnp.asarray(images), jnp.asarray(labels)
    leaves = jax.tree_util.tree_leaves
    return lambda: jax.block_until_ready(leaves(step(model, x, y)))
