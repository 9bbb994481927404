"""The Python array API standard's own parts of `zerax.numpy` (the namespace NumPy 2,
CuPy, JAX and PyTorch speak, and that libraries such as SciPy, scikit-learn and einops
consume through ``x.__array_namespace__()``): the version, the inspection namespace
(`__array_namespace_info__`: capabilities, devices, default and supported dtypes), the
array methods ``__array_namespace__`` and ``to_device``, and DLPack (``__dlpack__``,
``__dlpack_device__``, `from_dlpack`).

zerax arrays are immutable, so a DLPack export never hands out writable memory: to a
consumer that can be told a buffer is read-only (DLPack 1.0, ``max_version >= (1, 0)``)
the buffer is lent read-only; to an older one a copy is exported (``copy=False``
refuses with a BufferError).  `from_dlpack` copies the producer's memory unless
``copy=False`` asks to share it.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.array import CPU, Array, ArrayMethods

__all__ = ["__array_api_version__", "__array_namespace_info__", "from_dlpack"]

__array_api_version__ = "2024.12"
_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")
_namespace: list = [None]    # the public namespace (zerax.numpy), set by that module


def set_namespace(module) -> None:
    """Make ``module`` (the public ``zerax.numpy``) what ``x.__array_namespace__()``
    returns; the face calls this once, as it is imported."""
    _namespace[0] = module


def _array_namespace(self, /, *, api_version=None):
    """The array API namespace of this array: ``zerax.numpy``."""
    if api_version is not None and api_version not in _VERSIONS:
        raise errors.ZeraxValueError(
            f"__array_namespace__: api_version={api_version!r} is not one zerax speaks; "
            f"it implements {', '.join(_VERSIONS)} (the latest, {__array_api_version__}, "
            "with api_version=None)")
    return _namespace[0]


def _check_device(device, where):
    if device is not None and device != CPU and device != "cpu":
        raise errors.ZeraxValueError(
            f"{where}: device {device!r} is not one zerax computes on here; the only "
            f"device is {CPU!r} (zerax.numpy.__array_namespace_info__().devices())")


def _to_device(self, device, /, *, stream=None):
    """The array on ``device``: itself, as every zerax array is on the one device."""
    _check_device(device, "to_device")
    if stream is not None:
        raise errors.ZeraxValueError("to_device: the CPU has no streams; pass stream=None")
    return self


def _dlpack(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """DLPack export of the array's buffer (read-only: see the module's docstring)."""
    if stream is not None:
        raise BufferError("__dlpack__: the CPU has no streams; pass stream=None")
    if dl_device is not None and tuple(dl_device) != (1, 0):
        raise BufferError(f"__dlpack__: zerax arrays are on the CPU, (1, 0), not {dl_device}")
    value = np.asarray(self)                     # a read-only view of the buffer
    if copy or max_version is None or tuple(max_version) < (1, 0):
        if copy is False:
            raise BufferError(
                "__dlpack__: a consumer of DLPack before 1.0 cannot be told the buffer is "
                "read-only, and zerax arrays are immutable: allow a copy (copy=None)")
        value = np.array(value)                  # a writable copy the consumer owns
    kwargs = {} if max_version is None else {"max_version": max_version}
    return value.__dlpack__(**kwargs)


def _dlpack_device(self, /):
    """``(1, 0)``: DLPack's CPU device, number 0."""
    return (1, 0)


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from any object that implements DLPack (a NumPy, PyTorch or CuPy array
    on the CPU, another zerax array): a copy, or the producer's memory with
    ``copy=False`` (then the producer must not change it).

    >>> import numpy as np, zerax.numpy as znp
    >>> znp.from_dlpack(np.arange(3.0))
    Array([0., 1., 2.], dtype=float64)
    """
    _check_device(device, "from_dlpack")
    if isinstance(x, Array):
        return x
    try:
        value = np.from_dlpack(x, copy=False if copy is False else None)
    except (TypeError, AttributeError) as e:
        raise errors.ZeraxTypeError(
            f"from_dlpack: {type(x).__name__} does not implement the DLPack protocol "
            "(__dlpack__ and __dlpack_device__)") from e
    return Array._wrap(value) if copy is False else Array(value)


class ArrayNamespaceInfo:
    """What `__array_namespace_info__` returns: zerax's capabilities, devices and
    dtypes, as the array API standard's inspection functions describe them.

    >>> import zerax.numpy as znp
    >>> info = znp.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"], info.devices()
    (dtype('float64'), [CpuDevice(id=0)])
    """

    _KINDS = {
        "bool": ("bool",),
        "signed integer": ("int8", "int16", "int32", "int64"),
        "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
        "real floating": ("float32", "float64"),
        "complex floating": ("complex64", "complex128"),
    }
    _KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
    _KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + \
        _KINDS["complex floating"]

    def capabilities(self):
        """Boolean indexing and data-dependent shapes (``nonzero``, ``unique_*``) work on
        concrete arrays, as NumPy's (under ``jit`` they need a static size)."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self):
        return CPU

    def devices(self):
        return [CPU]

    def default_dtypes(self, *, device=None):
        _check_device(device, "default_dtypes")
        return {"real floating": dtypes.default_float(),      # (the mode's: float32,
                "complex floating": dtypes.default_complex(),  # int32 with x64 off)
                "integral": dtypes.default_int(), "indexing": dtypes.default_int()}

    def dtypes(self, *, device=None, kind=None):
        """The supported dtypes by name, all or of ``kind`` (a kind name, a dtype, or a
        tuple of them)."""
        _check_device(device, "dtypes")
        names = self._KINDS["bool"] + self._KINDS["numeric"]
        if kind is not None:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            chosen = set()
            for k in kinds:
                if isinstance(k, str):
                    if k not in self._KINDS:
                        raise errors.ZeraxValueError(
                            f"dtypes: unknown kind {k!r}; use one of "
                            f"{', '.join(sorted(self._KINDS))}, or a dtype")
                    chosen.update(self._KINDS[k])
                else:
                    chosen.add(np.dtype(k).name)
            names = tuple(n for n in names if n in chosen)
        return {n: np.dtype(n) for n in names}


def __array_namespace_info__():
    """The array API standard's inspection namespace (see `ArrayNamespaceInfo`)."""
    return ArrayNamespaceInfo()


def install_array_api_methods() -> None:
    """The array API methods: ``__array_namespace__`` and ``to_device`` on every array
    and traced value, DLPack on concrete arrays."""
    ArrayMethods.__array_namespace__ = _array_namespace
    ArrayMethods.to_device = _to_device
    Array.__dlpack__ = _dlpack
    Array.__dlpack_device__ = _dlpack_device


