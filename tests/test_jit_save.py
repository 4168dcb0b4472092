"""tt.jit.save / tt.jit.load (issue 26 items 1, 4, 7): round trips of traced functions and
modules, and refusal of malicious or malformed files (no pickle is ever read)."""
from __future__ import annotations

import io
import json
import pickle
import re
import zipfile

import numpy as np
import pytest

import tritensor as tt


def _roundtrip(obj):
    buf = io.BytesIO()
    obj.save(buf)
    buf.seek(0)
    return tt.jit.load(buf)


def _archive(traced):
    buf = io.BytesIO()
    traced.save(buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _write(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    buf.seek(0)
    return buf


@pytest.fixture(scope="module")
def traced_fn():
    c = tt.tensor([1.0, -2.0, 3.0], dtype=tt.bfloat16).float()
    return tt.jit.trace(lambda x, y: (x * y + c).relu().sum(dim=0), (tt.ones(2, 3), tt.ones(2, 3)))


def test_function_round_trip(traced_fn, tmp_path):
    path = tmp_path / "fn.pt"
    traced_fn.save(str(path))
    loaded = tt.jit.load(str(path))
    assert isinstance(loaded, tt.jit.ScriptFunction)
    assert str(loaded.graph) == str(traced_fn.graph) and loaded.code == traced_fn.code
    x = tt.tensor([[1.0, 2.0, 3.0], [-4.0, 5.0, 0.5]])
    y = tt.tensor([[2.0, 0.5, -1.0], [1.0, 1.0, 2.0]])
    # (x*y + c).relu().sum(0), by hand: [3+0, 0+3, 0+4]
    assert loaded(x, y).tolist() == [3.0, 3.0, 4.0] == traced_fn(x, y).tolist()


def test_sequential_round_trip_keeps_parameters():
    tt.manual_seed(1)
    m = tt.nn.Sequential(tt.nn.Linear(4, 8), tt.nn.Tanh(), tt.nn.Linear(8, 2), tt.nn.BatchNorm1d(2).eval())
    m.eval()
    traced = tt.jit.trace(m, tt.ones(3, 4))
    loaded = _roundtrip(traced)
    assert isinstance(loaded, tt.jit.ScriptModule)
    assert sorted(n for n, _ in loaded.named_parameters()) == sorted(n for n, _ in m.named_parameters())
    assert all(isinstance(p, tt.nn.Parameter) and p.requires_grad for p in loaded.parameters())
    assert {n for n, _ in loaded.named_buffers()} <= {n for n, _ in m.named_buffers()}
    x = tt.tensor(np.linspace(-2, 2, 20, dtype=np.float32).reshape(5, 4))
    np.testing.assert_array_equal(loaded(x).detach().numpy(), m(x).detach().numpy())
    assert str(loaded.graph) == str(traced.graph)


def test_archive_holds_json_and_raw_bytes_only(traced_fn):
    members = _archive(traced_fn)
    assert sorted(members) == ["tritensor_jit/model.json", "tritensor_jit/tensors/0", "tritensor_jit/version"]
    model = json.loads(members["tritensor_jit/model.json"])
    assert model["tensors"] == [{"dtype": "float32", "shape": [3]}]
    assert np.frombuffer(members["tritensor_jit/tensors/0"], "<f4").tolist() == [1.0, -2.0, 3.0]


def _malicious(traced_fn, edit):
    members = _archive(traced_fn)
    model = json.loads(members["tritensor_jit/model.json"])
    edit(model, members)
    members["tritensor_jit/model.json"] = json.dumps(model)
    return _write(members)


class _Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def _first_op(model):
    return next(n for n in model["graph"]["nodes"] if n["kind"].startswith("aten::"))


@pytest.mark.parametrize("edit, message", [
    (lambda m, z: z.update({"tritensor_jit/data.pkl": pickle.dumps(_Evil())}), "holds a pickle"),
    (lambda m, z: z.update({"../../evil.py": b"import os"}), "unexpected member '../../evil.py'"),
    (lambda m, z: z.update({"/etc/passwd": b""}), "unexpected member"),
    (lambda m, z: _first_op(m).update(kind="aten::system"), "unknown op 'aten::system'"),
    (lambda m, z: _first_op(m).update(kind="os::system"), "unknown node kind 'os::system'"),
    (lambda m, z: _first_op(m)["attrs"].update(call="fn", kind=None) or _first_op(m).update(kind="aten::os.system"),
     "unknown function tt.os.system"),
    (lambda m, z: _first_op(m)["attrs"].update(call="method") or _first_op(m).update(kind="aten::__reduce__"),
     "unknown Tensor method '__reduce__'"),
    (lambda m, z: _first_op(m)["attrs"].update(call="eval"), "unknown call kind 'eval'"),
    (lambda m, z: _first_op(m).update(inputs=[9999]), "undefined value 9999"),
    (lambda m, z: m["graph"]["inputs"][0][1].update(shape="3"), "malformed shape"),
    (lambda m, z: m["graph"]["inputs"][0][1].update(kind="Object"), "unknown type"),
    (lambda m, z: m["tensors"][0].update(shape=[4]), "has 12 bytes, its shape needs 16"),
    (lambda m, z: m["tensors"][0].update(dtype="object"), "malformed tensor record 0"),
    (lambda m, z: _first_op(m)["attrs"].update(kwargs={"dict": {"alpha": {"pickle": "x"}}}), "unknown constant tag 'pickle'"),
    (lambda m, z: z.update({"tritensor_jit/version": b"99"}), "unsupported version"),
])
def test_malicious_files_are_refused(traced_fn, edit, message):
    with pytest.raises(RuntimeError, match="tt.jit.load: refusing the file: .*" + message.replace("(", r"\(")
                       .replace(".", r"\.").replace("[", r"\[")):
        tt.jit.load(_malicious(traced_fn, edit))


def test_non_archives_are_refused(tmp_path):
    with pytest.raises(RuntimeError, match="not a zip archive"):
        tt.jit.load(io.BytesIO(pickle.dumps(_Evil())))
    path = tmp_path / "model.pt"
    tt.save({"a": tt.ones(2)}, str(path))            # a tt.save checkpoint is not a jit archive
    with pytest.raises(RuntimeError, match="refusing the file"):
        tt.jit.load(str(path))


def _branchy(x, n: int):
    s = x[:, 0]
    for i in range(n):
        s = s * 2 if s.sum() > 0 else s - 1
    return s, x.shape[1]


def test_scripted_round_trip_keeps_control_flow():
    scripted = tt.jit.script(_branchy)
    loaded = _roundtrip(scripted)
    assert str(loaded.graph) == str(scripted.graph) and loaded.code == scripted.code
    x = tt.tensor([[1.0, 5.0], [2.0, 6.0]])
    # 3 doublings of (1, 2); a negative column goes down by 1 each time
    assert loaded(x, 3)[0].tolist() == [8.0, 16.0] and loaded(x, 3)[1] == 2
    assert loaded(-x, 2)[0].tolist() == [-3.0, -4.0]


def test_scripted_module_round_trip():
    from test_jit_script import Gate
    tt.manual_seed(2)
    gate = Gate().eval()
    loaded = _roundtrip(tt.jit.script(gate))
    for x in (tt.ones(2, 3), -tt.ones(2, 3) * 5):
        np.testing.assert_allclose(loaded(x).detach().numpy(), gate(x).detach().numpy(), rtol=1e-6)


def test_scripted_archives_refuse_unknown_attributes_and_callables():
    members = _archive(tt.jit.script(_branchy))
    model = json.loads(members["tritensor_jit/model.json"])
    attr = next(n for n in model["graph"]["nodes"] if n["attrs"].get("call") == "attr")
    attr["kind"] = "aten::__dict__"
    members["tritensor_jit/model.json"] = json.dumps(model)
    with pytest.raises(RuntimeError, match="unknown tensor attribute '__dict__'"):
        tt.jit.load(_write(members))


def test_traced_indexing_round_trip():
    traced = tt.jit.trace(lambda x: x[1:, ::2] * 2, (tt.ones(3, 4),))
    loaded = _roundtrip(traced)
    x = tt.arange(12.0).reshape(3, 4)
    assert loaded(x).tolist() == [[8.0, 12.0], [16.0, 20.0]]


@pytest.mark.parametrize("name", ["save", "load", "manual_seed", "set_printoptions", "jit.load", "nn.functional.os",
                                  "serialization.save", "nn.functional.F.x"])
def test_a_loaded_graph_may_call_declared_ops_only(traced_fn, name):
    def edit(m, z):
        op = _first_op(m)
        op["attrs"]["call"] = "fn"
        op["kind"] = "aten::" + name
    with pytest.raises(RuntimeError, match=re.escape(f"an unknown function tt.{name}")):
        tt.jit.load(_malicious(traced_fn, edit))
