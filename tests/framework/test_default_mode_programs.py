"""Real programs from optax's and Equinox's documentation in JAX's default 32-bit mode
(``jax_enable_x64`` off), run with zerax's names and compared with JAX's results, result by
result: optax's getting-started notebook (an MLP on bit patterns with adam, then a
chain of clip and adamw under a warmup-cosine schedule), its meta-learning notebook
(rmsprop whose learning rate adam learns through ``inject_hyperparams``), and Equinox's
MLP example (``filter_jit``, ``filter_value_and_grad``, Dropout).

Recorded once with JAX 0.10.2, optax 0.2.8 and Equinox 0.13.8 (JAX_PLATFORMS=cpu,
jax_enable_x64=False) by running the same functions with ``jax``, ``jax.numpy``, ``optax``
and ``equinox`` in place of zerax's modules (shorter runs than the notebooks': 20 steps,
10 meta-steps, 10 steps). The random data, initial parameters, losses and learned values
are float32 and equal JAX's to a few float32 ulps, which the training amplifies at most
to the tolerances below (the adamw run steps with a learning rate up to 1.0).
"""

import numpy as np
import pytest

import zerax as zx
import zerax.nn as nn
import zerax.numpy as jnp
import zerax.optim as optax

jax = zx

GS_ADAM_LOSSES = [
    5.689767360687256, 12.530570983886719, 5.854740619659424, 2.4965615272521973,
    4.251109600067139, 7.625365734100342, 6.71930456161499, 3.7518398761749268,
    10.248056411743164, 6.068127155303955, 7.556733131408691, 3.7701680660247803,
    6.486392498016357, 2.420454740524292, 3.0084376335144043, 4.458999156951904,
    2.0693562030792236, 7.111564636230469, 3.6523277759552, 1.7030963897705078]

GS_ADAMW_LOSSES = [
    5.689767360687256, 13.254073143005371, 4.722178936004639, 5.9174699783325195,
    7.168650150299072, 1.6130459308624268, 1.5096988677978516, 0.034432075917720795,
    2.5475680828094482, 0.00017316630692221224, 7.604705333709717, 4.309087753295898,
    4.317425972288902e-09, 2.478342056274414, 8.987645697122737e-13, 1.5231810834848147e-07,
    8.484592889379527e-11, 0.004310610704123974, 1.1802185773849487, 4.442126388948253e-10]

GS_HIDDEN_ROW0 = [
    1.7197116613388062, 2.1396195888519287, -0.519091010093689, -0.1975056678056717,
    0.23723429441452026, -0.8951829671859741]

ML_LEARNING_RATES = [
    0.10273255407810211, 0.10463417321443558, 0.106706902384758, 0.10844262689352036,
    0.1102229580283165, 0.11240532249212265, 0.11464806646108627, 0.11713030189275742,
    0.1195107102394104, 0.12176486104726791]

ML_THETAS = [
    1.3714666366577148, 2.390941858291626, 3.140763521194458, 3.378984212875366,
    3.7599546909332275, 4.321207523345947, 4.658229827880859, 5.1317524909973145,
    5.619388580322266, 6.268383502960205]

EQX_LOSSES = [
    0.5743107795715332, 0.5276364088058472, 0.5032058954238892, 0.48545175790786743,
    0.46561509370803833, 0.4423050284385681, 0.4162425398826599, 0.3903254270553589,
    0.3667241036891937, 0.34711921215057373]

EQX_W0 = [
    -0.7045271992683411, -0.16733726859092712, -0.16448722779750824, -0.36353743076324463,
    0.2730013132095337, -0.276546448469162]

DROPOUT_MASK = [
    1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1]

DROPOUT_MASK_X64 = [
    0, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]


# --------------------------------------------------------------------------- optax


