"""zerax.data: ArrayDataset/map, the DataLoader (order from (seed, epoch), epochs, exact
resume, shards, prefetch thread) and the dataset readers (spiral, digits, IDX, CIFAR)."""

import gzip
import struct
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zerax
from zerax import data
from zerax.data import datasets
from zerax.errors import DatasetError, MissingDependencyError


def _ids(batches):
    return [np.asarray(b[1] if isinstance(b, tuple) else b).tolist() for b in batches]


def _ds(n):
    return data.ArrayDataset(np.arange(n * 2, dtype=np.float32).reshape(n, 2), np.arange(n))


def test_array_dataset_and_map():
    ds = data.ArrayDataset({"img": np.ones((4, 3)), "id": np.arange(4)}, np.arange(4) * 2)
    ex = ds[2]
    assert isinstance(ex, tuple) and ex[0]["id"] == 2 and ex[1] == 4
    assert len(ds) == 4 and isinstance(ds, data.Dataset)
    with pytest.raises(IndexError, match="out of range"):
        ds[4]
    with pytest.raises(DatasetError, match="same number of examples"):
        data.ArrayDataset(np.ones(3), np.ones(4))
    with pytest.raises(DatasetError, match="leading"):
        data.ArrayDataset(np.float32(1.0))
    one = data.ArrayDataset(np.arange(5))
    assert one[3] == 3
    mapped = data.map(_ds(5), lambda xy: (xy[0] + 100, xy[1]))
    batched = data.map(_ds(5), lambda xy: (xy[0] + 100, xy[1]), batched=True)
    for m in (mapped, batched):
        np.testing.assert_array_equal(m[4][0], [108, 109])
        (x, y), = list(data.DataLoader(m, 5))
        np.testing.assert_array_equal(np.asarray(x), np.arange(10).reshape(5, 2) + 100)
        assert isinstance(x, zerax.Array)


