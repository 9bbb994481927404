"""`zerax.nn.summary`: a table of a model's layers with their output shapes and parameter
counts (what torchinfo and Keras print; Equinox has no such function).

The model is run once abstractly (`zerax.eval_shape`, no arithmetic) while every module
call is recorded, so the table follows the order the layers are actually used in.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

import zerax as zx
from .. import tree_util as jtu

from . import _module
from ._filters import is_array, is_inexact_array
from ._module import Module

__all__ = ["summary", "count_params"]


def count_params(tree: Any) -> int:
    """The number of floating-point parameters (elements of inexact arrays) in ``tree``.

    >>> import zerax as zx, zerax.nn as nn, zerax.random as zr, zerax.numpy as znp, numpy as np
    >>> nn.count_params(nn.Linear(3, 2, key=zr.key(0)))
    8
    """
    return int(sum(int(np.prod(x.shape)) for x in jtu.tree_leaves(tree)
                   if is_inexact_array(x)))


def _shape_str(out) -> str:
    leaves = [x for x in jtu.tree_leaves(out) if hasattr(x, "shape")]
    shapes = [str(tuple(int(d) for d in x.shape)) for x in leaves if is_array(x) or
              hasattr(x, "dtype")]
    if len(shapes) == 1:
        return shapes[0]
    return "[" + ", ".join(shapes) + "]"


@contextlib.contextmanager
def _recording(rows):
    depth = [0]

    def hook(bound, call):
        row = [depth[0], bound.__self__, None]
        rows.append(row)
        depth[0] += 1
        try:
            out = call()
        finally:
            depth[0] -= 1
        row[2] = out
        return out

    old = _module._CALL_HOOK[0]
    _module._CALL_HOOK[0] = hook
    try:
        yield
    finally:
        _module._CALL_HOOK[0] = old


def summary(model: Any, *example_args: Any, **example_kwargs: Any) -> str:
    """A text table of the modules ``model(*example_args, **example_kwargs)`` calls (nested
    ones indented), their output shapes and parameter counts, then the totals. Nothing is
    computed: the call runs abstractly.

    >>> import zerax as zx, zerax.nn as nn, zerax.random as zr, zerax.numpy as znp, numpy as np
    >>> mlp = nn.MLP(4, 2, width_size=8, depth=1, key=zr.key(0))
    >>> print(nn.summary(mlp, znp.ones(4, np.float32)))
    Layer     Output shape  Params
    ==============================
    MLP       (2,)              58
      Linear  (8,)              40
      Linear  (2,)              18
    ==============================
    Total params: 58 (floating-point elements)
    """
    rows: list = []
    with _recording(rows):
        zx.eval_shape(lambda *a, **k: model(*a, **k), *example_args, **example_kwargs)
    if not rows and isinstance(model, Module):
        rows.append([0, model, zx.eval_shape(model, *example_args, **example_kwargs)])
    table = [("Layer", "Output shape", "Params")]
    for depth, mod, out in rows:
        table.append(("  " * depth + type(mod).__name__, _shape_str(out),
                      f"{count_params(mod):,}"))
    w0 = max(len(r[0]) for r in table) + 2
    w1 = max(len(r[1]) for r in table) + 2
    w2 = max(len(r[2]) for r in table)
    lines = []
    for i, (a, b, c) in enumerate(table):
        lines.append(f"{a:<{w0}}{b:<{w1}}{c:>{w2}}" if i else f"{a:<{w0}}{b:<{w1}}{c:>{w2}}")
        if i == 0:
            lines.append("=" * (w0 + w1 + w2))
    lines.append("=" * (w0 + w1 + w2))
    lines.append(f"Total params: {count_params(model):,} (floating-point elements)")
    return "\n".join(line.rstrip() for line in lines)
