"""``tt.ops.aten``: the ATen operators torch exposes as ``torch.ops.aten.<name>.<overload>`` that
have no public function of their own. op_db lists ``slice`` (aten.slice.Tensor): the view
torch's basic indexing makes along one dim; ``_safe_softmax`` (softmax with fully -inf slices
giving zeros), ``native_dropout_backward`` (dropout's gradient) and
``max_pool2d_with_indices_backward`` (max_pool2d's input gradient), ``_flash_attention_forward``
and ``_efficient_attention_forward`` (the fused attention kernels in torch's sequence-major
layout). Each is a packet callable as its default overload, with the overloads as attributes
(``tt.ops.aten.slice.Tensor(x, 1, 0, 2)``,
``tt.ops.aten._safe_softmax.default(x, 1)``). The packets are listed here one by one: an aten
operator exists in tritensor only where one is written with torch's schema."""
from __future__ import annotations

from .attention import efficient_attention_forward_aten as _efficient_attention_forward_fn
from .attention import flash_attention_forward_aten as _flash_attention_forward_fn
from .nn import native_dropout_backward as _native_dropout_backward
from .pool import max_pool2d_with_indices_backward as _max_pool2d_with_indices_backward
from .rnn import fused_gru_cell as _fused_gru_cell
from .rnn import fused_lstm_cell as _fused_lstm_cell
from .softmax import safe_softmax as _safe_softmax_fn
from .view_copies import slice_tensor


class _Packet:
    """An operator and its overloads, as torch.ops.aten.<name> is an OpOverloadPacket."""

    def __init__(self, name, **overloads):
        self.__name__ = name
        self._default = next(iter(overloads.values()))
        for overload, fn in overloads.items():
            setattr(self, overload, fn)

    def __call__(self, *args, **kwargs):
        return self._default(*args, **kwargs)

    def __repr__(self):
        return f"<tt.ops.aten.{self.__name__}>"


slice = _Packet("slice", Tensor=slice_tensor, default=slice_tensor)  # noqa: A001  (aten's name)
_safe_softmax = _Packet("_safe_softmax", default=_safe_softmax_fn)
native_dropout_backward = _Packet("native_dropout_backward", default=_native_dropout_backward)
max_pool2d_with_indices_backward = _Packet("max_pool2d_with_indices_backward",
                                           default=_max_pool2d_with_indices_backward)
_thnn_fused_lstm_cell = _Packet("_thnn_fused_lstm_cell", default=_fused_lstm_cell)
_thnn_fused_gru_cell = _Packet("_thnn_fused_gru_cell", default=_fused_gru_cell)
_flash_attention_forward = _Packet("_flash_attention_forward", default=_flash_attention_forward_fn)
_efficient_attention_forward = _Packet("_efficient_attention_forward", default=_efficient_attention_forward_fn)
