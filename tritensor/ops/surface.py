"""The public surface, declared once: which variants of each op exist.

In the spirit of PyTorch's native_functions.yaml ``variants:``, one declaration per public op says
which forms of it users get:

    declare("add", add,                      # tt.add (and, unless method= says otherwise, Tensor.add)
            inplace=add_,                    # Tensor.add_ (tt.add_ too with inplace_function=True)
            operators=("__add__", "__radd__", "__iadd__"),
            aliases=("plus",),               # every variant again under each alias name
            functional=False,                # tt.nn.functional.add: True = this function
            out="cast")                      # tt.add(..., out=t): torch's out= rules (OUT_RULES)

``unary(ENTRY)`` declares a plain unary pointwise op from its table entry alone: it GENERATES the
function (``tt.exp(input, *, out=None)``) and its in-place form (``Tensor.exp_``) and returns
both, so the op's module binds them for its own use (``exp, exp_ = unary(EXP)``).

The tt namespace (``namespace()``), the Tensor methods and operators (``install_methods``) and
nn.functional's aliases (``install_functional``) are generated from these declarations by
tritensor/__init__.py and tritensor/_methods.py; tests/test_surface.py checks that every declared
variant exists and that nothing public is undeclared.

Hot path: a method or operator is bound to the implementation itself, through ``_method``'s one
frame (NumPy scalar arguments read as Python numbers) and no other; ``out=`` exists only on the
tt functions (torch's methods have none): a generated unary function has it built in, a
hand-written function gets a wrapper with its exact signature plus ``out`` (one frame more for
``tt.add(a, b)``; ``a + b`` and ``a.add(b)`` do not pass through it).
"""
from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as _np

from .. import _dual
from .. import dtypes as _dt
from ..autograd import forward_ad as _forward_ad
from ..autograd.grad_mode import is_grad_enabled
from ..memory_formats import channels_last, channels_last_3d, contiguous_format, preserve_format
from ..runtime.storage import Storage
from ..tensor import Size, Tensor, contiguous_strides
from .copy import copy_into
from .dispatch import dispatch, dispatch_inplace
from ._layout import channels_last_strides
from ._overlap import assert_no_internal_overlap
from .views import check_inplace_overlap, narrow


@dataclass(eq=False)
class Variants:
    name: str
    function: Optional[Callable] = None   # tt.<name>; also Tensor.<name> when method is True
    method: object = True                 # True: the function; a callable: its own; False: none
    inplace: Optional[Callable] = None    # Tensor.<name>_
    inplace_function: object = False      # tt.<name>_ exists too (torch.exp_, torch.relu_ ...):
                                          # True for the name and its aliases, or a tuple of names
    inplace_method: bool = True           # Tensor.<name>_ (False: a function only, as silu_)
    operators: tuple = ()                 # dunder names, or (dunder, implementation) pairs
    functional: object = False            # True: nn.functional.<name> is the function; "own":
                                          # nn/functional.py defines it with torch's F signature
    aliases: tuple = ()                   # the same variants under other names (absolute, clip ...)
    out: object = None                    # the out= rule (a name in OUT_RULES), None: no out=
    module: str = ""

    @property
    def method_impl(self):
        if self.method is True:
            return self.function
        return self.method or None


SURFACE: dict[str, Variants] = {}


def declare(name, function=None, **variants) -> Variants:
    """Declare op ``name``'s public variants (see the module docstring). A dotted name is a
    function of a submodule: "special.ndtr" is tt.special.ndtr (namespace("special")); such a
    function has no method, in-place form, operator or nn.functional alias (torch.special's
    have none)."""
    if name in SURFACE:
        raise ValueError(f"public op {name!r} declared twice")
    if "." in name and (variants.get("method", True) is not False or variants.get("inplace") is not None
                        or variants.get("operators") or variants.get("functional")):
        raise ValueError(f"{name!r}: a submodule's function is declared with method=False and no "
                         "in-place form, operator or nn.functional alias")
    frame = inspect.currentframe().f_back
    module = frame.f_globals.get("__name__", "") if frame is not None else ""
    decl = SURFACE[name] = Variants(name, function, module=module, **variants)
    if decl.method is True and function is None:
        decl.method = False
    return decl