def _getting_started(steps=20):
    BATCH_SIZE = 5
    raw = np.random.RandomState(0).randint(255, size=(steps, BATCH_SIZE, 1))
    TRAINING_DATA = np.unpackbits(raw.astype(np.uint8), axis=-1)
    LABELS = jax.nn.one_hot(raw % 2, 2).astype(jnp.float32).reshape(steps, BATCH_SIZE, 2)
    initial_params = {
        'hidden': jax.random.normal(shape=[8, 32], key=jax.random.PRNGKey(0)),
        'output': jax.random.normal(shape=[32, 2], key=jax.random.PRNGKey(1)),
    }

    def net(x, params):
        x = jnp.dot(x, params['hidden'])
        x = jax.nn.relu(x)
        return jnp.dot(x, params['output'])

    def loss(params, batch, labels):
        y_hat = net(batch, params)
        return optax.sigmoid_binary_cross_entropy(y_hat, labels).sum(axis=-1).mean()

    def fit(params, optimizer):
        opt_state = optimizer.init(params)

        @jax.jit
        def step(params, opt_state, batch, labels):
            loss_value, grads = jax.value_and_grad(loss)(params, batch, labels)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            params = optax.apply_updates(params, updates)
            return params, opt_state, loss_value

        losses = []
        for batch, labels in zip(TRAINING_DATA, LABELS):
            params, opt_state, loss_value = step(params, opt_state, batch, labels)
            losses.append(loss_value)
        return params, losses

    params, adam_losses = fit(initial_params, optax.adam(learning_rate=1e-2))
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=1.0, warmup_steps=10, decay_steps=steps, end_value=0.0)
    optimizer = optax.chain(optax.clip(1.0), optax.adamw(learning_rate=schedule))
    _, adamw_losses = fit(initial_params, optimizer)
    return params, adam_losses, adamw_losses


def test_optax_getting_started_notebook(x32):
    params, adam_losses, adamw_losses = _getting_started()
    assert params["hidden"].dtype == np.float32
    assert all(v.dtype == np.float32 for v in adam_losses + adamw_losses)
    np.testing.assert_allclose(np.asarray(params["hidden"])[0, :6], GS_HIDDEN_ROW0,
                               rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(adam_losses), GS_ADAM_LOSSES, rtol=2e-5)
    np.testing.assert_allclose(np.asarray(adamw_losses), GS_ADAMW_LOSSES, rtol=2e-3,
                               atol=1e-5)


def _meta_learning(iters=10, N=7):
    def generator():
        rng = jax.random.PRNGKey(0)
        while True:
            rng, k1, k2 = jax.random.split(rng, num=3)
            x = jax.random.uniform(k1, minval=0.0, maxval=10.0)
            y = 10 * x + jax.random.normal(k2)
            yield x, y

    def f(theta, x):
        return x * theta

    theta = jax.random.normal(jax.random.PRNGKey(42))
    init_learning_rate = jnp.array(0.1)
    meta_learning_rate = jnp.array(0.03)
    opt = optax.inject_hyperparams(optax.rmsprop)(learning_rate=init_learning_rate)
    meta_opt = optax.adam(learning_rate=meta_learning_rate)

    def loss(theta, x, y):
        return optax.l2_loss(y, f(theta, x))

    def step(theta, state, x, y):
        grad = jax.grad(loss)(theta, x, y)
        updates, state = opt.update(grad, state)
        return optax.apply_updates(theta, updates), state

    @jax.jit
    def outer_loss(eta, theta, state, samples):
        state.hyperparams['learning_rate'] = jax.nn.sigmoid(eta)
        for x, y in samples[:-1]:
            theta, state = step(theta, state, x, y)
        x, y = samples[-1]
        return loss(theta, x, y), (theta, state)

    @jax.jit
    def outer_step(eta, theta, meta_state, state, samples):
        grad, (theta, state) = jax.grad(outer_loss, has_aux=True)(eta, theta, state, samples)
        meta_updates, meta_state = meta_opt.update(grad, meta_state)
        eta = optax.apply_updates(eta, meta_updates)
        return eta, theta, meta_state, state

    state = opt.init(theta)
    eta = -np.log(1. / init_learning_rate - 1)
    meta_state = meta_opt.init(eta)
    g = generator()
    learning_rates, thetas = [], []
    for _ in range(iters):
        samples = [next(g) for _ in range(N)]
        eta, theta, meta_state, state = outer_step(eta, theta, meta_state, state, samples)
        learning_rates.append(jax.nn.sigmoid(eta))
        thetas.append(theta)
    return learning_rates, thetas


