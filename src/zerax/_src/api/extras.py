"""Small pieces of JAX's top-level API that ported code uses: shapes without running
(`eval_shape`, `ShapeDtypeStruct`), `linear_transpose`, and the device calls that are
no-ops on zerax's CPU arrays (`block_until_ready`, `device_put`, `devices`).  The shape
functions live in ``lax.abstract_eval`` (control flow uses them) and are re-exported here."""

from __future__ import annotations

import contextlib

import numpy as np

from .. import backends as _backends
from . import distributed
from ..base.config import config
from ..core import tree
from ... import errors
from ..interpreters.ad import backward_pass, output_cotangents, zeros_for
from ..core.api_util import OutTree, as_input, as_output, flatten_fun
from ..core.array import Array, Device, SingleDeviceSharding
from ..core.core import Tracer
from ..ir.tracing import fun_name, trace_to_jaxpr
from ..lax.abstract_eval import ShapeDtypeStruct, _aval, eval_shape, make_jaxpr  # noqa: F401


def linear_transpose(fun, *primals):
    """The transpose of the linear function ``fun``: ``f_t(ct)`` returns a tuple of
    cotangents shaped like ``primals`` (which only give shapes and dtypes).  ``fun`` is
    traced once; a ``fun`` that is not linear in its inputs is an error.

    >>> import zerax as zx
    >>> f_t = zx.linear_transpose(lambda x: 3.0 * x, 1.0)
    >>> f_t(1.0)
    (Array(3., dtype=float64),)
    """
    name = fun_name(fun)
    leaves, in_tree = tree.tree_flatten(primals)
    avals = [_aval(p, f"primal of {name}") for p in leaves]
    out_store = OutTree()
    closed = trace_to_jaxpr(flatten_fun(fun, in_tree, out_store, out_what=f"output of {name}"),
                            avals, name)
    out_tree, out_avals = out_store.tree, closed.out_avals

    def transposed(ct):
        cts = output_cotangents(ct, out_tree, out_avals, f"the transpose of {name}")
        try:
            res = backward_pass(closed.jaxpr, closed.consts, cts)
        except (errors.NotSupportedError, errors.ZeraxInternalError) as e:
            raise errors.ZeraxTypeError(
                f"linear_transpose: {name} is not linear in its inputs ({e}).") from None
        res = [as_output(zeros_for(a) if r is None else r) for r, a in zip(res, avals)]
        return tuple(tree.tree_unflatten(in_tree, res))
    return transposed


def block_until_ready(x):
    """``x`` itself: zerax computes eagerly on the CPU, so results are always ready."""
    return x


def device_put(x, device=None):
    """``x`` with every leaf as a zerax Array, on ``device`` (default: where it is; a
    NumPy value: the host CPU); traced values pass through, as under JAX.  ``device``
    may also be a `SingleDeviceSharding` (an array's ``.sharding``); anything else (a
    JAX sharding in ported code) is ignored.

    >>> import zerax as zx, numpy as np
    >>> zx.device_put(np.ones(2), zx.devices()[0]).device
    CpuDevice(id=0)
    """
    if isinstance(device, SingleDeviceSharding):
        device = next(iter(device.device_set))

    def put(v):
        v = as_input(v, "device_put argument")
        if not isinstance(device, Device) or isinstance(v, Tracer):
            return v
        return Array._wrap(_backends.device_put(v._value, device))
    return tree.tree_map(put, x)


def devices(backend=None):
    """The devices of ``backend`` (JAX's platform name, or a zerax backend name;
    default: the CPU devices of every process of the job, see `zerax.distributed`),
    e.g. ``[CpuDevice(id=0)]``."""
    if backend in (None, "cpu", "numba"):
        return distributed.global_devices()
    return _backends.devices(backend)


def device_count(backend=None) -> int:
    """The number of devices of ``backend`` (JAX's ``device_count``)."""
    return len(devices(backend))


def local_device_count(backend=None) -> int:
    """The number of this process's devices."""
    return len(local_devices(backend=backend))


def default_backend():
    """JAX's platform name of the backend jit compiles for (``"cpu"``)."""
    return _backends.platform_of(config.backend)


