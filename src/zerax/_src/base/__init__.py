"""Layer 1, base: configuration, dtypes (NumPy 2 promotion, weak Python scalars) and scalar
special functions.  Imports nothing from zerax but ``zerax.errors``."""
