"""The argument and result structures of an exported program, as JSON.

Dicts, lists, tuples and None are written as they are; a named tuple or any other
registered pytree node is written by the name it was registered under for
serialisation (`register_pytree_node_serialization`, JAX's API), with its auxiliary data
as the bytes its ``serialize_auxdata`` gives (hex in the JSON).  Reading a node name that
this process has not registered is an `ExportError`: no class is ever looked up by a name
the file chooses.
"""

from __future__ import annotations

import collections

from ...core import tree
from ....errors import ExportError

_by_type: dict = {}    # type -> (serialized_name, serialize_aux, deserialize_aux, from_children)
_by_name: dict = {}    # serialized_name -> type


def register_pytree_node_serialization(nodetype, *, serialized_name: str,
                                       serialize_auxdata, deserialize_auxdata,
                                       from_children=None):
    """Make trees holding ``nodetype`` (a registered pytree node) serialisable in exported
    programs (JAX's ``jax.export.register_pytree_node_serialization``):
    ``serialize_auxdata(aux) -> bytes`` and ``deserialize_auxdata(bytes) -> aux``.
    Register it under the same name in the process that deserialises.

    >>> import zerax as zx
    >>> from zerax import export
    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> zx.tree_util.register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
    ...                                   lambda aux, c: Pair(*c))
    >>> _ = export.register_pytree_node_serialization(
    ...     Pair, serialized_name="doc.Pair", serialize_auxdata=lambda aux: b"",
    ...     deserialize_auxdata=lambda b: None)
    """
    if not isinstance(serialized_name, str) or not serialized_name:
        raise ExportError("serialized_name must be a non-empty string")
    if serialized_name in _by_name and _by_name[serialized_name] is not nodetype:
        raise ExportError(f"the serialized name {serialized_name!r} is already registered "
                          f"for {_by_name[serialized_name].__name__}")
    if tree._spec_for(nodetype) is None:
        raise ExportError(f"{nodetype.__name__} is not a pytree node: register it with "
                          "zerax.tree_util.register_pytree_node first")
    _by_type[nodetype] = (serialized_name, serialize_auxdata, deserialize_auxdata, from_children)
    _by_name[serialized_name] = nodetype
    return nodetype


def register_namedtuple_serialization(nodetype, *, serialized_name: str):
    """Make a ``NamedTuple`` class serialisable in exported programs (JAX's API).

    >>> from typing import NamedTuple
    >>> from zerax import export
    >>> class Point(NamedTuple):
    ...     x: float
    ...     y: float
    >>> _ = export.register_namedtuple_serialization(Point, serialized_name="doc.Point")
    """
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple)
            and hasattr(nodetype, "_fields")):
        raise ExportError(f"{nodetype!r} is not a NamedTuple class")
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name,
        serialize_auxdata=lambda aux: b"", deserialize_auxdata=lambda b: None)


def _key_json(k):
    if type(k) is str:
        return k
    if type(k) is int:
        return {"int": k}
    raise ExportError(f"a dict key {k!r:.40} of type {type(k).__name__} cannot be "
                      "serialised (keys must be str or int)")


def tree_json(td) -> dict:
    """``td`` (a PyTreeDef) as JSON."""
    t = td._type
    kids = [tree_json(c) for c in td._children]
    if t is None:
        return {"leaf": None}
    if t is type(None):
        return {"none": None}
    if t is tuple:
        return {"tuple": kids}
    if t is list:
        return {"list": kids}
    if t is dict or t is collections.OrderedDict:
        tag = "dict" if t is dict else "ordered_dict"
        return {tag: {"keys": [_key_json(k) for k in td._aux], "children": kids}}
    reg = _by_type.get(t)
    if reg is None:
        aux = _aux_json(td._aux)
        if aux is not _NOT_JSON and t in tree._REGISTRY:
            return {"node": {"class": _class_name(t), "aux": aux, "children": kids}}
        raise ExportError(
            f"the arguments or results hold a {t.__name__} node whose auxiliary data "
            f"({str(td._aux)[:80]}) is not plain data, so it cannot be serialised: register "
            "it with zerax.export.register_pytree_node_serialization (or "
            "register_namedtuple_serialization), in this process and the one that loads it, "
            "or pass/return plain dicts, lists and tuples")
    aux = td._aux
    raw = reg[1](aux)
    if not isinstance(raw, (bytes, bytearray)):
        raise ExportError(f"serialize_auxdata of {reg[0]!r} returned {type(raw).__name__}, "
                          "not bytes")
    return {"custom": {"name": reg[0], "aux": bytes(raw).hex(), "children": kids}}


