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
