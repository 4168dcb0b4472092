"""Edges of tt.save / tt.load that mutation testing (mutmut over tritensor/serialization/) found
untested: each test pins a behaviour a surviving mutant changed. What mutmut still reports, and
why each is equivalent or unreachable, is in tests/data/crafted/MUTANTS.md."""
import io
import os
import pickle
import re
import struct
import sys
import types
import zipfile
import zlib

import numpy as np
import pytest

import tritensor as tt
from tritensor.nn import Parameter
from tritensor.serialization import writer
from tritensor.serialization import zipfile_reader as zr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkpoint_forge as forge  # noqa: E402

CORRUPT = r"PytorchStreamReader failed reading zip archive: invalid header or archive is corrupted"
OK = [0.0, 1.0, 2.0, 3.0]


def _load(data, **kw):
    return tt.load(io.BytesIO(data), **kw)


def _wo_error(payload):
    """The WeightsUnpickler error part of a refusal, whole."""
    with pytest.raises(pickle.UnpicklingError) as info:
        _load(forge.checkpoint(payload))
    return str(info.value).split("WeightsUnpickler error: ", 1)[1]


# ------------------------------------------------------------------------------ the zip directory
def test_central_directory_edges():
    records = forge.base_records()
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(a central directory entry runs past the directory\)"):
        _load(forge.zip_records(records, entries_delta=1))
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(the central directory lies outside the file\)"):
        _load(forge.zip_records(records, entries_delta=40))
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(the central directory lies outside the file\)"):
        _load(forge.zip_records(records, cd_offset_delta=7))
    # the signature bytes inside a record, and a comment of the largest size, do not confuse it
    assert _load(forge.checkpoint(storages={"0": b"PK\x05\x06" * 4}))["t"].numel() == 4
    assert _load(forge.checkpoint(comment=b"c" * 0xFFFF))["t"].tolist() == OK
    # names: cp437 without the UTF-8 flag, and UTF-8 that does not decode
    extra = {"name": b"archive/extra\xff", "data": b"x", "flags": 0}
    assert _load(forge.zip_records(forge.base_records() + [extra]))["t"].tolist() == OK
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(a record name is not UTF-8\)"):
        _load(forge.zip_records(forge.base_records() + [dict(extra, flags=0x800)]))


def test_torch_takes_the_first_directory_as_the_archive_name():
    records = forge.base_records()
    records.insert(0, records.pop(2))          # archive/data/0 first: the name is still 'archive/'
    assert _load(forge.zip_records(records))["t"].tolist() == OK
    local = b"PK\x03\x04" + bytes(26)          # a zip with a local header and no directory entry
    empty = local + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0, 0, 0, len(local), 0)
    with pytest.raises(RuntimeError, match=r"^file in archive is not in a subdirectory: $"):
        _load(empty)


def _zip64_with_extra(extra_blocks, fields=(True, True, True)):
    """A checkpoint whose central entries put (some of) their sizes in a zip64 field that follows
    ``extra_blocks``."""
    out, cd = bytearray(), bytearray()
    records = forge.base_records()
    for r in records:
        name, data = r["name"].encode(), r["data"]
        offset = len(out)
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 45, 0x800, 0, 0, 0x21, zlib.crc32(data), len(data),
                           len(data), len(name), 0) + name + data
        real = (len(data), len(data), offset)
        claims = [0xFFFFFFFF if f else v for f, v in zip(fields, real)]
        z64 = b"".join(struct.pack("<Q", v) for f, v in zip(fields, real) if f)
        extra = extra_blocks + struct.pack("<HH", 1, len(z64)) + z64
        cd += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 45, 45, 0x800, 0, 0, 0x21, zlib.crc32(data),
                          claims[1], claims[0], len(name), len(extra), 0, 0, 0, 0, claims[2]) + name + extra
    end = len(out)
    out += cd + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(records), len(records), len(cd), end, 0)
    return bytes(out)


