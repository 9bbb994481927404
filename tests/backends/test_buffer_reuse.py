"""Freed arrays' memory is reused by the next call (issue 17: the Adam update).

The CPU backend sets glibc's allocator to keep freed memory mapped
(``backends/cpu/memory.py``): a jitted step that returns many arrays of a few
hundred KB no longer writes into fresh pages (one page fault per 4 KiB) on every call.
Checked here: the setting is applied (and can be turned off), repeated calls take no
page faults for their outputs, and reused memory never aliases a live array.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax._src.backends.cpu import memory

glibc_linux = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(os, "confstr") or
    "glibc" not in (os.confstr("CS_GNU_LIBC_VERSION") or ""),
    reason="glibc's allocator only")

N_OUT, SIZE = 10, 100_000      # ten float32 outputs of 400 KB: 1,000 pages a call


def _step(xs, s):
    return [x * s + 1.0 for x in xs]


@pytest.fixture(scope="module")
def step_and_inputs():
    rng = np.random.default_rng(0)
    xs = [znp.asarray(rng.standard_normal(SIZE).astype(np.float32)) for _ in range(N_OUT)]
    return zx.jit(_step), xs


def _tuned_default() -> bool:
    user = any(k in os.environ for k in memory._USER_SETTINGS) or \
        "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", "") or \
        os.environ.get("ZERAX_MALLOC_TUNING", "1") in ("0", "false", "off")
    return not user


@glibc_linux
def test_allocator_is_tuned_when_the_backend_loads(step_and_inputs):
    if not _tuned_default():
        pytest.skip("the environment configures malloc itself")
    from zerax._src.backends import get_backend
    get_backend("numba")
    assert memory.MALLOC_TUNED
    assert memory.tune_malloc() is True   # idempotent


@glibc_linux
def test_repeated_calls_take_no_page_faults_for_outputs(step_and_inputs):
    if not memory.MALLOC_TUNED:
        pytest.skip("allocator tuning off in this environment")
    step, xs = step_and_inputs
    for _ in range(3):   # warm: compiled, and the allocator has memory to reuse
        step(xs, 0.5)
    calls = 20
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        outs = step(xs, 0.5)
        del outs
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls
    # Without the reuse each call faults in its 1,000 fresh output pages.
    assert faults < 100, faults


def test_reused_memory_never_aliases_live_outputs(step_and_inputs):
    step, xs = step_and_inputs
    expect = [np.asarray(x) * np.float32(0.5) + np.float32(1.0) for x in xs]
    kept = []
    for k in range(6):
        outs = step(xs, 0.5)
        if k % 2 == 0:
            kept.append(outs)      # alive while later calls allocate
        del outs
    arrays = [np.asarray(o) for outs in kept for o in outs]
    for a in arrays:
        for b in arrays:
            if a is not b:
                assert not np.shares_memory(a, b)
    for x in xs:
        assert not any(np.shares_memory(np.asarray(x), a) for a in arrays)
    for outs in kept:
        for o, e in zip(outs, expect):
            np.testing.assert_array_equal(np.asarray(o), e)


@glibc_linux
@pytest.mark.parametrize("env, tuned", [({}, "True"), ({"ZERAX_MALLOC_TUNING": "0"}, "False"),
                                        ({"MALLOC_TRIM_THRESHOLD_": "1048576"}, "False")])
def test_tuning_can_be_turned_off(env, tuned):
    """On by default; off with ``ZERAX_MALLOC_TUNING=0``, and left to the user's own
    glibc settings."""
    code = ("from zerax._src.backends import get_backend; get_backend('numba'); "
            "from zerax._src.backends.cpu import memory; "
            "print(memory.MALLOC_TUNED, memory.tune_malloc())")
    full = {k: v for k, v in os.environ.items()
            if k not in memory._USER_SETTINGS and k != "ZERAX_MALLOC_TUNING"}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", code], env=full,
                         capture_output=True, text=True, check=True).stdout.split()
    if "GLIBC_TUNABLES" in full and "glibc.malloc." in full["GLIBC_TUNABLES"]:
        tuned = "False"
    assert out == [tuned, tuned]
