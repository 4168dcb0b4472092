"""nn.parallel.DistributedDataParallel (torch.nn.parallel.distributed): one process per device,
the model replicated, the gradients averaged over the ranks during backward.

How the gradients travel (torch's Reducer, written in Python):
- at construction, rank 0's parameters and buffers are broadcast, so every replica starts equal;
- the parameters are grouped into buckets in reverse registration order (the order their
  gradients tend to become ready in backward): the first bucket holds up to ``1 MiB``, the next
  ones up to ``bucket_cap_mb`` (25 MiB), one dtype and device per bucket;
- a post-accumulate-grad hook per parameter marks it ready; when every parameter of the next
  bucket is ready its gradients are copied into one flat tensor, divided by the world size and
  all-reduced asynchronously (``async_op=True``) while backward goes on; buckets are launched in
  index order, the same order on every rank, as collectives require;
- at the end of the backward (the engine's queued callbacks) every all-reduce is waited on and the
  averaged values are written back into ``.grad`` (or ``.grad`` becomes a view of the bucket,
  ``gradient_as_bucket_view=True``).
``no_sync()`` skips all of this: gradients accumulate locally and the first backward outside it
reduces the sum. ``find_unused_parameters=True`` walks the output's graph after forward; the
parameters it does not reach are marked ready at once (their share is zero), and a parameter no
rank used keeps its ``.grad``.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024      # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
_DEFAULT_BUCKET_CAP_MB = 25

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function outputs participate "
    "in calculating loss. \nIf you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` function. Please include the "
    "loss function and the structure of the return value of `forward` of your module when reporting this issue "
    "(e.g. list, dict, iterable).\nParameter indices which did not receive grad for rank {rank}: {indices}")


def _dist():
    from ... import distributed
    return distributed


def _tensors_in(obj):
    from ...tensor import Tensor
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors_in(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors_in(o)


def _reachable_leaves(outputs):
    """ids of the leaf tensors the outputs' autograd graph reaches (AccumulateGrad variables)."""
    from ...autograd.graph import AccumulateGrad
    seen, found = set(), set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    for t in outputs:
        if t.grad_fn is None and t.requires_grad:
            found.add(id(t))
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            found.add(id(node.variable))
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return found


def _assign_buckets(params, first_cap, cap):
    """torch's compute_bucket_assignment_by_size over ``params`` (indices into it), one running
    bucket per (dtype, device), closed once its size reaches the current limit."""
    result, running = [], {}
    for i in reversed(range(len(params))):
        p = params[i]
        key = (p.dtype, str(p.device))
        b = running.setdefault(key, {"idx": [], "size": 0, "limit": first_cap})
        b["idx"].append(i)
        b["size"] += p.numel() * p.element_size()
        if b["size"] >= b["limit"]:
            result.append(b["idx"])
            running[key] = {"idx": [], "size": 0, "limit": cap}
    result.extend(b["idx"] for b in running.values() if b["idx"])
    # buckets in the order their gradients become ready: by their largest (latest) index
    result.sort(key=lambda idx: -max(idx))
    return result


