"""The exceptions zerax raises at its users.

Every error says what was wrong, where in the user's code, and what to do instead.
"""

from __future__ import annotations

import dataclasses
import os
import sys

__all__ = [
    "ZeraxError",
    "ZeraxInternalError",
    "ZeraxTypeError",
    "ZeraxValueError",
    "ZeraxIndexError",
    "ConcretizationError",
    "TracerArrayConversionError",
    "UnexpectedTracerError",
    "ShapeError",
    "AxisError",
    "NonScalarOutputError",
    "IntegerInputError",
    "NonDifferentiableError",
    "NotSupportedError",
    "CustomVJPForwardModeError",
    "NonConcreteBooleanIndexError",
    "ImmutableArrayError",
    "FrozenModuleError",
    "OptimizerStateError",
    "TreeMismatchError",
    "CheckpointError",
    "ExportError",
    "DatasetError",
    "MissingDependencyError",
    "KeyTypeError",
    "SeedOverflowError",
    "DistributedError",
    "CollectiveMismatchError",
    "JaxRuntimeError",
    "user_frame",
]

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


class ZeraxError(Exception):
    """Base class of every zerax error."""


class ZeraxInternalError(ZeraxError):
    """A zerax invariant was broken (a bug in zerax: please report it)."""


class ZeraxTypeError(ZeraxError, TypeError):
    """An argument of the wrong kind was passed (a string, an arbitrary object...)."""


class ConcretizationError(ZeraxError, TypeError):
    """A traced (abstract) value was used where a concrete Python value is needed."""


class TracerArrayConversionError(ConcretizationError):
    """A traced value was converted to a NumPy array."""


class UnexpectedTracerError(ZeraxError, TypeError):
    """A tracer was used after the transform that created it had ended."""


class ZeraxValueError(ZeraxError, ValueError):
    """An argument of the right kind with a value that is not allowed."""


class ZeraxIndexError(ZeraxError, IndexError):
    """An index out of range, or of a kind that cannot index this array."""


class ShapeError(ZeraxError, ValueError, TypeError):
    """Shapes that do not fit together.  A ValueError, as NumPy raises, and a TypeError,
    as JAX raises (shapes are part of an abstract value's type there), so that either
    ``except`` clause of ported code catches it."""


class AxisError(ShapeError, IndexError):
    """An axis out of range for an array's rank: an IndexError too, as NumPy's
    ``AxisError`` (a ValueError and an IndexError) and as the array API standard asks."""


class NonScalarOutputError(ZeraxError, TypeError):
    """grad was asked for the gradient of a function whose output is not a scalar."""


class IntegerInputError(ZeraxError, TypeError):
    """grad was asked for a derivative with respect to an integer or boolean input."""


class NonDifferentiableError(ZeraxError, TypeError):
    """A primitive has no derivative rule of the kind that was asked for."""


class NotSupportedError(ZeraxError, NotImplementedError):
    """A primitive does not support the transform it was used under."""


class CustomVJPForwardModeError(NotSupportedError, TypeError):
    """Forward-mode differentiation (jvp, jacfwd) of a custom_vjp function, whose
    derivative is only known through its bwd rule; a TypeError too, as JAX's."""


class NonConcreteBooleanIndexError(ZeraxError, IndexError):
    """A boolean mask whose values are not known while tracing was used as an index."""


class ImmutableArrayError(ZeraxError, TypeError):
    """An attempt to assign into an immutable zerax Array."""


class UnboundAxisError(ZeraxError, NameError):
    """A collective (psum, all_gather, axis_index, ...) named an axis that no enclosing
    vmap names (JAX raises NameError)."""


class FrozenModuleError(ZeraxError, dataclasses.FrozenInstanceError):
    """A field of a `zerax.nn.Module` was assigned after ``__init__`` (modules are immutable;
    an AttributeError, as Equinox's ``dataclasses.FrozenInstanceError``)."""


class OptimizerStateError(ZeraxError, TypeError):
    """An optimiser's update received a state made by another optimiser (zerax.optim)."""


class TreeMismatchError(ZeraxError, ValueError):
    """Two pytrees that must have the same structure (params and updates, updates and an
    optimiser's state) do not; the message names the first differing path."""


class CheckpointError(ZeraxError, ValueError):
    """A checkpoint file that cannot be read back (truncated, corrupt, lying about its
    contents, or not matching the ``like`` tree), or a tree that cannot be saved."""


class ExportError(ZeraxError, ValueError):
    """An exported program (``zerax.export``) that cannot be written (a primitive or a
    tree node it cannot serialise), read back (truncated, damaged, from a newer zerax, an
    unknown primitive) or called (arguments of the wrong structure, shape or dtype; a
    derivative beyond the ``vjp_order`` it was serialised with)."""


class DatasetError(ZeraxError, ValueError):
    """A dataset file that is missing or malformed (the message names the file and the
    layout that was expected), or a dataset/loader used in a way it does not support."""


class MissingDependencyError(ZeraxError, ImportError):
    """An optional dependency is not installed (the message names the extra to install)."""


class KeyTypeError(ZeraxError, TypeError):
    """A PRNG key was malformed (a raw key not uint32[2]), or used as data (arithmetic on
    a typed key), or data was passed where ``zerax.random`` expects a key."""


class SeedOverflowError(ZeraxError, OverflowError):
    """A PRNG seed outside [-2**63, 2**64 - 1] (it does not fit in 64 bits)."""


class DistributedError(ZeraxError, RuntimeError):
    """A program running on several processes (`zerax.distributed`) went wrong: MPI is
    missing or was started wrongly, or the processes disagree on what they run."""


class CollectiveMismatchError(DistributedError, ValueError):
    """The processes of a collective passed operands of different shapes or dtypes (or
    called different collectives); every process raises it, with each one's operand."""


class JaxRuntimeError(ZeraxError, RuntimeError):
    """A host callback (``debug.callback``, ``debug.print``) raised while a compiled
    program ran: the program stops, and the callback's exception is this one's
    ``__cause__``.  JAX's ``jax.errors.JaxRuntimeError``, so ported code that catches it
    works; called eagerly, a callback's exception propagates as it is (as in JAX)."""


_internal_files: dict = {}   # co_filename -> whether it is zerax's (or importlib's)


def _is_internal(filename: str) -> bool:
    # Cached: tracing asks this for every equation it records (its source location), and
    # abspath on each frame of each call was a tenth of a large program's trace time.
    internal = _internal_files.get(filename)
    if internal is None:
        path = os.path.abspath(filename)
        internal = _internal_files[filename] = path.startswith(_PKG_DIR) or \
            "importlib" in path
    return internal


def user_frame() -> str:
    """Return 'file:line (in function)' of the innermost frame outside zerax."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not _is_internal(code.co_filename):
            return f"{code.co_filename}:{frame.f_lineno} (in {code.co_name})"
        frame = frame.f_back
    return "<unknown location>"
