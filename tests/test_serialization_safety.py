"""tt.load on untrusted files (issue 20): the crafted checkpoints of tests/data/crafted (each broke
the promise once), the exact allowlist, the unpickler's opcode rules, the tensor checks at the
int64 edges and the zip reader's checks. Expected messages are torch 2.13's where torch has one
(tests/data/crafted/torch_outcomes.txt records what torch does with each crafted file)."""
import builtins
import collections
import io
import os
import pickle
import sys
import warnings

import numpy as np
import pytest

import tritensor as tt
from tritensor.nn import Parameter
from tritensor.serialization import unpickler as wo
from tritensor.serialization import zipfile_reader as zr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkpoint_forge as forge  # noqa: E402

CRAFTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "crafted")
UE, RE, NIE = pickle.UnpicklingError, RuntimeError, NotImplementedError
CORRUPT = "PytorchStreamReader failed reading zip archive: invalid header or archive is corrupted"

# file -> (exception, message regex); the same with and without mmap unless listed in MMAP_LOADS
EXPECTED = {
    "build_dtype_itemsize": (UE, r"Can only build Tensor, Parameter, OrderedDict .* but got the dtype global "
                                 r"torch\.int64"),
    "build_tensor_offset": (UE, r"BUILD on a Tensor takes torch's legacy state .* the file gave a dict with keys "
                                r"\['_offset'\]"),
    "build_tensor_legacy_oob": (RE, r"setStorage: sizes \[1048576\], strides \[1\], storage offset 0, and itemsize 4 "
                                    r"requiring a storage size of 4194304 are out of bounds for storage of size 16"),
    "build_global_class": (UE, r"Can only build .* but got the class collections\.OrderedDict"),
    "build_ordered_dict_keys": (UE, r"refused to set attribute 'keys' on OrderedDict"),
    "param_state_dtype": (UE, r"refused to set attribute 'dtype' on Parameter"),
    "param_state_offset": (UE, r"refused to set attribute '_offset' on Parameter"),
    "exec_global": (UE, r"Unsupported global: GLOBAL exec was not an allowed global by default"),
    "storage_in_dict": (NIE, r"the file returns a bare storage .* outside any tensor"),
    "bytearray_alloc": (UE, r"bytearray is rebuilt only from bytes or latin-1 text"),
    "numel_overflow": (RE, r"^numel: integer multiplication overflow$"),
    "size_past_int64": (RE, r"size 9223372036854775808: Overflow when unpacking long long"),
    "dir_claims_more": (RE, CORRUPT + r" \(a local header or its data is not where the directory says\)\. If"),
    "pkl_missing": (RE, r"PytorchStreamReader failed locating file data\.pkl: file not found"),
    "storage_missing": (RE, r"PytorchStreamReader failed locating file data/0: file not found"),
    "truncated": (RE, r"PytorchStreamReader failed reading zip archive: failed finding central directory"),
    "bad_crc_storage": (RE, r"PytorchStreamReader failed reading file data/0: CRC-32 check failed"),
    "bad_crc_pkl": (RE, r"PytorchStreamReader failed reading file data\.pkl: CRC-32 check failed"),
    "deflate_bomb": (RE, r"failed reading file data\.pkl: a compressed record of 16322 bytes claims to inflate to "
                         r"16777222 bytes \(over 100x\): refused as a decompression bomb"),
    "deflate_lying_size": (RE, r"failed reading file data\.pkl: unexpected decompressed size"),
    "storage_size_mismatch": (RE, r"record size \(8 bytes\) does not match expected size \(16 bytes = 4 elements "
                                  r"\* 4 bytes/element\) for dtype float32"),
    "records_overlap": (RE, CORRUPT + r" \(records overlap\)"),
    "local_name_differs": (RE, r"the local header of archive/data/0 names another record"),
    "encrypted": (RE, r"PytorchStreamReader failed retrieving file meta-data for data/0: unsupported encryption"),
    "version_99": (RE, r"Attempted to read a PyTorch file with version 99, but the maximum supported version for "
                       r"reading is 10"),
    "not_in_subdirectory": (RE, r"file in archive is not in a subdirectory: data\.pkl"),
    "central_directory_offset_lies": (RE, CORRUPT + r" \(the central directory lies outside the file\)\. If"),
    "truncated_pickle": (UE, r"WeightsUnpickler error: pickle data was truncated$"),
}
MMAP_LOADS = {"bad_crc_storage"}    # mmap reads no storage bytes, so checks no storage CRC (as torch)


