"""Sizes a compiled program can hold, checked before it is compiled or run.

Generated loops index with int64 and allocate each array they store: a value with
more than 2**63 - 1 elements (or bytes) cannot be indexed, and a result larger than
the machine's memory cannot be made.  Eagerly, NumPy refuses such shapes at once
(``iterator is too large``, ``MemoryError``); compiled, a loop over
``broadcast_to(x, (2**40, 2**40))`` would overflow its index or run for ages.
`check_program` refuses them first, with an error that names the value and where the
user's code made it.
"""

from __future__ import annotations

import math
import os

import numpy as np

from ... import errors

_INDEX_LIMIT = 2 ** 63 - 1


def physical_memory() -> int | None:
    """Bytes of memory on this machine (None when the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _sub_jaxprs(eqn):
    for p in eqn.params.values():
        for sub in (p if isinstance(p, (list, tuple)) else [p]):
            sub = getattr(sub, "jaxpr", sub)  # a ClosedJaxpr's program
            if hasattr(sub, "eqns") and hasattr(sub, "outvars"):
                yield sub


def _describe(aval, eqn) -> str:
    shape = ", ".join(str(n) for n in aval.shape)
    made = f"made by {eqn.primitive.name}" if eqn is not None else "an input"
    where = f" at {eqn.source}" if eqn is not None and eqn.source else ""
    return f"a value of shape ({shape}) and dtype {np.dtype(aval.dtype).name} ({made}{where})"


def check_program(jaxpr, name: str = "jit"):
    """Raise `zerax.errors.ZeraxValueError` when a value of ``jaxpr`` (or of a
    sub-program) has more elements or bytes than int64 indexing can address, or when
    its results together need more bytes than this machine's memory."""


    def fail(aval, eqn, why):
        raise errors.ZeraxValueError(
            f"{name}: {_describe(aval, eqn)} {why}, so the program cannot be compiled or "
            "run. Use smaller shapes (reduce in chunks, e.g. with lax.map or a "
            "fori_loop over slices).")

    stack = [jaxpr]
    while stack:
        j = stack.pop()
        for v in list(j.invars) + list(j.constvars):
            aval = getattr(v, "aval", None)
            if aval is not None and hasattr(aval, "shape"):
                _check_index(aval, None, fail)
        for eqn in j.eqns:
            for v in eqn.outvars:
                aval = getattr(v, "aval", None)
                if aval is not None and hasattr(aval, "shape"):
                    _check_index(aval, eqn, fail)
            stack.extend(_sub_jaxprs(eqn))
    memory = physical_memory()
    if memory is None:
        return
    total, made = 0, {v: e for e in jaxpr.eqns for v in e.outvars}
    for v in jaxpr.outvars:
        aval = getattr(v, "aval", None)
        if aval is None or not hasattr(aval, "shape"):
            continue
        total += math.prod(aval.shape) * np.dtype(aval.dtype).itemsize
        if total > memory:
            fail(aval, made.get(v),
                 f"is a result that (with the results before it) needs {total / 2**30:.3g} "
                 f"GiB, more than this machine's {memory / 2**30:.3g} GiB of memory")


def _check_index(aval, eqn, fail):
    n = math.prod(int(d) for d in aval.shape)
    if n * np.dtype(aval.dtype).itemsize > _INDEX_LIMIT:
        fail(aval, eqn, f"has {n:.3g} elements ({n * np.dtype(aval.dtype).itemsize:.3g} "
                        "bytes), more than int64 indexing can address (2**63 - 1)")
