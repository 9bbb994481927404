"""From a trained model to a deployed one: train small digits models, export them with
zerax.export, load them in a fresh process that imports only zerax, and export them to
ONNX to run in onnxruntime.

    python examples/export_model.py [--epochs 5] [--out export_model_out] [--quick]

Steps (scikit-learn's 8x8 digits, the split of train_digits.py):

1. train an MLP (64 -> 256 -> 10) and a small CNN (two 3x3 convolutions, max pooling, a
   linear layer) for ``--epochs`` epochs with ``train.fit``;
2. export both once for any batch size (``export.symbolic_shape("b")``): the MLP with
   its weights as constants of the program (``mlp.zx``), the CNN with its weights as an
   input (``cnn.zx``, the weights in ``cnn_weights.safetensors`` by ``zerax.io``), each
   serialised with its VJP (``vjp_order=1``: the loaded programs can be fine-tuned);
3. run a child process that imports nothing but zerax and NumPy: it deserialises the
   programs, runs them on the test digits (a batch size they were never traced for)
   and takes one gradient through the loaded MLP; its results must equal this process's;
4. export both to ONNX (``export.to_onnx``), run them in onnxruntime, and compare with
   zerax (float32: agreement to 1e-5 relative).

``--quick`` trains for one epoch on 256 digits (the test suite runs it so).  Needs
scikit-learn for the digits and onnx + onnxruntime for step 4
(``pip install 'zerax[datasets,onnx]'``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

import zerax as zx
import zerax.random as zr
from zerax import data, export, io, nn, optim, train

CHILD = r"""
import sys
import numpy as np
import zerax as zx
from zerax import export, io

out = sys.argv[1]
x = np.load(f"{out}/x_test.npy")
mlp = export.deserialize(open(f"{out}/mlp.zx", "rb").read())
cnn = export.deserialize(open(f"{out}/cnn.zx", "rb").read())
weights = io.load(f"{out}/cnn_weights.safetensors")
y = np.asarray(zx.jit(lambda v: zx.numpy.argmax(mlp.call(v), axis=1))(x))
grad = zx.grad(lambda v: mlp.call(v).sum())(x[:3])
np.save(f"{out}/child_mlp.npy", np.asarray(mlp.call(x)))
np.save(f"{out}/child_cnn.npy", np.asarray(cnn.call(weights, x)))
np.save(f"{out}/child_grad.npy", np.asarray(grad))
assert "export_model" not in sys.modules   # none of the models' source is here
print(f"child: loaded {mlp.fun_name}{mlp.in_avals} and {cnn.fun_name}(weights, "
      f"{cnn.in_avals[-1]}), ran them on {len(x)} digits")
