"""optax's optimiser aliases: chains of the ``scale_by_*`` transformations with optax's
signatures and defaults (``sgd``, ``adam``, ``adamw``, ... ``polyak_sgd``).

>>> import zerax.numpy as znp, zerax.optim as optim
>>> opt = optim.sgd(0.1, momentum=0.9)
>>> updates, state = opt.update({"w": znp.ones(2)}, opt.init({"w": znp.zeros(2)}))
>>> updates["w"].tolist()
[-0.1, -0.1]
"""

from __future__ import annotations

import functools
from typing import Any, Optional

from ._accumulation import add_decayed_weights, add_noise, ema, trace
from ._accumulation import clip_by_block_rms
from ._base import GradientTransformationExtraArgs, chain, identity
from ._transform import (scale, scale_by_adadelta, scale_by_adam, scale_by_adamax, scale_by_adan, scale_by_amsgrad, scale_by_belief, scale_by_learning_rate, scale_by_lion, scale_by_param_block_rms, scale_by_radam, scale_by_rms, scale_by_rprop, scale_by_rss, scale_by_sign, scale_by_stddev, scale_by_trust_ratio, scale_by_yogi)
from ._transform_more import (scale_by_factored_rms, scale_by_novograd, scale_by_optimistic_gradient, scale_by_polyak, scale_by_sm3)
from ._wrappers import masked

GTX = GradientTransformationExtraArgs


def sgd(learning_rate: Any, momentum: Optional[Any] = None, nesterov: bool = False,
        accumulator_dtype: Optional[Any] = None) -> GTX:
    """Stochastic gradient descent, with optional (Nesterov) momentum.

    >>> import zerax.numpy as znp
    >>> float(sgd(0.5).update(znp.asarray(2.0), sgd(0.5).init(0.0))[0])
    -1.0
    """
    opt = (trace(decay=momentum, nesterov=nesterov, accumulator_dtype=accumulator_dtype)
           if momentum is not None else identity())
    return chain(opt, scale_by_learning_rate(learning_rate))


def adam(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8,
         eps_root: Any = 0.0, mu_dtype: Optional[Any] = None, *, nesterov: bool = False) -> GTX:
    """Adam (Kingma & Ba): bias-corrected first and second moments.

    >>> import zerax.numpy as znp
    >>> opt = adam(0.1)
    >>> round(float(opt.update(znp.asarray(5.0), opt.init(znp.asarray(0.0)))[0]), 6)
    -0.1
    """
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                               nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


nadam = functools.partial(adam, nesterov=True)
nadam.__doc__ = "NAdam: `adam` with Nesterov momentum (``adam(..., nesterov=True)``)."


def adamw(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8,
          eps_root: Any = 0.0, mu_dtype: Optional[Any] = None, weight_decay: Any = 1e-4,
          mask: Any = None, *, nesterov: bool = False) -> GTX:
    """AdamW: Adam with decoupled weight decay (multiplied by the learning rate).

    >>> import zerax.numpy as znp
    >>> opt = adamw(0.1, weight_decay=0.0)
    >>> p = znp.asarray(1.0)
    >>> round(float(opt.update(znp.asarray(5.0), opt.init(p), p)[0]), 6)
    -0.1
    """
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                               nesterov=nesterov),
                 add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


nadamw = functools.partial(adamw, nesterov=True)
nadamw.__doc__ = "NAdamW: `adamw` with Nesterov momentum (``adamw(..., nesterov=True)``)."


def adamax(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8) -> GTX:
    """Adamax: Adam with the infinity norm.

    >>> import zerax.numpy as znp
    >>> opt = adamax(0.1)
    >>> round(float(opt.update(znp.asarray(5.0), opt.init(znp.asarray(0.0)))[0]), 6)
    -0.1
    """
    return chain(scale_by_adamax(b1=b1, b2=b2, eps=eps), scale_by_learning_rate(learning_rate))


