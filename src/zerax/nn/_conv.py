"""Convolutions of `zerax.nn` (Equinox's ``Conv``, ``Conv1d/2d/3d``, ``ConvTranspose``,
``ConvTranspose1d/2d/3d``) on one example of shape ``(channels, *spatial)``, through
`zerax.lax.conv_general_dilated` (a cross-correlation, as in Equinox and PyTorch).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import zerax.lax as lax
import zerax.numpy as znp
from .. import errors

from ._linear import check_key, default_init, param_dtype, random_module
from ._module import Module, field

__all__ = ["Conv", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose", "ConvTranspose1d",
           "ConvTranspose2d", "ConvTranspose3d"]


def _ntuple(x, n: int, name: str) -> tuple:
    if isinstance(x, Sequence) and not isinstance(x, str):
        if len(x) != n:
            raise errors.ZeraxValueError(f"{name} {tuple(x)} must have length {n}")
        return tuple(int(v) for v in x)
    return (int(x),) * n


def padding_init(padding, n: int):
    """Equinox's padding forms: 'SAME'/'SAME_LOWER'/'VALID', an int, n ints, n pairs."""
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "SAME_LOWER", "VALID"):
            raise errors.ZeraxValueError(
                f"padding string must be 'SAME', 'SAME_LOWER' or 'VALID', got {padding!r}")
        return p
    if isinstance(padding, (int, np.integer)):
        return tuple((int(padding), int(padding)) for _ in range(n))
    if isinstance(padding, Sequence) and len(padding) == n:
        if all(isinstance(p, Sequence) for p in padding):
            if any(len(p) != 2 for p in padding):
                raise errors.ZeraxValueError(f"padding pairs must be (low, high), got {padding}")
            return tuple((int(a), int(b)) for a, b in padding)
        return tuple((int(p), int(p)) for p in padding)
    raise errors.ZeraxValueError(
        f"padding must be a string, an int, or a sequence of length {n} of ints or (low, high) "
        f"pairs, got {padding!r}")


def _padding_mode_init(mode: str) -> str:
    m = str(mode).upper()
    if m not in ("ZEROS", "REFLECT", "REPLICATE", "CIRCULAR"):
        raise errors.ZeraxValueError(
            f"padding_mode must be 'ZEROS', 'REFLECT', 'REPLICATE' or 'CIRCULAR', got {mode!r}")
    return m


def _promoted(x, weight):
    """``x`` and ``weight`` in their common dtype (NumPy's promotion, as `Linear`'s
    ``weight @ x``): a float64 image into a float32 layer computes in float64, integer
    data with integer weights stays integral."""
    x = znp.asarray(x)
    dt = znp.result_type(x, weight)
    return x.astype(dt), weight.astype(dt)


def _check_rank(x, n: int, layer: str, channels: int):
    if znp.ndim(x) != n + 1:
        raise errors.ShapeError(
            f"{layer} takes one example of rank {n + 1} (channels, *spatial), got shape "
            f"{znp.shape(x)}; use zerax.vmap(layer)(xs) for a batch")
    if znp.shape(x)[0] != channels:
        raise errors.ShapeError(
            f"{layer} expects {channels} input channels, got shape {znp.shape(x)}")


