"""Benchmark workloads of the training story (issue 18): one epoch of the digits MLP
through `zerax.train.fit` against the same loop in JAX + optax + Equinox (jitted step,
same batch order), the DataLoader's overhead against an MLP epoch, and `zerax.io`
checkpoints of a 100 MB model against `numpy.save`/`numpy.load` of the same bytes.

The digits-shaped data (1,437 examples of 64 float32 features, 10 classes) is drawn with
NumPy, so the bench venv needs no scikit-learn; the work per epoch is the digits run's.
Imported at the end of workloads.py.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
from registry import Case, Target, workload

ISSUE_TRAIN = "issue 18"

DIGITS_N, DIGITS_D, CLASSES, WIDTH, DEPTH, BATCH = 1437, 64, 10, 128, 2, 64


def _jax():
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _digits_like():
    rng = np.random.default_rng(18)
    x = rng.random((DIGITS_N, DIGITS_D), dtype=np.float32)
    y = rng.integers(0, CLASSES, DIGITS_N).astype(np.int32)
    return x, y


def _epoch_order(n, seed=0, epoch=0):
    # zerax.data.DataLoader's documented order: PCG64 seeded with (seed, epoch).
    return np.random.default_rng([seed, epoch]).permutation(n)


TRAIN_EPOCH = workload(
    "train_epoch_digits", "One epoch of the digits MLP through train.fit",
    cases=[Case("main", f"MLP 64-{WIDTH}-{WIDTH}-10, batch {BATCH}, {DIGITS_N} examples, "
                        "Adam, float32", compare=False)],
    description="`train.fit(model, optim.adam(1e-3), train.losses.cross_entropy, loader, "
                "epochs=1, metrics=['accuracy'])` on a shuffled DataLoader (the step compiled "
                "once, before timing); the anchor is the same epoch written with Equinox + "
                "optax: an `eqx.filter_jit` step (loss, gradient, Adam update, accuracy) over "
                "the same batch order, gathering each batch from NumPy arrays.",
    targets=[Target("jax_jit", 1.1, "<= 1.1x JAX + optax loop", ISSUE_TRAIN)],
    rounds=5,
)


@TRAIN_EPOCH.contender("zerax")
def _(case):
    import zerax.nn as nn
    import zerax.optim as optim
    import zerax.random as zr
    from zerax import data, train
    x, y = _digits_like()
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=BATCH, shuffle=True, seed=0)
    model = nn.MLP(DIGITS_D, CLASSES, width_size=WIDTH, depth=DEPTH, key=zr.key(0))
    opt = optim.adam(1e-3)

    def epoch():
        return train.fit(model, opt, train.losses.cross_entropy, loader, epochs=1,
                         metrics=["accuracy"], progress=False)[2].history["loss"][-1]
    epoch()  # compiles the step (both batch shapes)
    return epoch


@TRAIN_EPOCH.contender("jax_jit", "JAX + optax loop (eqx.filter_jit)")
def _(case):
    jax = _jax()
    import equinox as eqx
    import jax.numpy as jnp
    import optax
    x, y = _digits_like()
    model = eqx.nn.MLP(DIGITS_D, CLASSES, WIDTH, DEPTH, dtype=jnp.float32,
                       key=jax.random.key(0))
    opt = optax.adam(1e-3)
    state0 = opt.init(eqx.filter(model, eqx.is_inexact_array))

    @eqx.filter_jit
    def step(m, s, xb, yb):
        def loss(m):
            logits = jax.vmap(m)(xb)
            return optax.softmax_cross_entropy_with_integer_labels(logits, yb).mean(), logits
        (value, logits), g = eqx.filter_value_and_grad(loss, has_aux=True)(m)
        updates, s = opt.update(g, s, eqx.filter(m, eqx.is_inexact_array))
        acc = jnp.mean(jnp.argmax(logits, -1) == yb)
        return eqx.apply_updates(m, updates), s, value, acc

    order = _epoch_order(DIGITS_N)

    def epoch():
        m, s, total, count = model, state0, 0.0, 0
        for lo in range(0, DIGITS_N, BATCH):
            idx = order[lo:lo + BATCH]
            m, s, value, acc = step(m, s, jnp.asarray(x[idx]), jnp.asarray(y[idx]))
            total += float(value) * len(idx)   # the running mean fit logs
            float(acc)
            count += len(idx)
        return total / count
    epoch()
    return epoch


# ------------------------------------------------------------------ DataLoader overhead

MNIST_N, MNIST_BATCH = 60_000, 128

LOADER = workload(
    "dataloader_overhead", "DataLoader overhead vs one MLP epoch",
    cases=[Case("main", f"{MNIST_N} images 28x28 float32, batch {MNIST_BATCH}, shuffled",
                compare=False)],
    description="Iterating a shuffled `DataLoader(ArrayDataset(images, labels))` of "
                "60,000 28x28 float32 images (batches of zerax Arrays, prefetch thread), "
                "against one `train.fit` epoch of an MLP 784-512-512-10 (Adam) on the same "
                "loader "
                "(the loader's time included).",
    targets=[Target("zerax_epoch", 0.05, "<= 5% of an MLP epoch", ISSUE_TRAIN)],
    rounds=3,
)


def _mnist_like():
    rng = np.random.default_rng(60)
    x = rng.random((MNIST_N, 28 * 28), dtype=np.float32)
    y = rng.integers(0, 10, MNIST_N).astype(np.int32)
    return x, y


@LOADER.contender("zerax")
def _(case):
    from zerax import data
    x, y = _mnist_like()
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=MNIST_BATCH, shuffle=True)

    def iterate():
        n = 0
        for xb, _ in loader:
            n += xb.shape[0]
        return n
    iterate()
    return iterate


@LOADER.contender("zerax_epoch", "one MLP epoch (train.fit)")
def _(case):
    import zerax.nn as nn
    import zerax.optim as optim
    import zerax.random as zr
    from zerax import data, train
    x, y = _mnist_like()
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=MNIST_BATCH, shuffle=True)
    model = nn.MLP(28 * 28, 10, width_size=512, depth=2, key=zr.key(0))
    opt = optim.adam(1e-3)

    def epoch():
        return train.fit(model, opt, train.losses.cross_entropy, loader, epochs=1,
                         progress=False)[2].history["loss"][-1]
    epoch()
    return epoch


# ------------------------------------------------------------------ io

IO_ARRAYS, IO_ELEMS = 10, 2_621_440    # 10 float32 arrays of 10 MiB: 100 MiB in all

IO = workload(
    "io_checkpoint", "io.save / io.load of a 100 MB model",
    cases=[Case("save", "save 100 MiB (10 float32 arrays)", compare=False),
           Case("load", "load 100 MiB (10 float32 arrays)", compare=False)],
    description="`zerax.io.save(path, tree)` (a safetensors file written atomically: "
                "temporary file, then renamed over the previous one; not fsynced, as "
                "numpy.save, torch.save and safetensors' save_file; `durable=True` adds the "
                "fsyncs, compare the 'numpy.save + fsync' column) and "
                "`zerax.io.load(path, like=tree)` "
                "(header validated, every array read into a fresh buffer), against writing "
                "the same arrays with `numpy.save` into one open file and reading them back "
                "with `numpy.load` (no fsync), in the same temporary directory.",
    targets=[Target("numpy", 1.5, "<= 1.5x numpy.save / numpy.load", ISSUE_TRAIN)],
    rounds=5,
    miss_note="io.save writes each array's buffer in one call into a temporary file and "
              "swaps it with the previous file (renameat2 RENAME_EXCHANGE on Linux: "
              "renaming over an existing file makes ext4 start writing the new file back "
              "inside rename(), which cost as much again as the write). A miss here is the "
              "disk: compare with the 'numpy.save + fsync' column, and rerun on a quiet "
              "machine.",
)


def _io_tree():
    rng = np.random.default_rng(100)
    return {f"layer{i}": rng.standard_normal(IO_ELEMS).astype(np.float32)
            for i in range(IO_ARRAYS)}


@IO.contender("zerax")
def _(case):
    import zerax
    from zerax import io
    arrays = _io_tree()
    tree = {k: zerax.Array(v) for k, v in arrays.items()}
    path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
    io.save(path, tree)
    if case == "save":
        return lambda: io.save(path, tree)

    def load():
        return io.load(path, like=tree)["layer0"].shape
    return load


@IO.contender("numpy", "numpy.save / numpy.load")
def _(case):
    arrays = _io_tree()
    path = os.path.join(tempfile.mkdtemp(), "model.npy")

    def save():
        with open(path, "wb") as f:
            for v in arrays.values():
                np.save(f, v)
    save()
    if case == "save":
        return save

    def load():
        with open(path, "rb") as f:
            out = {k: np.load(f) for k in arrays}
        return out["layer0"].shape
    return load


@IO.contender("numpy_fsync", "numpy.save + fsync / numpy.load")
def _(case):
    arrays = _io_tree()
    path = os.path.join(tempfile.mkdtemp(), "model.npy")

    def save():
        with open(path, "wb") as f:
            for v in arrays.values():
                np.save(f, v)
            f.flush()
            os.fsync(f.fileno())
    save()
    if case == "save":
        return save

    def load():
        with open(path, "rb") as f:
            out = {k: np.load(f) for k in arrays}
        return out["layer0"].shape
    return load
