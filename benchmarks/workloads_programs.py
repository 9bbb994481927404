"""Real programs, written once for JAX and run unchanged under zerax (issue 19).

Each program below is the kind of code JAX's examples and tutorials contain, written from
their descriptions: an RK4 integrator filling a trajectory in a `fori_loop`, a
variational autoencoder with Adam written by hand, an MLP trained by a Python loop over
mini-batches, a wave-equation solver stepping a stencil, a classifier built from
stax-style layer combinators, and black-box variational inference (a vmapped ELBO and its
gradient). A program is a function of the namespace ``ns`` it runs on
(``ns.jax``, ``ns.jnp``, ``ns.lax``): the zerax contender passes zerax's modules, the JAX
contender JAX's, so the zerax code is the JAX code with the import renamed. Inputs are
generated from fixed seeds (no downloads); random draws of the programs (the VAE's noise)
are inputs too, so both contenders compute the same thing in float64. Times are steady
state: the first call (compilation) is reported apart by the runner.
"""

from __future__ import annotations

import itertools
import types

import numpy as np
from registry import Case, Target, workload

ISSUE_SPEED = "issue 19"


def _zerax():
    import zerax as zx
    import zerax.numpy as znp
    return types.SimpleNamespace(jax=zx, jnp=znp, lax=zx.lax, nn=zx.nn,
                                 tree_map=zx.tree_util.tree_map, ready=lambda x: x)


def _jax():
    import os
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return types.SimpleNamespace(jax=jax, jnp=jnp, lax=jax.lax, nn=jax.nn,
                                 tree_map=jax.tree_util.tree_map,
                                 ready=jax.block_until_ready)


def _register(wl, make):
    """The zerax and jax.jit contenders of ``wl``: ``make(ns)`` returns a callable."""
    @wl.contender("zerax")
    def _(case):
        ns = _zerax()
        return make(ns)

    @wl.contender("jax_jit")
    def _(case):
        ns = _jax()
        run = make(ns)
        return lambda: ns.ready(run())


# --------------------------------------------------------------------------------------
# 1. RK4 trajectory: fori_loop writing row i of a (40000, 3) array
# --------------------------------------------------------------------------------------

RK4_STEPS = 40_000


