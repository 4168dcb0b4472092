"""tritensor.vision: torchvision's models, transforms and data sets, on tritensor.

    from tritensor.vision import datasets, models, transforms

models: resnet18/34/50, vgg11..vgg19(_bn) with torchvision's module layout and state_dict keys (weights are
loaded from a file with tt.load; nothing is downloaded); transforms: Compose, ToTensor,
Normalize, Resize, CenterCrop, RandomCrop, RandomResizedCrop, RandomHorizontalFlip;
datasets: MNIST / FashionMNIST from their IDX files, FakeData, ImageFolder (Pillow: the ``vision`` extra);
utils: make_grid, save_image (Pillow).
"""
from . import datasets, models, transforms, utils  # noqa: F401

__all__ = ["datasets", "models", "transforms", "utils"]
