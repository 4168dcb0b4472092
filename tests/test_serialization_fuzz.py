"""A standing checkpoint fuzzer (issue 20.3): hypothesis mutates checkpoints (byte flips,
truncations, lying directory sizes, rewritten pickle opcodes and globals, shapes/strides/offsets
at the int64 edges) and one long-lived loader process (tests/fuzz_load_worker.py, memory capped
with RLIMIT_AS) loads each, with and without mmap. Two outcomes are allowed: a load whose
tensors pass the worker's own geometry checks, or an exception of the documented types. A
signal, a hang, an allocation past the cap (MemoryError) or any other exception fails.

CI runs a fixed, derandomized set of examples; TRITENSOR_FUZZ_EXAMPLES=N runs N (randomized
unless TRITENSOR_FUZZ_SEED is set) to look harder.
"""
import collections
import io
import os
import select
import signal
import struct
import subprocess
import sys
import zipfile

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import tritensor as tt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkpoint_forge as forge  # noqa: E402

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz_load_worker.py")
MEMORY_CAP = 1 << 30           # bytes the worker may map past what it holds after warming up
TIMEOUT = 20.0                 # seconds for one load
EXAMPLES = int(os.environ.get("TRITENSOR_FUZZ_EXAMPLES", "250"))
DERANDOMIZE = "TRITENSOR_FUZZ_EXAMPLES" not in os.environ or "TRITENSOR_FUZZ_SEED" in os.environ

# the exceptions tt.load documents for a bad file (README, "Security")
DOCUMENTED = {"UnpicklingError", "RuntimeError", "NotImplementedError"}


def _allowed(reply):
    """ok, or a documented exception (ValueError only for torch's byteorder message)."""
    if reply.startswith("ok "):
        return True
    if reply.startswith("raised "):
        kind, _, message = reply[7:].partition(" ")
        return kind in DOCUMENTED or (kind == "ValueError" and message.startswith("'Unknown endianness type"))
    return False


