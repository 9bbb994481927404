"""Benchmark workloads of `zerax.numpy.fft` and `zerax.scipy` (issue 14): the gradient of
a power-spectrum loss through `rfft` under jit, and a jitted log-likelihood built from
`zerax.scipy.stats` (a normal log density and a gamma CDF, the incomplete gamma kernel),
against JAX's jax.jit on the same float64 inputs. Imported at the end of workloads.py.
"""

from __future__ import annotations

import numpy as np
from registry import Target, workload

ISSUE_BREADTH = "issue 14"
N_FFT = 2 ** 16
N_STATS = 10 ** 5


def _jax():
    """Import JAX on the CPU in float64 mode."""
    import os
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _signal():
    return np.sin(np.linspace(0.0, 200.0, N_FFT)) + 0.1 * np.cos(np.arange(N_FFT) * 0.37)


# ------------------------------------------------------------------ grad through an FFT
FFT_GRAD = workload(
    "fft_grad", "FFT: jit(grad) of a power-spectrum loss, 2^16 points",
    description="`jit(grad(lambda x: sum(|rfft(tanh(x))|^2 * w)))` on 2^16 float64 "
                "values: an RFFT forward and its transpose (an FFT of the padded "
                "cotangent) backward, around elementwise kernels.",
    targets=[Target("jax_jit", 2.0, "<= 2.0x jax.jit", ISSUE_BREADTH)],
    rounds=7,
)


def _weights(n):
    return np.linspace(1.0, 2.0, n // 2 + 1)


@FFT_GRAD.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    w = znp.asarray(_weights(N_FFT))

    def loss(x):
        spec = znp.fft.rfft(znp.tanh(x))
        return znp.sum((spec.real ** 2 + spec.imag ** 2) * w)

    g = zx.jit(zx.grad(loss))
    x = znp.asarray(_signal())
    return lambda: g(x).block_until_ready()


@FFT_GRAD.contender("jax_jit")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    w = jnp.asarray(_weights(N_FFT))

    def loss(x):
        spec = jnp.fft.rfft(jnp.tanh(x))
        return jnp.sum((spec.real ** 2 + spec.imag ** 2) * w)

    g = jax.jit(jax.grad(loss))
    x = jnp.asarray(_signal())
    return lambda: g(x).block_until_ready()


# ------------------------------------------------------------------ a stats log-likelihood
STATS_LL = workload(
    "stats_loglik", "scipy.stats: jit of a log-likelihood, 10^5 points",
    description="`jit(lambda x, m, s: sum(norm.logpdf(x, m, s)) + sum(gamma.cdf(|x|, 2.5)))` "
                "on 10^5 float64 values: a fused elementwise density and the regularized "
                "incomplete gamma function (series / continued fraction per element).",
    targets=[Target("jax_jit", 2.0, "<= 2.0x jax.jit", ISSUE_BREADTH)],
    rounds=7,
)


def _stats_data():
    rng = np.random.default_rng(14)
    return rng.normal(size=N_STATS) * 2.0


@STATS_LL.contender("zerax")
def _(case):
    import zerax as zx
    import zerax.numpy as znp
    from zerax.scipy import stats
    f = zx.jit(lambda x, m, s: znp.sum(stats.norm.logpdf(x, m, s))
               + znp.sum(stats.gamma.cdf(znp.abs(x), 2.5)))
    x = znp.asarray(_stats_data())
    return lambda: f(x, 0.1, 1.7).block_until_ready()


@STATS_LL.contender("jax_jit")
def _(case):
    jax = _jax()
    import jax.numpy as jnp
    from jax.scipy import stats
    f = jax.jit(lambda x, m, s: jnp.sum(stats.norm.logpdf(x, m, s))
                + jnp.sum(stats.gamma.cdf(jnp.abs(x), 2.5)))
    x = jnp.asarray(_stats_data())
    return lambda: f(x, 0.1, 1.7).block_until_ready()