def test_loader_order_epochs_and_set_epoch():
    ds = _ds(10)
    plain = data.DataLoader(ds, 4)
    assert len(plain) == 3
    assert _ids(plain) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert len(data.DataLoader(ds, 4, drop_last=True)) == 2
    assert _ids(data.DataLoader(ds, 4, drop_last=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    a = data.DataLoader(ds, 3, shuffle=True, seed=7)
    b = data.DataLoader(ds, 3, shuffle=True, seed=7, prefetch=0)
    epochs_a = [sum(_ids(a), []) for _ in range(3)]  # each iteration is the next epoch
    epochs_b = [sum(_ids(b), []) for _ in range(3)]
    assert epochs_a == epochs_b
    for e, order in enumerate(epochs_a):  # a permutation, from NumPy's PCG64([seed, epoch])
        assert order == np.random.default_rng([7, e]).permutation(10).tolist()
    assert epochs_a[0] != epochs_a[1]
    assert a.epoch == 3
    a.set_epoch(1)
    assert sum(_ids(a), []) == epochs_a[1]
    other_seed = data.DataLoader(ds, 3, shuffle=True, seed=8)
    assert sum(_ids(other_seed), []) != epochs_a[0]
    (x, y), *_ = list(a)
    assert isinstance(x, zerax.Array) and x.dtype == np.float32 and x.shape == (3, 2)


def test_state_restore_resumes_at_the_exact_next_batch():
    ds = _ds(11)
    ref = data.DataLoader(ds, 3, shuffle=True, seed=3)
    full = [_ids(ref) for _ in range(3)]  # epochs 0, 1, 2 without stopping
    run = data.DataLoader(ds, 3, shuffle=True, seed=3)
    sum(_ids(run), [])  # epoch 0
    seen = []
    for i, batch in enumerate(run):  # epoch 1, stopped after 2 batches
        seen.append(_ids([batch])[0])
        if i == 1:
            state = run.state()
            break
    assert state == {"epoch": 1, "batch": 2} and seen == full[1][:2]
    fresh = data.DataLoader(ds, 3, shuffle=True, seed=3)
    fresh.restore(state)
    assert _ids(fresh) == full[1][2:]   # the rest of epoch 1, exactly
    assert _ids(fresh) == full[2]       # then epoch 2
    # An epoch abandoned by a break (no restore) is not resumed: the next one starts.
    run2 = data.DataLoader(ds, 3, shuffle=True, seed=3)
    next(iter(run2))
    assert _ids(run2) == full[1]
    # The end of an epoch is the start of the next one.
    end = data.DataLoader(ds, 3, shuffle=True, seed=3)
    end.restore({"epoch": 0, "batch": 4})
    assert end.state() == {"epoch": 1, "batch": 0} and _ids(end) == full[1]
    with pytest.raises(DatasetError, match="4 batches per epoch"):
        end.restore({"epoch": 0, "batch": 5})
    with pytest.raises(DatasetError, match="DataLoader.state"):
        end.restore({"epoch": 0})


def _noisy(seed=5, batched=True):
    def add_noise(xy, rng):
        x, y = xy
        return x + rng.integers(1, 1000, size=np.shape(x)).astype(x.dtype), y
    return data.map(_ds(9), add_noise, batched=batched, seed=seed)


def _values(loader):
    return [np.asarray(x).tolist() for x, _ in loader]


@pytest.mark.parametrize("batched", [True, False])
def test_seeded_map_draws_from_seed_epoch_and_examples(batched):
    # The draws are a pure function of (seed, epoch, example indices): the same for two
    # loaders, with or without the prefetch thread, new each epoch, and exact on resume.
    a = data.DataLoader(_noisy(batched=batched), 4, shuffle=True, seed=1)
    b = data.DataLoader(_noisy(batched=batched), 4, shuffle=True, seed=1, prefetch=0)
    epochs_a = [_values(a) for _ in range(3)]
    assert epochs_a == [_values(b) for _ in range(3)]
    assert epochs_a[0] != epochs_a[1] != epochs_a[2]
    b.set_epoch(1)
    assert _values(b) == epochs_a[1]
    run = data.DataLoader(_noisy(batched=batched), 4, shuffle=True, seed=1)
    _values(run)
    it = iter(run)
    first = np.asarray(next(it)[0]).tolist()
    state = run.state()
    it.close()
    fresh = data.DataLoader(_noisy(batched=batched), 4, shuffle=True, seed=1)
    fresh.restore(state)
    assert [first] + _values(fresh) == epochs_a[1]
    # Another seed, other draws; the same example read alone gets its own draw, stably.
    c = data.DataLoader(_noisy(seed=6, batched=batched), 4, shuffle=True, seed=1)
    assert _values(c) != epochs_a[0]
    ds = _noisy(batched=batched)
    ds.set_epoch(2)
    np.testing.assert_array_equal(ds[3][0], ds[3][0])
    assert not np.array_equal(ds[3][0], ds[4][0] - 2)   # rows 3 and 4 differ by 2 unnoised
    # set_epoch reaches a seeded map under another map.
    outer = data.map(_noisy(batched=batched), lambda xy: xy, batched=True)
    loader = data.DataLoader(outer, 4, shuffle=True, seed=1)
    loader.set_epoch(2)
    assert _values(loader) == epochs_a[2]
    with pytest.raises(DatasetError, match="seed"):
        data.map(_ds(3), lambda x, r: x, seed=-1)


def _affine_reference(img, rot, zoom, shear, ty, tx, fill=0.0):
    """One image through the documented map, pixel by pixel (bilinear, `fill` outside)."""
    h, w = img.shape
    cy, cx = (h - 1) / 2, (w - 1) / 2
    th, sh = np.deg2rad(rot), np.deg2rad(shear)
    m = zoom * np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]]) \
        @ np.array([[1.0, np.tan(sh)], [0.0, 1.0]])
    inv = np.linalg.inv(m)
    out = np.empty_like(img)
    for r in range(h):
        for c in range(w):
            sx, sy = inv @ [c - cx - tx, cy - r + ty]
            fr, fc = cy - sy, sx + cx
            r0, c0 = int(np.floor(fr)), int(np.floor(fc))
            total = 0.0
            for rr, wr in ((r0, 1 - (fr - r0)), (r0 + 1, fr - r0)):
                for cc, wc in ((c0, 1 - (fc - c0)), (c0 + 1, fc - c0)):
                    v = img[rr, cc] if 0 <= rr < h and 0 <= cc < w else fill
                    total += wr * wc * v
            out[r, c] = total
    return out


