"""The threading model of compiled programs (backends/cpu/threads.py, cpu/blas.py): one
setting for the pool of parallel loops, BLAS on one thread inside programs (restored
outside) unless a product is large, clear errors."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax._src.backends.cpu import blas, threads
from zerax._src.api.jit import executable_for


@pytest.fixture
def restore_threads():
    before = zx.config.num_threads
    yield
    zx.config.update("num_threads", before)


def test_setting_drives_the_pool(restore_threads):
    pool = threads
    f = zx.jit(lambda x: znp.sin(x) * 2.0)
    x = np.linspace(0.0, 1.0, 200_000)            # large enough for a parallel loop
    assert "parallel for" in f.lower(x).as_text()
    for n in (1, 2, 1):
        zx.config.update("num_threads", n)
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * 2.0, rtol=1e-15)
        assert pool._global("zerax_pool.threads").value == n
        assert len(pool._pool.threads) >= n - 1      # workers started as needed


@pytest.mark.parametrize("bad", [0, -2, 1.5, "two", True, None])
def test_bad_thread_counts(bad, restore_threads):
    with pytest.raises(errors.ZeraxValueError, match="num_threads"):
        zx.config.update("num_threads", bad)


def test_more_than_the_pool_can_run_warns_and_caps():
    code = "import zerax; print(zerax.config.num_threads)"
    env = dict(os.environ, ZERAX_NUM_THREADS=str(threads.MAX_THREADS + 7))
    out = subprocess.run([sys.executable, "-W", "always", "-c", code], env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(threads.MAX_THREADS)
    assert "RuntimeWarning" in out.stderr and "ZERAX_NUM_THREADS" in out.stderr


def test_bad_environment_variable_is_a_clear_error():
    code = "import zerax; print(zerax.config.num_threads)"
    env = dict(os.environ, ZERAX_NUM_THREADS="two")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode != 0
    assert "ZeraxValueError" in out.stderr and "ZERAX_NUM_THREADS" in out.stderr


def test_environment_variable():
    code = "import zerax; print(zerax.config.num_threads)"
    env = dict(os.environ, ZERAX_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


def test_blas_single_threaded_inside_programs_only():
    ctl = blas._controller()
    if ctl is None:
        pytest.skip("no BLAS threadpoolctl knows (its threads are left alone)")
    seen = []
    probe = blas.limited(lambda: seen.append(ctl.get_num_threads()) or 0, 1000,
                         threads.setting)
    before = ctl.get_num_threads()
    ctl.set_num_threads(2)
    try:
        probe()
        assert seen[-1] == 1
        assert ctl.get_num_threads() == 2          # restored after the call
    finally:
        ctl.set_num_threads(before)


def test_programs_with_products_are_wrapped():
    rng = np.random.default_rng(0)
    w1, x = rng.standard_normal((96, 80)), rng.standard_normal((64, 96))

    def f(w, x):
        return znp.tanh(x @ w).sum()
    g = zx.jit(zx.grad(f))
    low = g.lower(w1, x)
    t = np.tanh(x @ w1)
    np.testing.assert_allclose(np.asarray(g(w1, x)), x.T @ (1 - t * t),
                               rtol=1e-10, atol=1e-13)
    exe = executable_for(low.jaxpr, low.name)
    assert "call gemm(" in low.as_text()              # a BLAS call from the kernel
    assert getattr(exe.kernel, "zerax_threaded", False)
    small = zx.jit(lambda a: a + 1.0)                   # no BLAS: not wrapped
    small(np.ones(3))
    low = small.lower(np.ones(3))
    assert not hasattr(executable_for(low.jaxpr, low.name).kernel, "zerax_threaded")


def test_blas_threads_follow_the_product_size_and_the_idle_cores(monkeypatch):
    n = threads.setting()
    assert blas.threads_for(10**6, n) == 1
    for busy, idle in ((0.2, n), (float(n), 1), (n + 3.0, 1)):
        monkeypatch.setattr(blas, "_busy_elsewhere", lambda: busy)
        blas._idle[0], blas._idle[2] = -10.0, None    # force a fresh, unsmoothed reading
        for work in (blas.SHARED_BLAS_MIN_WORK, 2 ** 34):   # however large the product
            assert blas.threads_for(work, n) == idle


def test_the_busy_count_is_instantaneous_not_a_minute_old():
    """The count of other running threads is read now (/proc/loadavg's runnable
    field on Linux), not the 1-minute average whose lag made the BLAS thread count
    differ from one process to the next (issue 28)."""
    busy = blas._busy_elsewhere()
    assert busy >= 0.0
    if os.path.exists("/proc/loadavg"):
        with open("/proc/loadavg") as f:
            total = int(f.read().split()[3].split("/")[1])
        assert busy < total


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="Linux's /proc")
def test_this_processs_own_running_threads_are_not_busy_elsewhere():
    """A thread of this process at work (the parallel loops' workers yielding after a
    loop) is not another process's load: it is taken out of the running count."""
    stop = threading.Event()
    a = np.random.default_rng(0).standard_normal(2_000_000)

    def work():
        while not stop.is_set():
            np.sort(a)                  # (releases the GIL: this thread runs)
    t = threading.Thread(target=work)
    t.start()
    try:
        seen = max(blas._running_here() for _ in range(2000))
    finally:
        stop.set()
        t.join()
    assert seen >= 2
    assert blas._running_here() >= 1
