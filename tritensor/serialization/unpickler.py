"""The weights-only unpickler behind ``tt.load`` (torch/_weights_only_unpickler.py, for tritensor).

The stock ``pickle.Unpickler`` with a ``find_class`` allowlist is not enough: its BUILD opcode
sets attributes on whatever object it reaches (a dtype global, a freshly rebuilt tensor), which
lets a file change ``tt.int64.itemsize`` for the whole process or move a tensor past its storage.
This is an opcode interpreter of its own, as torch's, and the only code that reads a file's pickle
when ``weights_only=True``:

* it knows only the opcodes torch's weights-only unpickler knows (protocol 2, what ``torch.save``
  and ``tt.save`` write); anything else is refused;
* GLOBAL resolves only the names in ``SAFE_GLOBALS`` (an explicit set the tests assert), never by
  importing; modules ``sys``, ``os``, ``posix`` and ``nt`` are blocked outright;
* REDUCE calls only the checking constructors of ``_CONSTRUCTORS``; NEWOBJ makes only an empty
  container or goes through the same constructors;
* BUILD sets state only on a Tensor or a Parameter (torch's legacy tuple states, through the same
  checked geometry) and on an OrderedDict or a Counter (new attributes only, never a name its
  class defines); APPEND(S) only on lists, SETITEM(S) only on dicts;
* every tensor it makes is registered, and once the whole object is built each one's geometry is
  checked against its storage again (``check_tensors``);
* what it returns holds data only (``check_result``): tensors, numbers, strings, bytes,
  containers, dtypes, devices, sizes. An internal object (a bare storage) is refused;
* the classes and functions a user allowlists (``add_safe_globals``, ``safe_globals``: torch's
  API) are a separate set, never mixed into ``SAFE_GLOBALS``: GLOBAL may name them, REDUCE call
  them, NEWOBJ make and BUILD fill objects of them, and a result may hold them.

A refusal is a ``pickle.UnpicklingError`` naming what the file tried; a tensor whose geometry does
not fit its storage is torch's ``RuntimeError``.
"""
from __future__ import annotations

import _compat_pickle
import codecs
import collections
import pickle
import struct
import warnings

from .. import dtypes as _dt
from ..runtime.device import device as _device
from ..runtime.storage import Storage
from ..tensor import Size, Tensor

INT64_MAX = (1 << 63) - 1
# each dtype's item size, read when this module loads: what a file does cannot change these
_ITEMSIZE = {d: d.itemsize for d in _dt.ALL}

# torch's typed storage class for each dtype (torch/storage.py _pickle_storage_type)
STORAGE_NAMES = {
    _dt.float32: "FloatStorage", _dt.float64: "DoubleStorage", _dt.float16: "HalfStorage",
    _dt.bfloat16: "BFloat16Storage", _dt.int64: "LongStorage", _dt.int32: "IntStorage",
    _dt.int16: "ShortStorage", _dt.int8: "CharStorage", _dt.uint8: "ByteStorage", _dt.bool_: "BoolStorage",
}


class StorageType:
    """What ``torch.FloatStorage`` ... (or ``torch.storage.UntypedStorage``) stands for in a
    checkpoint's persistent ids: the dtype the storage's bytes are read as."""
    __slots__ = ("dtype", "name")

    def __init__(self, dtype, name):
        self.dtype, self.name = dtype, name

    def __repr__(self):
        return f"torch.{self.name}"


class LoadedStorage:
    """A storage read from the archive with the dtype its persistent id named (torch's
    TypedStorage). Only a rebuild function may take one; it is never returned."""
    __slots__ = ("storage", "dtype")

    def __init__(self, storage, dtype):
        self.storage, self.dtype = storage, dtype

    def __repr__(self):
        return f"<storage of {self.storage.nbytes} bytes read as {self.dtype}>"


def _refuse(message):
    return pickle.UnpicklingError(message)


