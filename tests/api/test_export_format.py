"""The exported program format: blobs written by earlier zerax versions load and give
the results recorded then (tests/api/export_fixtures), and damaged, truncated, newer or
malformed blobs are refused with an ExportError that says what is wrong (fuzzed with
hypothesis, digests recomputed so that the parser itself is exercised)."""

import hashlib
import json
import os
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax as zx
import zerax.numpy as znp
from zerax import export, io
from zerax.errors import ExportError, ZeraxError
from zerax._src.api.export import blob as blob_format

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_fixtures")
FIXTURES = ["mlp", "rnn_scan", "control", "custom_vjp"]


def _fixture(name):
    with open(os.path.join(HERE, f"{name}.zx"), "rb") as f:
        return f.read()


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_blobs_still_load_and_agree(name):
    exp = export.deserialize(_fixture(name))
    want = io.load(os.path.join(HERE, f"{name}.expected.safetensors"))
    inputs = want["inputs"]
    for got, expected in zip(zx.tree.leaves(exp.call(*inputs)), want["outputs"]):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
        assert np.asarray(got).dtype == np.asarray(expected).dtype
    if "grad" in want:
        k = next(i for i, x in enumerate(inputs) if zx.tree.structure(x) ==
                 zx.tree.structure(want["grad"]) and any(
                     np.shape(a) == np.shape(b) for a, b in zip(zx.tree.leaves(x),
                                                                zx.tree.leaves(want["grad"]))))

        def loss(a):
            args = list(inputs)
            args[k] = a
            return sum(znp.sum(o) for o in zx.tree.leaves(exp.call(*args))
                       if o.dtype.kind == "f")
        for got, expected in zip(zx.tree.leaves(zx.grad(loss)(inputs[k])),
                                 zx.tree.leaves(want["grad"])):
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_fixture_header():
    blob = _fixture("mlp")
    assert blob[:8] == b"\x89ZXEXP\r\n"
    version, total = struct.unpack("<IQ", blob[8:20])
    assert version == 1 and total == len(blob)
    (vlen,) = struct.unpack("<H", blob[20:22])
    assert blob[22:22 + vlen] == b"0.1.0"


# --------------------------------------------------------------------------- damage

def test_every_changed_byte_is_refused():
    blob = _fixture("custom_vjp")
    for pos in range(len(blob)):
        bad = bytearray(blob)
        bad[pos] ^= 0x01 if pos % 2 else 0x80
        with pytest.raises(ExportError):
            export.deserialize(bytes(bad))


def test_truncations_and_extra_bytes():
    blob = _fixture("custom_vjp")
    for n in list(range(0, 40)) + list(range(40, len(blob), 97)) + [len(blob) - 1]:
        with pytest.raises(ExportError, match="truncated|not a zerax exported program"):
            export.deserialize(blob[:n])
    with pytest.raises(ExportError, match="after its end"):
        export.deserialize(blob + b"\0")
    with pytest.raises(ExportError, match="not a zerax exported program"):
        export.deserialize(b"PK\x03\x04" + blob[4:])
    with pytest.raises(ExportError, match="takes the bytes"):
        export.deserialize("not bytes")


def _reseal(data: bytes) -> bytes:
    """``data`` (a blob less its digest) with the total length and SHA-256 redone."""
    data = data[:12] + struct.pack("<Q", len(data) + 32) + data[20:]
    return data + hashlib.sha256(data).digest()


def _with_manifest(blob: bytes, edit) -> bytes:
    """The blob with its manifest replaced by ``edit(manifest)`` (lengths and digest
    redone): a blob that is intact but says something else."""
    (vlen,) = struct.unpack("<H", blob[20:22])
    pos = 22 + vlen
    (mlen,) = struct.unpack("<Q", blob[pos:pos + 8])
    manifest = json.loads(blob[pos + 8:pos + 8 + mlen])
    text = json.dumps(edit(manifest)).encode()
    rest = blob[pos + 8 + mlen:-32]
    return _reseal(blob[:pos] + struct.pack("<Q", len(text)) + text + rest)


def test_newer_format_version():
    blob = _fixture("mlp")
    newer = _reseal(blob[:8] + struct.pack("<I", 2) + blob[12:-32])
    with pytest.raises(ExportError, match="format version 2, by a newer zerax"):
        export.deserialize(newer)
    damaged = bytearray(newer)
    damaged[40] ^= 1
    with pytest.raises(ExportError, match="damaged.*newer format"):
        export.deserialize(bytes(damaged))


def _rename_primitive(m, old, new):
    text = json.dumps(m).replace(f'"primitive": "{old}"', f'"primitive": "{new}"')
    return json.loads(text)


def test_unknown_primitive():
    blob = _with_manifest(_fixture("mlp"), lambda m: _rename_primitive(m, "tanh", "tanh_v9"))
    with pytest.raises(ExportError, match="unknown primitive 'tanh_v9'"):
        export.deserialize(blob)
    blob = _with_manifest(_fixture("mlp"),
                          lambda m: _rename_primitive(m, "tanh", "debug_callback"))
    with pytest.raises(ExportError, match="unknown primitive"):
        export.deserialize(blob)


