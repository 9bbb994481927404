"""`zerax.nn.Module`: networks as immutable pytrees, with Equinox's semantics.

Subclassing `Module` turns the class into a dataclass registered as a pytree: fields are
children (array fields are leaves), fields marked ``field(static=True)`` are part of the tree's
structure. A custom ``__init__`` assigns each field once; after it returns the instance is
frozen. Methods looked up on an instance are `BoundMethod` pytrees, so ``filter_jit(model.f)``
and ``filter_grad`` see the model's arrays through a method.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from typing import Any, Callable

import numpy as np

import zerax as zx
from .. import errors
from .. import tree_util as jtu

__all__ = ["Module", "field", "static_field", "BoundMethod", "module_update_wrapper"]

_MISSING = dataclasses.MISSING
_CALL_HOOK: list = [None]  # set by nn.summary to record module calls
_initialising = threading.local()  # ids of instances whose __init__ is running


def _init_ids() -> set:
    ids = getattr(_initialising, "ids", None)
    if ids is None:
        ids = _initialising.ids = set()
    return ids


def field(*, converter: Callable | None = None, static: bool = False, **kwargs: Any) -> Any:
    """A dataclass field of a `Module`, as ``equinox.field``.

    ``static=True`` makes the field part of the pytree's structure (not a leaf): use it for
    hyperparameters (sizes, strides); ``converter`` is applied to the value after
    ``__init__``. Other keywords (``default``, ``default_factory``, ``repr``...) are
    ``dataclasses.field``'s.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> class Scale(nn.Module):
    ...     factor: float = nn.field(static=True)
    ...     w: object = nn.field(converter=znp.asarray)
    >>> s = Scale(2.0, [1.0, 2.0])
    >>> len(zx.tree_util.tree_leaves(s)), s.w.shape
    (1, (2,))
    """
    metadata = dict(kwargs.pop("metadata", None) or {})
    if converter is not None:
        metadata["converter"] = converter
    if static:
        metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)


def static_field(**kwargs: Any) -> Any:
    """``field(static=True, ...)`` (Equinox's older spelling).

    >>> import zerax.nn as nn
    >>> class A(nn.Module):
    ...     n: int = nn.static_field()
    >>> zx.tree_util.tree_leaves(A(3))
    []
    """
    return field(static=True, **kwargs)


class _WrappedMethod:
    """A function in a Module's class body: looked up on an instance it gives a
    `BoundMethod` (a pytree holding the instance), on the class the plain function."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self.fn
        # Built directly (no __init__ bookkeeping): this runs on every method call.
        bm = object.__new__(BoundMethod)
        d = bm.__dict__
        d["__func__"] = self.fn
        d["__self__"] = instance
        return bm


def _flatten_with_keys(cls, dynamic, static):
    def flatten_with_keys(x):
        d = x.__dict__
        return ([(jtu.GetAttrKey(n), d.get(n)) for n in dynamic],
                tuple(d.get(n) for n in static))

    def unflatten(aux, children):
        obj = object.__new__(cls)
        d = obj.__dict__
        for n, v in zip(dynamic, children):
            d[n] = v
        for n, v in zip(static, aux):
            d[n] = v
        return obj
    return flatten_with_keys, unflatten


class _AbstractAnnotation:
    """``AbstractVar[T]`` / ``AbstractClassVar[T]``: an annotation naming an attribute a
    concrete subclass must provide (as a field, a class attribute or a property)."""

    def __init__(self, kind, tp):
        self.kind, self.tp = kind, tp

    def __repr__(self):
        return f"{self.kind}[{self.tp!r}]"


class AbstractVar:
    """Annotate ``name: AbstractVar[T]`` in an abstract module: every concrete subclass
    must provide ``name`` (a field, a class attribute or a property); instantiating one
    that does not is a ``TypeError`` (Equinox's ``AbstractVar``).

    >>> import zerax.nn as nn
    >>> class Base(nn.Module):
    ...     size: nn.AbstractVar[int]
    >>> class Concrete(Base):
    ...     size: int
    >>> Concrete(3).size
    3
    """

    def __class_getitem__(cls, tp):
        return _AbstractAnnotation("AbstractVar", tp)


class AbstractClassVar:
    """``name: AbstractClassVar[T]``: a class attribute every concrete subclass must set
    (Equinox's ``AbstractClassVar``).

    >>> import zerax.nn as nn
    >>> class Base(nn.Module):
    ...     kind: nn.AbstractClassVar[str]
    >>> class Concrete(Base):
    ...     kind = "conv"
    >>> Concrete().kind
    'conv'
    """

    def __class_getitem__(cls, tp):
        return _AbstractAnnotation("AbstractClassVar", tp)


def _is_abstract_annotation(v) -> bool:
    if isinstance(v, _AbstractAnnotation):
        return True
    # string annotations (``from __future__ import annotations``)
    return isinstance(v, str) and (v.startswith(("AbstractVar[", "AbstractClassVar["))
                                   or ".AbstractVar[" in v or ".AbstractClassVar[" in v)


class _ModuleMeta(type):
    def __new__(mcs, name, bases, ns, **kwargs):
        custom_init = "__init__" in ns
        annotated = ns.get("__annotations__", {})
        # abstract attributes are not fields: remember them, to check at instantiation
        abstract = {k for k, v in annotated.items() if _is_abstract_annotation(v)}
        if abstract:
            ns["__annotations__"] = {k: v for k, v in annotated.items() if k not in abstract}
            annotated = ns["__annotations__"]
        inherited_abstract = set()
        for b in bases:
            inherited_abstract |= set(getattr(b, "_zx_abstract", ()))
        for k, v in list(ns.items()):
            # Wrap plain functions so bound methods are pytrees (Equinox's semantics);
            # dunders other than __call__ stay plain (Python calls them itself), and a
            # function given as a field's default value is a value, not a method.
            if (isinstance(v, type(lambda: None)) and k not in annotated and
                    (not (k.startswith("__") and k.endswith("__")) or k == "__call__")):
                ns[k] = _WrappedMethod(v)
        cls = super().__new__(mcs, name, bases, ns, **kwargs)
        inherited = any(getattr(b, "_zx_custom_init", False) for b in bases)
        cls._zx_custom_init = custom_init or inherited
        cls = dataclasses.dataclass(cls, init=not cls._zx_custom_init, repr=False, eq=False)
        fields = dataclasses.fields(cls)
        provided = {f.name for f in fields} | {k for k in ns if k not in abstract}
        cls._zx_abstract = frozenset((inherited_abstract - provided) | abstract)
        cls._zx_dynamic = tuple(f.name for f in fields if not f.metadata.get("static"))
        cls._zx_static = tuple(f.name for f in fields if f.metadata.get("static"))
        cls._zx_converters = tuple((f.name, f.metadata["converter"]) for f in fields
                                   if "converter" in f.metadata)
        flat, unflat = _flatten_with_keys(cls, cls._zx_dynamic, cls._zx_static)
        jtu.register_pytree_with_keys(cls, flat, unflat)
        return cls

    def __call__(cls, *args, **kwargs):
        if cls._zx_abstract:
            raise TypeError(
                f"Can't instantiate abstract module {cls.__name__}: it does not provide "
                f"the abstract attribute(s) {', '.join(sorted(cls._zx_abstract))} "
                "(declare them as fields, class attributes or properties in a subclass).")
        self = cls.__new__(cls)
        ids = _init_ids()
        ids.add(id(self))
        try:
            cls.__init__(self, *args, **kwargs)
            missing = [f.name for f in dataclasses.fields(cls) if f.name not in self.__dict__]
            if missing:
                raise errors.ZeraxValueError(
                    f"{cls.__name__}.__init__ did not set the field(s) {', '.join(missing)}: "
                    "assign every field (self.name = value) in __init__, or give it a default")
            for name, conv in cls._zx_converters:
                self.__dict__[name] = conv(self.__dict__[name])
        finally:
            ids.discard(id(self))
        for klass in cls.__mro__:
            check = klass.__dict__.get("__check_init__")
            if check is not None:
                check(self)
        return self


class Module(metaclass=_ModuleMeta):
    """Base class of networks: a frozen dataclass that is a pytree (Equinox's ``Module``).

    Annotated class attributes are fields; array fields are leaves that every transform sees,
    ``field(static=True)`` fields are structure. Assign each field in ``__init__`` (or let the
    dataclass write ``__init__``); afterwards the instance is immutable: change a model with
    `tree_at`. Subclasses may define ``__check_init__(self)`` to validate after ``__init__``.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> class Affine(nn.Module):
    ...     w: zx.Array
    ...     b: zx.Array
    ...     def __call__(self, x):
    ...         return self.w * x + self.b
    >>> m = Affine(znp.asarray(2.0), znp.asarray(1.0))
    >>> float(m(3.0)), float(zx.grad(lambda m: m(3.0))(m).w)
    (7.0, 3.0)
    """

    def __setattr__(self, name, value):
        if id(self) in _init_ids():
            object.__setattr__(self, name, value)
            return
        raise errors.FrozenModuleError(
            f"cannot assign to field {name!r} of {type(self).__name__}: modules are immutable "
            "after __init__. Build a changed copy with zerax.nn.tree_at(lambda m: m."
            f"{name}, model, new_value)")

    def __delattr__(self, name):
        raise errors.FrozenModuleError(
            f"cannot delete field {name!r} of {type(self).__name__}: modules are immutable")

    def __eq__(self, other):
        if type(self) is not type(other):
            return NotImplemented
        la, ta = jtu.tree_flatten(self)
        lb, tb = jtu.tree_flatten(other)
        if ta != tb:
            return False
        for a, b in zip(la, lb):
            if a is b:
                continue
            if _is_arr(a) or _is_arr(b):
                if not (_is_arr(a) and _is_arr(b)):
                    return False
                if a.shape != b.shape or a.dtype != b.dtype:
                    return False
                try:
                    if not np.array_equal(np.asarray(a), np.asarray(b)):
                        return False
                except Exception:
                    return False
            elif a != b:
                return False
        return True

    def __hash__(self):
        leaves, treedef = jtu.tree_flatten(self)
        return hash((treedef, tuple(id(x) if _is_arr(x) else x for x in leaves)))

    def __repr__(self):
        parts = []
        for f in dataclasses.fields(self):
            if not f.repr:
                continue
            v = self.__dict__.get(f.name, "<unset>")
            parts.append(f"{f.name}={_short(v)}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _is_arr(x) -> bool:
    return isinstance(x, (zx.Array, np.ndarray, np.generic)) or (
        hasattr(x, "aval") and hasattr(x, "shape") and hasattr(x, "dtype"))


_SHORT_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "int32": "i32",
                 "int64": "i64", "bool": "bool", "uint32": "u32", "complex64": "c64",
                 "complex128": "c128", "uint8": "u8", "int8": "i8"}


def _short(v) -> str:
    if _is_arr(v) and not isinstance(v, np.generic):
        dt = np.dtype(v.dtype).name
        return f"{_SHORT_DTYPES.get(dt, dt)}[{','.join(str(d) for d in v.shape)}]"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_short(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    if callable(v) and not isinstance(v, Module) and hasattr(v, "__name__"):
        return f"<function {v.__name__}>"
    return repr(v)


class BoundMethod(Module):
    """A method bound to a module, as a pytree whose child is the module (Equinox's
    ``BoundMethod``), so transforms of ``model.method`` see the model's arrays.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> class A(nn.Module):
    ...     w: zx.Array
    ...     def f(self, x):
    ...         return self.w * x
    >>> bm = A(znp.asarray(2.0)).f
    >>> isinstance(bm, nn.BoundMethod), len(zx.tree_util.tree_leaves(bm)), float(bm(3.0))
    (True, 1, 6.0)
    """

    __func__: Callable = field(static=True)
    __self__: Module

    def __call__(self, *args, **kwargs):
        hook = _CALL_HOOK[0]
        if hook is not None and self.__func__.__name__ == "__call__":
            return hook(self, lambda: self.__func__(self.__self__, *args, **kwargs))
        return self.__func__(self.__self__, *args, **kwargs)

    @property
    def __wrapped__(self):
        return self.__func__.__get__(self.__self__, type(self.__self__))

    def __repr__(self):
        return f"<bound method {self.__func__.__qualname__} of {self.__self__!r}>"


# BoundMethod.__call__ must not itself be wrapped (it would recurse forever).
BoundMethod.__call__ = BoundMethod.__dict__["__call__"].fn


def module_update_wrapper(wrapper: Module, wrapped: Callable | None = None) -> Module:
    """Copy ``__name__``/``__doc__``... of ``wrapped`` onto a wrapper module (Equinox's
    ``module_update_wrapper``); returns the wrapper.

    >>> import zerax.nn as nn
    >>> def f(x):
    ...     "doc of f"
    >>> nn.module_update_wrapper(nn.Lambda(f), f).__doc__
    'doc of f'
    """
    if wrapped is None:
        wrapped = getattr(wrapper, "__wrapped__")
    for attr in functools.WRAPPER_ASSIGNMENTS:
        try:
            object.__setattr__(wrapper, attr, getattr(wrapped, attr))
        except AttributeError:
            pass
    return wrapper