def _rk4(ns):
    jax, jnp, lax = ns.jax, ns.jnp, ns.lax

    def lorenz(y, t):
        sigma, rho, beta = 10.0, 28.0, 8.0 / 3.0
        return jnp.array([sigma * (y[1] - y[0]), y[0] * (rho - y[2]) - y[1],
                          y[0] * y[1] - beta * y[2]])

    @jax.jit
    def trajectory(y0, dt):
        ys = jnp.zeros((RK4_STEPS, 3)).at[0].set(y0)

        def step(i, ys):
            y, t = ys[i - 1], i * dt
            k1 = lorenz(y, t)
            k2 = lorenz(y + dt / 2 * k1, t + dt / 2)
            k3 = lorenz(y + dt / 2 * k2, t + dt / 2)
            k4 = lorenz(y + dt * k3, t + dt)
            return ys.at[i].set(y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
        return lax.fori_loop(1, RK4_STEPS, step, ys)

    y0 = jnp.asarray(np.array([1.0, 1.0, 1.0]))
    return lambda: trajectory(y0, 0.001)


RK4 = workload(
    "program_rk4", "Program: RK4 trajectory (fori_loop writing rows)",
    cases=[Case("main", "", compare=False)],
    description=f"`fori_loop` over {RK4_STEPS} RK4 steps of the Lorenz system, each writing "
                f"row i of a ({RK4_STEPS}, 3) trajectory with `ys.at[i].set(...)`; jitted. "
                "(The trajectory is chaotic: FMA contraction makes the last rows differ "
                "between the two, so results are not compared.)",
    targets=[Target("jax_jit", 1.5, "<= 1.5x jax.jit", ISSUE_SPEED)],
    rounds=5,
    miss_note="The whole trajectory is one kernel; the row update writes into the loop "
              "carry in place (lowering/inplace.py; before issue 19 every step copied the "
              "whole carry: 950x). Each `lorenz` call's 3-vectors (slices, the "
              "concatenation) are small scratch buffers on the stack, which LLVM may keep "
              "in registers; what is left is the per-step cost of those copies and of the "
              "index arithmetic around them.",
)
_register(RK4, _rk4)


# --------------------------------------------------------------------------------------
# 2. Variational autoencoder with Adam written by hand
# --------------------------------------------------------------------------------------

VAE_SIZES = dict(x=784, hidden=256, z=16)
VAE_BATCH = 64


def _vae(ns):
    jax, jnp, nn, tree_map = ns.jax, ns.jnp, ns.nn, ns.tree_map
    rng = np.random.default_rng(11)
    d, h, z = VAE_SIZES["x"], VAE_SIZES["hidden"], VAE_SIZES["z"]

    def dense(a, b):
        return (jnp.asarray(rng.standard_normal((a, b)) * np.sqrt(1.0 / a)),
                jnp.asarray(np.zeros(b)))
    params = {"enc": dense(d, h), "mu": dense(h, z), "logvar": dense(h, z),
              "dec1": dense(z, h), "dec2": dense(h, d)}
    x = jnp.asarray((rng.random((VAE_BATCH, d)) < 0.3).astype(np.float64))
    eps = jnp.asarray(rng.standard_normal((VAE_BATCH, z)))   # the sampler's draw, an input

    def apply(p, layer, v):
        w, b = p[layer]
        return v @ w + b

    def loss(p, x, eps):
        hid = nn.relu(apply(p, "enc", x))
        mu, logvar = apply(p, "mu", hid), apply(p, "logvar", hid)
        code = mu + jnp.exp(0.5 * logvar) * eps
        logits = apply(p, "dec2", nn.relu(apply(p, "dec1", code)))
        bce = jnp.sum(jnp.logaddexp(0.0, logits) - x * logits, axis=-1)
        kl = -0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar), axis=-1)
        return jnp.mean(bce + kl)

    b1, b2, lr, tiny = 0.9, 0.999, 1e-3, 1e-8

    @jax.jit
    def step(p, m, v, t, x, eps):
        g = jax.grad(loss)(p, x, eps)
        m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        mhat = tree_map(lambda m: m / (1 - b1 ** t), m)
        vhat = tree_map(lambda v: v / (1 - b2 ** t), v)
        p = tree_map(lambda p, a, b: p - lr * a / (jnp.sqrt(b) + tiny), p, mhat, vhat)
        return p, m, v

    m = tree_map(jnp.zeros_like, params)
    v = tree_map(jnp.zeros_like, params)
    return lambda: step(params, m, v, 1.0, x, eps)


VAE = workload(
    "program_vae", "Program: VAE training step with Adam by hand",
    description=f"A variational autoencoder {VAE_SIZES['x']}-{VAE_SIZES['hidden']}-"
                f"2x{VAE_SIZES['z']} / {VAE_SIZES['z']}-{VAE_SIZES['hidden']}-"
                f"{VAE_SIZES['x']} on a batch of {VAE_BATCH} binary MNIST-sized images: "
                "`jit` of grad of (BCE + KL) and an Adam update written with `tree_map` "
                "over a dict of (w, b) pairs.",
    targets=[Target("jax_jit", 1.2, "<= 1.2x jax.jit", ISSUE_SPEED)],
    rounds=5,
)
_register(VAE, _vae)


# --------------------------------------------------------------------------------------
# 3. MLP trained by a Python loop over mini-batches (NumPy batches from a loader)
# --------------------------------------------------------------------------------------

LOOP_SIZES = (784, 256, 256, 10)
LOOP_BATCH, LOOP_BATCHES = 128, 8


