"""`export`, `Exported` and `deserialize`: JAX's ``jax.export`` API on zerax programs.

``export(jit(f))(*specs)`` traces ``f`` (once per size for symbolic dimensions, see
`symbolic`) into a program held as the JSON of `program`, with its constants.  An
`Exported` is called (`Exported.call`) by instantiating that program for the sizes of
the arguments and running it under a ``jit`` of its own: it composes with ``jit``,
``vmap`` and, through ``custom_vjp`` as in JAX, with ``grad``/``vjp``, whose backward
pass calls the exported VJP (`Exported.vjp`, traced from the original function, so its
custom rules hold; serialised beside the primal up to ``vjp_order``).
"""

from __future__ import annotations

import numpy as np

from ...core import tree
from ...core.api_util import as_input
from ...core.avals import ShapedArray
from ...core.core import Tracer, get_aval
from ...core.shape_poly import DimExpr, SymbolicScope
from ...interpreters.ad import vjp as ad_vjp
from ...ir.ir import eval_jaxpr, pp_jaxpr
from ...ir.tracing import trace_closed
from ...lax.lax import full_like
from ...base.config import __version__, config
from ..custom import custom_vjp
from ..jit import MISS, JitFunction, jit
from ....errors import ExportError
from .blob import FORMAT_VERSION, read_blob, write_blob
from .program import Decoder
from .symbolic import probe_values, symbolic_program, variables_of
from .trees import leaf_names, tree_from_json, tree_json
from ...base.dtypes import kind as dtype_kind


def default_export_platform() -> str:
    """The platform exported programs are written for: zerax's programs are its own IR,
    compiled where they are loaded (any backend), so this is the host's, ``"cpu"``."""
    return "cpu"


