"""A short tour of what zerax does today (run by `make demo`)."""

import numpy as np

import zerax as zx
import zerax.numpy as znp


def main():
    f = lambda x: znp.sum(znp.tanh(x) ** 2)
    x = np.array([0.1, 0.2, 0.3])
    print("f(x)            =", f(x))
    print("grad f(x)       =", zx.grad(f)(x))

    # Derivatives of any order, each one an ordinary function.
    d = znp.tanh
    for order in range(1, 5):
        d = zx.grad(d)
        print(f"d^{order}/dx^{order} tanh(0.3) = {float(d(0.3)):+.6f}")

    # jvp, vjp and linearize.
    y, t = zx.jvp(znp.sin, (0.5,), (1.0,))
    print("jvp(sin)(0.5)   =", float(y), float(t))
    y, f_vjp = zx.vjp(lambda a, b: a * b, 2.0, 3.0)
    print("vjp(a*b)(2, 3)  =", [float(c) for c in f_vjp(1.0)])

    # The derivative program, readable.
    print("IR of grad(tanh(x) * sin(x)):")
    print(zx.make_jaxpr(zx.grad(lambda v: znp.tanh(v) * znp.sin(v)))(0.3))

    # The seed's style: forward on NumPy arrays, backward with zerax operations.
    class Square(zx.Function):
        def forward(self, x):
            return x ** 2

        def backward(self, gy):
            (x,) = self.inputs
            return 2 * x * gy

    print("Square: value, 1st and 2nd derivative at 3:",
          float(Square()(3.0)), float(zx.grad(Square())(3.0)),
          float(zx.grad(zx.grad(Square()))(3.0)))

    # vmap: per-example gradients, one batched program.
    w = np.array([0.5, -1.0, 2.0])
    xs = np.arange(12.0).reshape(4, 3) / 10
    per_example = zx.vmap(zx.grad(lambda w, x: znp.tanh(x @ w)), in_axes=(None, 0))(w, xs)
    print("per-example gradients:", per_example.shape)

    # Reverse mode through a while_loop whose trip count depends on the input.
    def grow(x):
        return zx.lax.while_loop(lambda v: v < 100.0, lambda v: v * 1.5 + 1.0, x)
    print("grad through while_loop:", float(zx.grad(grow)(2.0)))

    # jit: the same program compiled to one fused native loop through Numba.
    fused = zx.jit(lambda a, b: znp.tanh(a) * b + znp.sqrt(a * a + 1.0))
    a = np.linspace(-1.0, 1.0, 5)
    print("jit result:", fused(a, a))
    print("generated source:")
    print(fused.lower(a, a).as_text())


if __name__ == "__main__":
    main()


def training_demo():
    """A short training run (issue 18): DeZero's spiral, a progress bar per epoch, a
    checkpoint, and the learning curves written to spiral_curves.png."""
    import tempfile

    import zerax.nn as nn
    import zerax.optim as optim
    import zerax.random as zr
    from zerax import data, io, train

    x, t = data.datasets.spiral()
    loader = data.DataLoader(data.ArrayDataset(x, t), batch_size=30, shuffle=True, seed=0)
    model = nn.MLP(2, 3, width_size=10, depth=1, activation=nn.sigmoid, key=zr.key(0))
    manager = io.CheckpointManager(tempfile.mkdtemp(), max_to_keep=1)
    # The network is tiny: its steps run op by op (jit=False) rather than waiting for Numba.
    model, _, history = train.fit(
        model, optim.adam(0.1), train.losses.cross_entropy, loader, epochs=30,
        val_data=data.datasets.spiral(train=False), metrics=["accuracy"],
        callbacks=[train.Checkpoint(manager)], jit=False)
    print(f"spiral: train accuracy {history['accuracy'][-1]:.3f}, "
          f"validation accuracy {history['val_accuracy'][-1]:.3f}; "
          f"checkpoint at step {manager.latest_step()}")
    try:
        history.plot("spiral_curves.png")
        print("learning curves written to spiral_curves.png")
    except ImportError:
        print("(install matplotlib to plot the learning curves)")


if __name__ == "__main__":
    training_demo()
