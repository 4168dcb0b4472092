"""tt.amp: automatic mixed precision (torch.amp): ``autocast`` and ``GradScaler``.

    scaler = tt.amp.GradScaler("cuda")
    for x, y in loader:
        with tt.autocast("cuda"):              # matmuls in float16, losses in float32
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()          # a scaled loss keeps float16 gradients from underflowing
        scaler.step(optimizer)                 # unscale (one fused launch per dtype), skip on inf/NaN
        scaler.update()                        # grow or back off the scale
"""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler, OptState  # noqa: F401

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
