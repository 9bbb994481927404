"""zerax.optim: optax's state structures, wrappers, jit and vmap of updates, errors,
losses (against NumPy) and tree utilities.  The numbers against optax are in
test_optim_values.py; second-order methods in test_optim_second_order.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerax as zx
import zerax.numpy as znp
import zerax.optim as optim
from zerax import errors

PARAMS = {"w": znp.asarray(np.arange(6.0).reshape(2, 3) / 10), "b": znp.asarray([0.5, -0.5])}
GRADS = {"w": znp.asarray(np.linspace(-1, 1, 6).reshape(2, 3)), "b": znp.asarray([1.0, -2.0])}


# ----------------------------------------------------------------------------- structure

def test_adam_state_has_optax_fields_and_int32_count():
    state = optim.adam(1e-3).init(PARAMS)
    assert isinstance(state, tuple) and len(state) == 2
    adam_state, lr_state = state
    assert type(adam_state).__name__ == "ScaleByAdamState"
    assert adam_state._fields == ("count", "mu", "nu")
    assert adam_state.count.dtype == np.int32 and adam_state.count.shape == ()
    assert lr_state == optim.EmptyState()
    _, state = optim.adam(1e-3).update(GRADS, state)
    assert int(state[0].count) == 1
    assert optim.tree_utils.tree_get(state, "count").dtype == np.int32


def test_safe_increment_saturates():
    top = znp.asarray(np.iinfo(np.int32).max, znp.int32)
    assert int(optim.safe_int32_increment(top)) == np.iinfo(np.int32).max
    assert int(optim.safe_int32_increment(znp.asarray(5, znp.int32))) == 6


def test_inject_hyperparams_dict_is_assignable_and_used():
    opt = optim.inject_hyperparams(optim.adam)(learning_rate=0.1)
    state = opt.init(PARAMS)
    assert type(state).__name__ == "InjectStatefulHyperparamsState"
    assert set(state.hyperparams) == {"learning_rate", "b1", "b2", "eps", "eps_root"}
    u1, _ = opt.update(GRADS, state)
    state.hyperparams["learning_rate"] = znp.asarray(0.2)
    u2, new_state = opt.update(GRADS, state)
    np.testing.assert_allclose(np.asarray(u2["w"]), 2 * np.asarray(u1["w"]), rtol=1e-15)
    assert float(new_state.hyperparams["learning_rate"]) == 0.2
    assert int(new_state.count) == 1


def test_apply_updates_keeps_param_dtype():
    p = {"a": znp.ones(2, znp.float32)}
    out = optim.apply_updates(p, {"a": znp.asarray([0.5, 0.25])})
    assert out["a"].dtype == np.float32
    assert out["a"].tolist() == [1.5, 1.25]


def test_multisteps_averages_k_gradients():
    ms = optim.MultiSteps(optim.sgd(1.0), every_k_schedule=3)
    state = ms.init(PARAMS)
    total = None
    for i, scale in enumerate([1.0, 2.0, 6.0]):
        g = zx.tree_util.tree_map(lambda x: scale * x, GRADS)
        u, state = ms.update(g, state, PARAMS)
        total = u
        assert bool(ms.has_updated(state)) == (i == 2)
    np.testing.assert_allclose(np.asarray(total["b"]), -3.0 * np.asarray(GRADS["b"]),
                               rtol=1e-6)


def test_apply_if_finite_skips_then_gives_up():
    tx = optim.apply_if_finite(optim.sgd(1.0), max_consecutive_errors=1)
    state = tx.init(PARAMS)
    bad = {"w": GRADS["w"], "b": znp.asarray([np.nan, 1.0])}
    u, state = tx.update(bad, state)
    assert np.all(np.asarray(u["w"]) == 0) and int(state.notfinite_count) == 1
    u, state = tx.update(bad, state)      # second in a row: more than 1, applied
    assert np.isnan(np.asarray(u["b"])[0]) and int(state.total_notfinite) == 2
    u, state = tx.update(GRADS, state)
    assert bool(state.last_finite) and int(state.notfinite_count) == 0


def test_masked_and_multi_transform_route_leaves():
    tx = optim.multi_transform({"fast": optim.sgd(1.0), "zero": optim.set_to_zero()},
                               {"w": "fast", "b": "zero"})
    u, state = tx.update(GRADS, tx.init(PARAMS), PARAMS)
    np.testing.assert_array_equal(np.asarray(u["w"]), -np.asarray(GRADS["w"]))
    np.testing.assert_array_equal(np.asarray(u["b"]), 0.0)
    assert set(state.inner_states) == {"fast", "zero"}
    m = optim.masked(optim.scale(3.0), lambda p: {"w": False, "b": True})
    u, _ = m.update(GRADS, m.init(PARAMS))
    np.testing.assert_array_equal(np.asarray(u["b"]), 3 * np.asarray(GRADS["b"]))
    np.testing.assert_array_equal(np.asarray(u["w"]), np.asarray(GRADS["w"]))


def test_lookahead_syncs_slow_weights():
    tx = optim.lookahead(optim.sgd(0.5), sync_period=2, slow_step_size=0.5)
    p = optim.LookaheadParams.init_synced(znp.asarray([1.0]))
    state = tx.init(p)
    for _ in range(2):
        u, state = tx.update(znp.asarray([1.0]), state, p)
        p = optim.apply_updates(p, u)
    # fast moved to 0.0 in two steps; slow moves half way and fast is reset to it
    assert p.slow.tolist() == [0.5] and p.fast.tolist() == [0.5]


def test_noisy_sgd_matches_optax_bits():
    # optax.noisy_sgd(0.1, key=3), three steps on params=grads; recorded with optax 0.2.8
    opt = optim.noisy_sgd(0.1, key=3)
    p = {"a": znp.ones(3), "b": znp.zeros((2, 2))}
    s = opt.init(p)
    for _ in range(3):
        u, s = opt.update(p, s, p)
        p = optim.apply_updates(p, u)
    np.testing.assert_allclose(
        np.asarray(p["a"]), [0.7223073028294213, 0.7377324421509895, 0.7315232022270438],
        rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(p["b"]).ravel(),
        [0.01724189939961648, -0.023111751302624182, 0.01882772734883815,
         -0.007679358851543412], rtol=1e-12)


# ----------------------------------------------------------------------------- jit, vmap

@pytest.fixture(scope="module")
def adam_jit():
    opt = optim.chain(optim.clip_by_global_norm(1.0),
                      optim.adamw(optim.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 20)))
    return opt, zx.jit(opt.update)


def test_jit_update_equals_eager(adam_jit):
    opt, update = adam_jit
    s_e = s_j = opt.init(PARAMS)
    for _ in range(3):
        u_e, s_e = opt.update(GRADS, s_e, PARAMS)
        u_j, s_j = update(GRADS, s_j, PARAMS)
    for a, b in zip(zx.tree_util.tree_leaves((u_e, s_e)), zx.tree_util.tree_leaves((u_j, s_j))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-13, atol=1e-16)
    assert zx.tree_util.tree_structure(s_e) == zx.tree_util.tree_structure(s_j)


def test_vmap_states_train_many_models(adam_jit):
    opt, _ = adam_jit
    scales = znp.asarray([0.5, 1.0, 2.0])
    stacked_p = zx.tree_util.tree_map(lambda x: znp.stack([x] * 3), PARAMS)
    stacked_g = zx.tree_util.tree_map(lambda x: scales.reshape((3,) + (1,) * x.ndim) * x, GRADS)
    states = zx.vmap(opt.init)(stacked_p)
    assert states[1][0].count.shape == (3,)
    u, states = zx.vmap(opt.update)(stacked_g, states, stacked_p)
    for i in range(3):
        g_i = zx.tree_util.tree_map(lambda x: x[i], stacked_g)
        u_i, _ = opt.update(g_i, opt.init(PARAMS), PARAMS)
        np.testing.assert_allclose(np.asarray(u["w"][i]), np.asarray(u_i["w"]), rtol=1e-14)


# ----------------------------------------------------------------------------- errors

def test_state_from_another_optimiser_is_a_clear_error():
    adam, sgd = optim.adam(1e-3), optim.sgd(1e-3, momentum=0.9)
    with pytest.raises(errors.OptimizerStateError, match="ScaleByAdamState"):
        adam.update(GRADS, sgd.init(PARAMS))
    with pytest.raises(errors.OptimizerStateError, match="chain of 3"):
        optim.adamw(1e-3).update(GRADS, adam.init(PARAMS), PARAMS)


def test_tree_mismatch_names_the_path():
    opt = optim.adam(1e-3)
    state = opt.init(PARAMS)
    bad = {"w": GRADS["w"], "c": GRADS["b"]}
    with pytest.raises(errors.TreeMismatchError, match=r"\['c'\]"):
        opt.update(bad, state)
    with pytest.raises(errors.TreeMismatchError, match=r"\['b'\].*params"):
        optim.apply_updates(PARAMS, {"w": GRADS["w"]})
    assert issubclass(errors.TreeMismatchError, ValueError)


def test_schedule_returning_non_scalar_is_a_clear_error():
    opt = optim.sgd(lambda count: znp.ones(2) * 0.1)
    with pytest.raises(errors.ShapeError, match="shape \\(2,\\)"):
        opt.update(GRADS, opt.init(PARAMS))
    inj = optim.inject_hyperparams(optim.sgd)(learning_rate=lambda c: znp.ones(3))
    with pytest.raises(errors.ShapeError, match="'learning_rate'"):
        inj.init(PARAMS)


def test_missing_params_and_bad_arguments():
    with pytest.raises(errors.ZeraxValueError, match="params"):
        optim.adamw(1e-3).update(GRADS, optim.adamw(1e-3).init(PARAMS))
    with pytest.raises(errors.ZeraxValueError, match="non-negative"):
        optim.piecewise_constant_schedule(1.0, {3: -1.0})
    with pytest.raises(errors.ZeraxTypeError, match="value_fn"):
        optim.lbfgs().update(GRADS, optim.lbfgs().init(PARAMS), PARAMS)


# ----------------------------------------------------------------------------- losses

def _np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(2, 6), st.integers(0, 10_000))
def test_cross_entropies_against_numpy(batch, classes, seed):
    rng = np.random.RandomState(seed)
    logits = rng.randn(batch, classes) * 3
    probs = rng.dirichlet(np.ones(classes), size=batch)
    labels = rng.randint(0, classes, size=batch)
    L = optim.losses
    np.testing.assert_allclose(np.asarray(L.softmax_cross_entropy(logits, probs)),
                               -(probs * _np_log_softmax(logits)).sum(-1), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(
        np.asarray(L.softmax_cross_entropy_with_integer_labels(logits, labels)),
        -_np_log_softmax(logits)[np.arange(batch), labels], rtol=1e-12, atol=1e-13)
    y = (probs > 0.5).astype(float)
    sig = 1 / (1 + np.exp(-logits))
    np.testing.assert_allclose(np.asarray(L.sigmoid_binary_cross_entropy(logits, y)),
                               -(y * np.log(sig) + (1 - y) * np.log1p(-sig)), rtol=1e-9)


def test_regression_losses_against_numpy():
    rng = np.random.RandomState(0)
    p, t = rng.randn(4, 3), rng.randn(4, 3)
    e = p - t
    L = optim.losses
    np.testing.assert_allclose(np.asarray(L.squared_error(p, t)), e ** 2, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(L.l2_loss(p, t)), 0.5 * e ** 2, rtol=1e-15)
    a = np.abs(e)
    np.testing.assert_allclose(np.asarray(L.huber_loss(p, t, delta=0.5)),
                               np.where(a <= 0.5, 0.5 * e ** 2, 0.5 * (a - 0.25)), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(L.log_cosh(p, t)), np.log(np.cosh(e)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(L.hinge_loss(p, np.sign(t))),
                               np.maximum(0, 1 - p * np.sign(t)), rtol=1e-15)
    cos = (p * t).sum(-1) / np.linalg.norm(p, axis=-1) / np.linalg.norm(t, axis=-1)
    np.testing.assert_allclose(np.asarray(L.cosine_distance(p, t)), 1 - cos, rtol=1e-12)
    q = rng.dirichlet(np.ones(3), size=4)
    q[0, 1] = 0.0
    q[0] /= q[0].sum()
    logp = _np_log_softmax(p)
    kl = np.sum(np.where(q == 0, 0.0, q * (np.log(np.where(q == 0, 1, q)) - logp)), -1)
    np.testing.assert_allclose(np.asarray(L.kl_divergence(logp, q)), kl, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(L.smooth_labels(q, 0.3)), 0.7 * q + 0.1, rtol=1e-15)


def test_losses_differentiate():
    logits = np.random.RandomState(2).randn(2, 4)
    labels = np.asarray([1, 3])
    zx.test_util.check_grads(
        lambda x: znp.sum(optim.losses.softmax_cross_entropy_with_integer_labels(x, labels)),
        (logits,), order=2, modes=("fwd", "rev"))
    zx.test_util.check_grads(lambda x: znp.sum(optim.losses.huber_loss(x, delta=0.3)),
                             (logits,), order=1, modes=("fwd", "rev"))


# ----------------------------------------------------------------------------- tree utils

def test_tree_utils_against_numpy():
    tu = optim.tree_utils
    flat_g = np.concatenate([np.asarray(GRADS["b"]), np.asarray(GRADS["w"]).ravel()])
    flat_p = np.concatenate([np.asarray(PARAMS["b"]), np.asarray(PARAMS["w"]).ravel()])
    assert np.isclose(float(tu.tree_norm(GRADS)), np.linalg.norm(flat_g), rtol=1e-15)
    assert np.isclose(float(optim.global_norm(GRADS)), np.linalg.norm(flat_g), rtol=1e-15)
    assert np.isclose(float(tu.tree_vdot(GRADS, PARAMS)), flat_g @ flat_p, rtol=1e-14)
    assert float(tu.tree_norm(GRADS, ord=1)) == pytest.approx(np.abs(flat_g).sum())
    assert float(tu.tree_norm(GRADS, ord="inf")) == np.abs(flat_g).max()
    assert tu.tree_size(GRADS) == 8
    assert tu.tree_dtype({"a": znp.ones(1, znp.float32), "b": znp.ones(1)}, "lowest") == \
        np.float32
    s = optim.adam(0.1).init(PARAMS)
    s2 = tu.tree_set(s, count=znp.asarray(7, znp.int32))
    assert int(tu.tree_get(s2, "count")) == 7 and type(s2[0]) is type(s[0])
    assert optim.tree.add is tu.tree_add


def test_states_checkpoint_round_trip(tmp_path):
    import zerax.io as zio
    opt = optim.chain(optim.clip_by_global_norm(1.0),
                      optim.inject_hyperparams(optim.adamw)(
                          learning_rate=optim.linear_schedule(0.1, 0.0, 10)))
    state = opt.init(PARAMS)
    for _ in range(2):
        _, state = opt.update(GRADS, state, PARAMS)
    zio.save(tmp_path / "opt.safetensors", state)
    back = zio.load(tmp_path / "opt.safetensors", like=opt.init(PARAMS))
    assert zx.tree_util.tree_structure(back) == zx.tree_util.tree_structure(state)
    for a, b in zip(zx.tree_util.tree_leaves(back), zx.tree_util.tree_leaves(state)):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    u1, _ = opt.update(GRADS, back, PARAMS)
    u2, _ = opt.update(GRADS, state, PARAMS)
    np.testing.assert_array_equal(np.asarray(u1["w"]), np.asarray(u2["w"]))


def test_freeze_flatten_and_scale_gradient():
    tx = optim.chain(optim.freeze({"w": True, "b": False}), optim.sgd(1.0))
    u, _ = tx.update(GRADS, tx.init(PARAMS))
    assert np.all(np.asarray(u["w"]) == 0)
    np.testing.assert_array_equal(np.asarray(u["b"]), -np.asarray(GRADS["b"]))
    sel = optim.selective_transform(optim.sgd(1.0), freeze_mask={"w": False, "b": True})
    u, _ = sel.update(GRADS, sel.init(PARAMS))
    assert np.all(np.asarray(u["b"]) == 0)
    # flatten: the same numbers as the tree version, one state vector
    flat, tree = optim.flatten(optim.adam(0.1)), optim.adam(0.1)
    uf, sf = flat.update(GRADS, flat.init(PARAMS))
    ut, _ = tree.update(GRADS, tree.init(PARAMS))
    assert sf[0].mu.shape == (8,)
    for k in ("w", "b"):
        np.testing.assert_array_equal(np.asarray(uf[k]), np.asarray(ut[k]))
    # scale_gradient: identity forward, scaled derivative (checked by finite differences)
    x = znp.asarray([0.5, -1.5])
    np.testing.assert_array_equal(np.asarray(optim.scale_gradient(x, 0.3)), np.asarray(x))
    g = zx.grad(lambda x: znp.sum(optim.scale_gradient(x, 0.3) ** 3))(x)
    np.testing.assert_allclose(np.asarray(g), 0.3 * 3 * np.asarray(x) ** 2, rtol=1e-15)


def test_contrib_reduce_on_plateau_schedule():
    # optax.contrib.reduce_on_plateau's rules, traced by hand: the scale halves when the
    # averaged value has not improved (by rtol) for `patience` averages, then waits
    # `cooldown` averages; the updates are multiplied by the scale.
    import zerax.optim as optim
    tx = optim.contrib.reduce_on_plateau(factor=0.5, patience=2, cooldown=1, rtol=0.1)
    state = tx.init({"w": np.zeros(2, np.float32)})
    assert state.scale.dtype == np.float32 and state.plateau_count.dtype == np.int32
    values = [1.0, 0.95, 0.97, 0.5, 0.49, 0.48, 0.47, 0.46]
    scales, counts = [], []
    for v in values:
        upd, state = tx.update({"w": np.ones(2, np.float32)}, state, value=v)
        scales.append(float(state.scale))
        counts.append(int(state.plateau_count))
        np.testing.assert_allclose(upd["w"], [scales[-1]] * 2)
    # 1.0 improves on inf; 0.95 and 0.97 are within 10% (plateau 1, 2 -> halve, cool 1);
    # 0.5 improves (cooldown step: plateau reset); 0.49, 0.48 plateau 1, 2 -> halve;
    # 0.47 cooldown; 0.46 plateau 1
    assert scales == [1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25]
    assert counts == [0, 1, 0, 0, 1, 0, 0, 1]
    acc = optim.contrib.reduce_on_plateau(factor=0.5, patience=1, accumulation_size=2)
    s = acc.init(np.zeros(1))
    for v in (1.0, 3.0, 2.5, 1.5):      # averages 2.0 then 2.0: one plateau -> halve
        _, s = acc.update(np.ones(1), s, value=v)
    assert float(s.scale) == 0.5 and float(s.best_value) == 2.0
    with pytest.raises(errors.ZeraxValueError):
        optim.contrib.reduce_on_plateau(factor=1.5)
    with pytest.raises(errors.ZeraxTypeError, match="value"):
        tx.update({"w": np.ones(2)}, state)


def test_contrib_schedule_free_matches_recorded_optax():
    # recorded with optax 0.2.x (jax_enable_x64): 12 steps on a least-squares problem
    X = np.linspace(-1, 1, 12).reshape(6, 2)
    y = X @ np.array([1.5, -0.5]) + 0.3

    def loss(p):
        return znp.mean((X @ p["w"] + p["b"] - y) ** 2)

    cases = [
        (optim.contrib.schedule_free_sgd(0.3, warmup_steps=3, weight_decay=1e-2),
         [0.524550043425909, 0.5476195080014061], 0.12688205516523438,
         [0.5128611081983837, 0.5357969963402786], 0.1261473847804221, 0.9500000804662723),
        (optim.contrib.schedule_free_adamw(0.1, warmup_steps=4, weight_decay=1e-2),
         [0.41093153903028284, 0.3997605241316105], 0.11818006330263654,
         [0.38691317014390963, 0.3766491713556113], 0.12008231854417661,
         0.09875000312924388),
    ]
    for opt, w, b, ew, eb, wsum in cases:
        p = {"w": znp.zeros(2), "b": znp.asarray(0.0)}
        s = opt.init(p)
        step = zx.jit(lambda p, s, opt=opt: opt.update(zx.grad(loss)(p), s, p))
        for _ in range(12):
            u, s = step(p, s)
            p = optim.apply_updates(p, u)
        e = optim.contrib.schedule_free_eval_params(s, p)
        np.testing.assert_allclose(p["w"], w, rtol=1e-8)
        np.testing.assert_allclose(p["b"], b, rtol=1e-8)
        np.testing.assert_allclose(e["w"], ew, rtol=1e-8)
        np.testing.assert_allclose(e["b"], eb, rtol=1e-8)
        np.testing.assert_allclose(s.weight_sum, wsum, rtol=1e-8)
        assert s.step_count.dtype == np.int32 and int(s.step_count) == 13
    with pytest.raises(errors.ZeraxValueError):
        optim.contrib.schedule_free_eval_params(optim.adam(0.1).init(np.zeros(2)), np.zeros(2))


def test_more_losses_match_formulas_and_recorded_optax():
    rs = np.random.RandomState(0)
    e = rs.randn(6, 4)
    lab = np.array([0, 0, 1, 1, 2, 2])
    # recorded with optax (jax_enable_x64)
    np.testing.assert_allclose(optim.losses.ntxent(e, lab), 8.625684901476854, rtol=1e-12)
    np.testing.assert_allclose(optim.losses.ntxent(e, lab, temperature=0.5),
                               2.0332178461001065, rtol=1e-12)
    a, p, n = rs.randn(3, 4), rs.randn(3, 4), rs.randn(3, 4)
    np.testing.assert_allclose(optim.losses.triplet_margin_loss(a, p, n),
                               [0.0, 2.2251827076558266, 0.38600205101315654], rtol=1e-12)
    np.testing.assert_allclose(
        optim.losses.triplet_margin_loss(a, p, n, norm_degree=1, margin=2.0),
        [0.0, 2.9327780181397687, 2.794957348035703], rtol=1e-12)
    # formulas
    lp = np.log(np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]))
    t = np.array([[0.1, 0.4, 0.7], [0.5, 0.5, 0.2]])
    want = (t * (np.log(t) - lp)).sum(-1) + (np.exp(lp) - t).sum(-1)
    np.testing.assert_allclose(optim.losses.generalized_kl_divergence(lp, t), want, rtol=1e-13)
    np.testing.assert_allclose(optim.convex_kl_divergence(lp, t), want, rtol=1e-13)
    s = rs.randn(4, 5)
    y = np.array([0, 3, 4, 1])
    np.testing.assert_allclose(optim.losses.multiclass_perceptron_loss(s, y),
                               s.max(-1) - s[np.arange(4), y], rtol=1e-15)
    with pytest.raises(errors.ZeraxValueError):
        optim.losses.ntxent(e, lab[:3])
