"""The argument handling the special functions share: their inputs as one inexact dtype
(the default float for integers, float32 kept), broadcast together."""

from __future__ import annotations

import numpy as np

from ..... import errors
from ....base import dtypes
from ....numpy._util import (as_dtype, check_arg, numpy_result_dtype, promote_and_broadcast,
                            result_type)
from ....base.dtypes import kind as dtype_kind


def _float(x, fname):
    x = check_arg(x, fname)
    return as_dtype(x, numpy_result_dtype(np.sin, x))


def _floats(fname, *args):
    """Promote to one inexact dtype (the default float for integers) and broadcast."""
    args = [check_arg(a, fname, i) for i, a in enumerate(args)]
    dtype = np.dtype(result_type(*args))
    if dtype_kind(dtype) not in "fc":
        dtype = dtypes.default_float()
    if np.dtype(dtype).kind == "c":
        raise errors.NotSupportedError(f"zerax.scipy.special.{fname}: complex inputs are not "
                                       "supported")
    return promote_and_broadcast(fname, args, dtype)


def _const(x, v):
    return np.asarray(v, x.dtype)