class Conv(Module):
    """An n-dimensional convolution (Equinox's ``Conv``): weight of shape
    ``(out_channels, in_channels // groups, *kernel_size)`` and bias of shape
    ``(out_channels, 1, ..., 1)``, both uniform on ``[-lim, lim)`` with
    ``lim = 1 / sqrt(in_channels // groups * prod(kernel_size))``.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> conv = nn.Conv(2, 1, 4, 3, padding="SAME", key=zr.key(0))
    >>> conv.weight.shape, conv(znp.ones((1, 5, 5), np.float32)).shape
    ((4, 1, 3, 3), (4, 5, 5))
    """

    num_spatial_dims: int = field(static=True)
    weight: Any
    bias: Any
    in_channels: int = field(static=True)
    out_channels: int = field(static=True)
    kernel_size: tuple = field(static=True)
    stride: tuple = field(static=True)
    padding: Any = field(static=True)
    dilation: tuple = field(static=True)
    groups: int = field(static=True)
    use_bias: bool = field(static=True)
    padding_mode: str = field(static=True)

    def __init__(self, num_spatial_dims: int, in_channels: int, out_channels: int,
                 kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 use_bias: bool = True, padding_mode: str = "ZEROS", dtype=None, *, key):
        check_key(key, type(self).__name__)
        n = num_spatial_dims
        kernel_size = _ntuple(kernel_size, n, "kernel_size")
        stride = _ntuple(stride, n, "stride")
        dilation = _ntuple(dilation, n, "dilation")
        if groups < 1 or in_channels % groups != 0:
            raise errors.ZeraxValueError(
                f"in_channels (={in_channels}) must be divisible by groups (={groups})")
        dtype = param_dtype(dtype)
        wkey, bkey = random_module().split(key, 2)
        gin = in_channels // groups
        lim = 1 / math.sqrt(gin * math.prod(kernel_size))
        self.weight = default_init(wkey, (out_channels, gin) + kernel_size, dtype, lim)
        self.bias = (default_init(bkey, (out_channels,) + (1,) * n, dtype, lim)
                     if use_bias else None)
        self.num_spatial_dims = n
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding_init(padding, n)
        self.dilation = dilation
        self.groups = groups
        self.use_bias = use_bias
        self.padding_mode = _padding_mode_init(padding_mode)

    def _nonzero_pad(self, x):
        if isinstance(self.padding, str):
            rhs = tuple(d * (k - 1) + 1 for k, d in zip(self.kernel_size, self.dilation))
            pads = lax.padtype_to_pads(znp.shape(x)[1:], rhs, self.stride, self.padding)
        else:
            pads = list(self.padding)
        mode = {"REFLECT": "reflect", "REPLICATE": "edge", "CIRCULAR": "wrap"}[self.padding_mode]
        return znp.pad(x, [(0, 0)] + [tuple(p) for p in pads], mode=mode)

    def __call__(self, x, *, key=None):
        _check_rank(x, self.num_spatial_dims, type(self).__name__, self.in_channels)
        if self.padding_mode != "ZEROS":
            x = self._nonzero_pad(x)
            padding = "VALID"
        else:
            padding = self.padding
        x, weight = _promoted(x, self.weight)
        y = lax.conv_general_dilated(x[None], weight, self.stride, padding,
                                     rhs_dilation=self.dilation,
                                     feature_group_count=self.groups)[0]
        if self.use_bias:
            y = y + self.bias
        return y


class Conv1d(Conv):
    """`Conv` with one spatial dimension: input ``(in_channels, length)``.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> nn.Conv1d(2, 3, 3, key=zr.key(0))(znp.ones((2, 8), np.float32)).shape
    (3, 6)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, use_bias=True, padding_mode="ZEROS", dtype=None, *, key):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, use_bias, padding_mode, dtype, key=key)


class Conv2d(Conv):
    """`Conv` with two spatial dimensions: input ``(in_channels, height, width)``.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> nn.Conv2d(1, 4, 3, stride=2, key=zr.key(0))(znp.ones((1, 9, 9), np.float32)).shape
    (4, 4, 4)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, use_bias=True, padding_mode="ZEROS", dtype=None, *,
                 key):
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, use_bias, padding_mode, dtype, key=key)


