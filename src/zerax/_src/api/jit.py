"""`jit`: trace a function once per signature into the IR and compile it.

A signature is the tree structure, shapes and dtypes of the array arguments plus the
values of the static ones.  Called with concrete arrays, a jitted function runs the
compiled program; called inside another transform, it binds the call primitive
``jit`` (whose JVP, transpose and batching rules produce jitted programs in turn), so
``grad(jit(f))``, ``vmap(jit(f))`` and nested ``jit`` work.
"""

from __future__ import annotations

import functools
import threading
import types
import weakref
from contextlib import contextmanager

import numpy as np

from ... import errors
from ..backends import backend_for, get_backend
from ..base import dtypes
from ..base.config import config
from ..base.gc_pause import gc_paused
from ..core import tree
from ..core.api_util import OutTree, as_input, flatten_fun
from ..core.array import Array
from ..core.core import Tracer, bind, get_aval, named_axis_env, process_axis_env
from ..ir.ir import Var
from ..ir.tracing import fun_name, trace_closed
from ..ops.call import jit_p
from ..ops.debug_nans import check_jit_outputs, nan_checks
from ..ops.sharding import sharding_constraint_p
from . import sharded as _sharded
from .partition import partition
from .planner import partitioned_cost, plan_program
from .sharding import PartitionSpec
from .extras import ShapeDtypeStruct


@contextmanager
def disable_jit(disable: bool = True):
    """Run jitted functions eagerly (op by op) inside this block, for debugging."""
    old = config.jit_disabled
    config.jit_disabled = disable
    try:
        yield
    finally:
        config.jit_disabled = old


# --------------------------------------------------------------------------- executables

_exec_lock = threading.Lock()


def executable_for(jaxpr, name="jit", args=(), fast_math=False):
    """The compiled program of ``jaxpr`` for the backend of ``args``' devices (see
    `backends.backend_for`), compiled once per program, backend and ``fast_math``."""
    backend = backend_for(args)
    exe = getattr(jaxpr, "_executable", None)
    if exe is None or exe[0] is not backend or exe[1] != fast_math:
        with _exec_lock:
            exe = getattr(jaxpr, "_executable", None)
            if exe is None or exe[0] is not backend or exe[1] != fast_math:
                compiled = backend.compile(jaxpr, name, fast_math=fast_math) if fast_math \
                    else backend.compile(jaxpr, name)
                exe = (backend, fast_math, compiled)
                jaxpr._executable = exe
    return exe[2]


def _contiguous(v):
    return v if v.flags.c_contiguous else np.ascontiguousarray(v)


def _jit_impl(*args, jaxpr, name):
    mesh = _sharded.program_mesh(jaxpr, args, (), what=name)
    if mesh is not None:   # sharding constraints inside: the program runs partitioned
        pt, blocks = _sharded.prepare_call(jaxpr, args, [None] * len(args), mesh, name)
        outs = _run_partitioned(pt, blocks)
        return [o._value for o in outs]
    exe = executable_for(jaxpr, name, args)
    return list(exe.run(*[_contiguous(np.asarray(a)) for a in args]))


def _run_partitioned(pt, blocks) -> list:
    """This process's part of a partitioned program's results, as zerax Arrays."""
    exe = executable_for(pt.jaxpr, pt.name)
    vals = [_contiguous(np.asarray(c._value if type(c) is Array else c)) for c in pt.consts]
    vals += [_contiguous(np.asarray(b)) for b in blocks]
    return _sharded.call_outputs(pt, exe.run(*vals))


jit_p.impl = _jit_impl  # the compiled implementation of the call primitive (ops/call.py)


# --------------------------------------------------------------------------- the API


