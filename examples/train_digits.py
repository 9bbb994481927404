"""Train an MLP on scikit-learn's 8x8 digits with zerax.train, end to end: data loader with
augmentation, training, checkpoints, curves, saving and reloading, a small ensemble, and
K-fold validation of the recipe.

    python examples/train_digits.py [--epochs 100] [--seed 0 | --seed 0-9] [--members 3]
                                    [--tta 0] [--cv K] [--out train_digits_out]
                                    [--no-progress]

The split is fixed (scikit-learn's order: the first 1,437 digits train, the last 360 test);
the test digits come from other writers, which makes this split harder than a random one
(a plain MLP gets about 91%).  The recipe is the standard one for a small image set:

* augmentation: each training image gets its own random small rotation, zoom and shift
  every epoch (`data.transforms.random_affine` in a seeded `data.map`, so the draws
  are a function of (seed, epoch, example) and the run is reproducible);
* an MLP (Linear + ReLU layers, nothing convolutional): 2 hidden layers of 1,024 units
  with dropout 0.3;
* AdamW with a linear warm-up and cosine decay of the learning rate, label smoothing;
* an ensemble: ``--members 3`` models trained alike from different seeds (member ``m``
  of seed ``s`` uses seed ``s + 1000 m``), whose softmax outputs are averaged.

How the recipe was chosen (the test digits were never used for it).  ``--cv K`` splits
the 1,437 training digits into K contiguous blocks (scikit-learn stores the digits
roughly in writer order, so a block approximates unseen writers), trains on K - 1 blocks
and scores the held-out one, for each seed of ``--seed``; it prints each model's
validation accuracy (alone, and with ``--tta`` views), and that of the ensemble of the
seeds' models, each averaged over the folds.  3-fold figures (blocks of 479 digits,
seeds 0-2, 100 epochs; per fold: first, middle, last block; measured with a script
equivalent to ``--cv 3 --seed 0-2 --tta 8``, whose TTA draws came from other seeds):

* this recipe, one model: 97.56% (97.01, 97.56, 98.12; each model 96.7-98.3%);
* the same models, 8 TTA views each (random moves as in training): 97.47% (96.2-99.4);
* the ensemble of the 3 seeds' models: 97.84% (97.08, 98.12, 98.33), the best;
* that ensemble with 8 TTA views: 97.56%;
* a moving average of the weights (``train.EMA(0.998)``), one model, first two folds
  only (stopped early to save time): 97.18% against 97.29% without on those folds; its
  3-model ensemble 97.18%.  On those EMA models TTA views hurt the MLP when they include
  shifts (ensemble: 8 full views 96.45%, 16 views 96.24%, the 8 one-pixel shifts
  96.35%, half-size moves 97.18%, against 97.18% without) and rotation plus zoom alone
  gave 97.49%: an MLP is not shift-invariant, so a shifted copy is a worse input, not a
  second opinion.  TTA is therefore off for the MLP (``--tta 0``); the ensemble is on.

An earlier comparison used the last 287 training digits as a validation split: there,
2 x 1,024 units with dropout 0.3 beat 2 or 3 x 512 with 0.2, label smoothing beat none,
100 epochs beat 60 (98.6% against 97.7%, seeds 0-2) and a random shear of up to 8 degrees
made no difference.  That tail is easier than the test writers and ranked recipes
differently from them (batches of 128, peak learning rate 2e-3 and EMA: 99.5% against
98.4% there, 97.0% against 97.5% on the test digits over seeds 0-9), which is why the
K-fold scheme replaced it.

The default run trains the members on all 1,437 digits with these settings fixed in
advance and keeps the model of the last epoch (no early stopping, no checkpoint picked by
a score); the test digits are used once, at the end.  ``--seed 0-9`` runs seeds 0 to 9 in
turn (the step is compiled once) and prints the test accuracy of each.

Test accuracy of the default (3 members, no TTA), seeds 0-9 (each seed's run once, after
the recipe was fixed): 97.78, 98.06, 96.94, 97.50, 97.50, 97.50, 97.78, 98.06, 97.50,
97.78% (mean 97.64%; seed 0, the default, 352 of 360; seed 2 misses 97% with 349 of 360,
although its members alone score 97.78, 97.22 and 97.22%).  The 30 members alone:
96.39-98.33%, mean 97.38%, 23 of 30 at 97% or more (member 0 of each seed is the
single model of the previous version of this example, seeds 0-9: 96.9-98.3%, mean
97.5%).  A run trains 3 models, each about 45-60 s on 2 idle cores (75-120 s while
other work shares them), about 2.5-3 minutes in all, plus a minute or two to compile the
step the first time (the first run of seed 0 took 400 s on busy cores).  ``--cv 3 --seed
0-2 --tta 8`` reproduces the validation figures above (single 97.56%, ensemble 97.84%;
with its own TTA draws 97.54% and 97.43%) in about 7 minutes.

Needs scikit-learn (``pip install zerax[datasets]``) and matplotlib for the curves.
"""

from __future__ import annotations

import argparse
import functools
import os
import time