def test_every_crafted_file_is_listed():
    files = sorted(f[:-3] for f in os.listdir(CRAFTED) if f.endswith(".pt"))
    assert files == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_crafted_file_is_refused(name):
    kind, message = EXPECTED[name]
    path = os.path.join(CRAFTED, name + ".pt")
    with pytest.raises(kind, match=message) as info:
        tt.load(path)
    assert type(info.value) is kind           # not a subclass: KeyError/EOFError never leak through
    if name in MMAP_LOADS:
        assert tt.load(path, mmap=True)["t"].tolist() == [0.0, 1.0, 2.0, 3.0]
    else:
        with pytest.raises(kind, match=message):
            tt.load(path, mmap=True)
    with open(path, "rb") as fh:                # a file object, not a path: the same answer
        data = fh.read()
    if name not in MMAP_LOADS:
        with pytest.raises(kind, match=message):
            tt.load(io.BytesIO(data))


def test_refused_files_leave_the_process_unchanged():
    for name in ("build_dtype_itemsize", "build_tensor_offset", "param_state_dtype"):
        with pytest.raises(pickle.UnpicklingError):
            tt.load(os.path.join(CRAFTED, name + ".pt"))
    assert tt.int64.itemsize == 8 and tt.float32.itemsize == 4
    assert tt.ones(3000, dtype=tt.int64, device="cuda").sum().item() == 3000
    back = tt.load(io.BytesIO(forge.checkpoint()))
    assert back["t"].tolist() == [0.0, 1.0, 2.0, 3.0] and back["t"].storage_offset() == 0


def test_exec_exploit_runs_nothing():
    assert not hasattr(builtins, "_tritensor_pwned")
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL exec"):
        tt.load(os.path.join(CRAFTED, "exec_global.pt"))
    assert not hasattr(builtins, "_tritensor_pwned")


# ------------------------------------------------------------------------------ the allowlist
def test_the_allowlist_is_exactly_this_set():
    """Every global a weights-only load can name (torch's allowlist, as far as tritensor has the
    objects). A name added here must be a checked constructor or plain data."""
    storages = {f"{n}Storage" for n in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char",
                                       "Byte", "Bool")}
    dtypes = {"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
              "uint16", "uint32", "uint64"}
    expected = {
        ("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_tensor_v3"), ("torch._utils", "_rebuild_tensor"),
        ("torch._utils", "_rebuild_parameter"), ("torch._utils", "_rebuild_parameter_with_state"),
        ("torch", "Size"), ("torch", "device"), ("torch.storage", "UntypedStorage"),
        ("collections", "OrderedDict"), ("collections", "Counter"), ("_codecs", "encode"),
        ("builtins", "set"), ("builtins", "bytearray"), ("builtins", "complex"),
    } | {("torch", n) for n in storages} | {("torch", n) for n in dtypes}
    assert set(wo.SAFE_GLOBALS) == expected
    assert wo.SAFE_GLOBALS[("torch", "int64")] is tt.int64 and wo.SAFE_GLOBALS[("torch", "Size")] is tt.Size
    assert wo.BLOCKED_MODULES == {"sys", "os", "posix", "nt"}
    # callable through REDUCE: the rebuild functions and the checked constructors, nothing else
    callables = {k for k, v in wo.SAFE_GLOBALS.items() if wo._constructor(v) is not None}
    assert callables == expected - {("torch", n) for n in storages | dtypes} - {("torch.storage", "UntypedStorage")}


def test_torch_globals_outside_the_set_are_refused_with_torch_message():
    for module, name, shown in (("torch", "float", "torch.float"), ("torch", "UntypedStorage", "torch.UntypedStorage"),
                                ("builtins", "frozenset", "frozenset"), ("builtins", "slice", "slice"),
                                ("torch.nn.parameter", "Parameter", "torch.nn.parameter.Parameter"),
                                ("copy_reg", "_reconstructor", "copyreg._reconstructor")):
        with pytest.raises(pickle.UnpicklingError, match=rf"Unsupported global: GLOBAL {shown} was not an allowed "
                                                         r"global by default"):
            tt.load(io.BytesIO(forge.checkpoint(forge.pickle_of(forge.glob(module, name)))))
    with pytest.raises(pickle.UnpicklingError, match=r"Trying to load unsupported GLOBAL sys\.modules whose module "
                                                     r"sys is blocked"):
        tt.load(io.BytesIO(forge.checkpoint(forge.pickle_of(forge.glob("sys", "modules")))))