class Lowered:
    """``jit(f).lower(*args)``: the traced program and its compiled forms; for a
    program partitioned over a mesh (``partitioned``), the program of this process,
    collectives included."""

    def __init__(self, jaxpr, consts, out_tree, name, in_tree, partitioned=None, plan=None,
                 shardings=None):
        self.jaxpr, self.consts, self.out_tree, self.name = jaxpr, consts, out_tree, name
        self.in_tree = in_tree
        # a partitioned program, the planner's choice, each input's sharding
        self.partitioned, self.plan, self.shardings = partitioned, plan, shardings

    def as_text(self, dialect=None) -> str:
        """The compiled form of the program, readable: the kernel IR (its kernels, and
        the host steps between them); ``dialect="llvm"``: the LLVM IR the CPU emitter
        writes for it.  For a program partitioned over a
        mesh: this process's program (its inputs' and outputs' specs, then its
        equations, with the collectives the partitioning inserted); ``"kernel"`` or
        ``"llvm"`` then show the compiled forms of that program.

        >>> import numpy as np, zerax as zx
        >>> print(zx.jit(lambda x: x * 2.0).lower(np.ones(3)).as_text())
        kernel kernel(in0:f64[3]) -> (out0:f64[3])
          for each i0 in 0:i64..3:i64:
            x0:f64 = mul(in0[i0], 2.0:f64)
            out0[i0] = x0
        """
        if dialect not in (None, "kernel", "llvm"):
            raise errors.ZeraxValueError(
                f"as_text: dialect must be None, 'kernel' or 'llvm', got {dialect!r}")
        if self.partitioned is not None and dialect is None:
            return self.partitioned.text()
        jaxpr = self.jaxpr if self.partitioned is None else self.partitioned.jaxpr
        return get_backend().source(jaxpr, dialect="llvm" if dialect == "llvm" else None,
                                    name=self.name)

    def cost(self, cost_model=None):
        """The modelled cost (api/planner.py's model: time per step, communication,
        memory per device) of a partitioned program, with ``cost_model``'s rates
        (default: measured on the mesh)."""
        if self.partitioned is None:
            raise errors.ZeraxValueError(f"{self.name} is not partitioned: cost() models "
                                         "programs with shardings over a mesh")
        return partitioned_cost(self.partitioned, cost_model)

    def sharding_plan(self) -> str:
        """What the planner chose (``jit(..., in_shardings="auto")``): each input's
        sharding with its modelled cost and the alternatives it beat."""
        if self.plan is None:
            raise errors.ZeraxValueError(
                f"{self.name} was not planned: sharding_plan() describes the choice of "
                "jit(..., in_shardings='auto', mesh=...)")
        return self.plan.describe()

    def compile(self) -> Compiled:
        """Compile now; the result is called with the non-static arguments only."""
        jaxpr = self.jaxpr if self.partitioned is None else self.partitioned.jaxpr
        return Compiled(self, executable_for(jaxpr, self.name))


class Compiled:
    """``jit(f).lower(*args).compile()``: the native program for exactly the lowered
    signature. Call it with the same non-static arguments (same tree, shapes, dtypes).

    >>> import zerax as zx, zerax.numpy as znp
    >>> c = zx.jit(lambda x, k: x * k, static_argnums=1).lower(znp.ones(2), 3).compile()
    >>> c(znp.arange(2.0))
    Array([0., 3.], dtype=float64)
    """

    def __init__(self, lowered, executable):
        self.lowered, self._exe = lowered, executable
        self._expected = [(v.aval.shape, v.aval.dtype)
                          for v in lowered.jaxpr.invars[len(lowered.consts):]]

    def as_text(self, dialect=None) -> str:
        return self.lowered.as_text(dialect)

    def __call__(self, *args, **kwargs):
        low = self.lowered
        leaves, in_tree = tree.tree_flatten((list(args), kwargs))
        leaves = [as_input(x, f"argument of {low.name}") for x in leaves]
        expected = self._expected
        got = [(tuple(x.shape), np.dtype(x.dtype)) for x in leaves]
        if in_tree != low.in_tree or got != expected:
            raise errors.ZeraxTypeError(
                f"the compiled {low.name} was lowered for arguments {low.in_tree} with "
                f"shapes/dtypes {expected}, but was called with {in_tree} and {got}; "
                "call the jitted function itself to compile for new arguments (static "
                "arguments are not passed to a Compiled object).")
        if any(isinstance(x, Tracer) for x in leaves):
            outs = bind(jit_p, *low.consts, *leaves, jaxpr=low.jaxpr, name=low.name)
        elif low.partitioned is not None:   # this process's blocks, as the lowering split
            pt = low.partitioned
            pt, blocks = _sharded.prepare_call(low.jaxpr, [*low.consts, *leaves],
                                               low.shardings, pt.layout.mesh, low.name,
                                               len(low.consts))
            outs = _run_partitioned(pt, blocks)
        else:
            vals = [_contiguous(c._value if type(c) is Array else np.asarray(c))
                    for c in (*low.consts, *leaves)]
            outs = [Array._wrap(o) for o in self._exe.run(*vals)]
        return tree.tree_unflatten(low.out_tree, outs)


