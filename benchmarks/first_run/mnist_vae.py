"""JAX's stax VAE example (examples/mnist_vae.py), its first epoch, as a new user
runs it.

Usage: ``python mnist_vae.py jax|zerax [--profile]``. The example's model (an encoder
Dense(512)-Relu-Dense(512)-Relu-FanOut(2)-parallel(Dense(10), Dense(10)-Softplus) giving
the mean and variance of a 10-dimensional code, a decoder Dense(512)-Relu-Dense(512)-
Relu-Dense(784) giving Bernoulli logits; the ELBO with a reparameterised sample), written
as a tutorial's training loop: a Python loop over the batches of one epoch, each a
jitted update step (grad of the negative ELBO, Adam from ``example_libraries.optimizers``)
with keys split per step, then a jitted evaluation of the test ELBO and a grid of
sampled images. The data are binarised MNIST-shaped images from a fixed NumPy seed (no
download). The zerax run is the same code with its imports renamed (``import zerax as
jax``, ``from zerax.example_libraries import optimizers, stax``, ...). The last line
printed is ``FIRST_RUN {json}`` (common.py).
"""

import time

T0 = time.perf_counter()

import sys

import common

LIB = common.library()
if LIB == "zerax":
    import zerax as jax
    import zerax.numpy as jnp
    from zerax import jit, random
    from zerax.example_libraries import optimizers, stax
    from zerax.example_libraries.stax import Dense, FanOut, Relu, Softplus
else:
    import jax
    import jax.numpy as jnp
    from jax import jit, random
    from jax.example_libraries import optimizers, stax
    from jax.example_libraries.stax import Dense, FanOut, Relu, Softplus
import numpy as np

T_IMPORTS = time.perf_counter()

STEP_SIZE = 1e-3
BATCH_SIZE = 32
N_TRAIN, N_TEST = 9600, 1000      # one epoch: 300 batches
NROW, NCOL = 10, 10


def gaussian_kl(mu, sigmasq):
    """KL divergence from a diagonal Gaussian to the standard Gaussian."""
    return -0.5 * jnp.sum(1. + jnp.log(sigmasq) - mu**2. - sigmasq)


def gaussian_sample(rng, mu, sigmasq):
    """Sample a diagonal Gaussian."""
    return mu + jnp.sqrt(sigmasq) * random.normal(rng, mu.shape)


def bernoulli_logpdf(logits, x):
    """Bernoulli log pdf of data x given logits."""
    return -jnp.sum(jnp.logaddexp(0., jnp.where(x, -1., 1.) * logits))


def elbo(rng, params, images):
    """Monte Carlo estimate of the negative evidence lower bound."""
    enc_params, dec_params = params
    mu_z, sigmasq_z = encode(enc_params, images)
    logits_x = decode(dec_params, gaussian_sample(rng, mu_z, sigmasq_z))
    return bernoulli_logpdf(logits_x, images) - gaussian_kl(mu_z, sigmasq_z)


def image_sample(rng, params, nrow, ncol):
    """Sample images from the generative model."""
    _, dec_params = params
    code_rng, img_rng = random.split(rng)
    logits = decode(dec_params, random.normal(code_rng, (nrow * ncol, 10)))
    sampled_images = random.bernoulli(img_rng, jnp.logaddexp(0., logits))
    return image_grid(nrow, ncol, sampled_images, (28, 28))


def image_grid(nrow, ncol, imagevecs, imshape):
    """Reshape a stack of image vectors into an image grid for plotting."""
    images = iter(imagevecs.reshape((-1,) + imshape))
    return jnp.vstack([jnp.hstack([next(images).T for _ in range(ncol)][::-1])
                       for _ in range(nrow)]).T


encoder_init, encode = stax.serial(
    Dense(512), Relu,
    Dense(512), Relu,
    FanOut(2),
    stax.parallel(Dense(10), stax.serial(Dense(10), Softplus)),
)

decoder_init, decode = stax.serial(
    Dense(512), Relu,
    Dense(512), Relu,
    Dense(28 * 28),
)


def mnist_like(n, rng, templates):
    """MNIST-shaped grey levels in [0, 1], flattened: a class template plus noise."""
    labels = rng.integers(0, 10, n)
    images = 0.6 * templates[labels] + 0.4 * rng.random((n, 28 * 28), dtype=np.float32)
    return images


def main():
    data_rng = np.random.default_rng(1234)
    templates = (data_rng.random((10, 28 * 28)) < 0.3).astype(np.float32)
    train_images = mnist_like(N_TRAIN, data_rng, templates)
    test_images = mnist_like(N_TEST, data_rng, templates)
    num_batches = N_TRAIN // BATCH_SIZE

    test_rng = random.PRNGKey(1)
    enc_init_rng, dec_init_rng = random.split(random.PRNGKey(2))
    _, init_encoder_params = encoder_init(enc_init_rng, (BATCH_SIZE, 28 * 28))
    _, init_decoder_params = decoder_init(dec_init_rng, (BATCH_SIZE, 10))
    init_params = init_encoder_params, init_decoder_params

    opt_init, opt_update, get_params = optimizers.adam(STEP_SIZE)

    @jit
    def update(i, opt_state, rng, images):
        elbo_rng, data_rng = random.split(rng)
        batch = random.bernoulli(data_rng, images)
        loss = lambda params: -elbo(elbo_rng, params, batch) / BATCH_SIZE
        params = get_params(opt_state)
        value, g = jax.value_and_grad(loss)(params)
        return opt_update(i, g, opt_state), value

    @jit
    def evaluate(opt_state, images):
        params = get_params(opt_state)
        elbo_rng, data_rng, image_rng = random.split(test_rng, 3)
        binarized_test = random.bernoulli(data_rng, images)
        test_elbo = elbo(elbo_rng, params, binarized_test) / images.shape[0]
        sampled_images = image_sample(image_rng, params, NROW, NCOL)
        return test_elbo, sampled_images

    opt_state = opt_init(init_params)
    key = random.PRNGKey(0)
    perm = data_rng.permutation(N_TRAIN)
    t_setup = time.perf_counter()
    for i in range(num_batches):
        key, subkey = random.split(key)
        batch = train_images[perm[i * BATCH_SIZE:(i + 1) * BATCH_SIZE]]
        opt_state, loss = update(i, opt_state, subkey, batch)
        if i % 100 == 0:
            print(f"batch {i}: loss {float(loss):.3f}", file=sys.stderr)
    t_train = time.perf_counter()
    test_elbo, sampled_images = evaluate(opt_state, test_images)
    test_elbo = float(test_elbo)
    print(f"test elbo {test_elbo:.3f}", file=sys.stderr)
    t_end = time.perf_counter()
    common.report(T0, {"imports": T_IMPORTS, "setup": t_setup, "train": t_train,
                       "eval": t_end},
                  {"train_loss": float(loss), "test_elbo": test_elbo,
                   "sampled_mean": float(jnp.mean(sampled_images))})


if __name__ == "__main__":
    common.run(main)