def _train_loop(ns):
    jax, jnp, tree_map = ns.jax, ns.jnp, ns.tree_map
    rng = np.random.default_rng(12)
    params = [(jnp.asarray(0.01 * rng.standard_normal((a, b))),
               jnp.asarray(0.01 * rng.standard_normal(b)))
              for a, b in itertools.pairwise(LOOP_SIZES)]
    images = rng.random((LOOP_BATCH * LOOP_BATCHES, LOOP_SIZES[0]))
    labels = np.eye(LOOP_SIZES[-1])[rng.integers(0, LOOP_SIZES[-1], len(images))]

    def predict(params, x):
        act = x
        for w, b in params[:-1]:
            act = jnp.tanh(act @ w + b)
        w, b = params[-1]
        logits = act @ w + b
        return logits - jax.scipy.special.logsumexp(logits, axis=1, keepdims=True)

    def loss(params, x, y):
        return -jnp.mean(jnp.sum(predict(params, x) * y, axis=1))

    @jax.jit
    def update(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return tree_map(lambda p, g: p - 0.01 * g, params, grads)

    def batches():   # the tutorial's data loader: NumPy arrays, a new batch each step
        for k in range(LOOP_BATCHES):
            sl = slice(k * LOOP_BATCH, (k + 1) * LOOP_BATCH)
            yield images[sl], labels[sl]

    def epoch():
        p = params
        for x, y in batches():
            p = update(p, x, y)
        return p
    return epoch


TRAIN_LOOP = workload(
    "program_train_loop", "Program: MLP trained by a data-loading loop",
    description=f"One epoch of the 'training a simple neural network' tutorial's loop: a "
                f"tanh MLP {'-'.join(map(str, LOOP_SIZES))}, {LOOP_BATCHES} mini-batches of "
                f"{LOOP_BATCH} NumPy arrays from a Python generator, each step a jitted "
                "`update` (grad of the cross-entropy, SGD by `tree_map`).",
    targets=[Target("jax_jit", 1.2, "<= 1.2x jax.jit", ISSUE_SPEED)],
    rounds=5,
)
_register(TRAIN_LOOP, _train_loop)


# --------------------------------------------------------------------------------------
# 4. Wave equation: a stencil stepped by fori_loop
# --------------------------------------------------------------------------------------

WAVE_N, WAVE_STEPS = 256, 100


def _wave(ns):
    jax, jnp, lax = ns.jax, ns.jnp, ns.lax
    xs = np.linspace(-1.0, 1.0, WAVE_N)
    u0 = jnp.asarray(np.exp(-40.0 * (xs[:, None] ** 2 + xs[None, :] ** 2)))
    c2 = 0.2   # (c dt / dx)^2, stable

    def laplacian(u):
        return (jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) + jnp.roll(u, 1, 1)
                + jnp.roll(u, -1, 1) - 4.0 * u)

    @jax.jit
    def solve(u0):
        def step(i, state):
            u, u_prev = state
            u_next = 2.0 * u - u_prev + c2 * laplacian(u)
            return u_next, u
        u, _ = lax.fori_loop(0, WAVE_STEPS, step, (u0, u0))
        return u
    return lambda: solve(u0)


WAVE = workload(
    "program_wave", "Program: wave-equation solver (stencil in fori_loop)",
    description=f"{WAVE_STEPS} leapfrog steps of the 2-D wave equation on a {WAVE_N}x{WAVE_N} "
                "periodic grid: a five-point Laplacian from `jnp.roll`, in a jitted "
                "`fori_loop` carrying (u, u_prev).",
    targets=[Target("jax_jit", 1.2, "<= 1.2x jax.jit", ISSUE_SPEED)],
    rounds=5,
)
_register(WAVE, _wave)


# --------------------------------------------------------------------------------------
# 5. stax-style classifier
# --------------------------------------------------------------------------------------

STAX_SIZES = (784, 512, 512, 10)
STAX_BATCH = 128


