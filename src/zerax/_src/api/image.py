"""Image resampling (JAX's ``jax.image``): ``resize`` and ``scale_and_translate``.

JAX's algorithm: each resized dimension gets a weight matrix from a kernel (triangle
for ``linear``, Keys cubic, OpenCV's cubic for ``cubic-pytorch``, Lanczos 3/5, box
overlaps for ``area``) sampled at the output pixel centres, widened by the inverse scale
when downsampling with ``antialias`` and normalised to sum to one; the image is then
contracted with the matrices (one ``einsum``), so it is differentiable in the image
(and in ``scale``/``translation``).  ``nearest`` picks ``floor((i + 0.5) * in / out)``.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from ... import errors
from .. import numpy as jnp
from ..base.dtypes import kind as dtype_kind

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The interpolation methods of `resize` (JAX's names and aliases)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method named ``s`` (``"nearest"``, ``"linear"``/``"bilinear"``/...,
        ``"lanczos3"``, ``"lanczos5"``, ``"cubic"``/``"bicubic"``/...,
        ``"cubic-pytorch"``, ``"area"``)."""
        table = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR,
                 "bilinear": ResizeMethod.LINEAR, "trilinear": ResizeMethod.LINEAR,
                 "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
                 "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC,
                 "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
                 "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
                 "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA}
        if s not in table:
            raise errors.ZeraxValueError(f'Unknown resize method "{s}"')
        return table[s]


def _lanczos(radius):
    def k(x):
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        out = jnp.where(x > 1e-3, y / jnp.where(x != 0, np.pi ** 2 * x ** 2, 1), 1)
        return jnp.where(x > radius, 0.0, out)
    return k


def _keys_cubic(x):
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = jnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _opencv_cubic(x):
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


_AREA = object()
_KERNELS = {ResizeMethod.LINEAR: (1, _triangle), ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
            ResizeMethod.LANCZOS5: (5, _lanczos(5.0)), ResizeMethod.CUBIC: (2, _keys_cubic),
            ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic), ResizeMethod.AREA: (1, _AREA)}
_TINY = 1000.0 * float(np.finfo(np.float32).eps)


