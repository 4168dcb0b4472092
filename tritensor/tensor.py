"""Tensor = storage + shape + strides + offset + dtype (+ device via storage) + autograd fields.

Methods are thin calls into ``tritensor.ops``; the data layout logic lives here only as far as
reading memory back to the host needs it.
"""
from __future__ import annotations

import weakref
from operator import attrgetter as _attrgetter

import numpy as np

from . import dtypes as _dt
from . import _dual
from . import _tracing
from .layouts import strided as _strided
from .memory_formats import contiguous_format as _contiguous_format, preserve_format as _preserve_format
from .runtime import device_errors as _device_errors
from .runtime import graphs as _graphs
from .runtime.device import device as _device
from .autograd.grad_mode import _state as _grad_state


_TRACED_AS = {"Boolean value": "boolean", "float": "float", "int": "integer"}   # TracerWarning's words


class Size(tuple):
    """torch.Size: a tuple of ints."""

    def __new__(cls, dims=()):
        return tuple.__new__(cls, map(int, dims))     # map: no Python-level generator

    def numel(self):
        n = 1
        for d in self:
            n *= d
        return n

    def __repr__(self):
        return f"tritensor.Size([{', '.join(str(d) for d in self)}])"

    def __getitem__(self, item):
        r = super().__getitem__(item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


class _Version:
    """A version counter shared by a tensor and its views (and detach() aliases)."""
    __slots__ = ("value",)
    inference = False

    def __init__(self):
        self.value = 0


INFERENCE_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
    "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
    "for more details.")


class _InferenceVersion(_Version):
    """The "counter" of an inference tensor (made under ``tt.inference_mode``): it tracks nothing,
    as torch's inference tensors keep no version counter. Writing it is an in-place update,
    allowed only inside inference mode; reading it gives 0 (the paths that must refuse an
    inference tensor check ``inference`` first: saving for backward, ``_version``)."""
    __slots__ = ()
    inference = True

    @property
    def value(self):
        return 0

    @value.setter
    def value(self, _):
        check_inference_inplace(self)


def check_inference_inplace(counter):
    """torch's error for an in-place write to an inference tensor outside inference mode."""
    if counter.inference and not _grad_state.inference:
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)


def _no_elements(shape, np_dtype):
    """An array with no elements standing for ``shape`` in a computation. NumPy refuses a shape
    whose non-zero dims multiply past its size limit, which torch allows (empty(0, 2**62)); its
    largest dims are then read as 1. An op over no elements cannot depend on them: an output
    that kept such a dim would either have no elements (nothing runs) or be too large to
    allocate (refused before any op runs)."""
    dims = list(shape)
    while True:
        try:
            return np.empty(dims, np_dtype)
        except ValueError:
            dims[dims.index(max(dims))] = 1


def contiguous_strides(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(strides))


def read_only(fget, name=None):
    """A property (of ``fget``, named ``name`` or fget's name; a decorator) that torch does not
    let one assign or delete: its AttributeError, word for word. A tensor's geometry (storage, shape, strides, offset, dtype) changes only through
    ``.data =``, ``resize_`` and ``set_``-like internals that keep it consistent: an assigned
    ``dtype`` would make every later read go past the end of the storage."""
    name = name or fget.__name__

    def refuse(self, value=None):
        raise AttributeError(f"attribute '{name}' of 'torch._C.TensorBase' objects is not writable")
    return property(fget, refuse, refuse)


