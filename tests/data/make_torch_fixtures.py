"""Record torch's answers for tritensor's torch oracle: tests/test_torch_oracle.py (op_db's
samples) and tests/test_edge_values.py (every pointwise op at 0, -0, +-inf, NaN, subnormals and
the dtype's limits, forward and backward).

tritensor never imports torch: these tests replay values torch computed, committed here.

HOW TO REGENERATE (after new ops land; two venvs, two steps, then run the two tests):

  1. tritensor side: which names to record -> tests/data/torch_oracle_manifest.json
         .venv/bin/python tests/data/make_torch_fixtures.py manifest
  2. torch side: record them -> tests/data/torch_oracle.bin.gz
         /work/torchenv/bin/python tests/data/make_torch_fixtures.py record
  3. .venv/bin/pytest -n 0 -q -s tests/test_torch_oracle.py tests/test_edge_values.py
     and shrink (or, with its reason, grow) KNOWN_DIFFERENCES in those files.

Step 1 lists the op_db names tritensor implements or has pending (tests/test_op_db_coverage.py)
and the table's elementwise records (tests/opinfo.py, reference == "table") with their arity and
op_db names. Pending names are recorded too: when their op lands, the replay already checks it
(reporting, not failing, until the fixture is regenerated with the op implemented).

Step 2, for every op_db entry of those names: for float32, float64, int64 and bool (where the
op supports the dtype on CPU) a few of ``sample_inputs("cpu", dtype)`` (small ones, spread over
the list), the in-place variant on one sample, and a few ``error_inputs``. Inputs keep their
layout (shape, strides, storage offset); outputs keep values, dtype, shape and strides; when
torch raises, its exception type and message. A sample holding something that cannot be encoded
(complex, sparse, a callable ...) is left out. For the elementwise records: torch at an edge-value
grid in every dtype, with the gradient at the same points for the float dtypes.

The output is deterministic (seeded per case, gzip without a timestamp): re-running on the same
torch gives the same bytes.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import math
import pathlib
import sys
import zlib

HERE = pathlib.Path(__file__).parent
MANIFEST = HERE / "torch_oracle_manifest.json"
FIXTURE = HERE / "torch_oracle.bin.gz"
MAGIC = b"tritensor-torch-oracle-1\n"

SAMPLE_DTYPES = ("float32", "float64", "int64", "bool")
SAMPLES_PER_DTYPE = 3
MAX_SAMPLES_SCANNED = 40       # sample generators can be long: look at this many at most
MAX_ELEMENTS = 256             # per sample's inputs, and per output (keeps the file small) ...
MAX_FALLBACK_ELEMENTS = 1300   # ... unless no sample is that small: then the smallest up to this
ERROR_INPUTS_PER_OP = 4
RANDOMNESS_TRIES = 1           # besides op_db's random ops: a result another seed changes is random
EDGE_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")


# --------------------------------------------------------------------------- step 1 (tritensor)
def make_manifest():
    sys.path.insert(0, str(HERE.parent))
    import tritensor as tt  # noqa: F401
    from opinfo import RECORDS
    from test_op_db_coverage import NAMES, PENDING, resolve
    from tritensor.ops.table import TABLE

    implemented = sorted(n for n in NAMES if resolve(n) is not None)
    elementwise = {}
    for r in RECORDS:
        if r.reference != "table" or r.name not in TABLE:
            continue
        entry = TABLE[r.name]
        elementwise[r.name] = {"arity": len(entry.args), "op_db": sorted(r.op_db),
                               "differentiable": bool(entry.differentiable)}
    manifest = {"implemented": implemented, "pending": sorted(PENDING), "elementwise": elementwise}
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"{len(implemented)} implemented, {len(PENDING)} pending op_db names, "
          f"{len(elementwise)} elementwise records -> {MANIFEST}")


# --------------------------------------------------------------------------- step 2 (torch)
class Unencodable(Exception):
    """A value the fixture cannot hold (complex, sparse, a callable ...): the sample is left out."""


class Writer:
    """Arrays go into one blob (deduplicated); JSON refers to them by index."""

    def __init__(self):
        self.arrays, self.blob, self.seen = [], bytearray(), {}

    def add(self, arr):
        import numpy as np
        arr = np.ascontiguousarray(arr)
        data = arr.tobytes()
        key = (str(arr.dtype), hashlib.sha1(data).hexdigest())
        if key not in self.seen:
            while len(self.blob) % 8:
                self.blob.append(0)
            self.seen[key] = len(self.arrays)
            self.arrays.append([str(arr.dtype), len(self.blob), arr.size])
            self.blob += data
        return self.seen[key]


torch = None      # imported by the torch side only (step 2): tritensor's side has no torch


def _dtype_name(dtype):
    return str(dtype).split(".")[-1]


def _numpy_bits(t):
    """A NumPy array with the tensor's exact bits (bfloat16 as uint16 patterns)."""
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view("uint16")
    return t.numpy()