def test_random_affine():
    from zerax.data import transforms
    rng = np.random.default_rng(0)
    imgs = rng.random((3, 6, 6))
    same = transforms.random_affine(imgs, 0)
    np.testing.assert_array_equal(same, imgs)
    # Exact geometry: whole-pixel shifts are slices with a zero border; quarter and half
    # turns about the centre are np.rot90.
    moved = transforms.random_affine(imgs, 0, shift=(-2, -2))
    np.testing.assert_allclose(moved[:, :-2, :-2], imgs[:, 2:, 2:], atol=1e-12)
    assert not moved[:, -2:, :].any() and not moved[:, :, -2:].any()
    for angle, k in ((90, 1), (180, 2), (-90, -1)):
        np.testing.assert_allclose(
            transforms.random_affine(imgs, 0, rotation=(angle, angle)),
            np.rot90(imgs, k, axes=(1, 2)), atol=1e-12)
    # Fractional everything against the pixel-by-pixel reference.
    kw = dict(rotation=(17.0, 17.0), scale=(0.9, 0.9), shear=(8.0, 8.0), shift=(0.4, 0.4))
    got = transforms.random_affine(imgs, 0, fill=0.25, **kw)
    for i in range(3):
        np.testing.assert_allclose(got[i], _affine_reference(imgs[i], 17.0, 0.9, 8.0, 0.4,
                                                             0.4, fill=0.25), atol=1e-12)
    # Random amounts: one map per image, shared by its channels; flattened rows with
    # shape= give the same images; float32 stays float32; the rng makes it reproducible.
    chans = np.stack([imgs, 2 * imgs], axis=1).astype(np.float32)
    kw = dict(rotation=15, scale=0.1, shear=10, shift=1.0)
    out = transforms.random_affine(chans, 7, **kw)
    assert out.dtype == np.float32 and out.shape == chans.shape
    np.testing.assert_allclose(out[:, 1], 2 * out[:, 0], rtol=1e-6)
    flat = transforms.random_affine(chans[:, 0].reshape(3, 36), 7, shape=(6, 6), **kw)
    np.testing.assert_allclose(flat.reshape(3, 6, 6), out[:, 0], rtol=1e-6)
    assert not np.allclose(out[0, 0], out[1, 0])
    np.testing.assert_array_equal(out, transforms.random_affine(chans, 7, **kw))
    nearest = transforms.random_affine(imgs, 3, interpolation="nearest", **kw)
    assert np.isin(nearest, np.append(imgs.ravel(), 0.0)).all()  # only input values
    for bad, match in (({"shape": (5, 5)}, "flattened"), ({"interpolation": "cubic"}, "cubic"),
                       ({"rotation": -1}, ">= 0"), ({"scale": (0.0, 1.0)}, "above 0")):
        with pytest.raises(DatasetError, match=match):
            transforms.random_affine(imgs.reshape(3, 36) if "shape" in bad else imgs, 0, **bad)
    with pytest.raises(DatasetError, match="floating-point"):
        transforms.random_affine(np.zeros((1, 4, 4), np.uint8), 0)
    with pytest.raises(DatasetError, match="batch of images"):
        transforms.random_affine(imgs[0, 0], 0)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 23), batch=st.integers(1, 6), count=st.integers(1, 4),
       shuffle=st.booleans(), drop_last=st.booleans(), seed=st.integers(0, 2**31))
def test_shards_partition_the_epoch(n, batch, count, shuffle, drop_last, seed):
    loader = data.DataLoader(_ds(n), batch, shuffle=shuffle, seed=seed, drop_last=drop_last,
                             prefetch=0)
    order = np.random.default_rng([seed, 0]).permutation(n) if shuffle else np.arange(n)
    per = n // count if drop_last else -(-n // count)
    padded = np.resize(order, per * count)  # the reference: wrap around, then deal out
    shards = [loader.shard(i, count) for i in range(count)]
    lengths = {len(s) for s in shards}
    assert len(lengths) == 1  # every process takes the same number of steps
    for i, s in enumerate(shards):
        mine = padded[i::count].tolist()
        got = _ids(s)
        want = [mine[k:k + batch] for k in range(0, len(mine), batch)]
        if drop_last:
            want = [w for w in want if len(w) == batch]
        assert got == want and len(got) == len(s)
    if not drop_last:
        assert set(sum((sum(_ids(s), []) for s in shards), [])) == set(range(n))
    with pytest.raises(DatasetError, match="0 <= index < count"):
        loader.shard(count, count)