class Tensor:
    __hash__ = object.__hash__   # comparison operators are elementwise; identity hashing, as torch
    # The cpu backend's NumPy view of this tensor (backends/numpy_ref._view), made on first use:
    # NumPy works faster on an array it has seen than on a new one. Only the ``data`` setter
    # changes a tensor's storage/shape/strides/offset/dtype, and it drops the view.
    _host_array = None
    # Forward AD's tangent at the open dual level (autograd/forward_ad.py); None for all while
    # no level is open (level exit drops every one)
    _fw_tangent = None

    # ---------------------------------------------------------------- construction
    def __new__(cls, *args, **kwargs):
        if args or kwargs:
            # torch.Tensor(data) / torch.Tensor(*sizes): the legacy float32 constructor.
            from .ops import creation
            if len(args) == 1 and not isinstance(args[0], int):
                return creation.tensor(args[0], dtype=_dt.float32, **kwargs)
            return creation.empty(*args, dtype=_dt.float32, **kwargs)
        return super().__new__(cls)

    @classmethod
    def _make(cls, storage, shape, strides, offset, dtype, version=None):
        t = object.__new__(cls)
        t._storage = storage
        # internal callers mostly pass a Size, a tuple and an int already: no conversion then
        t._shape = shape if type(shape) is Size else Size(shape)
        t._stride = strides if type(strides) is tuple else tuple(strides)
        t._offset = offset if type(offset) is int else int(offset)
        t._dtype = dtype
        if version is None:       # a fresh counter, without a Python __init__ call
            if _grad_state.inference:
                version = object.__new__(_InferenceVersion)
            else:
                version = object.__new__(_Version)
                version.value = 0
        t._version_counter = version
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._base = None
        t._view_version = None    # a view's version when its grad_fn was last set (None: not tracked)
        t._hooks = {}
        t._grad_accumulator = None
        t._retains_grad = False
        return t

    # ---------------------------------------------------------------- metadata
    # Read-only as torch's; the getters of the hot fields are C (attrgetter): no Python frame.
    dtype = read_only(_attrgetter("_dtype"), "dtype")
    shape = read_only(_attrgetter("_shape"), "shape")

    def size(self, dim=None):
        if dim is None:
            return self._shape
        return self._shape[self._wrap_dim(dim)]

    def stride(self, dim=None):
        if dim is None:
            return self._stride
        return self._stride[self._wrap_dim(dim)]

    def storage_offset(self):
        return self._offset

    def data_ptr(self):
        return self._storage.data_ptr() + self._offset * self.dtype.itemsize

    def untyped_storage(self):
        """torch's UntypedStorage of the bytes under this tensor: the same object for every tensor
        sharing them (while it is alive); ``data_ptr``, ``nbytes``, ``size``, ``tolist`` ..."""
        from .runtime.storage import UntypedStorage
        return UntypedStorage._of(self._storage)

    def storage(self):
        """torch's TypedStorage (deprecated there, with its warning): the storage's bytes read as
        this tensor's dtype."""
        from .runtime.storage import TypedStorage, UntypedStorage, warn_typed_storage_removal
        warn_typed_storage_removal()
        return TypedStorage(UntypedStorage._of(self._storage), self._dtype)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """No argument: the legacy type name ("torch.FloatTensor", "torch.cuda.LongTensor").
        Otherwise this tensor converted to the type a string, a legacy type (tt.DoubleTensor) or
        a dtype names; itself when that changes nothing (tritensor/_legacy.py)."""
        from ._legacy import tensor_type
        return tensor_type(self, dtype, non_blocking, **kwargs)

    def element_size(self):
        return self.dtype.itemsize

    def is_signed(self):
        """torch.Tensor.is_signed: the dtype's signedness (False for bool and the unsigned types)."""
        return self._dtype.is_signed

    def dim(self):
        return len(self._shape)

    ndimension = dim

    @read_only
    def ndim(self):
        return len(self._shape)

    def numel(self):
        return self._shape.numel()

    @read_only
    def itemsize(self):
        return self._dtype.itemsize

    @read_only
    def nbytes(self):
        """numel() * itemsize, as torch's (an expanded view counts every element it shows)."""
        return self._shape.numel() * self._dtype.itemsize

    nelement = numel

    @read_only
    def device(self):
        return self._storage.device

    @read_only
    def is_cuda(self):
        return self.device.type == "cuda"

    @read_only
    def is_cpu(self):
        return self.device.type == "cpu"

    # dense, strided, unquantized memory on a real device: every tensor here (but sparse ones:
    # tritensor/_sparse_tensor.py; _is_sparse_coo / _is_sparse_csr are read where a plain
    # attribute must decide)
    _is_sparse_coo = False
    _is_sparse_csr = False
    layout = read_only(lambda self: _strided, "layout")
    is_sparse = read_only(lambda self: False, "is_sparse")
    is_sparse_csr = read_only(lambda self: False, "is_sparse_csr")
    is_quantized = read_only(lambda self: False, "is_quantized")
    is_meta = read_only(lambda self: False, "is_meta")
    # torch's flags for the devices and layouts tritensor does not have (programs probe them on
    # their way in: ``if x.is_mps: ...``); always False here, read-only as torch's
    is_xpu = read_only(lambda self: False, "is_xpu")
    is_mps = read_only(lambda self: False, "is_mps")
    is_ipu = read_only(lambda self: False, "is_ipu")
    is_xla = read_only(lambda self: False, "is_xla")
    is_maia = read_only(lambda self: False, "is_maia")
    is_mtia = read_only(lambda self: False, "is_mtia")
    is_vulkan = read_only(lambda self: False, "is_vulkan")
    is_mkldnn = read_only(lambda self: False, "is_mkldnn")
    is_nested = read_only(lambda self: False, "is_nested")

    def get_device(self):
        return self.device.index if self.is_cuda else -1

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return False

    def is_contiguous(self, memory_format=_contiguous_format):
        """Row-major contiguity (size-1 dims ignored), or, for ``memory_format`` channels_last
        (channels_last_3d), NHWC (NDHWC) contiguity of a 4-D (5-D) tensor (torch's flags);
        preserve_format asks the row-major question, as in torch."""
        if memory_format is not _contiguous_format and memory_format is not _preserve_format:
            from .memory_formats import format_name
            from .ops._layout import is_contiguous_as
            return is_contiguous_as(format_name(memory_format, "is_contiguous", None), self._shape, self._stride)
        if 0 in self._shape:
            return True        # torch: every tensor with no elements is contiguous
        expected = 1
        for size, stride in zip(reversed(self._shape), reversed(self._stride)):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    def _wrap_dim(self, dim):
        n = max(self.dim(), 1)
        if not -n <= dim < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
        return dim % n

    def _type_description(self):
        kind = _dt.type_name(self.dtype)
        prefix = "torch.cuda." if self.is_cuda else "torch."
        return f"{prefix}{kind}Tensor [{', '.join(str(d) for d in self._shape)}]"

    # ---------------------------------------------------------------- host access
    def numpy(self, *, force=False):
        if self.device.type != "cpu" and not force:
            raise TypeError(
                f"can't convert {self.device.type}:{self.device.index} device type tensor to numpy. "
                "Use Tensor.cpu() to copy the tensor to host memory first.")
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self.device.type != "cpu":
            return self.cpu().numpy(force=True)
        if 0 in self._shape:       # NumPy's own error for a shape it cannot hold, as torch's
            return np.empty(self._shape, self._dtype.numpy_dtype)
        return self._host_view()

    def _host_view(self):
        """NumPy view of a host-backed tensor (cpu, or emulated cuda), sharing its memory."""
        if 0 in self._shape:
            return _no_elements(self._shape, self._dtype.numpy_dtype)
        return self._storage.element_view(self._dtype.numpy_dtype, self._shape, self._stride, self._offset)

    def _to_host_array(self):
        """A NumPy array with this tensor's values, from any device (a copy unless host-backed)."""
        if _graphs.CAPTURES and self._storage.device.type == "cuda":
            _graphs.check_not_capturing()     # .item(), .tolist(): a host read, not during a CUDA graph capture
        if self._storage.host is not None:
            if self._storage.device.type == "cuda":
                _device_errors.sync_point(self._storage.device.index)   # emulated: a real read waits here
            return self._host_view()
        src = self if self.is_contiguous() else self.contiguous()
        raw = src._storage.copy_to_host(src._offset * src.dtype.itemsize, src.numel() * src.dtype.itemsize)
        return raw.view(src.dtype.numpy_dtype).reshape(src._shape)

    def item(self):
        if _tracing.ACTIVE[0]:
            _tracing.warn_conversion("number")
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._to_host_array().reshape(-1)[0].item() if self.dtype is not _dt.bfloat16 \
            else float(self._to_host_array().reshape(-1)[0])

    def tolist(self):
        if _tracing.ACTIVE[0]:
            _tracing.warn_conversion("list")
        arr = self._to_host_array()
        if self.dtype is _dt.bfloat16:
            arr = arr.astype(np.float32)
        return arr.tolist()

    def __len__(self):
        if _tracing.ACTIVE[0]:
            _tracing.warn_shape_use("Using len to get tensor shape might cause the trace to be incorrect. Recommended "
                                    "usage would be tensor.shape[0]. Passing a tensor of different shape might lead "
                                    "to errors or silently give incorrect results.")
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if _tracing.ACTIVE[0]:
            _tracing.warn_shape_use("Iterating over a tensor might cause the trace to be incorrect. Passing a tensor "
                                    "of different shape won't change the number of iterations executed (and might "
                                    "lead to errors or silently give incorrect results).")
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def _scalar_value(self, what):
        if _tracing.ACTIVE[0] and not _tracing.state.suspended:
            _tracing.warn_conversion(_TRACED_AS[what], 4)
            _tracing.state.suspended += 1      # (item() itself warns no second time)
            try:
                return self._scalar_value(what)
            finally:
                _tracing.state.suspended -= 1
        if self.numel() != 1:
            if what == "Boolean value":
                raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __bool__(self):
        return bool(self._scalar_value("Boolean value"))

    def __float__(self):
        return float(self._scalar_value("float"))

    def __int__(self):
        v = int(self._scalar_value("int"))
        if v > 0x7FFFFFFFFFFFFFFF and self._dtype is _dt.uint64:      # a uint64 past int64: torch converts to int64_t and refuses
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return v

    def __complex__(self):
        return complex(self._scalar_value("complex"))

    def __index__(self):
        if _tracing.ACTIVE[0] and not _tracing.state.suspended:
            _tracing.warn_conversion("index")
            _tracing.state.suspended += 1      # (item() itself warns no second time)
            try:
                return self.__index__()
            finally:
                _tracing.state.suspended -= 1
        if self.dtype.is_floating_point or self.dtype is _dt.bool_ or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        v = int(self.item())
        if v > 0x7FFFFFFFFFFFFFFF:      # (uint64, as __int__)
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return v

    def __repr__(self):
        from ._format import format_tensor
        return format_tensor(self)

    __str__ = __repr__

    def __format__(self, format_spec):
        """torch's: a 0-d tensor formats as its Python number (``f"{loss:.4f}"``, and ``f"{t}"``
        is ``str(t.item())``); any other tensor only with an empty spec (its repr)."""
        if self.dim() == 0 and type(self) is Tensor:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    # As torch's: NumPy arrays and scalars defer their binary operators to the Tensor's reflected
    # ones, so np.float32(2) * t is a Tensor (not an ndarray) and ndarray @ t raises TypeError.
    __array_priority__ = 1000

    def __array__(self, dtype=None, copy=None):
        """np.asarray(t): Tensor.numpy() (torch's checks: a cpu tensor that requires no grad),
        then ``dtype``; ``copy=True`` (NumPy 2's protocol) asks for memory of its own."""
        arr = self.numpy()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def __reduce_ex__(self, proto):
        return (_rebuild, (self.detach().cpu().contiguous()._host_view().copy(), str(self.device), self.requires_grad))

    # ---------------------------------------------------------------- streams and zero-copy interop
    def record_stream(self, stream):
        """Keep this tensor's memory from being reused until the work queued on ``stream`` so
        far has completed (the caching allocator waits for an event before reusing the block)."""
        if self.device.type != "cuda":
            raise NotImplementedError(
                f"Could not run 'aten::record_stream' with arguments from the '{self.device.type.upper()}' backend.")
        self._storage.record_stream(stream)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        from .runtime.dlpack import tensor_dlpack
        return tensor_dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        from .runtime.dlpack import dlpack_device
        return dlpack_device(self)

    # ---------------------------------------------------------------- the Array API standard
    def __array_namespace__(self, /, *, api_version=None):
        """The Array API standard's namespace for this array: tritensor.array_api (versions
        2021.12 to 2024.12; ValueError for any other, as the standard says)."""
        from . import array_api
        if api_version is not None and api_version not in array_api.SUPPORTED_VERSIONS:
            raise ValueError(f"unsupported Array API version {api_version!r}: tritensor.array_api implements "
                             f"{', '.join(array_api.SUPPORTED_VERSIONS)}")
        return array_api

    def to_device(self, device, /, *, stream=None):
        """The standard's ``to_device``: this array on ``device`` (itself if already there)."""
        if stream is not None:
            raise ValueError("to_device(): tritensor copies on the current stream; stream must be None")
        return self.to(device)

    @property
    def __cuda_array_interface__(self):
        from .runtime.dlpack import cuda_array_interface
        return cuda_array_interface(self)

    # ---------------------------------------------------------------- autograd fields
    @read_only
    def _version(self):
        """torch's ``_version``: how many in-place writes this tensor's memory has seen (one
        counter shared by a tensor, its views and its detach()es)."""
        if self._version_counter.inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter.value

    def is_inference(self):
        """Whether this tensor was made under ``tt.inference_mode`` (torch.Tensor.is_inference)."""
        return self._version_counter.inference

    @property
    def requires_grad(self):
        return self._requires_grad or self.grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value):
        if type(value) is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if self.grad_fn is not None:
            if value:
                return   # a non-leaf in a graph requires grad already
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if value and not self.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        if value and self._version_counter.inference and not _grad_state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = value

    @requires_grad.deleter
    def requires_grad(self):
        raise RuntimeError("requires_grad must be a bool")

    def requires_grad_(self, requires_grad=True):
        if type(requires_grad) is not bool:
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be bool, "
                            f"not {type(requires_grad).__name__}")
        if requires_grad and self.grad_fn is None and not self.dtype.is_floating_point:
            # torch words the method's error differently from the attribute's (and the factories')
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @read_only
    def grad_fn(self):
        if self._view_version is not None and self._view_version != self._version_counter.value:
            # the base or another view of it changed in place since this view's history was set
            # (torch: the view's grad_fn is regenerated from its base's new history)
            from .ops.views import regenerate_grad_fn
            regenerate_grad_fn(self)
        return self._grad_fn

    @read_only
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value.device != self.device:
                raise RuntimeError("assigned grad has data located on a different device")
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @read_only
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None:
            return  # leaves keep their grad anyway
        self._retains_grad = True
        self.grad_fn._retain[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook):
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        handle = _HookHandle()
        if self.grad_fn is not None:
            hooks = self.grad_fn._pre_hooks.setdefault(self._output_nr, {})
        else:
            hooks = self._hooks
        hooks[handle.id] = hook
        handle._dicts = [hooks]
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after the backward has accumulated into this leaf's ``.grad``."""
        from .autograd.hooks import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from . import autograd
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        t = self._alias_detached()
        t._version_counter = self._version_counter   # detach() shares the version counter, as in torch
        return t

    def detach_(self):
        if self._base is not None and self._base.requires_grad:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self):
        t = self._alias_detached()
        t._version_counter = _Version()   # .data hides changes from autograd: a fresh counter
        return t

    @data.setter
    def data(self, other):
        """torch's set_data: this tensor takes ``other``'s memory and geometry (storage, shape,
        strides, offset, dtype) together, keeping its own autograd identity. Every device here
        is dense, so any device may be assigned (torch: compatible shallow-copy types)."""
        if not isinstance(other, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(other).__name__}")
        if self.requires_grad and not other._dtype.is_floating_point:
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        self._storage, self._shape, self._stride, self._offset, self._dtype = (
            other._storage, other._shape, other._stride, other._offset, other._dtype)
        self._host_array = None     # the cpu backend's cached view described the old geometry

    @data.deleter
    def data(self):
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    def _alias_detached(self):
        t = Tensor._make(self._storage, self._shape, self._stride, self._offset, self.dtype, self._version_counter)
        return t

    def _attached_to(self, node, output_nr):
        t = Tensor._make(self._storage, self._shape, self._stride, self._offset, self.dtype, self._version_counter)
        t._grad_fn = node        # the setter, inlined (every saved output unpacked comes here)
        t._output_nr = output_nr
        if _dual.ACTIVE[0]:      # the alias keeps the dual tensor's tangent (a composite's stand-in)
            from .autograd.forward_ad import carry
            carry(self, t)
        return t


_dt.register_tensor_type(Tensor)    # dtypes.result_type tells tensors from scalars by it


class _HookHandle:
    _next = 0

    def __init__(self):
        _HookHandle._next += 1
        self.id = _HookHandle._next
        self._dicts = []

    def remove(self):
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _rebuild(array, device, requires_grad):
    from .ops import creation
    t = creation.tensor(array, device=device)
    t.requires_grad_(requires_grad)
    return t