# ============================================================================ tensor geometry
def _check_int(name, v):
    if type(v) is not int:
        raise _refuse(f"{name} must be an int, got {type(v).__name__}")
    if not -INT64_MAX - 1 <= v <= INT64_MAX:
        raise RuntimeError(f"{name} {v}: Overflow when unpacking long long")
    return v


def _check_int_tuple(name, v):
    if type(v) not in (tuple, list, Size):
        raise _refuse(f"{name} must be a tuple of ints, got {type(v).__name__}")
    return tuple(_check_int(name, x) for x in v)


def check_geometry(nbytes, itemsize, offset, size, stride):
    """torch's checks for ``set_(storage, offset, size, stride)`` on a storage that cannot grow
    (at::native::checkSetStorage, computeStorageNbytes): torch's messages. ``size``/``stride`` are
    tuples of ints within int64."""
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    numel = 1
    for s in size:
        numel *= s
    if numel > INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")
    if numel:
        last = offset + sum((s - 1) * st for s, st in zip(size, stride))    # the last element's index
        needed = (last + 1) * itemsize
        if needed > INT64_MAX:
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
        if needed > nbytes:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize "
                f"{itemsize} requiring a storage size of {needed} are out of bounds for storage of size {nbytes}")
    # (with no element nothing is read: torch allows any offset within int64.) tritensor's own limit,
    # NumPy's (the cpu device runs on it): every byte stride, and the bytes an array of these sizes
    # would span with its zero sizes taken as one, fit in int64
    span = itemsize
    for s in size:
        span *= max(s, 1)
    if span > INT64_MAX or any(st * itemsize > INT64_MAX for st in stride):
        raise RuntimeError(f"tritensor cannot represent a tensor of sizes {list(size)} and strides {list(stride)} "
                           f"with itemsize {itemsize}: its byte sizes overflow int64")


def _tensor_from_storage(storage, storage_offset, size, stride, dtype=None):
    if type(storage) is not LoadedStorage:
        raise _refuse("a tensor must be rebuilt from a storage in the file, got "
                      f"{type(storage).__name__}")
    offset = _check_int("storage_offset", storage_offset)
    size = _check_int_tuple("size", size)
    stride = _check_int_tuple("stride", stride)
    if dtype is None:
        dtype = storage.dtype
    elif type(dtype) is not _dt.dtype or _ITEMSIZE.get(dtype) is None:
        raise _refuse(f"a tensor's dtype must be a torch dtype, got {type(dtype).__name__}")
    check_geometry(storage.storage.nbytes, _ITEMSIZE[dtype], offset, size, stride)
    return Tensor._make(storage.storage, size, stride, offset, dtype)


def _check_bool(name, v):
    if type(v) is not bool:
        raise _refuse(f"{name} must be a bool, got {type(v).__name__}")
    return v


def _set_requires_grad(t, requires_grad):
    if _check_bool("requires_grad", requires_grad):
        t.requires_grad_(True)
    return t


