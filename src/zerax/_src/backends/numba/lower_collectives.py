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
  ``psum`` multiplies by the members and ``pmax``/``pmin`` keep it; ``all_gather`` stacks copies on the host; those whose result differs between
  the members (``psum_scatter``, ``all_to_all``, a partial ``ppermute``) raise the
  implementation's error.  (The reductions are variadic: one equation per pytree.)

``axis_index`` of a process axis is this process's constant position.
"""

from __future__ import annotations

import numpy as np

from ...ops import collectives as co
from ...ops import exchange as ex
from .fusion import LoweringError
from .lower_util import array_of
from .rules import host_rules, lowering_rules


def over_processes(eqn) -> bool:
    """Whether ``eqn`` is a collective over at least one process axis of several
    processes (an MPI call)."""
    return any(g >= 0 and n > 1 for g, n in zip(eqn.params["groups"],
                                                eqn.params["axis_size"]))


def _reduce_lower(prim):
    """Each operand of an unmapped psum times the members (pmax/pmin: a copy)."""
    def rule(ctx, eqn):
        local, procs = co.split_axes(eqn.params["axis_size"], eqn.params["groups"])
        if procs:   # (top-level ones run on the host: this is a loop or branch body)
            raise LoweringError(prim, f"{prim.name} over the process axes "
                                f"{eqn.params['axis_name']} cannot run inside this "
                                "compiled loop body")
        ctx.emit(f"# {prim.name} of values every member holds")
        for x, ov in zip(eqn.invars, eqn.outvars):
            dt = np.dtype(ov.aval.dtype).name
            factor = f" * np.{dt}({local})" if prim is co.psum_p and local != 1 else ""
            ctx.emit(f"{ctx.out(ov)} = np.asarray({array_of(ctx, x)}{factor}).astype(np.{dt})")
    return rule


for _p in (co.psum_p, co.pmax_p, co.pmin_p):
    lowering_rules[_p] = _reduce_lower(_p)
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
