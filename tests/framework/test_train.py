"""zerax.train: losses and metrics against NumPy, fit against a hand-written NumPy loop,
jit against eager, exact resume from a checkpoint (Dropout key, mid-epoch), BatchNorm state,
callbacks (EarlyStopping, History plot/CSV), custom step_fn and the progress bar.

Most runs use ``jit=False`` (op by op): compiling a step with Numba costs more than these
tiny runs; one test checks that the compiled step gives the eager step's numbers."""

import csv
import sys

import numpy as np
import pytest

import zerax
import zerax.nn as nn
import zerax.numpy as znp
import zerax.optim as optim
import zerax.random as zr
from zerax import data, io, train
from zerax.errors import ShapeError, ZeraxTypeError, ZeraxValueError
from zerax.test_util import check_grads


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_losses_against_numpy():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((6, 4))
    labels = rng.integers(0, 4, 6)
    ref = -_log_softmax(logits)[np.arange(6), labels].mean()
    np.testing.assert_allclose(float(train.losses.cross_entropy(logits, labels)), ref,
                               rtol=1e-12)
    soft = rng.dirichlet(np.ones(4), 6)
    np.testing.assert_allclose(float(train.losses.cross_entropy(logits, soft)),
                               -(soft * _log_softmax(logits)).sum(-1).mean(), rtol=1e-12)
    np.testing.assert_allclose(float(train.losses.mse(logits, soft)),
                               ((logits - soft) ** 2).mean(), rtol=1e-12)
    t01 = rng.integers(0, 2, (6, 4)).astype(np.float64)
    p = 1 / (1 + np.exp(-logits))
    np.testing.assert_allclose(float(train.losses.bce(logits, t01)),
                               -(t01 * np.log(p) + (1 - t01) * np.log(1 - p)).mean(),
                               rtol=1e-12)
    assert np.isfinite(float(train.losses.bce(znp.array([1000.0, -1000.0]),
                                              znp.array([0.0, 1.0]))))
    check_grads(lambda z: train.losses.cross_entropy(z, labels), (logits,), order=2,
                modes=("fwd", "rev"))
    check_grads(lambda z: train.losses.bce(z, t01), (logits,), order=2, modes=("fwd", "rev"))
    with pytest.raises(ShapeError, match="expected labels of shape"):
        train.losses.cross_entropy(logits, labels[:3])


def test_cross_entropy_label_smoothing():
    rng = np.random.default_rng(1)
    logits, labels, a = rng.standard_normal((5, 7)), rng.integers(0, 7, 5), 0.1
    smooth = (1 - a) * np.eye(7)[labels] + a / 7
    ref = -(smooth * _log_softmax(logits)).sum(-1).mean()
    for targets in (labels, np.eye(7)[labels]):  # integer labels and one-hot alike
        np.testing.assert_allclose(
            float(train.losses.cross_entropy(logits, targets, label_smoothing=a)), ref,
            rtol=1e-12)
    # optax.softmax_cross_entropy(L, optax.smooth_labels(one_hot(y, 5), 0.1)).mean() in
    # float32, recorded from optax 0.2.8.
    L = np.array([[0.126, -0.132, 0.64, 0.105, -0.536], [0.362, 1.304, 0.947, -0.704, -1.265],
                  [-0.623, 0.041, -2.325, -0.219, -1.246], [-0.732, -0.544, -0.316, 0.412,
                                                            1.043]], np.float32)
    got = train.losses.cross_entropy(L, np.array([0, 3, 4, 1]), label_smoothing=0.1)
    np.testing.assert_allclose(float(got), 2.224271059036255, rtol=2e-6)
    check_grads(lambda z: train.losses.cross_entropy(z, labels, label_smoothing=a),
                (logits,), order=1, modes=("rev",))
    with pytest.raises(ZeraxValueError, match="label_smoothing"):
        train.losses.cross_entropy(logits, labels, label_smoothing=1.5)


def test_metrics_against_numpy():
    rng = np.random.default_rng(1)
    out = rng.standard_normal((50, 7))
    lab = rng.integers(0, 7, 50)
    acc = (out.argmax(-1) == lab).mean()
    assert float(train.metrics.accuracy(out, lab)) == pytest.approx(acc)
    assert float(train.metrics.accuracy(out, np.eye(7)[lab])) == pytest.approx(acc)
    for k in (1, 3, 5):
        top = (np.argsort(-out, -1)[:, :k] == lab[:, None]).any(-1).mean()
        assert float(train.metrics.get(f"top_{k}_accuracy")(out, lab)) == pytest.approx(top)
    assert train.metrics.get("top_k_accuracy").name == "top_k_accuracy"
    binary = rng.standard_normal(20)
    t = rng.integers(0, 2, 20).astype(np.float32)
    assert float(train.metrics.accuracy(binary, t)) == pytest.approx(((binary > 0) == t).mean())
    with pytest.raises(ZeraxValueError, match="unknown metric"):
        train.metrics.get("f1")


