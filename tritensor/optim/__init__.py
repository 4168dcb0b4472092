"""tt.optim: optimizers and learning-rate schedulers with torch's names and semantics.

On the cpu device the update rules run with NumPy; on cuda each step updates every parameter
of a group with one fused (multi-tensor) Triton launch per dtype (kernels/optim.py)."""
from . import lr_scheduler
from .adam import Adam
from .adamw import AdamW
from .optimizer import (Optimizer, register_optimizer_step_post_hook, register_optimizer_step_pre_hook,
                        required)
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler", "required",
           "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]