# ------------------------------------------------------------------------------ opcodes
def _load_pickle(body, **kw):
    return tt.load(io.BytesIO(forge.checkpoint(forge.pickle_of(body) if not body.endswith(b".") else body)), **kw)


OPCODE_REFUSALS = [
    (b"\x80\x02N0.", r"Unsupported operand 48"),                                  # POP
    (b"\x80\x02\x8c\x01a.", r"Unsupported operand 140"),                          # SHORT_BINUNICODE (proto 4)
    (b"\x80\x02R.", r"unpickling stack underflow"),
    (b"\x80\x02t.", r"could not find MARK"),
    (b"\x80\x02h\x07.", r"Memo value not found at index 7"),
    (b"\x80\x02j\x07\x00\x00\x00.", r"Memo value not found at index 7"),
    (b"\x80\x02}K\x01a.", r"Can only append to lists, but got <class 'dict'>"),
    (b"\x80\x02)(K\x01e.", r"Can only extend lists, but got <class 'tuple'>"),
    (b"\x80\x02]K\x01K\x02s.", r"Can only SETITEM for dict, collections\.OrderedDict, collections\.Counter, "
                               r"but got <class 'list'>"),
    (b"\x80\x02](K\x01K\x02u.", r"Can only SETITEMS for dict"),
    (b"\x80\x02}(K\x01u.", r"SETITEMS needs key/value pairs"),
    (b"\x80\x02}]K\x01s.", r"SETITEM: .*unhashable type: 'list'"),
    (b"\x80\x02ctorch\nfloat32\n)R.", r"Trying to call reduce for unrecognized function tritensor\.float32"),
    (b"\x80\x02ccollections\nOrderedDict\nK\x01R.", r"reduce arguments must be a tuple, got int"),
    (b"\x80\x02ctorch\nfloat32\n)\x81.", r"Can only create new object for nn\.Parameter or classes allowlisted"),
    (b"\x80\x02ccollections\nOrderedDict\nK\x01\x81.", r"NEWOBJ arguments must be a tuple"),
    (b"\x80\x02X\x01\x00\x00\x00aQ.", r"Only persistent_load of storage is allowed, but got 'a'"),
    (b"\x80\x02(X\x03\x00\x00\x00fooK\x01tQ.", r"Only persistent_load of storage is allowed"),
    (b"\x80\x02(X\x07\x00\x00\x00storageK\x01tQ.", r"a storage's persistent id has 5 fields, got 2"),
    (b"\x80\x02(X\x07\x00\x00\x00storagectorch\nfloat32\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQ.",
     r"malformed storage record"),
    (b"\x80\x02X\x02\x00\x00\x00\xff\xfe.", r"BINUNICODE: 'utf-8' codec can't decode"),
    (b"\x80\x02X\xff\xff\xff\x7fab.", r"pickle data was truncated"),
    (b"\x80\x02c\xff\xfe\nx\n.", r"a GLOBAL name is not UTF-8"),
    (b"\x80\x02ctorch\n", r"pickle data was truncated"),
    (b"\x80\x02K\x01", r"pickle data was truncated"),
    (b"\x80\x02.", r"unpickling stack underflow"),
    (b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00aX\x06\x00\x00\x00base64\x86R.", r"_codecs\.encode only"),
    (b"\x80\x02ctorch\ndevice\n]\x85R.", r"torch\.device takes a string"),
    (b"\x80\x02cbuiltins\nset\nK\x01\x85R.", r"set is rebuilt only from a list, got int"),
    (b"\x80\x02cbuiltins\ncomplex\nX\x01\x00\x00\x001\x85R.", r"complex is rebuilt only from two numbers"),
    (b"\x80\x02ccollections\nOrderedDict\nK\x01\x85R.", r"OrderedDict is rebuilt only from a list of pairs"),
    (b"\x80\x02ccollections\nOrderedDict\n](K\x01e\x85R.", r"OrderedDict.* failed: TypeError"),
    (b"\x80\x02ccollections\nCounter\n]\x85R.", r"Counter is rebuilt only from a dict, got list"),
    (b"\x80\x02ctorch\nSize\nX\x01\x00\x00\x00a\x85R.", r"torch\.Size must be a tuple of ints, got str"),
    (b"\x80\x02ctorch\nSize\nG?\xf0\x00\x00\x00\x00\x00\x00\x85\x85R.", r"torch\.Size must be an int, got float"),
    (b"\x80\x02ctorch\nSize\nX\x01\x00\x00\x00a\x85\x85R.", r"torch\.Size must be an int, got str"),
    (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(X\x01\x00\x00\x00sK\x00))\x89ccollections\nOrderedDict\n)RtR.",
     r"a tensor must be rebuilt from a storage in the file, got str"),
    (b"\x80\x02ctorch._utils\n_rebuild_parameter\n(K\x01\x88)tR.", r"a Parameter must wrap a tensor, got int"),
    (b"\x80\x02ccollections\nOrderedDict\n)RK\x01b.", r"the state of a OrderedDict must be a dict, got int"),
    (b"\x80\x02ccollections\nOrderedDict\n)R}K\x01K\x02sb.", r"an attribute name of a OrderedDict must be a str"),
    (b"\x80\x02ccollections\nOrderedDict\n)R}X\x07\x00\x00\x00__len__K\x02sb.",
     r"refused to set attribute '__len__' on OrderedDict"),
    (b"\x80\x02}}b.", r"Can only build .* but got <class 'dict'>"),
]


