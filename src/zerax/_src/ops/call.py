"""``jit``: the call primitive of a compiled sub-program.

``bind(jit_p, *args, jaxpr=..., name=...)`` calls a program (constants first).  Its
rules produce call equations again: the JVP calls the program's JVP program, the
transpose its transpose program, vmap its batched program (`jvp_jaxpr`,
`transpose_jaxpr`, `batch_jaxpr` of the interpreters), so ``grad(jit(f))``,
``vmap(jit(f))`` and nested ``jit`` stay compiled.  Its implementation (compile, then
run) is installed by ``api/jit.py``, the layer that owns compilation; a backend
inlines nested calls into the enclosing program.
"""

from __future__ import annotations

import numpy as np

from ..base.dtypes import kind as dtype_kind
from ..core.ad_util import Zero, is_undefined
from ..core.core import Primitive, bind
from ..interpreters.ad import jvp_jaxpr, jvp_rules, transpose_jaxpr, transpose_rules
from ..interpreters.batching import batch_jaxpr, batch_rules, batch_size_of

jit_p = Primitive("jit", multiple_results=True)
jit_p.abstract_eval = lambda *avals, jaxpr, name: list(jaxpr.out_avals)


def _jit_jvp(primals, tangents, *, jaxpr, name):
    outs = bind(jit_p, *primals, jaxpr=jaxpr, name=name)
    nonzero = [type(t) is not Zero and dtype_kind(a.dtype) in "fc"
               for t, a in zip(tangents, jaxpr.in_avals)]
    out_avals = jaxpr.out_avals
    if not any(nonzero):
        return outs, [Zero(a) for a in out_avals]
    tj, consts = jvp_jaxpr(jaxpr, nonzero)
    t_outs = bind(jit_p, *consts, *primals, *[t for t, m in zip(tangents, nonzero) if m],
                  jaxpr=tj, name=f"jvp({name})")
    return outs, [t if dtype_kind(a.dtype) in "fc" else Zero(a) for t, a in zip(t_outs, out_avals)]


def _jit_transpose(cts, *args, jaxpr, name):
    linear = [is_undefined(a) for a in args]
    tj, consts = transpose_jaxpr(jaxpr, linear)
    cts = [np.zeros(c.aval.shape, c.aval.dtype) if type(c) is Zero else c for c in cts]
    defined = [a for a in args if not is_undefined(a)]
    res = iter(bind(jit_p, *consts, *defined, *cts, jaxpr=tj, name=f"transpose({name})"))
    return [next(res) if m else None for m in linear]


def _jit_batch(args, dims, *, jaxpr, name):
    bj, consts = batch_jaxpr(jaxpr, dims, batch_size_of(args, dims))
    outs = bind(jit_p, *consts, *args, jaxpr=bj, name=f"vmap({name})")
    return outs, [0] * len(outs)


jvp_rules[jit_p] = _jit_jvp
transpose_rules[jit_p] = _jit_transpose
batch_rules[jit_p] = _jit_batch