# --------------------------------------------------------------------------- generated unary ops
def unary(entry, name=None, *, check=None, inplace=True, inplace_function=False, **variants):
    """Declare and GENERATE a unary pointwise op from its table entry: the function
    ``name(input, *, out=None)`` (torch's TypeError for a non-tensor, then ``check(input)`` if
    given, then dispatch) and, with ``inplace``, its in-place form ``name_(self)``.
    Returns (function, in-place function or None)."""
    name = name or entry.name

    rule = variants.setdefault("out", "cast")
    if rule is not None:
        def fn(input, *, out=None):
            if not isinstance(input, Tensor):
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
            if check is not None:
                check(input)
            if out is None:
                return dispatch(entry, input)
            return write_out(name, dispatch(entry, input), out, rule)
    else:           # torch has no out= for it (relu, isnan ...)
        def fn(input):
            if not isinstance(input, Tensor):
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
            if check is not None:
                check(input)
            return dispatch(entry, input)

    fn_ = None
    if inplace:
        def fn_(self):
            if check is not None:
                check(self)
            check_inplace_overlap(self)        # torch's TensorIterator checks (expanded self)
            return dispatch_inplace(entry, self)
        fn_.__name__ = fn_.__qualname__ = name + "_"
    fn.__name__ = fn.__qualname__ = name
    fn._out_builtin = rule is not None
    decl = declare(name, fn, inplace=fn_, inplace_function=inplace_function, **variants)
    frame = inspect.currentframe().f_back
    decl.module = frame.f_globals.get("__name__", "") if frame is not None else ""
    return fn, fn_


# --------------------------------------------------------------------------- out=
_CPP_NAMES = _dt.CPP_NAMES


def _exact(template):
    def check(name, result, out):
        if out.dtype is not result.dtype:
            raise RuntimeError(template.format(
                name=name, res=_dt.type_name(result.dtype), out=_dt.type_name(out.dtype),
                res_cpp=_CPP_NAMES[result.dtype.name], out_cpp=_CPP_NAMES[out.dtype.name]))
    return check


def _cast(name, result, out):
    if not _dt.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_dt.type_name(result.dtype)} can't be cast to the desired "
                           f"output type {_dt.type_name(out.dtype)}")


def _cat_cast(name, result, out):
    if not _dt.can_cast(result.dtype, out.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{_dt.type_name(out.dtype)}")


def _float_result(name, result, out):
    if not out.dtype.is_floating_point:
        raise RuntimeError(f"{name}(): Expected floating point type for result tensor, but got: "
                           f"{_dt.type_name(out.dtype)}")
    _cast(name, result, out)


def _bool_result(name, result, out):
    if out.dtype is not _dt.bool_ and out.dtype is not _dt.uint8:
        raise RuntimeError(f"{name} only supports bool tensor for result, got: {_dt.type_name(out.dtype)}")


def _mv_dtype(name, result, out):
    if out.dtype is not result.dtype:
        res = _dt.type_name(result.dtype)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_dt.type_name(out.dtype)}, "
                           f"{res}, and {res}")


def _factory_dtype(dtype, out):
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {_dt.type_name(dtype)} does not match dtype of out parameter "
                           f"({_dt.type_name(out.dtype)})")
    return out.dtype


# torch's dtype rule for out=, by family (texts from torch 2.13):
OUT_RULES = {
    # TensorIterator ops (pointwise, std/var, outer): the result casts into out
    "cast": _cast,
    # sum/prod/cumsum/cumprod compute in out's dtype (the wrapper passes dtype=out.dtype)
    "dtype": _cast,
    "cat": _cat_cast,
    # factories (zeros, arange, randn ...): made in out's dtype (a different dtype= is refused)
    "factory": _cast,
    "floating": _float_result,                                     # logsumexp
    "bool": _bool_result,                                          # all, any
    # structured kernels whose out must have the result's dtype exactly
    "exact": _exact("Expected out tensor to have dtype {res_cpp}, but got {out_cpp} instead"),
    "amax": _exact("Expected the dtype for input and out to match, but got {res} for input's dtype and "
                   "{out} for out's dtype."),
    "same_scalar_type": _exact("{name}(): self and result must have the same scalar type"),
    "dot": _exact("result dtype {out} does not match input dtype {res}"),
    "where": _exact("Expected out type to be {res} but got {out}"),
    "clamp": _exact("Found dtype {out} but expected {res}"),
    "mv": _mv_dtype,
    # torch.linalg's composites with their own out= checks
    "linalg.matrix_norm": _exact("linalg.matrix_norm expected out tensor dtype {res} but got: {out}"),
    "linalg.norm": _exact("linalg.norm expected out tensor dtype {res} but got: {out}"),
    "linalg.vecdot": _exact("linalg.vecdot: Expected out of dtype{res} but found {out}"),
    "multi_dot": _exact("multi_dot(): expected out tensor to have dtype {res_cpp} but got {out_cpp}"),
}


