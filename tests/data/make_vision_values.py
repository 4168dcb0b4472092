"""Records the resize values tests/test_vision.py checks tritensor.vision.transforms against:
torch 2.13's F.interpolate (what torchvision's Resize runs on tensors) on a fixed (1, 4, 5)
image. Run in /work/torchenv (torch, no torchvision needed); prints the literals pasted into the
test (tritensor's tests never import torch).

    /work/torchenv/bin/python tests/data/make_vision_values.py
"""
import numpy as np
import torch
import torch.nn.functional as F


def image():
    return ((np.arange(20, dtype=np.float64).reshape(1, 4, 5) * 7) % 13) / 4.0


def main():
    x = torch.tensor(image())[None]
    for name, kwargs, size in (("shrink_antialias", dict(mode="bilinear", antialias=True), (3, 2)),
                               ("grow_bilinear", dict(mode="bilinear", antialias=False), (6, 7)),
                               ("shrink_bilinear", dict(mode="bilinear", antialias=False), (3, 2)),
                               ("nearest", dict(mode="nearest"), (3, 7))):
        if kwargs["mode"] == "bilinear":
            kwargs["align_corners"] = False
        out = F.interpolate(x, size=size, **kwargs)[0]
        print(f"    {name!r}: ({size}, {np.round(out.numpy(), 6).tolist()}),")


if __name__ == "__main__":
    main()
