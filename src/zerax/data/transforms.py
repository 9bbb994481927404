"""`zerax.data.transforms`: data augmentation on batches of images, in NumPy.

Augmentations draw their random numbers from a NumPy ``Generator`` passed in; used inside
``data.map(dataset, fn, batched=True, seed=s)`` that generator is a pure function of
``(s, epoch, the batch's example indices)``, so augmented runs are reproducible and
resume exactly (see :class:`zerax.data.MapDataset`).

* :func:`random_affine`: a random rotation, scale, shear and shift per image (bilinear or
  nearest-neighbour resampling), torchvision's ``RandomAffine`` on a whole batch at once.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DatasetError

__all__ = ["random_affine"]


def _range(value, name: str, *, around: float = 0.0) -> tuple[float, float]:
    """A (low, high) sampling range from ``value`` (a half-width) or a (low, high) pair."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise DatasetError(f"random_affine: {name} must be a number or a (low, high) "
                               f"pair, got {value!r}")
        lo, hi = (float(v) for v in value)
    else:
        width = float(value)
        if not width >= 0:
            raise DatasetError(f"random_affine: {name} must be >= 0, got {value!r}")
        lo, hi = around - width, around + width
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise DatasetError(f"random_affine: {name} range ({lo}, {hi}) is not a finite "
                           "(low <= high) interval")
    return lo, hi


