"""tt.save / tt.load (PyTorch's zip checkpoint format, safe loading) and tt.save_file / tt.load_file
(safetensors). tests/data/torch_checkpoint.pt was written by PyTorch (tests/data/make_torch_checkpoint.py)
and is loaded here without torch."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import tritensor as tt
from tritensor import dtypes as _dt
from tritensor.nn import Parameter

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def _roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    tt.save(obj, buf)
    buf.seek(0)
    return tt.load(buf, **load_kw)


def _sample(dtype, device, shape=(2, 3)):
    vals = (np.arange(int(np.prod(shape))).reshape(shape) % 5 - 2)
    if dtype is tt.bool:
        vals = vals > 0
    return tt.tensor(vals, dtype=dtype, device=device)


def _host(t):
    t = t.detach().cpu()
    return (t.float() if t.dtype is tt.bfloat16 else t).numpy()


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape and a.device == b.device
    np.testing.assert_array_equal(_host(a), _host(b))


# ------------------------------------------------------------------------------ round trips
@pytest.mark.parametrize("dtype", _dt.ALL, ids=lambda d: d.name)
def test_every_dtype_round_trips(dtype, device):
    t = _sample(dtype, device)
    back = _roundtrip({"t": t, "scalar": _sample(dtype, device, ()),
                       "empty": tt.zeros(0, 4, dtype=dtype, device=device)})
    _same(back["t"], t)
    assert back["scalar"].shape == () and back["empty"].shape == (0, 4) and back["empty"].dtype == dtype
    assert back["t"].device == t.device and back["empty"].device == t.device


def test_views_stay_views_of_one_storage(device):
    base = tt.arange(12.0, device=device).reshape(3, 4)
    obj = {"base": base, "col": base[:, 1], "tail": base[1:, 2:], "t": base.t()}
    buf = io.BytesIO()
    tt.save(obj, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        assert [n for n in zf.namelist() if "/data/" in n] == ["archive/data/0"]   # one storage, written once
        assert zf.read("archive/version") == b"3\n" and zf.read("archive/byteorder") == b"little"
    buf.seek(0)
    back = tt.load(buf)
    assert back["col"].untyped_storage() is back["base"].untyped_storage() is back["tail"].untyped_storage()
    assert back["col"].stride() == (4,) and back["col"].storage_offset() == 1 and not back["t"].is_contiguous()
    _same(back["tail"], base[1:, 2:])
    back["base"][1, 2] = 100.0
    assert back["tail"][0, 0].item() == 100.0 and back["t"][2, 1].item() == 100.0


def test_storage_records_are_64_byte_aligned(tmp_path):
    path = tmp_path / "a.pt"
    tt.save({"a": tt.ones(3), "b": tt.ones(5, dtype=tt.float64), "c": tt.ones(1, dtype=tt.int8)}, path)
    with open(path, "rb") as fh, zipfile.ZipFile(fh) as zf:
        for info in zf.infolist():
            fh.seek(info.header_offset + 26)
            n, e = np.frombuffer(fh.read(4), dtype="<u2")
            if "/data/" in info.filename:
                assert (info.header_offset + 30 + n + e) % 64 == 0


def test_containers_numbers_dtypes_devices_parameters_and_requires_grad(tmp_path):
    p = Parameter(tt.tensor([1.0, 2.0]))
    frozen = Parameter(tt.tensor([3.0]), requires_grad=False)
    leaf = tt.tensor([1.0, -1.0], requires_grad=True)
    sd = collections.OrderedDict(weight=tt.ones(2, 2), bias=tt.zeros(2))
    obj = {"sd": sd, "p": p, "frozen": frozen, "leaf": leaf, "list": [1, 2.5, "s", None, True, (1, (2, 3))],
           "dtype": tt.bfloat16, "dev": tt.device("cuda", 0), "cpu": tt.device("cpu"), "size": tt.Size([2, 3]),
           "bytes": b"\x00\xff", "set": {1, 2}, "nested": {"a": {"b": [tt.tensor(5)]}}}
    path = tmp_path / "obj.pt"
    tt.save(obj, str(path))
    back = tt.load(path)
    assert type(back["sd"]) is collections.OrderedDict and list(back["sd"]) == ["weight", "bias"]
    assert type(back["p"]) is Parameter and back["p"].requires_grad and back["p"].tolist() == [1.0, 2.0]
    assert type(back["frozen"]) is Parameter and not back["frozen"].requires_grad
    assert back["leaf"].requires_grad and back["leaf"].is_leaf and back["leaf"].grad_fn is None
    assert not back["sd"]["weight"].requires_grad
    assert back["list"] == [1, 2.5, "s", None, True, (1, (2, 3))]
    assert back["dtype"] is tt.bfloat16 and back["dev"] == tt.device("cuda:0") and back["cpu"] == tt.device("cpu")
    assert back["size"] == (2, 3) and isinstance(back["size"], tt.Size)
    assert back["bytes"] == b"\x00\xff" and back["set"] == {1, 2}
    assert back["nested"]["a"]["b"][0].item() == 5
    assert _roundtrip(3) == 3 and _roundtrip("x") == "x" and _roundtrip(None) is None and _roundtrip(1.5) == 1.5
    t = tt.ones(2)
    both = _roundtrip([t, t])
    assert both[0] is both[1]          # one object saved twice is one object after loading


def test_map_location_variants():
    obj = {"c": tt.arange(3.0, device="cuda"), "h": tt.arange(2.0)}
    back = _roundtrip(obj)
    assert back["c"].device == tt.device("cuda:0") and back["h"].device == tt.device("cpu")
    for loc in ("cpu", tt.device("cpu"), {"cuda:0": "cpu"}, lambda storage, location: storage):
        back = _roundtrip(obj, map_location=loc)
        assert back["c"].device == tt.device("cpu") and back["c"].tolist() == [0.0, 1.0, 2.0]
    back = _roundtrip(obj, map_location="cuda")
    assert back["h"].device == tt.device("cuda:0") and back["h"].tolist() == [0.0, 1.0]
    back = _roundtrip(obj, map_location=lambda storage, location: storage.cuda())
    assert back["h"].device == tt.device("cuda:0")
    seen = []
    back = _roundtrip(obj, map_location=lambda storage, location: seen.append(location))   # None: default place
    assert sorted(seen) == ["cpu", "cuda:0"] and back["c"].device == tt.device("cuda:0")


def test_cuda_checkpoint_without_cuda(monkeypatch):
    buf = io.BytesIO()
    tt.save({"c": tt.ones(2, device="cuda")}, buf)
    from tritensor.runtime import device as rd
    monkeypatch.setattr(rd, "is_available", lambda: False)
    buf.seek(0)
    with pytest.raises(RuntimeError, match=r"Attempting to deserialize object on a CUDA device but "
                                           r"tritensor.cuda.is_available\(\) is False"):
        tt.load(buf)
    buf.seek(0)
    assert tt.load(buf, map_location="cpu")["c"].tolist() == [1.0, 1.0]


def test_cuda_index_past_device_count():
    buf = io.BytesIO()
    tt.save({"c": tt.ones(2, device="cuda")}, buf)
    buf.seek(0)
    n = tt.cuda.device_count()
    with pytest.raises(RuntimeError, match=rf"Attempting to deserialize object on CUDA device {n} but "
                                           rf"tritensor.cuda.device_count\(\) is {n}"):
        tt.load(buf, map_location={"cuda:0": f"cuda:{n}"})


def test_mmap_maps_storages_from_the_file(tmp_path):
    path = tmp_path / "m.pt"
    base = tt.arange(20.0)
    tt.save({"a": base, "v": base[5:]}, path)
    back = tt.load(path, mmap=True)
    assert back["v"].untyped_storage() is back["a"].untyped_storage() and back["v"][0].item() == 5.0
    back["a"][0] = -1.0                           # copy-on-write: the file keeps its values
    assert tt.load(path)["a"][0].item() == 0.0
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
        tt.load(io.BytesIO(b""), mmap=True)


def test_views_of_one_storage_as_two_dtypes_refused():
    from tritensor.tensor import Tensor
    a = tt.zeros(4)
    other = Tensor._make(a._storage, (4,), (1,), 0, tt.int32)
    with pytest.raises(RuntimeError, match="Cannot save multiple tensors or storages that view the same data "
                                           "as different types"):
        tt.save([a, other], io.BytesIO())


# ------------------------------------------------------------------------------ PyTorch's files
def test_checkpoint_written_by_torch_loads_without_torch():
    ck = tt.load(os.path.join(DATA, "torch_checkpoint.pt"))
    exp = np.load(os.path.join(DATA, "torch_checkpoint_expected.npz"))
    assert type(ck["linear"]) is collections.OrderedDict and list(ck["linear"]) == ["weight", "bias"]
    np.testing.assert_array_equal(ck["linear"]["weight"].numpy(), exp["linear.weight"])
    np.testing.assert_array_equal(ck["linear"]["bias"].numpy(), exp["linear.bias"])
    assert not ck["linear"]["weight"].requires_grad
    assert type(ck["param"]) is Parameter and ck["param"].requires_grad and ck["param"].tolist() == [1.5, -2.0]
    assert ck["half"].dtype == tt.float16 and np.array_equal(ck["half"].numpy(), exp["half"])
    assert ck["bf16"].dtype == tt.bfloat16 and np.array_equal(ck["bf16"].float().numpy(), exp["bf16"])
    assert ck["long"].dtype == tt.int64 and np.array_equal(ck["long"].numpy(), exp["long"])
    assert ck["col"].untyped_storage() is ck["base"].untyped_storage() is ck["tail"].untyped_storage()
    assert ck["col"].tolist() == exp["base"][:, 1].tolist() and ck["tail"].tolist() == exp["base"][1:, 2:].tolist()
    assert ck["grad"].requires_grad and ck["flags"].tolist() == [True, False, True]
    assert ck["nested"]["list"][:4] == [1, 2.5, "x", None] and ck["nested"]["list"][4][1].item() == 7
    assert ck["nested"]["dtype"] is tt.float16 and ck["nested"]["size"] == (2, 3)
    assert ck["empty"].shape == (0, 3) and ck["scalar"].dtype == tt.float64 and ck["scalar"].item() == 3.25


def test_our_file_loads_in_torch(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "t.pt"
    base = tt.arange(6.0).reshape(2, 3)
    tt.save({"base": base, "col": base[:, 1], "bf": tt.ones(2, dtype=tt.bfloat16), "dt": tt.float16,
             "p": Parameter(tt.ones(2))}, path)
    back = torch.load(path, weights_only=True)
    assert back["col"].tolist() == [1.0, 4.0] and back["bf"].dtype == torch.bfloat16
    assert back["dt"] is torch.float16 and isinstance(back["p"], torch.nn.Parameter)


# ------------------------------------------------------------------------------ untrusted files
def _archive(pickled):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pickled)
        zf.writestr("archive/byteorder", "little")
        zf.writestr("archive/version", "3\n")
    buf.seek(0)
    return buf


class _RunsShell:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_code_in_a_checkpoint_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    evil = _archive(pickle.dumps({"w": _RunsShell(marker)}, protocol=2))
    with pytest.raises(pickle.UnpicklingError,
                       match=r"unsupported GLOBAL (posix|nt|os)\.system whose module (posix|nt|os) is blocked"):
        tt.load(evil)
    assert not marker.exists()
    for module, name, shown in (("builtins", "eval", "eval"), ("subprocess", "Popen", "subprocess.Popen"),
                                ("__builtin__", "getattr", "getattr"), ("torch", "load", "torch.load"),
                                ("tritensor.tensor", "_rebuild", "tritensor.tensor._rebuild")):
        payload = (b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\nX\x05\x00\x00\x001 + 1\x85R.")
        with pytest.raises(pickle.UnpicklingError, match=rf"Unsupported global: GLOBAL {shown} was not an allowed"):
            tt.load(_archive(payload))
    # tt.save writes any picklable object, tt.load only reads it back when told the file is trusted
    buf = io.BytesIO()
    tt.save({"f": _RunsShell(marker)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="unsupported GLOBAL"):
        tt.load(buf)
    assert not marker.exists()


def test_allowlisted_callables_check_their_arguments():
    # _rebuild_tensor_v2 fed a string where a storage goes
    bad_storage = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(X\x01\x00\x00\x00sK\x00))\x89"
                   b"ccollections\nOrderedDict\n)RtR.")
    with pytest.raises(pickle.UnpicklingError, match="must be rebuilt from a storage"):
        tt.load(_archive(bad_storage))
    # _codecs.encode with an encoding other than text -> bytes
    bad_codec = b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00aX\x06\x00\x00\x00base64\x86R."
    with pytest.raises(pickle.UnpicklingError, match="_codecs.encode only"):
        tt.load(_archive(bad_codec))
    # torch.device with a non-string
    bad_device = b"\x80\x02ctorch\ndevice\n]\x85R."
    with pytest.raises(pickle.UnpicklingError, match="torch.device"):
        tt.load(_archive(bad_device))


def _rewrite(obj, change):
    """tt.save(obj), then change(records) edits the archive's records before it is zipped again."""
    buf = io.BytesIO()
    tt.save(obj, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        records = {n: zf.read(n) for n in zf.namelist()}
    change(records)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for n, d in records.items():
            zf.writestr(n, d)
    out.seek(0)
    return out


def test_view_past_its_storage_is_refused():
    def grow(records):     # size (4,) -> (9,): BININT1 4 inside TUPLE1 for the size
        records["archive/data.pkl"] = records["archive/data.pkl"].replace(b"K\x04\x85", b"K\t\x85", 1)
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
        tt.load(_rewrite({"t": tt.arange(4.0)}, grow))


def test_big_endian_checkpoint():
    def to_big_endian(records):
        records["archive/byteorder"] = b"big"
        records["archive/data/0"] = np.frombuffer(records["archive/data/0"], "<i4").astype(">i4").tobytes()
    back = tt.load(_rewrite({"t": tt.tensor([1, -2, 70000], dtype=tt.int32)}, to_big_endian))
    assert back["t"].tolist() == [1, -2, 70000]


def test_weights_only_false_uses_a_full_unpickler():
    from fractions import Fraction
    buf = io.BytesIO()
    tt.save({"f": Fraction(1, 3), "t": tt.ones(1)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL fractions.Fraction"):
        tt.load(buf)
    buf.seek(0)
    back = tt.load(buf, weights_only=False)
    assert back["f"] == Fraction(1, 3) and back["t"].tolist() == [1.0]


def test_not_a_checkpoint():
    with pytest.raises(pickle.UnpicklingError, match="not a PyTorch zip checkpoint"):
        tt.load(io.BytesIO(b"hello"))
    with pytest.raises(NotImplementedError, match="legacy"):
        tt.load(io.BytesIO(pickle.dumps(1, protocol=2)))


# ------------------------------------------------------------------------------ safetensors
def test_safetensors_round_trip_every_dtype(tmp_path):
    pytest.importorskip("safetensors")
    tensors = {d.name: _sample(d, "cpu", (3, 2)) for d in _dt.ALL}
    tensors["scalar"] = tt.tensor(2.5)
    tensors["empty"] = tt.zeros(0, 2, dtype=tt.int32)
    path = tmp_path / "w.safetensors"
    tt.save_file(tensors, path, metadata={"format": "pt"})
    back = tt.load_file(path)
    assert sorted(back) == sorted(tensors)
    for k, t in tensors.items():
        _same(back[k], t)
    # safetensors' own NumPy loader reads the file (it has no bfloat16)
    from safetensors.numpy import load_file as np_load_file
    tt.save_file({k: v for k, v in tensors.items() if k != "bfloat16"}, tmp_path / "n.safetensors")
    loaded = np_load_file(str(tmp_path / "n.safetensors"))
    for k, v in loaded.items():
        np.testing.assert_array_equal(v, tensors[k].numpy())
    cuda = tt.load_file(path, device="cuda")
    assert cuda["float32"].device == tt.device("cuda:0")


def test_safetensors_refusals(tmp_path):
    pytest.importorskip("safetensors")
    base = tt.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="You are trying to save a non contiguous tensor: `t`"):
        tt.save_file({"t": base.t()}, tmp_path / "x.safetensors")
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        tt.save_file({"a": base, "b": base[0]}, tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match="Key `a` is invalid, expected tensor"):
        tt.save_file({"a": 1}, tmp_path / "x.safetensors")


def test_module_level_names():
    assert tt.serialization.save is tt.save and tt.serialization.load is tt.load
    assert tt.serialization.save_file is tt.save_file and tt.serialization.load_file is tt.load_file


def test_module_state_dict_round_trip():
    tt.manual_seed(0)
    model = tt.nn.Linear(3, 2)
    back = _roundtrip(model.state_dict())
    assert type(back) is collections.OrderedDict and list(back) == ["weight", "bias"]
    fresh = tt.nn.Linear(3, 2)
    fresh.load_state_dict(back)
    assert fresh.weight.tolist() == model.weight.tolist() and fresh.bias.tolist() == model.bias.tolist()
    whole = _roundtrip({"weight": model.weight})["weight"]        # a Parameter stays a Parameter
    assert type(whole) is Parameter and whole.requires_grad
