"""Loops, branches and calls whose bodies call MPI: run on the host, around their
compiled bodies.

A collective over processes is a call of the MPI transport from the Python glue
between kernels (lower_collectives.py); the Numba kernels themselves never call MPI.
So a top-level ``scan``, ``while``, ``cond`` or call (a nested ``jit``, a custom_jvp or
custom_vjp function, a checkpoint) whose sub-programs contain such a collective, at any
depth, is not inlined into a kernel: it runs between the kernels (``host_rules``), as a
Python loop (or branch, or call) whose body is compiled on its own, once, by this
backend, and is itself split around its collectives.  One iteration costs the body's
kernel calls and its MPI calls; the rest of the program stays compiled as usual.  The
reverse-mode forms of ``while`` run their reference implementation op by op.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ...ir.ir import ClosedJaxpr, Jaxpr
from ...ops.call import jit_p
from ...ops.cond import cond_p
from ...ops.custom_calls import custom_jvp_call_p, custom_vjp_call_p, remat_jvp_p, remat_p
from ...ops.scan import scan_p
from ...ops.while_loop import while_lin_p, while_p, while_transpose_p
from .executable import NumbaExecutable
from .lower_collectives import over_processes
from .rules import host_calls, host_rules


def _sub_programs(value):
    if isinstance(value, Jaxpr):
        yield value
    elif isinstance(value, ClosedJaxpr):
        yield value.jaxpr
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _sub_programs(v)


def calls_mpi(eqn) -> bool:
    """Whether ``eqn`` is, or contains at any depth, a collective over processes."""
    if eqn.primitive.named_axes and "groups" in eqn.params:
        return over_processes(eqn)
    return any(calls_mpi(e) for v in eqn.params.values() for j in _sub_programs(v)
               for e in j.eqns)


def _digest(eqn) -> str:
    """A name for the host function of ``eqn``: its primitive, operand types and
    parameters (sub-programs by their text, constants by their bytes)."""
    h = hashlib.sha256(eqn.primitive.name.encode())
    h.update(repr([a.aval.str_short() for a in eqn.invars]).encode())

    def feed(v):
        if isinstance(v, Jaxpr):
            h.update(str(v).encode())
        elif isinstance(v, ClosedJaxpr):
            h.update(str(v.jaxpr).encode())
            for c in v.consts:
                c = np.asarray(getattr(c, "_value", c))
                h.update(c.dtype.str.encode() + repr(c.shape).encode() + c.tobytes())
        elif isinstance(v, (tuple, list)):
            h.update(b"(")
            for x in v:
                feed(x)
            h.update(b")")
        else:
            h.update(repr(v).encode())
    for k in sorted(eqn.params):
        h.update(k.encode())
        feed(eqn.params[k])
    return h.hexdigest()[:20]


def _arrays(vals):
    """Operands as C arrays of their own shapes (0-d stays 0-d)."""
    out = []
    for v in vals:
        v = np.asarray(v)
        out.append(v if v.flags.c_contiguous else np.ascontiguousarray(v).reshape(v.shape))
    return out


class _Compiled:
    """A sub-program compiled by this backend on its first run."""

    def __init__(self, jaxpr, name):
        self.jaxpr, self.name, self.exe = jaxpr, name, None

    def __call__(self, *vals):
        if self.exe is None:
            self.exe = NumbaExecutable(self.jaxpr, self.name)
        return self.exe.run(*_arrays(vals))


def _scan(eqn):
    p = eqn.params
    body = _Compiled(p["jaxpr"], "scan body")
    nc, nk, length = p["num_consts"], p["num_carry"], p["length"]
    y_avals = p["jaxpr"].out_avals[nk:]

    def run(*args):
        consts, carry, xs = list(args[:nc]), list(args[nc:nc + nk]), args[nc + nk:]
        ys = [np.empty((length,) + tuple(a.shape), a.dtype) for a in y_avals]
        for i in (range(length - 1, -1, -1) if p["reverse"] else range(length)):
            outs = body(*consts, *carry, *[x[i] for x in xs])
            carry = list(outs[:nk])
            for buf, y in zip(ys, outs[nk:]):
                buf[i] = y
        return [np.asarray(c) for c in carry] + ys
    return run


def _while(eqn):
    p = eqn.params
    cond, body = _Compiled(p["cond_jaxpr"], "while predicate"), _Compiled(
        p["body_jaxpr"], "while body")
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]

    def run(*args):
        cc, bc, carry = args[:ncc], args[ncc:ncc + nbc], list(args[ncc + nbc:])
        while bool(np.asarray(cond(*cc, *carry)[0])):
            carry = list(body(*bc, *carry))
        return [np.asarray(c) for c in carry]
    return run


def _cond(eqn):
    branches = [_Compiled(b, f"cond branch {k}") for k, b in enumerate(eqn.params["branches"])]

    def run(index, *ops):
        k = int(min(max(int(np.asarray(index)), 0), len(branches) - 1))
        return list(branches[k](*ops))
    return run


def _call(param):
    def make(eqn):
        sub = _Compiled(eqn.params[param], eqn.primitive.name)
        return lambda *args: list(sub(*args))
    return make


def _reference(eqn):
    prim, params = eqn.primitive, dict(eqn.params)
    return lambda *args: prim.impl(*_arrays(args), **params)


def _named(make):
    """``make(eqn)``'s host function, with a name for the generated module that tells
    apart every program it may run (the source of the module names it)."""
    return lambda eqn: (f"_zx_host_{eqn.primitive.name}_{_digest(eqn)}", make(eqn))


for _prim, _make in [(scan_p, _scan), (while_p, _while), (cond_p, _cond),
                     (jit_p, _call("jaxpr")), (custom_jvp_call_p, _call("call_jaxpr")),
                     (custom_vjp_call_p, _call("call_jaxpr")), (remat_p, _call("jaxpr")),
                     (while_lin_p, _reference), (while_transpose_p, _reference),
                     (remat_jvp_p, _reference)]:
    assert _prim not in host_rules, _prim
    host_rules[_prim] = calls_mpi
    host_calls[_prim] = _named(_make)
