"""`checkpoint_name`: JAX's way to name a value for the name-based rematerialisation
policies (``checkpoint_policies.save_only_these_names`` and friends).

zerax's `checkpoint` recomputes every intermediate in the backward pass whatever the
policy, so a policy changes only how much memory is kept, never a value or a derivative;
a name is therefore an identity on the value (JAX binds a ``name`` primitive that is an
identity too).
"""

from __future__ import annotations

from ... import errors
from ..core import tree
from ..core.api_util import as_input

__all__ = ["checkpoint_name"]


def checkpoint_name(x, name):
    """Name the value(s) ``x`` (any pytree of arrays) for `checkpoint` policies; returns
    ``x`` (Python numbers and NumPy arrays converted to zerax arrays), as JAX's
    ``jax.ad_checkpoint.checkpoint_name``.

    >>> import zerax as zx, zerax.numpy as znp
    >>> from zerax.ad_checkpoint import checkpoint_name, checkpoint_policies
    >>> policy = checkpoint_policies.save_only_these_names("h")
    >>> f = zx.checkpoint(lambda x: znp.sin(checkpoint_name(znp.sin(x), "h")), policy=policy)
    >>> round(float(zx.grad(f)(1.0)), 5)
    0.36004
    """
    if not isinstance(name, str):
        raise errors.ZeraxTypeError(
            f"checkpoint_name: name must be a string, got {name!r} at {errors.user_frame()}.")
    return tree.tree_map(lambda leaf: as_input(leaf, "checkpoint_name"), x)