def _regression_data(n=48, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return x, y


def test_fit_equals_a_numpy_sgd_loop():
    """Linear regression by SGD through fit (vmap of a one-example nn.Linear) against the
    same epochs written in NumPy with the analytic gradient and the same batch order."""
    x, y = _regression_data()
    model = nn.Linear(3, 1, key=zr.key(0))
    w = np.asarray(model.weight, np.float64).copy()
    b = np.asarray(model.bias, np.float64).copy()
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=10, shuffle=True, seed=4)
    lr, epochs = 0.1, 3
    for e in range(epochs):
        order = np.random.default_rng([4, e]).permutation(len(x))
        for lo in range(0, len(x), 10):
            idx = order[lo:lo + 10]
            err = x[idx] @ w.T + b - y[idx]             # (n, 1)
            gw = 2 * err.T @ x[idx] / err.size
            gb = 2 * err.sum(0) / err.size
            w, b = w - lr * gw, b - lr * gb
    fitted, opt_state, history = train.fit(model, optim.sgd(lr), train.losses.mse, loader,
                                           epochs=epochs, metrics=["mse"], progress=False,
                                           jit=False)
    np.testing.assert_allclose(np.asarray(fitted.weight), w, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(fitted.bias), b, rtol=2e-5, atol=2e-6)
    assert fitted.weight.dtype == np.float32
    assert len(history.history["loss"]) == epochs and history.epoch == [0, 1, 2]
    # The logged loss is the batch-size-weighted mean over the epoch (here: loss == mse).
    np.testing.assert_allclose(history.history["loss"], history.history["mse"], rtol=1e-6)
    res = train.evaluate(fitted, train.losses.mse, data.DataLoader(data.ArrayDataset(x, y), 7),
                         ["mse"])
    err = x @ np.asarray(fitted.weight).T + np.asarray(fitted.bias) - y
    assert res["loss"] == pytest.approx(float((err ** 2).mean()), rel=1e-5)


def test_compiled_step_matches_eager_and_is_reused():
    x, y = _regression_data(40, seed=1)
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=8, shuffle=True, seed=0)
    model = nn.Linear(3, 1, key=zr.key(1))
    opt = optim.sgd(0.05, momentum=0.9)
    runs = {}
    for jit in (False, True):
        runs[jit] = train.fit(model, opt, train.losses.mse, loader, epochs=2, progress=False,
                              jit=jit)
    for a, b in zip(zerax.tree_util.tree_leaves(runs[False][:2]),
                    zerax.tree_util.tree_leaves(runs[True][:2])):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    from zerax.nn import _transforms          # (filter_jit's process-wide cache)
    cached = len(_transforms._JIT_CACHE)
    train.fit(runs[True][0], opt, train.losses.mse, loader, epochs=1, progress=False)
    assert len(_transforms._JIT_CACHE) == cached  # compiled once, reused


class DropNet(nn.Module):
    lin1: nn.Linear
    drop: nn.Dropout
    lin2: nn.Linear

    def __init__(self, key):
        k1, k2 = zr.split(key)
        self.lin1 = nn.Linear(3, 8, key=k1)
        self.drop = nn.Dropout(0.3)
        self.lin2 = nn.Linear(8, 1, key=k2)

    def __call__(self, x, *, key=None):
        return self.lin2(self.drop(nn.relu(self.lin1(x)), key=key))


class _Crash(Exception):
    pass


class _CrashAt(train.Callback):
    def __init__(self, step):
        self.step = step

    def on_batch_end(self, step, logs):
        if step == self.step:
            raise _Crash()


