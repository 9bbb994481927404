"""optax's conventions in zerax.optim, as a ported program meets them: a whole
Equinox-style model as ``params`` (updates hold ``None`` for its non-array leaves), the
update protocol's extra arguments passed to every optimiser, and optax's submodules
(``transforms``, ``projections``, ``second_order``...). Values were recorded from optax
0.2.8 with Equinox 0.13.8 on JAX 0.10.2 (the model in float32, JAX's default mode; the
projections and second-order functions in float64)."""

import numpy as np
import pytest

import zerax as zx
import zerax.nn as eqx
import zerax.numpy as jnp
import zerax.optim as optax
from zerax import errors

ADAMW_W0 = [[-0.3063594400882721, 0.4062099754810333],
            [-0.17430701851844788, 0.5673959255218506],
            [-0.25183218717575073, -0.6180263757705688],
            [-0.46335357427597046, 0.08736257255077362]]
ADAMW_B1 = [-0.3779918849468231]
LION_W0 = [[-0.302694171667099, 0.4013500511646271],
           [-0.17252732813358307, 0.5603018403053284],
           [-0.24848127365112305, -0.6102942228317261],
           [-0.4580879211425781, 0.08598275482654572]]
LION_B1 = [-0.3732069730758667]
NADAMW_W0 = [[-0.3063594400882721, 0.4062099754810333],
             [-0.18091312050819397, 0.5607901215553284],
             [-0.24541576206684113, -0.611609935760498],
             [-0.4701203405857086, 0.08093901723623276]]
NADAMW_B1 = [-0.3711009919643402]
CHAIN_W0 = [[-0.28920984268188477, 0.3834708333015442],
            [-0.14754854142665863, 0.5483303666114807],
            [-0.2600190341472626, -0.6070281863212585],
            [-0.41091039776802063, 0.10493218898773193]]
CHAIN_B1 = [-0.2537039518356323]
P_SIMPLEX = [0.0, 0.0, 0.0, 1.0, 0.0]
P_SIMPLEX3 = [0.6999999999999998, 0.0, 0.1999999999999998, 2.0999999999999996, 0.0]
P_L1_SPHERE = [0.0, -0.7499999999999998, 0.0, 1.25, -0.0]
P_L1_BALL = [0.0, -0.7499999999999998, 0.0, 1.25, -0.0]
P_L2_SPHERE = [0.5449621626321373, -1.1580445955932916, 0.20436081098705144,
               1.4986459472383775, -0.27248108131606863]
P_L2_BALL = [0.5449621626321373, -1.1580445955932916, 0.20436081098705144, 1.4986459472383775,
             -0.27248108131606863]
P_LINF_BALL = [0.5, -0.5, 0.3, 0.5, -0.4]
P_BOX = [0.8, -0.5, 0.3, 1.0, -0.4]
P_HYPERCUBE = [0.8, 0.0, 0.3, 2.0, 0.0]
P_NONNEG = [0.8, 0.0, 0.3, 2.2, 0.0]
P_VECTOR = [-0.2879999999999999, -0.5759999999999998, 0.2879999999999999, -0.14399999999999996,
            -0.0]
P_HYPERPLANE = [1.3279999999999998, -0.6440000000000001, -0.22799999999999992, 2.464, -0.4]
P_HALFSPACE = [0.8, -1.7, 0.3, 2.2, -0.4]
S_HESSIAN_DIAG = [2.0, 0.43916215470227515, 0.3768364998694558, 0.4069434331069492]
S_FISHER_DIAG = [0.00010633797412497754, 0.020122968346830934, 0.02109332447319779,
                 0.02208652888257494]
S_HVP_W = [-0.10409141353593436, 0.29971496204948006, 0.7035213376348943]
S_HVP_B = 2.5778447588055533
P_SIMPLEX3_JAC = [[0.6666666666666666, 0.0, -0.3333333333333333, -0.3333333333333333, 0.0],
                  [0.0, 0.0, 0.0, 0.0, 0.0],
                  [-0.3333333333333333, 0.0, 0.6666666666666666, -0.3333333333333333, 0.0],
                  [-0.3333333333333333, 0.0, -0.3333333333333333, 0.6666666666666666, 0.0],
                  [0.0, 0.0, 0.0, 0.0, 0.0]]
P_TREE_SIMPLEX_A = [0.41666666666666663, 1.4166666666666665]

X = jnp.asarray(np.linspace(-1, 1, 10).reshape(5, 2), jnp.float32)
Y = jnp.asarray(np.linspace(0, 1, 5).reshape(5, 1), jnp.float32)


def _loss(m):
    return jnp.mean((zx.vmap(m)(X) - Y) ** 2)


