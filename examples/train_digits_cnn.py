"""Train a small CNN on scikit-learn's 8x8 digits with zerax.train: the MLP example's
recipe (augmentation, AdamW, ensemble, K-fold validation) with a convolutional model and
test-time augmentation.

    python examples/train_digits_cnn.py [--epochs 100] [--seed 0 | --seed 0-9]
                                        [--members 2] [--tta 8] [--cv K]
                                        [--out train_digits_cnn_out] [--no-progress]

Two 3x3 convolutions (32 and 64 channels, ReLU), 2x2 max pooling and two linear layers,
on the images as (1, 8, 8).  Same fixed split as train_digits.py (first 1,437 train, last
360 test) and the same training recipe, from that example (`train_digits.train_model`):
each training image moved by its own random rotation, zoom and shift every epoch, AdamW
with warm-up and cosine decay (peak 1e-3, 100 epochs of batches of 64), label smoothing
0.1.  The prediction averages the softmax of ``--members 2`` models (seeds ``s`` and
``s + 1000``) over each image and ``--tta 8`` randomly moved copies of it (test-time
augmentation, drawn like the training moves).  On validation TTA helped the CNN's
ensemble a little (below) and hurt the MLP, which is why only this example uses it.

The settings were chosen by 3-fold validation over contiguous blocks of the training
digits (``--cv 3``; see train_digits.py), seeds 0-1, before the test digits were scored;
validation accuracy, mean over the folds (per fold: first, middle, last block):

* the previous version of this example (the 1,437 digits and their 8 one-pixel shifts as
  a fixed training set, Adam 1e-3, 15 epochs): one model 97.67% (96.14, 97.49, 99.37),
  with 8 TTA views 96.97%, the ensemble of the 2 seeds 97.91%, with TTA 97.36%;
* this recipe: one model 98.50% (97.18, 98.85, 99.48), with 8 TTA views 98.50%
  (97.91, 98.02, 99.58), the ensemble of 2 98.61%, with TTA 98.75% (98.12, 98.54,
  99.58), the best, so the default.

(measured with a script equivalent to ``--cv 3 --seed 0,1 --tta 8``, whose TTA draws came
from other seeds; this example's ``--cv 3 --seed 0,1`` gives one model 98.50%, with TTA
98.57%, the ensemble 98.68%, with TTA 98.82%, about 5 minutes with its compiling.)

Test accuracy of the default (2 members, 8 TTA views), seeds 0-9 (each seed's run once,
after the recipe was fixed): 98.89, 99.17, 98.89, 98.89, 99.17, 98.33, 98.89, 98.61,
99.17, 98.89% (mean 98.89%, min 98.33%; seed 0, the default, 356 of 360).  The 20 members
alone, without TTA: 98.06-99.44%, mean 98.78%, all at 98% or more.  The previous version
of this example: 97.5% (seed 0).  A run trains 2 models, each about 50-55 s on 2 idle
cores (70-110 s while other work shares them), plus about two minutes to compile the
training step and the prediction the first time (the first run of seed 0 took 243 s on
busy cores).
"""

from __future__ import annotations

# The script's folder is on sys.path when it runs, so the MLP example is importable.
from train_digits import main

import zerax.random as zr
from zerax import nn


class CNN(nn.Module):
    conv1: nn.Conv2d
    conv2: nn.Conv2d
    pool: nn.MaxPool2d
    fc1: nn.Linear
    fc2: nn.Linear

    def __init__(self, key):
        k1, k2, k3, k4 = zr.split(key, 4)
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1, key=k1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1, key=k2)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(64 * 4 * 4, 128, key=k3)
        self.fc2 = nn.Linear(128, 10, key=k4)

    def __call__(self, x, *, key=None):
        # key: unused (no random layers); the shared training code passes one.
        x = x.reshape(1, 8, 8)
        x = nn.relu(self.conv1(x))
        x = self.pool(nn.relu(self.conv2(x)))
        return self.fc2(nn.relu(self.fc1(x.reshape(-1))))


if __name__ == "__main__":
    main(CNN, description=__doc__, epochs=100, members=2, tta=8,
         out="train_digits_cnn_out")
