"""The backend seam (issue 12): devices, the registry, the protocol, and how jit picks a
backend from its inputs' devices."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
from zerax import errors
from zerax._src import backends
from zerax._src.core.array import CPU, Device, device_buffers


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
    # the readable program: the kernel IR
    assert "kernel" in exe.source and "kernel" in b.source(closed.jaxpr)
    # eager apply: a primitive on the backend's buffers
    from zerax._src.ops.elementwise import sin_p
    buf = b.put(x, b.devices()[0])
    assert b.device_of(buf) in b.devices() and isinstance(b.buffer_types, tuple)
    np.testing.assert_allclose(b.to_host(b.apply(sin_p, [buf], {})), np.sin(x))


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


# --------------------------------------------------------------------------- eager routing

class _FakeBuffer:
    """A stand-in for a device's array (as CuPy's): a NumPy array in a box, which
    NumPy's functions cannot take."""

    __slots__ = ("host",)

    def __init__(self, host):
        self.host = host

    shape = property(lambda self: self.host.shape)
    dtype = property(lambda self: self.host.dtype)
    ndim = property(lambda self: self.host.ndim)
    size = property(lambda self: self.host.size)


class _FakeBackend:
    """A backend of one device whose buffers are `_FakeBuffer`s; it records which
    primitives the eager path asks it to apply."""

    name = "fake"
    platform = "fake"
    buffer_types = (_FakeBuffer,)

    def __init__(self):
        self.device = Device("fake", "fake")
        self.applied = []

    def devices(self):
        return [self.device]

    def device_of(self, buffer):
        return self.device

    def put(self, value, device):
        return _FakeBuffer(np.array(value))

    def to_host(self, buffer):
        return buffer.host

    def apply(self, prim, buffers, params):
        self.applied.append(prim.name)
        host = [b.host if type(b) is _FakeBuffer else b for b in buffers]
        out = prim.impl(*host, **params)
        if prim.multiple_results:
            return [_FakeBuffer(np.asarray(o)) for o in out]
        return _FakeBuffer(np.asarray(out))

    def compile(self, jaxpr, name):
        raise errors.NotSupportedError("the fake backend does not compile")

    def source(self, jaxpr, dialect=None, name="this program"):
        raise errors.NotSupportedError("the fake backend does not compile")


@pytest.fixture
def fake_backend():
    b = backends.register_backend(_FakeBackend())
    try:
        yield b
    finally:
        backends.unregister_backend("fake")
    assert not device_buffers and "fake" not in zx.config.available_backends


def test_eager_primitives_on_device_buffers_run_on_their_backend(fake_backend):
    fake = fake_backend
    x_host = np.linspace(0.0, 1.0, 4)
    x = zx.device_put(x_host, fake.device)
    assert x.device is fake.device and type(x._value) is _FakeBuffer
    y = znp.sin(x) * 2.0 + 1.0
    assert y.device is fake.device and type(y._value) is _FakeBuffer
    assert fake.applied == ["sin", "mul", "add"]
    np.testing.assert_allclose(np.asarray(y), np.sin(x_host) * 2.0 + 1.0, rtol=1e-15)
    assert "Array([" in repr(y)
    # host buffers are not routed to it
    fake.applied.clear()
    np.testing.assert_allclose(znp.sin(x_host), np.sin(x_host))
    assert fake.applied == []
    # back to the host
    h = zx.device_put(y, CPU)
    assert h.device is CPU and type(h._value) is np.ndarray
    # reverse mode: the tape's NumPy rules step aside for the general path, whose
    # eager steps run on the device too
    g = zx.grad(lambda v: znp.sum(znp.sin(v)))(x)
    np.testing.assert_allclose(np.asarray(g), np.cos(x_host), rtol=1e-15)
    assert "sin" in fake.applied and "cos" in fake.applied


def test_operands_on_two_backends_devices_are_an_error(fake_backend):
    class Other(_FakeBackend):
        name = "fake2"
        buffer_types = (type("_Buf2", (_FakeBuffer,), {"__slots__": ()}),)

        def __init__(self):
            super().__init__()
            self.device = Device("fake2", "fake")

        def put(self, value, device):
            return self.buffer_types[0](np.array(value))

    other = backends.register_backend(Other())
    try:
        a = zx.device_put(np.ones(2), fake_backend.device)
        b = zx.device_put(np.ones(2), other.device)
        assert b.device is other.device
        with pytest.raises(errors.ZeraxValueError, match="different backends"):
            a + b
    finally:
        backends.unregister_backend("fake2")
