"""`zerax.Array`: the immutable concrete array.

An Array wraps a read-only NumPy ndarray.  It never changes: item assignment raises
an error pointing to ``x.at[idx].set(v)``, which returns a new Array.  Operators and
methods come from `ArrayMethods`, shared with tracers.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from .avals import ShapedArray



class Device:
    """One device a backend computes on (JAX's ``Device``: ``id``, ``platform``,
    ``process_index``: the process of a `zerax.distributed` job that holds it)."""

    __slots__ = ("id", "platform", "device_kind", "backend", "process_index")

    def __init__(self, backend: str, platform: str, id: int = 0, device_kind: str = "",
                 process_index: int = 0):
        self.backend, self.platform, self.id = backend, platform, id
        self.device_kind = device_kind or platform
        self.process_index = process_index

    def __repr__(self):
        return f"{self.platform.capitalize()}Device(id={self.id})"


# The device of every NumPy buffer: the host CPU (where the CPU backend, named "numba",
# computes).
CPU = Device("numba", "cpu")


class SingleDeviceSharding:
    """JAX's ``jax.sharding.SingleDeviceSharding``: the whole array on one device (every
    zerax array's ``.sharding``).  Ported code reads its ``device_set`` or passes it to
    `zerax.device_put`.

    >>> import zerax.numpy as znp
    >>> s = znp.ones(3).sharding
    >>> s.device_set, s.is_fully_replicated, s.shard_shape((3,))
    ({CpuDevice(id=0)}, True, (3,))
    """

    __slots__ = ("_device", "memory_kind")

    def __init__(self, device: Device, *, memory_kind: str | None = None):
        if not isinstance(device, Device):
            raise errors.ZeraxTypeError(
                f"SingleDeviceSharding takes a zerax Device (zerax.devices()[0]), got "
                f"{device!r}")
        self._device, self.memory_kind = device, memory_kind

    @property
    def device_set(self) -> set:
        return {self._device}

    @property
    def addressable_devices(self) -> set:
        return {self._device}

    is_fully_replicated = True
    is_fully_addressable = True
    num_devices = 1

    def shard_shape(self, global_shape) -> tuple:
        """The shape of the one shard: the whole array's."""
        return tuple(global_shape)

    def devices_indices_map(self, global_shape) -> dict:
        """Each device and the index of the array it holds: all of it."""
        return {self._device: (slice(None),) * len(tuple(global_shape))}

    def __eq__(self, other):
        return (isinstance(other, SingleDeviceSharding) and other._device is self._device
                and other.memory_kind == self.memory_kind)

    def __hash__(self):
        return hash((SingleDeviceSharding, id(self._device), self.memory_kind))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r})"

