import os
import tempfile

from hypothesis import settings

# The compilation cache goes to a throwaway directory in tests.
os.environ.setdefault("ZERAX_CACHE_DIR", tempfile.mkdtemp(prefix="zerax-test-cache-"))
# ...and its secret key (issue 13) beside it, so the suite never writes to ~/.cache.
os.environ.setdefault(
    "ZERAX_CACHE_KEY", os.path.join(tempfile.mkdtemp(prefix="zerax-test-key-"), "zerax.key"))

settings.register_profile("default", deadline=None, max_examples=30)
# CI draws the same examples every run, so its verdict is reproducible here.
settings.register_profile("ci", deadline=None, max_examples=30, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


# --------------------------------------------------------------------------- backends
# Tests of compiled programs take the ``backend`` fixture: they run once per registered
# backend (``zerax._src.backends``), skipped where the backend cannot load here (CuPy
# without a GPU).  One test module per op group, never a copied file per backend.

import pytest  # noqa: E402


def _backend_names():
    from zerax._src import backends
    return sorted(backends._MODULES)


@pytest.fixture(params=_backend_names())
def backend(request):
    import zerax as zx
    from zerax._src import backends
    try:
        backends.get_backend(request.param)
    except ImportError as e:  # an optional backend whose library or device is missing
        pytest.skip(f"backend {request.param!r} is not available here: {e}")
    old = zx.config.backend
    zx.config.update("backend", request.param)
    try:
        yield request.param
    finally:
        zx.config.update("backend", old)


# --------------------------------------------------------------------------- x64 mode
# The suite's baseline is zerax's default, x64 on, whatever JAX_ENABLE_X64 /
# ZERAX_ENABLE_X64 say in the shell that runs it (a JAX user's shell often has x64 off).
# Tests of JAX's 32-bit mode take the ``x64`` fixture (both modes) or ``x32`` (x64 off
# only); the autouse guard below restores the mode after every test, so a test that
# switches it (config.update, enable_x64) can never leak it to the next one, in one
# process or in an xdist worker.

def _set_baseline_mode():
    from zerax._src.base import dtypes
    dtypes.set_x64(True)
    dtypes._thread_mode.x64 = None


_set_baseline_mode()
for _var in ("ZERAX_ENABLE_X64", "JAX_ENABLE_X64"):   # (nor for the processes tests start)
    os.environ.pop(_var, None)


@pytest.fixture(autouse=True)
def _x64_mode_guard():
    from zerax._src.base import dtypes
    yield
    if not dtypes._x64_global[0] or dtypes._thread_mode.x64 is not None:
        _set_baseline_mode()


@pytest.fixture(params=[True, False], ids=["x64", "x32"])
def x64(request):
    """Run the test in both modes: the fixture's value is whether x64 is on."""
    import zerax as zx
    with zx.enable_x64(request.param):
        yield request.param


@pytest.fixture
def x32():
    """Run the test in JAX's default 32-bit mode (x64 off)."""
    import zerax as zx
    with zx.enable_x64(False):
        yield False