def _stax(ns):
    jax, jnp, nn, tree_map = ns.jax, ns.jnp, ns.nn, ns.tree_map

    # stax's combinators (jax.example_libraries.stax), the few used here
    def Dense(out_dim):
        def init(rng, in_dim):
            w = rng.standard_normal((in_dim, out_dim)) * np.sqrt(2.0 / in_dim)
            return out_dim, (jnp.asarray(w), jnp.asarray(np.zeros(out_dim)))

        def apply(p, x):
            w, b = p
            return x @ w + b
        return init, apply

    def elementwise(fn):
        return (lambda rng, in_dim: (in_dim, ())), (lambda p, x: fn(x))

    Relu, LogSoftmax = elementwise(nn.relu), elementwise(nn.log_softmax)

    def serial(*layers):
        inits, applies = zip(*layers)

        def init(rng, in_dim):
            params = []
            for f in inits:
                in_dim, p = f(rng, in_dim)
                params.append(p)
            return in_dim, params

        def apply(params, x):
            for f, p in zip(applies, params):
                x = f(p, x)
            return x
        return init, apply

    init, predict = serial(Dense(STAX_SIZES[1]), Relu, Dense(STAX_SIZES[2]), Relu,
                           Dense(STAX_SIZES[3]), LogSoftmax)
    rng = np.random.default_rng(13)
    _, params = init(rng, STAX_SIZES[0])
    x = jnp.asarray(rng.random((STAX_BATCH, STAX_SIZES[0])))
    y = jnp.asarray(np.eye(STAX_SIZES[-1])[rng.integers(0, STAX_SIZES[-1], STAX_BATCH)])

    def loss(params, x, y):
        return -jnp.mean(jnp.sum(predict(params, x) * y, axis=1))

    @jax.jit
    def update(params, velocity, x, y):   # momentum SGD, as optimizers.momentum
        g = jax.grad(loss)(params, x, y)
        velocity = tree_map(lambda v, g: 0.9 * v + g, velocity, g)
        return tree_map(lambda p, v: p - 1e-3 * v, params, velocity), velocity

    velocity = tree_map(jnp.zeros_like, params)
    return lambda: update(params, velocity, x, y)


STAX = workload(
    "program_stax", "Program: stax-style MNIST classifier step",
    description=f"`serial(Dense, Relu, Dense, Relu, Dense, LogSoftmax)` "
                f"{'-'.join(map(str, STAX_SIZES))} built from stax-style combinators, batch "
                f"{STAX_BATCH}: a jitted momentum-SGD update (grad of the cross-entropy, "
                "`tree_map` over the layers' parameter list, empty tuples included).",
    targets=[Target("jax_jit", 1.2, "<= 1.2x jax.jit", ISSUE_SPEED)],
    rounds=5,
)
_register(STAX, _stax)


# --------------------------------------------------------------------------------------
# 6. Black-box variational inference: a vmapped ELBO of a log density, and its gradient
# --------------------------------------------------------------------------------------

ELBO_SAMPLES = 2000


def _elbo(ns):
    jax, jnp, tree_map = ns.jax, ns.jnp, ns.tree_map
    norm = jax.scipy.stats.norm

    def funnel(z):   # Neal's funnel in two dimensions: the target log density
        return norm.logpdf(z[0], 0.0, jnp.exp(z[1])) + norm.logpdf(z[1], 0.0, 1.35)

    def draw(key, mean, log_std):   # a reparameterised draw of the diagonal Gaussian
        return mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape)

    def gaussian_logpdf(z, mean, log_std):
        return jnp.sum(jax.vmap(norm.logpdf)(z, mean, jnp.exp(log_std)))

    def elbo(key, mean, log_std):
        z = draw(key, mean, log_std)
        return funnel(z) - gaussian_logpdf(z, mean, log_std)

    def objective(params, t):
        keys = jax.random.split(jax.random.PRNGKey(t), ELBO_SAMPLES)
        return -jnp.mean(jax.vmap(elbo, in_axes=(0, None, None))(keys, *params))

    @jax.jit
    def update(params, t):   # one step of gradient descent on the negative ELBO
        g = jax.grad(objective)(params, t)
        return tree_map(lambda p, d: p - 0.1 * d, params, g)

    params = (jnp.asarray(np.array([-1.0, -1.0])), jnp.asarray(np.array([-5.0, -5.0])))
    step = itertools.count()
    return lambda: update(params, next(step) % 100)


ELBO = workload(
    "program_elbo", "Program: black-box variational inference step",
    description=f"The ELBO of a diagonal Gaussian against a 2-D funnel log density "
                f"(`scipy.stats.norm.logpdf`), estimated from {ELBO_SAMPLES:,} "
                "reparameterised draws (`random.split` of a key made from the step "
                "number, `vmap` of the per-draw ELBO), and a jitted gradient step on "
                "it, as in JAX's variational inference example.",
    targets=[Target("jax_jit", 1.2, "<= 1.2x jax.jit", "issue 28")],
    rounds=5,
)
_register(ELBO, _elbo)