"""


class CNN(nn.Module):
    conv1: nn.Conv2d
    conv2: nn.Conv2d
    pool: nn.MaxPool2d
    fc: nn.Linear

    def __init__(self, key, channels=(8, 16)):
        k1, k2, k3 = zr.split(key, 3)
        self.conv1 = nn.Conv2d(1, channels[0], 3, padding=1, key=k1)
        self.conv2 = nn.Conv2d(channels[0], channels[1], 3, padding=1, key=k2)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc = nn.Linear(channels[1] * 4 * 4, 10, key=k3)

    def __call__(self, x, *, key=None):
        x = nn.relu(self.conv1(x.reshape(1, 8, 8)))
        x = self.pool(nn.relu(self.conv2(x)))
        return self.fc(x.reshape(-1))


def mlp(key):
    return nn.MLP(64, 10, width_size=256, depth=1, key=key)


def fit(model, x, y, epochs):
    loader = data.DataLoader(data.ArrayDataset(x, y), batch_size=64, shuffle=True, seed=0,
                             drop_last=True)
    model, _, history = train.fit(model, optim.adam(2e-3), train.losses.cross_entropy,
                                  loader, epochs=epochs, progress=False)
    return model


def compare(name, got, want, rtol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    ok = got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=1e-6)
    err = float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))
    print(f"  {name}: {'agree' if ok else 'DIFFER'} (largest difference {err:.1e} of the "
          "largest value)")
    return ok


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--out", default="export_model_out")
    p.add_argument("--quick", action="store_true",
                   help="one epoch on 256 digits (a smoke test of every step)")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    (x_tr, y_tr), (x_te, y_te) = data.datasets.digits()
    x_tr, x_te = x_tr.astype(np.float32), x_te.astype(np.float32)
    epochs = args.epochs
    if args.quick:
        x_tr, y_tr, epochs = x_tr[:256], y_tr[:256], 1

    # 1. train
    start = time.perf_counter()
    models = {"mlp": fit(mlp(zr.key(0)), x_tr, y_tr, epochs),
              "cnn": fit(CNN(zr.key(1), (4, 8) if args.quick else (8, 16)), x_tr, y_tr,
                         epochs)}
    print(f"trained the MLP and the CNN for {epochs} epoch(s) in "
          f"{time.perf_counter() - start:.1f} s")
    logits = {k: np.asarray(zx.jit(lambda v, m=m: zx.vmap(m)(v))(x_te))
              for k, m in models.items()}
    for k, z in logits.items():
        print(f"  {k}: test accuracy {np.mean(z.argmax(1) == y_te):.4f}")

    # 2. export for any batch size: the MLP's weights as constants, the CNN's as an input
    b, = export.symbolic_shape("b")
    images = zx.ShapeDtypeStruct((b, 64), "float32")
    def mlp_logits(x):
        return zx.vmap(models["mlp"])(x)

    exp_mlp = export.export(zx.jit(mlp_logits))(images)
    leaves, treedef = zx.tree.flatten(models["cnn"])
    at = [k for k, a in enumerate(leaves) if isinstance(a, zx.Array)]

    def cnn_logits(weights, x):   # the CNN rebuilt from its weights (the structure is code)
        full = list(leaves)
        for k, w in zip(at, weights):
            full[k] = w
        return zx.vmap(zx.tree.unflatten(treedef, full))(x)

    weights = [leaves[k] for k in at]
    exp_cnn = export.export(zx.jit(cnn_logits))(weights, images)
    for name, exp in (("mlp", exp_mlp), ("cnn", exp_cnn)):
        blob = exp.serialize(vjp_order=1)
        with open(os.path.join(args.out, f"{name}.zx"), "wb") as f:
            f.write(blob)
        print(f"exported {name}: {len(blob) / 1024:.0f} KiB, inputs "
              f"{[a.str_short() for a in exp.in_avals][-1]}")
    io.save(os.path.join(args.out, "cnn_weights.safetensors"), weights)
    np.save(os.path.join(args.out, "x_test.npy"), x_te)

    # 3. load and run in a process that imports only zerax
    res = subprocess.run([sys.executable, "-c", CHILD, args.out], capture_output=True,
                         text=True, timeout=900)
    print(res.stdout.strip())
    if res.returncode != 0:
        print(res.stderr[-3000:])
        return 1
    ok = compare("loaded MLP vs the trained one",
                 np.load(os.path.join(args.out, "child_mlp.npy")), logits["mlp"])
    ok &= compare("loaded CNN vs the trained one",
                  np.load(os.path.join(args.out, "child_cnn.npy")), logits["cnn"])
    want = zx.grad(lambda v: zx.vmap(models["mlp"])(v).sum())(x_te[:3])
    ok &= compare("gradient through the loaded MLP",
                  np.load(os.path.join(args.out, "child_grad.npy")), want, rtol=1e-4)

    # 4. ONNX, run in onnxruntime
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime is not installed: skipping the ONNX step "
              "(pip install 'zerax[onnx]')")
        return 0 if ok else 1
    for name, fun, args_ in (("mlp", lambda x: zx.vmap(models["mlp"])(x), (x_te,)),
                             ("cnn", lambda x: zx.vmap(models["cnn"])(x), (x_te,))):
        model = export.to_onnx(fun, *args_)
        with open(os.path.join(args.out, f"{name}.onnx"), "wb") as f:
            f.write(model)
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        (z,) = sess.run(None, {"args_0": x_te})
        ok &= compare(f"{name} in onnxruntime vs zerax", z, logits[name])
        print(f"  {name} in onnxruntime: test accuracy {np.mean(z.argmax(1) == y_te):.4f}")
    print("all steps agree" if ok else "SOME STEPS DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
