"""NumPy's ``.npy``/``.npz`` files for zerax values (JAX's ``jnp.save``, ``jnp.savez``,
``jnp.load``): arrays are written with NumPy's own writers and read back as zerax
arrays.  Pickled objects are never loaded unless asked for (``allow_pickle``, NumPy's
default False).
"""

from __future__ import annotations

import numpy as np

from ..core.array import Array
from ..core.core import concrete_value

__all__ = ["load", "save", "savez"]


def _host(v):
    return np.asarray(concrete_value(v, "saving an array to a file")) \
        if isinstance(v, Array) or hasattr(v, "aval") else v


def save(file, arr, allow_pickle=True, fix_imports=True):
    """Write ``arr`` to ``file`` in NumPy's ``.npy`` format (NumPy's ``save``).

    >>> import io, zerax.numpy as znp
    >>> buf = io.BytesIO()
    >>> znp.save(buf, znp.arange(3.0))
    >>> _ = buf.seek(0)
    >>> znp.load(buf)
    Array([0., 1., 2.], dtype=float64)
    """
    del fix_imports
    np.save(file, _host(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds):
    """Write several arrays to one uncompressed ``.npz`` file (NumPy's ``savez``).

    >>> import io, zerax.numpy as znp
    >>> buf = io.BytesIO()
    >>> znp.savez(buf, w=znp.ones(2))
    >>> _ = buf.seek(0)
    >>> znp.load(buf)["w"]
    array([1., 1.])
    """
    np.savez(file, *[_host(a) for a in args], **{k: _host(v) for k, v in kwds.items()})


def load(file, *args, **kwargs):
    """Read ``file`` with NumPy's ``load``; a ``.npy`` array comes back as a zerax array
    (an ``.npz`` archive as NumPy's lazy mapping of NumPy arrays), as JAX's ``jnp.load``.

    >>> import io, zerax.numpy as znp
    >>> buf = io.BytesIO()
    >>> znp.save(buf, znp.ones((2, 2), dtype=znp.float32))
    >>> _ = buf.seek(0)
    >>> znp.load(buf).dtype
    dtype('float32')
    """
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray) and out.dtype != object:
        return Array._wrap(np.ascontiguousarray(out))
    return out