MISS = object()   # dispatch_fast: the call is not of a signature seen before


class _Slow(Exception):
    """An argument the dispatch fast path does not read (a tracer, a custom pytree
    node, an unhashable static value): the call takes the full path."""


_INT64 = (-2 ** 63, 2 ** 63)
_INT32 = (-2 ** 31, 2 ** 31)


def _fast_flatten(x, key: list, vals: list, x64: bool):
    """Append ``x``'s leaves (as the ndarrays a kernel takes) to ``vals`` and a
    description of its structure, shapes and dtypes to ``key``, in the order of
    ``tree.tree_flatten`` (lists and tuples in order, dicts by sorted key), for the
    kinds users pass: zerax Arrays, NumPy arrays and scalars, Python numbers, and
    tuples/lists/dicts/None of them.  With x64 off (``x64`` False) NumPy and Python
    values are canonicalised as `as_input` does.  Anything else raises `_Slow`."""
    t = type(x)
    # An array's key holds its strides and dtype (byte order included), not checks of
    # them: `_remember` keeps only signatures of native C-contiguous arrays, so a view
    # or a big-endian array misses here and takes the full path, which copies it.
    # (Reading flags and byte order on every call was a third of a cache hit's cost.)
    if t is Array:
        v = x._value
        key.append((v.shape, v.strides, v.dtype))
        vals.append(v)
    elif t is np.ndarray:
        if not x64:
            x = dtypes.canonical_ndarray(x)
        key.append((x.shape, x.strides, x.dtype, 1))
        vals.append(x)
    elif t is float or t is complex:
        key.append(t)              # weakly typed, as in JAX
        vals.append(np.array(x) if x64 else dtypes.scalar_array(x))
    elif t is int:
        if not (_INT64 if x64 else _INT32)[0] <= x < (_INT64 if x64 else _INT32)[1]:
            raise _Slow
        key.append(t)
        vals.append(np.array(x) if x64 else dtypes.scalar_array(x))
    elif t is tuple or t is list:
        key.append((t, len(x)))
        for y in x:
            if type(y) is np.ndarray and x64:   # (the usual leaf: read without a call)
                key.append((y.shape, y.strides, y.dtype, 1))
                vals.append(y)
            else:
                _fast_flatten(y, key, vals, x64)
    elif t is dict:
        try:
            ks = sorted(x)
        except TypeError:
            raise _Slow from None
        key.append((dict, tuple(ks)))
        for k in ks:
            _fast_flatten(x[k], key, vals, x64)
    elif x is None:
        key.append(None)
    elif t is bool or isinstance(x, np.generic):
        v = np.asarray(x)
        if not v.dtype.isnative:
            raise _Slow
        if not x64:
            v = dtypes.canonical_ndarray(v)
        key.append(((), v.dtype.char, 2))
        vals.append(v)
    else:
        raise _Slow