def test_resume_from_a_checkpoint_is_bit_identical(tmp_path):
    x, y = _regression_data(50, seed=2)
    key = zr.key(7)

    def run(callbacks, resume=None):
        loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=8, shuffle=True, seed=1)
        return train.fit(DropNet(zr.key(3)), optim.adam(1e-2), train.losses.mse, loader,
                         epochs=3, key=key, callbacks=callbacks, resume=resume,
                         metrics=["mae"], progress=False, jit=False)

    ref_model, ref_state, ref_hist = run([])
    mgr = io.CheckpointManager(tmp_path / "ckpt", max_to_keep=2)
    with pytest.raises(_Crash):  # dies mid-epoch 1, at step 10 (7 batches per epoch)
        run([train.Checkpoint(mgr, every_n_steps=5), _CrashAt(12)])
    assert mgr.all_steps() == [7, 10]
    model, opt_state, hist = run([train.Checkpoint(mgr, every_n_steps=5)], resume=mgr)
    for a, b in zip(zerax.tree_util.tree_leaves((ref_model, ref_state)),
                    zerax.tree_util.tree_leaves((model, opt_state))):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()   # bit-identical
    assert hist.history == ref_hist.history and hist.epoch == [0, 1, 2]
    # Dropout was really on: another key gives other parameters.
    key = zr.key(8)
    other, _, _ = run([])
    assert not np.array_equal(np.asarray(other.lin1.weight), np.asarray(ref_model.lin1.weight))


class CountingNet(nn.Module):
    """A stateful model: a linear layer and a count of the batches it has seen."""
    lin: nn.Linear
    index: nn.StateIndex

    def __init__(self, key):
        self.lin = nn.Linear(3, 1, key=key)
        self.index = nn.StateIndex(znp.array(0, np.int32))

    def __call__(self, x, state):
        n = state.get(self.index)
        return self.lin(x), state.set(self.index, n + 1)


def test_stateful_model():
    x, y = _regression_data(32, seed=3)
    model, state = nn.make_with_state(CountingNet)(zr.key(0))
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=8)
    (fitted, new_state), _, history = train.fit(
        model, optim.adam(1e-2), train.losses.mse, loader, epochs=2, state=state,
        val_data=(x, y), progress=False, jit=False)
    assert isinstance(new_state, nn.State)
    assert int(new_state.get(fitted.index)) == 8   # 4 batches x 2 epochs (not validation)
    assert set(history.history) == {"loss", "val_loss"}
    assert history["loss"][1] < history["loss"][0]


class BNNet(nn.Module):
    lin: nn.Linear
    bn: nn.BatchNorm

    def __init__(self, key):
        self.lin = nn.Linear(3, 4, key=key)
        self.bn = nn.BatchNorm(4, "batch", mode="batch")

    def __call__(self, x, state):
        h, state = self.bn(self.lin(x), state)
        return h.sum(keepdims=True), state


@pytest.mark.skipif(not hasattr(zerax.lax, "pmean"),
                    reason="BatchNorm's training mode needs zerax.lax.pmean")
def test_batchnorm_model():
    x, y = _regression_data(32, seed=3)
    model, state = nn.make_with_state(BNNet)(zr.key(0))
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=16)
    (fitted, new_state), _, history = train.fit(
        model, optim.adam(1e-2), train.losses.mse, loader, epochs=2, state=state,
        val_data=(x, y), progress=False, jit=False)
    before = [np.asarray(v) for v in zerax.tree_util.tree_leaves(state)]
    after = [np.asarray(v) for v in zerax.tree_util.tree_leaves(new_state)]
    assert any(not np.array_equal(a, b) for a, b in zip(before, after))  # running stats moved
    assert np.isfinite(history["val_loss"][-1])