def _check_out_grad(name, result, out):
    if is_grad_enabled():
        for r, o in zip(result, out):
            if o.requires_grad or (isinstance(r, Tensor) and r.requires_grad):
                raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                                   "differentiation, but one of the arguments requires grad.")


def _check_out_dual(name, result, out):
    """torch's out= functions have no forward-AD rule: a dual argument is its NotImplementedError."""
    for r, o in zip(result, out):
        if any(isinstance(t, Tensor) and _forward_ad.tangent_of(t) is not None for t in (r, o)):
            raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not support it "
                                      "because it is an out= function")


def write_out(name, result, out, rule, check_out=None):
    """torch's out= protocol, after the result is computed: out's device and dtype are checked
    (``rule``: OUT_RULES), out is resized to the result's shape (a UserWarning when it had
    elements), the result is written into out's memory (views of out see it, its version
    counter moves) and out is returned. ``result``/``out`` may be tuples (max(dim) ...).
    ``check_out(o)``, if given, runs on each resized out before anything is written (the overlap
    checks torch makes between out and an op's inputs: gather, cat, index_select ...)."""
    single = not isinstance(result, tuple)
    results, outs = ((result,), (out,)) if single else (tuple(result), tuple(out))
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(o).__name__}")
    _check_out_grad(name, results, outs)
    if _dual.ACTIVE[0]:
        _check_out_dual(name, results, outs)
    check = OUT_RULES[rule] if isinstance(rule, str) else rule
    for i, (r, o) in enumerate(zip(results, outs)):
        if o.device != r.device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                               f"devices, {r.device} and {o.device}!")
        if single or getattr(rule, "checks_each_output", False):   # (cummax's own dtype text)
            check(name, r, o)
        else:             # max/min(dim)'s (values, indices): structured, out's dtypes exactly
            OUT_RULES["exact"](name, r, o)
    for r, o in zip(results, outs):
        if tuple(o.shape) != tuple(r.shape):
            if o.numel() != 0:
                warnings.warn(
                    f"An output with one or more elements was resized since it had shape {list(o.shape)}, "
                    f"which does not match the required output shape {list(r.shape)}. This behavior is "
                    "deprecated, and in a future PyTorch release outputs will not be resized unless they "
                    "have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, "
                    "to zero elements with t.resize_(0).", UserWarning, stacklevel=3)
            resize_(o, tuple(r.shape))
        assert_no_internal_overlap(o)      # an expanded out: torch's "more than one element" error
        if check_out is not None:
            check_out(o)
        if r.numel():
            copy_into(o, r)
        o._version_counter.value += 1
    if single:
        return out
    return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs)   # return_types.max ...


# torch's reductions whose full-reduction overload has no out=: (name -> type of their dim)
_OUT_ONLY_WITH_DIM = {"sum": "tuple of ints", "prod": "int"}


def _out_without_dim(name, dtype):
    if dtype is not None:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got (Tensor, out=Tensor), but expected one "
        f"of:\n * (Tensor input, *, torch.dtype dtype = None)\n * (Tensor input, {_OUT_ONLY_WITH_DIM[name]} dim, "
        "bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)\n")


