"""`zerax.optim.transforms`: optax's ``optax.transforms`` module (``from optax import
transforms`` ports as ``from zerax.optim import transforms``): the gradient
transformations that are not optimisers by themselves (clipping, accumulation, noise,
masking and other wrappers), the same objects as at the top of `zerax.optim`.

>>> from zerax.optim import transforms
>>> import zerax.numpy as znp
>>> tx = transforms.chain(transforms.clip(1.0), transforms.trace(decay=0.5))
>>> tx.update(znp.asarray([3.0]), tx.init(znp.zeros(1)))[0].tolist()
[1.0]
"""

from typing import Any, Callable

from ._accumulation import (AddNoiseState, EmaState, NonNegativeParamsState, TraceState, ZeroNansState, adaptive_grad_clip, add_decayed_weights, add_noise, clip, clip_by_block_rms, clip_by_global_norm, ema, keep_params_nonnegative, per_example_global_norm_clip, trace, unitwise_clip, unitwise_norm, zero_nans)
from ._base import chain, named_chain
from ._wrappers import (ApplyIfFiniteState, ConditionallyMaskState, ConditionallyTransformState, MaskedNode, MaskedState, MultiSteps, MultiStepsState, PartitionState, ShouldSkipUpdateFunction, apply_if_finite, conditionally_mask, conditionally_transform, flatten, freeze, masked, partition, selective_transform, skip_large_updates, skip_not_finite)

ConditionFn = Callable[[Any], Any]   # (optax's type of conditionally_transform's should_transform_fn)

__all__ = [
    "AddNoiseState", "ApplyIfFiniteState", "ConditionFn", "ConditionallyMaskState",
    "ConditionallyTransformState", "EmaState", "MaskedNode", "MaskedState", "MultiSteps",
    "MultiStepsState", "NonNegativeParamsState", "PartitionState", "ShouldSkipUpdateFunction",
    "TraceState", "ZeroNansState", "adaptive_grad_clip", "add_decayed_weights", "add_noise",
    "apply_if_finite", "chain", "clip", "clip_by_block_rms", "clip_by_global_norm",
    "conditionally_mask", "conditionally_transform", "ema", "flatten", "freeze",
    "keep_params_nonnegative", "masked", "named_chain", "partition",
    "per_example_global_norm_clip", "selective_transform", "skip_large_updates",
    "skip_not_finite", "trace", "unitwise_clip", "unitwise_norm", "zero_nans",
]
