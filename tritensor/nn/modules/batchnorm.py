"""BatchNorm1d/2d/3d and SyncBatchNorm, as torch.nn.modules.batchnorm.

_NormBase holds what batch norm and instance norm share (torch's own split): the affine
parameters, the running statistics as buffers with torch's state_dict keys (weight, bias,
running_mean, running_var, num_batches_tracked), reset_running_stats/reset_parameters, the repr,
and the loading of checkpoints older than num_batches_tracked (version < 2).
"""
from __future__ import annotations

from ... import dtypes as _dt
from ...ops.creation import empty, ones, tensor, zeros
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Common base of _InstanceNorm and _BatchNorm."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(empty(num_features, **factory_kwargs))
            if bias:
                self.bias = Parameter(empty(num_features, **factory_kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **factory_kwargs))
            self.register_buffer("running_var", ones(num_features, **factory_kwargs))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_dt.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__, use_bias=self.bias is not None))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # at version 2: added num_batches_tracked buffer; this should have a default value of 0
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                                   else tensor(0, dtype=_dt.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        # exponential_average_factor is self.momentum, set to 0 (when it is available) only so
        # that it gets updated in ONNX graph when this node is exported to ONNX (torch's comment)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is not None:
                self.num_batches_tracked.add_(1)
                if self.momentum is None:     # cumulative moving average
                    exponential_average_factor = 1.0 / float(self.num_batches_tracked)
                else:                         # exponential moving average
                    exponential_average_factor = self.momentum
        # mini-batch statistics in training, and in eval when there are no running buffers
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        # the buffers are passed when they are updated (training and tracked) or used (eval)
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_buffers else None,
                            self.running_var if use_buffers else None, self.weight, self.bias, bn_training,
                            exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over a 2-D (N, C) or 3-D (N, C, L) input."""

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over a 4-D (N, C, H, W) input."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch norm over a 5-D (N, C, D, H, W) input."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


# ------------------------------------------------------------------ SyncBatchNorm
def _all_reduce_sum(t, group):
    """A differentiable all-reduce (sum): its backward all-reduces the gradient too, so each
    rank's input receives the gradient of every rank's loss through the shared statistics."""
    from ...autograd.function import Function
    from ... import distributed as dist

    class _AllReduceSum(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.clone()
            dist.all_reduce(y, group=group)
            return y

        @staticmethod
        def backward(ctx, g):
            g = g.clone()
            dist.all_reduce(g, group=group)
            return g

    return _AllReduceSum.apply(t)


def _sync_batch_norm(input, weight, bias, running_mean, running_var, eps, momentum, group):
    """Batch norm over the batch of every rank of ``group``: the per-channel count, sum and sum
    of squares are all-reduced in one collective; running statistics take the unbiased variance
    of the whole batch, as torch's sync_batch_norm."""
    from ... import cat, no_grad
    dims = [0] + list(range(2, input.dim()))
    c = input.shape[1]
    count = input.numel() // c
    local = cat([input.sum(dims), (input * input).sum(dims), input.new_full((1,), float(count))])
    total = _all_reduce_sum(local, group)
    n = total[2 * c]
    mean = total[:c] / n
    var = (total[c: 2 * c] / n - mean * mean).clamp(min=0)
    shape = [1, c] + [1] * (input.dim() - 2)
    out = (input - mean.view(shape)) * (var + eps).rsqrt().view(shape)
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    if running_mean is not None:
        with no_grad():
            nn_ = float(n.item())
            running_mean.mul_(1 - momentum).add_(mean.detach().to(running_mean.dtype) * momentum)
            unbiased = var.detach() * (nn_ / max(nn_ - 1, 1))
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
    return out


class SyncBatchNorm(_BatchNorm):
    """torch.nn.SyncBatchNorm: in training under an initialized process group of more than one
    rank, the batch statistics are those of the whole distributed batch (GPU inputs, as torch);
    otherwise (eval, a world of one, no process group) plain batch norm."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        from ... import distributed as dist
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                exponential_average_factor = 1.0 / float(self.num_batches_tracked)
            else:
                exponential_average_factor = self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        running_mean = self.running_mean if not self.training or self.track_running_stats else None
        running_var = self.running_var if not self.training or self.track_running_stats else None
        need_sync = bn_training and self.training and dist.is_available() and dist.is_initialized()
        if need_sync:
            if input.device.type != "cuda":
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
            group = self.process_group if self.process_group else dist.group.WORLD
            need_sync = dist.get_world_size(group) > 1
        if not need_sync:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training,
                                exponential_average_factor, self.eps)
        return _sync_batch_norm(input, self.weight, self.bias, running_mean, running_var, self.eps,
                                exponential_average_factor, group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Every BatchNorm*d of ``module`` replaced by a SyncBatchNorm sharing its parameters and
        buffers (a BatchNorm module itself is returned converted)."""
        from ... import no_grad
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                          module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
