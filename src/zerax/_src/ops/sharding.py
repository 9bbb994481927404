"""``sharding_constraint``: the identity, which says how its value is to be split over
a mesh (``lax.with_sharding_constraint``, and the shardings ``jit`` is given for its
inputs and outputs).

Its parameter ``sharding`` is a ``NamedSharding`` (read through its ``mesh`` and
``spec`` only: this layer does not import the api).  Outside an automatically
partitioned program it does nothing (every rule passes the value through, and compiled
code copies it); the partitioning pass (``api/partition.py``) gives its result the
sharding it names and reshards its operand to it.  Its derivatives carry the same
constraint, as JAX's: the tangent and the cotangent of a constrained value are split
as the value is, so ``grad`` of a sharded program is sharded.  Its sharding rule is in
``ops/sharding_rules.py`` with every other primitive's.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero
from ..core.core import Primitive, ShapedArray, bind
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules

sharding_constraint_p = Primitive("sharding_constraint")


def constraint_spec(sharding, ndim: int) -> tuple:
    """The normalised spec (a tuple of axis names per dimension) of ``sharding`` for an
    array of rank ``ndim``."""
    return tuple(tuple(d) for d in sharding.spec.axes_of(ndim))


def _abstract(x, *, sharding):
    if len(sharding.spec) > len(x.shape):
        raise errors.ZeraxValueError(
            f"with_sharding_constraint: {sharding.spec!r} has {len(sharding.spec)} entries "
            f"for a value of shape {tuple(x.shape)} (at {errors.user_frame()})")
    return ShapedArray(x.shape, x.dtype)


def _jvp(primals, tangents, *, sharding):
    (x,), (t,) = primals, tangents
    out = bind(sharding_constraint_p, x, sharding=sharding)
    if type(t) is Zero:
        return out, t
    return out, bind(sharding_constraint_p, t, sharding=sharding)


def _transpose(ct, x, *, sharding):
    if type(ct) is Zero:
        return [ct]
    return [bind(sharding_constraint_p, ct, sharding=sharding)]


def _batch(args, dims, *, sharding):
    # the batch dimension is not split (JAX's rule for with_sharding_constraint in vmap)
    (x,), (d,) = args, dims
    entries = list(sharding.spec) + [None] * (len(x.shape) - 1 - len(sharding.spec))
    entries.insert(d, None)
    batched = type(sharding)(sharding.mesh, type(sharding.spec)(*entries))
    return bind(sharding_constraint_p, x, sharding=batched), d


sharding_constraint_p.impl = lambda x, *, sharding: np.asarray(x)
sharding_constraint_p.abstract_eval = _abstract
jvp_rules[sharding_constraint_p] = _jvp
transpose_rules[sharding_constraint_p] = _transpose
batch_rules[sharding_constraint_p] = _batch
# (no eager-tape rule: the tape linearizes it, so its cotangent keeps the constraint)


__all__ = ["constraint_spec", "sharding_constraint_p"]
