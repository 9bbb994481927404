"""A transformer block (pre-norm attention and MLP) and its training step, shared by
the automatic-parallelism tests and benchmarks, with the hand-written Megatron plan:
the query, key, value and first MLP weights split by columns (the heads apart), the
output and second MLP weights by rows."""

import numpy as np


def block_params(rng, heads=4, width=32, seq=8, batch=2):
    e, f = width, 4 * width
    p = {"ln1": np.ones(e), "wq": rng.normal(size=(e, e)) / np.sqrt(e),
         "wk": rng.normal(size=(e, e)) / np.sqrt(e), "wv": rng.normal(size=(e, e)) / np.sqrt(e),
         "wo": rng.normal(size=(e, e)) / np.sqrt(e), "ln2": np.ones(e),
         "w1": rng.normal(size=(e, f)) / np.sqrt(e), "w2": rng.normal(size=(f, e)) / np.sqrt(f)}
    return p, rng.normal(size=(batch, seq, e))


def block_apply(zx, p, x, heads):
    import zerax.numpy as znp
    b, s, e = x.shape

    def norm(v, g):
        m = v.mean(-1, keepdims=True)
        return (v - m) / znp.sqrt(((v - m) ** 2).mean(-1, keepdims=True) + 1e-5) * g

    def split(v):
        return v.reshape(b, s, heads, e // heads).transpose(0, 2, 1, 3)

    h = norm(x, p["ln1"])
    q, k, v = split(h @ p["wq"]), split(h @ p["wk"]), split(h @ p["wv"])
    a = zx.nn.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(e // heads), axis=-1)
    x = x + (a @ v).transpose(0, 2, 1, 3).reshape(b, s, e) @ p["wo"]
    return x + zx.nn.gelu(norm(x, p["ln2"]) @ p["w1"]) @ p["w2"]


def block_step(zx, heads):
    import zerax.numpy as znp

    def loss(p, x):
        return znp.mean(block_apply(zx, p, x, heads) ** 2)

    def step(p, x):
        lval, g = zx.value_and_grad(loss)(p, x)
        return zx.tree_util.tree_map(lambda a, b: a - 0.05 * b, p, g), lval
    return step


def megatron_shardings(mesh):
    from zerax.sharding import NamedSharding
    from zerax.sharding import PartitionSpec as P
    col, row = NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model", None))
    return {"ln1": None, "wq": col, "wk": col, "wv": col, "wo": row, "ln2": None,
            "w1": col, "w2": row}
