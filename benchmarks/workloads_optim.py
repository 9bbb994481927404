"""Benchmark workloads of `zerax.optim` (issue 17): a jitted Adam update of 10^6 float32
parameters against optax under ``jax.jit``; L-BFGS on the 100-dimensional Rosenbrock
function to a gradient norm of 1e-8 (the whole solve one jitted ``while_loop``) against
optax.lbfgs under ``jax.jit``, with SciPy's L-BFGS-B iterations beside; and a Newton-CG
step on a 10^4-parameter MLP loss against one gradient of the same loss.

Imported at the end of workloads.py.
"""

from __future__ import annotations

import numpy as np
from registry import Case, Target, workload

ISSUE_OPTIM = "issue 17"

ADAM_LEAVES, ADAM_LEAF = 10, 100_000
ROSEN_N = 100
LBFGS_MAXITER = 1000
MLP = (40, 128, 40, 1)
MLP_BATCH = 256


def _jax():
    import os
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


# ------------------------------------------------------------------ Adam, 10^6 float32
def _adam_data():
    rng = np.random.default_rng(17)
    params = {f"p{i}": rng.standard_normal(ADAM_LEAF).astype(np.float32)
              for i in range(ADAM_LEAVES)}
    grads = {k: rng.standard_normal(ADAM_LEAF).astype(np.float32) for k in params}
    return params, grads


OPTIM_ADAM = workload(
    "optim_adam_1e6", "optim.adam update, 10^6 float32 parameters",
    cases=[Case("main", f"{ADAM_LEAVES} arrays of {ADAM_LEAF:,} float32, jitted update")],
    description="`jit(opt.update)(grads, state, params)` of `adam(1e-3)`: moments, bias "
                "correction and the scaled step of every parameter (one fused pass).",
    targets=[Target("jax_jit", 1.0, "<= 1.0x optax under jax.jit", ISSUE_OPTIM)],
)


@OPTIM_ADAM.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    import zerax.optim as optim
    params, grads = _adam_data()
    params = {k: znp.asarray(v) for k, v in params.items()}
    grads = {k: znp.asarray(v) for k, v in grads.items()}
    opt = optim.adam(1e-3)
    state = opt.init(params)
    _, state = opt.update(grads, state, params)     # a state after one step (count 1)
    update = zx.jit(opt.update)
    leaves = zx.tree_util.tree_leaves
    return lambda: leaves(update(grads, state, params))


@OPTIM_ADAM.contender("jax_jit", "optax under jax.jit")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    import optax
    params, grads = _adam_data()
    params = {k: jnp.asarray(v) for k, v in params.items()}
    grads = {k: jnp.asarray(v) for k, v in grads.items()}
    opt = optax.adam(1e-3)
    state = opt.init(params)
    _, state = opt.update(grads, state, params)
    update = jax.jit(opt.update)
    leaves = jax.tree_util.tree_leaves
    return lambda: jax.block_until_ready(leaves(update(grads, state, params)))


# ------------------------------------------------------------------ L-BFGS, Rosenbrock-100
def _rosen(xp):
    return lambda x: xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _lbfgs_solver(lax, xp, optim, tree_norm):
    """The whole solve as one while_loop: L-BFGS steps until |grad| <= 1e-8."""
    f = _rosen(xp)
    opt = optim.lbfgs()
    vg = optim.value_and_grad_from_state(f)

    def solve(x0):
        def step(carry):
            x, state, _, k = carry
            v, g = vg(x, state=state)
            u, state = opt.update(g, state, x, value=v, grad=g, value_fn=f)
            x = optim.apply_updates(x, u)
            return x, state, tree_norm(optim.tree_utils.tree_get(state, "grad")), k + 1

        def cond(carry):
            _, _, gnorm, k = carry
            return (gnorm > 1e-8) & (k < LBFGS_MAXITER)
        init = (x0, opt.init(x0), xp.asarray(np.inf), xp.asarray(0))
        x, _, gnorm, k = lax.while_loop(cond, step, init)
        return x, gnorm, k
    return solve


def _rosen_x0():
    x0 = np.full(ROSEN_N, -1.2)
    x0[1::2] = 1.0
    return x0


