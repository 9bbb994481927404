"""`zerax.nn`: activation functions and attention (JAX's `jax.nn` names), networks as
immutable pytrees with Equinox's API (`Module`, layers, filtered transforms, `State`), and
`zerax.nn.initializers` (JAX's). ``import zerax.nn as eqx`` replaces
``import equinox as eqx``: this module is also its ``eqx.nn`` (``zerax.nn.nn``).

>>> import zerax as zx, zerax.nn as nn, zerax.random as zr, zerax.numpy as znp
>>> mlp = nn.MLP(2, 1, width_size=4, depth=1, key=zr.key(0))
>>> zx.vmap(mlp)(znp.ones((3, 2), dtype="float32")).shape
(3, 1)
"""

import sys as _sys

from ._activations import *  # noqa: F401,F403
from ._activations import __all__ as _activations_all
from . import initializers  # noqa: F401
from ._module import AbstractClassVar, AbstractVar, BoundMethod, Module, Partial, field, module_update_wrapper, static_field
from ._filters import (apply_updates, combine, filter, is_array, is_array_like, is_inexact_array, is_inexact_array_like, partition)
from ._tree import (inference_mode, tree_at, tree_check, tree_equal, tree_flatten_one_level, tree_pformat, tree_pprint)
from ._transforms import (clear_caches, filter_checkpoint, filter_grad, filter_jit, filter_pmap, filter_value_and_grad, filter_vmap, if_array)
from ._state import State, StateIndex, delete_init_state, make_with_state
from ._linear import MLP, Identity, Lambda, Linear, Sequential, StatefulLayer
from ._conv import (Conv, Conv1d, Conv2d, Conv3d, ConvTranspose, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
from ._pool import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AdaptivePool, AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d, Pool)
from ._norm import BatchNorm, GroupNorm, LayerNorm, RMSNorm
from ._misc import Dropout, Embedding, PReLU, RotaryPositionalEmbedding
from ._attention import GRUCell, LSTMCell, MultiheadAttention, dot_product_attention_weights
from ._summary import count_params, summary
from ._custom import filter_closure_convert, filter_custom_jvp, filter_custom_vjp, filter_make_jaxpr
from ._reparam import Shared, SharedNode, SpectralNorm, WeightNorm
from ._transforms_ad import (filter_hessian, filter_jacfwd, filter_jacrev, filter_jvp, filter_vjp)
from ._serialise import (default_deserialise_filter_spec, default_serialise_filter_spec, filter_eval_shape, tree_deserialise_leaves, tree_serialise_leaves)

__all__ = list(_activations_all) + [
    "initializers",
    "Module", "AbstractVar", "AbstractClassVar", "field", "static_field", "BoundMethod",
    "module_update_wrapper",
    "is_array", "is_array_like", "is_inexact_array", "is_inexact_array_like", "filter",
    "partition", "combine", "tree_at", "inference_mode", "apply_updates", "tree_equal",
    "tree_check", "tree_flatten_one_level", "tree_pformat", "tree_pprint", "nn",
    "filter_jit", "filter_grad", "filter_value_and_grad", "filter_vmap", "if_array",
    "filter_checkpoint", "filter_pmap", "clear_caches",
    "State", "StateIndex", "make_with_state", "delete_init_state",
    "Linear", "Identity", "MLP", "Sequential", "Lambda", "StatefulLayer",
    "Conv", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d",
    "Pool", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "AdaptivePool", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    "LayerNorm", "RMSNorm", "GroupNorm", "BatchNorm", "SpectralNorm", "WeightNorm", "Shared",
    "SharedNode",
    "Dropout", "Embedding", "PReLU", "RotaryPositionalEmbedding",
    "MultiheadAttention", "GRUCell", "LSTMCell", "dot_product_attention_weights",
    "summary", "count_params",
    "tree_serialise_leaves", "tree_deserialise_leaves", "default_serialise_filter_spec",
    "default_deserialise_filter_spec", "filter_eval_shape",
    "filter_custom_jvp", "filter_custom_vjp", "filter_make_jaxpr", "filter_closure_convert",
    "Partial", "filter_jvp", "filter_vjp", "filter_jacfwd", "filter_jacrev", "filter_hessian",
]

# `import zerax.nn as eqx` replaces `import equinox as eqx`: Equinox's top level (eqx.Module,
# eqx.filter_jit, eqx.tree_at...) and its `eqx.nn` (eqx.nn.Linear...) are both this module.
nn = _sys.modules[__name__]