class Exported:
    """A program exported by `export` or read by `deserialize` (JAX's
    ``jax.export.Exported``).

    Attributes: ``fun_name``; ``in_tree``/``out_tree``, the structures of ``(args,
    kwargs)`` and of the result; ``in_avals``/``out_avals``, the flat shapes and dtypes,
    whose dimensions may be symbolic (`symbolic_shape`); ``nr_devices`` and
    ``platforms`` (one device; zerax's IR runs on any backend).

    >>> import zerax as zx, zerax.numpy as znp
    >>> from zerax import export
    >>> b, = export.symbolic_shape("b")
    >>> exp = export.export(zx.jit(lambda x: x * 2.0))(zx.ShapeDtypeStruct((b, 3), "float32"))
    >>> exp.in_avals
    (f32[b,3],)
    >>> exp2 = export.deserialize(exp.serialize())
    >>> exp2.call(znp.ones((2, 3), "float32")).shape
    (2, 3)
    """

    nr_devices = 1

    def __init__(self, *, fun_name, in_tree, out_tree, program, consts, get_vjp,
                 constraints=(), platforms=("cpu",)):
        self.fun_name = fun_name
        self.in_tree, self.out_tree = in_tree, out_tree
        self._program, self._consts = program, consts
        self._get_vjp = get_vjp
        self._vjp = None
        self.constraints = tuple(constraints)
        self.platforms = tuple(platforms)
        sym = Decoder(consts, None).closed(program)[0]
        self.in_avals = tuple(v.aval for v in sym.invars)
        self.out_avals = tuple(v.aval for v in sym.outvars)
        if len(self.in_avals) != in_tree.num_leaves or \
                len(self.out_avals) != out_tree.num_leaves:
            raise ExportError(f"the exported program {fun_name!r} has {len(self.in_avals)} "
                              f"inputs and {len(self.out_avals)} outputs but its trees have "
                              f"{in_tree.num_leaves} and {out_tree.num_leaves} leaves")
        self._names = leaf_names(in_tree)
        self._dims, _ = variables_of(self.in_avals)
        self._bounds = _bounds(self.constraints, self._dims)
        _check_solvable(fun_name, self.in_avals)
        self._programs: dict = {}
        self._call_jit = None

    # -- JAX's API
    def __str__(self):
        return f"Exported(fun_name={self.fun_name}, ...)"

    __repr__ = __str__

    def has_vjp(self) -> bool:
        """Whether `vjp` is available (always for a fresh export; for a deserialised one,
        if it was serialised with ``vjp_order >= 1``)."""
        return self._vjp is not None or self._get_vjp is not None

    def vjp(self) -> Exported:
        """The exported VJP: a function of the flat primal inputs and one cotangent per
        output, returning one cotangent per input (zeros for integer inputs)."""
        if self._vjp is None:
            if self._get_vjp is None:
                raise ExportError(
                    f"the exported function {self.fun_name!r} has no VJP: it was deserialised "
                    "from a blob serialised with a lower vjp_order; serialize with "
                    "vjp_order=k to differentiate it k times")
            self._vjp = self._get_vjp(self)
        return self._vjp

    def serialize(self, vjp_order: int = 0) -> bytes:
        """The program as bytes (no pickle, no Python code), with the VJP programs up to
        order ``vjp_order`` (``grad(grad(f))`` of the loaded program needs 2)."""
        if type(vjp_order) is not int or vjp_order < 0:
            raise ExportError(f"vjp_order must be a non-negative int, got {vjp_order!r}")
        table: list[np.ndarray] = []
        index: dict = {}
        manifest = {"format": "zerax.export", "exported": self._level(vjp_order, table, index)}
        return write_blob(manifest, table, __version__)

    def _level(self, vjp_order, table, index):
        remap = [_intern(c, table, index) for c in self._consts]
        level = {"fun_name": self.fun_name,
                 "in_tree": tree_json(self.in_tree), "out_tree": tree_json(self.out_tree),
                 "constraints": list(self.constraints),
                 "program": _remap_consts(self._program, remap),
                 "vjp": None}
        if vjp_order > 0:
            level["vjp"] = self.vjp()._level(vjp_order - 1, table, index)
        return level

    def mlir_module(self) -> str:
        """The program as text (JAX's name; see `as_text`)."""
        return self.as_text()

    def as_text(self) -> str:
        """The readable program: its signature, then its equations as ``make_jaxpr``
        prints them, symbolic sizes by name."""
        jaxpr, consts = Decoder(self._consts, None).closed(self._program)
        ins = ", ".join(a.str_short() for a in self.in_avals)
        outs = ", ".join(a.str_short() for a in self.out_avals)
        head = f"exported {self.fun_name}({ins}) -> ({outs})"
        if consts:
            head += "\n  constants: " + ", ".join(
                f"{a.dtype.name}{list(a.shape)}" for a in consts)
        return head + "\n" + pp_jaxpr(jaxpr)

    def call(self, *args, **kwargs):
        """Call the program (eagerly, or inside ``jit``/``vmap``/``grad``) on arguments
        of the exported structure, shapes and dtypes (symbolic dimensions: any size)."""
        if self._call_jit is None:
            self._call_jit = self._make_calls()
        plain, differentiable = self._call_jit
        # Concrete arguments run the program as it is (its kernels are the original
        # function's); under a transform it is wrapped so that its derivative is the
        # serialised VJP, as in JAX (and a custom rule inside still holds).
        if not config.jit_disabled:
            out, _ = plain.dispatch_fast(args, kwargs)   # a call seen before: no tracer
            if out is not MISS:
                return out
        if any(isinstance(x, Tracer) for x in tree.tree_leaves((args, kwargs))):
            return differentiable(*args, **kwargs)
        return plain(*args, **kwargs)

    # -- calling
    def _make_calls(self):
        def primal(*leaves):
            jaxpr, consts = self._instantiate([get_aval(x) for x in leaves])
            return eval_jaxpr(jaxpr, consts, *leaves)

        flat = custom_vjp(primal)

        def fwd(*leaves):
            return flat(*leaves), leaves

        def bwd(leaves, cts):
            vjp_exp = self.vjp()
            cts = [c if dtype_kind(a.dtype) in "fc" else np.zeros(np.shape(c), a.dtype)
                   for c, a in zip(cts, _shaped(self.out_avals, leaves, self))]
            in_cts = vjp_exp.call(*leaves, *cts)
            return tuple(c if dtype_kind(get_aval(x).dtype) in "fc" else None
                         for c, x in zip(in_cts, leaves))

        flat.defvjp(fwd, bwd)

        def wrap(run):
            def call_exported(*args, **kwargs):
                leaves, in_tree = tree.tree_flatten((list(args), kwargs))
                if in_tree != self.in_tree:
                    raise ExportError(
                        f"the exported function {self.fun_name!r} takes (args, kwargs) "
                        f"structured {self.in_tree}, but was called with {in_tree}")
                leaves = [as_input(x, f"argument of the exported {self.fun_name}")
                          for x in leaves]
                return tree.tree_unflatten(self.out_tree, run(*leaves))
            call_exported.__name__ = call_exported.__qualname__ = self.fun_name
            return jit(call_exported)
        return wrap(primal), wrap(flat)

    def _sizes(self, avals) -> dict:
        """The value of every dimension variable, from the arguments' avals; an error
        naming the argument and dimension on any mismatch."""
        env: dict = {}
        pending = []
        for name, want, got in zip(self._names, self.in_avals, avals):
            if len(want.shape) != len(got.shape):
                raise ExportError(
                    f"the exported function {self.fun_name!r} expects {name} of rank "
                    f"{len(want.shape)} ({want.str_short()}), got shape {tuple(got.shape)}")
            if want.dtype != got.dtype:
                raise ExportError(
                    f"the exported function {self.fun_name!r} expects {name} of dtype "
                    f"{want.dtype.name} ({want.str_short()}), got {got.dtype.name}")
            for k, (w, g) in enumerate(zip(want.shape, got.shape)):
                where = f"{name}.shape[{k}]"
                if not isinstance(w, DimExpr):
                    if w != g:
                        raise ExportError(
                            f"the exported function {self.fun_name!r} expects {where} to be "
                            f"{w} ({name} is {want.str_short()}), got {g}")
                    continue
                lin = w.as_linear()
                if lin is not None and lin[1] == 1 and lin[2] == 0:
                    v = lin[0]
                    if v in env and env[v][0] != g:
                        raise ExportError(
                            f"the exported function {self.fun_name!r}: dimension {v!r} is "
                            f"{env[v][0]} from {env[v][1]} but {g} from {where} "
                            f"({name} is {want.str_short()})")
                    env.setdefault(v, (g, where))
                else:
                    pending.append((w, g, where, name, want))
        for w, g, where, name, want in pending:   # c*b + d: solved if b is still unknown
            lin = w.as_linear()
            if lin is not None and lin[0] not in env:
                v, c, d = lin
                if (g - d) % c == 0:
                    env[v] = ((g - d) // c, where)
        sizes = {v: val for v, (val, _) in env.items()}
        for v in self._dims:
            lo, hi = self._bounds[v]
            if v not in sizes:
                continue
            if sizes[v] < lo or (hi is not None and sizes[v] > hi):
                bound = f">= {lo}" if sizes[v] < lo else f"<= {hi}"
                raise ExportError(
                    f"the exported function {self.fun_name!r}: dimension {v!r} must be "
                    f"{bound}, got {sizes[v]} from {env[v][1]}")
        for w, g, where, name, want in pending:
            if any(v not in sizes for v in w.variables()) or w.evaluate(sizes) != g:
                got = "no integer value" if any(v not in sizes for v in w.variables()) \
                    else w.evaluate(sizes)
                raise ExportError(
                    f"the exported function {self.fun_name!r} expects {where} to be {w} "
                    f"(= {got} for {_env_text(sizes)}; {name} is {want.str_short()}), got {g}")
        return sizes

    def _instantiate(self, avals):
        sizes = self._sizes(avals)
        key = tuple(sorted(sizes.items()))
        hit = self._programs.get(key)
        if hit is None:
            try:
                hit = Decoder(self._consts, sizes).closed(self._program)
            except ExportError as e:
                raise ExportError(f"the exported function {self.fun_name!r} does not run for "
                                  f"{_env_text(sizes)}: {e}") from None
            self._programs[key] = hit
        return hit

def _check_solvable(name, in_avals):
    """Every dimension variable must be readable from some argument's shape (alone, or
    as ``c*b + d``), or a call could not tell its value."""
    names, _ = variables_of(in_avals)
    alone = {d.as_linear()[0] for a in in_avals for d in a.shape
             if isinstance(d, DimExpr) and d.as_linear() is not None}
    missing = [v for v in names if v not in alone]
    if missing:
        raise ExportError(
            f"the symbolic dimensions {missing} of {name!r} do not appear alone (as b or "
            "2*b + 1) in any argument's shape, so a call could not tell their values; give "
            "them a dimension of their own")


def _shaped(out_avals, leaves, exp):
    """The output avals for the sizes of ``leaves``."""
    sizes = exp._sizes([get_aval(x) for x in leaves])
    return [ShapedArray(tuple(d.evaluate(sizes) if isinstance(d, DimExpr) else d
                              for d in a.shape), a.dtype) for a in out_avals]


def _bounds(constraints, names):
    scope = SymbolicScope(constraints)
    return {v: scope.bounds(v) for v in names}


def _env_text(sizes) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(sizes.items())) or "these sizes"