# ============================================================================ allowlisted callables
def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """torch._utils._rebuild_tensor_v2 (backward hooks are not restored, as torch warns)."""
    return _set_requires_grad(_tensor_from_storage(storage, storage_offset, size, stride), requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """torch._utils._rebuild_tensor_v3: the storage is untyped (bytes) and ``dtype`` reads it;
    torch writes it for the dtypes its typed storages lack (uint16, uint32, uint64)."""
    return _set_requires_grad(_tensor_from_storage(storage, storage_offset, size, stride, dtype), requires_grad)


def _rebuild_tensor(storage, storage_offset, size, stride):
    """torch._utils._rebuild_tensor (older checkpoints)."""
    return _tensor_from_storage(storage, storage_offset, size, stride)


def _make_parameter(data, requires_grad):
    if not isinstance(data, Tensor):
        raise _refuse(f"a Parameter must wrap a tensor, got {type(data).__name__}")
    _check_bool("requires_grad", requires_grad)
    return _parameter_class()(data, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    """torch._utils._rebuild_parameter."""
    return _make_parameter(data, requires_grad)


def _parameter_class():
    from ..nn.parameter import Parameter      # nn imports tensor machinery: not at module import
    return Parameter


def _check_new_attribute(obj, key):
    """The names a file may set on an object: new ones. A name the object or its class already
    has (``dtype``, ``_offset``, ``keys`` ...) is refused, and so is a dunder name, or on a tensor
    any private name: the file would replace tritensor's own state. (A state dict's ``_metadata``
    is a new private attribute of an OrderedDict, as torch writes it.)"""
    what = type(obj).__name__
    if type(key) is not str:
        raise _refuse(f"an attribute name of a {what} must be a str, got {type(key).__name__}")
    private = key.startswith("__") or (key.startswith("_") and isinstance(obj, Tensor))
    # looked up, not evaluated: a property (``mT`` ...) is never run by a file's state
    if private or key in obj.__dict__ or any(key in vars(c) for c in type(obj).__mro__):
        raise _refuse(f"refused to set attribute {key!r} on {what}: only new attributes can be "
                      "restored from a file")
    return key


def _set_attributes(obj, state):
    """torch._utils._set_obj_state (a dict, or a (dict, slots dict) pair) through the name check."""
    if type(state) is tuple:
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state!r:.200}")
        parts = state
    else:
        parts = (state,)
    for part in parts:
        if part is None:
            continue
        if type(part) not in (dict, collections.OrderedDict):
            raise _refuse(f"the state of a {type(obj).__name__} must be a dict, got {type(part).__name__}")
        for k, v in part.items():
            obj.__dict__[_check_new_attribute(obj, k)] = v
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """torch._utils._rebuild_parameter_with_state: a Parameter plus new Python attributes."""
    return _set_attributes(_make_parameter(data, requires_grad), state)


def _make_size(dims=()):
    return Size(_check_int_tuple("torch.Size", dims))


def _make_device(kind, index=None):
    if type(kind) is not str or (index is not None and type(index) is not int):
        raise _refuse("torch.device takes a string and an optional int")
    return _device(kind, index)


def _codecs_encode(text, encoding="utf-8"):
    """_codecs.encode, which protocol-2 pickles use for bytes: only str -> latin1/utf-8 bytes."""
    if type(text) is not str or encoding not in ("latin1", "latin-1", "utf-8", "utf8"):
        raise _refuse("_codecs.encode only turns text into bytes (latin1 or utf-8)")
    return codecs.encode(text, encoding)


def _make_bytearray(*args):
    """bytearray(text, 'latin-1') as protocol 2 writes it, or bytearray(bytes); never
    bytearray(n), which would allocate what the file asks."""
    if args == () or (len(args) == 1 and type(args[0]) is bytes):
        return bytearray(*args)
    if len(args) == 2 and type(args[0]) is str and args[1] in ("latin1", "latin-1"):
        return bytearray(args[0], "latin-1")
    raise _refuse("bytearray is rebuilt only from bytes or latin-1 text")


def _make_set(items=()):
    if type(items) not in (list, tuple):
        raise _refuse(f"set is rebuilt only from a list, got {type(items).__name__}")
    return set(items)


def _make_complex(real=0.0, imag=0.0):
    if type(real) not in (int, float) or type(imag) not in (int, float):
        raise _refuse("complex is rebuilt only from two numbers")
    return complex(real, imag)


def _make_ordered_dict(items=()):
    if type(items) not in (list, tuple):
        raise _refuse(f"OrderedDict is rebuilt only from a list of pairs, got {type(items).__name__}")
    return collections.OrderedDict(items)


def _make_counter(counts=None):
    if counts is not None and type(counts) is not dict:
        raise _refuse(f"Counter is rebuilt only from a dict, got {type(counts).__name__}")
    return collections.Counter(counts or {})


_STORAGE_TYPES = {n: StorageType(d, n) for d, n in STORAGE_NAMES.items()}
_UNTYPED = StorageType(_dt.uint8, "storage.UntypedStorage")

# Every global a weights-only load may name, and what it resolves to: the intersection of torch's
# allowlist (torch._weights_only_unpickler._get_allowed_globals) with what tritensor has.
# tests/test_serialization_safety.py asserts this exact set.
SAFE_GLOBALS = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch", "Size"): Size,
    ("torch", "device"): _device,
    ("torch.storage", "UntypedStorage"): _UNTYPED,
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("_codecs", "encode"): _codecs_encode,
    ("builtins", "set"): set,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex,
    **{("torch", n): st for n, st in _STORAGE_TYPES.items()},
    **{("torch", d.name): d for d in _dt.ALL},
}