def _train(opt, steps=3, filtered=False):
    m = eqx.nn.MLP(2, 1, 4, 1, key=zx.random.PRNGKey(0))     # Equinox's parameters for key 0
    state = opt.init(eqx.filter(m, eqx.is_array))
    for _ in range(steps):
        g = eqx.filter_grad(_loss)(m)
        params = eqx.filter(m, eqx.is_array) if filtered else m
        updates, state = opt.update(g, state, params)
        m = eqx.apply_updates(m, updates)
    return m


@pytest.mark.parametrize("name, make", [
    ("ADAMW", lambda: optax.adamw(1e-2, weight_decay=0.1)),
    ("LION", lambda: optax.lion(1e-2, weight_decay=0.5)),
    ("NADAMW", lambda: optax.nadamw(1e-2, weight_decay=0.1)),
    ("CHAIN", lambda: optax.chain(optax.clip_by_global_norm(0.5),
                                  optax.add_decayed_weights(0.2), optax.sgd(0.1))),
])
def test_a_whole_model_as_params_matches_optax(name, make):
    m = _train(make())
    np.testing.assert_allclose(m.layers[0].weight, globals()[name + "_W0"], rtol=2e-5)
    np.testing.assert_allclose(m.layers[1].bias, globals()[name + "_B1"], rtol=2e-5)


@pytest.mark.parametrize("make", [
    lambda: optax.lamb(1e-2), lambda: optax.lars(1e-2), lambda: optax.adafactor(1e-2),
    lambda: optax.novograd(1e-2), lambda: optax.fromage(1e-2),
    lambda: optax.chain(optax.adaptive_grad_clip(0.1), optax.keep_params_nonnegative(),
                        optax.sgd(1e-2)),
])
def test_a_whole_model_as_params_equals_the_filtered_params(make):
    # (optax itself fails on these with a model holding functions; zerax accepts it and
    # gives what the array-only params give)
    whole, filtered = _train(make()), _train(make(), filtered=True)
    for a, b in zip(zx.tree_util.tree_leaves(eqx.filter(whole, eqx.is_array)),
                    zx.tree_util.tree_leaves(eqx.filter(filtered, eqx.is_array))):
        np.testing.assert_array_equal(a, b)


def test_apply_updates_keeps_leaves_without_updates():
    m = eqx.nn.MLP(2, 1, 4, 1, key=zx.random.PRNGKey(0))
    g = eqx.filter_grad(_loss)(m)
    out = optax.apply_updates(m, g)
    assert out.activation is m.activation
    np.testing.assert_array_equal(out.layers[0].weight, m.layers[0].weight + g.layers[0].weight)
    with pytest.raises(errors.TreeMismatchError, match="do not match"):
        optax.apply_updates({"a": jnp.ones(2)}, {"b": jnp.ones(2)})
    with pytest.raises(errors.TreeMismatchError):
        optax.adamw(0.1).update({"a": jnp.ones(2)}, optax.adamw(0.1).init({"a": jnp.ones(2)}),
                                {"a": jnp.ones(2), "b": jnp.ones(2)})


A = jnp.asarray(np.arange(6.0).reshape(3, 2) / 5 + np.eye(3, 2))
B = jnp.asarray([1.0, 2.0, 3.0])


def _residual(p, scale=1.0):
    return scale * (A @ p["w"] - B)


def _lsq(p, scale=1.0):
    return 0.5 * jnp.sum(_residual(p, scale) ** 2)


@pytest.mark.parametrize("make, needs", [
    (lambda: optax.sgd(0.1), {}),
    (lambda: optax.lbfgs(), {"value", "grad", "value_fn"}),
    (lambda: optax.polyak_sgd(), {"value"}),
    (lambda: optax.newton_cg(), {"value_fn"}),
    (lambda: optax.hessian_free(), {"residual_fn"}),
    (lambda: optax.gauss_newton(), {"residual_fn"}),
    (lambda: optax.levenberg_marquardt(), {"residual_fn"}),
    (lambda: optax.adahessian(0.1), {"value_fn"}),
    (lambda: optax.sophia(0.1), {"value_fn"}),
    (lambda: optax.chain(optax.sgd(0.1), optax.contrib.reduce_on_plateau()), {"value"}),
    (lambda: optax.contrib.schedule_free_sgd(0.1), {}),
])
def test_every_optimiser_takes_the_same_extra_arguments(make, needs):
    """Passing all of value=, grad=, value_fn=, residual_fn= (and the loss's data, scale=)
    gives what passing only the arguments the optimiser uses gives."""
    def run(all_args):
        opt = make()
        p = {"w": jnp.zeros(2)}
        s = opt.init(p)
        for _ in range(3):
            v, g = zx.value_and_grad(_lsq)(p, 2.0)
            kw = dict(value=v, grad=g, value_fn=_lsq, residual_fn=_residual, scale=2.0)
            if not all_args:
                kw = {k: x for k, x in kw.items() if k in needs or (k == "scale" and needs)}
            u, s = opt.update(g, s, p, **kw)
            p = optax.apply_updates(p, u)
        return p["w"]
    np.testing.assert_array_equal(run(True), run(False))