@pytest.mark.parametrize("payload,message", OPCODE_REFUSALS, ids=range(len(OPCODE_REFUSALS)))
def test_opcode_refusals(payload, message):
    with pytest.raises(pickle.UnpicklingError, match=message) as info:
        tt.load(io.BytesIO(forge.checkpoint(payload)))
    assert str(info.value).startswith("Weights only load failed. Re-running `tritensor.load` with `weights_only` set "
                                      "to `False` will likely succeed")


def test_the_opcodes_torch_writes_load():
    def load(p):
        return tt.load(io.BytesIO(forge.checkpoint(p)))
    assert load(b"\x80\x02(K\x01M\x00\x01J\xff\xff\xff\xff\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00G@\x04\x00"
                b"\x00\x00\x00\x00\x00N\x88\x89t.") == (1, 256, -1, 2 ** 63, 2.5, None, True, False)
    assert load(b"\x80\x02U\x03abc.") == "abc"                                # SHORT_BINSTRING, decoded
    assert tt.load(io.BytesIO(forge.checkpoint(b"\x80\x02U\x03abc.")), encoding="bytes") == b"abc"
    with pytest.raises(pickle.UnpicklingError, match="SHORT_BINSTRING"):
        tt.load(io.BytesIO(forge.checkpoint(b"\x80\x02U\x01\xff.")), encoding="ascii")
    assert load(b"\x80\x02](K\x01K\x02eq\x00K\x03ah\x00\x86.") == ([1, 2, 3], [1, 2, 3])
    assert load(b"\x80\x02cbuiltins\nset\n](K\x01K\x02e\x85R.") == {1, 2}
    assert load(b"\x80\x02cbuiltins\ncomplex\nG?\xf0\x00\x00\x00\x00\x00\x00K\x02\x86R.") == complex(1, 2)
    assert load(b"\x80\x02cbuiltins\nbytearray\n)R.") == bytearray()
    assert load(b"\x80\x02cbuiltins\nbytearray\nX\x02\x00\x00\x00abX\x06\x00\x00\x00latin1\x86R.") == bytearray(b"ab")
    assert load(b"\x80\x02c_codecs\nencode\nX\x02\x00\x00\x00\xc3\xbfX\x06\x00\x00\x00latin1\x86R.") == b"\xff"
    counter = load(b"\x80\x02ccollections\nCounter\n}X\x01\x00\x00\x00aK\x02s\x85R.")
    assert type(counter) is collections.Counter and counter["a"] == 2
    od = load(b"\x80\x02ccollections\nOrderedDict\n)\x81X\x01\x00\x00\x00aK\x01s}X\x01\x00\x00\x00vK\x01sb.")
    assert type(od) is collections.OrderedDict and od == {"a": 1} and od.v == 1
    assert load(b"\x80\x02cbuiltins\nset\n)\x81.") == set() and load(b"\x80\x02\x8f.") == set()
    assert load(b"\x80\x02ctorch\nSize\nK\x02K\x03\x86\x85\x81.") == (2, 3)
    assert load(b"\x80\x02ctorch\ndevice\nX\x04\x00\x00\x00cudaK\x01\x86R.") == tt.device("cuda:1")
    # the classes themselves come back as torch returns them
    assert load(b"\x80\x02ccollections\nOrderedDict\nctorch\nSize\n\x86.") == (collections.OrderedDict, tt.Size)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert load(b"\x80\x04K\x05.") == 5
    assert any("Detected pickle protocol 4" in str(w.message) for w in caught)


