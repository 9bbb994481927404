"""`to_onnx`: a zerax program as an ONNX model (built with the ``onnx`` package's helper
API, checked with ``onnx.checker``).

The function is traced at the example arguments' shapes; each equation is written by its
primitive's rule in the ``onnx`` rule table (``onnx_rules``, ``onnx_control``); a
primitive without an ONNX counterpart declares why (``unsupported["onnx"]``) and is
named in the error.  Arguments become graph inputs (close over parameters to make them
initializers), results graph outputs, in the order of their pytrees.  ``onnx`` is an
optional dependency (``pip install zerax[onnx]``), imported only here.
"""

from __future__ import annotations

import numpy as np

from ...base.config import __version__
from ...core.api_util import as_input
from ...core.avals import ShapedArray
from ...core.core import get_aval
from ...core.shape_poly import DimExpr
from ...ir.ir import Jaxpr, Literal
from ..jit import JitFunction, jit
from ....errors import ExportError, MissingDependencyError, NotSupportedError
from . import onnx_contract, onnx_control, onnx_indexing  # noqa: F401  (rules join the table)
from .onnx_rules import onnx_rules
from .trees import leaf_names
from ...base.dtypes import kind as dtype_kind

DEFAULT_OPSET = 17
MIN_OPSET = 13


def _onnx():
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError:
        raise MissingDependencyError(
            "zerax.export.to_onnx needs the onnx package: pip install 'zerax[onnx]' (or "
            "pip install onnx onnxruntime)") from None
    return onnx, helper, numpy_helper


class Graph:
    """An ONNX graph being written: its nodes, and (for the main graph) initializers.
    Subgraphs (the bodies of If and Loop) read the values of enclosing graphs by name."""

    def __init__(self, ctx, parent=None):
        self.ctx, self.parent = ctx, parent
        self.nodes: list = []

    def node(self, op, inputs, n_out=1, **attrs):
        outs = [self.ctx.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(self.ctx.helper.make_node(op, list(inputs), outs,
                                                    name=self.ctx.fresh("n"), **attrs))
        return outs if n_out != 1 else outs[0]


class Context:
    """The state of one export: fresh names, constants (initializers of the main graph),
    the graph being written, the producer of each value (for peephole rules)."""

    def __init__(self, helper, numpy_helper, opset):
        self.helper, self.numpy_helper, self.opset = helper, numpy_helper, opset
        self._count = 0
        self.initializers: list = []
        self._consts: dict = {}
        self.graph = Graph(self)
        self.producer: dict = {}   # value name -> (eqn, input names)
        self.aval: dict = {}       # value name -> ShapedArray

    def fresh(self, prefix="v") -> str:
        self._count += 1
        return f"{prefix}_{self._count}"

    def node(self, op, inputs, n_out=1, **attrs):
        return self.graph.node(op, inputs, n_out, **attrs)

    def const(self, value, dtype=None) -> str:
        """An initializer holding ``value`` (shared by equal small constants)."""
        arr = np.asarray(value, dtype) if dtype is not None else np.asarray(value)
        key = None
        if arr.size <= 16:
            key = (arr.dtype.str, arr.shape, arr.tobytes())
            hit = self._consts.get(key)
            if hit is not None:
                return hit
        name = self.fresh("c")
        if arr.dtype.kind == "b" or dtype_kind(arr.dtype) in "iuf":
            self.initializers.append(self.numpy_helper.from_array(arr.copy(),
                                                                  name))
        else:
            raise ExportError(f"to_onnx: constants of dtype {arr.dtype} have no ONNX type here")
        if key is not None:
            self._consts[key] = name
        return name

    def ints(self, values) -> str:
        """A 1-d int64 constant (shapes, axes, pads)."""
        return self.const(np.asarray(list(values), np.int64).reshape(-1))

    def onnx_type(self, dtype) -> int:
        dtype = np.dtype(dtype)
        if dtype.kind == "c":
            raise ExportError(f"to_onnx: complex values ({dtype}) are not supported: "
                              "onnxruntime computes no complex arithmetic")
        return self.helper.np_dtype_to_tensor_dtype(dtype)

    def value_info(self, name, aval):
        return self.helper.make_tensor_value_info(name, self.onnx_type(aval.dtype),
                                                  list(aval.shape))

    # -- programs
    def lower(self, jaxpr, consts, in_names):
        """Write ``jaxpr``'s equations into the current graph; ``consts`` are values for
        its constvars (arrays), ``in_names`` the names of its inputs.  Returns the
        names of its outputs."""
        env = {}
        for v, c in zip(jaxpr.constvars, consts):
            env[v] = self.const(np.asarray(getattr(c, "_value", c)))
            self.aval[env[v]] = v.aval
        for v, n in zip(jaxpr.invars, in_names):
            env[v] = n
            self.aval.setdefault(n, v.aval)

        def read(a):
            if type(a) is Literal:
                name = self.const(np.asarray(a.val))
                self.aval[name] = a.aval
                return name
            return env[a]

        for eqn in jaxpr.eqns:
            rule = onnx_rules.get(eqn.primitive)
            if rule is None:
                reason = eqn.primitive.unsupported.get("onnx", "it has no ONNX rule")
                src = f" (at {eqn.source})" if eqn.source else ""
                raise NotSupportedError(
                    f"to_onnx: the program uses '{eqn.primitive.name}'{src}, which has no ONNX "
                    f"counterpart: {reason}.")
            ins = [read(a) for a in eqn.invars]
            outs = rule(self, eqn, ins)
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            for v, n in zip(eqn.outvars, outs):
                env[v] = n
                self.aval[n] = v.aval
                self.producer[n] = (eqn, ins)
        return [read(a) for a in jaxpr.outvars]

    def subgraph(self, name, inputs, body):
        """A GraphProto: ``inputs`` (name, aval) pairs; ``body(graph_inputs)`` writes
        nodes and returns [(value name, aval)] outputs (Identity-copied, so that every
        output is produced inside)."""
        outer, self.graph = self.graph, Graph(self, self.graph)
        try:
            in_names = [self.fresh("in") for _ in inputs]
            for n, (_, aval) in zip(in_names, inputs):
                self.aval[n] = aval
            outs = body(in_names)
            out_names = [self.node("Identity", [n]) for n, _ in outs]
            graph = self.helper.make_graph(
                self.graph.nodes, name,
                [self.value_info(n, a) for n, (_, a) in zip(in_names, inputs)],
                [self.value_info(n, a) for n, (_, a) in zip(out_names, outs)])
        finally:
            self.graph = outer
        return graph


def _example_aval(x):
    if hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "_value") and \
            not isinstance(x, np.ndarray):
        if any(isinstance(d, DimExpr) for d in x.shape):
            raise ExportError("to_onnx takes concrete shapes (symbolic dimensions are for "
                              "zerax.export.export); give an example of the batch size")
        return ShapedArray(tuple(int(d) for d in x.shape), np.dtype(x.dtype))
    return get_aval(as_input(x, "an example argument of to_onnx"))