class _Flaky:
    def __init__(self, n, bad):
        self.n, self.bad = n, bad

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise RuntimeError(f"cannot decode example {i}")
        return np.float32(i)


def _loader_threads():
    return [t for t in threading.enumerate() if t.name == "zerax-DataLoader"]


def test_prefetch_thread_reraises_and_stops_cleanly():
    loader = data.DataLoader(_Flaky(20, bad=13), 2, prefetch=2)
    got = []
    with pytest.raises(RuntimeError, match="cannot decode example 13"):
        for x in loader:
            got.append(np.asarray(x).tolist())
    assert got == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]]
    # An early break stops the worker even while it waits on a full queue.
    big = data.DataLoader(_ds(1000), 1, prefetch=2)
    for i, _ in enumerate(big):
        if i == 3:
            break
    for t in _loader_threads():
        t.join(timeout=2)
    assert _loader_threads() == []
    # Custom collate; the worker's results equal the synchronous loader's.
    col = data.DataLoader(_ds(5), 2, collate=lambda exs: {"n": np.array([e[1] for e in exs])})
    assert [np.asarray(b["n"]).tolist() for b in col] == [[0, 1], [2, 3], [4]]
    with pytest.raises(DatasetError, match="batch_size"):
        data.DataLoader(_ds(3), 0)
    with pytest.raises(DatasetError, match="__len__"):
        data.DataLoader(object(), 2)


# ---------------------------------------------------------------- datasets


def _dezero_get_spiral(train=True):
    # DeZero's dezero/datasets.py get_spiral, verbatim but for np.int -> np.int32.
    seed = 1984 if train else 2020
    np.random.seed(seed=seed)
    num_data, num_class, input_dim = 100, 3, 2
    data_size = num_class * num_data
    x = np.zeros((data_size, input_dim), dtype=np.float32)
    t = np.zeros(data_size, dtype=np.int32)
    for j in range(num_class):
        for i in range(num_data):
            rate = i / num_data
            radius = 1.0 * rate
            theta = j * 4.0 + 4.0 * rate + np.random.randn() * 0.2
            ix = num_data * j + i
            x[ix] = np.array([radius * np.sin(theta), radius * np.cos(theta)]).flatten()
            t[ix] = j
    indices = np.random.permutation(num_data * num_class)
    return x[indices], t[indices]


def test_spiral_is_dezeros():
    saved = np.random.get_state()
    try:
        for train in (True, False):
            ref_x, ref_t = _dezero_get_spiral(train)
            x, t = datasets.spiral(train)
            np.testing.assert_array_equal(x, ref_x)
            np.testing.assert_array_equal(t, ref_t)
    finally:
        np.random.set_state(saved)


def test_digits(monkeypatch):
    from sklearn.datasets import load_digits
    bunch = load_digits()
    (x_tr, y_tr), (x_te, y_te) = datasets.digits()
    assert x_tr.shape == (1437, 64) and x_te.shape == (360, 64)
    assert x_tr.dtype == np.float32 and y_tr.dtype == np.int32
    assert 0.0 == x_tr.min() and x_tr.max() == 1.0
    np.testing.assert_array_equal(x_te[-1], bunch.data[-1].astype(np.float32) / 16)
    np.testing.assert_array_equal(np.concatenate([y_tr, y_te]), bunch.target)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(MissingDependencyError, match=r"zerax\[datasets\]"):
        datasets.digits()


def _idx(arr, dtype_code=0x08):
    arr = np.asarray(arr)
    return struct.pack(">BBBB", 0, 0, dtype_code, arr.ndim) + \
        struct.pack(f">{arr.ndim}I", *arr.shape) + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


