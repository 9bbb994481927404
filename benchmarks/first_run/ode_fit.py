"""Fitting the parameters of an ODE through ``odeint`` and ``grad``, as a new user
writes it from JAX's documentation.

Usage: ``python ode_fit.py jax|zerax [--profile]``. The Lotka-Volterra predator-prey
equations; noisy observations of a trajectory from known parameters (NumPy's fixed
seed); the mean squared error of ``odeint``'s trajectory against them, minimised over
the (log) parameters by Adam (optax) with ``jit(value_and_grad(loss))`` for a few tens
of steps (reverse mode through odeint: its adjoint ODE), in float64 as scientific code
asks for (``jax_enable_x64``). The zerax run is the same code with its imports renamed
(``import zerax as jax``, ``from zerax.experimental.ode import odeint``, ``import
zerax.optim as optax``). The last line printed is ``FIRST_RUN {json}`` (common.py).
"""

import time

T0 = time.perf_counter()

import sys

import common

LIB = common.library()
if LIB == "zerax":
    import zerax as jax
    import zerax.numpy as jnp
    import zerax.optim as optax
    from zerax.experimental.ode import odeint
else:
    import jax
    import jax.numpy as jnp
    import optax
    from jax.experimental.ode import odeint
import numpy as np

jax.config.update("jax_enable_x64", True)

T_IMPORTS = time.perf_counter()

STEPS = 40
TRUE_THETA = np.array([1.0, 0.1, 1.5, 0.075])   # prey growth, predation, death, efficiency


def lotka_volterra(y, t, theta):
    prey, predator = y[0], y[1]
    alpha, beta, gamma, delta = theta
    return jnp.stack([alpha * prey - beta * prey * predator,
                      -gamma * predator + delta * prey * predator])


def main():
    rng = np.random.default_rng(42)
    y0 = jnp.array([10.0, 5.0])
    ts = jnp.linspace(0.0, 15.0, 60)
    clean = odeint(lotka_volterra, y0, ts, jnp.asarray(TRUE_THETA))
    observed = clean * jnp.asarray(np.exp(0.05 * rng.standard_normal(clean.shape)))

    def loss(log_theta):
        pred = odeint(lotka_volterra, y0, ts, jnp.exp(log_theta), rtol=1e-6, atol=1e-6)
        return jnp.mean((jnp.log(pred) - jnp.log(observed)) ** 2)

    step_fn = jax.jit(jax.value_and_grad(loss))
    log_theta = jnp.log(jnp.asarray(TRUE_THETA * np.array([1.3, 0.8, 0.8, 1.25])))
    optimiser = optax.adam(0.05)
    opt_state = optimiser.init(log_theta)
    t_setup = time.perf_counter()
    for step in range(STEPS):
        value, g = step_fn(log_theta)
        updates, opt_state = optimiser.update(g, opt_state)
        log_theta = optax.apply_updates(log_theta, updates)
        if step % 10 == 0:
            print(f"step {step}: loss {float(value):.5f}", file=sys.stderr)
    t_train = time.perf_counter()
    final = float(loss(log_theta))
    theta = np.exp(np.asarray(log_theta))
    print(f"final loss {final:.5f}, theta {theta}", file=sys.stderr)
    t_end = time.perf_counter()
    common.report(T0, {"imports": T_IMPORTS, "setup": t_setup, "train": t_train,
                       "eval": t_end},
                  {"final_loss": final, "theta": theta.tolist()})


if __name__ == "__main__":
    common.run(main)
