"""``pmap`` (JAX's ``jax.pmap``) on zerax's one CPU device: the function is mapped over
the leading axis of its arguments with `vmap` (collectives such as ``lax.psum`` over
``axis_name`` see the whole mapped axis, as they would across devices) and compiled
with `jit`.  The numbers are those of JAX's ``pmap`` over as many devices as the
mapped axis is long; the mapped axis may have any length here.
"""

from __future__ import annotations

import functools

from ... import errors
from ..interpreters.batching import vmap
from .jit import jit

__all__ = ["pmap"]


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
    """Map ``fun`` over the leading axis (``in_axes``) of its arguments, as JAX's
    ``pmap`` does over devices: `vmap` with ``axis_name`` for collectives, compiled with
    `jit`; ``static_broadcasted_argnums`` are static (hashable) and passed to every
    call whole.  ``devices``, ``backend`` and donation are accepted and ignored.

    >>> import zerax as zx, zerax.numpy as znp
    >>> zx.pmap(lambda x: x / zx.lax.psum(x, "i"), axis_name="i")(znp.arange(1.0, 4.0))
    Array([0.16666667, 0.33333333, 0.5       ], dtype=float64)
    """
    del devices, backend, donate_argnums, global_arg_shapes
    if isinstance(static_broadcasted_argnums, int):
        static_broadcasted_argnums = (static_broadcasted_argnums,)
    static = tuple(static_broadcasted_argnums)
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes,
                                 out_axes=out_axes, static_broadcasted_argnums=static,
                                 axis_size=axis_size)
    if not callable(fun):
        raise errors.ZeraxTypeError(f"pmap takes a function, got {type(fun).__name__}.")

    @functools.wraps(fun)
    def mapped(*args, **kwargs):
        n = len(args)
        nums = {i % n for i in static if -n <= i < n}
        if isinstance(in_axes, (tuple, list)):
            if len(in_axes) != n:
                raise errors.ZeraxValueError(
                    f"pmap in_axes has {len(in_axes)} entries but the function was called "
                    f"with {n} positional arguments")
            axes = tuple(None if i in nums else a for i, a in enumerate(in_axes))
        else:
            axes = tuple(None if i in nums else in_axes for i in range(n))
        return vmap(fun, in_axes=axes, out_axes=out_axes, axis_name=axis_name,
                    axis_size=axis_size)(*args, **kwargs)

    return jit(mapped, static_argnums=static)