def with_out(name, fn, rule):
    """``fn`` with torch's keyword-only ``out=None``: its exact signature plus ``out`` (generated
    source, so a wrong keyword is Python's own TypeError and no *args packing is paid). A function
    whose signature already names ``out`` (to refuse it) keeps its signature; out is then handled
    here and never passed on."""
    sig = inspect.signature(fn)
    params, call, has_kwonly, has_out = [], [], False, False
    for p in sig.parameters.values():
        default = f"=_d_{p.name}" if p.default is not p.empty else ""
        if p.name == "out":
            has_out = True
            if p.kind is p.KEYWORD_ONLY and not has_kwonly:
                params.append("*")
                has_kwonly = True
            params.append("out=None")
            continue
        if p.kind is p.VAR_POSITIONAL:
            params.append(f"*{p.name}")
            call.append(f"*{p.name}")
            has_kwonly = True
        elif p.kind is p.VAR_KEYWORD:
            if not has_out:
                params.append("out=None" if has_kwonly else "*, out=None")
                has_out = True
            params.append(f"**{p.name}")
            call.append(f"**{p.name}")
        elif p.kind is p.KEYWORD_ONLY:
            if not has_kwonly:
                params.append("*")
                has_kwonly = True
            params.append(p.name + default)
            call.append(f"{p.name}={p.name}")
        else:
            params.append(p.name + default)
            call.append(p.name)
    if not has_out:
        params.append("out=None" if has_kwonly else "*, out=None")
    env = {f"_d_{p.name}": p.default for p in sig.parameters.values() if p.default is not p.empty}
    env.update(_impl=fn, _write=write_out, _rule=rule, _name=name)
    args = ", ".join(call)
    dtype_args = args
    if rule == "dtype" and "dtype" in sig.parameters:     # computed in out's dtype, as torch
        dtype_args = args.replace("dtype=dtype", "dtype=out.dtype if dtype is None else dtype")
    body = f"    return _write(_name, _impl({dtype_args}), out, _rule)\n"
    if name in _OUT_ONLY_WITH_DIM and "dim" in sig.parameters:     # torch's overloads: out= needs dim
        env["_no_dim"] = _out_without_dim
        body = f"    if dim is None:\n        _no_dim(_name, dtype)\n" + body
    if rule == "factory":   # made in out's dtype on out's device; requires_grad is set on out
        env["_factory_dtype"] = _factory_dtype
        fargs = (args.replace("dtype=dtype", "dtype=_factory_dtype(dtype, out)")
                 .replace("device=device", "device=out.device if device is None else device")
                 .replace("requires_grad=requires_grad", "requires_grad=False"))
        body = (f"    _write(_name, _impl({fargs}), out, _rule)\n"
                f"    return out.requires_grad_() if requires_grad else out\n")
    src = (f"def {fn.__name__}({', '.join(params)}):\n"
           f"    if out is None:\n"
           f"        return _impl({args})\n" + body)
    exec(src, env)
    wrapper = env[fn.__name__]
    wrapper.__doc__, wrapper.__module__, wrapper.__qualname__ = fn.__doc__, fn.__module__, fn.__qualname__
    wrapper._out_impl = fn       # (not __wrapped__: inspect.signature must show out)
    return wrapper


# --------------------------------------------------------------------------- generation
_NUMPY_SCALARS = (_np.number, _np.bool_)
_UNARY_DUNDERS = ("__neg__", "__pos__", "__abs__", "__invert__")
# Python's binary operators: __x__, the reflected __rx__ and the in-place __ix__ (listed, not
# guessed from a prefix: __rshift__ is no reflected operator, __invert__ no in-place one)
_BINARY_OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
                     "xor", "lshift", "rshift", "div")
_REFLECTED_DUNDERS = frozenset(f"__r{n}__" for n in _BINARY_OPERATORS)
_INPLACE_DUNDERS = frozenset(f"__i{n}__" for n in _BINARY_OPERATORS)


def _method(fn):
    """A method or operator: NumPy scalar arguments count as the Python numbers they hold."""
    def method(self, *args, **kwargs):
        for a in args:     # converted only when there is one (no generator per call: issue 14)
            if isinstance(a, _NUMPY_SCALARS):
                args = tuple(a.item() if isinstance(a, _NUMPY_SCALARS) else a for a in args)
                break
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = getattr(fn, "__name__", "method")
    method.__doc__ = getattr(fn, "__doc__", None)
    return method


def _rev(fn):
    return lambda self, other: fn(other, self)     # _method has made NumPy scalars numbers


def _names(decl):
    return (decl.name,) + tuple(decl.aliases)


def public_function(decl):
    """tt.<name>: the declared function, with out= when the declaration has an out rule."""
    if decl.out is None or getattr(decl.function, "_out_builtin", False):
        return decl.function
    fn = decl.__dict__.get("_public_function")
    if fn is None:      # made once: tt.<name> and every later namespace() are the same object
        # errors name the function as torch's C++ does: special_ndtr for torch.special.ndtr
        fn = decl._public_function = with_out(decl.name.replace(".", "_"), decl.function, decl.out)
    return fn