class Shard:
    """JAX's ``jax.Shard``: one device's block of an array: its ``device``, the
    ``index`` (a tuple of slices) of the block in the whole array, ``replica_id`` (0 for
    the first of the devices holding the same block) and the block itself (``data``)."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data=<{self.data.dtype}{list(self.data.shape)}>)")


# Buffers that are not NumPy arrays (a GPU backend's arrays) belong to the backend that
# made them: buffer type -> that backend (a `backends.base.Backend`).  The backends
# layer, above this one, fills the table when it loads such a backend
# (`register_buffer_type`); this layer only asks it, so that an Array knows its device
# and eager primitives on its buffers run on its backend (`core.eval_primitive`).  Empty
# while every buffer is NumPy's, which the fast paths check first.
device_buffers: dict[type, object] = {}


def register_buffer_type(cls: type, backend) -> None:
    """Route buffers of type ``cls`` to ``backend`` (its ``device_of``, ``to_host`` and
    ``apply``)."""
    device_buffers[cls] = backend


def unregister_buffer_type(cls: type) -> None:
    device_buffers.pop(cls, None)


def host_value(v) -> np.ndarray:
    """The NumPy array of buffer ``v`` (a device buffer is copied to the host)."""
    if type(v) is np.ndarray:
        return v
    owner = device_buffers.get(type(v))
    return np.asarray(v) if owner is None else owner.to_host(v)


class ArrayMethods:
    """The base of `Array` and every `Tracer`: the conversions that need only a concrete
    value.  NumPy's operators and methods (``+``, ``x[i]``, ``x.at``, ``x.sum()``) are
    installed on this class by the NumPy layer when it is imported
    (``numpy/array_methods.py``), so this layer does not import the layers above it."""

    __slots__ = ()
    _weak_type = None        # (set on the tracers of a jit trace only; see Tracer)
    __hash__ = None          # arrays compare elementwise, so they are not hashable

    def _concrete(self, what):  # the ndarray behind self (tracers override to_concrete)
        x = self
        while not isinstance(x, Array):
            if not hasattr(x, "to_concrete"):
                return np.asarray(x)
            x = x.to_concrete(what)
        return x._value

    def __bool__(self):
        return bool(self._concrete("bool()"))

    def __int__(self):
        return int(self._concrete("int()"))

    def __float__(self):
        return float(self._concrete("float()"))

    def __complex__(self):
        return complex(self._concrete("complex()"))

    def __index__(self):
        return int(self._concrete("__index__()").__index__())

    def item(self, *args):
        return self._concrete(".item()").item(*args)

    def tolist(self):
        return self._concrete(".tolist()").tolist()

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]


class Array(ArrayMethods):
    """An immutable n-dimensional array.

    >>> import zerax.numpy as znp
    >>> x = znp.array([1.0, 2.0, 3.0])
    >>> (x * 2).sum()
    Array(12., dtype=float64)
    >>> x.at[0].set(10.0)
    Array([10.,  2.,  3.], dtype=float64)
    """

    __slots__ = ("_value",)
    # No __array_ufunc__, as JAX's arrays: NumPy's ufuncs convert a zerax value with
    # __array__ (np.sin(x) is a NumPy array), while the priority makes ndarray operators
    # defer to zerax's (ndarray + x is a zerax Array).
    __array_priority__ = 100

    def __init__(self, value):
        self._value = np.array(value)  # a private copy: the caller's may change later
        if not self._value.dtype.isnative:  # big-endian data: converted once, on entry
            self._value = self._value.astype(self._value.dtype.newbyteorder("="))

    @staticmethod
    def _wrap(value) -> "Array":
        """Wrap a freshly computed ndarray without copying (nobody else may hold it).

        The buffer stays private: it is only handed out as a read-only view
        (``__array__``), so it is never mutated and need not be flagged read-only here."""
        if type(value) is np.ndarray:
            a = object.__new__(Array)
            a._value = value
        elif type(value) in device_buffers:
            a = object.__new__(DeviceArray)
            a._value = value
        else:
            a = object.__new__(Array)
            a._value = np.asarray(value)
        return a

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    nbytes = property(lambda self: self._value.nbytes)
    itemsize = property(lambda self: self._value.itemsize)

    @property
    def aval(self):
        return ShapedArray(self._value.shape, self._value.dtype)

    def __array__(self, dtype=None, copy=None):
        v = self._value
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        if copy:
            return v.copy()
        view = v.view()
        view.flags.writeable = False  # the Array is immutable: hand out a read-only view
        return view

    def __len__(self):
        return len(self._value)

    def __setitem__(self, idx, value):
        raise errors.ImmutableArrayError(
            "zerax Arrays are immutable: item assignment is not supported. "
            "Use x = x.at[idx].set(value) (or .add, .multiply, .min, .max), which "
            "returns an updated copy.")

    def __repr__(self):
        body = np.array2string(np.asarray(self), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self._value.dtype.name})"

    def __str__(self):
        return str(np.asarray(self))

    def __format__(self, spec):
        if self._value.ndim == 0:
            return format(self._value.item(), spec)
        return format(str(self), spec)

    def __bool__(self):
        return bool(self._value)

    def __float__(self):
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __index__(self):
        return self._value.__index__()

    def item(self, *args):
        return self._value.item(*args)

    def tolist(self):
        return self._value.tolist()

    def __reduce__(self):
        return (Array, (np.array(self),))

    __hash__ = None

    @property
    def device(self) -> Device:
        """The device holding this array's buffer (NumPy buffers: the host CPU)."""
        return CPU

    def devices(self) -> set:
        """JAX's ``Array.devices()``: the set of devices holding the array."""
        return {self.device}

    @property
    def sharding(self) -> SingleDeviceSharding:
        """JAX's ``Array.sharding``: how the array lies on devices (all of it on one)."""
        return SingleDeviceSharding(self.device)

    @property
    def addressable_shards(self) -> list:
        """JAX's ``Array.addressable_shards``: the blocks this process's devices hold
        (for an array whole in this process: one, all of it)."""
        return [Shard(self.device, (slice(None),) * self.ndim, 0, self)]

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process holds all of the array."""
        return True

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holding the array holds all of it."""
        return self.sharding.is_fully_replicated

    def block_until_ready(self):
        """Arrays are computed eagerly; present for JAX compatibility."""
        return self


class DeviceArray(Array):
    """An `Array` whose buffer is a device's (one of `device_buffers`' types), made by
    `Array._wrap`.  Its own class keeps it off the NumPy layer's eager fast paths (they
    test ``type(x) is Array`` and call NumPy directly): it takes the general path,
    ``bind``, whose eager step runs on its backend.  Conversions to Python and NumPy
    values copy the buffer to the host."""

    __slots__ = ()

    @property
    def device(self) -> Device:
        v = self._value
        return device_buffers[type(v)].device_of(v)

    def _owner(self, what):
        v = self._value
        fn = getattr(device_buffers[type(v)], what, None)
        return None if fn is None else (lambda: fn(v))

    @property
    def sharding(self):
        get = self._owner("sharding_of")
        return SingleDeviceSharding(self.device) if get is None else get()

    @property
    def addressable_shards(self) -> list:
        get = self._owner("addressable_shards")
        return Array.addressable_shards.fget(self) if get is None else get()

    @property
    def is_fully_addressable(self) -> bool:
        get = self._owner("fully_addressable")
        return True if get is None else get()

    def __array__(self, dtype=None, copy=None):
        v = host_value(self._value)
        return v if dtype is None or np.dtype(dtype) == v.dtype else v.astype(dtype)

    def __len__(self):
        return self.shape[0] if self.shape else len(np.asarray(self))

    def __bool__(self):
        return bool(np.asarray(self))

    def __float__(self):
        return float(np.asarray(self))

    def __int__(self):
        return int(np.asarray(self))

    def __index__(self):
        return np.asarray(self).__index__()

    def __format__(self, spec):
        return format(np.asarray(self).item() if self.ndim == 0 else str(self), spec)

    def item(self, *args):
        return np.asarray(self).item(*args)

    def tolist(self):
        return np.asarray(self).tolist()
