"""save/load of scripted and traced code: a zip holding the graph as JSON and each tensor's raw
bytes. Nothing is pickled and no code is stored: load rebuilds the Graph from data and checks
every field (node kinds against the op table and a fixed list of callables, every type, every
tensor's dtype, shape and byte count, every member's name) before anything runs.

Archive layout (members under ``tritensor_jit/``):
  version            "1"
  model.json         {"kind": "function"|"module", "name", "graph", "attributes": {name: tensor
                      index}, "parameters": [names], "tensors": [{"dtype", "shape"}]}
  tensors/<i>        the i-th tensor's bytes, C-contiguous, little-endian
"""
from __future__ import annotations

import io
import json
import math
import re
import zipfile

import numpy as np

from .. import dtypes as _dt
from ..memory_formats import contiguous_format, channels_last, channels_last_3d, preserve_format
from ..ops.table import TABLE
from ..tensor import Tensor
from ._interp import BUILTINS, EXCEPTIONS, MATH, OPERATORS, TENSOR_ATTRS
from ._ir import Block, Graph, Node, Type

PREFIX = "tritensor_jit/"
VERSION = "1"
_MEMBER = re.compile(r"^tritensor_jit/(version|model\.json|tensors/[0-9]{1,9})$")
_MAX_JSON = 64 << 20
_NAME = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")
_MEMORY_FORMATS = {str(f): f for f in (contiguous_format, channels_last, channels_last_3d, preserve_format)}
PRIM_KINDS = frozenset({"prim::Constant", "prim::GetAttr", "prim::TupleConstruct", "prim::TupleUnpack",
                        "prim::TupleIndex", "prim::If", "prim::Loop", "prim::CallFunction",
                        "prim::FusionGroup", "prim::RaiseException", "prim::With"})
CALLS = ("op", "inplace", "fn", "method", "operator", "builtin", "math", "attr")
TYPE_KINDS = frozenset({"Tensor", "int", "float", "bool", "str", "NoneType", "Tuple", "ScalarType", "Device",
                        "slice", "ellipsis", "list", "Any"})


class _Error(RuntimeError):
    pass


def _refuse(msg):
    raise RuntimeError(f"tt.jit.load: refusing the file: {msg}")

# ---------------------------------------------------------------------------- writing


class _Writer:
    def __init__(self):
        self.tensors = []

    def tensor(self, t):
        for i, u in enumerate(self.tensors):
            if u is t:
                return i
        self.tensors.append(t)
        return len(self.tensors) - 1

    def value(self, v):
        if isinstance(v, Tensor):
            return {"tensor": self.tensor(v)}
        if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else {"float": repr(v)}
        if isinstance(v, _dt.dtype):
            return {"dtype": v.name}
        if v is Ellipsis:
            return {"ellipsis": None}
        if isinstance(v, slice):
            return {"slice": [self.value(v.start), self.value(v.stop), self.value(v.step)]}
        if isinstance(v, tuple):
            return {"tuple": [self.value(x) for x in v]}
        if isinstance(v, list):
            return {"list": [self.value(x) for x in v]}
        if isinstance(v, dict):
            return {"dict": {str(k): self.value(x) for k, x in v.items()}}
        if isinstance(v, Graph):
            return {"graph": self.graph(v)}
        if str(v) in _MEMORY_FORMATS and _MEMORY_FORMATS[str(v)] is v:
            return {"memory_format": str(v)}
        raise RuntimeError(f"tt.jit.save: cannot save a constant of type {type(v).__name__}")

    def type(self, t):
        d = {"kind": t.kind}
        if t.kind == "Tensor" and t.dtype is not None:
            d.update(dtype=t.dtype.name, shape=list(t.shape), strides=list(t.strides),
                     requires_grad=bool(t.requires_grad), device=t.device)
        if t.kind == "Tuple":
            d["elements"] = [self.type(e) for e in t.elements]
        return d

    def block(self, b, names):
        return {"inputs": [[names(v), self.type(v.type)] for v in b.inputs],
                "nodes": [self.node(n, names) for n in b.nodes],
                "returns": [names(v) for v in b.returns]}

    def node(self, n, names):
        attrs = {k: self.value(v) for k, v in n.attrs.items() if not k.startswith("_")}
        return {"kind": n.kind, "inputs": [names(v) for v in n.inputs],
                "outputs": [[names(v), self.type(v.type)] for v in n.outputs], "attrs": attrs,
                "blocks": [self.block(b, names) for b in n.blocks], "source": n.source}

    def graph(self, g):
        ids = {}

        def names(v):           # value ids local to this graph (names may repeat across blocks)
            return ids.setdefault(id(v), len(ids))
        d = self.block(g, names)
        d["value_names"] = {}
        for b in [g] + [b for n in g.all_nodes() for b in n.blocks]:
            for v in b.inputs:
                d["value_names"][str(names(v))] = v.name
        for n in g.all_nodes():
            for v in n.outputs:
                d["value_names"][str(names(v))] = v.name
        return d


