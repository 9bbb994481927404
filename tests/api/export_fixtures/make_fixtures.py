"""Write the fixture blobs of tests/api/test_export_format.py (run from the repository
root: ``PYTHONPATH=src python tests/api/export_fixtures/make_fixtures.py``).

Each fixture is ``<name>.zx`` (a serialised program) and ``<name>.expected.safetensors``
(its inputs and the results this zerax computed, saved with zerax.io).  The blobs are
kept as written: a later zerax must still load them and give these results, which is the
format's promise of backward compatibility.  Rewrite them only with a new format version
(and keep the old ones).
"""

from __future__ import annotations

import os

import numpy as np

import zerax as zx
import zerax.numpy as znp
from zerax import export, io, lax, nn

HERE = os.path.dirname(os.path.abspath(__file__))


def cases():
    """name -> (Exported, vjp_order, inputs (a tuple of arrays), grad input index)."""
    b, = export.symbolic_shape("b")
    rng = np.random.default_rng(2024)
    out = {}

    mlp = nn.MLP(6, 3, width_size=8, depth=2, activation=nn.tanh, key=zx.random.key(1))
    mlp = zx.tree.map(lambda a: a.astype("float32") if hasattr(a, "astype") else a, mlp)
    exp = export.export(zx.jit(lambda x: zx.vmap(mlp)(x)))(
        zx.ShapeDtypeStruct((b, 6), "float32"))
    out["mlp"] = (exp, 1, (rng.standard_normal((5, 6)).astype("float32"),), 0)

    def rnn(params, xs):
        def step(h, x):
            h = znp.tanh(h @ params["w"] + x @ params["u"] + params["c"])
            return h, h.mean(axis=-1)
        h0 = znp.zeros((xs.shape[1], 4), "float32")
        return lax.scan(step, h0, xs)
    params = {"w": (rng.standard_normal((4, 4)) * 0.3).astype("float32"),
              "u": rng.standard_normal((3, 4)).astype("float32"),
              "c": rng.standard_normal(4).astype("float32")}
    exp = export.export(zx.jit(rnn))(params, zx.ShapeDtypeStruct((6, b, 3), "float32"))
    xs = rng.standard_normal((6, 2, 3)).astype("float32")
    out["rnn_scan"] = (exp, 1, (params, xs), 1)

    def control(x, k):
        y = lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: -v, x)
        z = lax.while_loop(lambda c: c[0] < k, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0),
                           (0, y))[1]
        w = lax.fori_loop(0, 3, lambda i, a: a + znp.sin(a) * i, z)
        return w[::2], znp.sort(x)[znp.array([0, 2])], znp.cumsum(x) @ x
    exp = export.export(zx.jit(control))(np.zeros(5), np.int64(0))
    out["control"] = (exp, 0, (rng.standard_normal(5), np.int64(4)), None)

    @zx.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, g: (znp.clip(g, -0.5, 0.5),))

    def f(x):
        return znp.sum(clip_grad(x * 3.0) ** 2)
    exp = export.export(zx.jit(f))(zx.ShapeDtypeStruct((b,), "float64"))
    out["custom_vjp"] = (exp, 1, (rng.standard_normal(7),), 0)
    return out


def expected(exp, inputs, grad_arg):
    res = {"inputs": list(inputs), "outputs": zx.tree.leaves(exp.call(*inputs))}
    if grad_arg is not None:
        def loss(a):
            args = list(inputs)
            args[grad_arg] = a
            return sum(znp.sum(o) for o in zx.tree.leaves(exp.call(*args))
                       if o.dtype.kind == "f")
        res["grad"] = zx.grad(loss)(inputs[grad_arg])
    return res


def main():
    for name, (exp, order, inputs, grad_arg) in cases().items():
        blob = exp.serialize(vjp_order=order)
        with open(os.path.join(HERE, f"{name}.zx"), "wb") as f:
            f.write(blob)
        loaded = export.deserialize(blob)
        io.save(os.path.join(HERE, f"{name}.expected.safetensors"),
                expected(loaded, inputs, grad_arg))
        print(name, len(blob), "bytes")


if __name__ == "__main__":
    main()
