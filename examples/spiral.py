"""The seed's spiral classifier (DeZero, step 48) with zerax: a 2-10-3 sigmoid MLP trained by
SGD on the three-armed spiral, then its decision regions plotted.

    python examples/spiral.py [--epochs 300] [--out spiral.png] [--no-progress]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import zerax as zx
import zerax.nn as nn
import zerax.optim as optim
import zerax.random as zr
from zerax import data, train


def train_spiral(epochs: int = 300, progress: bool = True, jit: bool = True):
    """DeZero's hyper-parameters: hidden size 10, sigmoid, SGD lr=1.0, batch 30."""
    x, t = data.datasets.spiral(train=True)
    loader = data.DataLoader(data.ArrayDataset(x, t), batch_size=30, shuffle=True, seed=0)
    model = nn.MLP(2, 3, width_size=10, depth=1, activation=nn.sigmoid, key=zr.key(0))
    model, _, history = train.fit(model, optim.sgd(1.0), train.losses.cross_entropy, loader,
                                  epochs=epochs, metrics=["accuracy"], progress=progress,
                                  jit=jit)
    return model, history, (x, t)


def plot_regions(model, x, t, path: str) -> None:
    """Colour the plane by the class the model predicts, and draw the data on top."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    h = 0.01
    xs, ys = np.meshgrid(np.arange(-1.1, 1.1, h), np.arange(-1.1, 1.1, h))
    grid = np.c_[xs.ravel(), ys.ravel()].astype(np.float32)
    pred = np.asarray(zx.vmap(model)(grid)).argmax(axis=1).reshape(xs.shape)
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.contourf(xs, ys, pred, alpha=0.3, levels=[-0.5, 0.5, 1.5, 2.5],
                colors=["tab:blue", "tab:orange", "tab:green"])
    for c, marker in zip(range(3), "ox^"):
        ax.scatter(*x[t == c].T, s=25, marker=marker, label=f"class {c}")
    ax.set_title("spiral: decision regions of a 2-10-3 MLP")
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--out", default="spiral.png")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args()
    start = time.perf_counter()
    model, history, (x, t) = train_spiral(args.epochs, progress=not args.no_progress)
    print(f"trained {args.epochs} epochs in {time.perf_counter() - start:.1f} s: "
          f"loss {history['loss'][-1]:.4f}, train accuracy {history['accuracy'][-1]:.3f}")
    x_te, t_te = data.datasets.spiral(train=False)
    test = train.evaluate(model, train.losses.cross_entropy, (x_te, t_te), ["accuracy"])
    print(f"test accuracy {test['accuracy']:.3f}")
    plot_regions(model, x, t, args.out)
    print(f"decision regions written to {args.out}")


if __name__ == "__main__":
    main()