OPTIM_LBFGS = workload(
    "optim_lbfgs_rosen100", "optim.lbfgs, Rosenbrock-100 to |grad| <= 1e-8",
    cases=[Case("main", f"{ROSEN_N} dims from (-1.2, 1, -1.2, ...), float64, whole solve "
                        f"jitted", compare=False)],
    description="L-BFGS (memory 10, zoom line search) run to a gradient norm of 1e-8 as one "
                "jitted `while_loop`; `iterations` is the number of L-BFGS steps (SciPy's "
                "L-BFGS-B beside, to its default tolerances).",
    targets=[Target("jax_jit", 1.0, "<= 1.0x optax.lbfgs under jax.jit", ISSUE_OPTIM)],
    rounds=5,
)


@OPTIM_LBFGS.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    import zerax.optim as optim
    from zerax import lax
    solve = zx.jit(_lbfgs_solver(lax, znp, optim, optim.tree_utils.tree_norm))
    x0 = znp.asarray(_rosen_x0())
    _, _, k = solve(x0)
    return (lambda: solve(x0)[0]), {"iterations": int(k)}


@OPTIM_LBFGS.contender("jax_jit", "optax.lbfgs under jax.jit")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    import optax
    solve = jax.jit(_lbfgs_solver(jax.lax, jnp, optax, optax.tree_utils.tree_norm))
    x0 = jnp.asarray(_rosen_x0())
    _, _, k = solve(x0)
    return (lambda: jax.block_until_ready(solve(x0)[0])), {"iterations": int(k)}


@OPTIM_LBFGS.contender("numpy", "scipy.optimize L-BFGS-B")
def _(case):
    import scipy.optimize as so
    x0 = _rosen_x0()
    res = so.minimize(so.rosen, x0, jac=so.rosen_der, method="L-BFGS-B")
    return (lambda: so.minimize(so.rosen, x0, jac=so.rosen_der, method="L-BFGS-B").x), \
        {"iterations": int(res.nit)}


# ------------------------------------------------------------------ Newton-CG step, MLP
def _mlp_data():
    rng = np.random.default_rng(170)
    sizes = list(zip(MLP[:-1], MLP[1:]))
    params = [(rng.standard_normal((i, o)) / np.sqrt(i), np.zeros(o)) for i, o in sizes]
    x = rng.standard_normal((MLP_BATCH, MLP[0]))
    y = np.sin(x[:, :1] * 2.0).ravel()
    return params, x, y


def _mlp_loss(xp, x, y):
    def loss(params):
        h = x
        for w, b in params[:-1]:
            h = xp.tanh(h @ w + b)
        w, b = params[-1]
        return xp.mean(((h @ w + b)[:, 0] - y) ** 2)
    return loss


NEWTON_CASES = [Case("cg1", "1 CG iteration (one Hessian-vector product) + line search",
                     compare=False),
                Case("cg10", "10 CG iterations + line search", compare=False)]

OPTIM_NEWTON = workload(
    "optim_newton_cg_mlp", "optim.newton_cg step, 10^4-parameter MLP",
    cases=NEWTON_CASES,
    description=f"One jitted `newton_cg` update (truncated CG on `jvp(grad(loss))` products, "
                f"backtracking line search) of an MLP {'-'.join(map(str, MLP))} "
                f"(10,449 parameters, batch {MLP_BATCH}, float64), against one jitted "
                f"`grad(loss)` of the same loss.",
    targets=[Target("zerax_grad", 4.0, "<= 4x one gradient", ISSUE_OPTIM, cases=("cg1",))],
)


@OPTIM_NEWTON.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    import zerax.optim as optim
    params, x, y = _mlp_data()
    params = [(znp.asarray(w), znp.asarray(b)) for w, b in params]
    loss = _mlp_loss(znp, znp.asarray(x), znp.asarray(y))
    opt = optim.newton_cg(maxiter=1 if case == "cg1" else 10)
    state = opt.init(params)
    grads = zx.grad(loss)(params)
    step = zx.jit(lambda g, s, p: opt.update(g, s, p, value_fn=loss))
    leaves = zx.tree_util.tree_leaves
    return lambda: leaves(step(grads, state, params))


@OPTIM_NEWTON.contender("zerax_grad", "zerax jit(grad(loss))")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    params, x, y = _mlp_data()
    params = [(znp.asarray(w), znp.asarray(b)) for w, b in params]
    loss = _mlp_loss(znp, znp.asarray(x), znp.asarray(y))
    g = zx.jit(zx.grad(loss))
    leaves = zx.tree_util.tree_leaves
    return lambda: leaves(g(params))