def _intern(arr, table, index) -> int:
    key = (arr.dtype.str, arr.shape, arr.tobytes())
    k = index.get(key)
    if k is None:
        k = index[key] = len(table)
        table.append(arr)
    return k


def _remap_consts(node, remap):
    """``node`` with every constants list (``{"program", "consts"}``) renumbered."""
    if isinstance(node, dict):
        if set(node) == {"program", "consts"}:
            return {"program": _remap_consts(node["program"], remap),
                    "consts": [remap[c] for c in node["consts"]]}
        return {k: _remap_consts(v, remap) for k, v in node.items()}
    if isinstance(node, list):
        return [_remap_consts(v, remap) for v in node]
    return node


# --------------------------------------------------------------------------- export

def _spec_aval(x, what):
    if isinstance(x, (ShapedArray,)):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "_value") and \
            not isinstance(x, np.ndarray):
        return ShapedArray(tuple(x.shape), np.dtype(x.dtype))
    return get_aval(as_input(x, what))


def _at(aval, sizes):
    return ShapedArray(tuple(d.evaluate(sizes) if isinstance(d, DimExpr) else int(d)
                             for d in aval.shape), aval.dtype)


def export(fun_jit, *, platforms=None, disabled_checks=()):
    """Export a jitted function (JAX's ``jax.export.export``): ``export(jit(f))(*args)``
    returns an `Exported`.  Arguments may be arrays or `ShapeDtypeStruct` specs whose
    dimensions may be symbolic (`symbolic_shape`); static arguments are given by value.
    ``platforms`` is accepted for JAX's code: a zerax program runs on every backend.

    >>> import zerax as zx, zerax.numpy as znp
    >>> from zerax import export
    >>> exp = export.export(zx.jit(znp.sin))(znp.zeros(3))
    >>> exp.call(znp.zeros(3))
    Array([0., 0., 0.], dtype=float64)
    """
    del disabled_checks
    if not isinstance(fun_jit, JitFunction):
        raise ExportError(
            f"export takes a function wrapped in zerax.jit (as jax.export.export does), got "
            f"{type(fun_jit).__name__}: write export.export(zx.jit(f))(*args)")
    plats = ("cpu",) if platforms is None else tuple(
        [platforms] if isinstance(platforms, str) else platforms)

    def do_export(*args, **kwargs) -> Exported:
        name = fun_jit.name
        _, dyn_pos, st_kw, leaves, in_tree = fun_jit._split(args, kwargs)
        in_avals = [_spec_aval(x, f"argument of {name}") for x in leaves]

        return _export_traced(name, in_tree, in_avals, _jit_tracer(fun_jit, args, kwargs),
                              _primal_of(fun_jit, args, dyn_pos, dict(st_kw), in_tree), plats)

    return do_export