def _first_eqn(m):
    return m["exported"]["program"]["program"]["eqns"][0]


@pytest.mark.parametrize("edit, message", [
    (lambda m: _first_eqn(m).update(out=[{"dtype": "float64", "shape": [{"dim": [[1, ["b"]]]},
                                                                         8]}]),
     "not well typed"),
    (lambda m: _first_eqn(m).update(**{"in": [99, 0]}), "used before it is defined"),
    (lambda m: _first_eqn(m)["params"].update(preferred_element_type={"pickle": "os"}),
     "unknown parameter tag"),
    (lambda m: _first_eqn(m).update(extra=1), "expected an object with keys"),
    (lambda m: m["exported"]["program"]["program"]["invars"][0].update(dtype="object"),
     "unknown dtype"),
    (lambda m: m["exported"]["program"]["program"]["invars"][0].update(
        shape=[{"dim": [[1, ["c"]]]}, 6]), "not one of the program's|do not appear alone"),
    (lambda m: m["exported"]["program"].update(consts=[0, 99]), "constants table"),
    (lambda m: m["exported"].update(in_tree={"custom": {"name": "os.system", "aux": "",
                                                        "children": []}}),
     "not registered"),
    (lambda m: m["exported"].update(fun_name=7), "malformed"),
    (lambda m: m.update(format="pickle"), "not a zerax.export manifest"),
])
def test_malformed_manifests(edit, message):
    def apply(m):
        edit(m)
        return m
    with pytest.raises(ExportError, match=message):
        export.deserialize(_with_manifest(_fixture("mlp"), apply))


def _mutations(node, path=()):
    """Every (path, value) in a JSON value."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _mutations(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _mutations(v, path + (i,))


_JUNK = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
                  st.floats(allow_nan=False), st.text(max_size=8),
                  st.lists(st.integers(-3, 3), max_size=3),
                  st.dictionaries(st.sampled_from(["dim", "float", "jaxpr", "literal", "x"]),
                                  st.integers(-2, 2), max_size=2))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_fuzzed_manifests_raise_export_errors_or_load(data):
    """Any value anywhere in the manifest replaced (digest redone): deserialize and a call
    either work or raise a zerax error (ExportError, or a shape error from the call),
    never a raw Python exception."""
    blob = _fixture("control")

    in_while = [False]

    def edit(m):
        spots = list(_mutations(m))
        path, _ = spots[data.draw(st.integers(0, len(spots) - 1))]
        if not path:
            return m
        node = m
        for p in path[:-1]:
            node = node[p]
            in_while[0] |= isinstance(node, dict) and node.get("primitive") == "while"
        node[path[-1]] = data.draw(_JUNK)
        return m
    try:
        exp = export.deserialize(_with_manifest(blob, edit))
    except ExportError:
        return
    if in_while[0] or _largest_integer(exp._program) > 10 ** 4:
        # a while loop's body or bound edited (an increment made 0), or a trip count
        # made astronomically large: a valid program that may run for ever (as it would
        # in JAX), not a malformed one
        return
    try:
        exp.call(np.arange(5.0), np.int64(2))
    except ZeraxError:
        pass


def _largest_integer(node) -> int:
    """The largest magnitude of an integer anywhere in a manifest's JSON value."""
    if isinstance(node, dict):
        return max(map(_largest_integer, node.values()), default=0)
    if isinstance(node, list):
        return max(map(_largest_integer, node), default=0)
    if isinstance(node, int) and not isinstance(node, bool):
        return abs(node)
    return 0


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_fuzzed_constants_are_refused(data):
    """A changed byte in the constants with the blob's digest redone: the block's own
    CRCs still refuse it (or its header checks do)."""
    blob = _fixture("mlp")
    manifest, consts, _ = blob_format.read_blob(blob)
    body = blob_format.write_blob(manifest, consts, "0.1.0")[:-32]
    (vlen,) = struct.unpack("<H", body[20:22])
    pos = 22 + vlen
    (mlen,) = struct.unpack("<Q", body[pos:pos + 8])
    start = pos + 8 + mlen + 8
    k = data.draw(st.integers(start, len(body) - 1))
    bad = bytearray(body)
    bad[k] ^= data.draw(st.integers(1, 255))
    with pytest.raises(ExportError):
        export.deserialize(_reseal(bytes(bad)))


def test_a_blob_is_bytes_without_pickle_or_code():
    blob = _fixture("rnn_scan")
    assert b"pickle" not in blob and b"__reduce__" not in blob
    manifest, consts, info = blob_format.read_blob(blob)
    assert info == {"format_version": 1, "zerax_version": "0.1.0"}
    assert manifest["format"] == "zerax.export"
    assert all(isinstance(c, np.ndarray) for c in consts)