def random_affine(images, rng, *, rotation=0.0, scale=0.0, shear=0.0, shift=0.0,
                  shape: tuple[int, int] | None = None, interpolation: str = "bilinear",
                  fill: float = 0.0) -> np.ndarray:
    """Each image of a batch moved by its own random affine map, about the image centre.

    ``images`` is a batch: ``(n, H, W)``, ``(n, C, H, W)`` (one map per image, shared by
    its channels; any axes between the first and the last two are treated as channels),
    or ``(n, H * W)`` flattened rows with ``shape=(H, W)``.  Per image, uniformly:

    * ``rotation``: an angle in degrees in ``[-rotation, rotation]`` (or a ``(lo, hi)``
      pair), anticlockwise as displayed with row 0 at the top;
    * ``scale``: a zoom factor in ``[1 - scale, 1 + scale]`` (or ``(lo, hi)``);
    * ``shear``: a horizontal shear angle in degrees in ``[-shear, shear]`` (or ``(lo, hi)``);
    * ``shift``: a translation in pixels along each axis in ``[-shift, shift]`` (or
      ``(lo, hi)``).

    Each output pixel samples the input at the inverse-mapped point, bilinearly or
    (``interpolation="nearest"``) from the nearest pixel; points outside the image read
    ``fill``.  ``rng`` is a NumPy ``Generator`` (or a seed for one).  Floating-point images
    only; the result has their dtype and shape.  With every amount 0 the images come back
    unchanged.

    >>> import numpy as np
    >>> from zerax.data import transforms
    >>> img = np.zeros((1, 5, 5), np.float32); img[0, 2, 1] = 1.0
    >>> moved = transforms.random_affine(img, np.random.default_rng(0), shift=(1, 1))
    >>> np.argwhere(moved[0] == 1.0).tolist()        # one pixel down and right
    [[3, 2]]
    >>> turned = transforms.random_affine(img, 0, rotation=(90, 90))
    >>> np.argwhere(turned[0] > 0.5).tolist()        # a quarter turn about the centre
    [[3, 2]]
    """
    x = np.asarray(images)
    if x.dtype.kind != "f":
        raise DatasetError(f"random_affine takes floating-point images, got dtype {x.dtype} "
                           "(convert first, e.g. x.astype(np.float32) / 255)")
    if interpolation not in ("bilinear", "nearest"):
        raise DatasetError(f"random_affine: interpolation must be 'bilinear' or 'nearest', "
                           f"got {interpolation!r}")
    if shape is not None:
        if (len(shape) != 2 or not all(isinstance(d, (int, np.integer)) and d > 0
                                       for d in shape)):
            raise DatasetError(f"random_affine: shape must be (height, width), got {shape!r}")
        h, w = int(shape[0]), int(shape[1])
        if x.ndim != 2 or x.shape[1] != h * w:
            raise DatasetError(f"random_affine with shape={(h, w)} takes flattened images "
                               f"(n, {h * w}), got an array of shape {x.shape}")
        planes = x.reshape(x.shape[0], 1, h * w)
    else:
        if x.ndim < 3:
            raise DatasetError(f"random_affine takes a batch of images (n, H, W) or "
                               f"(n, C, H, W), got an array of shape {x.shape}; pass "
                               "shape=(H, W) for flattened rows, x[None] for one image")
        h, w = x.shape[-2:]
        planes = x.reshape(x.shape[0], -1, h * w)
    n = x.shape[0]
    rng = np.random.default_rng(rng)
    rot = rng.uniform(*_range(rotation, "rotation"), n)
    zoom_lo, zoom_hi = _range(scale, "scale", around=1.0)
    if zoom_lo <= 0:
        raise DatasetError(f"random_affine: the zoom factors ({zoom_lo}, {zoom_hi}) must stay "
                           "above 0")
    zoom = rng.uniform(zoom_lo, zoom_hi, n)
    shr = rng.uniform(*_range(shear, "shear"), n)
    lo, hi = _range(shift, "shift")
    ty, tx = rng.uniform(lo, hi, n), rng.uniform(lo, hi, n)

    # In the frame x = col - cx, y = cy - row (origin at the centre, y up) the forward map
    # is p -> M p + (tx, -ty) with M = zoom * rotation @ shear (an anticlockwise turn on
    # screen is the usual [[cos, -sin], [sin, cos]] there).  Each output pixel samples the
    # input at M^-1 (p - t).
    th, sh = np.deg2rad(rot), np.deg2rad(shr)
    cos, sin = np.cos(th), np.sin(th)
    m = np.empty((n, 2, 2))
    m[:, 0, 0], m[:, 0, 1], m[:, 1, 0], m[:, 1, 1] = cos, -sin, sin, cos
    shear_m = np.zeros((n, 2, 2))
    shear_m[:, 0, 0], shear_m[:, 0, 1], shear_m[:, 1, 1] = 1.0, np.tan(sh), 1.0
    inv = np.linalg.inv(m @ shear_m * zoom[:, None, None])
    cy, cx = (h - 1) / 2.0, (w - 1) / 2.0
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    px = (cols.reshape(1, -1) - cx) - tx[:, None]
    py = (cy - rows.reshape(1, -1)) + ty[:, None]
    src_c = inv[:, 0, 0, None] * px + inv[:, 0, 1, None] * py + cx
    src_r = cy - (inv[:, 1, 0, None] * px + inv[:, 1, 1, None] * py)   # (n, h*w)

    fill = x.dtype.type(fill)

    def sample(r, c):
        # Values at integer source pixels (r, c), `fill` outside: (n, planes, h*w).
        inside = (r >= 0) & (r < h) & (c >= 0) & (c < w)
        flat = np.clip(r, 0, h - 1) * w + np.clip(c, 0, w - 1)
        vals = np.take_along_axis(planes, flat[:, None, :], axis=2)
        return np.where(inside[:, None, :], vals, fill)

    if interpolation == "nearest":
        out = sample(np.floor(src_r + 0.5).astype(np.intp), np.floor(src_c + 0.5).astype(np.intp))
    else:
        r0, c0 = np.floor(src_r), np.floor(src_c)
        fr = (src_r - r0).astype(x.dtype)[:, None, :]
        fc = (src_c - c0).astype(x.dtype)[:, None, :]
        r0, c0 = r0.astype(np.intp), c0.astype(np.intp)
        out = ((sample(r0, c0) * (1 - fc) + sample(r0, c0 + 1) * fc) * (1 - fr)
               + (sample(r0 + 1, c0) * (1 - fc) + sample(r0 + 1, c0 + 1) * fc) * fr)
    return out.astype(x.dtype, copy=False).reshape(x.shape)
