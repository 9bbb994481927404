"""`zerax.optim`: optax's API and numerics on zerax, plus second-order optimisers.

An optax user ports with ``import zerax.optim as optax``: the same gradient
transformations, aliases, schedules, losses and state structures (NamedTuples with
optax's field names), giving optax's numbers.  Beyond optax: Newton-CG, Hessian-free,
Gauss-Newton, Levenberg-Marquardt, AdaHessian and Sophia built on Hessian-vector
products (``zerax.jvp(zerax.grad(f))``), and Halley/Householder root finding and line
search on derivatives from Taylor mode (``zerax.taylor``).

>>> import zerax as zx, zerax.numpy as znp, zerax.optim as optim
>>> loss = lambda p: znp.sum((p["w"] - 3.0) ** 2)
>>> opt = optim.adam(0.1)
>>> params = {"w": znp.zeros(2)}
>>> state = opt.init(params)
>>> for _ in range(3):
...     updates, state = opt.update(zx.grad(loss)(params), state, params)
...     params = optim.apply_updates(params, updates)
>>> params["w"].round(4).tolist()
[0.2996, 0.2996]
"""

from typing import Any, Callable

from . import contrib, losses, schedules, tree, tree_utils  # noqa: F401
from . import projections, second_order, transforms  # noqa: F401  (optax's submodules)
from ._accumulation import (AddDecayedWeightsState, AddNoiseState, ApplyEvery, EmaState, TraceState, NonNegativeParamsState, WeightDecaySchedule, ZeroNansState, adaptive_grad_clip, add_decayed_weights, add_noise, apply_every, clip, clip_by_block_rms, clip_by_global_norm, ema, keep_params_nonnegative, per_example_global_norm_clip, trace, unitwise_clip, unitwise_norm, zero_nans)
from ._alias import (adabelief, adadelta, adafactor, adagrad, adam, adamax, adamaxw, adamw, adan, amsgrad, fromage, lamb, lars, lion, nadam, nadamw, noisy_sgd, novograd, optimistic_adam_v2, optimistic_gradient_descent, polyak_sgd, radam, rmsprop, rprop, sgd, sign_sgd, signum, sm3, yogi)
from ._base import (EmptyState, GradientTransformation, GradientTransformationExtraArgs, NO_PARAMS_MSG, OptState, Params, Schedule, ScalarOrSchedule, Updates, apply_updates, chain, identity, incremental_update, init_empty_state, named_chain, periodic_update, safe_increment, safe_int32_increment, safe_norm, safe_root_mean_squares, set_to_zero, stateless, stateless_with_tree_map, with_extra_args_support)
from ._transform_more import (FactoredState, ScaleByNovogradState, ScaleByOptimisticGradientState, ScaleBySM3State, scale_by_factored_rms, scale_by_novograd, scale_by_optimistic_gradient, scale_by_polyak, scale_by_sm3)
from ._transform import (ScaleByAdaDeltaState, ScaleByAdamState, ScaleByAdanState, ScaleByAmsgradState, ScaleByBeliefState, ScaleByLionState, ScaleByRmsState, ScaleByRmsWithCountState, ScaleByRpropState, ScaleByRssState, ScaleByRStdDevState, ScaleByRStdDevWithCountState, ScaleByScheduleState, centralize, normalize_by_update_norm, scale, scale_by_adadelta, scale_by_adam, scale_by_adamax, scale_by_adan, scale_by_amsgrad, scale_by_belief, scale_by_learning_rate, scale_by_lion, scale_by_param_block_norm, scale_by_param_block_rms, scale_by_radam, scale_by_rms, scale_by_rprop, scale_by_rss, scale_by_schedule, scale_by_sign, scale_by_stddev, scale_by_trust_ratio, scale_by_yogi)
from ._wrappers import (ApplyIfFiniteState, ConditionallyMaskState, ConditionallyTransformState, LookaheadParams, LookaheadState, MaskedNode, MaskedState, MultiSteps, MultiStepsState, MultiTransformState, PartitionState, apply_if_finite, conditionally_mask, conditionally_transform, lookahead, masked, multi_transform, partition, skip_large_updates, skip_not_finite)
from ._wrappers import flatten, freeze, scale_gradient, selective_transform  # noqa: F401
from .schedules import (InjectHyperparamsState, InjectStatefulHyperparamsState, WrappedSchedule, constant_schedule, cosine_decay_schedule, cosine_onecycle_schedule, exponential_decay, inject_hyperparams, inject_stateful_hyperparams, join_schedules, linear_onecycle_schedule, linear_schedule, piecewise_constant_schedule, piecewise_interpolate_schedule, polynomial_schedule, sgdr_schedule, warmup_constant_schedule, warmup_cosine_decay_schedule, warmup_exponential_decay_schedule)
from ._linesearch import (BacktrackingLinesearchInfo, ScaleByBacktrackingLinesearchState, ScaleByZoomLinesearchState, ZoomLinesearchInfo, ZoomLinesearchState, scale_by_backtracking_linesearch, scale_by_zoom_linesearch, value_and_grad_from_state, zoom_linesearch)
from ._lbfgs import ScaleByLBFGSState, lbfgs, scale_by_lbfgs  # noqa: F401
from ._second_order import (GaussNewtonState, HessianFreeState, LevenbergMarquardtState, NewtonCGState, gauss_newton, hessian_free, levenberg_marquardt, newton_cg)
from ._hutchinson import AdaHessianState, SophiaState, adahessian, sophia  # noqa: F401
from ._halley import (HouseholderResult, ScaleByHalleyLinesearchState, householder_root,  # noqa: F401
                      scale_by_halley_linesearch)
from .losses import (convex_kl_divergence, cosine_distance, cosine_similarity, ntxent, hinge_loss, huber_loss, kl_divergence, l2_loss, log_cosh, safe_softmax_cross_entropy, sigmoid_binary_cross_entropy, sigmoid_focal_loss, smooth_labels, softmax_cross_entropy, softmax_cross_entropy_with_integer_labels, squared_error)
from .tree_utils import tree_l2_norm as global_norm  # noqa: F401
from .tree_utils import (tree_bias_correction as bias_correction, tree_update_infinity_moment as update_infinity_moment, tree_update_moment as update_moment, tree_update_moment_per_elem_norm as update_moment_per_elem_norm)
from ._wrappers import ShouldSkipUpdateFunction  # noqa: F401

# optax's names of the empty states of stateless transformations
ScaleState = ClipState = ClipByGlobalNormState = AdaptiveGradClipState = EmptyState
ScaleByTrustRatioState = EmptyState
TransformInitFn = TransformUpdateFn = TransformUpdateExtraArgsFn = Callable
MaskOrFn = Any
