"""`zerax.nn.Module`: networks as immutable pytrees, with Equinox's semantics.

Subclassing `Module` turns the class into a dataclass registered as a pytree: fields are
children (array fields are leaves), fields marked ``field(static=True)`` are part of the tree's
structure. A custom ``__init__`` assigns each field; after it returns the instance is frozen.
Methods looked up on an instance are `BoundMethod` pytrees, so ``filter_jit(model.f)`` and
``filter_grad`` see the model's arrays through a method. Modules are abstract base classes:
``abc.abstractmethod``, `AbstractVar` and `AbstractClassVar` are enforced at instantiation.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import inspect
import threading
import types
import warnings
import weakref
from typing import Any, Callable, ClassVar, Generic, TypeVar, get_args, get_origin

import zerax as zx
from .. import errors
from .. import tree_util as jtu

from ._filters import is_array, is_array_like, is_inexact_array_like
from ._tree import tree_equal, tree_pformat

__all__ = ["Module", "field", "static_field", "BoundMethod", "module_update_wrapper",
           "AbstractVar", "AbstractClassVar", "Partial"]

_T = TypeVar("_T")
_CALL_HOOK: list = [None]  # set by nn.summary to record module calls
_initialising = threading.local()  # ids of instances whose __init__ is running
# What `module_update_wrapper` copies (functools.WRAPPER_ASSIGNMENTS less __type_params__)
WRAPPER_FIELD_NAMES = ("__module__", "__name__", "__qualname__", "__doc__", "__annotations__")


def _init_ids() -> set:
    ids = getattr(_initialising, "ids", None)
    if ids is None:
        ids = _initialising.ids = set()
    return ids


class _Missing:
    """The value of a field that an instance does not hold in its ``__dict__`` (a field
    overridden by a property, or left to its class-level default by a custom
    ``__init__``): a pytree node without children, so it is neither a leaf nor lost."""

    def __bool__(self):
        return False

    def __repr__(self):
        return "Missing"


MISSING = _Missing()
jtu.register_pytree_node(_Missing, lambda _: ((), None), lambda _, __: MISSING)


def field(*, converter: Callable | None = None, static: bool = False, **kwargs: Any) -> Any:
    """A dataclass field of a `Module`, as ``equinox.field``.

    ``static=True`` makes the field part of the pytree's structure (not a leaf): use it for
    hyperparameters (sizes, strides); ``converter`` is applied to the value after
    ``__init__``. Other keywords (``default``, ``default_factory``, ``repr``, ``init``,
    ``metadata``...) are ``dataclasses.field``'s.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> class Scale(nn.Module):
    ...     factor: float = nn.field(static=True)
    ...     w: object = nn.field(converter=znp.asarray)
    >>> s = Scale(2.0, [1.0, 2.0])
    >>> len(zx.tree_util.tree_leaves(s)), s.w.shape
    (1, (2,))
    """
    metadata = dict(kwargs.pop("metadata", None) or {})
    if "converter" in metadata or "static" in metadata:
        raise errors.ZeraxValueError(
            "field(metadata=...) cannot hold 'converter' or 'static': pass them as "
            "field(converter=..., static=...)")
    if converter is not None:
        metadata["converter"] = converter
    if static:
        metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)


def static_field(**kwargs: Any) -> Any:
    """``field(static=True, ...)``: Equinox's older spelling, deprecated there in favour of
    ``field(static=True)`` (and so it warns here too).

    >>> import warnings, zerax.nn as nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     class A(nn.Module):
    ...         n: int = nn.static_field()
    >>> zx.tree_util.tree_leaves(A(3))
    []
    """
    warnings.warn("`zerax.nn.static_field` is deprecated in favour of "
                  "`zerax.nn.field(static=True)` (as `equinox.static_field`)", stacklevel=2)
    return field(static=True, **kwargs)


# ------------------------------------------------------------ abstract attributes
class AbstractVar(Generic[_T]):
    """Annotate ``name: AbstractVar[T]`` in an abstract module: every concrete subclass
    must provide ``name`` (a field, a class attribute or a property); instantiating one
    that does not is a ``TypeError`` (Equinox's ``AbstractVar``). It is not a field, so it
    takes no place among the ``__init__`` arguments.

    >>> import zerax.nn as nn
    >>> class Base(nn.Module):
    ...     size: nn.AbstractVar[int]
    >>> class Concrete(Base):
    ...     size: int
    >>> Concrete(3).size, sorted(Base.__abstractvars__)
    (3, ['size'])
    """


class AbstractClassVar(Generic[_T]):
    """``name: AbstractClassVar[T]``: a class attribute every concrete subclass must set
    (Equinox's ``AbstractClassVar``; ``ClassVar[T] = value`` or a plain class attribute
    provides it).

    >>> import zerax.nn as nn
    >>> class Base(nn.Module):
    ...     kind: nn.AbstractClassVar[str]
    >>> class Concrete(Base):
    ...     kind = "conv"
    >>> Concrete().kind
    'conv'
    """


def _process_annotation(annotation) -> tuple[bool, bool]:
    """(is_abstract, is_class_attribute) of one annotation, as Equinox reads them; string
    annotations (``from __future__ import annotations``) are read by their text."""
    if isinstance(annotation, str):
        text = annotation.replace(" ", "")
        for prefix in ("AbstractVar[", "AbstractClassVar["):
            if text.startswith(prefix) or f".{prefix}" in text.split("|")[0]:
                return True, prefix == "AbstractClassVar["
        return False, text.startswith(("ClassVar[", "typing.ClassVar["))
    if annotation in (AbstractVar, AbstractClassVar):
        raise errors.ZeraxTypeError(
            "Cannot use unsubscripted AbstractVar or AbstractClassVar: give the type, "
            "AbstractVar[int]")
    origin = get_origin(annotation)
    if origin is AbstractVar or origin is AbstractClassVar:
        if len(get_args(annotation)) != 1:
            raise errors.ZeraxTypeError(f"{origin.__name__} takes a single type argument")
        return True, origin is AbstractClassVar
    return False, origin is ClassVar


def _abstract_attributes(cls) -> tuple[frozenset, frozenset]:
    """Equinox's bookkeeping: an abstract annotation adds a name, a concrete annotation,
    a class attribute or a property of a subclass removes it."""
    abstract_vars: set = set()
    abstract_class_vars: set = set()
    for kls in reversed(cls.__mro__):
        for name, annotation in inspect.get_annotations(kls).items():
            is_abstract, is_class = _process_annotation(annotation)
            if is_abstract:
                if name in kls.__dict__:
                    raise errors.ZeraxTypeError(
                        f"Abstract attribute {kls.__name__}.{name} cannot have value: "
                        "give it its value in a subclass")
                if is_class:
                    abstract_vars.discard(name)
                    abstract_class_vars.add(name)
                elif name not in abstract_class_vars:
                    abstract_vars.add(name)
            else:
                abstract_class_vars.discard(name)
                if not is_class:
                    abstract_vars.discard(name)
        for name in kls.__dict__:
            abstract_vars.discard(name)
            abstract_class_vars.discard(name)
    return frozenset(abstract_vars), frozenset(abstract_class_vars)


# ------------------------------------------------------------ methods and transforms
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


_MSG_METHOD_IN_INIT = (
    "Cannot assign methods in __init__: {cls}.{name} = self.<method> makes the module "
    "contain itself (a bound method holds the module), which a pytree cannot. Use a "
    "property instead:\n    @property\n    def {name}(self):\n        return self.<method>")

_MSG_TRANSFORMED = (
    "Possibly assigning a JAX-transformed callable as an attribute on {cls}: a function "
    "returned by zerax.jit/grad/vmap/... is not a pytree, so the parameters of the model it "
    "wraps are invisible to transforms (no gradients, no updates). Apply the transform when "
    "calling (zerax.vmap(self.linear)(x)), or use the filtered transforms "
    "(nn.filter_vmap(...)), which return pytrees.")


@functools.lru_cache(maxsize=None)
def _transform_types() -> frozenset:
    """The types of what zerax's transforms return (built once, on first use)."""
    ident = lambda x: x  # noqa: E731
    return frozenset(type(t(ident)) for t in (
        zx.jit, zx.grad, zx.vmap, zx.value_and_grad, zx.jacfwd, zx.jacrev, zx.hessian,
        zx.custom_jvp, zx.custom_vjp, zx.checkpoint, zx.pmap))


def _warn_transformed(cls, x) -> None:
    """Equinox's warning for a transformed module stored as a field: the wrapped
    object holds arrays the transform hides."""
    if type(x) not in _transform_types():
        return
    while True:
        try:
            x = getattr(x, "__wrapped__")
        except AttributeError:
            return
        if any(is_array_like(leaf) for leaf in jtu.tree_leaves(x)):
            warnings.warn(_MSG_TRANSFORMED.format(cls=f"{cls.__module__}.{cls.__qualname__}"),
                          stacklevel=3)
            return


_MSG_INIT_AND_POST_INIT = (
    "Class `{cls.__module__}.{cls.__qualname__}` has both an `__init__` method and a "
    "`__post_init__` method, so `__post_init__` will not run (it belongs to the "
    "dataclass-generated __init__). To check invariants after any __init__, define "
    "`__check_init__` instead.")

_MSG_STATIC_ARRAY = ("A JAX array is being set as static! {cls}.{name} is a "
                     "field(static=True) holding an array: it becomes part of the tree "
                     "structure (hashed, compared, never traced). Make it a normal field.")

_MSG_INIT_FALSE = ("{cls}.{name} is a field(init=False) holding floating-point values: "
                   "they are leaves of the pytree, so gradients are taken with respect to "
                   "them and not to the fields they were computed from.")

_abstract_module_registry: weakref.WeakSet = weakref.WeakSet()


class _WrapperAttrs:
    """The `module_update_wrapper` attributes of an instance, in its treedef: compared
    whole, hashed by name (``__annotations__`` is a dict)."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = values

    def __eq__(self, other):
        return isinstance(other, _WrapperAttrs) and self.values == other.values

    def __hash__(self):
        return hash(self.values[1:3])   # __name__, __qualname__


def _flatten_functions(cls, dynamic: tuple, static: tuple, slotted: frozenset):
    """The pytree functions of a Module class: dynamic fields are children, static fields
    and the `module_update_wrapper` attributes (when present) are the auxiliary data."""
    nfields = len(dynamic) + len(static)
    wrapper = WRAPPER_FIELD_NAMES

    if slotted:   # a field stored in a __slots__ slot, not in __dict__ (rare): the slow way
        def get(obj, n):
            return getattr(obj, n, MISSING) if n in slotted else obj.__dict__.get(n, MISSING)
    else:
        def get(obj, n):
            return obj.__dict__.get(n, MISSING)

    def aux_of(x):
        d = x.__dict__
        extra = None if len(d) == nfields else _WrapperAttrs(
            tuple(d.get(k, MISSING) for k in wrapper))
        return (extra,) + tuple(get(x, n) for n in static)

    def flatten(x):
        return [get(x, n) for n in dynamic], aux_of(x)

    def flatten_with_keys(x):
        return [(jtu.GetAttrKey(n), get(x, n)) for n in dynamic], aux_of(x)

    def unflatten(aux, children):
        obj = object.__new__(cls)
        for n, v in zip(dynamic, children):
            if v is not MISSING:
                object.__setattr__(obj, n, v)
        extra = aux[0]
        if extra is not None:
            for n, v in zip(wrapper, extra.values):
                if v is not MISSING:
                    obj.__dict__[n] = v
        for n, v in zip(static, aux[1:]):
            if v is not MISSING:
                object.__setattr__(obj, n, v)
        return obj
    return flatten, flatten_with_keys, unflatten


def _has_dataclass_init(cls) -> bool:
    """Whether the dataclass writes ``cls.__init__`` (Equinox's rule): not when the class
    defines one, else as the nearest base (a non-Module base with its own ``__init__``
    counts as a custom one)."""
    if "__init__" in cls.__dict__:
        return False
    for kls in cls.__mro__[1:-1]:
        has = kls.__dict__.get("_zx_dataclass_init")
        if has is not None and "_zx_dataclass_init" in kls.__dict__:
            return has
        if kls.__init__ is not object.__init__:
            return False
    return True


class _ModuleMeta(abc.ABCMeta):
    def __new__(mcs, name, bases, ns, /, *, is_abstract: bool = False, strict: Any = False,
                **kwargs):
        del strict   # accepted as in Equinox 0.13, where it no longer does anything
        annotated = ns.get("__annotations__", {})
        for k, v in list(ns.items()):
            # Wrap plain functions so bound methods are pytrees (Equinox's semantics);
            # dunders other than __call__ stay plain (Python calls them itself), and a
            # function given as a field's default value is a value, not a method.
            if (isinstance(v, types.FunctionType) and k not in annotated and
                    (not (k.startswith("__") and k.endswith("__")) or k == "__call__")):
                ns[k] = _WrappedMethod(v)
        cls = super().__new__(mcs, name, bases, ns, **kwargs)
        if is_abstract:
            _abstract_module_registry.add(cls)
        cls.__abstractvars__, cls.__abstractclassvars__ = _abstract_attributes(cls)
        has_init = _has_dataclass_init(cls)
        cls._zx_dataclass_init = has_init
        if not has_init and hasattr(cls, "__post_init__"):
            warnings.warn(_MSG_INIT_AND_POST_INIT.format(cls=cls), stacklevel=2)
        init_doc = cls.__init__.__doc__ if has_init else None
        # abstract attributes are not fields: hide them from the dataclass machinery
        annotations = dict(cls.__dict__.get("__annotations__", {}))
        cls.__annotations__ = {k: v for k, v in annotations.items()
                               if not _process_annotation(v)[0]}
        cls = dataclasses.dataclass(cls, init=has_init, repr=False, eq=False)
        cls.__annotations__ = annotations
        fields = dataclasses.fields(cls)
        if has_init:
            cls.__init__.__doc__ = init_doc   # (dataclasses would set None)
            for f in fields:
                if "converter" in f.metadata and f.name in cls.__init__.__annotations__:
                    cls.__init__.__annotations__[f.name] = _converter_annotation(
                        f.metadata["converter"])
        cls._zx_fields = fields
        cls._zx_field_names = frozenset(f.name for f in fields)
        dynamic = tuple(f.name for f in fields if not f.metadata.get("static"))
        static = tuple(f.name for f in fields if f.metadata.get("static"))
        slotted = frozenset(f.name for f in fields if isinstance(
            inspect.getattr_static(cls, f.name, None), types.MemberDescriptorType))
        flat, flat_keys, unflat = _flatten_functions(cls, dynamic, static, slotted)
        jtu.register_pytree_with_keys(cls, flat_keys, unflat, flat)
        return cls

    @property
    def __signature__(cls):
        # What help(Cls) and inspect.signature(Cls) show: __init__'s arguments, as for a
        # dataclass (the metaclass's __call__ would otherwise hide them).
        sig = inspect.signature(cls.__init__)
        return sig.replace(parameters=list(sig.parameters.values())[1:])

    def __call__(cls, *args, **kwargs):
        if cls in _abstract_module_registry:
            raise errors.ZeraxTypeError(
                f"Can't instantiate abstract module {cls.__name__} (declared with "
                "is_abstract=True): instantiate a concrete subclass")
        for kind, names in (("abstract class attributes", cls.__abstractclassvars__),
                            ("abstract attributes", cls.__abstractvars__)):
            if names:   # (Equinox's wording, which programs match on)
                raise errors.ZeraxTypeError(
                    f"Can't instantiate abstract class {cls.__name__} with {kind} "
                    f"{', '.join(sorted(names))}: provide them in a subclass (as fields, "
                    "class attributes or properties)")
        if cls._zx_dataclass_init:
            for x in jtu.tree_leaves((args, kwargs)):
                _warn_transformed(cls, x)
        self = cls.__new__(cls)   # (abstract methods raise Python's TypeError here)
        ids = _init_ids()
        ids.add(id(self))
        try:
            cls.__init__(self, *args, **kwargs)
        finally:
            ids.discard(id(self))
        d = self.__dict__
        for f in cls._zx_fields:
            try:
                value = d[f.name] if f.name in d else getattr(self, f.name)
            except AttributeError:
                raise errors.ZeraxTypeError(
                    f"Field {f.name!r} was not initialized: {cls.__name__}.__init__ must "
                    f"assign self.{f.name} (or give the field a default).") from None
            conv = f.metadata.get("converter")
            if conv is not None:
                value = conv(value)
                object.__setattr__(self, f.name, value)
            if f.metadata.get("static") and any(is_array(v) for v in jtu.tree_leaves(value)):
                warnings.warn(_MSG_STATIC_ARRAY.format(cls=cls.__name__, name=f.name),
                              stacklevel=2)
            if not f.init and any(is_inexact_array_like(v) for v in jtu.tree_leaves(value)):
                warnings.warn(_MSG_INIT_FALSE.format(cls=cls.__name__, name=f.name),
                              stacklevel=2)
        for klass in cls.__mro__:
            check = klass.__dict__.get("__check_init__")
            if check is not None:
                check(self)
        return self


def _converter_annotation(converter) -> Any:
    """The annotation of a converted field in the generated ``__init__``: the type the
    converter takes (Equinox's), ``Any`` when it says none."""
    try:
        params = list(inspect.signature(converter).parameters.values())
    except (TypeError, ValueError):
        return Any
    if not params or params[0].annotation is inspect.Parameter.empty:
        return Any
    return params[0].annotation


class Module(metaclass=_ModuleMeta):
    """Base class of networks: a frozen dataclass that is a pytree (Equinox's ``Module``).

    Annotated class attributes are fields; array fields are leaves that every transform sees,
    ``field(static=True)`` fields are structure. Assign each field in ``__init__`` (or let the
    dataclass write ``__init__``); afterwards the instance is immutable: change a model with
    `tree_at`. A field a custom ``__init__`` leaves unset takes its default (or the
    property that overrides it); one without either is a ``TypeError``, as is assigning
    an attribute that is not a field. Subclasses may define ``__check_init__(self)`` to
    validate after ``__init__``. ``==`` is `tree_equal`, ``repr`` is `tree_pformat`.

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> class Affine(nn.Module):
    ...     w: zx.Array
    ...     b: zx.Array
    ...     def __call__(self, x):
    ...         return self.w * x + self.b
    >>> m = Affine(znp.asarray(2.0), znp.asarray(1.0))
    >>> float(m(3.0)), float(zx.grad(lambda m: m(3.0))(m).w)
    (7.0, 3.0)
    >>> m
    Affine(w=f64[], b=f64[])
    """

    def __setattr__(self, name, value):
        cls = type(self)
        if id(self) in _init_ids():
            if name in cls._zx_field_names or name in WRAPPER_FIELD_NAMES:
                if isinstance(value, BoundMethod) and value.__self__ is self:
                    raise errors.ZeraxValueError(
                        _MSG_METHOD_IN_INIT.format(cls=cls.__name__, name=name))
                _warn_transformed(cls, value)
                object.__setattr__(self, name, value)
                return
            raise errors.FrozenModuleError(
                f"cannot assign to {name!r} in {cls.__name__}.__init__: it is not a field. "
                f"Declare it in the class body (`{name}: <type>`), or keep it in a local "
                "variable")
        if name == "__orig_class__":
            # typing sets this on `Module[T]()` instances (and ignores the error below)
            object.__setattr__(self, name, value)
        raise errors.FrozenModuleError(
            f"cannot assign to field {name!r} of {cls.__name__}: modules are immutable "
            "after __init__. Build a changed copy with zerax.nn.tree_at(lambda m: m."
            f"{name}, model, new_value)")

    def __delattr__(self, name):
        raise errors.FrozenModuleError(
            f"cannot delete field {name!r} of {type(self).__name__}: modules are immutable")

    def __eq__(self, other):
        return tree_equal(self, other)

    def __hash__(self):
        leaves, treedef = jtu.tree_flatten(self)
        return hash((treedef, tuple(id(x) if is_array(x) else x for x in leaves)))

    def __repr__(self):
        return tree_pformat(self)


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
    >>> bm.__name__
    'f'
    """

    __func__: Callable = field(static=True)
    __self__: Module

    def __call__(self, *args, **kwargs):
        hook = _CALL_HOOK[0]
        if hook is not None and self.__func__.__name__ == "__call__":
            return hook(self, lambda: self.__func__(self.__self__, *args, **kwargs))
        return self.__func__(self.__self__, *args, **kwargs)

    def __getattr__(self, name):
        # __name__, __qualname__ (not found on instances) come from the function
        if name in WRAPPER_FIELD_NAMES:
            return getattr(self.__dict__["__func__"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def __wrapped__(self):
        return self.__func__.__get__(self.__self__, type(self.__self__))

    def __repr__(self):
        return f"<bound method {self.__func__.__qualname__} of {self.__self__!r}>"


# BoundMethod.__call__ must not itself be wrapped (it would recurse forever).
BoundMethod.__call__ = BoundMethod.__dict__["__call__"].fn


class Partial(Module):
    """``functools.partial`` as a pytree of its function and bound arguments (Equinox's
    ``Partial``: any callable, modules included, unlike ``jax.tree_util.Partial``).

    >>> import zerax.nn as nn, zerax.numpy as znp
    >>> p = nn.Partial(znp.add, znp.ones(2))
    >>> p(1.0), len(zx.tree_util.tree_leaves(nn.filter(p, nn.is_array)))
    (Array([2., 2.], dtype=float64), 1)
    """

    func: Callable
    args: tuple
    keywords: dict

    def __init__(self, func: Callable, /, *args: Any, **kwargs: Any):
        self.func = func
        self.args = args
        self.keywords = kwargs

    def __call__(self, *args, **kwargs):
        return self.func(*self.args, *args, **kwargs, **self.keywords)


def module_update_wrapper(wrapper: Module, wrapped: Callable | None = None) -> Module:
    """A copy of the wrapper module with ``__name__``, ``__doc__``... of ``wrapped`` (by
    default ``wrapper.__wrapped__``, which the wrapper class defines as a property), as
    Equinox's ``module_update_wrapper``; the attributes survive flattening.

    >>> import zerax.nn as nn
    >>> class Wrap(nn.Module):
    ...     fn: object
    ...     def __call__(self, *a):
    ...         return self.fn(*a)
    ...     @property
    ...     def __wrapped__(self):
    ...         return self.fn
    >>> def f(x):
    ...     "doc of f"
    >>> nn.module_update_wrapper(Wrap(f)).__doc__
    'doc of f'
    """
    if not isinstance(getattr(type(wrapper), "__wrapped__", None), property):
        raise errors.ZeraxValueError(
            f"module_update_wrapper: {type(wrapper).__name__} must define __wrapped__ as a "
            "property returning the wrapped callable")
    if wrapped is None:
        wrapped = wrapper.__wrapped__
    leaves, treedef = jtu.tree_flatten(wrapper)
    wrapper = jtu.tree_unflatten(treedef, leaves)   # a copy: the input is not modified
    for name in WRAPPER_FIELD_NAMES:
        try:
            value = getattr(wrapped, name)
        except AttributeError:
            continue
        wrapper.__dict__[name] = value
    return wrapper