def test_extra_data_no_loss_accepts_is_an_error():
    opt = optax.newton_cg()
    p = {"w": jnp.zeros(2)}
    with pytest.raises(errors.ZeraxTypeError, match="batch"):
        opt.update({"w": jnp.ones(2)}, opt.init(p), p, value_fn=_lsq, batch=1)


def test_hessian_free_given_both_uses_the_residuals():
    def run(**kw):
        opt = optax.hessian_free()
        p = {"w": jnp.zeros(2)}
        s = opt.init(p)
        for _ in range(3):
            u, s = opt.update(zx.grad(_lsq)(p), s, p, **kw)
            p = optax.apply_updates(p, u)
        return p["w"]
    np.testing.assert_array_equal(run(value_fn=_lsq, residual_fn=_residual),
                                  run(residual_fn=_residual))


def test_optax_submodules_import_as_in_optax():
    from zerax.optim import contrib, losses, projections, schedules, second_order  # noqa: F401
    from zerax.optim import transforms, tree, tree_utils  # noqa: F401
    assert transforms.clip_by_global_norm is optax.clip_by_global_norm
    assert transforms.MultiSteps is optax.MultiSteps
    assert losses.ntxent is optax.losses.ntxent and losses.squared_error is optax.squared_error
    assert schedules.cosine_decay_schedule is optax.cosine_decay_schedule


def test_projections_match_optax():
    P = optax.projections
    v = jnp.asarray([0.8, -1.7, 0.3, 2.2, -0.4])
    a = jnp.asarray([1.0, 2.0, -1.0, 0.5, 0.0])
    got = {
        "P_SIMPLEX": P.projection_simplex(v), "P_SIMPLEX3": P.projection_simplex(v, 3.0),
        "P_L1_SPHERE": P.projection_l1_sphere(v, 2.0), "P_L1_BALL": P.projection_l1_ball(v, 2.0),
        "P_L2_SPHERE": P.projection_l2_sphere(v, 2.0), "P_L2_BALL": P.projection_l2_ball(v, 2.0),
        "P_LINF_BALL": P.projection_linf_ball(v, 0.5), "P_BOX": P.projection_box(v, -0.5, 1.0),
        "P_HYPERCUBE": P.projection_hypercube(v, 2.0), "P_NONNEG": P.projection_non_negative(v),
        "P_VECTOR": P.projection_vector(v, a), "P_HYPERPLANE": P.projection_hyperplane(v, a, 1.5),
        "P_HALFSPACE": P.projection_halfspace(v, a, -1.0),
        "P_SIMPLEX3_JAC": zx.jacobian(lambda v: P.projection_simplex(v, 3.0))(v),
        "P_TREE_SIMPLEX_A": P.projection_simplex({"a": jnp.asarray([0.5, 1.5]),
                                                  "b": jnp.asarray([0.25])}, 2.0)["a"],
    }
    for k, x in got.items():
        np.testing.assert_allclose(x, globals()[k], rtol=1e-12, atol=1e-15, err_msg=k)
    # the simplex projection's derivative against finite differences
    zx.test_util.check_grads(lambda v: P.projection_simplex(v, 3.0), (v,), order=1,
                             modes=("fwd", "rev"))


def test_second_order_matches_optax():
    S = optax.second_order

    def mse(p, xs, ys):
        return jnp.mean((jnp.tanh(xs @ p["w"]) + p["b"] - ys) ** 2)

    xs = jnp.asarray(np.linspace(-1, 1, 12).reshape(4, 3))
    ys = jnp.asarray([0.1, -0.2, 0.3, 0.5])
    p = {"w": jnp.asarray([0.3, -0.5, 0.8]), "b": jnp.asarray(0.1)}
    np.testing.assert_allclose(S.hessian_diag(mse, p, xs, ys), S_HESSIAN_DIAG, rtol=1e-12)
    np.testing.assert_allclose(S.fisher_diag(mse, p, xs, ys), S_FISHER_DIAG, rtol=1e-12)
    hv = S.hvp(mse, jnp.asarray([1.0, 0.0, -1.0, 2.0]), p, xs, ys)
    np.testing.assert_allclose(hv["w"], S_HVP_W, rtol=1e-12)
    np.testing.assert_allclose(hv["b"], S_HVP_B, rtol=1e-12)