def device_get(x):
    """``x`` with every array leaf as a NumPy array on the host (JAX's
    ``jax.device_get``); other leaves (Python numbers, strings) are returned as they are.

    >>> import zerax as zx, zerax.numpy as znp
    >>> out = zx.device_get({"loss": znp.asarray(0.5), "step": 3})
    >>> type(out["loss"]).__name__, out["step"]
    ('ndarray', 3)
    """
    def get(v):
        if isinstance(v, Tracer):
            raise errors.ConcretizationError(
                "device_get of a traced value: it has no value while a transform traces "
                "the function. Return the value and call device_get on the result.")
        if isinstance(v, Array):
            return np.asarray(v._value)
        return v
    return tree.tree_map(get, x)


def local_devices(process_index=None, backend=None):
    """The devices of this process (of process ``process_index``).

    >>> import zerax as zx
    >>> zx.local_devices() == zx.devices()     # a job of one process
    True
    """
    if backend in (None, "cpu", "numba"):
        return distributed.local_devices(process_index)
    return _backends.devices(backend)


def process_index(backend=None) -> int:
    """This process's index among the processes of the program (JAX's
    ``jax.process_index``): its MPI rank under `zerax.distributed`, else 0.

    >>> import zerax as zx
    >>> zx.process_index()
    0
    """
    return distributed.world().rank


def process_count(backend=None) -> int:
    """The number of processes of the program (JAX's ``jax.process_count``): MPI's
    world size under `zerax.distributed`, else 1.

    >>> import zerax as zx
    >>> zx.process_count()
    1
    """
    return distributed.world().size


@contextlib.contextmanager
def default_device(device):
    """A context in which arrays are created on ``device`` (JAX's
    ``jax.default_device``); zerax has one host CPU device, where arrays are created
    anyway, so any device of `devices` is accepted and the context changes nothing.

    >>> import zerax as zx, zerax.numpy as znp
    >>> with zx.default_device(zx.devices()[0]):
    ...     float(znp.ones(2).sum())
    2.0
    """
    if device is not None and not isinstance(device, (Device, str)):
        raise errors.ZeraxTypeError(
            f"default_device takes a device of zerax.devices() (or None), got "
            f"{type(device).__name__}.")
    yield


@contextlib.contextmanager
def named_scope(name: str):
    """A context naming the operations traced inside it (JAX's ``jax.named_scope``, for
    profiles); zerax's programs keep no names, so it only checks ``name``.

    >>> import zerax as zx, zerax.numpy as znp
    >>> with zx.named_scope("layer1"):
    ...     float(znp.tanh(0.0))
    0.0
    """
    if not isinstance(name, str):
        raise errors.ZeraxTypeError(f"named_scope takes a string, got {type(name).__name__}.")
    yield


def named_call(fun, *, name=None):
    """``fun`` itself (JAX's ``jax.named_call``, which names its trace in profiles).

    >>> import zerax as zx, zerax.numpy as znp
    >>> float(zx.named_call(znp.sin, name="s")(0.0))
    0.0
    """
    if not callable(fun):
        raise errors.ZeraxTypeError(f"named_call takes a function, got {type(fun).__name__}.")
    return fun


@contextlib.contextmanager
def ensure_compile_time_eval():
    """JAX's ``jax.ensure_compile_time_eval``: operations on values that do not depend on
    the traced arguments run at once, giving concrete arrays (so ``int(...)`` of them
    works inside ``jit``). zerax already does this everywhere, so the context changes
    nothing.

    >>> import zerax as zx, zerax.numpy as znp
    >>> @zx.jit
    ... def f(x):
    ...     with zx.ensure_compile_time_eval():
    ...         n = int(znp.sum(znp.array([1, 2])))
    ...     return x * n
    >>> float(f(2.0))
    6.0
    """
    yield


@contextlib.contextmanager
def numpy_dtype_promotion(promotion: str):
    """JAX's ``jax.numpy_dtype_promotion`` context manager. zerax always promotes as
    NumPy 2 does (Python scalars weak, as in JAX), so ``"standard"``, JAX's default
    mode, changes nothing; ``"strict"`` (no implicit promotion at all) is not
    implemented and is an error rather than silently ignored.

    >>> import zerax as zx, zerax.numpy as znp
    >>> with zx.numpy_dtype_promotion("standard"):
    ...     (znp.ones(2, "float16") + znp.ones(2, "float32")).dtype
    dtype('float32')
    """
    if promotion == "strict":
        raise errors.NotSupportedError(
            "numpy_dtype_promotion('strict') is not implemented: zerax promotes as NumPy "
            "does; convert arrays explicitly (x.astype(dtype)) where you relied on strict "
            "mode's errors")
    if promotion != "standard":
        raise errors.ZeraxValueError(
            f"numpy_dtype_promotion takes 'standard' or 'strict', got {promotion!r}")
    yield
