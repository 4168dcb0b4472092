"""Builds PyTorch zip checkpoints byte by byte, lies included, without torch or tritensor.

A tiny pickle assembler (the protocol-2 opcodes ``torch.save`` writes) and a zip writer whose
directory can claim what the test wants. tests/data/crafted/make_crafted.py writes the regression
files with it; tests/test_serialization_fuzz.py mutates the checkpoints it makes.
"""
import struct
import zlib

# ------------------------------------------------------------------------------ pickle
PROTO2 = b"\x80\x02"
STOP = b"."
MARK = b"("
TUPLE = b"t"
EMPTY_DICT, EMPTY_LIST, EMPTY_TUPLE = b"}", b"]", b")"
SETITEM, SETITEMS, APPEND, APPENDS, BUILD, REDUCE, BINPERSID = b"s", b"u", b"a", b"e", b"b", b"R", b"Q"
NONE, TRUE, FALSE = b"N", b"\x88", b"\x89"


def glob(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def text(s):
    raw = s.encode("utf-8")
    return b"X" + struct.pack("<I", len(raw)) + raw


def num(v):
    """An int as pickle protocol 2 writes it (BININT1/BININT2/BININT/LONG1)."""
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    if -2 ** 31 <= v < 2 ** 31:
        return b"J" + struct.pack("<i", v)
    raw = v.to_bytes((v.bit_length() + 8) // 8 or 1, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


def tup(*items):
    return MARK + b"".join(items) + TUPLE


def dict_of(**items):
    return EMPTY_DICT + MARK + b"".join(text(k) + v for k, v in items.items()) + SETITEMS


def storage(key="0", numel=4, kind="FloatStorage", location="cpu"):
    return tup(text("storage"), glob("torch", kind), text(key), text(location), num(numel)) + BINPERSID


def ordered_dict():
    return glob("collections", "OrderedDict") + EMPTY_TUPLE + REDUCE


def tensor(st=None, offset=0, size=(4,), stride=(1,), requires_grad=False):
    """torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())."""
    st = storage() if st is None else st
    return glob("torch._utils", "_rebuild_tensor_v2") + tup(
        st, num(offset), tup(*map(num, size)), tup(*map(num, stride)), TRUE if requires_grad else FALSE,
        ordered_dict()) + REDUCE


def pickle_of(body):
    return PROTO2 + body + STOP


# ------------------------------------------------------------------------------ zip
def _raw(name):
    return name if isinstance(name, bytes) else name.encode("utf-8")


def zip_records(records, entries_delta=0, cd_offset_delta=0, zip64=False, comment=b""):
    """records: dicts with name (str, or raw bytes) and data, and optionally what the central
    directory should claim instead of the truth: method (8 = deflate the data), csize, usize, crc,
    flags, offset, local_name, and an entry comment. Stored records are written as torch writes
    them (no data descriptor). ``zip64`` writes the zip64 forms (sizes and offsets in the extra
    field, the zip64 end records)."""
    out, cd = bytearray(), bytearray()
    for r in records:
        name, data, method = _raw(r["name"]), r["data"], r.get("method", 0)
        payload = r.get("payload", zlib.compress(data, 9)[2:-4] if method == 8 else data)
        crc = r.get("crc", zlib.crc32(data))
        csize, usize = r.get("csize", len(payload)), r.get("usize", len(data))
        flags = r.get("flags", 0x800)
        offset = r.get("offset", len(out))
        local_name = _raw(r.get("local_name", r["name"]))
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, flags, method, 0, 0x21, crc, len(payload),
                           len(data), len(local_name), 0) + local_name + payload
        extra = b""
        if zip64:
            extra = struct.pack("<HHQQQ", 1, 24, usize, csize, offset)
            csize = usize = offset = 0xFFFFFFFF
        note = r.get("comment", b"")
        cd += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 45, 45, flags, method, 0, 0x21, crc,
                          csize, usize, len(name), len(extra), len(note), 0, 0, 0, offset) + name + extra + note
    cd_offset = len(out) + cd_offset_delta
    n = len(records) + entries_delta
    out += cd
    if zip64:
        z64 = len(out)
        out += struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, n, n, len(cd), cd_offset)
        out += struct.pack("<4sIQI", b"PK\x06\x07", 0, z64, 1)
        n, cd_size, cd_offset = 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF
    else:
        cd_size = len(cd)
    out += struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, n, n, cd_size, cd_offset, len(comment)) + comment
    return bytes(out)


def float_bytes(values):
    return struct.pack(f"<{len(values)}f", *values)


def base_records(pickle_bytes=None, storages=None, version=b"3\n"):
    """The records of a checkpoint holding {'t': tensor([0., 1., 2., 3.])} unless told otherwise."""
    if pickle_bytes is None:
        pickle_bytes = pickle_of(dict_of(t=tensor()))
    if storages is None:
        storages = {"0": float_bytes([0.0, 1.0, 2.0, 3.0])}
    records = [{"name": "archive/data.pkl", "data": pickle_bytes},
               {"name": "archive/byteorder", "data": b"little"}]
    records += [{"name": f"archive/data/{k}", "data": v} for k, v in storages.items()]
    records.append({"name": "archive/version", "data": version})
    return records


def checkpoint(pickle_bytes=None, storages=None, **zip_kw):
    return zip_records(base_records(pickle_bytes, storages), **zip_kw)