# What REDUCE calls for each callable global (identity -> checking constructor); a global that is
# not here (a dtype, a storage type) cannot be called.
_CONSTRUCTORS = {
    id(f): (f, f) for f in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_tensor, _rebuild_parameter,
                            _rebuild_parameter_with_state, _codecs_encode)
}
_CONSTRUCTORS.update({id(cls): (cls, make) for cls, make in (
    (Size, _make_size), (_device, _make_device), (collections.OrderedDict, _make_ordered_dict),
    (collections.Counter, _make_counter), (set, _make_set), (bytearray, _make_bytearray),
    (complex, _make_complex))})
# NEWOBJ makes an empty container of these classes (torch: cls.__new__(cls, *args))
_NEW_EMPTY = (collections.OrderedDict, collections.Counter, set, bytearray)
# the classes a file may return as values themselves (torch returns them too)
_CLASS_VALUES = frozenset((collections.OrderedDict, collections.Counter, set, bytearray, complex, Size, _device))

# torch refuses these modules even when a user allowlists a name in them
BLOCKED_MODULES = frozenset(("sys", "os", "posix", "nt"))


def _name_of(obj):
    """The global's name in the file's terms (torch._utils._rebuild_tensor_v2, builtins.set): every
    callable a file reaches is one of SAFE_GLOBALS."""
    return next(f"{m}.{n}" for (m, n), v in SAFE_GLOBALS.items() if v is obj)


def _constructor(func):
    entry = _CONSTRUCTORS.get(id(func))
    return entry[1] if entry is not None and entry[0] is func else None


# ============================================================================ the user's allowlist
# torch.serialization.add_safe_globals / safe_globals: classes and functions a user trusts, kept
# apart from SAFE_GLOBALS (the fixed built-in set above; tests assert it exactly). Each entry is an
# object, named by its ``__module__.__qualname__``, or an (object, "module.name") pair naming it
# as the file does. A weights-only load may then name it (GLOBAL), call it (REDUCE), make one
# (NEWOBJ: ``cls.__new__(cls, *args)``) and set its state (BUILD: ``__setstate__``, else its
# ``__dict__`` and slots), as torch's _weights_only_unpickler does. Nothing is imported.
_user_safe_globals: frozenset = frozenset()


def add_safe_globals(safe_globals) -> None:
    global _user_safe_globals
    _user_safe_globals = _user_safe_globals | frozenset(safe_globals)


def get_safe_globals() -> list:
    return list(_user_safe_globals)


def clear_safe_globals() -> None:
    global _user_safe_globals
    _user_safe_globals = frozenset()


def remove_safe_globals(globals_to_remove) -> None:
    global _user_safe_globals
    _user_safe_globals = _user_safe_globals - frozenset(globals_to_remove)


