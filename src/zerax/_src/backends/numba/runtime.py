"""Objects that generated kernels refer to by name (njit-compiled helper functions).

Generated modules import ``HELPERS`` from here, so that helper functions (special
functions' scalar kernels, sorting routines, ...) are shared by every kernel."""

HELPERS: dict = {}