def test_zip64_extra_fields():
    other = struct.pack("<HH", 0x5455, 5) + b"\x01abcd" + struct.pack("<HH", 0x7875, 3) + b"xyz"
    assert _load(_zip64_with_extra(other))["t"].tolist() == OK
    assert _load(_zip64_with_extra(b"", fields=(False, False, True)))["t"].tolist() == OK
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(a truncated extra field\)"):
        _load(_zip64_with_extra(struct.pack("<HH", 0x5455, 200)))
    data = bytearray(_zip64_with_extra(b""))
    at = data.index(b"PK\x01\x02")
    data[at + 46 + len(b"archive/data.pkl") + 2] = 16      # the zip64 field holds 2 of its 3 sizes
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(a zip64 extra field without the sizes"):
        _load(bytes(data))


def test_zip64_end_records():
    good = forge.checkpoint(zip64=True)
    loc = good.rindex(b"PK\x06\x07")
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(the zip64 end record lies past its locator\)"):
        _load(good[:loc + 8] + struct.pack("<Q", 2 ** 40) + good[loc + 16:])
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(no zip64 end record where its locator says\)"):
        _load(good[:loc + 8] + struct.pack("<Q", 0) + good[loc + 16:])
    records = forge.base_records()
    records[2]["offset"] = 2 ** 63 + 5                   # a 64-bit offset past anything
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(a local header lies past the data\)"):
        _load(forge.zip_records(records, zip64=True))


def test_record_reads():
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(a stored record's sizes disagree\)"):
        _load(forge.zip_records(forge.base_records()[:2] + [dict(forge.base_records()[2], usize=20)]
                                + forge.base_records()[3:]))
    fh = io.BytesIO(forge.checkpoint())
    reader = zr.ZipReader(fh)
    fh.truncate(reader.records["archive/data/0"].data_offset + 3)     # the file shrinks after opening
    with pytest.raises(RuntimeError, match=r"failed reading file data/0: file truncated\. If you are seeing"):
        reader.read("archive/data/0", "data/0")
    assert reader.size_of("archive/version") == 2 and reader.stored_offset("archive/version") is not None
    # a deflate stream that stops without its final block
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    unfinished = squeeze.compress(forge.float_bytes(OK)) + squeeze.flush(zlib.Z_SYNC_FLUSH)
    records = forge.base_records()
    records[2].update(method=8, payload=unfinished)
    with pytest.raises(RuntimeError, match=r"failed reading file data/0: decompression failed\. If you"):
        _load(forge.zip_records(records))
    # the CRC of the version and byteorder records is checked too, and the error names them
    for index, shown in ((3, "version"), (1, "byteorder")):
        records = forge.base_records()
        records[index]["crc"] = 7
        with pytest.raises(RuntimeError, match=rf"failed reading file {shown}: CRC-32 check failed"):
            _load(forge.zip_records(records))
    # mmap reads a compressed storage (it cannot map it)
    records = forge.base_records()
    records[2].update(method=8, crc=7)
    with pytest.raises(RuntimeError, match="failed reading file data/0: CRC-32 check failed"):
        zr.ZipReader(io.BytesIO(forge.zip_records(records))).read("archive/data/0", "data/0")


def test_inflate_ratio_is_a_ratio():
    """1.5 MiB of incompressible bytes: past the floor, at ~1x, it inflates."""
    blob = np.random.default_rng(0).bytes(3 << 19)
    numel = len(blob) // 4
    body = forge.pickle_of(forge.dict_of(t=forge.tensor(forge.storage(numel=numel), size=(numel,))))
    records = forge.base_records(body, {"0": blob})
    records[2].update(method=8)
    assert _load(forge.zip_records(records))["t"].numel() == numel


# ------------------------------------------------------------------------------ the unpickler
def test_int64_edges_exactly():
    def byte_tensor(offset, size, stride, numel=16):
        return forge.pickle_of(forge.dict_of(t=forge.tensor(forge.storage(numel=numel, kind="ByteStorage"),
                                                            offset, size, stride)))
    top = 2 ** 63 - 1
    t = _load(forge.checkpoint(byte_tensor(0, (top,), (0,)), {"0": bytes(16)}))["t"]     # numel = int64 max
    assert t.shape == (top,)
    t = _load(forge.checkpoint(byte_tensor(0, (1,), (top,)), {"0": bytes(16)}))["t"]     # byte stride = max
    assert t.stride() == (top,)
    assert _load(forge.checkpoint(byte_tensor(top, (0,), (1,)), {"0": bytes(16)}))["t"].storage_offset() == top
    with pytest.raises(RuntimeError, match=r"^setStorage: sizes \[1\], strides \[1\], storage offset "
                                           r"9223372036854775806, and itemsize 1 requiring a storage size of "
                                           r"9223372036854775807 are out of bounds for storage of size 16$"):
        _load(forge.checkpoint(byte_tensor(top - 1, (1,), (1,)), {"0": bytes(16)}))
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension "
                                           r"-9223372036854775808: \[-9223372036854775808\]$"):
        _load(forge.checkpoint(byte_tensor(0, (-2 ** 63,), (1,)), {"0": bytes(16)}))
    with pytest.raises(RuntimeError, match=r"^stride 9223372036854775808: Overflow when unpacking long long$"):
        _load(forge.checkpoint(byte_tensor(0, (1,), (2 ** 63,)), {"0": bytes(16)}))
    # the storage's numel in its persistent id: int64 max is a number (then the wrong size), -1 is not
    with pytest.raises(RuntimeError, match=r"^record size \(16 bytes\) does not match expected size"):
        _load(forge.checkpoint(byte_tensor(0, (1,), (1,), numel=top), {"0": bytes(16)}))
    with pytest.raises(pickle.UnpicklingError, match="malformed storage record"):
        _load(forge.checkpoint(byte_tensor(0, (1,), (1,), numel=-1), {"0": bytes(16)}))


def test_old_rebuild_tensor_and_python2_names():
    old = forge.glob("torch._utils", "_rebuild_tensor") + forge.tup(
        forge.storage(), forge.num(1), forge.tup(forge.num(2)), forge.tup(forge.num(1))) + forge.REDUCE
    t = _load(forge.checkpoint(forge.pickle_of(old)))
    assert t.tolist() == [1.0, 2.0] and t.storage_offset() == 1 and not t.requires_grad
    assert _load(forge.checkpoint(b"\x80\x02c__builtin__\nset\n](K\x01e\x85R.")) == {1}


def test_constructor_arguments_exactly():
    def ok(payload):
        return _load(forge.checkpoint(payload))
    for encoding in (b"latin1", b"latin-1", b"utf-8", b"utf8"):
        text = b"X" + struct.pack("<I", len(encoding)) + encoding
        assert ok(b"\x80\x02c_codecs\nencode\nX\x02\x00\x00\x00\xc3\xa9" + text + b"\x86R.") == \
            "\xe9".encode(encoding.decode())
    for encoding in (b"LATIN-1", b"ascii"):
        text = b"X" + struct.pack("<I", len(encoding)) + encoding
        assert _wo_error(b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00a" + text + b"\x86R.") == \
            "_codecs.encode only turns text into bytes (latin1 or utf-8)"
    assert ok(b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00a\x85R.") == b"a"                  # utf-8 default
    latin = b"X\x07\x00\x00\x00latin-1"
    assert ok(b"\x80\x02cbuiltins\nbytearray\nX\x02\x00\x00\x00\xc3\xa9" + latin + b"\x86R.") == bytearray(b"\xe9")
    from_bytes = b"c_codecs\nencode\nX\x02\x00\x00\x00abX\x06\x00\x00\x00latin1\x86R"
    assert ok(b"\x80\x02cbuiltins\nbytearray\n" + from_bytes + b"\x85R.") == bytearray(b"ab")
    for args in (b"X\x02\x00\x00\x00ab\x85", b"X\x02\x00\x00\x00abX\x05\x00\x00\x00utf-8\x86",
                 b"K\x01" + latin + b"\x86", from_bytes + b"K\x01\x86", b"X\x01\x00\x00\x00a" + latin + b"K\x01\x87"):
        assert _wo_error(b"\x80\x02cbuiltins\nbytearray\n" + args + b"R.") == \
            "bytearray is rebuilt only from bytes or latin-1 text"
    assert ok(b"\x80\x02cbuiltins\ncomplex\n)R.") == 0j and ok(b"\x80\x02cbuiltins\ncomplex\nK\x02\x85R.") == 2 + 0j
    assert _wo_error(b"\x80\x02cbuiltins\ncomplex\nK\x01X\x01\x00\x00\x00a\x86R.") == \
        "complex is rebuilt only from two numbers"
    assert _wo_error(b"\x80\x02ctorch\ndevice\nK\x01\x85R.") == "torch.device takes a string and an optional int"
    assert _wo_error(b"\x80\x02ctorch\ndevice\nX\x03\x00\x00\x00cpuX\x01\x00\x00\x000\x86R.") == \
        "torch.device takes a string and an optional int"
    assert _wo_error(b"\x80\x02ccollections\nOrderedDict\nK\x01\x85R.") == \
        "OrderedDict is rebuilt only from a list of pairs, got int"
    assert _wo_error(b"\x80\x02ccollections\nOrderedDict\n](K\x01e\x85R.") == \
        "collections.OrderedDict([1],) failed: TypeError: 'int' object is not iterable"
    assert _wo_error(b"\x80\x02ccollections\nOrderedDict\n)R}K\x01K\x02sb.") == \
        "an attribute name of a OrderedDict must be a str, got int"
    param = forge.glob("torch._utils", "_rebuild_parameter") + forge.tup(forge.tensor(), forge.num(1),
                                                                         forge.ordered_dict()) + forge.REDUCE
    assert _wo_error(forge.pickle_of(param)) == "requires_grad must be a bool, got int"


def test_attribute_names_a_file_may_not_set():
    def od_with(name):
        return forge.pickle_of(forge.ordered_dict() + forge.dict_of(**{name: forge.num(1)}) + forge.BUILD)
    assert _wo_error(od_with("__foo__")) == \
        "refused to set attribute '__foo__' on OrderedDict: only new attributes can be restored from a file"
    assert _load(forge.checkpoint(od_with("_metadata")))._metadata == 1
    state = forge.glob("torch._utils", "_rebuild_parameter_with_state") + forge.tup(
        forge.tensor(), forge.TRUE, forge.ordered_dict(), forge.dict_of(_new=forge.num(1))) + forge.REDUCE
    assert _wo_error(forge.pickle_of(state)) == \
        "refused to set attribute '_new' on Parameter: only new attributes can be restored from a file"
    three = forge.tensor() + forge.dict_of(a=forge.num(1), b=forge.num(2), c=forge.num(3)) + forge.BUILD
    assert _wo_error(forge.pickle_of(three)).startswith("BUILD on a Tensor takes torch's legacy state")
    five = forge.tensor() + forge.tup(forge.num(1), *[forge.NONE] * 4) + forge.BUILD
    assert _wo_error(forge.pickle_of(five)) == "the data of a legacy Variable state must be a tensor, got int"


def test_internal_objects_anywhere_in_the_result():
    storage = forge.storage()
    for body in (forge.dict_of(a=storage, b=forge.num(1)),                              # before a leaf
                 forge.ordered_dict() + forge.dict_of(s=storage) + forge.BUILD,       # an OrderedDict attribute
                 forge.glob("collections", "Counter") + forge.tup(forge.dict_of(a=storage)) + forge.REDUCE):
        with pytest.raises(NotImplementedError, match=r"^tritensor\.load: the file returns a bare storage "
                                                      r"\(<storage of 16 bytes read as tritensor\.float32>\) outside "
                                                      r"any tensor; torch returns a TypedStorage there, and tritensor "
                                                      r"has no storage object of its own to return$"):
            _load(forge.checkpoint(forge.pickle_of(body)))


def test_opcode_messages_exactly():
    assert _wo_error(b"\x80\x02R.") == "unpickling stack underflow"
    assert _wo_error(b"\x80\x02K\x01b.") == "unpickling stack underflow"
    assert _wo_error(b"\x80\x02K\x01\x86.") == "unpickling stack underflow"
    assert _wo_error(b"\x80\x02h\x05.") == "Memo value not found at index 5"
    assert _wo_error(b"\x80\x02K\x01q\x02K\x07j\x03\x00\x00\x00\x86.") == "Memo value not found at index 3"
    assert _load(forge.checkpoint(b"\x80\x02K\x07r\x05\x01\x00\x00j\x05\x01\x00\x00\x86.")) == (7, 7)
    assert _load(forge.checkpoint(b"\x80\x02M\x01\x02J\xfe\xff\xff\xffK\x03\x87.")) == (513, -2, 3)
    assert _load(forge.checkpoint(b"\x80\x02N\x88\x89)\x85\x87.")) == (True, False, ((),))
    assert _wo_error(b"\x80\x02ctorch\nfloat32\n)R.") == "Trying to call reduce for unrecognized function " \
                                                         "tritensor.float32"
    assert _wo_error(b"\x80\x02ccollections\nOrderedDict\nK\x01R.") == "reduce arguments must be a tuple, got int"
    assert _wo_error(b"\x80\x02ctorch\nInt\n.") == "Unsupported global: GLOBAL torch.Int was not an allowed global " \
        "by default. tritensor.load rebuilds only tensors, Parameters, dtypes, devices, sizes and standard " \
        "containers from an untrusted file. Please use `tritensor.serialization.add_safe_globals([Int])` or the " \
        "`tritensor.serialization.safe_globals([Int])` context manager to allowlist this global if you trust this " \
        "class/function."


# ------------------------------------------------------------------------------ the loader
def test_load_arguments(tmp_path):
    path = tmp_path / "a.pt"
    path.write_bytes(forge.checkpoint())
    assert tt.load(path, map_location="cuda:1")["t"].device == tt.device("cuda:1")
    assert tt.load(str(path), pickle_module=pickle)["t"].tolist() == OK
    used = []

    class Recording(pickle.Unpickler):
        def load(self):
            used.append(True)
            return super().load()
    module = types.SimpleNamespace(Unpickler=Recording)
    assert tt.load(path, pickle_module=module, weights_only=False)["t"].tolist() == OK and used
    with pytest.raises(RuntimeError, match=r"^Can not safely load weights when explicit pickle_module is "
                                           r"specified$"):
        tt.load(path, pickle_module=module)
    with pytest.raises(RuntimeError, match=r"^weights_only loading takes only the 'encoding' pickle argument, "
                                           r"got \['errors', 'fix_imports'\]$"):
        tt.load(path, fix_imports=True, errors="strict")
    # encoding reaches both unpicklers
    bytes_location = forge.tup(forge.text("storage"), forge.glob("torch", "FloatStorage"), forge.text("0"),
                               b"U\x03cpu", forge.num(4)) + forge.BINPERSID
    body = forge.pickle_of(forge.dict_of(t=forge.tensor(bytes_location), s=b"U\x02hi"))
    for weights_only in (True, False):
        back = _load(forge.checkpoint(body), encoding="bytes", weights_only=weights_only)
        assert back["s"] == b"hi" and back["t"].device == tt.device("cpu")


def test_mmap_storages_are_cpu_views_of_the_file(tmp_path):
    path = tmp_path / "m.pt"
    tt.save({"a": tt.arange(6.0), "e": tt.zeros(0)}, path)
    back = tt.load(path, mmap=True)
    assert back["a"].device == tt.device("cpu") and back["a"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert back["e"].shape == (0,) and back["e"].device == tt.device("cpu")


def test_big_endian_16_bit():
    def flip(records):
        records[1]["data"] = b"big"
        records[2]["data"] = np.frombuffer(records[2]["data"], "<i2").astype(">i2").tobytes()
        return records
    body = forge.pickle_of(forge.dict_of(t=forge.tensor(forge.storage(numel=3, kind="ShortStorage"), size=(3,))))
    records = flip(forge.base_records(body, {"0": np.array([1, -2, 300], "<i2").tobytes()}))
    assert _load(forge.zip_records(records))["t"].tolist() == [1, -2, 300]


def test_trusted_loads_refuse_what_tritensor_cannot_rebuild():
    with pytest.raises(pickle.UnpicklingError, match=r"^tritensor\.load cannot rebuild torch global "
                                                     r"torch\.nn\.Module$"):
        _load(forge.checkpoint(b"\x80\x02ctorch.nn\nModule\n."), weights_only=False)
    with pytest.raises(pickle.UnpicklingError, match=r"^unsupported persistent id 'x'$"):
        _load(forge.checkpoint(b"\x80\x02X\x01\x00\x00\x00xQ."), weights_only=False)
    assert _load(forge.checkpoint(), weights_only=False)["t"].tolist() == OK


def test_map_location_callables_and_errors():
    buf = io.BytesIO()
    tt.save({"t": tt.arange(3.0)}, buf)
    for move, where in ((lambda s, loc: s.cuda(1), "cuda:1"), (lambda s, loc: s.cuda(), "cuda:0"),
                        (lambda s, loc: s.cuda("cuda:1"), "cuda:1"), (lambda s, loc: s.cuda(1).cpu(), "cpu"),
                        (lambda s, loc: s.to("cuda:1").to("cuda:1"), "cuda:1")):
        buf.seek(0)
        back = tt.load(buf, map_location=move)["t"]
        assert back.device == tt.device(where) and back.tolist() == [0.0, 1.0, 2.0]
    buf.seek(0)
    with pytest.raises(TypeError, match=r"^map_location should return a storage or None, got int$"):
        tt.load(buf, map_location=lambda s, loc: 5)
    buf.seek(0)
    with pytest.raises(ValueError, match=r"^map_location should be a string, a device, a dict or a callable, got 5$"):
        tt.load(buf, map_location=5)
    buf.seek(0)
    with pytest.raises(RuntimeError, match=r"^don't know how to restore data location of "
                                           r"torch\.storage\.UntypedStorage \(tagged with tpu\)$"):
        tt.load(buf, map_location="tpu")
    body = forge.pickle_of(forge.dict_of(t=forge.tensor(forge.storage(location="cpu") .replace(b"X\x03\x00\x00\x00cpu",
                                                                                           b"K\x05"))))
    with pytest.raises(pickle.UnpicklingError, match="a storage location must be a string"):
        _load(forge.checkpoint(body))


def test_cuda_errors_whole(monkeypatch):
    buf = io.BytesIO()
    tt.save({"c": tt.ones(2, device="cuda")}, buf)
    from tritensor.runtime import device as rd
    n = tt.cuda.device_count()
    buf.seek(0)
    with pytest.raises(RuntimeError, match=rf"^Attempting to deserialize object on CUDA device {n} but "
                                           rf"tritensor\.cuda\.device_count\(\) is {n}\. Please use tritensor\.load "
                                           r"with map_location to map your storages to an existing device\.$"):
        tt.load(buf, map_location={"cuda:0": f"cuda:{n}"})
    monkeypatch.setattr(rd, "is_available", lambda: False)
    buf.seek(0)
    with pytest.raises(RuntimeError, match=r"^Attempting to deserialize object on a CUDA device but "
                                           r"tritensor\.cuda\.is_available\(\) is False\. If you are running on a "
                                           r"CPU-only machine, please use tritensor\.load with "
                                           r"map_location=tritensor\.device\('cpu'\) to map your storages to the "
                                           r"CPU\.$"):
        tt.load(buf)


def test_version_and_format_messages_whole():
    with pytest.raises(RuntimeError, match=r"^Attempted to read a PyTorch file with version 0, but the minimum "
                                           r"supported version for reading is 1\. Your PyTorch script module file is "
                                           r"too old\. Please regenerate it with latest version of PyTorch to "
                                           r"mitigate this issue\.$"):
        _load(forge.zip_records(forge.base_records(version=b"0")))
    with pytest.raises(RuntimeError, match=r"^Attempted to read a PyTorch file with version 11, but the maximum "
                                           r"supported version for reading is 10\. The version of your PyTorch "
                                           r"installation may be too old, please upgrade PyTorch to latest version "
                                           r"to mitigate this issue\.$"):
        _load(forge.zip_records(forge.base_records(version=b"11")))
    assert _load(forge.zip_records(forge.base_records(version=b"10")))["t"].numel() == 4
    with pytest.raises(NotImplementedError, match=r"^tritensor\.load reads PyTorch's zip format only; this file "
                                                  r"is in torch's legacy \(pre-1\.6\) format: re-save it with "
                                                  r"torch\.save$"):
        _load(pickle.dumps(1, protocol=2))
    with pytest.raises(pickle.UnpicklingError, match=r"^tritensor\.load: the file is empty, not a PyTorch zip "
                                                     r"checkpoint$"):
        _load(b"")


# ------------------------------------------------------------------------------ the writer
def test_saved_records_are_torchs():
    buf = io.BytesIO()
    tt.save({"t": tt.arange(3.0), "c": tt.ones(1, device="cuda:1"), "d": tt.device("cuda"),
             "p": Parameter(tt.ones(1))}, buf)
    data = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = zf.infolist()
        pkl = zf.read("archive/data.pkl")
        assert [i.filename for i in infos] == [
            "archive/data.pkl", "archive/.format_version", "archive/.storage_alignment", "archive/byteorder",
            "archive/data/0", "archive/data/1", "archive/data/2", "archive/version", "archive/.data/serialization_id"]
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) and i.compress_type == zipfile.ZIP_STORED for i in infos)
    for info in infos:        # each local header's extra field is torch's 'FB' padding, of 'Z's
        at = info.header_offset
        n, e = struct.unpack("<HH", data[at + 26:at + 30])
        extra = data[at + 30 + n:at + 30 + n + e]
        assert extra[:2] == b"FB" and struct.unpack("<H", extra[2:4])[0] == e - 4 and set(extra[4:]) <= {ord("Z")}
    assert b"X\x06\x00\x00\x00cuda:1" in pkl                      # the storage's location names its device
    assert re.search(rb"ctorch\ndevice\nq.X\x04\x00\x00\x00cudaq.\x85", pkl)   # torch.device('cuda'): one argument
    assert b"ctorch._utils\n_rebuild_parameter\n" in pkl and b"ccollections\nOrderedDict\n" in pkl
    no_order = io.BytesIO()
    tt.save(1, no_order, _disable_byteorder_record=True)
    with zipfile.ZipFile(io.BytesIO(no_order.getvalue())) as zf:
        assert "archive/byteorder" not in zf.namelist()
    with pytest.raises(TypeError, match=r"^torch\._utils\._rebuild_tensor_v2 is a name written into a checkpoint, "
                                        r"not a function$"):
        writer._REBUILD_TENSOR_V2()
    with pytest.raises(NotImplementedError, match=r"^tritensor\.save writes only the zip format; "
                                                  r"_use_new_zipfile_serialization=False \(torch's legacy format\) "
                                                  r"is not supported$"):
        tt.save(1, io.BytesIO(), _use_new_zipfile_serialization=False)
    with pytest.raises(NotImplementedError, match=r"^tritensor\.save pickles with the standard pickle module only$"):
        tt.save(1, io.BytesIO(), pickle_module=types.SimpleNamespace())


# ------------------------------------------------------------------------------ safetensors
def test_safetensors_edges(tmp_path):
    safetensors = pytest.importorskip("safetensors")
    path = tmp_path / "w.safetensors"
    tt.save_file({"a": tt.ones(2)}, path, metadata={"format": "pt", "k": "v"})
    with safetensors.safe_open(str(path), "np") as fh:
        assert fh.metadata() == {"format": "pt", "k": "v"}
    assert tt.load_file(path, device=1)["a"].device == tt.device("cuda:1")
    assert tt.load_file(path, device="cuda:1")["a"].device == tt.device("cuda:1")
    base = tt.arange(6.0)
    with pytest.raises(RuntimeError, match=r"^Some tensors share memory, this will lead to duplicate memory on disk "
                                           r"and potential differences when loading them again: \[\['a', 'b'\]\]\.\n"
                                           r"A potential way to correctly save your model is to use `save_model`\.\n"
                                           r"More information at "
                                           r"https://huggingface\.co/docs/safetensors/torch_shared_tensors$"):
        tt.save_file({"a": base, "b": base[1:]}, path)
    with pytest.raises(ValueError, match=r"^Expected a dict of \[str, tensor\] but received <class 'list'>$"):
        tt.save_file([base], path)
    with pytest.raises(ValueError, match=r"^Key `x` is invalid, expected tensor but received <class 'int'>$"):
        tt.save_file({"x": 1, "y": base}, path)
    with pytest.raises(ValueError, match=r"non contiguous tensor: `t` which is not allowed\. It either means you are "
                                         r"trying to save tensors which are reference of each other in which case "
                                         r"it's recommended to save only the full tensors, and reslice at load time, "
                                         r"or simply call `\.contiguous\(\)` on your tensor to pack it before "
                                         r"saving\.$"):
        tt.save_file({"t": base.reshape(2, 3).t()}, path)


# ------------------------------------------------------------------------------ second mutmut round
def test_directory_checks_by_their_reasons():
    records = [dict(r, comment=b"a note") for r in forge.base_records()]       # entry comments are skipped
    assert _load(forge.zip_records(records))["t"].tolist() == OK
    good = forge.checkpoint(zip64=True)
    loc = good.rindex(b"PK\x06\x07")
    for back in (10, 50):                       # a zip64 end record that would overlap its locator
        with pytest.raises(RuntimeError, match=CORRUPT + r" \(the zip64 end record lies past its locator\)"):
            _load(good[:loc + 8] + struct.pack("<Q", loc - back) + good[loc + 16:])
    plain = forge.checkpoint()
    eocd = plain.rindex(b"PK\x05\x06")
    with pytest.raises(RuntimeError, match="unsupported multidisk archive"):      # entries on this disk differ
        _load(plain[:eocd + 8] + b"\x03\x00" + plain[eocd + 10:])
    cd = plain.index(b"PK\x01\x02")
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(a central directory entry runs past the directory\)"):
        _load(plain[:cd] + b"PK\x09\x09" + plain[cd + 4:])
    records = forge.base_records()
    records[2]["offset"] = cd - 10                                  # a local header inside the directory
    with pytest.raises(RuntimeError, match=CORRUPT + r" \(a local header lies past the data\)"):
        _load(forge.zip_records(records))
    # a fake end record at the end of the comment, and the signature inside a record too
    both = forge.checkpoint(storages={"0": b"PK\x05\x06" * 4}, comment=b"PK\x05\x06 x")
    assert _load(both)["t"].numel() == 4


def test_an_archive_after_other_bytes():
    buf = io.BytesIO(b"JUNK" + forge.checkpoint())
    buf.seek(4)
    assert tt.load(buf)["t"].tolist() == OK


def test_inflating_stops_at_the_claim():
    import tracemalloc
    big = b"\x80\x02N." + bytes(8 << 20)                 # 8 MiB of pickle that claims 100 bytes
    records = forge.base_records(big)
    records[0].update(method=8, usize=100)
    data = forge.zip_records(records)
    tracemalloc.start()
    with pytest.raises(RuntimeError, match="failed reading file data.pkl: unexpected decompressed size"):
        _load(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20


def test_more_exact_unpickler_edges():
    assert _wo_error(b"\x80\x02c__builtin__\nxrange\n.") == \
        "Unsupported global: GLOBAL range was not an allowed global by default. tritensor.load rebuilds only " \
        "tensors, Parameters, dtypes, devices, sizes and standard containers from an untrusted file. Please use " \
        "`tritensor.serialization.add_safe_globals([range])` or the `tritensor.serialization.safe_globals([range])` " \
        "context manager to allowlist this global if you trust this class/function."
    st = forge.storage()
    tensor_first = forge.EMPTY_DICT + forge.MARK + forge.text("s") + st + forge.text("t") + forge.tensor() + \
        b"q\x63" + forge.text("u") + b"h\x63" + forge.SETITEMS
    with pytest.raises(NotImplementedError, match="bare storage"):
        _load(forge.checkpoint(forge.pickle_of(tensor_first)))
    from tritensor.serialization import unpickler as wo
    u = wo.WeightsUnpickler(b"", None)
    for field, value, shown in (("_offset", 2 ** 63, "storage_offset"), ("_stride", (2 ** 63,), "stride"),
                                ("_shape", tt.Size([2 ** 63]), "size")):
        bad = tt.arange(4.0)
        bad.__dict__[field] = value
        u.tensors = [bad]
        with pytest.raises(pickle.UnpicklingError, match=rf"^tensor 0 of the file no longer fits its storage: {shown} "
                                                         r"9223372036854775808: Overflow when unpacking long long$"):
            u.check_tensors()


def test_more_exact_loader_edges(tmp_path):
    assert _load(forge.zip_records(forge.base_records(version=b"1")))["t"].numel() == 4
    with pytest.raises(RuntimeError, match=r"version 9223372036854775807, but the maximum supported"):
        _load(forge.zip_records(forge.base_records(version=b"9223372036854775807")))
    used = []

    class Recording(pickle.Unpickler):
        def load(self):
            used.append(True)
            return super().load()
    module = types.SimpleNamespace(Unpickler=Recording)
    assert _load(forge.checkpoint(), pickle_module=module, weights_only=False)["t"].tolist() == OK and used
    # persistent ids: a bytes 'storage' (encoding='bytes') is one; a tuple not naming storage is not
    as_bytes = b"(U\x07storagectorch\nFloatStorage\nX\x01\x00\x00\x000U\x03cpuK\x04tQ"
    body = forge.pickle_of(forge.dict_of(t=forge.glob("torch._utils", "_rebuild_tensor_v2") + forge.tup(
        as_bytes, forge.num(0), forge.tup(forge.num(4)), forge.tup(forge.num(1)), forge.FALSE,
        forge.ordered_dict()) + forge.REDUCE))
    for weights_only in (True, False):
        assert _load(forge.checkpoint(body), encoding="bytes", weights_only=weights_only)["t"].tolist() == OK
    with pytest.raises(pickle.UnpicklingError, match=r"^unsupported persistent id \('x',\)$"):
        _load(forge.checkpoint(b"\x80\x02(X\x01\x00\x00\x00xtQ."), weights_only=False)
    bad_location = forge.tup(forge.text("storage"), forge.glob("torch", "FloatStorage"), forge.text("0"),
                             b"U\x04cp\xffu", forge.num(4)) + forge.BINPERSID
    with pytest.raises(RuntimeError, match=r"don't know how to restore data location .*tagged with cp\ufffdu"):
        _load(forge.checkpoint(forge.pickle_of(forge.dict_of(t=forge.tensor(bad_location)))), encoding="bytes")
    # no byteorder record: little-endian, and mmap maps it
    path = tmp_path / "n.pt"
    tt.save({"t": tt.arange(4.0)}, path, _disable_byteorder_record=True)
    with zipfile.ZipFile(path) as zf:
        assert "archive/byteorder" not in zf.namelist()
    back = tt.load(path, mmap=True)["t"]
    assert back.tolist() == OK and isinstance(back._storage._keepalive, np.memmap)


def test_more_writer_edges():
    buf = io.BytesIO()
    tt.save([tt.full((1,), float(i)) for i in range(12)], buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        names = [n for n in zf.namelist() if "/data/" in n]
        assert names == [f"archive/data/{i}" for i in range(12)]            # in key order: 0, 1, ..., 10, 11
        assert zf.read("archive/.format_version") == b"1" and zf.read("archive/.storage_alignment") == b"64"
        assert re.fullmatch(rb"[0-9a-f]{32}0{8}", zf.read("archive/.data/serialization_id"))
    assert [t.item() for t in tt.load(io.BytesIO(buf.getvalue()))] == [float(i) for i in range(12)]