def test_a_function_or_storage_type_is_not_returned():
    with pytest.raises(NotImplementedError, match=r"the file returns <function _rebuild_tensor_v2 .* itself"):
        tt.load(io.BytesIO(forge.checkpoint(forge.pickle_of(forge.glob("torch._utils", "_rebuild_tensor_v2")))))
    with pytest.raises(NotImplementedError, match=r"bare storage \(torch\.FloatStorage\)"):
        tt.load(io.BytesIO(forge.checkpoint(forge.pickle_of(forge.tup(forge.glob("torch", "FloatStorage"))))))
    # deep nesting and cycles are walked without recursion
    cyc = tt.load(io.BytesIO(forge.checkpoint(b"\x80\x02]q\x00h\x00a.")))
    assert cyc[0] is cyc
    nested = tt.load(io.BytesIO(forge.checkpoint(b"\x80\x02" + b"]" * 20000 + b"a" * 19999 + b".")))
    assert isinstance(nested, list) and len(nested) == 1


def test_weights_only_false_still_refuses_internal_objects():
    with pytest.raises(NotImplementedError, match="bare storage"):
        tt.load(os.path.join(CRAFTED, "storage_in_dict.pt"), weights_only=False)


# ------------------------------------------------------------------------------ BUILD and state
def test_torch_legacy_build_states_on_a_tensor():
    st = forge.storage()
    legacy_set = forge.tensor(size=(1,)) + forge.tup(st, forge.num(1), forge.tup(forge.num(2)),
                                                      forge.tup(forge.num(1))) + forge.BUILD
    t = _load_pickle(legacy_set)
    assert t.tolist() == [1.0, 2.0] and t.storage_offset() == 1
    grad = forge.tensor() + forge.tup(forge.TRUE, forge.NONE, forge.ordered_dict()) + forge.BUILD
    assert _load_pickle(grad).requires_grad
    variable = forge.tensor() + forge.tup(forge.tensor(size=(2,)), forge.NONE, forge.ordered_dict(), forge.TRUE,
                                          forge.NONE) + forge.BUILD
    v = _load_pickle(variable)
    assert v.tolist() == [0.0, 1.0] and v.requires_grad
    with pytest.raises(pickle.UnpicklingError, match="the data of a legacy Variable state must be a tensor"):
        _load_pickle(forge.tensor() + forge.tup(*[forge.NONE] * 5) + forge.BUILD)
    with pytest.raises(pickle.UnpicklingError, match="requires_grad must be a bool, got int"):
        _load_pickle(forge.tensor() + forge.tup(forge.num(1), forge.NONE, forge.NONE) + forge.BUILD)
    param = forge.glob("torch._utils", "_rebuild_parameter") + forge.tup(
        forge.tensor(), forge.TRUE, forge.ordered_dict()) + forge.REDUCE
    with pytest.raises(pickle.UnpicklingError, match=r"BUILD on a Parameter takes torch's legacy state .* the file "
                                                     r"gave list"):
        _load_pickle(param + forge.EMPTY_LIST + forge.BUILD)
    p = _load_pickle(param + forge.tup(forge.FALSE, forge.NONE, forge.NONE) + forge.BUILD)
    assert type(p) is Parameter and p.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_parameter_state_sets_new_attributes_only():
    def with_state(state):
        return forge.glob("torch._utils", "_rebuild_parameter_with_state") + forge.tup(
            forge.tensor(), forge.TRUE, forge.ordered_dict(), state) + forge.REDUCE
    p = _load_pickle(with_state(forge.dict_of(note=forge.text("hi"))))
    assert type(p) is Parameter and p.note == "hi" and p.requires_grad
    p = _load_pickle(with_state(forge.tup(forge.NONE, forge.dict_of(tag=forge.num(3)))))   # (dict, slots)
    assert p.tag == 3
    for name in ("data", "grad", "shape", "mT", "T", "_storage", "_host_array", "requires_grad_", "__class__"):
        with pytest.raises(pickle.UnpicklingError, match=rf"refused to set attribute '{name}' on Parameter"):
            _load_pickle(with_state(forge.dict_of(**{name: forge.num(1)})))
    with pytest.raises(NotImplementedError, match="bare storage"):
        _load_pickle(with_state(forge.dict_of(s=forge.storage())))
    with pytest.raises(RuntimeError, match="Invalid serialized state"):
        _load_pickle(with_state(forge.tup(forge.NONE, forge.NONE, forge.NONE)))


