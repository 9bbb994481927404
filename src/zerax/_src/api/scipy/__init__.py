"""The implementation of `zerax.scipy` (the faces re-export it): optimize, signal,
integrate, stats, and special (the special functions, one module per family)."""