def to_onnx(fun, *example_args, opset: int = DEFAULT_OPSET, model_name: str | None = None,
            **example_kwargs) -> bytes:
    """The ONNX model (serialised ``ModelProto`` bytes) of ``fun`` at the shapes and
    dtypes of the example arguments (arrays or `ShapeDtypeStruct`), validated with
    ``onnx.checker``.  Array arguments become graph inputs, in pytree order (names
    ``args_0``, ``kwargs_x``...); results become outputs ``out_0``...  Values ``fun``
    closes over (a model's weights) become initializers.  ``opset`` >= 13.

    >>> import zerax.numpy as znp
    >>> from zerax import export
    >>> model = export.to_onnx(lambda x: znp.tanh(x) * 2.0, znp.zeros(3, "float32"))
    >>> model[:2]   # doctest: +SKIP
    b'\\x08\\x08'
    """
    onnx, helper, numpy_helper = _onnx()
    if type(opset) is not int or not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise ExportError(f"to_onnx: opset must be an int from {MIN_OPSET} to "
                          f"{onnx.defs.onnx_opset_version()} (this onnx), got {opset!r}")
    jitted = fun if isinstance(fun, JitFunction) else jit(fun)
    name = model_name or jitted.name
    jaxpr, consts, in_tree, out_tree = jitted.trace_abstract(
        example_args, example_kwargs, _example_aval)
    n_consts = len(consts)
    ctx = Context(helper, numpy_helper, opset)
    paths = leaf_names(in_tree)
    in_names = [_sanitize(p) for p in paths]
    in_avals = [v.aval for v in jaxpr.invars[n_consts:]]
    body = _with_constvars(jaxpr, n_consts)
    outs = ctx.lower(body, consts, in_names)
    for i, o in enumerate(outs):   # outputs named out_0, out_1... in pytree order
        ctx.graph.nodes.append(helper.make_node("Identity", [o], [f"out_{i}"],
                                                name=ctx.fresh("n")))
    nodes, inits = _prune(ctx.graph.nodes, ctx.initializers, [f"out_{i}" for i in range(len(outs))])
    graph = helper.make_graph(
        nodes, _sanitize(name),
        [ctx.value_info(n, a) for n, a in zip(in_names, in_avals)],
        [helper.make_tensor_value_info(f"out_{i}", ctx.onnx_type(v.aval.dtype),
                                       list(v.aval.shape))
         for i, v in enumerate(jaxpr.outvars)],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="zerax", producer_version=__version__)
    model.ir_version = min(model.ir_version, _max_ir_version(onnx, opset))
    try:
        onnx.checker.check_model(model, full_check=True)
    except onnx.checker.ValidationError as e:
        raise ExportError(f"to_onnx: the ONNX model of {name} does not validate (a zerax "
                          f"bug, please report it): {str(e)[:500]}") from None
    return model.SerializeToString()


def _names_used(node) -> set:
    """The value names a node reads, its subgraphs' reads included."""
    used = set(node.input)
    for attr in node.attribute:
        graphs = list(attr.graphs) + ([attr.g] if attr.HasField("g") else [])
        for g in graphs:
            for n in g.node:
                used |= _names_used(n)
    return used


def _prune(nodes, initializers, outputs):
    """The nodes some output depends on (a rule may leave one unused: the window
    patches a convolution rule replaced), and the initializers they read."""
    needed, kept = set(outputs), []
    for node in reversed(nodes):
        if any(o in needed for o in node.output):
            kept.append(node)
            needed |= _names_used(node)
    kept.reverse()
    return kept, [t for t in initializers if t.name in needed]


def _max_ir_version(onnx, opset):
    """The IR version that goes with ``opset`` (what onnxruntime releases accept)."""
    for ir, op in ((8, 17), (9, 19), (10, 21)):
        if opset <= op:
            return ir
    return onnx.IR_VERSION


def _sanitize(text: str) -> str:
    out = "".join(c if c.isalnum() else "_" for c in text)
    while "__" in out:
        out = out.replace("__", "_")
    return out.strip("_") or "value"


def _with_constvars(jaxpr, n):
    return Jaxpr(jaxpr.invars[:n], jaxpr.invars[n:], jaxpr.outvars, jaxpr.eqns)