def save(obj, f):
    """Write a ScriptFunction / ScriptModule to ``f`` (a path or a binary file)."""
    from . import ScriptModule
    w = _Writer()
    for n in obj.graph.all_nodes():
        if n.kind == "prim::PythonOp":      # torch's error: an ignored Python function has no saved form
            raise RuntimeError(f"Could not export Python function call '{n.attrs['name']}'. Remove calls to Python "
                               "functions before export. Did you forget to add @script or @script_method annotation? "
                               "If this is a nn.ModuleList, add it to __constants__")
    model = {"kind": "module" if isinstance(obj, ScriptModule) else "function", "name": obj.name,
             "graph": w.graph(obj.graph)}
    if isinstance(obj, ScriptModule):
        params = dict(obj.named_parameters())
        model["attributes"] = {n: w.tensor(t) for n, t in obj._graph_attributes().items()}
        model["parameters"] = [n for n in model["attributes"] if n in params]
    model["tensors"] = [{"dtype": t.dtype.name, "shape": list(t.shape)} for t in w.tensors]
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(PREFIX + "version", VERSION)
        zf.writestr(PREFIX + "model.json", json.dumps(model))
        for i, t in enumerate(w.tensors):
            arr = np.ascontiguousarray(t.detach().cpu().numpy()) if t.dtype is not _dt.bfloat16 else \
                np.ascontiguousarray(t.detach().cpu().view(_dt.int16).numpy())
            zf.writestr(f"{PREFIX}tensors/{i}", arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes())

# ---------------------------------------------------------------------------- reading


def _check(cond, msg):
    if not cond:
        _refuse(msg)


class _Reader:
    def __init__(self, tensors):
        self.tensors = tensors

    def value(self, v, depth=0):
        _check(depth < 64, "constants nested too deeply")
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            return v
        _check(isinstance(v, dict) and len(v) == 1, f"a malformed constant {str(v)[:80]!r}")
        (tag, x), = v.items()
        if tag == "tensor":
            _check(type(x) is int and 0 <= x < len(self.tensors), f"a tensor index out of range: {x!r}")
            return self.tensors[x]
        if tag == "float":
            _check(x in ("inf", "-inf", "nan"), f"a malformed float {x!r}")
            return float(x)
        if tag == "dtype":
            _check(isinstance(x, str) and x in _dt._NAMES, f"an unknown dtype {x!r}")
            return _dt._NAMES[x]
        if tag in ("tuple", "list"):
            _check(isinstance(x, list), f"a malformed {tag}")
            items = [self.value(e, depth + 1) for e in x]
            return tuple(items) if tag == "tuple" else items
        if tag == "dict":
            _check(isinstance(x, dict), "a malformed dict")
            return {k: self.value(e, depth + 1) for k, e in x.items()}
        if tag == "ellipsis":
            return Ellipsis
        if tag == "slice":
            _check(isinstance(x, list) and len(x) == 3 and all(e is None or type(e) is int for e in x),
                   "a malformed slice")
            return slice(*x)
        if tag == "memory_format":
            _check(x in _MEMORY_FORMATS, f"an unknown memory format {x!r}")
            return _MEMORY_FORMATS[x]
        if tag == "graph":
            return self.graph(x, depth + 1)
        _refuse(f"an unknown constant tag {tag!r}")

    def type(self, d, depth=0):
        _check(depth < 64 and isinstance(d, dict) and d.get("kind") in TYPE_KINDS,
               f"an unknown type {str(d)[:80]!r}")
        kind = d["kind"]
        if kind == "Tuple":
            _check(isinstance(d.get("elements"), list), "a malformed tuple type")
            return Type("Tuple", elements=[self.type(e, depth + 1) for e in d["elements"]])
        if kind == "Tensor" and "dtype" in d:
            _check(d["dtype"] in _dt._NAMES, f"an unknown dtype {d['dtype']!r}")
            for k in ("shape", "strides"):
                _check(isinstance(d.get(k), list) and all(type(s) is int for s in d[k]), f"a malformed {k}")
            _check(isinstance(d.get("requires_grad"), bool) and isinstance(d.get("device"), str),
                   "a malformed tensor type")
            return Type("Tensor", _dt._NAMES[d["dtype"]], tuple(d["shape"]), tuple(d["strides"]),
                        d["requires_grad"], d["device"])
        return Type(kind)

    def graph(self, d, depth=0):
        _check(depth < 16 and isinstance(d, dict), "a malformed graph")
        names = d.get("value_names")
        _check(isinstance(names, dict) and all(isinstance(n, str) and _NAME.match(n) for n in names.values()),
               "malformed value names")
        g = Graph()
        env = {}
        self.block(d, g, g, env, names, depth)
        return g

    def block(self, d, g, block, env, names, depth):
        _check(isinstance(d, dict) and isinstance(d.get("inputs"), list) and isinstance(d.get("nodes"), list)
               and isinstance(d.get("returns"), list), "a malformed block")
        for entry in d["inputs"]:
            _check(isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is int, "a malformed input")
            _check(entry[0] not in env, "a value defined twice")
            env[entry[0]] = block.add_input(self.type(entry[1]), names.get(str(entry[0])))
        for nd in d["nodes"]:
            self.node(nd, g, block, env, names, depth)
        block.returns = [self.ref(env, r) for r in d["returns"]]

    def ref(self, env, r):
        _check(type(r) is int and r in env, f"a use of an undefined value {r!r}")
        return env[r]

    def node(self, d, g, block, env, names, depth):
        _check(isinstance(d, dict) and isinstance(d.get("kind"), str), "a malformed node")
        kind = d["kind"]
        attrs = d.get("attrs")
        _check(isinstance(attrs, dict), f"{kind}: malformed attributes")
        attrs = {k: self.value(v) for k, v in attrs.items()}
        _check_kind(kind, attrs)
        src = d.get("source")
        _check(src is None or isinstance(src, str), "a malformed source")
        node = Node(kind, [self.ref(env, r) for r in d.get("inputs", [])], attrs, src)
        for entry in d.get("outputs", []):
            _check(isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is int, "a malformed output")
            _check(entry[0] not in env, "a value defined twice")
            env[entry[0]] = node.add_output(g, self.type(entry[1]), names.get(str(entry[0])))
        blocks = d.get("blocks", [])
        _check(isinstance(blocks, list), "malformed blocks")
        expected = {"prim::If": 2, "prim::Loop": 1, "prim::With": 1}.get(kind, 0)
        _check(len(blocks) == expected, f"{kind} with {len(blocks)} blocks")
        for bd in blocks:
            b = Block(g)
            self.block(bd, g, b, env, names, depth)
            node.blocks.append(b)
        block.append(node)
        for key in ("graph", "subgraph"):
            if key in attrs:
                _check(isinstance(attrs[key], Graph), f"{kind}: {key} is not a graph")