def test_state_dict_metadata_from_torch():
    ck = tt.load(os.path.join(os.path.dirname(CRAFTED), "torch_checkpoint.pt"))
    assert ck["linear"]._metadata == {"": {"version": 1}}


# ------------------------------------------------------------------------------ geometry
GEOMETRY = [   # (offset, size, stride) over a 16-byte float32 storage, torch's answer
    (0, (-1,), (1,), r"Trying to create tensor with negative dimension -1: \[-1\]"),
    (0, (2,), (-1,), r"Storage size calculation overflowed with sizes=\[2\] and strides=\[-1\]"),
    (-1, (2,), (1,), r"Tensor: invalid storage offset -1"),
    (0, (5,), (1,), r"setStorage: sizes \[5\], strides \[1\], storage offset 0, and itemsize 4 requiring a storage "
                    r"size of 20 are out of bounds for storage of size 16"),
    (4, (1,), (1,), r"storage offset 4, and itemsize 4 requiring a storage size of 20"),
    (0, (2 ** 62, 4), (0, 0), r"numel: integer multiplication overflow"),
    (0, (2,), (2 ** 62,), r"Storage size calculation overflowed with sizes=\[2\] and strides=\[4611686018427387904\]"),
    (2 ** 62, (1,), (1,), r"Storage size calculation overflowed with sizes=\[1\] and strides=\[1\]"),
    (0, (2 ** 63,), (0,), r"size 9223372036854775808: Overflow when unpacking long long"),
    (0, (1,), (2 ** 63,), r"stride 9223372036854775808: Overflow when unpacking long long"),
    (2 ** 63, (0,), (1,), r"storage_offset 9223372036854775808: Overflow"),
    (0, (2, 2), (1,), r"unequal size length \(2\) and stride length \(1\)"),
    (0, (-2 ** 63 - 1,), (1,), r"Overflow when unpacking long long"),
]


@pytest.mark.parametrize("offset,size,stride,message", GEOMETRY, ids=range(len(GEOMETRY)))
def test_tensor_geometry_at_the_int64_edges(offset, size, stride, message):
    with pytest.raises(RuntimeError, match=message):
        _load_pickle(forge.tensor(offset=offset, size=size, stride=stride))


def test_tensor_geometry_torch_allows():
    t = _load_pickle(forge.tensor(size=(2 ** 40,), stride=(0,)))              # expanded: one element
    assert t.shape == (2 ** 40,) and t.stride() == (0,)
    e = _load_pickle(forge.tensor(offset=2 ** 62, size=(0, 2 ** 30, 2 ** 30), stride=(1, 1, 1)))
    assert e.numel() == 0 and e.storage_offset() == 2 ** 62 and e.tolist() == []
    z = _load_pickle(forge.tensor(offset=3, size=(1,), stride=(2 ** 60,)))   # the last element, alone
    assert z.tolist() == [3.0]
    # torch allows these; NumPy (the cpu device) cannot hold their byte sizes: refused at load
    for size, stride in (((0, 2 ** 62, 2 ** 62), (1, 1, 1)), ((1,), (2 ** 62,))):
        with pytest.raises(RuntimeError, match=r"tritensor cannot represent a tensor of sizes .* its byte sizes "
                                               r"overflow int64"):
            _load_pickle(forge.tensor(size=size, stride=stride))
    s = _load_pickle(forge.tensor(size=(2, 2), stride=(0, 3)))
    assert s.tolist() == [[0.0, 3.0], [0.0, 3.0]]
    with pytest.raises(pickle.UnpicklingError, match="size must be an int, got bool"):
        _load_pickle(forge.glob("torch._utils", "_rebuild_tensor_v2") + forge.tup(
            forge.storage(), forge.num(0), forge.tup(forge.TRUE), forge.tup(forge.num(1)), forge.FALSE,
            forge.ordered_dict()) + forge.REDUCE)