import numpy as np

import zerax
import zerax.random as zr
from zerax import data, io, nn, optim, train

BATCH, PEAK_LR = 64, 1e-3
WIDTH, DEPTH, DROPOUT = 1024, 2, 0.3
MEMBERS, TTA = 3, 0


def augment_images(x: np.ndarray, rng) -> np.ndarray:
    """Flattened 8x8 images, each moved by its own random rotation, zoom and shift."""
    return data.transforms.random_affine(x, rng, shape=(8, 8), rotation=12, scale=0.1,
                                         shift=1.0)


def augment(batch, rng):
    """A batch of (flattened 8x8 images, labels), each image moved by its own random map."""
    x, y = batch
    return augment_images(x, rng), y


def mlp(key) -> nn.Sequential:
    """64 -> WIDTH x DEPTH (ReLU, dropout) -> 10 logits."""
    keys = zr.split(key, DEPTH + 1)
    layers, size = [], 64
    for k in keys[:-1]:
        layers += [nn.Linear(size, WIDTH, key=k), nn.Lambda(nn.relu), nn.Dropout(DROPOUT)]
        size = WIDTH
    layers.append(nn.Linear(size, 10, key=keys[-1]))
    return nn.Sequential(layers)


def seed_list(text: str) -> list[int]:
    """'3' -> [3]; '0-9' -> [0, ..., 9]; '0,2,5' -> [0, 2, 5]."""
    seeds = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds += list(range(int(lo), int(hi or lo) + 1))
    return seeds


def train_model(make_model, x, y, seed: int, epochs: int, *, out: str | None = None,
                progress: bool = False, peak_lr: float = PEAK_LR, batch_size: int = BATCH):
    """One model trained with ``seed`` (its initial weights, dropout, the shuffled order
    and the augmentation draws) on the images ``x`` and labels ``y``.  With ``out``, the
    run keeps scratch checkpoints there, writes its curves and history, and the model is
    saved and reloaded from a safetensors file."""
    train_set = data.map(data.ArrayDataset(x, y), augment, batched=True, seed=seed)
    # drop_last: every step has the same shape, so the step is compiled once (the shuffled
    # order differs per epoch, so no example is left out for good).
    loader = data.DataLoader(train_set, batch_size=batch_size, shuffle=True, seed=seed,
                             drop_last=True)
    steps = epochs * len(loader)
    schedule = optim.warmup_cosine_decay_schedule(0.0, peak_lr, warmup_steps=steps // 20,
                                                  decay_steps=steps)
    model_key, dropout_key = zr.split(zr.key(seed))
    callbacks = []
    if out is not None:
        os.makedirs(out, exist_ok=True)
        # Scratch checkpoints of this run (resume it with train.fit(..., resume=manager)).
        manager = io.CheckpointManager(os.path.join(out, "ckpt"), max_to_keep=2,
                                       durable=False)
        callbacks.append(train.Checkpoint(manager))
    model, _, history = train.fit(
        make_model(model_key), optim.adamw(schedule, weight_decay=1e-4),
        functools.partial(train.losses.cross_entropy, label_smoothing=0.1), loader,
        epochs=epochs, metrics=["accuracy"], key=dropout_key, callbacks=callbacks,
        progress=progress)
    if out is not None:
        history.plot(os.path.join(out, "curves.png"))
        history.to_csv(os.path.join(out, "history.csv"))
        path = os.path.join(out, "model.safetensors")
        io.save(path, model)
        model = io.load(path, like=model)
    return model


# Logits of a batch (one compiled program per model structure and batch shape).
_logits = nn.filter_jit(lambda model, x: zerax.vmap(model)(x))


def predict(models, x: np.ndarray, tta: int = 0, seed: int = 0) -> np.ndarray:
    """Class probabilities of the images ``x``: the softmax averaged over ``models`` (an
    ensemble) and, with ``tta`` > 0, over the images and ``tta`` randomly moved copies of
    them (test-time augmentation, the training augmentation drawn with ``seed``)."""
    rng = np.random.default_rng([seed, 777])
    views = [x] + [augment_images(x, rng) for _ in range(tta)]
    total = np.zeros((len(x), 10))
    for model in models:
        model = nn.inference_mode(model)      # dropout off
        for v in views:
            z = np.asarray(_logits(model, v), dtype=np.float64)
            p = np.exp(z - z.max(axis=1, keepdims=True))
            total += p / p.sum(axis=1, keepdims=True)
    return total / (len(models) * len(views))


def member_seeds(seed: int, members: int) -> list[int]:
    """The seeds of an ensemble's members: ``seed`` itself first, so one member is the
    single model of that seed."""
    return [seed + 1000 * m for m in range(members)]


