"""`zerax.experimental.jet`: JAX's ``jax.experimental.jet`` names, for ported code.

>>> from zerax.experimental.jet import jet
>>> import zerax.numpy as znp
>>> y, (d1, d2) = jet(znp.exp, (0.0,), ((1.0, 0.0),))
>>> float(y), float(d1), float(d2)
(1.0, 1.0, 1.0)
"""

import functools

from zerax.taylor import jet

# JAX's ``jet2``: plain Taylor coefficients in and out (no factorial scaling)
jet2 = functools.partial(jet, factorial_scaled=False)

__all__ = ["jet", "jet2"]
