"""The Numba rule of ``debug_callback`` (ops/debug.py): a call back into Python from
inside the compiled kernel, through an object-mode block (`lower_util.emit_python_call`).

One rule serves the top level of a program and the bodies of compiled loops and
branches (scan, fori_loop, while_loop, cond), so a print in a loop body runs at each
iteration, in order with the loop's other work.  The kernel passes the operands (views
of its buffers, or scalars) to a Python helper of the generated module, which makes
them NumPy values of their dtypes and calls the primitive's implementation (which
copies them into zerax Arrays for the user's function).  A top-level host call between
kernels would not do: host calls write their parameters into the program's source as
text (codegen.py's ``_param_text``), and a Python function is no text.

Each helper has a name this process never reuses (``_zx_debug<n>``): compiled programs
are memoised by their source text, so two programs that differ only in their callback
must differ in the text.  A kernel holding a callback refers to a Python object, so the
native disk cache does not keep it (`native.harvest` declines it): such a program is
compiled by Numba in each process.
"""

from __future__ import annotations

import itertools

import numpy as np

from ...core.core import run_impl
from ...ops.debug import debug_callback_p
from .lower_util import emit_python_call
from .rules import lowering_rules

_names = itertools.count()


def _host_call(params, avals, literals):
    """The helper the kernel calls: ``(operand values of the non-literal operands) ->
    None``; ``literals`` maps operand positions to their constant values."""
    dtypes = [a.dtype for a in avals]

    def call(*given):
        it = iter(given)
        vals = [literals[i] if i in literals else np.asarray(next(it), dtypes[i])
                for i in range(len(dtypes))]
        run_impl(debug_callback_p, vals, params)
    return call


def _debug_callback_lower(ctx, eqn):
    literals, texts = {}, []
    for i, a in enumerate(eqn.invars):
        kind, text = ctx.ref(a)
        if kind == "literal":
            literals[i] = np.asarray(a.val)
        else:
            texts.append(text)
    ctx.emit(f"# debug_callback {eqn.params['callback'].__name__} (calls back into Python)")
    emit_python_call(ctx, f"_zx_debug{next(_names)}",
                     _host_call(eqn.params, [a.aval for a in eqn.invars], literals), texts)


lowering_rules[debug_callback_p] = _debug_callback_lower
