"""Pooling layers of `zerax.nn` (Equinox's ``Pool``, ``MaxPool1d/2d/3d``,
``AvgPool1d/2d/3d``, ``AdaptivePool``, ``AdaptiveAvgPool1d/2d/3d``,
``AdaptiveMaxPool1d/2d/3d``) on one example ``(channels, *spatial)``, through
`zerax.lax.reduce_window`. As in Equinox, ``stride`` defaults to 1 (not to the kernel size)
and average pooling divides by the kernel size (padding counts as zeros).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

import zerax.lax as lax
import zerax.numpy as znp
from .. import errors

from ._module import Module, field

__all__ = ["Pool", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d",
           "AvgPool3d", "AdaptivePool", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"]


def _ints(x, n: int, name: str) -> tuple:
    if isinstance(x, (int, np.integer)):
        return (int(x),) * n
    if isinstance(x, Sequence) and len(x) == n:
        return tuple(int(v) for v in x)
    raise errors.ZeraxValueError(f"{name} must be an int or a sequence of {n} ints, got {x!r}")


class Pool(Module):
    """A window reduction over the spatial dimensions (Equinox's ``Pool``): ``operation``
    (e.g. `zerax.lax.max`) folds each window starting from ``init``.

    >>> import zerax.nn as nn
    >>> p = nn.Pool(-np.inf, lax.max, 1, 2, stride=2)
    >>> p(znp.array([[1.0, 3.0, 2.0, 0.0]]))
    Array([[3., 2.]], dtype=float64)
    """

    init: Any
    operation: Callable
    num_spatial_dims: int = field(static=True)
    kernel_size: tuple = field(static=True)
    stride: tuple = field(static=True)
    padding: tuple = field(static=True)
    use_ceil: bool = field(static=True)

    def __init__(self, init, operation: Callable, num_spatial_dims: int, kernel_size,
                 stride=1, padding=0, use_ceil: bool = False):
        n = num_spatial_dims
        self.operation = operation
        self.init = init
        self.num_spatial_dims = n
        self.use_ceil = use_ceil
        self.kernel_size = _ints(kernel_size, n, "kernel_size")
        self.stride = _ints(stride, n, "stride")
        if isinstance(padding, (int, np.integer)):
            self.padding = tuple((int(padding), int(padding)) for _ in range(n))
        elif isinstance(padding, Sequence) and len(padding) == n:
            if all(isinstance(p, Sequence) for p in padding):
                self.padding = tuple((int(a), int(b)) for a, b in padding)
            else:
                self.padding = tuple((int(p), int(p)) for p in padding)
        else:
            raise errors.ZeraxValueError(
                f"padding must be an int or a sequence of {n} ints or (low, high) pairs, "
                f"got {padding!r}")

    def _ceil_padding(self, shape):
        out = []
        for size, (lo, hi), k, s in zip(shape[1:], self.padding, self.kernel_size,
                                        self.stride):
            out.append((lo, hi) if (size + lo + hi - k) % s == 0 else (lo, hi + s))
        return tuple(out)

    def __call__(self, x, *, key=None):
        n = self.num_spatial_dims
        if znp.ndim(x) != n + 1:
            raise errors.ShapeError(
                f"{type(self).__name__} takes one example with {n} spatial dimensions "
                f"(channels, *spatial), got shape {znp.shape(x)}; use zerax.vmap for a batch")
        padding = self._ceil_padding(znp.shape(x)) if self.use_ceil else self.padding
        for (lo, hi), k in zip(padding, self.kernel_size):
            if max(lo, hi) > k:
                raise errors.ZeraxValueError(
                    f"{type(self).__name__}: padding {(lo, hi)} is larger than the kernel "
                    f"size {k}")
        x = znp.asarray(x)
        if self.operation is lax.max:
            padded = [d + lo + hi for d, (lo, hi) in zip(znp.shape(x)[1:], padding)]
            if any(d < k for d, k in zip(padded, self.kernel_size)):
                raise errors.ShapeError(
                    f"MaxPool: the window {self.kernel_size} is larger than the padded "
                    f"input {tuple(padded)}")
        # (max pooling's derivative goes to each window's first maximum, as in JAX:
        # lax.reduce_window picks it)
        init = self.init
        if isinstance(init, float) and math.isinf(init) and x.dtype.kind in "iub":
            # -inf/inf stand for the identity of max/min: the dtype's extreme for integers
            info = np.iinfo(x.dtype) if x.dtype.kind != "b" else None
            init = (info.min if init < 0 else info.max) if info else init > 0
        init = znp.asarray(init, dtype=x.dtype)
        return lax.reduce_window(x, init, self.operation, (1,) + self.kernel_size,
                                 (1,) + self.stride, ((0, 0),) + padding)


def _pool_class(name: str, n: int, kind: str):
    is_max = kind == "max"

    def __init__(self, kernel_size, stride=1, padding=0, use_ceil=False):
        Pool.__init__(self, -np.inf if is_max else 0, lax.max if is_max else lax.add, n,
                      kernel_size, stride, padding, use_ceil)

    if is_max:
        def __call__(self, x, *, key=None):
            return Pool.__call__(self, x)
    else:
        def __call__(self, x, *, key=None):
            return Pool.__call__(self, x) / math.prod(self.kernel_size)

    doc = (f"{'Maximum' if is_max else 'Mean'} over windows of {n}-d inputs "
           f"(Equinox's ``{name}``; stride defaults to 1).\n\n"
           "    >>> import zerax.nn as nn\n"
           f"    >>> nn.{name}(2, stride=2)(znp.ones((1,{' 4,' * n}))).shape\n"
           f"    (1,{' 2,' * (n - 1)} 2)\n")
    return type(name, (Pool,), {"__init__": __init__, "__call__": __call__, "__doc__": doc,
                                "__module__": __name__, "__qualname__": name})


MaxPool1d = _pool_class("MaxPool1d", 1, "max")
MaxPool2d = _pool_class("MaxPool2d", 2, "max")
MaxPool3d = _pool_class("MaxPool3d", 3, "max")
AvgPool1d = _pool_class("AvgPool1d", 1, "avg")
AvgPool2d = _pool_class("AvgPool2d", 2, "avg")
AvgPool3d = _pool_class("AvgPool3d", 3, "avg")


def _adaptive_1d(x, target: int, op: Callable):
    """Equinox's split of a length-``n`` axis into ``target`` pieces: the first
    ``n % target`` pieces have ``n // target + 1`` elements, the others ``n // target``."""
    n = x.shape[-1]
    if target > n or target < 1:
        raise errors.ZeraxValueError(
            f"adaptive pooling: target size {target} must be between 1 and the input size {n}")
    head = n % target
    small = n // target
    parts = []
    if head:
        end = head * (small + 1)
        parts.append(op(x[..., :end].reshape(x.shape[:-1] + (head, small + 1)), axis=-1))
        parts.append(op(x[..., end:].reshape(x.shape[:-1] + (target - head, small)), axis=-1))
        return znp.concatenate(parts, axis=-1)
    return op(x.reshape(x.shape[:-1] + (target, small)), axis=-1)


class AdaptivePool(Module):
    """Pools each spatial axis down to ``target_shape`` with ``operation`` (a reduction
    such as `zerax.numpy.mean`), as Equinox's ``AdaptivePool``.

    >>> import zerax.nn as nn
    >>> nn.AdaptivePool(2, 1, znp.max)(znp.array([[1.0, 5.0, 2.0, 3.0, 4.0]]))
    Array([[5., 4.]], dtype=float64)
    """

    target_shape: tuple = field(static=True)
    operation: Callable

    def __init__(self, target_shape, num_spatial_dims: int, operation: Callable):
        self.operation = operation
        self.target_shape = _ints(target_shape, num_spatial_dims, "target_shape")

    def __call__(self, x, *, key=None):
        if znp.ndim(x) - 1 != len(self.target_shape):
            raise errors.ShapeError(
                f"{type(self).__name__}: expected an input with {len(self.target_shape)} "
                f"spatial dimensions, got shape {znp.shape(x)}")
        x = znp.asarray(x)
        for i, t in enumerate(self.target_shape, start=1):
            x = znp.moveaxis(_adaptive_1d(znp.moveaxis(x, i, -1), t, self.operation), -1, i)
        return x


def _adaptive_class(name: str, n: int, op_name: str):
    def __init__(self, target_shape):
        AdaptivePool.__init__(self, target_shape, n, getattr(znp, op_name))
    doc = (f"Adaptive {op_name} pooling of {n}-d inputs to ``target_shape`` "
           f"(Equinox's ``{name}``).\n\n"
           "    >>> import zerax.nn as nn\n"
           f"    >>> nn.{name}(2)(znp.ones((3,{' 5,' * n}))).shape\n"
           f"    (3,{' 2,' * (n - 1)} 2)\n")
    return type(name, (AdaptivePool,), {"__init__": __init__, "__doc__": doc,
                                        "__module__": __name__, "__qualname__": name})


AdaptiveAvgPool1d = _adaptive_class("AdaptiveAvgPool1d", 1, "mean")
AdaptiveAvgPool2d = _adaptive_class("AdaptiveAvgPool2d", 2, "mean")
AdaptiveAvgPool3d = _adaptive_class("AdaptiveAvgPool3d", 3, "mean")
AdaptiveMaxPool1d = _adaptive_class("AdaptiveMaxPool1d", 1, "max")
AdaptiveMaxPool2d = _adaptive_class("AdaptiveMaxPool2d", 2, "max")
AdaptiveMaxPool3d = _adaptive_class("AdaptiveMaxPool3d", 3, "max")