def _check_kind(kind, attrs):
    ns, _, name = kind.partition("::")
    if ns == "prim":
        _check(kind in PRIM_KINDS, f"an unknown node kind {kind!r}")
        if kind == "prim::With":
            _check(attrs.get("context") in ("no_grad", "enable_grad"), "an unknown prim::With context")
        if kind == "prim::RaiseException":
            _check(attrs.get("exception") in EXCEPTIONS and isinstance(attrs.get("message", ""), str),
                   "a malformed prim::RaiseException")
        return
    _check(ns == "aten" and name, f"an unknown node kind {kind!r}")
    call = attrs.get("call", "op")
    _check(call in CALLS, f"{kind}: an unknown call kind {call!r}")
    kwargs = attrs.get("kwargs", {})
    _check(isinstance(kwargs, dict) and all(isinstance(k, str) and k.isidentifier() for k in kwargs),
           f"{kind}: malformed keyword arguments")
    names = attrs.get("names", ())
    _check(isinstance(names, (tuple, list)) and all(isinstance(k, str) and k.isidentifier() for k in names),
           f"{kind}: malformed keyword names")
    if call == "op":
        _check(name in TABLE, f"an unknown op {kind!r}")
    elif call == "inplace":
        _check(name.endswith("_") and name[:-1] in TABLE, f"an unknown in-place op {kind!r}")
    elif call == "fn":
        _check(_public_function(name), f"an unknown function tt.{name}")
    elif call == "method":
        _check(name.isidentifier() and not name.startswith("_") and callable(getattr(Tensor, name, None)),
               f"an unknown Tensor method {name!r}")
    elif call == "operator":
        _check(name in OPERATORS, f"an unknown operator {name!r}")
    elif call == "attr":
        _check(name in TENSOR_ATTRS, f"an unknown tensor attribute {name!r}")
    elif call == "builtin":
        _check(name in BUILTINS, f"an unknown builtin {name!r}")
    else:
        _check(name in MATH, f"an unknown math function {name!r}")


FUNCTION_NAMESPACES = ("nn.functional.", "linalg.", "special.", "fft.")