class safe_globals:
    """``with safe_globals([...]):`` these globals are allowlisted inside the block only."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        remove_safe_globals(self.safe_globals)


def user_allowed_globals() -> dict:
    """"module.name" -> object for the user's entries (torch's checks of the pairs)."""
    named = {}
    for entry in _user_safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple "
                                 f"of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(entry[1])}")
            named[entry[1]] = entry[0]
        else:
            named[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return named


def _user_allowed(u, obj):
    """Whether ``obj`` is one of the objects the user allowlisted (by identity)."""
    return any(obj is v for v in u.user_globals.values())


def _user_class(u, kind):
    return any(kind is v for v in u.user_globals.values())


def resolve_global(module, name, user_globals=None):
    """GLOBAL module.name -> the allowlisted object, with torch's refusals."""
    if (module, name) in _compat_pickle.NAME_MAPPING:      # Python 2 names, as pickle's fix_imports
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    full = f"{module}.{name}"
    if module in BLOCKED_MODULES:
        raise _refuse(f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
    hit = SAFE_GLOBALS.get((module, name))
    if hit is None and user_globals and full in user_globals:
        return user_globals[full]
    if hit is None:
        shown = name if module == "builtins" else full
        raise _refuse(f"Unsupported global: GLOBAL {shown} was not an allowed global by default. "
                      "tritensor.load rebuilds only tensors, Parameters, dtypes, devices, sizes and "
                      f"standard containers from an untrusted file. Please use "
                      f"`tritensor.serialization.add_safe_globals([{name}])` or the "
                      f"`tritensor.serialization.safe_globals([{name}])` context manager to allowlist this "
                      "global if you trust this class/function.")
    return hit


# ============================================================================ the interpreter
_OPS = {}


def _op(code):
    def register(fn):
        _OPS[code[0]] = fn
        return fn
    return register


class WeightsUnpickler:
    """Reads one pickle (``data``, bytes) under the rules in the module docstring.
    ``persistent_load(pid)`` turns a ('storage', ...) persistent id into a LoadedStorage."""

    def __init__(self, data, persistent_load, encoding="utf-8"):
        self.data = bytes(data)
        self.pos = 0
        self.persistent_load = persistent_load
        self.encoding = encoding
        self.memo = {}
        self.stack = []
        self.metastack = []
        self.tensors = []          # every tensor made here, checked again when the object is built
        self.user_globals = user_allowed_globals()     # the user's allowlist as this load began

    # -------------------------------------------------------------------- reading the stream
    def read(self, n):
        end = self.pos + n
        if end > len(self.data):
            raise _refuse("pickle data was truncated")
        chunk = self.data[self.pos:end]
        self.pos = end
        return chunk

    def readline(self):
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise _refuse("pickle data was truncated")
        line = self.data[self.pos:end]
        self.pos = end + 1
        return line

    def pop(self):
        if not self.stack:
            raise _refuse("unpickling stack underflow")
        return self.stack.pop()

    def top(self):
        if not self.stack:
            raise _refuse("unpickling stack underflow")
        return self.stack[-1]

    def pop_mark(self):
        if not self.metastack:
            raise _refuse("could not find MARK")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    # -------------------------------------------------------------------- the loop
    def load(self):
        ops = _OPS
        while True:
            if self.pos >= len(self.data):
                raise _refuse("pickle data was truncated")
            code = self.data[self.pos]
            self.pos += 1
            if code == 0x2E:                      # STOP
                result = self.pop()
                self.check_tensors()
                return result
            handler = ops.get(code)
            if handler is None:
                raise _refuse(f"Unsupported operand {code}")
            handler(self)

    def check_tensors(self):
        """Every tensor made during this load, checked against its storage now that nothing in
        the file can touch it any more (torch: _validate_loaded_sparse_tensors, for geometry)."""
        for i, t in enumerate(self.tensors):
            st = t.__dict__.get("_storage")
            dtype = t.__dict__.get("_dtype")
            ok = (type(st) is Storage and dtype in _ITEMSIZE and dtype.itemsize == _ITEMSIZE[dtype]
                  and (st.host is None or st.host.nbytes == st.nbytes))
            shape, stride, offset = (t.__dict__.get(k) for k in ("_shape", "_stride", "_offset"))
            if not ok or type(shape) is not Size or type(stride) is not tuple or type(offset) is not int:
                raise _refuse(f"tensor {i} of the file was changed after it was rebuilt")
            try:
                check_geometry(st.nbytes, _ITEMSIZE[dtype], _check_int("storage_offset", offset),
                               _check_int_tuple("size", shape), _check_int_tuple("stride", stride))
            except RuntimeError as e:
                raise _refuse(f"tensor {i} of the file no longer fits its storage: {e}") from None

    def call(self, func, args, what):
        make = _constructor(func)
        if make is None and _user_allowed(self, func):
            if type(args) is not tuple:
                raise _refuse(f"{what} arguments must be a tuple, got {type(args).__name__}")
            result = func(*args)       # the user trusts it: called as torch calls it
            if isinstance(result, Tensor):
                self.tensors.append(result)
            return result
        if make is None:
            raise _refuse(f"Trying to call {what} for unrecognized function {func!r:.100}")
        if type(args) is not tuple:
            raise _refuse(f"{what} arguments must be a tuple, got {type(args).__name__}")
        try:
            result = make(*args)
        except (TypeError, ValueError, OverflowError, KeyError, IndexError, AttributeError) as e:
            raise _refuse(f"{_name_of(func)}{args!r:.100} failed: {type(e).__name__}: {e}") from None
        if isinstance(result, Tensor):
            self.tensors.append(result)
        return result


# ------------------------------------------------------------------------ opcodes (torch's set)
@_op(pickle.PROTO)
def _proto(u):
    proto = u.read(1)[0]
    if proto != 2:
        warnings.warn(f"Detected pickle protocol {proto} in the checkpoint, which was not the default pickle "
                      "protocol used by `tritensor.load` (2). The weights_only Unpickler might not support all "
                      "instructions implemented by this protocol.", stacklevel=4)


@_op(pickle.GLOBAL)
def _global(u):
    try:
        module, name = u.readline().decode("utf-8"), u.readline().decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse("a GLOBAL name is not UTF-8") from None
    u.stack.append(resolve_global(module, name, u.user_globals))


@_op(pickle.REDUCE)
def _reduce(u):
    args = u.pop()
    func = u.top()
    u.stack[-1] = u.call(func, args, "reduce")


@_op(pickle.NEWOBJ)
def _newobj(u):
    args = u.pop()
    cls = u.pop()
    if type(args) is not tuple:
        raise _refuse(f"NEWOBJ arguments must be a tuple, got {type(args).__name__}")
    if any(cls is c for c in _NEW_EMPTY):
        u.stack.append(cls.__new__(cls))
    elif any(cls is c for c in (complex, Size, _device)):
        u.stack.append(u.call(cls, args, "NEWOBJ"))
    elif isinstance(cls, type) and _user_class(u, cls):
        u.stack.append(cls.__new__(cls, *args))
    else:
        raise _refuse(f"Can only create new object for nn.Parameter or classes allowlisted via "
                      f"`add_safe_globals` but got {cls!r:.100}")


def _build_tensor(inst, state):
    """torch.Tensor.__setstate__'s legacy states: (storage, offset, size, stride) is set_ (checked
    here as any rebuild), (requires_grad, _, hooks) and the Variable form (data, _, hooks,
    requires_grad, _)."""
    if type(state) is tuple and len(state) == 4:
        inst.data = _tensor_from_storage(*state)
        return
    if type(state) is tuple and len(state) == 5:
        data = state[0]
        if not isinstance(data, Tensor):
            raise _refuse(f"the data of a legacy Variable state must be a tensor, got {type(data).__name__}")
        inst.data = data
        state = (state[3], state[4], state[2])
    if type(state) is tuple and len(state) == 3:
        _set_requires_grad(inst, state[0])
        return
    shown = f"a dict with keys {sorted(map(str, state))}" if type(state) is dict else type(state).__name__
    raise _refuse(f"BUILD on a {type(inst).__name__} takes torch's legacy state (storage, storage_offset, "
                  f"size, stride) or (requires_grad, _, backward_hooks); the file gave {shown:.200}")


@_op(pickle.BUILD)
def _build(u):
    state = u.pop()
    inst = u.top()
    kind = type(inst)
    if kind is Tensor or kind is _parameter_class():
        _build_tensor(inst, state)
        u.tensors.append(inst)
    elif kind is collections.OrderedDict or kind is collections.Counter:
        if state is not None:
            _set_attributes(inst, state)
    elif _user_class(u, kind):
        _build_user_object(inst, state)
    else:
        raise _refuse("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                      f"`add_safe_globals`, but got {_describe(inst)}")


def _build_user_object(inst, state):
    """BUILD on an instance of a class the user allowlisted: pickle's load_build."""
    if hasattr(inst, "__setstate__"):
        inst.__setstate__(state)
        return
    slotstate = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slotstate = state
    if state:
        inst.__dict__.update(state)
    if slotstate:
        for k, v in slotstate.items():
            setattr(inst, k, v)


def _describe(obj):
    if isinstance(obj, _dt.dtype):
        return f"the dtype global torch.{obj.name}"
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    return f"{type(obj)}"


@_op(pickle.APPEND)
def _append(u):
    item = u.pop()
    target = u.top()
    if type(target) is not list:
        raise _refuse(f"Can only append to lists, but got {type(target)}")
    target.append(item)


@_op(pickle.APPENDS)
def _appends(u):
    items = u.pop_mark()
    target = u.top()
    if type(target) is not list:
        raise _refuse(f"Can only extend lists, but got {type(target)}")
    target.extend(items)


def _set_items(u, opcode, pairs):
    target = u.top()
    if type(target) not in (dict, collections.OrderedDict, collections.Counter):
        raise _refuse(f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                      f"but got {type(target)}")
    try:
        for k, v in pairs:
            target[k] = v
    except TypeError as e:
        raise _refuse(f"{opcode}: {e}") from None


@_op(pickle.SETITEM)
def _setitem(u):
    v = u.pop()
    k = u.pop()
    _set_items(u, "SETITEM", ((k, v),))


@_op(pickle.SETITEMS)
def _setitems(u):
    items = u.pop_mark()
    if len(items) % 2:
        raise _refuse("SETITEMS needs key/value pairs, got an odd number of items")
    _set_items(u, "SETITEMS", zip(items[::2], items[1::2]))


@_op(pickle.MARK)
def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []


@_op(pickle.TUPLE)
def _tuple(u):
    items = tuple(u.pop_mark())       # pop_mark replaces u.stack: bind it after
    u.stack.append(items)


def _tuple_n(n):
    def op(u):
        if len(u.stack) < n:
            raise _refuse("unpickling stack underflow")
        u.stack[-n:] = [tuple(u.stack[-n:])]
    return op


_OPS[pickle.TUPLE1[0]] = _tuple_n(1)
_OPS[pickle.TUPLE2[0]] = _tuple_n(2)
_OPS[pickle.TUPLE3[0]] = _tuple_n(3)


def _push(value_factory):
    def op(u):
        u.stack.append(value_factory())
    return op


_OPS[pickle.NONE[0]] = _push(lambda: None)
_OPS[pickle.NEWFALSE[0]] = _push(lambda: False)
_OPS[pickle.NEWTRUE[0]] = _push(lambda: True)
_OPS[pickle.EMPTY_TUPLE[0]] = _push(tuple)
_OPS[pickle.EMPTY_LIST[0]] = _push(list)
_OPS[pickle.EMPTY_DICT[0]] = _push(dict)
_OPS[pickle.EMPTY_SET[0]] = _push(set)


def _unpack(fmt, size):
    def op(u):
        u.stack.append(struct.unpack(fmt, u.read(size))[0])
    return op


_OPS[pickle.BININT[0]] = _unpack("<i", 4)
_OPS[pickle.BININT1[0]] = _unpack("<B", 1)
_OPS[pickle.BININT2[0]] = _unpack("<H", 2)
_OPS[pickle.BINFLOAT[0]] = _unpack(">d", 8)


@_op(pickle.LONG1)
def _long1(u):
    n = u.read(1)[0]
    u.stack.append(pickle.decode_long(u.read(n)))


@_op(pickle.BINUNICODE)
def _binunicode(u):
    n = struct.unpack("<I", u.read(4))[0]
    try:
        u.stack.append(str(u.read(n), "utf-8", "surrogatepass"))
    except UnicodeDecodeError as e:
        raise _refuse(f"BINUNICODE: {e}") from None


@_op(pickle.SHORT_BINSTRING)
def _short_binstring(u):
    data = u.read(u.read(1)[0])
    if u.encoding != "bytes":
        try:
            data = data.decode(u.encoding, "strict")
        except (UnicodeDecodeError, LookupError) as e:
            raise _refuse(f"SHORT_BINSTRING: {e}") from None
    u.stack.append(data)


@_op(pickle.BINPERSID)
def _binpersid(u):
    pid = u.pop()
    if type(pid) is not tuple or not pid or pid[0] not in ("storage", b"storage"):
        raise _refuse(f"Only persistent_load of storage is allowed, but got {pid!r:.100}")
    u.stack.append(u.persistent_load(pid))


def _get(fmt, size):
    def op(u):
        idx = struct.unpack(fmt, u.read(size))[0]
        try:
            u.stack.append(u.memo[idx])
        except KeyError:
            raise _refuse(f"Memo value not found at index {idx}") from None
    return op


def _put(fmt, size):
    def op(u):
        idx = struct.unpack(fmt, u.read(size))[0]
        u.memo[idx] = u.top()
    return op


_OPS[pickle.BINGET[0]] = _get("<B", 1)
_OPS[pickle.LONG_BINGET[0]] = _get("<I", 4)
_OPS[pickle.BINPUT[0]] = _put("<B", 1)
_OPS[pickle.LONG_BINPUT[0]] = _put("<I", 4)


# ============================================================================ what may be returned
_LEAF_TYPES = frozenset((type(None), bool, int, float, complex, str, bytes, bytearray, Size, _device))
_CONTAINERS = frozenset((list, tuple, set, dict, collections.OrderedDict, collections.Counter))


def _tensor_fields():
    """The attributes tritensor itself gives a tensor: a file's state cannot add these (see
    _check_new_attribute), so whatever else a loaded tensor carries came from the file."""
    from ..runtime.device import CPU
    t = _parameter_class()(Tensor._make(Storage(0, CPU), (0,), (1,), 0, _dt.float32), False)
    return frozenset(t.__dict__)


def check_result(obj, strict=True):
    """Walk what a load returns (iteratively: files nest deeply) and refuse an internal object.
    ``strict`` (weights_only) allows data only; otherwise unknown objects are left alone and only
    tritensor's own internal objects are refused."""
    fields = None
    seen = set()
    todo = [obj]
    user_values = tuple(user_allowed_globals().values())
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        kind = type(x)
        if kind in _LEAF_TYPES or isinstance(x, _dt.dtype):
            continue
        if kind in _CONTAINERS:
            if kind is dict or kind is collections.OrderedDict or kind is collections.Counter:
                todo.extend(x.keys())
                todo.extend(x.values())
                todo.extend(getattr(x, "__dict__", {}).values())
            else:
                todo.extend(x)
            continue
        if isinstance(x, Tensor):
            fields = fields or _tensor_fields()
            todo.extend(v for k, v in x.__dict__.items() if k not in fields)
            continue
        if user_values and (any(kind is v for v in user_values) or any(x is v for v in user_values)):
            todo.extend(getattr(x, "__dict__", {}).values())     # an object of a class the user trusts
            continue
        if kind is LoadedStorage or kind is StorageType:
            raise NotImplementedError(
                f"tritensor.load: the file returns a bare storage ({x!r}) outside any tensor; torch returns a "
                "TypedStorage there, and tritensor has no storage object of its own to return")
        if strict and not (kind is type and x in _CLASS_VALUES):
            raise NotImplementedError(
                f"tritensor.load: the file returns {x!r:.100} itself, which tritensor does not provide")
