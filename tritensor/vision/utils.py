"""tt.vision.utils: torchvision.utils' make_grid and save_image.

make_grid tiles a batch of images (B x C x H x W, or a list of C x H x W) into one C x H' x W'
image, nrow to a row with ``padding`` pixels of ``pad_value`` between them, optionally scaled to
[0, 1] (torchvision's ``normalize``/``value_range``/``scale_each``). save_image writes that grid
with Pillow, as torchvision does (values in [0, 1] rounded to 0..255): Pillow is the ``vision``
extra, and without it save_image raises ImportError.
"""
from __future__ import annotations

import math
import warnings

__all__ = ["make_grid", "save_image"]


def _tt():
    import tritensor as tt
    return tt


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0,
              **kwargs):
    """torchvision.utils.make_grid: a grid of the images of ``tensor`` (see the module docstring).
    Single-channel images are repeated to three channels; a batch of one is returned as it is."""
    tt = _tt()
    with tt.no_grad():
        if not (tt.is_tensor(tensor) or (isinstance(tensor, list) and all(tt.is_tensor(t) for t in tensor))):
            raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
        if "range" in kwargs:
            warnings.warn("The parameter 'range' is deprecated since 0.12 and will be removed in 0.14. "
                          "Please use 'value_range' instead.")
            value_range = kwargs["range"]
        if isinstance(tensor, list):
            tensor = tt.stack(tensor, dim=0)
        if tensor.dim() == 2:                    # one H x W image
            tensor = tensor.unsqueeze(0)
        if tensor.dim() == 3:                    # one C x H x W image
            if tensor.size(0) == 1:
                tensor = tt.cat((tensor, tensor, tensor), 0)
            tensor = tensor.unsqueeze(0)
        if tensor.dim() == 4 and tensor.size(1) == 1:
            tensor = tt.cat((tensor, tensor, tensor), 1)

        if normalize is True:
            tensor = tensor.clone()              # the caller's images are left as they are
            if value_range is not None and not isinstance(value_range, tuple):
                raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")

            def norm_ip(img, low, high):
                img.clamp_(min=low, max=high)
                img.sub_(low).div_(max(high - low, 1e-5))

            def norm_range(t):
                if value_range is not None:
                    norm_ip(t, value_range[0], value_range[1])
                else:
                    norm_ip(t, float(t.min()), float(t.max()))

            if scale_each is True:
                for t in tensor:                 # each image of the batch on its own range
                    norm_range(t)
            else:
                norm_range(tensor)

        if not tt.is_tensor(tensor):
            raise TypeError("tensor should be of type torch.Tensor")
        if tensor.size(0) == 1:
            return tensor.squeeze(0)

        nmaps = tensor.size(0)
        xmaps = min(nrow, nmaps)
        ymaps = int(math.ceil(float(nmaps) / xmaps))
        height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
        num_channels = tensor.size(1)
        grid = tensor.new_full((num_channels, height * ymaps + padding, width * xmaps + padding), pad_value)
        k = 0
        for y in range(ymaps):
            for x in range(xmaps):
                if k >= nmaps:
                    break
                grid.narrow(1, y * height + padding, height - padding).narrow(
                    2, x * width + padding, width - padding).copy_(tensor[k])
                k = k + 1
        return grid


def save_image(tensor, fp, format=None, **kwargs):
    """torchvision.utils.save_image: ``make_grid(tensor, **kwargs)`` written to ``fp`` (a path or
    a binary file; ``format`` as Pillow's, from the file name when None) with Pillow."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("tritensor.vision.utils.save_image writes images with Pillow: "
                          "pip install 'tritensor[vision]'") from None
    tt = _tt()
    with tt.no_grad():
        grid = make_grid(tensor, **kwargs)
        # + 0.5 after scaling to [0, 255]: round to the nearest integer, as torchvision
        ndarr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", tt.uint8).numpy()
    Image.fromarray(ndarr).save(fp, format=format)