def _public_function(name):
    """``tt.<name>`` is a declared op (ops/surface.py's SURFACE: no file or state functions such
    as tt.save), or a public function of nn.functional, linalg, special or fft (dotted:
    "nn.functional.relu"): the only functions a graph, and so a loaded file, may call."""
    import types as _types
    import tritensor
    from ..ops.surface import SURFACE
    if "." in name:
        ns = next((n for n in FUNCTION_NAMESPACES if name.startswith(n)), None)
        if ns is None or "." in name[len(ns):]:
            return False
    elif name not in SURFACE:
        return False
    target = tritensor
    parts = name.split(".")
    for i, part in enumerate(parts):
        if not part.isidentifier() or part.startswith("_"):
            return False
        target = getattr(target, part, None)
        if target is None:
            return False
        if i < len(parts) - 1 and not isinstance(target, _types.ModuleType):
            return False
    mod = getattr(target, "__module__", "") or ""
    return callable(target) and not isinstance(target, type) and mod.startswith("tritensor")


def _read_tensors(zf, specs):
    _check(isinstance(specs, list), "a malformed tensor list")
    out = []
    for i, spec in enumerate(specs):
        _check(isinstance(spec, dict) and spec.get("dtype") in _dt._NAMES and isinstance(spec.get("shape"), list)
               and all(type(s) is int and 0 <= s < 2 ** 40 for s in spec["shape"]),
               f"a malformed tensor record {i}")
        dtype = _dt._NAMES[spec["dtype"]]
        n = 1
        for s in spec["shape"]:
            n *= s
        nbytes = n * dtype.itemsize
        member = f"{PREFIX}tensors/{i}"
        try:
            info = zf.getinfo(member)
        except KeyError:
            _refuse(f"tensor {i}'s data is missing")
        _check(info.file_size == nbytes, f"tensor {i} has {info.file_size} bytes, its shape needs {nbytes}")
        raw = zf.read(member)
        _check(len(raw) == nbytes, f"tensor {i}'s data is truncated")
        from ..tensor import Tensor as _T  # noqa: F401
        import tritensor as tt
        if dtype is _dt.bfloat16:
            arr = np.frombuffer(raw, dtype="<i2").astype(np.int16).reshape(spec["shape"])
            t = tt.from_numpy(arr.copy()).view(_dt.bfloat16)
        else:
            npd = np.dtype(dtype.numpy_dtype).newbyteorder("<")
            arr = np.frombuffer(raw, dtype=npd).astype(dtype.numpy_dtype).reshape(spec["shape"])
            t = tt.from_numpy(arr.copy())
        out.append(t)
    return out


def load(f, map_location=None):
    """Read what ``save`` wrote; refuses anything else with a clear error."""
    from . import ScriptFunction, ScriptModule
    if hasattr(f, "read"):
        data = f.read()
    else:
        with open(f, "rb") as fh:          # (closed at once: no ResourceWarning)
            data = fh.read()
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        _refuse("it is not a zip archive written by tt.jit.save")
    with zf:
        for info in zf.infolist():
            if info.filename.endswith(".pkl") or "pickle" in info.filename:
                _refuse(f"it holds a pickle ({info.filename!r}); tt.jit.load never unpickles")
            _check(_MEMBER.match(info.filename) is not None, f"an unexpected member {info.filename!r}")
        try:
            _check(zf.read(PREFIX + "version") == VERSION.encode(), "an unsupported version")
            info = zf.getinfo(PREFIX + "model.json")
        except KeyError:
            _refuse("it is not an archive written by tt.jit.save (no tritensor_jit/version or model.json)")
        _check(info.file_size <= _MAX_JSON, "model.json is too large")
        try:
            model = json.loads(zf.read(info))
        except ValueError as e:
            _refuse(f"model.json is not valid JSON ({e})")
        _check(isinstance(model, dict) and model.get("kind") in ("function", "module")
               and isinstance(model.get("name"), str), "a malformed model record")
        tensors = _read_tensors(zf, model.get("tensors", []))
    if map_location is not None:
        tensors = [t.to(map_location) for t in tensors]
    reader = _Reader(tensors)
    graph = reader.graph(model.get("graph"))
    if model["kind"] == "function":
        return ScriptFunction(graph, model["name"])
    attrs = model.get("attributes", {})
    _check(isinstance(attrs, dict) and all(isinstance(k, str) and _NAME.match(k) for k in attrs),
           "malformed attribute names")
    params = set(model.get("parameters", []))
    named = {k: reader.value({"tensor": v}) for k, v in attrs.items()}
    for n in graph.all_nodes():
        if n.kind == "prim::GetAttr":
            _check(n.attrs.get("name") in named, f"prim::GetAttr of an unknown attribute {n.attrs.get('name')!r}")
    return ScriptModule._from_attributes(graph, model["name"], named, params)