def test_tensors_are_checked_again_when_the_object_is_built():
    """The check after the whole object is built (nothing in a file can reach it now that BUILD
    is restricted, so it is driven by hand here)."""
    good = tt.arange(4.0)
    u = wo.WeightsUnpickler(b"", None)
    u.tensors = [good]
    u.check_tensors()
    for field, value, message in (("_offset", 1, "no longer fits its storage: setStorage"),
                                  ("_shape", tt.Size([5]), "no longer fits its storage"),
                                  ("_stride", (2,), "no longer fits its storage"),
                                  ("_offset", 1.0, "was changed after it was rebuilt"),
                                  ("_stride", [1], "was changed after it was rebuilt"),
                                  ("_shape", (4,), "was changed after it was rebuilt"),
                                  ("_storage", None, "was changed after it was rebuilt"),
                                  ("_dtype", "float32", "was changed after it was rebuilt"),
                                  ("_offset", -1, "invalid storage offset -1")):
        bad = tt.arange(4.0)
        bad.__dict__[field] = value
        u.tensors = [good, bad]
        with pytest.raises(pickle.UnpicklingError, match=rf"tensor 1 of the file .*{message}"):
            u.check_tensors()
    shrunk = tt.arange(4.0)
    shrunk._storage.nbytes = 12
    u.tensors = [shrunk]
    with pytest.raises(pickle.UnpicklingError, match="tensor 0 of the file was changed"):
        u.check_tensors()
    forged_dtype = tt.arange(4.0)
    fake = object.__new__(type(tt.float32))
    for slot in type(tt.float32).__slots__:
        object.__setattr__(fake, slot, getattr(tt.float32, slot))
    forged_dtype.__dict__["_dtype"] = fake
    u.tensors = [forged_dtype]
    with pytest.raises(pickle.UnpicklingError, match="was changed after it was rebuilt"):
        u.check_tensors()


# ------------------------------------------------------------------------------ the zip reader
def _records(**claims_for_storage):
    records = forge.base_records()
    records[2].update(claims_for_storage)
    return records


