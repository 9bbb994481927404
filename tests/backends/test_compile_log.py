"""Compiles say what they are doing: ``log_compiles`` (JAX's ``jax_log_compiles``) and
the stderr line for a compile that runs long (issue 20)."""

import logging
import uuid

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp


@pytest.fixture
def settings():
    old = (zx.config.log_compiles, zx.config.compile_notice_s)
    yield
    zx.config.update("log_compiles", old[0])
    zx.config.update("compile_notice_s", old[1])


def _fresh_program():
    """A program no other test compiled (its constant is new), so its first call runs
    LLVM."""
    c = float(uuid.uuid4().int % 10**9) + 0.5

    def f(x):
        return znp.cos(x) * c + x
    return zx.jit(f), c


def test_log_compiles_logs_start_and_finish_once(settings, caplog):
    zx.config.update("jax_log_compiles", True)
    zx.config.update("compile_notice_s", None)
    f, c = _fresh_program()
    x = np.linspace(0.0, 1.0, 5)
    with caplog.at_level(logging.WARNING, logger="zerax"):
        np.testing.assert_allclose(np.asarray(f(x)), np.cos(x) * c + x)
        f(x)
    messages = [r.getMessage() for r in caplog.records if r.name == "zerax"]
    assert len(messages) == 2, messages
    assert messages[0].startswith("Compiling jit(f) (")
    assert "equations" in messages[0] and "kernel" in messages[0]
    assert messages[1].startswith("Finished compiling jit(f) in ")
    # the same program jitted again comes from this process's memory: no compile
    caplog.clear()
    g = zx.jit(f.__wrapped__)
    with caplog.at_level(logging.WARNING, logger="zerax"):
        g(x)
    assert not [r for r in caplog.records if r.name == "zerax"]


def test_no_log_by_default(settings, caplog):
    zx.config.update("log_compiles", False)
    zx.config.update("compile_notice_s", None)
    f, _ = _fresh_program()
    with caplog.at_level(logging.DEBUG, logger="zerax"):
        f(np.ones(3))
    assert not [r for r in caplog.records if r.name == "zerax"]


def test_a_long_compile_says_what_it_compiles(settings, capsys):
    zx.config.update("log_compiles", False)
    zx.config.update("compile_notice_s", 0.001)   # every real compile is "long" here
    f, _ = _fresh_program()
    f(np.ones(4))
    err = capsys.readouterr().err
    assert "zerax: compiling jit(f) (" in err
    assert "done in " in err
    f(np.ones(4))           # compiled: nothing more
    assert capsys.readouterr().err == ""


def test_options_are_checked():
    with pytest.raises(zx.errors.ZeraxValueError):
        zx.config.update("log_compile", True)