ENCODABLE_DTYPES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"}


def encode(value, w, output=False):
    """JSON for an argument or a result. Tensors: inputs keep their storage span (strides and a
    small storage offset survive), outputs their values in row-major order plus torch's strides."""
    if isinstance(value, torch.Tensor):
        if value.layout != torch.strided or value.is_quantized or value.is_meta:
            raise Unencodable("non-strided tensor")
        name = _dtype_name(value.dtype)
        if name not in ENCODABLE_DTYPES:
            raise Unencodable(f"dtype {name}")
        value = value.detach()
        if value._is_zerotensor():      # autograd's efficient zeros (sgn's gradient): no numpy view
            value = torch.zeros(value.shape, dtype=value.dtype)
        shape, stride = list(value.shape), list(value.stride())
        if output:
            return {"V": w.add(_numpy_bits(value.contiguous())), "dtype": name, "shape": shape, "stride": stride}
        storage_size = value.untyped_storage().nbytes() // value.element_size()
        if storage_size <= 2 * MAX_FALLBACK_ELEMENTS:      # all of a small storage (as_strided reads it)
            offset, base, span = value.storage_offset(), 0, storage_size - value.storage_offset()
        elif value.numel() == 0:
            span, offset, base = 0, 0, 0
        else:                   # the span the view reaches, and a little of the offset before it
            span = 1 + sum((s - 1) * st for s, st in zip(shape, stride))
            offset = min(value.storage_offset(), 3)
            base = value.storage_offset() - offset
        flat = torch.as_strided(value, (offset + span,), (1,), base) if offset + span else value.reshape(0)
        return {"T": w.add(_numpy_bits(flat.contiguous())), "dtype": name, "shape": shape, "stride": stride,
                "offset": offset}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else {"float": repr(value)}
    if isinstance(value, torch.Size):
        return {"size": list(value)}
    if isinstance(value, torch.dtype):
        name = _dtype_name(value)
        if name not in ENCODABLE_DTYPES:
            raise Unencodable(f"dtype {name}")
        return {"dtype": name}
    if isinstance(value, torch.device):
        return {"device": value.type}
    if isinstance(value, torch.memory_format):
        return {"memory_format": _dtype_name(value)}
    if isinstance(value, slice):
        return {"slice": [encode(value.start, w), encode(value.stop, w), encode(value.step, w)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    fields = getattr(type(value), "_fields", None) or getattr(type(value), "__match_args__", None)
    if isinstance(value, tuple) and fields:        # a named tuple (torch.return_types.max ...)
        return {"tuple": [encode(v, w, output) for v in value], "names": list(fields)}
    if isinstance(value, tuple):
        return {"tuple": [encode(v, w, output) for v in value]}
    if isinstance(value, list):
        return [encode(v, w, output) for v in value]
    if isinstance(value, dict):
        return {"dict": {str(k): encode(v, w, output) for k, v in value.items()}}
    raise Unencodable(type(value).__name__)


def _numel(value):
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (list, tuple)):
        return sum(_numel(v) for v in value)
    if isinstance(value, dict):
        return sum(_numel(v) for v in value.values())
    return 0


def _seed(*key):
    import random

    import numpy as np
    s = zlib.crc32("/".join(map(str, key)).encode())
    torch.manual_seed(s)
    random.seed(s)
    np.random.seed(s % 2 ** 32)


def tresolve(path):
    """torch's object for a call path, as tests/test_op_db_coverage.py resolves names in tritensor:
    ``Tensor.x`` is the Tensor attribute; ``a.b`` is torch.a.b, else a Tensor attribute."""
    if path.startswith("Tensor."):
        return getattr(torch.Tensor, path[len("Tensor."):], None)
    parts = path.split(".")
    if parts[0] == "torch":
        parts = parts[1:]
    obj = torch
    for p in parts:
        obj = getattr(obj, p, None)
        if obj is None:
            break
    if obj is None and len(parts) == 1:
        obj = getattr(torch.Tensor, path, None)
    return obj


def _sample_call(info, s):
    """(call path, positional args, kwargs) of op_db entry ``info`` on sample ``s``: the call the
    replay makes in tritensor. None: the entry is left out (the reason is in SKIP)."""
    key = (info.name, info.variant_test_name)
    args = [s.input, *s.args]
    if key in SKIP:
        return None
    if key in CALLS:
        return CALLS[key](s)
    if info.name in _torch_overrides():
        return info.name, args, dict(s.kwargs)
    if tresolve(info.name) is info.op:
        return info.name, args, dict(s.kwargs)
    if info.method_variant is not None and getattr(info.method_variant, "__name__", "") != "<lambda>":
        return "Tensor." + info.method_variant.__name__, args, dict(s.kwargs)
    if tresolve(info.name) is not None and not isinstance(getattr(torch.Tensor, info.name, None), property):
        # op_db's lambdas around wrapper_set_seed(torch.<name>, input, *args): the plain call
        return info.name, args, dict(s.kwargs)
    return None


def _calls():
    def positional(path, order):
        return lambda s: (path, [([s.input, *s.args])[i] for i in order], dict(s.kwargs))
    calls = {
        ("item", ""): lambda s: ("Tensor.item", [s.input], {}),
        ("normal", "in_place"): lambda s: ("Tensor.normal_", [s.input, *s.args], dict(s.kwargs)),
        ("normal", "number_mean"): lambda s: ("normal", [s.args[0], s.input, *s.args[1:]], dict(s.kwargs)),
        ("einsum", ""): lambda s: ("einsum", [s.args[0], list(s.input)], dict(s.kwargs)),
        ("nn.functional.embedding", ""): lambda s: ("nn.functional.embedding", [s.args[0], s.input], dict(s.kwargs)),
        ("special.polygamma", "special_polygamma_n_0"): positional("special.polygamma", (1, 0)),
        ("linalg.pinv", "singular"): lambda s: ("linalg.pinv", [s.input @ s.args[0].mT], dict(s.kwargs)),
    }
    for n in ("cauchy", "exponential", "geometric", "log_normal", "uniform"):
        calls[(n, "")] = (lambda n: lambda s: (f"Tensor.{n}_", [s.input, *s.args], dict(s.kwargs)))(n)
    for n in ("T", "H", "mT", "mH"):
        calls[(n, "")] = (lambda n: lambda s: (f"Tensor.{n}", [s.input], {}))(n)
    for k in range(5):
        calls[("polygamma", f"polygamma_n_{k}")] = positional("polygamma", (1, 0))
    return calls


CALLS = _calls()
SKIP = {
    ("svd_lowrank", ""): "a randomized algorithm on a @ b.mT: its outputs follow torch's random stream",
    ("pca_lowrank", ""): "a randomized algorithm on a @ b.mT: its outputs follow torch's random stream",
    ("linalg.lstsq", "grad_oriented"): "op_db slices the outputs in a lambda; the plain linalg.lstsq entry is recorded",
}
# outputs whose values are not torch's to fix: uninitialised memory (their shape/dtype are recorded)
UNINITIALISED = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted"}


def _torch_overrides():
    aten = torch.ops.aten
    # op_db names whose op is an aten overload, not a torch function of that name
    return {"slice": aten.slice.Tensor, "native_dropout_backward": aten.native_dropout_backward.default}


def _run(call, args, kwargs):
    fn = _torch_overrides().get(call) or tresolve(call)
    if isinstance(fn, property) or type(fn).__name__ == "getset_descriptor":
        return getattr(args[0], call.split(".")[-1])
    return fn(*args, **kwargs)


def _clone(value):
    if isinstance(value, torch.Tensor):
        return _clone_strided(value)
    if isinstance(value, list):
        return [_clone(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _clone_strided(t):
    """A copy of ``t`` in fresh memory: the same shape, strides, storage offset, and the whole
    storage copied (as_strided reads outside the view)."""
    t = t.detach()
    size = t.untyped_storage().nbytes() // t.element_size()
    base = torch.as_strided(t, (size,), (1,), 0).clone()
    return base.as_strided(t.shape, t.stride(), t.storage_offset())


def _same(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.detach(), b.detach())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or a != a)


def _record_call(w, op_name, variant, dtype, kind, call, args, kwargs, seed_key, random_op=False):
    """One case: the inputs (before the call: in-place ops change them), then the result or
    torch's exception. Random results (two seeds, two answers) keep only shape and dtype."""
    case = {"op": op_name, "variant": variant, "dtype": dtype, "kind": kind, "call": call,
            "args": encode(args, w), "kwargs": encode(kwargs, w)["dict"]}
    try:
        _seed(*seed_key)
        result = _run(call, _clone(args), _clone(kwargs))
    except Exception as e:     # torch's answer is its exception
        case["raises"] = type(e).__name__
        case["message"] = str(e).split("\n")[0][:300]
        return case
    if _numel(result) > MAX_FALLBACK_ELEMENTS:
        raise Unencodable("large output")
    case["result"] = encode(result, w, output=True)
    values = op_name not in UNINITIALISED and not random_op
    for attempt in range(RANDOMNESS_TRIES if values else 0):
        try:
            _seed(*seed_key, "again", attempt)
            values = _same(result, _run(call, _clone(args), _clone(kwargs)))
        except Exception:
            values = False
        if not values:
            break
    case["values"] = values
    return case


def _is_random(info):
    """op_db runs its random ops through wrapper_set_seed: their values are torch's random stream."""
    code = getattr(info.op, "__code__", None)
    return code is not None and "wrapper_set_seed" in code.co_names


def record_op_db(w, names):
    from torch.testing._internal.common_methods_invocations import op_db
    cases, skipped = [], {}
    for info in op_db:
        if info.name not in names:
            continue
        label = f"{info.name}/{info.variant_test_name}"
        if (info.name, info.variant_test_name) in SKIP:
            skipped[label] = SKIP[(info.name, info.variant_test_name)]
            continue
        supported = {_dtype_name(d) for d in info.supported_dtypes("cpu")}
        random_op = _is_random(info)
        recorded = 0
        for dtype in SAMPLE_DTYPES:
            if dtype not in supported:
                continue
            _seed(label, dtype, "samples")
            fitting, smallest = [], None
            try:
                for i, s in enumerate(info.sample_inputs("cpu", getattr(torch, dtype), requires_grad=False)):
                    if i >= MAX_SAMPLES_SCANNED:
                        break
                    n = _numel([s.input, s.args, s.kwargs])
                    if n <= MAX_ELEMENTS:
                        fitting.append(s)
                    elif n <= MAX_FALLBACK_ELEMENTS and (smallest is None or n < smallest[0]):
                        smallest = (n, s)
            except Exception as e:
                skipped[f"{label}/{dtype}"] = f"sample_inputs raised {type(e).__name__}"
                continue
            if not fitting and smallest is not None:     # (unary ufuncs have one sample, 20 x 20)
                fitting = [smallest[1]]
            step = max(1, -(-len(fitting) // SAMPLES_PER_DTYPE))
            for j, s in enumerate(fitting[::step][:SAMPLES_PER_DTYPE] or []):
                call = _sample_call(info, s)
                if call is None:
                    skipped[label] = "no call form the replay can mirror"
                    break
                try:
                    cases.append(_record_call(w, info.name, info.variant_test_name, dtype, "sample", *call,
                                              (label, dtype, j), random_op))
                    recorded += 1
                except Unencodable:
                    pass
            # the in-place variant, on the first sample that keeps the input's shape
            if (dtype in ("float32", "int64") and info.inplace_variant is not None
                    and getattr(info.inplace_variant, "__name__", "<lambda>") != "<lambda>"):
                for j, s in enumerate(fitting):
                    if getattr(s, "broadcasts_input", False) or not isinstance(s.input, torch.Tensor):
                        continue
                    try:
                        cases.append(_record_call(w, info.name, info.variant_test_name, dtype, "inplace",
                                                  "Tensor." + info.inplace_variant.__name__,
                                                  [s.input, *s.args], dict(s.kwargs), (label, dtype, "inplace"),
                                                  random_op))
                        recorded += 1
                        break
                    except Unencodable:
                        continue
        # torch's own error cases: the same exception type is expected
        try:
            errors = list(info.error_inputs("cpu"))[:ERROR_INPUTS_PER_OP * 3]
        except Exception:
            errors = []
        kept = 0
        for j, e in enumerate(errors):
            if kept == ERROR_INPUTS_PER_OP:
                break
            call = _sample_call(info, e.sample_input)
            if call is None:
                break
            try:
                case = _record_call(w, info.name, info.variant_test_name, "", "error", *call, (label, "error", j))
            except Unencodable:
                continue
            if "raises" in case:       # (some error inputs only raise on other devices)
                cases.append(case)
                kept += 1
        if not recorded and label not in skipped:
            skipped[label] = "no sample fits (dtypes, sizes or encodable values)"
    return cases, skipped


# --------------------------------------------------------------------------- edge values
def edge_values(dtype):
    """The edge points of a dtype: zeros of both signs, +-1, halves (rounding), +-inf, NaN, the
    smallest subnormal and normal, the largest finite value; for integers the limits."""
    t = getattr(torch, dtype)
    if dtype == "bool":
        return torch.tensor([False, True])
    if t.is_floating_point:
        fi = torch.finfo(t)
        sub = fi.smallest_normal * fi.eps         # the smallest subnormal
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.5, 3.0, float("inf"), -float("inf"), float("nan"),
                sub, -sub, fi.tiny, -fi.tiny, fi.max, -fi.max]
        return torch.tensor(vals, dtype=t)
    ii = torch.iinfo(t)
    vals = [0, 1, 2, 3, 7, ii.max - 1, ii.max] if ii.min == 0 else \
        [0, 1, -1, 2, -3, 7, ii.min, ii.min + 1, ii.max - 1, ii.max]
    return torch.tensor(vals, dtype=t)


def _edge_torch():
    """Table entries without a torch function of their own name: the torch call that is the same."""
    aten = torch.ops.aten

    return {
        "div_trunc": lambda x, y: torch.div(x, y, rounding_mode="trunc"),
        "div_floor": lambda x, y: torch.div(x, y, rounding_mode="floor"),
        "relu_backward": lambda g, x: aten.threshold_backward(g, x, 0),
        "tanh_backward": aten.tanh_backward,
        "sigmoid_backward": aten.sigmoid_backward,
        "silu_backward": aten.silu_backward,
        "gelu_backward": lambda g, x: aten.gelu_backward(g, x, approximate="none"),
        # no aten op: torch's derivative of erf (derivatives.yaml), in its order
        "erf_backward": lambda g, x: 2.0 / math.sqrt(math.pi) * torch.exp(-(x.pow(2))) * g,
    }


def _edge_function(name, op_db_names):
    table = _edge_torch()
    if name in table:
        return name, table[name]
    for candidate in (name, *op_db_names, "special." + name.removeprefix("special_"),
                      "nn.functional." + name):
        fn = tresolve(candidate)
        if callable(fn):
            return candidate, fn
    return None, None


def _edge_inputs(dtype, arity):
    v = edge_values(dtype)
    if arity == 1:
        return [v]
    x, y = v.repeat_interleave(len(v)), v.repeat(len(v))      # every pair (x_i, y_j) ...
    if not v.dtype.is_floating_point and v.dtype != torch.bool and v.dtype.is_signed:
        keep = (x != torch.iinfo(v.dtype).min) | (y != -1)     # ... but min / -1, which traps (SIGFPE)
        x, y = x[keep], y[keep]
    return [x, y]


def _crashes(fn, inputs):
    """Does ``fn(*inputs)`` kill the process (SIGFPE in an integer kernel)? Tried in a child."""
    import os
    pid = os.fork()
    if pid == 0:
        try:
            fn(*inputs)
        except BaseException:
            pass
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return status != 0


def _edge_case(w, fn, inputs, dtype, differentiable):
    case = {"inputs": [w.add(_numpy_bits(x)) for x in inputs]}
    floating = getattr(torch, dtype).is_floating_point
    xs = [x.clone().requires_grad_(floating and differentiable) for x in inputs]
    try:
        with torch.enable_grad():
            out = fn(*xs)
    except Exception as e:
        case["raises"] = type(e).__name__
        case["message"] = str(e).split("\n")[0][:300]
        return case
    case["result"] = encode(out, w, output=True)
    if floating and differentiable and isinstance(out, torch.Tensor) and out.requires_grad:
        try:
            grads = torch.autograd.grad(out, xs, torch.ones_like(out), allow_unused=True)
            case["grads"] = [None if g is None else encode(g, w, output=True) for g in grads]
        except Exception as e:
            case["grads_raise"] = type(e).__name__
    return case


def record_edges(w, manifest):
    """Edge grids for every elementwise record, and for every pending unary/binary ufunc of op_db
    (so a pointwise op built after this recording is checked when it lands)."""
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.opinfo.core import BinaryUfuncInfo, UnaryUfuncInfo
    wanted = {name: (spec["arity"], spec["op_db"], spec["differentiable"])
              for name, spec in manifest["elementwise"].items()}
    pending = set(manifest["pending"])
    for info in op_db:
        if info.name in pending and info.variant_test_name == "" and info.name not in wanted:
            if isinstance(info, UnaryUfuncInfo):
                wanted[info.name] = (1, [], True)
            elif isinstance(info, BinaryUfuncInfo):
                wanted[info.name] = (2, [], True)
    edges, missing = {}, []
    for name in sorted(wanted):
        arity, op_db_names, differentiable = wanted[name]
        torch_name, fn = _edge_function(name, op_db_names)
        if fn is None:
            missing.append(name)
            continue
        entry = {"torch": torch_name, "arity": arity, "dtypes": {}}
        for dtype in EDGE_DTYPES:
            inputs = _edge_inputs(dtype, arity)
            if arity == 2 and dtype in ("int8", "int16", "int32", "int64") and _crashes(fn, inputs):
                # torch's integer kernels trap on some pairs at the minimum (lcm(min, ...)): without it
                keep = (inputs[0] != inputs[0].min()) & (inputs[1] != inputs[1].min())
                inputs = [x[keep] for x in inputs]
            case = _edge_case(w, fn, inputs, dtype, differentiable)
            if "raises" in case and arity == 2 and dtype not in ("float16", "bfloat16", "float32", "float64"):
                # integer division by zero raises on the whole grid: the grid without 0 divisors too
                keep = inputs[1] != 0
                case["nonzero_divisor"] = _edge_case(w, fn, [x[keep] for x in inputs], dtype, differentiable)
            entry["dtypes"][dtype] = case
        edges[name] = entry
    return edges, missing


# Edge grids of expressions the elementwise table does not hold as one entry: bounds (clamp,
# hardtanh: inclusive or strict at the bound), ties (max/min of equal values: how torch splits the
# gradient), fixed exponents. Each is Python in ``torch`` and ``x``; the replay evaluates the same
# text with ``torch`` bound to tritensor.
EDGE_EXPRESSIONS = (
    "torch.clamp(x, -1, 1)", "torch.clamp(x, min=0.5)", "torch.clamp(x, max=-0.5)",
    "torch.nn.functional.hardtanh(x)", "torch.nn.functional.relu6(x)",
    "torch.nn.functional.leaky_relu(x, 0.1)", "torch.nn.functional.gelu(x, approximate='tanh')",
    "torch.pow(x, 2)", "torch.pow(x, 0.5)", "torch.pow(x, 0)", "torch.pow(x, -1)", "torch.pow(x, 3)",
    "torch.pow(2, x)", "torch.stack([x, x]).amax(0)", "torch.stack([x, x]).amin(0)",
    "torch.stack([x, x]).max(0).values", "torch.stack([x, x]).min(0).values", "torch.stack([x, x]).max()",
    "torch.maximum(x, torch.zeros_like(x))", "torch.minimum(torch.zeros_like(x), x)",
    "torch.where(x > 0, x, torch.zeros_like(x))", "x.abs().sum()", "x.norm()", "torch.softmax(torch.stack([x, x]), 0)",
    "torch.nn.functional.relu(x)", "torch.sigmoid(x)", "torch.nn.functional.silu(x)",
)


def record_expressions(w):
    out = {}
    for text in EDGE_EXPRESSIONS:
        fn = eval("lambda x: " + text, {"torch": torch})
        out[text] = {dtype: _edge_case(w, fn, [edge_values(dtype)], dtype, True) for dtype in EDGE_DTYPES}
    return out


def record():
    global torch
    import torch
    torch.set_num_threads(1)        # the same reduction order on every run
    manifest = json.loads(MANIFEST.read_text())
    names = set(manifest["implemented"]) | set(manifest["pending"])
    w = Writer()
    cases, skipped = record_op_db(w, names)
    edges, no_edge_function = record_edges(w, manifest)
    expressions = record_expressions(w)
    header = {"torch": torch.__version__, "implemented": manifest["implemented"],
              "elementwise_implemented": sorted(manifest["elementwise"]),
              "arrays": w.arrays, "cases": cases, "skipped": skipped,
              "edges": edges, "no_edge_function": no_edge_function, "edge_expressions": expressions}
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    payload = MAGIC + len(text).to_bytes(8, "little") + text + bytes(w.blob)
    FIXTURE.write_bytes(gzip.compress(payload, compresslevel=9, mtime=0))
    print(f"torch {torch.__version__}: {len(cases)} cases of {len({c['op'] for c in cases})} ops, "
          f"{len(edges)} edge grids ({len(no_edge_function)} without a torch function: {no_edge_function}), "
          f"{len(skipped)} left out; {FIXTURE.stat().st_size / 1e6:.2f} MB -> {FIXTURE}")


if __name__ == "__main__":
    if sys.argv[1:] == ["manifest"]:
        make_manifest()
    elif sys.argv[1:] == ["record"]:
        record()
    else:
        sys.exit(__doc__)