def namespace(prefix="") -> dict:
    """Every tt.* op (or, with ``prefix``, every function of that submodule: namespace("special")
    is tt.special), generated from the declarations: name -> function."""
    names = {}
    for decl in SURFACE.values():
        space, _, short = decl.name.rpartition(".")
        if space != prefix:
            continue
        if decl.function is not None:
            fn = public_function(decl)
            for n in (short,) + tuple(decl.aliases):
                names[n] = fn
        if decl.inplace is not None and decl.inplace_function:
            inplace_names = _names(decl) if decl.inplace_function is True else decl.inplace_function
            for n in inplace_names:
                names[n + "_"] = decl.inplace
    return names


def operator_impl(decl, dunder):
    """The implementation of operator ``dunder`` of ``decl``: __x__ the function, __rx__ the
    function with its operands swapped, __ix__ the in-place form; unary dunders the function."""
    if dunder in _UNARY_DUNDERS or dunder in ("__" + decl.name + "__",):
        return decl.function
    if dunder in _INPLACE_DUNDERS and decl.inplace is not None:
        return decl.inplace
    if dunder in _REFLECTED_DUNDERS:
        return _rev(decl.function)
    return decl.function


def methods() -> dict:
    """Every Tensor method, property and operator generated from the declarations."""
    out = {}
    for decl in SURFACE.values():
        impl = decl.method_impl
        if impl is not None:
            bound = impl if isinstance(impl, property) else _method(impl)
            for n in _names(decl):
                out[n] = bound
        if decl.inplace is not None and decl.inplace_method:
            bound = _method(decl.inplace)
            for n in _names(decl):
                out[n + "_"] = bound
        for spec in decl.operators:
            dunder, impl = spec if isinstance(spec, tuple) else (spec, operator_impl(decl, spec))
            out[dunder] = impl if dunder in _UNARY_DUNDERS else _method(impl)
    return out


def install_methods(cls):
    for name, value in methods().items():
        setattr(cls, name, value)


def functional() -> dict:
    """The nn.functional aliases the declarations ask for (functional=True); "own" ones are
    defined in nn/functional.py itself."""
    return {n: decl.function for decl in SURFACE.values() if decl.functional is True for n in _names(decl)}


# --------------------------------------------------------------------------- resize_
def resize_(self, *sizes, memory_format=None):
    """Tensor.resize_: self becomes contiguous with shape ``sizes``, in its own storage when that
    is large enough (its contents kept), else in a new, larger one (the old elements copied to
    its start; the rest uninitialised), as torch's resize_."""
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"resize_(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(d).__name__}")
        if d < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {list(shape)}")
    if self.requires_grad and is_grad_enabled():
        raise RuntimeError("cannot resize variables that require grad")
    strides = _resize_strides(shape, memory_format)
    numel = 1
    for d in shape:
        numel *= d
    itemsize = self.element_size()
    needed = (self._offset + numel) * itemsize if numel else 0
    if needed > self._storage.nbytes:
        old = Tensor._make(self._storage, (self._storage.nbytes // itemsize,), (1,), 0, self.dtype)
        new = Tensor._make(Storage(needed, self._storage.device), (needed // itemsize,), (1,), 0, self.dtype)
        if old.numel():
                    copy_into(narrow(new, 0, 0, old.numel()), old)
        self._storage = new._storage
    self._shape = Size(shape)
    self._stride = strides
    self._host_array = None
    return self


def _resize_strides(shape, memory_format):
    """The strides resize_ gives ``shape`` in ``memory_format`` (torch's resize_ then
    restride: channels_last(_3d) need rank 4 (5); preserve_format is refused, in torch's words)."""
    if memory_format is None or memory_format is contiguous_format:
        return tuple(contiguous_strides(shape))
    if memory_format is preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    for fmt, rank, name in ((channels_last, 4, "channels_last"), (channels_last_3d, 5, "channels_last_3d")):
        if memory_format is fmt:
            if len(shape) != rank:
                raise RuntimeError(f"required rank {rank} tensor to use {name} format")
            return channels_last_strides(shape)
    raise TypeError(f"resize_(): argument 'memory_format' must be torch.memory_format, not "
                    f"{type(memory_format).__name__}")

