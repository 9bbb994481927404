"""examples/export_model.py, run as a user would (``--quick``: one epoch on 256 digits):
train, export, load in a child process that imports only zerax, ONNX in onnxruntime;
the example exits non-zero if any step's results differ."""

import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_export_model_example_quick(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, str(ROOT / "examples" / "export_model.py"),
                          "--quick", "--out", str(tmp_path)], capture_output=True, text=True,
                         timeout=900, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "loaded MLP vs the trained one: agree" in res.stdout
    assert "gradient through the loaded MLP: agree" in res.stdout
    if "skipping the ONNX step" not in res.stdout:
        assert "cnn in onnxruntime vs zerax: agree" in res.stdout
    assert (tmp_path / "mlp.zx").read_bytes()[:8] == b"\x89ZXEXP\r\n"
