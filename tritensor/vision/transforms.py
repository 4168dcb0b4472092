"""tt.vision.transforms: torchvision.transforms (v1) as tutorials use them.

Compose, ToTensor, Normalize, Resize, CenterCrop, RandomCrop, RandomResizedCrop,
RandomHorizontalFlip, Lambda and InterpolationMode, with torchvision's arguments, reprs and
errors. Images are PIL images (Pillow: the ``vision`` extra) or tensors of shape (..., C, H, W);
ToTensor also takes NumPy arrays (H, W[, C]). Random choices draw from tritensor's default
generator (tt.manual_seed makes them repeatable), as torchvision's draw from torch's.

Resizing a tensor multiplies it by two resampling matrices, (out_h, H) on the left and
(W, out_w) on the right, whose rows hold the weights of PyTorch's interpolate: antialiased
bilinear (PIL's triangle filter widened by the scale when shrinking, torchvision's default),
plain bilinear (align_corners=False) or nearest; so it runs on any device and is
differentiable. PIL images are resized by Pillow, as torchvision does.
"""
from __future__ import annotations

import enum
import math
import numbers
from collections.abc import Sequence

import numpy as np

from .. import dtypes as _dt
from ..nn.modules.module import Module

__all__ = ["Compose", "ToTensor", "Normalize", "Resize", "CenterCrop", "RandomCrop", "RandomResizedCrop",
           "RandomHorizontalFlip", "Lambda", "InterpolationMode"]


def _tt():
    import tritensor
    return tritensor


def _pil_image():
    try:
        from PIL import Image
    except ImportError:
        return None
    return Image


def _is_pil(img):
    Image = _pil_image()
    return Image is not None and isinstance(img, Image.Image)


def _is_tensor(img):
    return isinstance(img, _tt().Tensor)


def _check_image(img):
    if not (_is_pil(img) or _is_tensor(img)):
        raise TypeError(f"Unexpected type {type(img)}")


def get_dimensions(img):
    """[channels, height, width] of a PIL image or a (..., C, H, W) tensor."""
    _check_image(img)
    if _is_tensor(img):
        if img.dim() < 2:
            raise TypeError("Tensor is not a torch image.")
        channels = 1 if img.dim() == 2 else int(img.shape[-3])
        return [channels, int(img.shape[-2]), int(img.shape[-1])]
    width, height = img.size
    return [len(img.getbands()), height, width]


