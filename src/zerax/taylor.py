"""`zerax.taylor`: Taylor-mode differentiation, the first n derivatives in one pass.

``jet(fun, primals, series)`` pushes a truncated Taylor series through ``fun``
(``jax.experimental.jet.jet``'s signature and conventions); ``derivatives(fun, order)``
returns ``fun``'s value and its first ``order`` derivatives (or directional
derivatives) as one function.

>>> import zerax as zx, zerax.numpy as znp
>>> [round(float(d), 6) for d in zx.taylor.derivatives(znp.sin, 4)(0.5)]
[0.479426, 0.877583, -0.479426, -0.877583, 0.479426]
"""

from ._src.api.taylor import derivatives, jet

__all__ = ["derivatives", "jet"]
