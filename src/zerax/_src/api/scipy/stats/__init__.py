"""The implementation of `zerax.scipy.stats`: one module per distribution (JAX's names
and signatures), ``_core`` (mode, rankdata, sem) and ``_util`` (argument promotion)."""
