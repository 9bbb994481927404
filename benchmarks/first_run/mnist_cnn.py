"""Equinox's "CNN on MNIST" tutorial, shortened: a whole run, as a new user runs it.

Usage: ``python mnist_cnn.py jax|zerax [--profile]``. The program is the tutorial's
(a Conv2d 1->3 with a 4x4 kernel, max-pool, three Linear layers, vmapped over batches
of 64 28x28 images; cross-entropy through ``take_along_axis``; AdamW; accuracy through
``argmax``; a training loop with a test-set evaluation every ``PRINT_EVERY`` steps),
with fewer steps and a smaller test set, on synthetic MNIST-shaped data from a fixed
NumPy seed (no download). The zerax run is the same code with its imports renamed:
``import zerax as jax``, ``import zerax.numpy as jnp``, ``import zerax.nn as eqx``,
``import zerax.optim as optax``. The last line printed is ``FIRST_RUN {json}``: the
seconds of each phase (run.py's ``first_run`` rows, benchmarks/workloads_first_run.py).
"""

import time

T0 = time.perf_counter()

import sys

import common

LIB = common.library()
if LIB == "zerax":
    import zerax as jax
    import zerax.nn as eqx
    import zerax.numpy as jnp
    import zerax.optim as optax
else:
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import optax
import numpy as np

T_IMPORTS = time.perf_counter()

BATCH_SIZE = 64
LEARNING_RATE = 3e-4
STEPS = 120
PRINT_EVERY = 40
N_TRAIN, N_TEST = 4096, 1000   # the last test batch has 1000 % 64 = 40 images
SEED = 5678


def mnist_like(n, rng, templates):
    """MNIST-shaped data: (n, 1, 28, 28) float32 in [-1, 1] (torchvision's
    ``Normalize((0.5,), (0.5,))``), each image its class's template plus noise (so
    that there is something to learn), and int64 labels (a torch loader's)."""
    labels = rng.integers(0, 10, n)
    images = 0.5 * templates[labels] + 0.5 * rng.random((n, 1, 28, 28), dtype=np.float32)
    return (images - 0.5) / 0.5, labels


def loader(images, labels, shuffle_rng=None):
    """A DataLoader's batches of NumPy arrays (the tutorial calls ``.numpy()``)."""
    idx = np.arange(len(images)) if shuffle_rng is None else shuffle_rng.permutation(
        len(images))
    for i in range(0, len(images), BATCH_SIZE):
        j = idx[i:i + BATCH_SIZE]
        yield images[j], labels[j]


class CNN(eqx.Module):
    layers: list

    def __init__(self, key):
        key1, key2, key3, key4 = jax.random.split(key, 4)
        # Standard CNN setup: convolutional layer, followed by flattening,
        # with a small MLP on top.
        self.layers = [
            eqx.nn.Conv2d(1, 3, kernel_size=4, key=key1),
            eqx.nn.MaxPool2d(kernel_size=2),
            jax.nn.relu,
            jnp.ravel,
            eqx.nn.Linear(1728, 512, key=key2),
            jax.nn.sigmoid,
            eqx.nn.Linear(512, 64, key=key3),
            jax.nn.relu,
            eqx.nn.Linear(64, 10, key=key4),
            jax.nn.log_softmax,
        ]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def loss(model, x, y):
    # Our input has the shape (BATCH_SIZE, 1, 28, 28), but our model operates on
    # a single input image of shape (1, 28, 28): vmap over the batch.
    pred_y = jax.vmap(model)(x)
    return cross_entropy(y, pred_y)


def cross_entropy(y, pred_y):
    # y are the true targets (not one-hot); pred_y the log-softmax'd predictions.
    pred_y = jnp.take_along_axis(pred_y, jnp.expand_dims(y, 1), axis=1)
    return -jnp.mean(pred_y)


loss = eqx.filter_jit(loss)  # JIT our loss function from earlier!


@eqx.filter_jit
def compute_accuracy(model, x, y):
    """Computes the average accuracy on a batch."""
    pred_y = jax.vmap(model)(x)
    pred_y = jnp.argmax(pred_y, axis=1)
    return jnp.mean(y == pred_y)


def evaluate(model, testloader):
    """The average loss and accuracy on the test set."""
    avg_loss = 0
    avg_acc = 0
    n = 0
    for x, y in testloader():
        # The loader's batches are NumPy arrays, as a torch loader's .numpy() gives.
        avg_loss += loss(model, x, y)
        avg_acc += compute_accuracy(model, x, y)
        n += 1
    return avg_loss / n, avg_acc / n


def train(model, trainloader, testloader, optim, steps, print_every):
    # Just the parameters (the arrays) of the model are optimised.
    opt_state = optim.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_jit
    def make_step(model, opt_state, x, y):
        loss_value, grads = eqx.filter_value_and_grad(loss)(model, x, y)
        updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        model = eqx.apply_updates(model, updates)
        return model, opt_state, loss_value

    # Loop over the training set as many times as needed.
    def infinite_trainloader():
        while True:
            yield from trainloader()

    for step, (x, y) in zip(range(steps), infinite_trainloader()):
        model, opt_state, train_loss = make_step(model, opt_state, x, y)
        if (step % print_every) == 0 or (step == steps - 1):
            test_loss, test_accuracy = evaluate(model, testloader)
            print(f"{step=}, train_loss={train_loss.item()}, "
                  f"test_loss={test_loss.item()}, test_accuracy={test_accuracy.item()}",
                  file=sys.stderr)
    return model, float(train_loss)


def main():
    rng = np.random.default_rng(SEED)
    templates = rng.random((10, 1, 28, 28), dtype=np.float32)
    train_x, train_y = mnist_like(N_TRAIN, rng, templates)
    test_x, test_y = mnist_like(N_TEST, rng, templates)
    shuffle = np.random.default_rng(SEED + 1)
    key = jax.random.PRNGKey(SEED)
    key, subkey = jax.random.split(key, 2)
    model = CNN(subkey)
    optim = optax.adamw(LEARNING_RATE)
    t_setup = time.perf_counter()
    model, train_loss = train(model, lambda: loader(train_x, train_y, shuffle),
                              lambda: loader(test_x, test_y), optim, STEPS, PRINT_EVERY)
    t_train = time.perf_counter()
    test_loss, test_accuracy = evaluate(model, lambda: loader(test_x, test_y))
    t_end = time.perf_counter()
    common.report(T0, {"imports": T_IMPORTS, "setup": t_setup, "train": t_train,
                       "eval": t_end},
                  {"train_loss": train_loss, "test_loss": float(test_loss),
                   "test_accuracy": float(test_accuracy)})


if __name__ == "__main__":
    common.run(main)