def adamaxw(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8,
            weight_decay: Any = 1e-4, mask: Any = None) -> GTX:
    """Adamax with decoupled weight decay.

    >>> import zerax.numpy as znp
    >>> opt = adamaxw(0.1, weight_decay=0.0)
    >>> p = znp.asarray(1.0)
    >>> round(float(opt.update(znp.asarray(5.0), opt.init(p), p)[0]), 6)
    -0.1
    """
    return chain(scale_by_adamax(b1=b1, b2=b2, eps=eps), add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


def adan(learning_rate: Any, b1: Any = 0.98, b2: Any = 0.92, b3: Any = 0.99, eps: Any = 1e-8,
         eps_root: Any = 1e-8, weight_decay: Any = 0.0, mask: Any = None) -> GTX:
    """Adan (adaptive Nesterov momentum).

    >>> isinstance(adan(1e-3), GTX)
    True
    """
    return chain(scale_by_adan(b1=b1, b2=b2, b3=b3, eps=eps, eps_root=eps_root),
                 add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


def radam(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8,
          eps_root: Any = 0.0, threshold: Any = 5.0, *, nesterov: bool = False) -> GTX:
    """Rectified Adam.

    >>> import zerax.numpy as znp
    >>> float(radam(0.1).update(znp.asarray(5.0), radam(0.1).init(znp.asarray(0.0)))[0])
    -0.5
    """
    return chain(scale_by_radam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, threshold=threshold,
                                nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


def amsgrad(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8,
            eps_root: Any = 0.0, mu_dtype: Optional[Any] = None, bias_correction_mu: bool = True,
            bias_correction_nu: bool = True) -> GTX:
    """AMSGrad: Adam with the running maximum of the second moment.

    >>> import zerax.numpy as znp
    >>> opt = amsgrad(0.1)
    >>> round(float(opt.update(znp.asarray(5.0), opt.init(znp.asarray(0.0)))[0]), 6)
    -0.1
    """
    return chain(scale_by_amsgrad(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                                  bias_correction_mu=bias_correction_mu,
                                  bias_correction_nu=bias_correction_nu),
                 scale_by_learning_rate(learning_rate))


def adagrad(learning_rate: Any, initial_accumulator_value: Any = 0.1, eps: Any = 1e-7) -> GTX:
    """AdaGrad: divide by the root of the sum of squared gradients.

    >>> import zerax.numpy as znp
    >>> opt = adagrad(1.0, initial_accumulator_value=0.0, eps=0.0)
    >>> float(opt.update(znp.asarray(2.0), opt.init(znp.asarray(0.0)))[0])
    -1.0
    """
    return chain(scale_by_rss(initial_accumulator_value=initial_accumulator_value, eps=eps),
                 scale_by_learning_rate(learning_rate))


def adadelta(learning_rate: Optional[Any] = None, rho: Any = 0.9, eps: Any = 1e-6,
             weight_decay: Any = 0.0, weight_decay_mask: Any = None) -> GTX:
    """AdaDelta.

    >>> import zerax.numpy as znp
    >>> opt = adadelta(1.0)
    >>> p = znp.asarray(0.0)
    >>> round(float(opt.update(znp.asarray(1.0), opt.init(p), p)[0]), 6)
    -0.003162
    """
    return chain(add_decayed_weights(weight_decay, mask=weight_decay_mask),
                 scale_by_adadelta(rho=rho, eps=eps), scale_by_learning_rate(learning_rate))


def adafactor(learning_rate: Optional[Any] = None, min_dim_size_to_factor: int = 128,
              decay_rate: Any = 0.8, decay_offset: Any = 0,
              multiply_by_parameter_scale: bool = True,
              clipping_threshold: Optional[Any] = 1.0, momentum: Optional[Any] = None,
              dtype_momentum: Any = "float32", weight_decay_rate: Optional[Any] = None,
              eps: Any = 1e-30, factored: bool = True, weight_decay_mask: Any = None) -> GTX:
    """Adafactor: factored second moments, update clipping and parameter-scale steps.

    >>> import zerax.numpy as znp
    >>> opt = adafactor(0.1)
    >>> p = znp.ones(3)
    >>> opt.update(p, opt.init(p), p)[0].round(4).tolist()
    [-0.1, -0.1, -0.1]
    """
    tx = [scale_by_factored_rms(factored, decay_rate, decay_offset, min_dim_size_to_factor, eps)]
    if clipping_threshold is not None:
        tx.append(clip_by_block_rms(clipping_threshold))
    if learning_rate is not None:
        tx.append(scale_by_learning_rate(learning_rate, flip_sign=False))
    if multiply_by_parameter_scale:
        tx.append(scale_by_param_block_rms())
    if momentum is not None:
        tx.append(ema(momentum, debias=False, accumulator_dtype=dtype_momentum))
    if weight_decay_rate is not None:
        tx.append(add_decayed_weights(weight_decay_rate, mask=weight_decay_mask))
    tx.append(scale(-1))
    return chain(*tx)


def adabelief(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-16,
              eps_root: Any = 1e-16, *, nesterov: bool = False) -> GTX:
    """AdaBelief: Adam with the variance of the gradient around its moving mean.

    >>> isinstance(adabelief(1e-3), GTX)
    True
    """
    return chain(scale_by_belief(b1=b1, b2=b2, eps=eps, eps_root=eps_root, nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


def rmsprop(learning_rate: Any, decay: Any = 0.9, eps: Any = 1e-8, initial_scale: Any = 0.0,
            eps_in_sqrt: bool = True, centered: bool = False, momentum: Optional[Any] = None,
            nesterov: bool = False, bias_correction: bool = False) -> GTX:
    """RMSProp (optionally centred, with momentum).

    >>> import zerax.numpy as znp
    >>> opt = rmsprop(0.1, decay=0.0, eps=0.0)
    >>> float(opt.update(znp.asarray(3.0), opt.init(znp.asarray(0.0)))[0])
    -0.1
    """
    fn = scale_by_stddev if centered else scale_by_rms
    return chain(fn(decay=decay, eps=eps, initial_scale=initial_scale, eps_in_sqrt=eps_in_sqrt,
                    bias_correction=bias_correction),
                 scale_by_learning_rate(learning_rate),
                 trace(decay=momentum, nesterov=nesterov) if momentum is not None
                 else identity())


def lamb(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-6,
         eps_root: Any = 0.0, weight_decay: Any = 0.0, mask: Any = None) -> GTX:
    """LAMB: Adam steps rescaled by the layer-wise trust ratio.

    >>> isinstance(lamb(1e-3), GTX)
    True
    """
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root),
                 add_decayed_weights(weight_decay=weight_decay, mask=mask),
                 scale_by_trust_ratio(), scale_by_learning_rate(learning_rate))


def lars(learning_rate: Any, weight_decay: Any = 0.0, weight_decay_mask: Any = True,
         trust_coefficient: Any = 0.001, eps: Any = 0.0, trust_ratio_mask: Any = True,
         momentum: Any = 0.9, nesterov: bool = False) -> GTX:
    """LARS: SGD with momentum and layer-wise trust ratios.

    >>> isinstance(lars(1e-3), GTX)
    True
    """
    return chain(add_decayed_weights(weight_decay, mask=weight_decay_mask),
                 masked(inner=scale_by_trust_ratio(trust_coefficient=trust_coefficient, eps=eps),
                        mask=trust_ratio_mask),
                 scale_by_learning_rate(learning_rate),
                 trace(decay=momentum, nesterov=nesterov))


def lion(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.99, mu_dtype: Optional[Any] = None,
         weight_decay: Any = 1e-3, mask: Any = None) -> GTX:
    """Lion: the sign of interpolated momentum, with decoupled weight decay.

    >>> import zerax.numpy as znp
    >>> opt = lion(0.1, weight_decay=0.0)
    >>> float(opt.update(znp.asarray(5.0), opt.init(znp.asarray(0.0)), znp.asarray(0.0))[0])
    -0.1
    """
    return chain(scale_by_lion(b1=b1, b2=b2, mu_dtype=mu_dtype),
                 add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


def novograd(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.25, eps: Any = 1e-6,
             eps_root: Any = 0.0, weight_decay: Any = 0.0) -> GTX:
    """NovoGrad: layer-wise normalised gradients with momentum.

    >>> isinstance(novograd(1e-3), GTX)
    True
    """
    return chain(scale_by_novograd(b1=b1, b2=b2, eps=eps, eps_root=eps_root,
                                   weight_decay=weight_decay),
                 scale_by_learning_rate(learning_rate))


def yogi(learning_rate: Any, b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-3) -> GTX:
    """Yogi: Adam with additive second-moment updates.

    >>> isinstance(yogi(1e-3), GTX)
    True
    """
    return chain(scale_by_yogi(b1=b1, b2=b2, eps=eps), scale_by_learning_rate(learning_rate))


def sm3(learning_rate: Any, momentum: Any = 0.9) -> GTX:
    """SM3: memory-efficient adaptive steps with per-axis accumulators.

    >>> isinstance(sm3(1e-3), GTX)
    True
    """
    return chain(scale_by_sm3(momentum), scale(-learning_rate))


def fromage(learning_rate: Any, min_norm: Any = 1e-6) -> GTX:
    """Fromage: trust-ratio steps with a shrinkage that keeps weight norms bounded.

    >>> isinstance(fromage(1e-2), GTX)
    True
    """
    if not callable(learning_rate):
        mult = 1 / (1 + learning_rate ** 2) ** 0.5
        return chain(scale_by_trust_ratio(min_norm),
                     scale_by_learning_rate(learning_rate * mult),
                     add_decayed_weights(mult - 1))

    def mult_lr(count):
        return 1 / (1 + learning_rate(count) ** 2) ** 0.5
    return chain(scale_by_trust_ratio(min_norm),
                 scale_by_learning_rate(lambda c: mult_lr(c) * learning_rate(c)),
                 add_decayed_weights(lambda c: mult_lr(c) - 1))


def sign_sgd(learning_rate: Any) -> GTX:
    """SGD on the sign of the gradient.

    >>> import zerax.numpy as znp
    >>> float(sign_sgd(0.1).update(znp.asarray(5.0), sign_sgd(0.1).init(0.0))[0])
    -0.1
    """
    return chain(scale_by_sign(), scale_by_learning_rate(learning_rate))


def signum(learning_rate: Any, beta: Any = 0.9, accumulator_dtype: Optional[Any] = None) -> GTX:
    """Signum: sign of the momentum.

    >>> isinstance(signum(1e-3), GTX)
    True
    """
    return chain(ema(beta, debias=False, accumulator_dtype=accumulator_dtype), scale_by_sign(),
                 scale_by_learning_rate(learning_rate))


def noisy_sgd(learning_rate: Any, eta: Any = 0.01, gamma: Any = 0.55, key: Any = None, *,
              seed: Optional[int] = None) -> GTX:
    """SGD with annealed Gaussian gradient noise (`add_noise`).

    >>> isinstance(noisy_sgd(1e-3, key=0), GTX)
    True
    """
    return chain(add_noise(eta, gamma, key, seed=seed), scale_by_learning_rate(learning_rate))


def rprop(learning_rate: Any, eta_minus: Any = 0.5, eta_plus: Any = 1.2,
          min_step_size: Any = 1e-6, max_step_size: Any = 50.0) -> GTX:
    """Rprop: per-element step sizes adapted from sign agreement of successive gradients.

    >>> isinstance(rprop(1e-3), GTX)
    True
    """
    return chain(scale_by_rprop(learning_rate=learning_rate, eta_minus=eta_minus,
                                eta_plus=eta_plus, min_step_size=min_step_size,
                                max_step_size=max_step_size),
                 scale(-1.0))


def polyak_sgd(max_learning_rate: Any = 1.0, scaling: Any = 1.0, f_min: Any = 0.0,
               eps: Any = 0.0, variant: str = "sps") -> GTX:
    """SGD with Polyak's step size; ``update`` takes ``value=`` the loss.

    >>> import zerax.numpy as znp
    >>> opt = polyak_sgd()
    >>> float(opt.update(znp.asarray(2.0), opt.init(0.0), value=1.0)[0])
    -0.5
    """
    return chain(sgd(learning_rate=scaling),
                 scale_by_polyak(max_learning_rate=max_learning_rate, f_min=f_min, eps=eps,
                                 variant=variant))


def optimistic_gradient_descent(learning_rate: Any, alpha: Any = 1.0, beta: Any = 1.0) -> GTX:
    """Optimistic gradient descent (for min-max games).

    >>> isinstance(optimistic_gradient_descent(1e-3), GTX)
    True
    """
    return chain(scale_by_optimistic_gradient(alpha=alpha, beta=beta),
                 scale_by_learning_rate(learning_rate))


def optimistic_adam_v2(learning_rate: Any, *, alpha: Any = 1.0, beta: Any = 1.0, b1: Any = 0.9,
                       b2: Any = 0.999, eps: Any = 1e-8, eps_root: Any = 0.0,
                       mu_dtype: Optional[Any] = None, nesterov: bool = True) -> GTX:
    """Optimistic Adam.

    >>> isinstance(optimistic_adam_v2(1e-3), GTX)
    True
    """
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                               nesterov=nesterov),
                 scale_by_optimistic_gradient(alpha=alpha, beta=beta),
                 scale_by_learning_rate(learning_rate))
