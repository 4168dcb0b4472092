# Replaces pytorch/examples super_resolution/data.py (and dataset.py), which download BSDS300 and read
# its 256 x 256 crops with Pillow: here a few synthetic smooth grayscale images (no network in CI),
# cropped to CROP_SIZE so the program runs in seconds on cpu. The pairs are as the original's: the
# input is the target image shrunk by the upscale factor (area averaging in place of Resize).
import math

import tritensor as torch
import tritensor.nn.functional as F
from tritensor.utils.data import TensorDataset

CROP_SIZE = 24


def calculate_valid_crop_size(crop_size, upscale_factor):
    return crop_size - (crop_size % upscale_factor)


def _pairs(count, upscale_factor, seed):
    size = calculate_valid_crop_size(CROP_SIZE, upscale_factor)
    g = torch.Generator().manual_seed(seed)
    freq = torch.rand(count, 2, generator=g) * 3 + 1
    phase = torch.rand(count, 1, 1, generator=g) * 2 * math.pi
    y = torch.linspace(0, 1, size).view(1, size, 1)
    x = torch.linspace(0, 1, size).view(1, 1, size)
    target = 0.5 + 0.25 * (torch.sin(freq[:, :1, None] * 2 * math.pi * y + phase)
                           + torch.cos(freq[:, 1:, None] * 2 * math.pi * x))
    target = target.unsqueeze(1)                                   # (count, 1, size, size), in [0, 1]
    input = F.avg_pool2d(target, upscale_factor)
    return TensorDataset(input, target)


def get_training_set(upscale_factor):
    return _pairs(8, upscale_factor, seed=0)


def get_test_set(upscale_factor):
    return _pairs(4, upscale_factor, seed=1)
