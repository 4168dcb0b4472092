"""The loader process of tests/test_serialization_fuzz.py: imports tritensor once, caps its own
memory (RLIMIT_AS), then loads checkpoints fed over stdin until stdin closes.

Request: 4-byte little-endian length, 1 byte (1: mmap), the file's bytes.
Reply: one line, ``ok <n tensors>`` or ``raised <TypeName> <message>`` or ``bad <what>`` when a
loaded tensor fails the independent checks below. A signal or a hang shows as no reply.

The checks do not trust tt.load's own: every tensor in the result is checked against its storage
here (offset, sizes, strides, item size from a table of its own), its bytes are read, and the
process's dtypes must still have their item sizes.
"""
import os
import resource
import struct
import sys
import tempfile

import tritensor as tt

ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2,
            "float32": 4, "float64": 8}
DTYPES = {name: getattr(tt, name) for name in ITEMSIZE}
READ_LIMIT = 1 << 16          # read the values of tensors up to this many elements


def _tensors(obj):
    seen, todo = set(), [obj]
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, tt.Tensor):
            yield x
            todo.extend(v for k, v in vars(x).items() if not k.startswith("_"))
        elif isinstance(x, dict):
            todo.extend(x.keys())
            todo.extend(x.values())
            todo.extend(getattr(x, "__dict__", {}).values())
        elif isinstance(x, (list, tuple, set, frozenset)):
            todo.extend(x)


def _check(t):
    name = t.dtype.name
    if DTYPES.get(name) is not t.dtype or t.dtype.itemsize != ITEMSIZE[name]:
        return f"dtype {t.dtype!r} is not tritensor's"
    size, stride, offset = tuple(t.shape), t.stride(), t.storage_offset()
    nbytes = t.untyped_storage().nbytes()
    if len(size) != len(stride) or min(size + stride + (offset,), default=0) < 0:
        return f"geometry {size} {stride} {offset}"
    numel = 1
    for s in size:
        numel *= s
    if numel:
        end = (offset + sum((s - 1) * st for s, st in zip(size, stride)) + 1) * ITEMSIZE[name]
        if end > nbytes:
            return f"reads {end} bytes of a {nbytes}-byte storage: {size} {stride} {offset}"
        if numel <= READ_LIMIT:
            t.detach().cpu().tolist()
    return None


def main():
    warm = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "torch_checkpoint.pt")
    tt.load(warm)
    tt.load(warm, map_location="cuda")
    tt.ones(2, device="cuda").sum().item()
    cap = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 30
    with open("/proc/self/status") as fh:
        vm = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + cap, vm + cap))
    path = os.path.join(tempfile.mkdtemp(prefix="tt-fuzz-"), "f.pt")
    stdin, stdout = sys.stdin.buffer, sys.stdout
    stdout.write("ready\n")
    stdout.flush()
    while True:
        head = stdin.read(5)
        if len(head) < 5:
            break
        n, mmap = struct.unpack("<IB", head)
        data = stdin.read(n)
        with open(path, "wb") as fh:
            fh.write(data)
        try:
            result = tt.load(path, mmap=bool(mmap))
            bad = None
            count = 0
            for t in _tensors(result):
                count += 1
                bad = bad or _check(t)
            if any(DTYPES[k].itemsize != v for k, v in ITEMSIZE.items()):
                bad = "a dtype's itemsize changed"
            reply = f"bad {bad}" if bad else f"ok {count}"
            del result
        except BaseException as e:      # noqa: BLE001 - the parent judges the type
            reply = f"raised {type(e).__name__} {str(e)[:300]!r}"
        stdout.write(reply.replace("\n", " ") + "\n")
        stdout.flush()
    if os.path.exists(path):
        os.unlink(path)
    os.rmdir(os.path.dirname(path))


if __name__ == "__main__":
    main()
