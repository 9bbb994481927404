"""`zerax.example_libraries`: JAX's ``jax.example_libraries`` on zerax.

``stax`` (layers as ``(init_fun, apply_fun)`` pairs) and ``optimizers`` (optimisers as
``(init_fun, update_fun, get_params)`` triples), with JAX's signatures, parameters and
numbers, so that a JAX example program ports by changing its imports.

>>> from zerax.example_libraries import stax, optimizers
>>> init_fun, apply_fun = stax.serial(stax.Dense(3), stax.Relu)
>>> opt_init, opt_update, get_params = optimizers.sgd(0.1)
"""

from . import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