class Conv3d(Conv):
    """`Conv` with three spatial dimensions: input ``(in_channels, d, h, w)``.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> nn.Conv3d(1, 2, 2, key=zr.key(0))(znp.ones((1, 3, 3, 3), np.float32)).shape
    (2, 2, 2, 2)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=(1, 1, 1),
                 padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, use_bias=True,
                 padding_mode="ZEROS", dtype=None, *, key):
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, use_bias, padding_mode, dtype, key=key)


class ConvTranspose(Module):
    """An n-dimensional transposed convolution (Equinox's ``ConvTranspose``): the
    gradient of `Conv` with respect to its input, computed as a convolution of the
    stride-dilated input; weight shape ``(out_channels, in_channels // groups, *kernel)``.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> ct = nn.ConvTranspose(2, 3, 2, 3, stride=2, key=zr.key(0))
    >>> ct(znp.ones((3, 4, 4), np.float32)).shape
    (2, 9, 9)
    """

    num_spatial_dims: int = field(static=True)
    weight: Any
    bias: Any
    in_channels: int = field(static=True)
    out_channels: int = field(static=True)
    kernel_size: tuple = field(static=True)
    stride: tuple = field(static=True)
    padding: Any = field(static=True)
    output_padding: tuple = field(static=True)
    dilation: tuple = field(static=True)
    groups: int = field(static=True)
    use_bias: bool = field(static=True)
    padding_mode: str = field(static=True)

    def __init__(self, num_spatial_dims: int, in_channels: int, out_channels: int,
                 kernel_size, stride=1, padding=0, output_padding=0, dilation=1,
                 groups: int = 1, use_bias: bool = True, padding_mode: str = "ZEROS",
                 dtype=None, *, key):
        check_key(key, type(self).__name__)
        n = num_spatial_dims
        dtype = param_dtype(dtype)
        wkey, bkey = random_module().split(key, 2)
        kernel_size = _ntuple(kernel_size, n, "kernel_size")
        stride = _ntuple(stride, n, "stride")
        output_padding = _ntuple(output_padding, n, "output_padding")
        dilation = _ntuple(dilation, n, "dilation")
        if any(o >= s for s, o in zip(stride, output_padding)):
            raise errors.ZeraxValueError("ConvTranspose: output_padding must be < stride "
                                         "(elementwise)")
        if groups < 1 or in_channels % groups != 0:
            raise errors.ZeraxValueError(
                f"in_channels (={in_channels}) must be divisible by groups (={groups})")
        gin = in_channels // groups
        lim = 1 / math.sqrt(gin * math.prod(kernel_size))
        self.weight = default_init(wkey, (out_channels, gin) + kernel_size, dtype, lim)
        self.bias = (default_init(bkey, (out_channels,) + (1,) * n, dtype, lim)
                     if use_bias else None)
        padding = padding_init(padding, n)
        padding_mode = _padding_mode_init(padding_mode)
        if padding_mode in ("REFLECT", "REPLICATE"):
            raise errors.NotSupportedError(
                "ConvTranspose: padding_mode 'REFLECT' and 'REPLICATE' are not implemented "
                "(as in Equinox); use 'ZEROS' or 'CIRCULAR'")
        if padding_mode == "CIRCULAR":
            if any(o != 0 for o in output_padding):
                raise errors.NotSupportedError(
                    "ConvTranspose: padding_mode 'CIRCULAR' needs output_padding 0")
            if padding not in ("SAME", "SAME_LOWER"):
                raise errors.NotSupportedError(
                    "ConvTranspose: padding_mode 'CIRCULAR' needs padding 'SAME' or "
                    "'SAME_LOWER'")
        self.num_spatial_dims = n
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.output_padding = output_padding
        self.dilation = dilation
        self.groups = groups
        self.use_bias = use_bias
        self.padding_mode = padding_mode

    def _padding_transpose(self):
        k = np.asarray(self.kernel_size)
        s = np.asarray(self.stride)
        a = np.asarray(self.output_padding)
        d = np.asarray(self.dilation)
        n = self.num_spatial_dims
        if isinstance(self.padding, str):
            if self.padding == "VALID":
                p0 = np.zeros(n, np.int64)
                p1 = np.zeros(n, np.int64)
            else:
                p_sum = d * (k - 1) - s + a + 1
                a = np.where(p_sum < 0, -p_sum, 0)
                p_sum = np.where(p_sum < 0, 0, p_sum)
                lower = 1 if self.padding == "SAME_LOWER" else 0
                p0 = (p_sum + lower) // 2
                p1 = p_sum - p0
        else:
            p0 = np.asarray(self.padding)[:, 0]
            p1 = np.asarray(self.padding)[:, 1]
        p0t = d * (k - 1) - p0
        p1t = d * (k - 1) - p1 + a
        return tuple((int(x), int(y)) for x, y in zip(p0t, p1t))

    def __call__(self, x, *, key=None):
        _check_rank(x, self.num_spatial_dims, type(self).__name__, self.in_channels)
        pads = self._padding_transpose()
        if self.padding_mode == "CIRCULAR":
            stride = np.asarray(self.stride)[:, None]
            pt = np.asarray(pads)
            x = znp.pad(x, [(0, 0)] + [tuple(int(v) for v in r) for r in pt // stride],
                        mode="wrap")
            pads = tuple((int(p[0]), int(p[1])) for p in pt % stride)
        x, weight = _promoted(x, self.weight)
        y = lax.conv_general_dilated(x[None], weight, (1,) * self.num_spatial_dims, pads,
                                     lhs_dilation=self.stride, rhs_dilation=self.dilation,
                                     feature_group_count=self.groups)[0]
        if self.use_bias:
            y = y + self.bias
        return y


class ConvTranspose1d(ConvTranspose):
    """`ConvTranspose` with one spatial dimension.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> nn.ConvTranspose1d(2, 1, 3, key=zr.key(0))(znp.ones((2, 4), np.float32)).shape
    (1, 6)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, dilation=1, groups=1, use_bias=True, padding_mode="ZEROS",
                 dtype=None, *, key):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, dilation, groups, use_bias, padding_mode, dtype,
                         key=key)


class ConvTranspose2d(ConvTranspose):
    """`ConvTranspose` with two spatial dimensions.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> nn.ConvTranspose2d(2, 1, 2, stride=2, key=zr.key(0))(znp.ones((2, 3, 3),
    ...                                                                 np.float32)).shape
    (1, 6, 6)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, use_bias=True,
                 padding_mode="ZEROS", dtype=None, *, key):
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, dilation, groups, use_bias, padding_mode, dtype,
                         key=key)


class ConvTranspose3d(ConvTranspose):
    """`ConvTranspose` with three spatial dimensions.

    >>> import zerax.nn as nn, zerax.random as zr
    >>> nn.ConvTranspose3d(1, 1, 2, key=zr.key(0))(znp.ones((1, 2, 2, 2), np.float32)).shape
    (1, 3, 3, 3)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=(1, 1, 1),
                 padding=(0, 0, 0), output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1,
                 use_bias=True, padding_mode="ZEROS", dtype=None, *, key):
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, dilation, groups, use_bias, padding_mode, dtype,
                         key=key)
