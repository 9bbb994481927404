"""The implementation of `zerax.scipy` (the faces re-export it): optimize, signal,
integrate, stats; special gathers the special functions of ``api/scipy_special*.py``."""
