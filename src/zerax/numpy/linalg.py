"""`zerax.numpy.linalg`: linear algebra (being written)."""