_live_jit_functions: weakref.WeakSet = weakref.WeakSet()


def clear_caches() -> None:
    """Forget every traced and compiled program of the jitted functions alive (JAX's
    ``jax.clear_caches``): the next call of each traces and compiles again (the
    on-disk cache of compiled kernels, ``ZERAX_CACHE_DIR``, still serves it).

    >>> import zerax as zx
    >>> f = zx.jit(lambda x: x * 2.0)
    >>> float(f(1.0))
    2.0
    >>> zx.clear_caches()
    >>> float(f(3.0))
    6.0
    """
    for f in list(_live_jit_functions):
        with f._lock:
            f._cache.clear()
            f._fast.clear()


class JitFunction:
    """The result of `jit`: call it like the original function."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, fast_math=False,
                 in_shardings=None, out_shardings=None, mesh=None, memory_limit=None,
                 cost_model=None):
        functools.update_wrapper(self, fun)
        self.fun = fun
        # shardings (issue 31): the program is partitioned over their mesh; "auto": the
        # planner chooses the inputs' (api/planner.py), within memory_limit per process
        self.in_shardings, self.out_shardings = in_shardings, out_shardings
        self.mesh, self.memory_limit, self.cost_model = mesh, memory_limit, cost_model
        self._sharded = in_shardings is not None or out_shardings is not None
        self._auto = isinstance(in_shardings, str)
        if self._auto and in_shardings != "auto":
            raise errors.ZeraxValueError(f"jit: in_shardings={in_shardings!r}: the only "
                                         "string it takes is 'auto'")
        if self._auto and mesh is None:
            raise errors.ZeraxValueError("jit(in_shardings='auto') needs the mesh to plan "
                                         "over: jit(f, in_shardings='auto', mesh=mesh)")
        self._plans: dict = {}
        self.fast_math = bool(fast_math)
        self.static_argnums, self.static_argnames = _resolve_static(
            fun, tuple(static_argnums), tuple(static_argnames))
        self.donate_argnums = tuple(donate_argnums)  # accepted; CPU buffers are not donated
        self.name = fun_name(fun)
        self._cache: dict = {}
        # the dispatch fast path: signature (see `_fast_key`) -> compiled call
        self._fast: dict = {}
        self._has_static = bool(self.static_argnums or self.static_argnames)
        self._lock = threading.Lock()
        _live_jit_functions.add(self)

    def __get__(self, instance, owner=None):
        # As JAX's jitted functions: a jitted function defined in a class body is a
        # method; the instance is its first argument (static with static_argnums=0).
        if instance is None:
            return self
        return types.MethodType(self, instance)

    def _split(self, args, kwargs):
        """The static arguments and the flattened dynamic ones: (static positional
        (index, value) pairs, dynamic positions, static keywords, leaves, in_tree)."""
        n = len(args)
        st_nums = sorted({i % n for i in self.static_argnums if -n <= i < n})
        static = tuple((i, args[i]) for i in st_nums)
        dyn_pos = [i for i in range(n) if i not in st_nums]
        st_kw = tuple(sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        leaves, in_tree = tree.tree_flatten(([args[i] for i in dyn_pos], dyn_kw))
        return static, dyn_pos, st_kw, leaves, in_tree

    def _specialise(self, args, kwargs):
        static, dyn_pos, st_kw, leaves, in_tree = self._split(args, kwargs)
        # Python numbers are weakly typed, as in JAX: traced as int64/float64/complex128
        # values (32-bit with x64 off) that promote as Python scalars (so lr * float32
        # params stays float32)
        weak = tuple(type(x) if type(x) in (int, float, complex) else None for x in leaves)
        leaves = [as_input(x, f"argument of {self.name}") for x in leaves]
        try:
            # the mode is part of the key: a program traced with x64 off has other dtypes
            # (Python numbers, NumPy arguments, defaults) than one traced with it on
            key = (in_tree, tuple((tuple(x.shape), np.dtype(x.dtype)) for x in leaves),
                   static, st_kw, dtypes.x64_enabled(), weak)
            hash(key)
        except TypeError:
            raise errors.ZeraxTypeError(
                f"jit of {self.name}: static arguments must be hashable, got {static + st_kw}"
            ) from None
        return key, leaves, in_tree, dyn_pos, dict(st_kw)

    def _trace(self, args, kwargs, in_avals, in_tree, dyn_pos, st_kw, weak):
        def call(fun, dyn):
            dyn_args, dyn_kw = dyn
            full = list(args)
            for i, v in zip(dyn_pos, dyn_args):
                full[i] = v
            return fun(*full, **dyn_kw, **st_kw)

        out_tree = OutTree()
        flat_fun = flatten_fun(self.fun, in_tree, out_tree, apply=call)
        in_sh = self._leaf_shardings(in_tree, len(in_avals)) if self._sharded else None

        def flat(*xs):
            for x, w in zip(xs, weak):
                if w is not None:
                    x._weak_type = w
            if in_sh is not None:
                xs = [x if s is None else bind(sharding_constraint_p, x, sharding=s)
                      for x, s in zip(xs, in_sh)]
            outs = [as_input(o, f"output of {self.name}") for o in flat_fun(*xs)]
            if self.out_shardings is not None:
                out_sh = _sharded.flatten_shardings(
                    f"out_shardings of {self.name}", self.out_shardings, out_tree.tree,
                    len(outs), self.mesh)
                outs = [o if s is None else bind(sharding_constraint_p, o, sharding=s)
                        for o, s in zip(outs, out_sh)]
            return outs

        jaxpr, consts = trace_closed(flat, in_avals, self.name, track_source=True)
        return jaxpr, consts, out_tree.tree

    def trace_abstract(self, args, kwargs, leaf_aval):
        """The program for arguments whose array leaves stand for avals given by
        ``leaf_aval(leaf)`` (shapes without values, for ``zerax.export``): ``(jaxpr,
        consts, in_tree, out_tree)``, static arguments taken as in a call."""
        _, dyn_pos, st_kw, leaves, in_tree = self._split(args, kwargs)
        weak = tuple(type(x) if type(x) in (int, float, complex) else None for x in leaves)
        avals = [leaf_aval(x) for x in leaves]
        jaxpr, consts, out_tree = self._trace(args, kwargs, avals, in_tree, dyn_pos,
                                              dict(st_kw), weak)
        return jaxpr, consts, in_tree, out_tree

    def _leaf_shardings(self, in_tree, n) -> list:
        """The NamedSharding (or None) of each argument leaf, from ``in_shardings`` (a
        prefix of the positional arguments; keyword arguments are unspecified)."""
        if self.in_shardings is None or self._auto:
            return [None] * n
        args_tree, kw_tree = in_tree.children()
        n_args = args_tree.num_leaves
        spec = self.in_shardings
        if isinstance(spec, (tuple, list)) and not isinstance(spec, PartitionSpec):
            spec = list(spec)
        shard = _sharded.flatten_shardings(f"in_shardings of {self.name}", spec, args_tree,
                                           n_args, self.mesh)
        return shard + [None] * (n - n_args)

    def _entry(self, args, kwargs):
        key, leaves, in_tree, dyn_pos, st_kw = self._specialise(args, kwargs)
        # collectives read the named axes live while tracing (their sizes, and which
        # of them span processes)
        key = (key, named_axis_env(), process_axis_env())
        entry = self._cache.get(key)
        if entry is None:
            with gc_paused():
                jaxpr, consts, out_tree = self._trace(args, kwargs, [get_aval(x) for x in leaves],
                                                      in_tree, dyn_pos, st_kw, key[0][-1])
            entry = (jaxpr, consts, out_tree)
            if not any(isinstance(c, Tracer) for c in consts):
                with self._lock:
                    self._cache[key] = entry
        return entry, leaves

    def _fast_key(self, args, kwargs):
        """(signature, kernel inputs) of a call, read in one pass over the arguments:
        the signature holds the structure, shapes and dtypes of the array arguments
        (and the weak type of Python numbers), and the values of static ones."""
        key: list = []
        vals: list = []
        x64 = dtypes.x64_enabled()
        if self._has_static:
            n = len(args)
            nums = self.static_argnums
            for i, a in enumerate(args):
                if i in nums or i - n in nums:
                    key.append(("s", i, a))
                else:
                    _fast_flatten(a, key, vals, x64)
            names = self.static_argnames
            for k in sorted(kwargs):
                if k in names:
                    key.append(("k", k, kwargs[k]))
                else:
                    key.append(k)
                    _fast_flatten(kwargs[k], key, vals, x64)
        else:
            for a in args:
                _fast_flatten(a, key, vals, x64)
            if kwargs:
                for k in sorted(kwargs):
                    key.append(k)
                    _fast_flatten(kwargs[k], key, vals, x64)
        key.append(len(args))
        key.append(process_axis_env())   # a program traced inside spmd calls MPI
        key.append(x64)
        return tuple(key), vals

    def dispatch_fast(self, args, kwargs):
        """``(result, signature)`` when the arguments are of a signature seen before (the
        dispatch fast path: straight to the compiled kernel, no second flattening, no
        copies of C-contiguous arrays); else ``(MISS, signature or None)``."""
        try:
            sig, vals = self._fast_key(args, kwargs)
            hit = self._fast.get(sig)
        except (_Slow, TypeError):   # (TypeError: an unhashable static value)
            return MISS, None
        if hit is None:
            return MISS, sig
        run, const_vals, single, out_tree, alias = hit
        outs = run(*const_vals, *vals)
        if nan_checks[0]:   # jax_debug_nans: name the operation (ops/debug_nans.py)
            check_jit_outputs(self.name, outs, lambda: self._deoptimized(args, kwargs))
        if alias:   # an input returned as it is: never hand back the caller's buffer
            outs = [np.array(o) if k in alias else o for k, o in enumerate(outs)]
        if single:
            return Array._wrap(outs[0]), sig
        return tree.tree_unflatten(out_tree, [Array._wrap(o) for o in outs]), sig

    def __call__(self, *args, **kwargs):
        if config.jit_disabled:
            return self.fun(*args, **kwargs)
        sig = None
        if not self._sharded:
            out, sig = self.dispatch_fast(args, kwargs)
            if out is not MISS:
                return out
        (jaxpr, consts, out_tree), leaves = self._entry(args, kwargs)
        if any(isinstance(x, Tracer) for x in leaves) or \
                any(isinstance(c, Tracer) for c in consts):
            outs = bind(jit_p, *consts, *leaves, jaxpr=jaxpr, name=self.name)
            return tree.tree_unflatten(out_tree, outs)
        values = list(consts) + list(leaves)
        shardings = self._input_shardings(args, kwargs, jaxpr, values, len(consts))
        mesh = _sharded.program_mesh(jaxpr, values, shardings, self.mesh, self.name)
        if mesh is not None:   # partitioned over the mesh (api/partition.py)
            pt, blocks = _sharded.prepare_call(jaxpr, values, shardings, mesh, self.name,
                                               len(consts))
            return tree.tree_unflatten(out_tree, _run_partitioned(pt, blocks))
        exe = executable_for(jaxpr, self.name, leaves, self.fast_math)
        vals = [_contiguous(c._value if type(c) is Array else np.asarray(c)) for c in consts]
        n_consts = len(vals)
        vals += [_contiguous(x._value if type(x) is Array else np.asarray(x)) for x in leaves]
        outs = [Array._wrap(o) for o in exe.run(*vals)]
        if nan_checks[0]:
            check_jit_outputs(self.name, [o._value for o in outs],
                              lambda: self._deoptimized(args, kwargs))
        if sig is not None and not named_axis_env() and not _sharded.constraint_meshes(jaxpr):
            self._remember(sig, args, kwargs, exe, vals, n_consts, out_tree)
        return tree.tree_unflatten(out_tree, outs)

    def _deoptimized(self, args, kwargs):
        with disable_jit():
            self.fun(*args, **kwargs)

    def _remember(self, sig, args, kwargs, exe, vals, n_consts, out_tree):
        """Keep the compiled call for the fast path, when the fast reading of the
        arguments gives the same kernel inputs as the full path did."""
        try:
            fast_vals = self._fast_key(args, kwargs)[1]
        except (_Slow, TypeError):
            return
        full = vals[n_consts:]
        if len(fast_vals) != len(full) or any(
                f.shape != v.shape or f.dtype != v.dtype or not f.flags.c_contiguous
                or not f.dtype.isnative for f, v in zip(fast_vals, full)):
            return
        run = exe.run if any(exe.float0_outs) else exe.kernel
        single = out_tree.num_leaves == 1 and out_tree == tree.tree_structure(0)
        ins = {v for v in exe.jaxpr.invars}
        alias = frozenset(k for k, v in enumerate(exe.jaxpr.outvars)
                          if type(v) is Var and v in ins)
        with self._lock:
            self._fast[sig] = (run, tuple(vals[:n_consts]), single, out_tree, alias)

    def eval_shape(self, *args, **kwargs):
        """The shapes and dtypes of the result (a tree of ShapeDtypeStruct), from the
        traced program: nothing runs."""
        (jaxpr, _, out_tree), _ = self._entry(args, kwargs)
        return tree.tree_unflatten(out_tree, [ShapeDtypeStruct(v.aval.shape, v.aval.dtype)
                                              for v in jaxpr.outvars])

    def _input_shardings(self, args, kwargs, jaxpr, values, n_consts) -> list:
        """The NamedSharding (or None) of each input of the traced program (constants
        first): ``in_shardings``' or the planner's."""
        if not self._sharded:
            return [None] * len(values)
        if self._auto:
            return [None] * n_consts + self._planned(jaxpr, values, n_consts,
                                                     args, kwargs).shardings
        in_tree = self._split(args, kwargs)[4]
        return [None] * n_consts + self._leaf_shardings(in_tree, len(values) - n_consts)

    def _planned(self, jaxpr, values, n_consts, args, kwargs):
        """The planner's choice for this program (api/planner.py), memoised."""
        plan = self._plans.get(jaxpr)
        if plan is None:
            _, dyn_pos, _, _, _ = self._split(args, kwargs)
            dyn_kw = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
            paths, _ = tree.tree_flatten_with_path(([args[i] for i in dyn_pos], dyn_kw))
            names = [f"args{tree.keystr(p[1:])}" if p[0].idx == 0 else
                     f"kwargs{tree.keystr(p[1:])}" for p, _ in paths]
            plan = plan_program(jaxpr, values, n_consts, self.mesh, self.memory_limit,
                                self.name, names, self.cost_model)
            self._plans[jaxpr] = plan
        return plan

    def lower(self, *args, **kwargs) -> Lowered:
        (jaxpr, consts, out_tree), leaves = self._entry(args, kwargs)
        in_tree = self._specialise(args, kwargs)[2]
        values = list(consts) + list(leaves)
        if any(isinstance(v, Tracer) for v in values):
            return Lowered(jaxpr, consts, out_tree, self.name, in_tree)
        shardings = self._input_shardings(args, kwargs, jaxpr, values, len(consts))
        mesh = _sharded.program_mesh(jaxpr, values, shardings, self.mesh, self.name)
        if mesh is None:
            return Lowered(jaxpr, consts, out_tree, self.name, in_tree)
        specs = _sharded.input_specs(values, shardings, mesh, self.name)
        pt = partition(jaxpr, mesh, specs, self.name,
                       _sharded.splat_constants(jaxpr, values, len(consts)))
        plan = self._plans.get(jaxpr) if self._auto else None
        return Lowered(jaxpr, consts, out_tree, self.name, in_tree, pt, plan,
                       [_sharded.sharding_of_spec(mesh, s) if st is None else st
                        for s, st in zip(specs, shardings)])