class InterpolationMode(enum.Enum):
    """torchvision's interpolation modes (the value is the name PIL and repr use)."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


_PIL_FILTERS = {InterpolationMode.NEAREST: 0, InterpolationMode.BILINEAR: 2, InterpolationMode.BICUBIC: 3,
                InterpolationMode.BOX: 4, InterpolationMode.HAMMING: 5, InterpolationMode.LANCZOS: 1}
_PIL_CODES = {v: k for k, v in _PIL_FILTERS.items()}


def _interpolation(mode):
    if isinstance(mode, int):          # torchvision still takes PIL's integer codes
        if mode not in _PIL_CODES:
            raise ValueError(f"Unsupported interpolation code {mode}")
        return _PIL_CODES[mode]
    if not isinstance(mode, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding Pillow integer "
                        "constant")
    return mode


# --------------------------------------------------------------------------- Compose, Lambda
class Compose:
    """Applies transforms one after another."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        lines = [self.__class__.__name__ + "("]
        lines += [f"    {t}" for t in self.transforms]
        return "\n".join(lines) + "\n)"


class Lambda:
    """A user function as a transform."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


# --------------------------------------------------------------------------- ToTensor, Normalize
def to_tensor(pic):
    """A PIL image or a NumPy array (H, W[, C]) as a (C, H, W) tensor; 8-bit values are scaled to
    [0, 1] floats of the default dtype, other dtypes keep their values (torchvision's to_tensor)."""
    tt = _tt()
    if not (_is_pil(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic[:, :, None]
        img = tt.from_numpy(np.ascontiguousarray(pic.transpose((2, 0, 1))))
    else:
        nptype = {"I": np.int32, "I;16": np.int16, "I;16B": np.int16, "F": np.float32}.get(pic.mode, np.uint8)
        arr = np.array(pic, nptype, copy=True)
        if pic.mode == "1":
            arr = 255 * arr
        width, height = pic.size
        arr = arr.reshape(height, width, len(pic.getbands()))
        img = tt.from_numpy(np.ascontiguousarray(arr.transpose((2, 0, 1))))
    if img.dtype is _dt.uint8:
        return img.to(dtype=tt.get_default_dtype()).div(255)
    return img


class ToTensor:
    """PIL image / ndarray (H x W x C, 0..255) -> float tensor (C x H x W, 0..1)."""

    def __call__(self, pic):
        return to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean) / std per channel of a float (..., C, H, W) tensor."""
    tt = _tt()
    if not _is_tensor(tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.dim() < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tensor.size()}")
    if not inplace:
        tensor = tensor.clone()
    mean = tt.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = tt.as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
    if mean.dim() == 1:
        mean = mean.view(-1, 1, 1)
    if std.dim() == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)


class Normalize(Module):
    """Normalizes a float tensor image channel by channel: (input - mean) / std."""

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


# --------------------------------------------------------------------------- geometry
def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


def _resize_output_size(height, width, size, max_size):
    """torchvision's _compute_resized_output_size: an int (or 1-sequence) is the smaller edge's
    new length, the other keeping the aspect ratio (truncated), capped by max_size."""
    if isinstance(size, int) or len(size) == 1:
        requested = size if isinstance(size, int) else size[0]
        short, long = (width, height) if width <= height else (height, width)
        new_short, new_long = requested, int(requested * long / short)
        if max_size is not None:
            if max_size <= requested:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                                 f"smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if width <= height else (new_long, new_short)
        return [new_h, new_w]
    return [size[0], size[1]]


def _bilinear_weights(in_size, out_size, antialias):
    """(out_size, in_size) weights of PyTorch's bilinear interpolate (align_corners=False);
    antialias widens the triangle filter by the scale when shrinking (ATen's
    _upsample_bilinear2d_aa, after PIL's resampling)."""
    scale = in_size / out_size
    weights = np.zeros((out_size, in_size))
    if antialias:
        support = scale if scale >= 1.0 else 1.0
        invscale = 1.0 / scale if scale >= 1.0 else 1.0
        for i in range(out_size):
            center = scale * (i + 0.5)
            lo = max(int(center - support + 0.5), 0)
            hi = min(int(center + support + 0.5), in_size)
            j = np.arange(lo, hi)
            w = np.maximum(0.0, 1.0 - np.abs((j - center + 0.5) * invscale))
            total = w.sum()
            weights[i, lo:hi] = w / total if total != 0 else w
        return weights
    for i in range(out_size):
        src = max(scale * (i + 0.5) - 0.5, 0.0)
        i0 = min(int(math.floor(src)), in_size - 1)
        i1 = min(i0 + 1, in_size - 1)
        frac = src - i0
        weights[i, i0] += 1.0 - frac
        weights[i, i1] += frac
    return weights


def _nearest_weights(in_size, out_size):
    """(out_size, in_size) one-hot rows of interpolate(mode='nearest'): src = floor(i * in / out)."""
    scale = in_size / out_size
    weights = np.zeros((out_size, in_size))
    src = np.minimum(np.floor(np.arange(out_size) * scale).astype(np.int64), in_size - 1)
    weights[np.arange(out_size), src] = 1.0
    return weights


def _resample_tensor(img, out_h, out_w, interpolation, antialias):
    tt = _tt()
    if interpolation is InterpolationMode.BILINEAR:
        rows, cols = _bilinear_weights(img.shape[-2], out_h, antialias), _bilinear_weights(img.shape[-1], out_w,
                                                                                             antialias)
    elif interpolation is InterpolationMode.NEAREST:
        rows, cols = _nearest_weights(img.shape[-2], out_h), _nearest_weights(img.shape[-1], out_w)
    else:
        raise NotImplementedError(f"tritensor.vision: resizing a tensor with {interpolation} is not supported "
                                  "(nearest and bilinear are; PIL images take every mode)")
    dtype = img.dtype if img.is_floating_point() else tt.float32
    left = tt.tensor(rows, dtype=dtype, device=img.device)
    right = tt.tensor(cols.T, dtype=dtype, device=img.device)
    out = left @ img.to(dtype) @ right
    if not img.is_floating_point():       # integer images: rounded back into their range
        info = tt.iinfo(img.dtype)
        out = out.round().clamp(info.min, info.max).to(img.dtype)
    return out


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """torchvision.transforms.functional.resize for PIL images and (..., H, W) tensors."""
    _check_image(img)
    interpolation = _interpolation(interpolation)
    if isinstance(size, (list, tuple)):
        if len(size) not in (1, 2):
            raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element "
                             "tuple/list")
        if max_size is not None and len(size) != 1:
            raise ValueError("max_size should only be passed if size specifies the length of the smaller edge, "
                             "i.e. size should be an int or a sequence of length 1 in torchscript mode.")
    _, height, width = get_dimensions(img)
    out_h, out_w = _resize_output_size(height, width, size, max_size)
    if [height, width] == [out_h, out_w]:
        return img
    if _is_pil(img):
        return img.resize((out_w, out_h), _PIL_FILTERS[interpolation])
    return _resample_tensor(img, out_h, out_w, interpolation, bool(antialias))


class Resize(Module):
    """Resizes to ``size``: (h, w), or an int for the smaller edge (the aspect ratio kept)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        super().__init__()
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        self.interpolation = _interpolation(interpolation)
        self.antialias = antialias

    def forward(self, img):
        return resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


def crop(img, top, left, height, width):
    """The (height, width) window at (top, left); outside the image: zeros (torchvision's crop)."""
    _check_image(img)
    if _is_pil(img):
        return img.crop((left, top, left + width, top + height))
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        pad = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0), max(right - max(w, left), 0),
               max(bottom - max(h, top), 0)]
        return pad_tensor(img[..., max(top, 0):bottom, max(left, 0):right], pad)
    return img[..., top:bottom, left:right]


def _parse_padding(padding):
    if isinstance(padding, numbers.Number):
        return [int(padding)] * 4
    padding = list(padding)
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    if len(padding) == 4:
        return padding
    raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")


def _pad_indices(n, before, after, mode):
    """Source indices of a padded axis (edge, reflect, symmetric), as NumPy's pad."""
    return np.pad(np.arange(n), (before, after), mode={"edge": "edge", "reflect": "reflect",
                                                       "symmetric": "symmetric"}[mode])


def pad_tensor(img, padding, fill=0, padding_mode="constant"):
    """img (..., H, W) padded by [left, top, right, bottom]."""
    tt = _tt()
    left, top, right, bottom = _parse_padding(padding)
    if padding_mode == "constant":
        shape = tuple(img.shape[:-2]) + (img.shape[-2] + top + bottom, img.shape[-1] + left + right)
        out = tt.full(shape, fill, dtype=img.dtype, device=img.device)
        out[..., top:top + img.shape[-2], left:left + img.shape[-1]] = img
        return out
    rows = tt.tensor(_pad_indices(img.shape[-2], top, bottom, padding_mode), device=img.device)
    cols = tt.tensor(_pad_indices(img.shape[-1], left, right, padding_mode), device=img.device)
    return img.index_select(-2, rows).index_select(-1, cols)


def pad(img, padding, fill=0, padding_mode="constant"):
    """torchvision.transforms.functional.pad for PIL images and tensors."""
    _check_image(img)
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, top, right, bottom = _parse_padding(padding)
    if _is_pil(img):
        Image = _pil_image()
        arr = np.asarray(img)
        widths = ((top, bottom), (left, right)) + (((0, 0),) if arr.ndim == 3 else ())
        if padding_mode == "constant":
            arr = np.pad(arr, widths, mode="constant", constant_values=fill)
        else:
            arr = np.pad(arr, widths, mode=padding_mode)
        return Image.fromarray(arr, mode=img.mode) if img.mode in ("L", "RGB", "RGBA", "I", "F") else \
            Image.fromarray(arr)
    return pad_tensor(img, [left, top, right, bottom], fill, padding_mode)


def center_crop(img, output_size):
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, height, width = get_dimensions(img)
    crop_height, crop_width = output_size
    if crop_width > width or crop_height > height:
        padding = [(crop_width - width) // 2 if crop_width > width else 0,
                   (crop_height - height) // 2 if crop_height > height else 0,
                   (crop_width - width + 1) // 2 if crop_width > width else 0,
                   (crop_height - height + 1) // 2 if crop_height > height else 0]
        img = pad(img, padding, fill=0)
        _, height, width = get_dimensions(img)
        if crop_width == width and crop_height == height:
            return img
    top = int(round((height - crop_height) / 2.0))
    left = int(round((width - crop_width) / 2.0))
    return crop(img, top, left, crop_height, crop_width)


class CenterCrop(Module):
    """The central (h, w) window (padded with zeros where the image is smaller)."""

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def forward(self, img):
        return center_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


def _randint(low, high):
    return int(_tt().randint(low, high, size=(1,)).item())


class RandomCrop(Module):
    """A (h, w) window at a random position, after optional padding."""

    @staticmethod
    def get_params(img, output_size):
        _, h, w = get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        return _randint(0, h - th + 1), _randint(0, w - tw + 1), th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = tuple(_setup_size(size, error_msg="Please provide only two dimensions (h, w) for size."))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return crop(img, i, j, h, w)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomResizedCrop(Module):
    """A random window of random area fraction ``scale`` and aspect ratio ``ratio``, resized to
    ``size`` (the Inception crop)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        self.interpolation = _interpolation(interpolation)
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale, ratio):
        tt = _tt()
        _, height, width = get_dimensions(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * tt.empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = math.exp(tt.empty(1).uniform_(log_ratio[0], log_ratio[1]).item())
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                return _randint(0, height - h + 1), _randint(0, width - w + 1), h, w
        in_ratio = float(width) / float(height)      # fallback: the whole image, ratio clamped
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return resize(crop(img, i, j, h, w), list(self.size), self.interpolation, antialias=self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, "
                f"antialias={self.antialias})")


def hflip(img):
    _check_image(img)
    if _is_pil(img):
        return img.transpose(_pil_image().Transpose.FLIP_LEFT_RIGHT)
    return img.flip(-1)


class RandomHorizontalFlip(Module):
    """Flips left-right with probability p."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        if _tt().rand(1).item() < self.p:
            return hflip(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"