def test_early_stopping_history_plot_and_csv(tmp_path):
    x, y = _regression_data(32, seed=4)
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=32)
    # A learning rate so large that the validation loss rises from epoch 1 on.
    es = train.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)
    model, _, history = train.fit(nn.Linear(3, 1, key=zr.key(0)), optim.sgd(1.5),
                                  train.losses.mse, loader, epochs=30, val_data=(x, y),
                                  metrics=["mae"], callbacks=[es], progress=False, jit=False)
    val = history.history["val_loss"]
    best = int(np.argmin(val))
    assert len(val) == best + 3 < 30 and es.stopped_epoch == best + 2
    restored = train.evaluate(model, train.losses.mse, (x, y))
    assert restored["loss"] == pytest.approx(val[best], rel=1e-6)
    history.to_csv(tmp_path / "h.csv")
    rows = list(csv.reader(open(tmp_path / "h.csv")))
    assert rows[0] == ["epoch", "loss", "mae", "val_loss", "val_mae"]
    assert len(rows) == len(val) + 1 and float(rows[1 + best][3]) == val[best]
    fig = history.plot(tmp_path / "curves.png")
    assert (tmp_path / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [ax.get_title() for ax in fig.axes] == ["loss", "mae"]
    with pytest.raises(ZeraxValueError, match="pass val_data="):
        train.fit(nn.Linear(3, 1, key=zr.key(0)), optim.sgd(0.1), train.losses.mse, loader,
                  epochs=1, callbacks=[train.EarlyStopping()], progress=False, jit=False)


def test_ema_averages_the_parameters_and_swaps_them_in():
    """train.EMA against the same SGD steps in NumPy, averaged by a Python loop."""
    x, y = _regression_data()
    model = nn.Linear(3, 1, key=zr.key(0))
    w = np.asarray(model.weight, np.float64).copy()
    b = np.asarray(model.bias, np.float64).copy()
    lr, epochs, decay, every = 0.1, 3, 0.8, 2
    avg, step, updates = None, 0, 0
    for e in range(epochs):
        order = np.random.default_rng([4, e]).permutation(len(x))
        for lo in range(0, len(x), 10):
            idx = order[lo:lo + 10]
            err = x[idx] @ w.T + b - y[idx]
            w = w - lr * 2 * err.T @ x[idx] / err.size
            b = b - lr * 2 * err.sum(0) / err.size
            step += 1
            if step % every == 0:
                avg = (w, b) if avg is None else (decay * avg[0] + (1 - decay) * w,
                                                  decay * avg[1] + (1 - decay) * b)
                updates += 1

    def fit(ema):
        loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=10, shuffle=True, seed=4)
        return train.fit(model, optim.sgd(lr), train.losses.mse, loader, epochs=epochs,
                         callbacks=[ema], progress=False, jit=False)[0]

    ema = train.EMA(decay, every=every)
    fitted = fit(ema)
    assert ema.updates == updates == step // every and fitted.weight.dtype == np.float32
    np.testing.assert_allclose(np.asarray(fitted.weight), avg[0], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(fitted.bias), avg[1], rtol=2e-5, atol=2e-6)
    assert not np.allclose(np.asarray(fitted.weight), w, rtol=1e-3)  # not the last iterate
    keep = train.EMA(decay, every=every, swap=False)
    last = fit(keep)
    np.testing.assert_allclose(np.asarray(last.weight), w, rtol=2e-5, atol=2e-6)
    averaged = keep.averaged_model()
    np.testing.assert_allclose(np.asarray(averaged.weight), avg[0], rtol=2e-5, atol=2e-6)
    assert isinstance(averaged, nn.Linear) and averaged.weight.dtype == np.float32
    for bad in (dict(decay=1.0), dict(decay=-0.1), dict(every=0), dict(every=1.5)):
        with pytest.raises(ZeraxValueError, match="EMA"):
            train.EMA(**bad)


def test_custom_step_fn_and_errors():
    x, y = _regression_data(24, seed=5)
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=12)
    calls = []

    def step_fn(model, opt_state, batch, key):  # plain gradient descent, by hand
        xb, yb = batch
        def loss(m):
            return train.losses.mse(zerax.vmap(m)(xb), yb)
        value, grads = nn.filter_value_and_grad(loss)(model)
        model = zerax.tree_util.tree_map(lambda p, g: p - 0.1 * g, model, grads)
        calls.append(key)
        return model, opt_state + 1, {"loss": value, "twice": 2 * value}

    model, count, history = train.fit(nn.Linear(3, 1, key=zr.key(0)), None, None, loader,
                                      epochs=2, step_fn=step_fn, opt_state=0, key=zr.key(1),
                                      progress=False, jit=False)
    assert count == 4 and len(calls) == 4
    np.testing.assert_allclose(history.history["twice"], 2 * np.array(history["loss"]))
    assert history["loss"][1] < history["loss"][0]
    with pytest.raises(ZeraxTypeError, match=r"\(inputs, targets\)"):
        train.fit(nn.Linear(3, 1, key=zr.key(0)), optim.sgd(0.1), train.losses.mse,
                  data.DataLoader(data.ArrayDataset(x), 12), epochs=1, progress=False,
                  jit=False)
    with pytest.raises(ZeraxTypeError, match="init/update"):
        train.fit(nn.Linear(3, 1, key=zr.key(0)), "adam", train.losses.mse, loader, epochs=1)


def test_progress_bar_only_on_a_terminal(capfd, monkeypatch):
    x, y = _regression_data(16, seed=6)
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=8)
    args = (nn.Linear(3, 1, key=zr.key(0)), optim.sgd(0.1), train.losses.mse, loader)
    train.fit(*args, epochs=1, jit=False)
    assert capfd.readouterr().err == ""          # stderr is not a terminal here
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    train.fit(*args, epochs=2, jit=False, metrics=["mae"])
    err = capfd.readouterr().err
    assert "Epoch 1/2" in err and "Epoch 2/2" in err and "loss=" in err and "mae=" in err
    train.fit(*args, epochs=1, jit=False, progress=False)
    assert capfd.readouterr().err == ""