class Loader:
    """The worker process, restarted after it dies or hangs."""

    def __init__(self):
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen([sys.executable, WORKER, str(MEMORY_CAP)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self._line(60.0) == "ready"

    def _line(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        return self.proc.stdout.readline().decode().rstrip("\n")

    def load(self, data, mmap):
        try:
            self.proc.stdin.write(struct.pack("<IB", len(data), int(mmap)) + data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        reply = self._line(TIMEOUT)
        if not reply:
            self.proc.kill()
            code = self.proc.wait()
            self.start()
            return f"died (exit {code})" if reply == "" else "hung"
        return reply

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def loader():
    w = Loader()
    yield w
    w.close()


# ------------------------------------------------------------------------------ templates
def _tt_saved():
    base = tt.arange(12.0).reshape(3, 4)
    obj = {"base": base, "col": base[:, 1], "tail": base[1:, 2:], "t": base.t(),
           "p": tt.nn.Parameter(tt.ones(2)), "i": tt.tensor([1, -2, 3], dtype=tt.int64),
           "h": tt.tensor([0.5, 2.0], dtype=tt.float16), "b": tt.tensor([True, False]),
           "sd": collections.OrderedDict(w=tt.zeros(2, 2)), "misc": [1, 2.5, "s", None, (3, b"x"), {4}],
           "dt": tt.bfloat16, "dev": tt.device("cpu"), "size": tt.Size([2, 3]), "e": tt.zeros(0, 3)}
    buf = io.BytesIO()
    tt.save(obj, buf)
    return buf.getvalue()


def _records_of(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [{"name": i.filename, "data": zf.read(i)} for i in zf.infolist()]


TEMPLATES = {
    "forge": forge.base_records(),
    "tt.save": _records_of(_tt_saved()),
}
TORCH_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "torch_checkpoint.pt")
with open(TORCH_FILE, "rb") as _fh:
    TEMPLATES["torch.save"] = _records_of(_fh.read())

EDGE_INTS = [0, 1, 2, 3, 4, 7, 255, 256, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 62, 2 ** 63 - 1, 2 ** 63,
             2 ** 64, -1, -2, -2 ** 31, -2 ** 63, -2 ** 63 - 1]
GLOBALS = [("os", "system"), ("builtins", "exec"), ("builtins", "eval"), ("builtins", "getattr"),
           ("torch", "int64"), ("torch", "float32"), ("torch", "FloatStorage"), ("torch", "Size"),
           ("torch", "device"), ("collections", "OrderedDict"), ("collections", "Counter"),
           ("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_tensor"),
           ("torch._utils", "_rebuild_parameter"), ("torch._utils", "_rebuild_parameter_with_state"),
           ("builtins", "bytearray"), ("builtins", "set"), ("builtins", "complex"), ("_codecs", "encode"),
           ("torch.storage", "UntypedStorage"), ("numpy.core.multiarray", "_reconstruct")]
OPCODES = list(b"()}]tRQbsuae.N\x88\x89\x85\x86\x87KMJ\x8aXUGqhjr\x80\x81\x8f0123456789") + [0x8c, 0x94, 0x95]

edge = st.sampled_from(EDGE_INTS) | st.integers(-3, 40)


def _template():
    return st.sampled_from(sorted(TEMPLATES)).map(lambda k: [dict(r) for r in TEMPLATES[k]])


@st.composite
def byte_flips(draw):
    data = bytearray(forge.zip_records(draw(_template())))
    for _ in range(draw(st.integers(1, 8))):
        data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
    return bytes(data)


@st.composite
def truncations(draw):
    data = forge.zip_records(draw(_template()))
    return data[:draw(st.integers(0, len(data) - 1))]


@st.composite
def lying_directories(draw):
    records = draw(_template())
    for _ in range(draw(st.integers(1, 3))):
        r = records[draw(st.integers(0, len(records) - 1))]
        claim = draw(st.sampled_from(["csize", "usize", "crc", "offset", "method", "flags"]))
        if claim in ("csize", "usize", "offset"):
            value = draw(st.sampled_from([0, 1, len(r["data"]) - 1, len(r["data"]) + 1, 2 ** 31, 2 ** 32 - 1]))
        elif claim == "crc":
            value = draw(st.integers(0, 2 ** 32 - 1))
        else:
            value = draw(st.sampled_from([0, 8, 12, 0x801, 0x808, 1]))
        r[claim] = max(value, 0)
        if draw(st.booleans()):
            r["method"] = 8
    return forge.zip_records(records, zip64=draw(st.booleans()))


@st.composite
def rewritten_pickles(draw):
    records = draw(_template())
    pkl = bytearray(records[0]["data"])
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(pkl) - 1))
        action = draw(st.sampled_from(["replace", "insert", "delete", "global"]))
        if action == "replace":
            pkl[pos] = draw(st.sampled_from(OPCODES))
        elif action == "insert":
            pkl[pos:pos] = bytes([draw(st.sampled_from(OPCODES))])
        elif action == "delete":
            del pkl[pos]
        else:
            module, name = draw(st.sampled_from(GLOBALS))
            pkl[pos:pos] = forge.glob(module, name)
    records[0]["data"] = bytes(pkl)
    return forge.zip_records(records)


@st.composite
def edge_geometry(draw):
    ndim = draw(st.integers(0, 3))
    size = tuple(draw(edge) for _ in range(ndim))
    stride = tuple(draw(edge) for _ in range(draw(st.sampled_from([ndim, ndim, ndim, max(ndim - 1, 0), ndim + 1]))))
    offset = draw(edge)
    kind, itemsize = draw(st.sampled_from([("FloatStorage", 4), ("LongStorage", 8), ("ByteStorage", 1),
                                           ("BoolStorage", 1), ("HalfStorage", 2)]))
    numel = draw(st.sampled_from([4, 0, 1, 16, 2 ** 62, -1]))
    nbytes = max(min(numel, 64), 0) * itemsize
    if draw(st.integers(0, 9)) == 0:      # now and then the record disagrees with the pickle
        nbytes = draw(st.sampled_from([0, 1, 15, 17]))
    body = forge.dict_of(t=forge.tensor(forge.storage(numel=numel, kind=kind), offset, size, stride))
    if draw(st.booleans()):     # the same storage again through a view, or a legacy BUILD
        body = forge.dict_of(t=forge.tensor(forge.storage(numel=numel, kind=kind)) + forge.tup(
            forge.storage(numel=numel, kind=kind), forge.num(offset), forge.tup(*map(forge.num, size)),
            forge.tup(*map(forge.num, stride))) + forge.BUILD)
    return forge.checkpoint(forge.pickle_of(body), {"0": b"\x01" * nbytes})


checkpoints = st.one_of(byte_flips(), truncations(), lying_directories(), rewritten_pickles(), edge_geometry())


OUTCOMES = collections.Counter()     # what the examples ended in (printed by local runs: -s)


def _fuzz(loader, data, mmap):
    reply = loader.load(data, mmap)
    OUTCOMES[reply.split("WeightsUnpickler error: ")[-1][:70]] += 1
    assert _allowed(reply), f"{reply}\nfile: {data!r}"


def test_documented_outcomes_only(loader):
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=DERANDOMIZE, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=checkpoints, mmap=st.booleans())
    def run(data, mmap):
        _fuzz(loader, data, mmap)
    if "TRITENSOR_FUZZ_SEED" in os.environ:
        run = seed(int(os.environ["TRITENSOR_FUZZ_SEED"]))(run)
    run()
    if "TRITENSOR_FUZZ_EXAMPLES" in os.environ:
        for outcome, n in OUTCOMES.most_common():
            print(f"{n:6d}  {outcome}")


def test_the_harness_sees_a_crash_a_hang_and_a_leak(loader):
    """The loader process reports what it must: good files load, a crash and a hang are seen."""
    assert loader.load(forge.checkpoint(), False) == "ok 1"
    assert loader.load(forge.checkpoint(), True) == "ok 1"
    assert _allowed(loader.load(b"garbage", False))
    assert not _allowed("died (exit -11)") and not _allowed("hung") and not _allowed("bad reads 64 bytes")
    assert not _allowed("raised MemoryError ''") and not _allowed("raised EOFError ''")
    assert not _allowed("raised KeyError 'data/0'")
    loader.proc.send_signal(signal.SIGSEGV)        # a worker that dies is seen, and replaced
    assert loader.load(forge.checkpoint(), False) == "died (exit -11)"
    assert loader.load(forge.checkpoint(), False) == "ok 1"