def test_zip64_and_comments_and_deflate_load(tmp_path):
    assert tt.load(io.BytesIO(forge.checkpoint(zip64=True)))["t"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert tt.load(io.BytesIO(forge.checkpoint(comment=b"PK\x05\x06 a comment")))["t"].tolist() == [0, 1, 2, 3]
    path = tmp_path / "deflated.pt"
    path.write_bytes(forge.zip_records(_records(method=8)))
    for mmap in (False, True):          # torch 2.13 maps the compressed bytes here (garbage values)
        assert tt.load(path, mmap=mmap)["t"].tolist() == [0.0, 1.0, 2.0, 3.0]
    records = forge.base_records()
    records[0].update(method=8)
    assert tt.load(io.BytesIO(forge.zip_records(records)))["t"].tolist() == [0.0, 1.0, 2.0, 3.0]
    # set_crc32_options(False) writes CRC 0: not checked, as torch loads such files
    records = [dict(r, crc=0) for r in forge.base_records()]
    assert tt.load(io.BytesIO(forge.zip_records(records)))["t"].tolist() == [0.0, 1.0, 2.0, 3.0]


ZIP_REFUSALS = [
    (dict(zip_kw=dict(zip64=True), storage=dict(offset=10 ** 6)), CORRUPT),
    (dict(storage=dict(method=12)), r"failed retrieving file meta-data for data/0: unsupported method"),
    (dict(storage=dict(flags=0x840)), r"unsupported encryption"),
    (dict(storage=dict(csize=16, usize=20)), CORRUPT),
    (dict(storage=dict(method=8, payload=b"\xff\xff\xff")), r"failed reading file data/0: decompression failed"),
    (dict(storage=dict(method=8, payload=b"\x03\x00")), r"failed reading file data/0: unexpected decompressed size"),
    (dict(storage=dict(name="archive/data/0", offset=0)), r"local header of archive/data/0 names another record"),
    (dict(zip_kw=dict(entries_delta=3)), CORRUPT),
    (dict(zip_kw=dict(entries_delta=-1)), r'Expected hasRecord\("version"\) to be true'),
]


@pytest.mark.parametrize("case,message", ZIP_REFUSALS, ids=range(len(ZIP_REFUSALS)))
def test_zip_refusals(case, message):
    records = _records(**case.get("storage", {}))
    with pytest.raises(RuntimeError, match=message):
        tt.load(io.BytesIO(forge.zip_records(records, **case.get("zip_kw", {}))))


def test_zip_directory_refusals():
    good = forge.checkpoint()
    eocd = good.rindex(b"PK\x05\x06")
    def patch(at, raw):
        return good[:at] + raw + good[at + len(raw):]
    with pytest.raises(RuntimeError, match="unsupported multidisk archive"):
        tt.load(io.BytesIO(patch(eocd + 4, b"\x01\x00")))
    with pytest.raises(RuntimeError, match=CORRUPT):              # a central entry's signature broken
        tt.load(io.BytesIO(patch(good.index(b"PK\x01\x02"), b"PK\x09\x09")))
    with pytest.raises(RuntimeError, match=CORRUPT):              # a local header's signature broken
        tt.load(io.BytesIO(patch(good.index(b"PK\x03\x04", 10), b"PK\x09\x09")))
    with pytest.raises(RuntimeError, match="failed finding central directory"):
        tt.load(io.BytesIO(good[:eocd + 10]))
    with pytest.raises(RuntimeError, match="duplicate record archive/data/0"):
        records = forge.base_records()
        tt.load(io.BytesIO(forge.zip_records(records + [dict(records[2])])))
    no_version = [r for r in forge.base_records() if r["name"] != "archive/version"]
    with pytest.raises(RuntimeError, match=r'Expected hasRecord\("version"\) to be true, but got false\.'):
        tt.load(io.BytesIO(forge.zip_records(no_version)))
    for version, message in ((b"0", r"version 0, but the minimum supported version for reading is 1"),
                             (b"abc", r"Couldn't parse the version abc as Long Long\."),
                             (b"99999999999999999999", r"Couldn't parse the version")):
        with pytest.raises(RuntimeError, match=message):
            tt.load(io.BytesIO(forge.zip_records(forge.base_records(version=version))))
    assert tt.load(io.BytesIO(forge.zip_records(forge.base_records(version=b" +3abc"))))["t"].numel() == 4
    dot_data = [dict(r, name="archive/.data/version") if r["name"] == "archive/version" else r
                for r in forge.base_records(version=b"3")]
    assert tt.load(io.BytesIO(forge.zip_records(dot_data)))["t"].numel() == 4
    records = forge.base_records()
    records[1]["data"] = b"\xff\xfe"
    with pytest.raises(ValueError, match="Unknown endianness type: \ufffd\ufffd"):
        tt.load(io.BytesIO(forge.zip_records(records)))


def test_not_a_zip_checkpoint():
    with pytest.raises(pickle.UnpicklingError, match="the file is empty"):
        tt.load(io.BytesIO(b""))
    with pytest.raises(pickle.UnpicklingError, match=r"invalid load key, b'P': not a PyTorch zip checkpoint"):
        tt.load(io.BytesIO(forge.zip_records([])))


def test_inflate_bounds():
    assert zr.MAX_INFLATE_RATIO == 100 and zr.INFLATE_FLOOR == 1 << 20
    zeros = bytes(1 << 20)       # 1 MiB of zeros deflates ~1000x: under the floor, it loads
    def big(numel):
        return forge.pickle_of(forge.dict_of(t=forge.tensor(forge.storage(numel=numel), size=(numel,))))
    records = forge.base_records(big(1 << 18), {"0": zeros})
    records[2].update(method=8)
    assert tt.load(io.BytesIO(forge.zip_records(records)))["t"].numel() == 1 << 18
    records = forge.base_records(big((1 << 18) + 1), {"0": zeros + b"\x00" * 4})
    records[2].update(method=8)           # one float past the floor: refused
    with pytest.raises(RuntimeError, match="refused as a decompression bomb"):
        tt.load(io.BytesIO(forge.zip_records(records)))


def test_mmap_file_changed_under_the_loader(tmp_path, monkeypatch):
    path = tmp_path / "m.pt"
    path.write_bytes(forge.checkpoint())
    real = np.memmap

    def grown(filename, *args, **kw):
        with open(filename, "ab") as fh:
            fh.write(b"\x00" * 7)
        return real(filename, *args, **kw)
    monkeypatch.setattr(np, "memmap", grown)
    with pytest.raises(RuntimeError, match="changed while it was being loaded"):
        tt.load(path, mmap=True)