def test_optax_meta_learning_notebook(x32):
    learning_rates, thetas = _meta_learning()
    assert all(v.dtype == np.float32 for v in learning_rates + thetas)
    np.testing.assert_allclose(np.asarray(learning_rates), ML_LEARNING_RATES, rtol=2e-6)
    np.testing.assert_allclose(np.asarray(thetas), ML_THETAS, rtol=2e-6)


# --------------------------------------------------------------------------- Equinox


def test_equinox_mlp_example(x32):
    key = jax.random.PRNGKey(0)
    mkey, xkey, nkey, dkey = jax.random.split(key, 4)
    model = nn.MLP(in_size=2, out_size=1, width_size=16, depth=2, key=mkey)
    x = jax.random.normal(xkey, (64, 2))
    y = jnp.sin(x[:, :1] * 2.0) + 0.1 * jax.random.normal(nkey, (64, 1))

    def loss_fn(model, x, y):
        return jnp.mean((jax.vmap(model)(x) - y) ** 2)

    optim = optax.adam(1e-2)
    opt_state = optim.init(nn.filter(model, nn.is_array))

    @nn.filter_jit
    def make_step(model, opt_state, x, y):
        loss, grads = nn.filter_value_and_grad(loss_fn)(model, x, y)
        updates, opt_state = optim.update(grads, opt_state, nn.filter(model, nn.is_array))
        return nn.apply_updates(model, updates), opt_state, loss

    losses = []
    for _ in range(10):
        model, opt_state, loss = make_step(model, opt_state, x, y)
        losses.append(loss)
    assert all(v.dtype == np.float32 for v in losses)
    np.testing.assert_allclose(np.asarray(losses), EQX_LOSSES, rtol=2e-6)
    np.testing.assert_allclose(np.asarray(model.layers[0].weight)[:3].ravel(), EQX_W0,
                               rtol=2e-6, atol=1e-7)


def test_dropout_mask_is_equinoxs_in_both_modes(x64):
    # a Python-float p draws float64 uniforms with x64 on, float32 off, as Equinox does
    key = jax.random.split(jax.random.PRNGKey(0), 4)[3]
    y = np.asarray(nn.Dropout(0.3)(jnp.ones(12), key=key))
    assert y.dtype == (np.float64 if x64 else np.float32)
    assert (y > 0).astype(int).tolist() == (DROPOUT_MASK_X64 if x64 else DROPOUT_MASK)
    np.testing.assert_allclose(y[y > 0], 1 / 0.7, rtol=1e-7)


# --------------------------------------------------------------------------- data, train


def _fit(x, y):
    from zerax import data, train
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=16, shuffle=True, seed=0,
                             prefetch=2)
    batch = next(iter(loader))
    model, _, history = train.fit(nn.Linear(1, 1, key=jax.random.key(0)), optax.adam(0.1),
                                  train.losses.mse, loader, epochs=3, progress=False)
    return batch, model, history.history["loss"]


def test_data_and_fit_follow_the_mode():
    # float64 NumPy data: with x64 off the loader's batches (also from its prefetching
    # thread) are float32, and fit trains as it does on the float32 data with x64 on (to
    # float32 rounding: with x64 on, adam's bias corrections of the int32 step count are
    # float64, as JAX's weak floats make them)
    x = np.linspace(-1, 1, 64)[:, None]
    with zx.enable_x64(False):
        batch, model, losses = _fit(x, 3 * x)
    assert batch[0].dtype == np.float32 and model.weight.dtype == np.float32
    with zx.enable_x64(True):
        batch64, model64, losses64 = _fit(x.astype(np.float32), (3 * x).astype(np.float32))
        assert _fit(x, 3 * x)[0][0].dtype == np.float64     # (x64 on: the data's dtype)
    np.testing.assert_array_equal(np.asarray(batch[0]), np.asarray(batch64[0]))
    np.testing.assert_allclose(losses, losses64, rtol=1e-4)
    np.testing.assert_allclose(np.asarray(model.weight), np.asarray(model64.weight), rtol=1e-4)


