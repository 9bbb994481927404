"""`zerax.tree`: the short names of JAX's ``jax.tree`` module for the pytree functions
of `zerax.tree_util` (``tree.map`` is ``tree_util.tree_map``, and so on).

>>> import zerax
>>> zerax.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (4, 6)}
>>> zerax.tree.leaves([1, (2, None)])
[1, 2]
"""

from ._src.core.tree import register_static as static
from ._src.core.tree import tree_all as all
from ._src.core.tree import tree_broadcast as broadcast
from ._src.core.tree import tree_flatten as flatten
from ._src.core.tree import tree_flatten_with_path as flatten_with_path
from ._src.core.tree import tree_leaves as leaves
from ._src.core.tree import tree_leaves_with_path as leaves_with_path
from ._src.core.tree import tree_map as map
from ._src.core.tree import tree_map_with_path as map_with_path
from ._src.core.tree import tree_reduce as reduce
from ._src.core.tree import tree_structure as structure
from ._src.core.tree import tree_transpose as transpose
from ._src.core.tree import tree_unflatten as unflatten

__all__ = [
           "all",
           "broadcast",
           "flatten",
           "flatten_with_path",
           "leaves",
           "leaves_with_path",
           "map",
           "map_with_path",
           "reduce",
           "static",
           "structure",
           "transpose",
           "unflatten",
]