def _jit_tracer(fun_jit, args, kwargs):
    def trace(sizes):
        jaxpr, consts, _, out_tree = fun_jit.trace_abstract(
            args, kwargs, lambda x: _at(_spec_aval(x, fun_jit.name), sizes))
        return jaxpr, consts, out_tree
    return trace


def _primal_of(fun_jit, args, dyn_pos, st_kw, in_tree):
    """The exported function as a function of its flat leaves (for its VJP)."""
    def flat(*leaves):
        dyn_args, dyn_kw = tree.tree_unflatten(in_tree, leaves)
        full = list(args)
        for i, v in zip(dyn_pos, dyn_args):
            full[i] = v
        out = fun_jit.fun(*full, **dyn_kw, **st_kw)
        return [as_input(o, f"output of {fun_jit.name}") for o in tree.tree_leaves(out)]
    return flat


def _export_traced(name, in_tree, in_avals, trace, flat_fun, platforms) -> Exported:
    _check_solvable(name, in_avals)
    constraints = ()
    _, scope = variables_of(in_avals)
    if scope is not None:
        constraints = scope.constraints
    program, consts, out_tree = symbolic_program(trace, in_avals, name)
    exp = Exported(fun_name=name, in_tree=in_tree, out_tree=out_tree, program=program,
                   consts=consts, get_vjp=_vjp_exporter(flat_fun),
                   constraints=constraints, platforms=platforms)
    if list(exp.in_avals) != [ShapedArray(a.shape, a.dtype) for a in in_avals]:
        raise ExportError(f"exporting {name}: the traced program's inputs "
                          f"{list(exp.in_avals)} differ from the arguments' {in_avals}")
    return exp