def _write_mnist(folder, n_train=5, n_test=3, gz=False):
    rng = np.random.default_rng(0)
    out = {}
    for split, n in (("train", n_train), ("t10k", n_test)):
        imgs = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labs = rng.integers(0, 10, n, dtype=np.uint8)
        for kind, arr, nd in (("images", imgs, 3), ("labels", labs, 1)):
            name = f"{split}-{kind}-idx{nd}-ubyte"
            blob = _idx(arr)
            if gz:
                (folder / (name + ".gz")).write_bytes(gzip.compress(blob))
            else:
                (folder / name).write_bytes(blob)
        out[split] = (imgs, labs)
    return out


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_from_idx_files(tmp_path, gz):
    ref = _write_mnist(tmp_path, gz=gz)
    (x_tr, y_tr), (x_te, y_te) = datasets.mnist(tmp_path)
    np.testing.assert_array_equal(x_tr, ref["train"][0].astype(np.float32) / 255)
    np.testing.assert_array_equal(y_te, ref["t10k"][1])
    assert x_tr.dtype == np.float32 and y_tr.dtype == np.int32 and x_te.shape == (3, 28, 28)
    (fx, _), _ = datasets.fashion_mnist(tmp_path)
    np.testing.assert_array_equal(fx, x_tr)


def test_idx_reader_dtypes_and_malformed_files(tmp_path):
    p = tmp_path / "a-idx2-double"
    arr = np.arange(6.0).reshape(2, 3)
    p.write_bytes(_idx(arr, 0x0E))
    np.testing.assert_array_equal(datasets.read_idx(p), arr)
    cases = [(b"\x00\x00\x08", "ends inside its header"),
             (b"\x01\x00\x08\x01" + struct.pack(">I", 1) + b"\x00", "does not start like"),
             (b"\x00\x00\x07\x01" + struct.pack(">I", 1) + b"\x00", "does not start like"),
             (_idx(np.arange(4, dtype=np.uint8))[:-1], "ends inside its data"),
             (_idx(np.arange(4, dtype=np.uint8)) + b"\x00", "bytes beyond"),
             (b"\x00\x00\x08\x02" + struct.pack(">II", 2**31, 2**31), "not a plausible"),
             (b"\x1f\x8b\x08\x00garbage", "not a readable")]
    for blob, message in cases:
        p.write_bytes(blob)
        with pytest.raises(DatasetError, match=message) as info:
            datasets.read_idx(p)
        assert str(p) in str(info.value)
    with pytest.raises(DatasetError, match="not found"):
        datasets.read_idx(tmp_path / "nope")
    with pytest.raises(DatasetError, match="train-images-idx3-ubyte.*MNIST layout"):
        datasets.mnist(tmp_path)
    _write_mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(_idx(np.zeros(2, np.uint8)))
    with pytest.raises(DatasetError, match="3 images but .*2 labels"):
        datasets.mnist(tmp_path)


def test_cifar10_binary(tmp_path):
    folder = tmp_path / "cifar-10-batches-bin"
    folder.mkdir()
    rng = np.random.default_rng(0)
    ref = []
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        labels = rng.integers(0, 10, 2, dtype=np.uint8)
        pixels = rng.integers(0, 256, (2, 3072), dtype=np.uint8)
        (folder / name).write_bytes(np.concatenate([labels[:, None], pixels], 1).tobytes())
        ref.append((labels, pixels))
    (x_tr, y_tr), (x_te, y_te) = datasets.cifar10(tmp_path)
    assert x_tr.shape == (10, 3, 32, 32) and x_te.shape == (2, 3, 32, 32)
    np.testing.assert_array_equal(y_tr, np.concatenate([lab for lab, _ in ref[:5]]))
    # Record 1 of batch 2: red plane first, row-major.
    np.testing.assert_array_equal(x_tr[3, 0].ravel(), ref[1][1][1, :1024] / np.float32(255))
    np.testing.assert_array_equal(x_te[1, 2, 31], ref[5][1][1, -32:] / np.float32(255))
    (folder / "test_batch.bin").write_bytes(b"\x00" * 3074)
    with pytest.raises(DatasetError, match="test_batch.bin.*3074 bytes"):
        datasets.cifar10(folder)
    (folder / "test_batch.bin").write_bytes(bytes([12]) + b"\x00" * 3072)
    with pytest.raises(DatasetError, match="label 12"):
        datasets.cifar10(folder)
    pickled = tmp_path / "py"
    pickled.mkdir()
    (pickled / "data_batch_1").write_bytes(b"\x80\x04")
    with pytest.raises(DatasetError, match="pickled"):
        datasets.cifar10(pickled)
