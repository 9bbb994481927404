import os
import tempfile

from hypothesis import settings

# Numba's on-disk cache (used once jit lands) goes to a throwaway directory in tests.
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


@pytest.fixture
def numba_path(monkeypatch):
    """Compile through the generated-source (Numba) path, as every program was before
    the kernel IR: for the tests of that path, which still compiles the programs the
    kernel-IR lowering does not carry yet (``ZERAX_KERNEL_IR=0``, read at each compile,
    and inherited by the processes a test starts)."""
    monkeypatch.setenv("ZERAX_KERNEL_IR", "0")


@pytest.fixture(params=["kernel_ir", "generated_source"])
def compile_path(request, monkeypatch):
    """Run the test once through each CPU compile path: the kernel IR (the default) and
    the generated-source path (``ZERAX_KERNEL_IR=0``), for tests that check what each
    path's code looks like; the fixture's value names the path."""
    if request.param == "generated_source":
        monkeypatch.setenv("ZERAX_KERNEL_IR", "0")
    else:
        monkeypatch.delenv("ZERAX_KERNEL_IR", raising=False)
    return request.param