def _vjp_exporter(flat_fun):
    """``get_vjp(exp)``: the VJP of ``flat_fun`` exported for ``exp``'s avals."""
    def get_vjp(exp: Exported) -> Exported:
        in_avals, out_avals = list(exp.in_avals), list(exp.out_avals)
        n = len(in_avals)
        fi = [i for i, a in enumerate(in_avals) if dtype_kind(a.dtype) in "fc"]
        fo = [j for j, a in enumerate(out_avals) if dtype_kind(a.dtype) in "fc"]

        def vjp_fun(*args):
            primals, cts = args[:n], args[n:]

            def g(*xs):
                full = list(primals)
                for i, x in zip(fi, xs):
                    full[i] = x
                outs = flat_fun(*full)
                return [outs[j] for j in fo]

            got = iter(ad_vjp(g, *[primals[i] for i in fi])[1]([cts[j] for j in fo])
                       if fi else ())
            return tuple(next(got) if i in fi else _zeros_like(primals[i]) for i in range(n))

        vjp_avals = in_avals + out_avals
        name = f"vjp({exp.fun_name})"
        vjp_tree = tree.tree_structure(([0] * len(vjp_avals), {}))

        def trace(sizes):
            jaxpr, consts = trace_closed(lambda *a: list(vjp_fun(*a)),
                                         [_at(a, sizes) for a in vjp_avals], name)
            return jaxpr, consts, tree.tree_structure(tuple(range(n)))

        return _export_traced(name, vjp_tree, vjp_avals, trace, vjp_fun, exp.platforms)
    return get_vjp


def _zeros_like(x):
    return full_like(x, 0)


# --------------------------------------------------------------------------- deserialize

def deserialize(blob) -> Exported:
    """Read an exported program from the bytes of `Exported.serialize` (JAX's
    ``jax.export.deserialize``).  The bytes are checked (magic, version, lengths,
    SHA-256, every size and offset) and parsed as data: nothing is unpickled or
    evaluated; a damaged, truncated or newer blob, or one with an unknown primitive, is
    an `ExportError`."""
    manifest, consts, _ = read_blob(blob)
    if set(manifest) != {"format", "exported"} or manifest["format"] != "zerax.export":
        raise ExportError("the manifest of the exported program is not a zerax.export "
                          "manifest")
    return _from_level(manifest["exported"], consts, 0)


def _from_level(level, consts, depth) -> Exported:
    where = "the exported program" if depth == 0 else f"its VJP of order {depth}"
    if depth > 16 or not isinstance(level, dict) or set(level) != {
            "fun_name", "in_tree", "out_tree", "constraints", "program", "vjp"}:
        raise ExportError(f"{where}: malformed description")
    if not isinstance(level["fun_name"], str) or not isinstance(level["constraints"], list) \
            or not all(isinstance(c, str) for c in level["constraints"]):
        raise ExportError(f"{where}: malformed name or constraints")
    inner = level["vjp"]
    vjp = None if inner is None else _from_level(inner, consts, depth + 1)
    try:
        exp = Exported(fun_name=level["fun_name"],
                       in_tree=tree_from_json(level["in_tree"], "in_tree"),
                       out_tree=tree_from_json(level["out_tree"], "out_tree"),
                       program=level["program"], consts=consts, get_vjp=None,
                       constraints=level["constraints"])
    except ExportError as e:
        raise ExportError(f"{where}: {e}") from None
    except Exception as e:   # a constraint that does not parse, ...
        raise ExportError(f"{where}: malformed ({type(e).__name__}: {e})") from None
    exp._vjp = vjp
    # The program must type-check right away (at the first sizes it was traced for), so
    # that a malformed one is refused by deserialize, not by its first call.
    sizes = {v: vals[0] for v, vals in probe_values(exp._dims, SymbolicScope(
        exp.constraints)).items()}
    exp._programs[tuple(sorted(sizes.items()))] = Decoder(consts, sizes).closed(exp._program)
    return exp


__all__ = ["Exported", "export", "deserialize", "default_export_platform", "FORMAT_VERSION"]
