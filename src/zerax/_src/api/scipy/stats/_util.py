"""Shared helpers of ``zerax.scipy.stats``: argument promotion (JAX's
``promote_args_inexact``: one inexact dtype, float64 for integers and bools)."""

from __future__ import annotations

import numpy as np

from .... import numpy as jnp
from ..... import errors
from ....base import dtypes
from ....base.dtypes import kind as dtype_kind


def promote_args_inexact(fname: str, *args):
    """The arguments as zerax arrays of one floating dtype (they broadcast in use)."""
    arrs = []
    for i, a in enumerate(args):
        try:
            arrs.append(jnp.asarray(a))
        except (TypeError, ValueError) as e:
            raise errors.ZeraxTypeError(
                f"zerax.scipy.stats.{fname}: argument {i} ({a!r:.60}) is not an array or a "
                "number") from e
    # Python numbers stay weak (a float32 x with loc=0 stays float32), as in JAX
    dtype = dtypes.result_type(*[a if type(a) in (bool, int, float) else arr
                                 for a, arr in zip(args, arrs)])
    if dtype.kind == "c":
        raise errors.NotSupportedError(f"zerax.scipy.stats.{fname}: complex arguments are "
                                       "not supported")
    if dtype_kind(dtype) != "f":
        dtype = dtypes.default_float()
    return [a.astype(dtype) for a in arrs]


def full_like_nan(x):
    return jnp.full_like(x, np.nan)
