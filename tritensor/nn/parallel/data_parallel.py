"""nn.DataParallel (torch.nn.parallel.data_parallel): one process, several GPUs.

Each forward scatters the inputs along ``dim`` over ``device_ids``, replicates the module onto
every device, runs the replicas in threads (parallel_apply) and gathers the outputs onto
``output_device``. Every step is made of differentiable tritensor ops (chunk, ``Tensor.to``,
cat), so backward runs through them: a replica's parameter is its original copied to the
replica's device (``to``), hence the gradients of all replicas add up in the original
parameter's ``.grad``, as torch's Broadcast/ReduceAddCoalesced functions make them.
"""
from __future__ import annotations

import threading
import traceback
import warnings
from itertools import chain

from ...runtime.device import as_device, device_count, is_available
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel", "scatter", "scatter_kwargs", "gather", "replicate", "parallel_apply"]


def _tensor_type():
    from ...tensor import Tensor
    return Tensor


def _device_index(device):
    """torch's _get_device_index(device, optional=True) for cuda devices: int or 'cuda:i'."""
    if isinstance(device, int):
        return device
    d = as_device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return 0 if d.index is None else d.index


# ------------------------------------------------------------------ scatter / gather
def scatter(inputs, target_gpus, dim=0):
    """Tensors chunked along ``dim`` (one chunk per device, fewer when the dimension is short);
    tuples, lists and dicts scattered element-wise; anything else repeated per device."""
    Tensor = _tensor_type()

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            chunks = obj.chunk(len(target_gpus), dim)
            return [c.to(f"cuda:{g}") for c, g in zip(chunks, target_gpus)]
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    try:
        return scatter_map(inputs)
    finally:
        scatter_map = None  # noqa: F841  (breaks the closure's reference cycle, as torch)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """Scatter positional and keyword inputs; the shorter list is padded with empty ones."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):  # torch compares with len(inputs), kept
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Outputs of the replicas concatenated along ``dim`` on ``target_device`` (0-d tensors
    become a vector, with torch's warning); dicts and sequences gathered element-wise."""
    Tensor = _tensor_type()
    target = "cpu" if target_device == -1 else (f"cuda:{target_device}" if isinstance(target_device, int)
                                                else target_device)

    def gather_map(outs):
        out = outs[0]
        if isinstance(out, Tensor):
            from ... import cat
            if all(t.dim() == 0 for t in outs) and dim == 0:
                warnings.warn("Was asked to gather along dimension 0, but all input tensors were scalars; "
                              "will instead unsqueeze and return a vector.")
                outs = [t.view(1) for t in outs]
            return cat([t.to(target) for t in outs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if isinstance(out, tuple) and hasattr(out, "_fields"):
            return type(out)._make(map(gather_map, zip(*outs)))
        return type(out)(map(gather_map, zip(*outs)))

    try:
        return gather_map(outputs)
    finally:
        gather_map = None  # noqa: F841


# ------------------------------------------------------------------ replicate
def _replica_of(module):
    """A shallow copy sharing everything but the parameter/buffer/child dictionaries
    (torch's Module._replicate_for_data_parallel)."""
    hook = getattr(type(module), "_replicate_for_data_parallel", None)
    if hook is not None:
        module._replicate_for_data_parallel()  # lazy modules refuse here, with torch's message
    replica = type(module).__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    replica.__dict__["_parameters"] = dict(module._parameters)
    replica.__dict__["_buffers"] = dict(module._buffers)
    replica.__dict__["_modules"] = dict(module._modules)
    replica.__dict__["_is_replica"] = True
    return replica


def replicate(network, devices, detach=False):
    """One copy of ``network`` per device. Parameters are ``to(device)`` copies of the originals
    (differentiable unless ``detach``), buffers copies that keep their requires_grad; replica 0
    on the source device shares the original tensors, as torch's broadcast does."""
    devices = [_device_index(d) for d in devices]
    modules = list(network.modules())
    index_of = {id(m): i for i, m in enumerate(modules)}
    replicas = [[_replica_of(m) for m in modules] for _ in devices]

    def copy_to(t, dev):
        if t is None:
            return None
        out = t.to(f"cuda:{dev}")
        if detach or (not t.requires_grad and out is not t):
            out = out.detach()
        return out

    for j, dev in enumerate(devices):
        for i, m in enumerate(modules):
            r = replicas[j][i]
            for name, p in m._parameters.items():
                r._parameters[name] = copy_to(p, dev)
            for name, b in m._buffers.items():
                r._buffers[name] = copy_to(b, dev)
            for name, child in m._modules.items():
                r._modules[name] = None if child is None else replicas[j][index_of[id(child)]]
    return [rs[0] for rs in replicas]


# ------------------------------------------------------------------ parallel_apply
class _ExceptionWrapper:
    """An exception caught in a worker thread, re-raised in the caller with its traceback
    (torch._utils.ExceptionWrapper)."""

    def __init__(self, exc, where):
        self.exc_type = type(exc)
        self.msg = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.msg}"
        if self.exc_type is KeyError:
            raise KeyError(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """``modules[i](*inputs[i], **kwargs_tup[i])`` for every i, in one thread each (grad and
    autocast modes of the caller carried into the threads); a failure re-raised in the caller."""
    from ...amp.autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled
    from ...autograd.grad_mode import is_grad_enabled, set_grad_enabled
    from ...runtime.device import cuda_device

    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs {len(inputs)}")
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    elif len(modules) != len(kwargs_tup):
        raise AssertionError("The number of modules does not match the number of kwargs")
    if devices is None:
        devices = [None] * len(modules)
    elif len(modules) != len(devices):
        raise AssertionError("The number of modules does not match the number of devices")
    devices = [None if d is None else _device_index(d) for d in devices]
    grad_enabled = is_grad_enabled()
    autocast_on, autocast_dtype = is_autocast_enabled("cuda"), get_autocast_dtype("cuda")
    results = {}
    lock = threading.Lock()

    def worker(i, module, inp, kwargs, device):
        Tensor = _tensor_type()
        if device is None:
            first = next((t for t in _tensors(inp) if isinstance(t, Tensor) and t.is_cuda), None)
            device = 0 if first is None else first.get_device()
        try:
            with set_grad_enabled(grad_enabled), cuda_device(device), \
                    autocast("cuda", dtype=autocast_dtype, enabled=autocast_on):
                if not isinstance(inp, (list, tuple)):
                    inp = (inp,)
                out = module(*inp, **kwargs)
            with lock:
                results[i] = out
        except Exception as e:  # noqa: BLE001  (carried to the caller)
            with lock:
                results[i] = _ExceptionWrapper(e, f"in replica {i} on device {device}")

    if len(modules) > 1:
        threads = [threading.Thread(target=worker, args=args)
                   for args in zip(range(len(modules)), modules, inputs, kwargs_tup, devices)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        worker(0, modules[0], inputs[0], kwargs_tup[0], devices[0])
    outputs = []
    for i in range(len(inputs)):
        out = results[i]
        if isinstance(out, _ExceptionWrapper):
            out.reraise()
        outputs.append(out)
    return outputs


def _tensors(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors(o)
    else:
        yield obj


# ------------------------------------------------------------------ the module
def _check_balance(device_ids):
    # the emulated device's GPUs are identical; a real machine's are compared on memory and SMs
    from ...cuda import get_device_properties
    imbalance_warn = ("There is an imbalance between your GPUs. You may want to exclude GPU {} which\n"
                      "has less than 75% of the memory or cores of GPU {}. You can do so by setting\n"
                      "the device_ids argument to DataParallel, or by setting the CUDA_VISIBLE_DEVICES\n"
                      "environment variable.")
    props = [get_device_properties(i) for i in device_ids]
    for key in ("total_memory", "multi_processor_count"):
        values = [getattr(p, key) for p in props]
        lo, hi = min(range(len(values)), key=values.__getitem__), max(range(len(values)), key=values.__getitem__)
        if values[lo] / values[hi] < 0.75:
            warnings.warn(imbalance_warn.format(device_ids[lo], device_ids[hi]))
            return


class DataParallel(Module):
    """torch.nn.DataParallel: ``module`` applied to slices of the batch on several GPUs of one
    process, the outputs gathered on ``output_device``. Without a GPU, a plain call of
    ``module``. (DistributedDataParallel, one process per GPU, is faster, as in torch.)"""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(x) for x in device_ids]
        self.output_device = _device_index(output_device) if output_device not in (-1, "cpu") else -1
        self.src_device_obj = as_device(f"cuda:{self.device_ids[0]}")
        _check_balance(self.device_ids)
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError("module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of them on device: {t.device}")
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[: len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids, not _grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[: len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def _grad_enabled():
    from ...autograd.grad_mode import is_grad_enabled
    return is_grad_enabled()


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """torch.nn.parallel.data_parallel: DataParallel's forward as a function."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not is_available():
        return module(*inputs, **(module_kwargs or {}))
    if device_ids is None:
        device_ids = list(range(device_count()))
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_device_index(x) for x in device_ids]
    output_device = _device_index(output_device)
    src_device_obj = as_device(f"cuda:{device_ids[0]}")
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src_device_obj:
            raise RuntimeError("module must have its parameters and buffers on device "
                               f"{src_device_obj} (device_ids[0]) but found one of them on device: {t.device}")
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used_device_ids = device_ids[: len(inputs)]
    replicas = replicate(module, used_device_ids)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used_device_ids)
    return gather(outputs, output_device, dim)
