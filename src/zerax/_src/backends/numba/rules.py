"""The Numba backend's rule tables, keyed by the primitive object.

- ``lowering_rules[prim](ctx, eqn)`` writes the statements that compute ``eqn`` into
  the generated kernel (see codegen.py's ``LoweringContext``);
- ``scalar_rules[prim](args, dtypes, **params)`` is the expression text of one element of
  an elementwise primitive: such equations fuse into one loop nest;
- ``host_rules[prim](eqn)`` says whether a top-level equation runs between the kernels,
  in Python (a large product calls BLAS, a decomposition LAPACK); such an equation
  calls the primitive's implementation with its parameters, or, where
  ``host_calls[prim](eqn)`` gives one, ``(name, function of the operands)`` (a loop
  around its compiled body: host_loops.py).

The ``lower_*.py`` modules of this package fill them in, one per group of primitives;
a primitive without an entry in ``lowering_rules`` or ``scalar_rules`` cannot be
compiled, with the reason its ``unsupported["lower_numba"]`` gives.
"""

from __future__ import annotations

from ...core.core import rule_table

lowering_rules = rule_table("lower_numba", "jit")
scalar_rules = rule_table("lower_numba", "jit")
host_rules: dict = {}
host_calls: dict = {}


def lowering_of(prim):
    """The statement-level lowering of ``prim``, or None."""
    return lowering_rules.get(prim)


def scalar_rule_of(prim):
    """The elementwise expression rule of ``prim``, or None."""
    return scalar_rules.get(prim)


def host_rule_of(prim):
    """Whether a top-level equation of ``prim`` runs in Python, or None (it never does)."""
    return host_rules.get(prim)


def host_call_of(prim):
    """The maker of a top-level host equation's own function, or None (its impl)."""
    return host_calls.get(prim)
