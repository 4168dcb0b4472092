"""tt.optim: optimizers and learning-rate schedulers with torch's names and semantics.

The optimizers torch fuses (SGD, Adam, AdamW, Adagrad; RMSprop too) run with NumPy on the cpu
device and, on cuda, update every parameter of a group with one fused (multi-tensor) Triton
launch per dtype (kernels/optim.py). The others (Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop)
run torch's per-tensor update in tritensor ops (_rules.py), on any device."""
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import (Optimizer, register_optimizer_step_post_hook, register_optimizer_step_pre_hook,
                        required)
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "ASGD", "Rprop", "SparseAdam", "LBFGS", "lr_scheduler", "swa_utils", "required",
           "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]