class _Bucket:
    __slots__ = ("indices", "offsets", "numel", "pending", "flat", "work", "dtype", "device")

    def __init__(self, indices, params):
        self.indices = indices
        self.offsets, n = [], 0
        for i in indices:
            self.offsets.append(n)
            n += params[i].numel()
        self.numel = n
        self.dtype, self.device = params[indices[0]].dtype, params[indices[0]].device
        self.pending = len(indices)
        self.flat = None
        self.work = None


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel on tt.distributed's process group."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        dist = _dist()
        if device_mesh is not None or mixed_precision is not None or delay_all_reduce_named_params is not None \
                or param_to_hook_all_reduce is not None:
            raise NotImplementedError("tt.nn.parallel.DistributedDataParallel: device_mesh, mixed_precision and "
                                      "delayed/hooked all-reduce are not implemented")
        self.module = module
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        devices = {p.device for p in module.parameters()}
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if any(d.type == "cpu" for d in devices) and (device_ids is not None or output_device is not None):
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with single-device/"
                f"multiple-device GPU modules or CPU modules, but got device_ids {device_ids}, output_device "
                f"{output_device}, and module parameters {devices}.")
        from .data_parallel import _device_index
        self.device_ids = None if device_ids is None else [_device_index(d) for d in device_ids]
        self.output_device = output_device
        self.dim = dim
        self.process_group = process_group if process_group is not None else dist.distributed_c10d._default()
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((_DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._params = params
        self._world = dist.get_world_size(self.process_group)
        self._rank = dist.get_rank(self.process_group)
        if init_sync:
            self._sync_module_states()
        first_cap = min(_DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)
        self._buckets = [_Bucket(idx, params) for idx in _assign_buckets(params, first_cap, self.bucket_bytes_cap)]
        self._locator = {}
        for b, bucket in enumerate(self._buckets):
            for j, i in enumerate(bucket.indices):
                self._locator[i] = (b, j)
        self._ready = [False] * len(params)
        self._unused = []            # indices found unreachable after the last forward
        self._require_finalize = False
        self._expect_hooks = False
        self._next_bucket = 0
        self._callback_queued = False
        self._hook_handles = [p.register_post_accumulate_grad_hook(self._hook_for(i)) for i, p in enumerate(params)]

    # ------------------------------------------------------------------ construction
    def _sync_module_states(self):
        from ...autograd.grad_mode import no_grad
        dist = _dist()
        with no_grad():
            for t in list(self.module.parameters()) + list(self.module.buffers()):
                dist.broadcast(t.detach(), 0, group=self.process_group)

    # ------------------------------------------------------------------ forward
    @contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside; the first backward after it all-reduces them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def forward(self, *inputs, **kwargs):
        from ...autograd.grad_mode import is_grad_enabled
        grad = is_grad_enabled()
        if grad and self._require_finalize:
            missing = [i for i, r in enumerate(self._ready) if not r]
            raise RuntimeError(_UNFINISHED.format(rank=self._rank, indices=missing))
        if self.broadcast_buffers and self.require_forward_param_sync:
            bufs = list(self.module.buffers())
            if bufs:
                from ...autograd.grad_mode import no_grad
                with no_grad():
                    for b in bufs:
                        _dist().broadcast(b.detach(), 0, group=self.process_group)
        if self.device_ids:
            from .data_parallel import scatter_kwargs
            inputs, kwargs = scatter_kwargs(inputs, kwargs, self.device_ids, self.dim)
            inputs, kwargs = (inputs[0] if inputs else ()), (kwargs[0] if kwargs else {})
        output = self.module(*inputs, **kwargs)
        if grad and self.require_backward_grad_sync:
            self._prepare_for_backward(output)
        else:
            self._expect_hooks = False
        return output

    def _prepare_for_backward(self, output):
        self._expect_hooks = True
        self._ready = [False] * len(self._params)
        self._next_bucket = 0
        self._callback_queued = False
        for b in self._buckets:
            b.pending, b.flat, b.work = len(b.indices), None, None
        if self.find_unused_parameters:
            reached = _reachable_leaves(list(_tensors_in(output)))
            self._unused = [i for i, p in enumerate(self._params) if id(p) not in reached]
        else:
            self._unused = []

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("tt.nn.parallel.DistributedDataParallel.register_comm_hook is not implemented: "
                                  "buckets are averaged by all_reduce (torch's default hook)")

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        raise NotImplementedError("tt.nn.parallel.DistributedDataParallel.join (uneven inputs) is not implemented: "
                                  "give every rank the same number of batches (DistributedSampler does)")

    # ------------------------------------------------------------------ backward
    def _hook_for(self, index):
        def hook(param):
            if not self._expect_hooks or not self.require_backward_grad_sync:
                return      # no_sync(), or a backward through a forward that did not prepare one
            if not self._callback_queued:
                from ...autograd.engine import queue_callback
                self._callback_queued = True
                queue_callback(self._finalize)
                for i in self._unused:
                    self._mark_ready(i)
            if self._ready[index]:
                raise RuntimeError(
                    "Expected to mark a variable ready only once. This error is caused by one of the following "
                    "reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model "
                    "parameters are not shared across multiple concurrent forward-backward passes. or try to use "
                    "_set_static_graph() as a workaround if this module graph does not change during training "
                    "loop.2) Reused parameters in multiple reentrant backward passes. For example, if you use "
                    "multiple `checkpoint` functions to wrap the same part of your model, it would result in the "
                    "same set of parameters been used by different reentrant backward passes multiple times, and "
                    "hence marking a variable ready multiple times. DDP does not support such use cases in default. "
                    "You can try to use _set_static_graph() as a workaround if your module graph does not change "
                    f"over iterations.\nParameter at index {index} has been marked as ready twice. This means that "
                    "multiple autograd engine  hooks have fired for this particular parameter during this iteration.")
            self._mark_ready(index)
            # MPI moves a nonblocking collective on only inside MPI calls: test the buckets in
            # flight, so that they progress while backward computes (the overlap)
            for b in self._buckets[: self._next_bucket]:
                if b.work is not None:
                    b.work.is_completed()
        return hook

    def _mark_ready(self, index):
        self._require_finalize = True
        self._ready[index] = True
        b, _ = self._locator[index]
        self._buckets[b].pending -= 1
        # launch every bucket, in index order, whose parameters are all ready
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1

    def _launch(self, bucket):
        from ... import cat, zeros
        from ...autograd.grad_mode import no_grad
        with no_grad():
            parts = []
            for i in bucket.indices:
                p = self._params[i]
                g = p.grad
                parts.append(zeros(p.numel(), dtype=bucket.dtype, device=bucket.device) if g is None
                             else g.detach().reshape(-1))
            flat = cat(parts) if len(parts) > 1 else parts[0].clone()
            flat.div_(self._world)                 # torch's default hook: divide, then sum
            bucket.flat = flat
            bucket.work = _dist().all_reduce(flat, group=self.process_group, async_op=True)

    def _finalize(self):
        from ...autograd.grad_mode import no_grad
        self._expect_hooks = False
        if self._next_bucket < len(self._buckets):
            # some parameter got no gradient: leave the state for forward's error
            return
        used = None
        if self.find_unused_parameters:
            from ... import int32, tensor as make_tensor
            unused = set(self._unused)
            used = make_tensor([0 if i in unused else 1 for i in range(len(self._params))], dtype=int32)
            _dist().all_reduce(used, group=self.process_group)
            used = used.tolist()
        with no_grad():
            for bucket in self._buckets:
                bucket.work.wait()
                for i, off in zip(bucket.indices, bucket.offsets):
                    if used is not None and used[i] == 0:
                        continue            # no rank used it: its .grad is left as it was
                    p = self._params[i]
                    view = bucket.flat[off: off + p.numel()].view(p.shape)
                    if self.gradient_as_bucket_view or p.grad is None:
                        p.grad = view
                    else:
                        p.grad.copy_(view)
                bucket.work = None
        self._require_finalize = False