# --------------------------------------------------------------------------- optax's parts

# optax's schedules (at steps C), states, updates and losses in JAX's default mode, recorded
# from optax 0.2.8 with jax_enable_x64=False: name -> (expression, dtype, values); each
# expression is evaluated with zerax.optim as ``optax`` and zerax.numpy as ``jnp``.
C = [0, 3, 7, 10, 15]
OPTAX_DEFAULT_MODE = {
    "const": ('[optax.constant_schedule(0.1)(c) for c in C]',
        "float64",
        [0.1, 0.1, 0.1, 0.1, 0.1]),
    "poly": ('[optax.polynomial_schedule(1.0, 0.1, 2.0, 10, 2)(c) for c in C]',
        "float32",
        [1.0, 0.828999936580658, 0.32499998807907104, 0.13599999248981476,
         0.10000000149011612]),
    "linear": ('[optax.linear_schedule(1.0, 0.0, 10)(c) for c in C]',
        "float32",
        [1.0, 0.699999988079071, 0.30000001192092896, 0.0, 0.0]),
    "pwc": ('[optax.piecewise_constant_schedule(1.0, {3: 0.5, 8: 0.1})(c) for c in C]',
        "float32",
        [1.0, 0.5, 0.5, 0.05000000074505806, 0.05000000074505806]),
    "expdecay": ('[optax.exponential_decay(0.5, 4, 0.9)(c) for c in C]',
        "float32",
        [0.5, 0.46201053261756897, 0.4158094823360443, 0.38421669602394104,
         0.33680564165115356]),
    "expdecay_stair": ('[optax.exponential_decay(0.5, 4, 0.9, transition_begin=2, staircase=True, '
         'end_value=0.3)(c) for c in C]',
        "float32",
        [0.5, 0.5, 0.44999998807907104, 0.4049999713897705, 0.3644999563694]),
    "cosine": ('[optax.cosine_decay_schedule(1.0, 12, alpha=0.1)(c) for c in C]',
        "float32",
        [1.0, 0.8681980967521667, 0.43353137373924255, 0.1602885127067566,
         0.10000000149011612]),
    "warmup_cos": ('[optax.warmup_cosine_decay_schedule(0.0, 1.0, 4, 14, '
         'end_value=0.05)(c) for c in C]',
        "float32",
        [0.0, 0.75, 0.8041979670524597, 0.3782168924808502, 0.05000000074505806]),
    "warmup_exp": ('[optax.warmup_exponential_decay_schedule(0.0, 1.0, 4, 3, 0.5)(c) for c in C]',
        "float32",
        [0.0, 0.75, 0.5, 0.25, 0.07874505966901779]),
    "onecycle": ('[optax.linear_onecycle_schedule(14, 1.0)(c) for c in C]',
        "float32",
        [0.03999999910593033, 0.7599999904632568, 0.5885714292526245, 0.17714285850524902,
         3.999999989900971e-06]),
    "cos_onecycle": ('[optax.cosine_onecycle_schedule(14, 1.0)(c) for c in C]',
        "float32",
        [0.04000002145767212, 0.8594112396240234, 0.7938934564590454, 0.34549403190612793,
         3.999999989900971e-06]),
    "pw_interp": ("[optax.piecewise_interpolate_schedule('cosine', 1.0, {4: 0.5, "
         '10: 0.2})(c) for c in C]',
        "float32",
        [1.0, 0.5732232928276062, 0.29999998211860657, 0.10000000149011612,
         0.10000000149011612]),
    "sgdr": ('[optax.sgdr_schedule([dict(init_value=0.0, peak_value=1.0, warmup_steps=2, '
         'decay_steps=6, end_value=0.0)] * 2)(c) for c in C]',
        "float32",
        [0.0, 0.8535534143447876, 0.5, 0.4999999701976776, 0.0]),
    "adam_state": ("optax.adam(0.1).init({'w': jnp.ones(2)})[0].mu['w']",
        "float32",
        [0.0, 0.0]),
    "adam_count": ("optax.adam(0.1).init({'w': jnp.ones(2)})[0].count",
        "int32",
        0),
    "adam_update": ("optax.adam(0.1).update({'w': jnp.asarray([0.5, -2.0])}, "
         "optax.adam(0.1).init({'w': jnp.ones(2)}))[0]['w']",
        "float32",
        [-0.099999338388443, 0.099999338388443]),
    "sgd_sched_update": ('optax.sgd(optax.exponential_decay(0.5, 4, '
         "0.9)).update({'w': jnp.asarray([1.0, 2.0])}, "
         'optax.sgd(optax.exponential_decay(0.5, 4, '
         "0.9)).init({'w': jnp.ones(2)}))[0]['w']",
        "float32",
        [-0.5, -1.0]),
    "inject_lr": ("optax.inject_hyperparams(optax.sgd)(learning_rate=0.1)"
                  ".init({'w': jnp.ones(2)}).hyperparams['learning_rate']",
        "float32",
        0.10000000149011612),
    "inject_sched": ('optax.inject_hyperparams(optax.adam)('
         'learning_rate=optax.linear_schedule(1.0, '
         "0.0, 10)).update({'w': jnp.ones(2)}, "
         'optax.inject_hyperparams(optax.adam)(learning_rate=optax.linear_schedule(1.0, '
         "0.0, 10)).init({'w': jnp.ones(2)}))[1].hyperparams['learning_rate']",
        "float32",
        1.0),
    "l2": ('optax.l2_loss(jnp.asarray([1.0, 2.0]), jnp.asarray([0.5, 0.0]))',
        "float32",
        [0.125, 2.0]),
    "sce": ('optax.softmax_cross_entropy(jnp.asarray([[1.0, 2.0, 0.5]]), '
         'jnp.asarray([[0.0, 1.0, 0.0]]))',
        "float32",
        [0.4643687903881073]),
    "sce_int": ('optax.softmax_cross_entropy_with_integer_labels(jnp.asarray([[1.0, 2.0, '
         '0.5]]), jnp.asarray([1]))',
        "float32",
        [0.4643688201904297]),
    "huber": ('optax.huber_loss(jnp.asarray([1.0, 3.0]), jnp.asarray([0.0, 0.0]))',
        "float32",
        [0.5, 2.5]),
    "clip_norm": ("optax.clip_by_global_norm(1.0).update({'w': jnp.asarray([3.0, 4.0])}, "
         "optax.clip_by_global_norm(1.0).init({'w': jnp.ones(2)}))[0]['w']",
        "float32",
        [0.6000000238418579, 0.800000011920929]),
    "global_norm": ("optax.global_norm({'w': jnp.asarray([3.0, 4.0])})",
        "float32",
        5.0),
    "adamw_step": ("optax.apply_updates({'w': jnp.ones(2)}, "
         "optax.adamw(0.1).update({'w': jnp.asarray([0.5, -2.0])}, "
         "optax.adamw(0.1).init({'w': jnp.ones(2)}), {'w': jnp.ones(2)})[0])['w']",
        "float32",
        [0.8999906778335571, 1.0999892950057983]),
}


@pytest.mark.parametrize("name", sorted(OPTAX_DEFAULT_MODE))
def test_optax_parts_in_default_mode(name, x32):
    expr, dtype, expected = OPTAX_DEFAULT_MODE[name]
    got = eval(expr)   # noqa: S307 - a literal expression of this file
    got = [np.asarray(v) for v in got] if isinstance(got, list) else np.asarray(got)
    assert all(np.asarray(v).dtype == dtype for v in (got if isinstance(got, list) else [got]))
    np.testing.assert_allclose(np.asarray(got, np.float64), expected, rtol=2e-7, atol=1e-8)
