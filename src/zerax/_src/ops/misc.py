"""Primitives that belong to no family: stop_gradient.

(Its compiled form, a copy, is in each backend's ``lower_misc.py``.)
"""

from __future__ import annotations

from ..core import tree
from ..core.ad_util import Zero
from ..core.api_util import as_input
from ..core.core import Primitive, ShapedArray, Tracer, bind
from ..interpreters.ad import jvp_rules
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules

stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.impl = lambda x: x
stop_gradient_p.abstract_eval = lambda x: ShapedArray(x.shape, x.dtype)


def _stop_gradient_jvp(primals, tangents):
    ans = stop_gradient(primals[0])
    return ans, Zero(ShapedArray(ans.shape, ans.dtype))


jvp_rules[stop_gradient_p] = _stop_gradient_jvp
stop_gradient_p.unsupported["transpose"] = "its tangent is always zero, so it is never transposed"
vjp_rules[stop_gradient_p] = ()  # no cotangent reaches the operand


def stop_gradient(x):
    """The identity, with a derivative of zero: gradients do not flow through ``x``.

    >>> import zerax as zx
    >>> float(zx.grad(lambda x: x * zx.lax.stop_gradient(x))(3.0))
    3.0
    """
    def one(leaf):
        if not isinstance(leaf, Tracer):
            return as_input(leaf, "stop_gradient argument")
        return bind(stop_gradient_p, leaf)

    return tree.tree_map(one, x)


batch_rules[stop_gradient_p] = lambda args, dims: (bind(stop_gradient_p, args[0]), dims[0])
