"""The Numba rules of the collectives (ops/collectives.py, ops/exchange.py).

Compiled code meets a collective in two cases:

- over a **process axis** (``groups`` entry >= 0, a program traced inside
  `zerax.distributed.spmd` or ``shard_map``): the equation runs on the host between
  the compiled kernels (``host_rules``): the generated program calls the primitive's
  implementation, which is one MPI call of the transport (backends/mpi/) on the
  operand's contiguous buffer, and the next kernel continues with the result.  Inside
  a compiled loop or branch body (scan, fori_loop, while_loop, cond) such a call is
  not available: `codegen` runs those loops on the host, around their compiled body
  (`host_loops`);
- over a **vmap axis** whose operand does not vary over it (a jitted function called
  inside the vmap with unmapped arguments): every member holds the operand, so
  ``psum`` multiplies by the members and ``pmax``/``pmin`` keep it (fused elementwise
  code); ``all_gather`` stacks copies on the host; those whose result differs between
  the members (``psum_scatter``, ``all_to_all``, a partial ``ppermute``) raise the
  implementation's error.

``axis_index`` of a process axis is this process's constant position.
"""

from __future__ import annotations

import numpy as np

from ...ops import collectives as co
from ...ops import exchange as ex
from .fusion import LoweringError
from .rules import host_rules, lowering_rules, scalar_rules


def over_processes(eqn) -> bool:
    """Whether ``eqn`` is a collective over at least one process axis of several
    processes (an MPI call)."""
    return any(g >= 0 and n > 1 for g, n in zip(eqn.params["groups"],
                                                eqn.params["axis_size"]))


def _reduce_scalar(prim):
    def rule(args, in_dtypes, out_dtype, ctx, *, axis_name, axis_size, groups):
        local, procs = co.split_axes(axis_size, groups)
        if procs:   # (top-level ones run on the host: this is a loop or branch body)
            raise LoweringError(prim, f"{prim.name} over the process axes {axis_name} "
                                "cannot run inside this compiled loop body")
        if prim is co.psum_p and local != 1:
            return f"{args[0]} * np.{np.dtype(out_dtype).name}({local})"
        return args[0]
    return rule


for _p in (co.psum_p, co.pmax_p, co.pmin_p):
    scalar_rules[_p] = _reduce_scalar(_p)
    host_rules[_p] = over_processes

for _p in (ex.all_gather_p, ex.psum_scatter_p, ex.all_to_all_p, ex.ppermute_p):
    host_rules[_p] = lambda eqn: True
    _p.unsupported["lower_numba"] = (
        f"{_p.name} runs on the host between compiled kernels, not inside a compiled "
        "loop or branch body")


def _axis_index_lower(ctx, eqn):
    (ov,) = eqn.outvars
    (size,), (group,) = eqn.params["axis_size"], eqn.params["groups"]
    if group < 0 and size > 1:
        raise LoweringError(co.axis_index_p, "axis_index of a vmap axis is resolved by "
                            "its vmap before compilation")
    ctx.bind_scalar(ov, f"np.int32({int(co.axis_index_p.impl(**eqn.params))})")


lowering_rules[co.axis_index_p] = _axis_index_lower
