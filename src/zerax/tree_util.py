"""Public pytree utilities: re-exports of :mod:`zerax._src.core.tree`.

>>> from zerax import tree_util
>>> tree_util.tree_map(lambda x: x + 1, (1, [2]))
(2, [3])
"""

from ._src.core.tree import (DictKey, FlattenedIndexKey, GetAttrKey, Partial, PyTreeDef, SequenceKey, all_leaves, keystr, register_dataclass, register_pytree_node, register_pytree_node_class, register_pytree_with_keys, register_pytree_with_keys_class, tree_all, tree_flatten, tree_flatten_with_path, tree_leaves, tree_leaves_with_path, tree_map, tree_map_with_path, tree_reduce, tree_structure, tree_transpose, tree_unflatten, treedef_is_leaf)

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "tree_all",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_is_leaf",
]
