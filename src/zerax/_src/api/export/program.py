"""Programs <-> the JSON of an exported program (``docs/export-format.md``).

`Encoder` writes a program (a `Jaxpr` and its constants) as plain JSON values: every
variable is numbered in the order it is defined, every equation names its primitive and
lists its parameters with tagged types, so that reading it back needs no Python code from
the file (nothing is evaluated, no class is looked up by a name the file chooses: the
only names looked up are primitives, in zerax's registry).  The calls of a custom JVP or
VJP are written as their primal sub-program (their rules are Python functions; an
exported program is differentiated through the derivative programs serialised beside it,
as in JAX).  `Decoder` reads it back strictly: unknown keys, wrong types, variables used
before they are defined, unknown primitives and ill-typed equations are `ExportError`.

A size may be a symbolic dimension: ``{"dim": [[coef, [names...]], ...]}``, a polynomial
(see `poly_json`); the decoder evaluates it for the call's sizes (or keeps it symbolic to
print the program).
"""

from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.core import all_primitives
from ...core.shape_poly import DimExpr
from ...ir.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, typecheck
from ...ops.custom_calls import custom_jvp_call_p, custom_vjp_call_p
from ....errors import ExportError
from .validate import check_eqn, check_names
from ...base import dtypes
from ...base.dtypes import kind as dtype_kind