def cross_validate(make_model, seeds, folds: int, epochs: int, tta: int,
                   progress: bool = False) -> dict:
    """K-fold validation over contiguous blocks of the training digits: per fold and seed
    one model trained on the other blocks; returns the validation accuracies averaged over
    the folds: ``single`` (each model alone, mean over seeds), ``single_tta``, ``ensemble``
    (the seeds' models averaged) and ``ensemble_tta``."""
    (x_tr, y_tr), _ = data.datasets.digits()
    edges = np.linspace(0, len(x_tr), folds + 1).astype(int)
    scores = {"single": [], "single_tta": [], "ensemble": [], "ensemble_tta": []}
    for f in range(folds):
        held = np.arange(edges[f], edges[f + 1])
        rest = np.setdiff1d(np.arange(len(x_tr)), held)
        xv, yv = x_tr[held], y_tr[held]
        models = []
        for seed in seeds:
            start = time.perf_counter()
            models.append(train_model(make_model, x_tr[rest], y_tr[rest], seed, epochs,
                                      progress=progress))
            single = (predict(models[-1:], xv).argmax(1) == yv).mean()
            single_tta = (predict(models[-1:], xv, tta, seed).argmax(1) == yv).mean()
            scores["single"].append(single / folds / len(seeds))
            scores["single_tta"].append(single_tta / folds / len(seeds))
            print(f"fold {f + 1}/{folds} seed {seed}: validation {single:.4f}, with "
                  f"{tta} TTA views {single_tta:.4f} ({time.perf_counter() - start:.0f} s)",
                  flush=True)
        ens = (predict(models, xv).argmax(1) == yv).mean()
        ens_tta = (predict(models, xv, tta).argmax(1) == yv).mean()
        scores["ensemble"].append(ens / folds)
        scores["ensemble_tta"].append(ens_tta / folds)
        print(f"fold {f + 1}/{folds}: ensemble of {len(seeds)} {ens:.4f}, with TTA "
              f"{ens_tta:.4f}", flush=True)
    result = {k: float(sum(v)) for k, v in scores.items()}
    print(f"{folds}-fold validation accuracy, seeds {seeds}: single {result['single']:.4f},"
          f" single+TTA {result['single_tta']:.4f}, ensemble {result['ensemble']:.4f}, "
          f"ensemble+TTA {result['ensemble_tta']:.4f}")
    return result


def run(make_model, seed: int, epochs: int, members: int, tta: int, out: str,
        progress: bool) -> float:
    """Train the ensemble of ``seed`` on all training digits, then evaluate the test digits
    once; returns the test accuracy."""
    (x_tr, y_tr), (x_te, y_te) = data.datasets.digits()
    models = []
    for m, member in enumerate(member_seeds(seed, members)):
        start = time.perf_counter()
        sub = out if members == 1 else os.path.join(out, f"member_{m}")
        models.append(train_model(make_model, x_tr, y_tr, member, epochs, out=sub,
                                  progress=progress))
        print(f"seed {seed}, member {m} (seed {member}): {epochs} epochs in "
              f"{time.perf_counter() - start:.1f} s (the first run includes compiling "
              "the step)", flush=True)
    # The test digits, once.  Each member's own accuracy is printed for information only.
    for m, model in enumerate(models):
        acc = (predict([model], x_te).argmax(1) == y_te).mean()
        print(f"seed {seed}, member {m} alone: test accuracy {acc:.4f}")
    acc = float((predict(models, x_te, tta, seed).argmax(1) == y_te).mean())
    print(f"seed {seed}: test accuracy {acc:.4f} ({round(acc * len(y_te))} of "
          f"{len(y_te)}; {members} member(s), {tta} TTA views)")
    return acc


def main(make_model=mlp, *, description: str = __doc__, epochs: int = 100,
         members: int = MEMBERS, tta: int = TTA, out: str = "train_digits_out") -> None:
    p = argparse.ArgumentParser(description=description.splitlines()[0])
    p.add_argument("--epochs", type=int, default=epochs)
    p.add_argument("--seed", default="0",
                   help="a seed, or several ('0-9', '0,3'), each run in turn")
    p.add_argument("--members", type=int, default=members,
                   help="models in the ensemble (softmax averaged)")
    p.add_argument("--tta", type=int, default=tta,
                   help="randomly moved copies of each test image to average over")
    p.add_argument("--cv", type=int, default=0, metavar="K",
                   help="K-fold validation on the training digits instead of a test run "
                        "(one model per fold and seed)")
    p.add_argument("--out", default=out)
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args()
    seeds = seed_list(args.seed)
    if args.cv:
        cross_validate(make_model, seeds, args.cv, args.epochs, args.tta,
                       not args.no_progress)
        return
    accs = []
    for seed in seeds:
        out = args.out if len(seeds) == 1 else os.path.join(args.out, f"seed_{seed}")
        start = time.perf_counter()
        accs.append(run(make_model, seed, args.epochs, args.members, args.tta, out,
                        not args.no_progress))
        print(f"seed {seed}: {time.perf_counter() - start:.1f} s in all")
    if len(seeds) > 1:
        print("test accuracy per seed: " + ", ".join(
            f"{s}: {a:.4f}" for s, a in zip(seeds, accs)))
        print(f"mean {sum(accs) / len(accs):.4f}, min {min(accs):.4f}")


if __name__ == "__main__":
    main()