def _weight_mat(input_size, output_size, scale, translation, kernel, antialias,
                edge_padding, radius, dtype):
    scale = jnp.asarray(scale, dtype=dtype)
    translation = jnp.asarray(translation, dtype=dtype)
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample_f = ((jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale
                - translation * inv_scale - 0.5)
    if edge_padding:
        k = math.ceil(radius * max(1.0 / float(scale), 1.0)) if antialias else radius
    else:
        k = 0
    expanded = jnp.arange(-k, input_size + k, dtype=dtype)
    if kernel is _AREA:
        l_i = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        r_i = l_i + inv_scale
        l_j = jnp.arange(input_size, dtype=dtype)
        weights = jnp.maximum(0.0, jnp.minimum(r_i[None, :], (l_j + 1.0)[:, None])
                              - jnp.maximum(l_i[None, :], l_j[:, None]))
    else:
        weights = kernel(jnp.abs(sample_f[None, :] - expanded[:, None]) / kernel_scale)
    if edge_padding:
        clamped = np.clip(np.arange(-k, input_size + k), 0, input_size - 1)
        onehot = (clamped[:, None] == np.arange(input_size)[None, :]).astype(dtype)
        weight_mat = jnp.asarray(onehot).T @ weights        # rows summed per clamped index
        total = jnp.sum(weight_mat, axis=0, keepdims=True)
        return jnp.where(jnp.abs(total) > _TINY,
                         weight_mat / jnp.where(total != 0, total, 1), 0)
    total = jnp.sum(weights, axis=0, keepdims=True)
    weights = jnp.where(jnp.abs(total) > _TINY, weights / jnp.where(total != 0, total, 1), 0)
    inside = (sample_f >= -0.5) & (sample_f <= input_size - 0.5)
    return jnp.where(inside[None, :], weights, 0)


def _scale_and_translate(x, shape, spatial_dims, scale, translation, kernel, antialias,
                         edge_padding, radius):
    if not spatial_dims:
        return x
    nd = x.ndim
    operands = [x, list(range(nd))]
    out_idx = list(range(nd))
    for i, d in enumerate(spatial_dims):
        d = d % nd
        w = _weight_mat(x.shape[d], shape[d], scale[i], translation[i], kernel, antialias,
                        edge_padding, radius, np.result_type(x.dtype, np.float32))
        operands += [w.astype(x.dtype), [d, nd + i]]
        out_idx[d] = nd + i
    return jnp.einsum(*operands, out_idx)


def _inexact(image, fname):
    image = jnp.asarray(image)
    if dtype_kind(image.dtype) not in "fc":
        image = image.astype(float)
    return image


def _method(method):
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias: bool = True, precision=None):
    """Resample ``image`` to ``shape``: output pixel ``o`` of each ``spatial_dims`` axis
    samples the input at ``(o + 0.5 - translation) / scale - 0.5`` with ``method``'s
    kernel (JAX's ``jax.image.scale_and_translate``; not ``nearest``).

    >>> import zerax.numpy as znp, zerax.image as zimage
    >>> zimage.scale_and_translate(znp.array([0.0, 1.0]), (4,), (0,), znp.array([2.0]),
    ...                            znp.array([0.0]), "linear")
    Array([0.  , 0.25, 0.75, 1.  ], dtype=float64)
    """
    del precision
    shape = tuple(int(s) for s in shape)
    image = _inexact(image, "scale_and_translate")
    if len(shape) != image.ndim:
        raise errors.ShapeError(
            f"scale_and_translate: shape must have length equal to the number of "
            f"dimensions of x; {shape} vs {tuple(image.shape)}")
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise errors.ZeraxValueError("Nearest neighbor resampling is not currently supported "
                                     "for scale_and_translate.")
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    spatial_dims = tuple(spatial_dims)
    scale = jnp.atleast_1d(jnp.asarray(scale))
    translation = jnp.atleast_1d(jnp.asarray(translation))
    if scale.shape[0] != len(spatial_dims) or translation.shape[0] != len(spatial_dims):
        raise errors.ShapeError("scale_and_translate: scale and translation need one entry "
                                "per spatial dimension")
    return _scale_and_translate(image, shape, spatial_dims,
                                [scale[i] for i in range(len(spatial_dims))],
                                [translation[i] for i in range(len(spatial_dims))],
                                kernel, antialias,
                                method == ResizeMethod.CUBIC_PYTORCH and not antialias, radius)


def resize(image, shape, method, antialias: bool = True, precision=None):
    """``image`` resampled to ``shape`` (JAX's ``jax.image.resize``): every axis whose
    size changes is interpolated with ``method`` (``"nearest"``, ``"linear"``,
    ``"cubic"``, ``"cubic-pytorch"``, ``"lanczos3"``, ``"lanczos5"``, ``"area"``);
    ``antialias`` widens the kernel when downsampling.

    >>> import zerax.numpy as znp, zerax.image as zimage
    >>> zimage.resize(znp.array([[0.0, 1.0], [2.0, 3.0]]), (2, 4), "linear")
    Array([[0.  , 0.25, 0.75, 1.  ],
           [2.  , 2.25, 2.75, 3.  ]], dtype=float64)
    """
    del precision
    shape = tuple(int(s) for s in shape)
    image = jnp.asarray(image)
    if len(shape) != image.ndim:
        raise errors.ShapeError(
            f"resize: shape must have length equal to the number of dimensions of x; "
            f"{shape} vs {tuple(image.shape)}")
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        x = image
        for d in range(x.ndim):
            m, n = x.shape[d], shape[d]
            if m == n:
                continue
            offsets = np.floor(((np.arange(n, dtype=np.float32) + 0.5) * np.float32(m)
                                / np.float32(n)).astype(np.float32)).astype(np.int32)
            idx = [slice(None)] * x.ndim
            idx[d] = offsets
            x = x[tuple(idx)]
        return x
    image = _inexact(image, "resize")
    spatial = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial]
    return _scale_and_translate(image, shape, spatial, scale, [0.0] * len(spatial), kernel,
                                antialias,
                                method == ResizeMethod.CUBIC_PYTORCH and not antialias, radius)