# dtypes an exported program may hold, by name
DTYPES = {name: np.dtype(name) for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")}

# primitives whose parameters are Python callables: they cannot be written
_INLINED = (custom_jvp_call_p, custom_vjp_call_p)
_NOT_EXPORTABLE = {
    "function_call": "a zerax.Function's forward is Python (NumPy) code",
    "debug_callback": "a host callback (zerax.debug.print / debug.callback) calls Python",
    "custom_lin": "it is internal to forward-mode differentiation of a custom_vjp function",
}
MAX_DEPTH = 64          # nesting of sub-programs and parameter values
MAX_INT = 2 ** 62       # sizes and integer parameters


def dtype_name(dtype) -> str:
    name = np.dtype(dtype).name
    if name not in DTYPES and not dtypes.is_bfloat16(dtype):
        raise ExportError(f"arrays of dtype {name} cannot be exported (supported: "
                          f"{', '.join(DTYPES)}, bfloat16)")
    return name


# --------------------------------------------------------------------------- dimensions

def poly_json(d: DimExpr) -> list:
    """A polynomial as ``[[coef, [variable names, repeated for powers]], ...]``."""
    return [[c, list(m)] for m, c in d.terms]


def poly_from_json(node, where: str) -> DimExpr:
    if not isinstance(node, list) or not node:
        raise ExportError(f"{where}: a symbolic dimension must be a non-empty list of terms")
    terms = {}
    for t in node:
        if (not isinstance(t, list) or len(t) != 2 or type(t[0]) is not int
                or not isinstance(t[1], list) or not all(isinstance(n, str) and n
                                                         for n in t[1])
                or abs(t[0]) > MAX_INT or len(t[1]) > 8):
            raise ExportError(f"{where}: malformed term {t!r:.80} of a symbolic dimension")
        m = tuple(sorted(t[1]))
        if m in terms:
            raise ExportError(f"{where}: a symbolic dimension repeats the term {m}")
        terms[m] = t[0]
    return DimExpr(terms)


def dim_json(d):
    if isinstance(d, DimExpr):
        return d.constant() if d.is_constant() else {"dim": poly_json(d)}
    return int(d)


# --------------------------------------------------------------------------- values

def float_json(x) -> str:
    return float(x).hex()


def _float_from(node, where):
    if not isinstance(node, str) or len(node) > 40:
        raise ExportError(f"{where}: a float must be written as float.hex text, got "
                          f"{node!r:.60}")
    try:
        return float.fromhex(node)
    except (ValueError, OverflowError):
        raise ExportError(f"{where}: {node!r:.60} is not a float in hex notation") from None


def scalar_json(value, dtype: np.dtype):
    """A scalar of ``dtype``: JSON bool / int, float.hex text, or a pair for complex."""
    v = np.asarray(value, dtype)[()]
    kind = dtype_kind(dtype)
    if kind == "b":
        return bool(v)
    if kind in "iu":
        return int(v)
    if kind == "f":
        return float_json(v)
    return [float_json(v.real), float_json(v.imag)]


def scalar_from_json(node, dtype: np.dtype, where: str) -> np.ndarray:
    kind = dtype_kind(dtype)
    if kind == "b":
        if type(node) is not bool:
            raise ExportError(f"{where}: a bool value must be true or false")
        return np.asarray(node, dtype)
    if kind in "iu":
        info = np.iinfo(dtype)
        if type(node) is not int or not info.min <= node <= info.max:
            raise ExportError(f"{where}: {node!r:.40} is not a {dtype.name} value")
        return np.asarray(node, dtype)
    if kind == "f":
        return np.asarray(_float_from(node, where)).astype(dtype)
    if not isinstance(node, list) or len(node) != 2:
        raise ExportError(f"{where}: a complex value must be a pair of floats")
    return np.asarray(complex(_float_from(node[0], where), _float_from(node[1], where))
                      ).astype(dtype)


# --------------------------------------------------------------------------- encoding

class Encoder:
    """Writes programs as JSON values; their constant arrays go into ``consts``
    (each distinct array once), referred to by index."""

    def __init__(self):
        self.consts: list[np.ndarray] = []
        self._index: dict[int, int] = {}
        self._keep: list = []   # the arrays indexed by id(): kept alive while encoding

    def const(self, value) -> int:
        key = id(value)
        k = self._index.get(key)
        if k is None:
            arr = np.asarray(getattr(value, "_value", value))
            dtype_name(arr.dtype)
            k = self._index[key] = len(self.consts)
            self.consts.append(arr if arr.flags.c_contiguous else arr.copy())
            self._keep.append(value)
        return k

    def closed(self, jaxpr: Jaxpr, consts) -> dict:
        """A program with constants: ``{"program": ..., "consts": [indices]}``; the
        constants are its constant variables (``jaxpr.constvars``)."""
        return {"program": self.program(jaxpr), "consts": [self.const(c) for c in consts]}

    def aval(self, aval) -> dict:
        return {"dtype": dtype_name(aval.dtype), "shape": [dim_json(d) for d in aval.shape]}

    def program(self, jaxpr: Jaxpr, depth: int = 0) -> dict:
        if depth > MAX_DEPTH:
            raise ExportError(f"sub-programs nested deeper than {MAX_DEPTH} levels")
        env: dict = {}
        count = [0]

        def define(v, scope):
            scope[v] = count[0]
            count[0] += 1
            return self.aval(v.aval)

        node = {"constvars": [define(v, env) for v in jaxpr.constvars],
                "invars": [define(v, env) for v in jaxpr.invars],
                "eqns": []}
        self._eqns(jaxpr.eqns, env, define, node["eqns"], depth)
        node["outvars"] = [self._atom(a, env) for a in jaxpr.outvars]
        return node

    def _atom(self, a, env):
        if type(a) is Literal:
            return {"literal": scalar_json(a.val, a.val.dtype), "dtype": dtype_name(a.val.dtype)}
        return env[a]

    def _eqns(self, eqns, env, define, out, depth):
        for eqn in eqns:
            prim = eqn.primitive
            if prim in _INLINED:
                # the body is closed: its own scope, its inputs bound to the call's atoms
                body = eqn.params["call_jaxpr"]
                inner_env = dict(zip(body.invars, (self._atom(a, env) for a in eqn.invars)))
                self._eqns(body.eqns, inner_env, define, out, depth)
                for v, a in zip(eqn.outvars, body.outvars):
                    env[v] = self._atom(a, inner_env)
                continue
            if prim.name in _NOT_EXPORTABLE:
                raise ExportError(f"the program uses '{prim.name}', which cannot be exported: "
                                  f"{_NOT_EXPORTABLE[prim.name]}")
            check_names(prim, eqn.params, f"exporting primitive '{prim.name}'")
            ins = [self._atom(a, env) for a in eqn.invars]
            params = {k: self._param(v, prim.name, k, depth) for k, v in sorted(eqn.params.items())}
            outs = [define(v, env) for v in eqn.outvars]
            out.append({"primitive": prim.name, "in": ins, "out": outs, "params": params})

    def _param(self, v, prim, key, depth):
        if depth > MAX_DEPTH:
            raise ExportError(f"parameter {key} of {prim} is nested too deeply")
        t = type(v)
        if v is None or t is bool or t is str:
            return v
        if t is int:
            return v
        if t is float:
            return {"float": float_json(v)}
        if t is complex:
            return {"complex": [float_json(v.real), float_json(v.imag)]}
        if t is tuple:
            return [self._param(x, prim, key, depth + 1) for x in v]
        if t is list:
            return {"list": [self._param(x, prim, key, depth + 1) for x in v]}
        if isinstance(v, DimExpr):
            return dim_json(v)
        if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
            return {"dtype": dtype_name(v)}
        if isinstance(v, np.generic):
            return {"scalar": scalar_json(v, v.dtype), "dtype": dtype_name(v.dtype)}
        if t is Jaxpr:
            return {"jaxpr": self.program(v, depth + 1)}
        if t is ClosedJaxpr:
            return {"closed_jaxpr": {"program": self.program(v.jaxpr, depth + 1),
                                     "consts": [self.const(c) for c in v.consts]}}
        if t is ShapedArray:
            return {"aval": self.aval(v)}
        what = "a Python function" if callable(v) else f"a {t.__name__}"
        raise ExportError(f"parameter {key!r} of primitive '{prim}' is {what} "
                          f"({v!r:.60}), which an exported program cannot hold")


# --------------------------------------------------------------------------- decoding

class Decoder:
    """Reads programs back.  ``env`` maps dimension variables to their sizes (None:
    keep them symbolic, for printing; the equations are then not type-checked)."""

    def __init__(self, consts, env, primitives=None):
        self.consts = consts
        self.env = env
        self.primitives = primitives if primitives is not None else all_primitives()

    # -- small pieces
    def _obj(self, node, keys, where, optional=()):
        if not isinstance(node, dict) or not set(keys) <= set(node) or \
                not set(node) <= set(keys) | set(optional):
            raise ExportError(f"{where}: expected an object with keys {sorted(keys)}, got "
                              f"{_brief(node)}")
        return node

    def _list(self, node, where, limit=10 ** 7):
        if not isinstance(node, list) or len(node) > limit:
            raise ExportError(f"{where}: expected a list, got {_brief(node)}")
        return node

    def int(self, node, where):
        """An integer, possibly a symbolic dimension."""
        if type(node) is int:
            if abs(node) > MAX_INT:
                raise ExportError(f"{where}: integer {node} is out of range")
            return node
        if isinstance(node, dict) and set(node) == {"dim"}:
            d = poly_from_json(node["dim"], where)
            if self.env is None:
                return d
            try:
                return d.evaluate(self.env)
            except KeyError as e:
                raise ExportError(f"{where}: the dimension variable {e} is not one of the "
                                  "program's") from None
        raise ExportError(f"{where}: expected an integer, got {_brief(node)}")

    def dtype(self, node, where):
        if node == "bfloat16":      # (ml_dtypes', imported when a program holds one)
            return dtypes.bfloat16_dtype()
        if not isinstance(node, str) or node not in DTYPES:
            raise ExportError(f"{where}: unknown dtype {node!r:.40}")
        return DTYPES[node]

    def aval(self, node, where):
        self._obj(node, ("dtype", "shape"), where)
        shape = tuple(self.int(d, f"{where}.shape") for d in self._list(node["shape"], where, 64))
        if self.env is not None and any(d < 0 for d in shape):
            raise ExportError(f"{where}: negative size in shape {shape}")
        return ShapedArray(shape, self.dtype(node["dtype"], where))

    def const(self, node, where):
        if type(node) is not int or not 0 <= node < len(self.consts):
            raise ExportError(f"{where}: constant {node!r:.20} is not in the constants table")
        return self.consts[node]

    def literal(self, node, where) -> Literal:
        self._obj(node, ("literal", "dtype"), where)
        dtype = self.dtype(node["dtype"], where)
        val = node["literal"]
        if isinstance(val, dict):   # a value that is a symbolic size, or its reciprocal
            self._obj(val, (), where, optional=("dim", "reciprocal"))
            if len(val) != 1:
                raise ExportError(f"{where}: malformed symbolic literal")
            (kind, poly), = val.items()
            n = self.int({"dim": poly}, where)
            if self.env is None:
                return _symbolic_literal(n if kind == "dim" else f"1/({n})", dtype)
            if kind == "dim":
                return Literal(np.asarray(float(n) if dtype_kind(dtype) in "fc" else n).astype(dtype))
            if n == 0:
                raise ExportError(f"{where}: 1/{poly} is a division by zero for these sizes")
            return Literal(np.asarray(1.0 / n).astype(dtype))
        return Literal(scalar_from_json(val, dtype, where))

    # -- programs
    def closed(self, node, where="program"):
        self._obj(node, ("program", "consts"), where)
        consts = [self.const(c, f"{where}.consts[{i}]")
                  for i, c in enumerate(self._list(node["consts"], where))]
        jaxpr = self.program(node["program"], f"{where}.program", 0)
        if len(consts) != len(jaxpr.constvars):
            raise ExportError(f"{where}: {len(jaxpr.constvars)} constant variables but "
                              f"{len(consts)} constants")
        for i, (v, c) in enumerate(zip(jaxpr.constvars, consts)):
            if self.env is not None and (tuple(c.shape) != v.aval.shape or c.dtype != v.aval.dtype):
                raise ExportError(f"{where}: constant {i} is {c.dtype}{list(c.shape)} but its "
                                  f"variable is {v.aval.str_short()}")
        return jaxpr, consts

    def program(self, node, where, depth) -> Jaxpr:
        if depth > MAX_DEPTH:
            raise ExportError(f"{where}: sub-programs nested deeper than {MAX_DEPTH} levels")
        self._obj(node, ("constvars", "invars", "eqns", "outvars"), where)
        vars_: list[Var] = []

        def define(aval_node, w):
            v = Var(self.aval(aval_node, w))
            vars_.append(v)
            return v

        def atom(a, w):
            if type(a) is int:
                if not 0 <= a < len(vars_):
                    raise ExportError(f"{w}: variable {a} is used before it is defined")
                return vars_[a]
            return self.literal(a, w)

        constvars = [define(a, f"{where}.constvars[{i}]")
                     for i, a in enumerate(self._list(node["constvars"], where))]
        invars = [define(a, f"{where}.invars[{i}]")
                  for i, a in enumerate(self._list(node["invars"], where))]
        eqns = []
        for i, e in enumerate(self._list(node["eqns"], where)):
            w = f"{where}.eqns[{i}]"
            self._obj(e, ("primitive", "in", "out", "params"), w)
            name = e["primitive"]
            prim = self.primitives.get(name) if isinstance(name, str) else None
            if prim is None or name in _NOT_EXPORTABLE or prim in _INLINED:
                raise ExportError(
                    f"{w}: unknown primitive {name!r:.60}: the program was written by a zerax "
                    "with primitives this one does not have (a newer version?), or is damaged")
            ins = [atom(a, f"{w}.in[{k}]") for k, a in enumerate(self._list(e["in"], w))]
            if not isinstance(e["params"], dict):
                raise ExportError(f"{w}.params: expected an object")
            params = {k: self.param(v, f"{w}.params.{k}", depth) for k, v in e["params"].items()}
            if self.env is not None:
                check_eqn(prim, params, [a.aval for a in ins], w)
            outs = [define(a, f"{w}.out[{k}]") for k, a in enumerate(self._list(e["out"], w))]
            if (len(outs) != 1) and not prim.multiple_results:
                raise ExportError(f"{w}: {name} has one output, the program lists {len(outs)}")
            eqns.append(Eqn(prim, ins, outs, params))
        outvars = [atom(a, f"{where}.outvars[{k}]")
                   for k, a in enumerate(self._list(node["outvars"], where))]
        jaxpr = Jaxpr(constvars, invars, outvars, eqns)
        if self.env is not None:
            _typecheck(jaxpr, where)
        return jaxpr

    def param(self, node, where, depth):
        if depth > MAX_DEPTH:
            raise ExportError(f"{where}: parameter values nested too deeply")
        if node is None or type(node) in (bool, str):
            return node
        if type(node) is int:
            return self.int(node, where)
        if isinstance(node, list):
            return tuple(self.param(x, where, depth + 1) for x in node)
        if not isinstance(node, dict) or not node:
            raise ExportError(f"{where}: unexpected parameter value {_brief(node)}")
        keys = set(node)
        if keys == {"dim"}:
            return self.int(node, where)
        if keys == {"float"}:
            return _float_from(node["float"], where)
        if keys == {"complex"}:
            pair = self._list(node["complex"], where, 2)
            if len(pair) != 2:
                raise ExportError(f"{where}: a complex value must be a pair of floats")
            return complex(_float_from(pair[0], where), _float_from(pair[1], where))
        if keys == {"list"}:
            return [self.param(x, where, depth + 1) for x in self._list(node["list"], where)]
        if keys == {"dtype"}:
            return self.dtype(node["dtype"], where)
        if keys == {"scalar", "dtype"}:
            dtype = self.dtype(node["dtype"], where)
            return scalar_from_json(node["scalar"], dtype, where)[()]
        if keys == {"jaxpr"}:
            return self.program(node["jaxpr"], where, depth + 1)
        if keys == {"closed_jaxpr"}:
            inner = self._obj(node["closed_jaxpr"], ("program", "consts"), where)
            consts = [self.const(c, where) for c in self._list(inner["consts"], where)]
            return ClosedJaxpr(self.program(inner["program"], where, depth + 1), consts)
        if keys == {"aval"}:
            return self.aval(node["aval"], where)
        raise ExportError(f"{where}: unknown parameter tag {sorted(keys)!r:.60}")


def _symbolic_literal(expr, dtype) -> Literal:
    """A literal whose value is a symbolic size (only to print a program): the printer
    shows ``val.item()`` and ``val.dtype``."""
    lit = Literal.__new__(Literal)
    lit.val = _SymbolicValue(expr, dtype)
    lit.aval = ShapedArray((), dtype)
    return lit


class _SymbolicValue:
    __slots__ = ("expr", "dtype")

    def __init__(self, expr, dtype):
        self.expr, self.dtype = expr, dtype

    def item(self):
        return self.expr


def _typecheck(jaxpr, where):
    try:
        typecheck(jaxpr)
    except ExportError:
        raise
    except Exception as e:  # a shape rule refusing malformed parameters, any kind of error
        raise ExportError(f"{where}: the program is not well typed ({type(e).__name__}: "
                          f"{str(e)[:300]})") from None


def _brief(node) -> str:
    text = repr(node)
    return text if len(text) < 80 else text[:77] + "..."