def _resolve_static(fun, nums, names):
    """JAX's reading of static_argnums/static_argnames against ``fun``'s signature: each
    one also names the other (so a static argument may be passed either way), negative
    numbers count from the last positional parameter, and a number past the positional
    parameters of a function without ``*args`` is an error."""
    import inspect
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return nums, names
    params = list(sig.parameters.values())
    kinds = inspect.Parameter
    pos = [p for p in params if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    if not any(p.kind is kinds.VAR_POSITIONAL for p in params):
        for i in nums:
            if not -len(pos) <= i < len(pos):
                raise errors.ZeraxValueError(
                    f"jit of {fun_name(fun)} has static_argnums={nums}, but the function "
                    f"takes only {len(pos)} positional argument(s).")
        nums = tuple(i % len(pos) for i in nums)
    extra_names = tuple(pos[i].name for i in nums if 0 <= i < len(pos)
                        and pos[i].kind is kinds.POSITIONAL_OR_KEYWORD
                        and pos[i].name not in names)
    extra_nums = tuple(k for k, p in enumerate(pos) if p.name in names
                       and p.kind is kinds.POSITIONAL_OR_KEYWORD and k not in nums)
    return nums + extra_nums, names + extra_names


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(),
        donate_argnames=(), keep_unused=False, inline=False, device=None, backend=None,
        in_shardings=None, out_shardings=None, compiler_options=None, fast_math=False,
        mesh=None, memory_limit=None, cost_model=None):
    """Compile ``fun`` to native code, once per signature.

    Compiled code computes what the eager operations compute (bit for bit where NumPy's
    result is correctly rounded; see docs/compiler.md).  ``fast_math=True`` lets the
    compiler contract ``a * b + c`` into one fused multiply-add and reassociate float
    arithmetic, which may change results in their last bits (programs the kernel-IR
    lowering carries; the others are compiled as without it).

    ``in_shardings`` / ``out_shardings`` (NamedShardings, or PartitionSpecs
    of ``mesh``, as prefix trees of the positional arguments and of the result)
    partition the program over their mesh: each process computes its blocks, with the
    collectives the shardings call for (docs/parallelism.md); ``in_shardings="auto"``
    lets the planner choose them, within ``memory_limit`` per process (bytes, or a
    string such as ``"2GB"``), costing plans with ``cost_model`` (a
    ``zerax.sharding.CostModel``; default: rates measured on the mesh).  Arguments that
    are sharded arrays are partitioned as they are split, without being asked.

    JAX's other options are accepted: buffer donation, ``keep_unused``, ``inline``,
    devices and backends have no effect on zerax's CPU devices.

    >>> import zerax as zx, zerax.numpy as znp
    >>> f = zx.jit(lambda x: znp.sin(x) * 2.0 + 1.0)
    >>> f(znp.zeros(3))
    Array([1., 1., 1.], dtype=float64)
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if isinstance(donate_argnums, int):
        donate_argnums = (donate_argnums,)
    del donate_argnames, keep_unused, inline, device, backend
    del compiler_options
    sharding = dict(in_shardings=in_shardings, out_shardings=out_shardings, mesh=mesh,
                    memory_limit=memory_limit, cost_model=cost_model)
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, fast_math=fast_math, **sharding)
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums, fast_math,
                       **sharding)