def tree_from_json(node, where="tree", depth=0):
    """The PyTreeDef written by `tree_json`."""
    if depth > 200:
        raise ExportError(f"{where}: nested too deeply")
    if not isinstance(node, dict) or len(node) != 1:
        raise ExportError(f"{where}: malformed tree node {str(node)[:60]}")
    (tag, body), = node.items()

    def kids(lst):
        if not isinstance(lst, list):
            raise ExportError(f"{where}: the children of a {tag} node must be a list")
        return [tree_from_json(c, where, depth + 1) for c in lst]

    if tag == "leaf" and body is None:
        return tree.tree_structure(0)
    if tag == "none" and body is None:
        return tree.tree_structure(None)
    if tag in ("tuple", "list"):
        t = tuple if tag == "tuple" else list
        return tree.PyTreeDef(t, None, kids(body), tree._spec_for(t))
    if tag in ("dict", "ordered_dict"):
        if not isinstance(body, dict) or set(body) != {"keys", "children"} or \
                not isinstance(body["keys"], list):
            raise ExportError(f"{where}: malformed {tag} node")
        keys = []
        for k in body["keys"]:
            if type(k) is str:
                keys.append(k)
            elif isinstance(k, dict) and set(k) == {"int"} and type(k["int"]) is int:
                keys.append(k["int"])
            else:
                raise ExportError(f"{where}: malformed dict key {str(k)[:40]}")
        children = kids(body["children"])
        if len(keys) != len(children) or len(set(keys)) != len(keys):
            raise ExportError(f"{where}: a {tag} node's keys and children do not match")
        t = dict if tag == "dict" else collections.OrderedDict
        if t is dict and keys != list(tree._sorted_keys(keys)):
            raise ExportError(f"{where}: a dict node's keys are not in sorted order")
        return tree.PyTreeDef(t, tuple(keys), children, tree._spec_for(t))
    if tag == "node":
        if not isinstance(body, dict) or set(body) != {"class", "aux", "children"} or \
                not isinstance(body["class"], str):
            raise ExportError(f"{where}: malformed node")
        t = _registered_class(body["class"])
        if t is None:
            raise ExportError(
                f"{where}: the exported program's arguments or results hold a "
                f"{body['class']!r:.80} node, a class this process has not defined (it is "
                "looked up among the pytree node classes already registered, never "
                "imported): import the module that defines it before deserialize")
        return tree.PyTreeDef(t, _aux_from_json(body["aux"], where), kids(body["children"]),
                              tree._spec_for(t))
    if tag == "custom":
        if not isinstance(body, dict) or set(body) != {"name", "aux", "children"} or \
                not isinstance(body["name"], str) or not isinstance(body["aux"], str):
            raise ExportError(f"{where}: malformed custom node")
        t = _by_name.get(body["name"])
        if t is None:
            raise ExportError(
                f"{where}: the exported program's arguments or results hold a node "
                f"serialised as {body['name']!r:.60}, which is not registered in this process: "
                "call zerax.export.register_pytree_node_serialization for it before "
                "deserialize")
        try:
            raw = bytes.fromhex(body["aux"])
            aux = _by_type[t][2](raw)
        except Exception as e:  # the user's deserialize_auxdata, on untrusted bytes
            raise ExportError(f"{where}: the auxiliary data of {body['name']!r} does not "
                              f"deserialise ({type(e).__name__}: {e})") from None
        return tree.PyTreeDef(t, aux, kids(body["children"]), tree._spec_for(t))
    raise ExportError(f"{where}: unknown tree node {tag!r:.40}")


_NOT_JSON = object()
_KEYS = {tree.GetAttrKey: ("attr", "name"), tree.DictKey: ("key", "key"),
         tree.SequenceKey: ("index", "idx"), tree.FlattenedIndexKey: ("flat", "key")}


def _class_name(t) -> str:
    return f"{t.__module__}.{t.__qualname__}"


def _registered_class(name: str):
    """The pytree node class of this process named ``module.qualname`` (None if there
    is none, or several)."""
    found = [t for t in tree._REGISTRY if _class_name(t) == name]
    return found[0] if len(found) == 1 else None


def _aux_json(aux, depth=0):
    """The auxiliary data of a registered node (a ``zerax.nn`` Module's field names and
    static fields) as tagged JSON, when it is plain data; else ``_NOT_JSON``."""
    if depth > 20:
        return _NOT_JSON
    t = type(aux)
    if aux is None or t in (bool, int, str):
        return aux
    if t is float:
        return {"float": aux.hex()}
    if t in (tuple, list):
        items = [_aux_json(a, depth + 1) for a in aux]
        if any(i is _NOT_JSON for i in items):
            return _NOT_JSON
        return items if t is tuple else {"list": items}
    if t in _KEYS:
        tag, field = _KEYS[t]
        inner = _aux_json(getattr(aux, field), depth + 1)
        return _NOT_JSON if inner is _NOT_JSON else {tag: inner}
    return _NOT_JSON


def _aux_from_json(node, where, depth=0):
    if depth > 20:
        raise ExportError(f"{where}: a node's auxiliary data is nested too deeply")
    if node is None or type(node) in (bool, int, str):
        return node
    if isinstance(node, list):
        return tuple(_aux_from_json(a, where, depth + 1) for a in node)
    if isinstance(node, dict) and len(node) == 1:
        (tag, body), = node.items()
        if tag == "float" and isinstance(body, str):
            try:
                return float.fromhex(body)
            except (ValueError, OverflowError):
                pass
        elif tag == "list":
            if isinstance(body, list):
                return [_aux_from_json(a, where, depth + 1) for a in body]
        else:
            for cls, (name, _) in _KEYS.items():
                if tag == name:
                    return cls(_aux_from_json(body, where, depth + 1))
    raise ExportError(f"{where}: malformed auxiliary data {str(node)[:60]}")


def leaf_names(in_tree) -> list[str]:
    """``args[0]``, ``args[1]['w']``, ``kwargs['x']``... for each leaf of an exported
    function's ``(args, kwargs)`` tree (for error messages)."""
    paths, _ = tree.tree_flatten_with_path(in_tree.unflatten(range(in_tree.num_leaves)))
    names = []
    for path, _ in paths:
        if not path:
            names.append("args")
            continue
        head, rest = path[0], path[1:]
        base = "args" if getattr(head, "idx", None) == 0 else "kwargs"
        names.append(base + "".join(str(k) for k in rest))
    return names
