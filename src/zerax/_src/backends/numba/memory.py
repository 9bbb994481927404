"""Large arrays allocated inside kernels: backed by transparent huge pages.

A kernel's ``np.empty`` is Numba's allocator, i.e. ``malloc``, which maps a large
array in 4 KiB pages; writing it the first time then takes one page fault per 4 KiB
(about 45 ms of a 10^7-element elementwise kernel's 110 ms here).  NumPy asks the
kernel for 2 MiB pages on its own large allocations (``madvise(MADV_HUGEPAGE)``, when
Linux's transparent huge pages are in ``madvise`` mode); `hugepages` does the same for
an array a kernel has just allocated, before anything is written to it.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# NumPy's threshold for the same advice: smaller arrays gain nothing.
HUGE_PAGE_MIN_BYTES = 4 << 20
_HUGE_PAGE = 1 << 21
_MADV_HUGEPAGE = 14      # Linux's value


@intrinsic
def hugepages(typingctx, arr):
    """``madvise(MADV_HUGEPAGE)`` on the whole 2 MiB pages inside ``arr``'s data."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        i64, i8p = ir.IntType(64), ir.IntType(8).as_pointer()
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
        start = builder.ptrtoint(ary.data, i64)
        end = builder.add(start, builder.mul(ary.nitems, ir.Constant(i64, itemsize)))
        mask = ir.Constant(i64, ~(_HUGE_PAGE - 1))
        lo = builder.and_(builder.add(start, ir.Constant(i64, _HUGE_PAGE - 1)), mask)
        hi = builder.and_(end, mask)
        madvise = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(32), [i8p, i64, ir.IntType(32)]),
            "madvise")
        with builder.if_then(builder.icmp_unsigned(">", hi, lo)):
            builder.call(madvise, [builder.inttoptr(lo, i8p), builder.sub(hi, lo),
                                   ir.Constant(ir.IntType(32), _MADV_HUGEPAGE)])
        return context.get_dummy_value()
    return types.void(arr), codegen


def wants_hugepages(shape, dtype) -> bool:
    """Whether a new array of this type is worth the advice (Linux only)."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    return sys.platform.startswith("linux") and nbytes >= HUGE_PAGE_MIN_BYTES
