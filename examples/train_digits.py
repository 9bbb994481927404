"""Train an MLP on scikit-learn's 8x8 digits with zerax.train, end to end: data loader,
training with validation, early stopping, checkpoints, curves, saving and reloading.

    python examples/train_digits.py [--epochs 40] [--out train_digits_out] [--no-progress]

The split is fixed (scikit-learn's order: the first 1,437 digits train, the last 360 test);
the test digits come from other writers, which makes this split harder than a random one.
The training set is augmented with the eight one-pixel shifts of each image.  Needs
scikit-learn (``pip install zerax[datasets]``) and matplotlib for the curves.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import zerax.nn as nn
import zerax.optim as optim
import zerax.random as zr
from zerax import data, io, train


def shifted(x: np.ndarray) -> np.ndarray:
    """The images (n, 64) and their 8 one-pixel shifts, stacked: (9n, 64)."""
    imgs = x.reshape(-1, 8, 8)
    out = []
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            s = np.zeros_like(imgs)
            s[:, max(dy, 0):8 + min(dy, 0), max(dx, 0):8 + min(dx, 0)] = \
                imgs[:, max(-dy, 0):8 + min(-dy, 0), max(-dx, 0):8 + min(-dx, 0)]
            out.append(s.reshape(-1, 64))
    return np.concatenate(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--out", default="train_digits_out")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)

    (x_tr, y_tr), (x_te, y_te) = data.datasets.digits()
    x_aug, y_aug = shifted(x_tr), np.tile(y_tr, 9)
    # drop_last: every step has the same shape, so the step is compiled once (the shuffled
    # order differs per epoch, so no example is left out for good).
    loader = data.DataLoader(data.ArrayDataset(x_aug, y_aug), batch_size=64, shuffle=True,
                             seed=0, drop_last=True)
    val = data.DataLoader(data.ArrayDataset(x_te, y_te), batch_size=360)
    model = nn.MLP(64, 10, width_size=128, depth=2, key=zr.key(0))
    manager = io.CheckpointManager(os.path.join(args.out, "ckpt"), max_to_keep=2,
                                   best_fn=lambda m: m["val_accuracy"])
    start = time.perf_counter()
    model, opt_state, history = train.fit(
        model, optim.adam(1e-3), train.losses.cross_entropy, loader, epochs=args.epochs,
        val_data=val, metrics=["accuracy"],
        callbacks=[train.EarlyStopping(monitor="val_loss", patience=5),
                   train.Checkpoint(manager)],
        progress=not args.no_progress)
    seconds = time.perf_counter() - start
    print(f"{len(history.epoch)} epochs in {seconds:.1f} s (the first includes compiling)")

    history.plot(os.path.join(args.out, "curves.png"))
    history.to_csv(os.path.join(args.out, "history.csv"))
    path = os.path.join(args.out, "model.safetensors")
    io.save(path, model)
    model = io.load(path, like=model)
    result = train.evaluate(model, train.losses.cross_entropy, val, ["accuracy"])
    print(f"test accuracy {result['accuracy']:.4f} (loss {result['loss']:.4f}); "
          f"checkpoints kept: steps {manager.all_steps()}, best {manager.best_step()}")


if __name__ == "__main__":
    main()
