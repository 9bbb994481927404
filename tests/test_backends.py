"""The backend seam (issue 12): devices, the registry, the protocol, and how jit picks a
backend from its inputs' devices."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax._src import backends
from zerax._src.core.array import CPU, Device


def test_arrays_live_on_the_cpu_device():
    x = znp.arange(3.0)
    assert x.device is CPU and x.devices() == {CPU}
    assert zx.devices() == [CPU] and zx.devices("cpu") == [CPU]
    assert zx.device_count() == 1 == zx.local_device_count()
    assert zx.default_backend() == "cpu"
    assert repr(CPU) == "CpuDevice(id=0)" and CPU.platform == "cpu" and CPU.id == 0


def test_registered_backends_follow_the_protocol(backend):
    b = backends.get_backend(backend)
    assert b.name == backend and b.platform == backends.platform_of(backend)
    assert all(isinstance(d, Device) for d in b.devices())
    # compile: a program (constants first) -> an executable with run() and source
    closed = zx.make_jaxpr(lambda x: znp.sin(x) * 2.0)(np.ones(3))
    exe = b.compile(closed.jaxpr, "f")
    x = np.linspace(0.0, 1.0, 3)
    (out,) = exe.run(*[np.asarray(c) for c in closed.consts], x)
    np.testing.assert_allclose(out, np.sin(x) * 2.0, rtol=1e-15)
    assert "def " in exe.source and "def " in b.source(closed.jaxpr)
    # eager apply: a primitive on the backend's buffers
    from zerax._src.ops.elementwise import sin_p
    np.testing.assert_allclose(b.apply(sin_p, [x], {}), np.sin(x))


def test_jit_compiles_for_the_backend_of_its_inputs(backend):
    f = zx.jit(lambda x: x * 3.0)
    np.testing.assert_allclose(f(np.arange(3.0)), [0.0, 3.0, 6.0])
    assert backends.backend_for([np.ones(2), znp.ones(2)]) is backends.get_backend(backend)


def test_inputs_on_devices_of_two_backends_are_an_error():
    class Other:
        device = Device("elsewhere", "gpu")
    other = Other()
    with pytest.raises(errors.ZeraxValueError, match="different backends"):
        backends.backend_for([other, Other.__new__(type("O2", (), {
            "device": Device("third", "gpu")}))])


def test_unknown_backends_are_refused_clearly():
    with pytest.raises(errors.NotSupportedError, match="not available"):
        zx.config.update("backend", "no-such-backend")
    with pytest.raises(errors.NotSupportedError, match="not available"):
        backends.get_backend("no-such-backend")


def test_num_threads_is_the_cpu_backends_setting():
    n = zx.config.num_threads
    assert n >= 1
    zx.config.update("num_threads", 1)
    try:
        assert zx.config.num_threads == 1
    finally:
        zx.config.update("num_threads", n)
    with pytest.raises(errors.ZeraxValueError, match="positive whole number"):
        zx.config.update("num_threads", 0.5)
