"""tt.vision.datasets: MNIST and FashionMNIST from their IDX files, FakeData, and ImageFolder.

The layout is torchvision's: ``<root>/MNIST/raw/train-images-idx3-ubyte`` (and the labels, and
``t10k-*`` for the test split), ``<root>/FashionMNIST/raw/...``; a gzip-compressed file
(``...-idx3-ubyte.gz``, as published) is read as well. Nothing is downloaded: the user places
the files; ``download=True`` with the files missing raises NotImplementedError saying where
they go. Items are (image, target) as torchvision's: the image a PIL image when Pillow is
installed (the ``vision`` extra), otherwise its (H, W) uint8 NumPy array, which ToTensor turns
into the same tensor.

ImageFolder reads ``<root>/<class>/<image>`` trees (classes sorted by name) with Pillow.
"""
from __future__ import annotations

import gzip
import os

import numpy as np

from ..utils.data import Dataset

__all__ = ["VisionDataset", "StandardTransform", "MNIST", "FashionMNIST", "FakeData", "DatasetFolder", "ImageFolder",
           "IMG_EXTENSIONS", "default_loader", "read_sn3_pascalvincent_tensor", "read_image_file",
           "read_label_file"]


class StandardTransform:
    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def _format_transform_repr(self, transform, head):
        lines = transform.__repr__().splitlines()
        return [f"{head}{lines[0]}"] + ["{}{}".format(" " * len(head), line) for line in lines[1:]]

    def __repr__(self):
        body = [self.__class__.__name__]
        if self.transform is not None:
            body += self._format_transform_repr(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += self._format_transform_repr(self.target_transform, "Target transform: ")
        return "\n".join(body)


class VisionDataset(Dataset):
    """Base class of the data sets: root, transform/target_transform (or joint transforms), repr."""

    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        has_transforms = transforms is not None
        has_separate_transform = transform is not None or target_transform is not None
        if has_transforms and has_separate_transform:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform = transform
        self.target_transform = target_transform
        if has_separate_transform:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def __repr__(self):
        head = "Dataset " + self.__class__.__name__
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if getattr(self, "transforms", None) is not None:
            body += [repr(self.transforms)]
        return "\n".join([head] + [" " * self._repr_indent + line for line in body])

    def extra_repr(self):
        return ""


# --------------------------------------------------------------------------- IDX files
# the IDX ("SN3 Pascal Vincent") element types: type code -> big-endian NumPy dtype
SN3_PASCALVINCENT_TYPEMAP = {8: np.dtype(">u1"), 9: np.dtype(">i1"), 11: np.dtype(">i2"), 12: np.dtype(">i4"),
                             13: np.dtype(">f4"), 14: np.dtype(">f8")}


def _read_bytes(path):
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path = path + ".gz"
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz") or data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def read_sn3_pascalvincent_tensor(path, strict=True):
    """The array of an IDX file: a 4-byte magic (0, 0, type code, number of dims), one
    big-endian uint32 size per dim, then the elements, big-endian. Returns a tensor of the
    element type (native byte order)."""
    import tritensor as tt
    data = _read_bytes(path)
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise ValueError(f"{path}: not an IDX file (bad magic number)")
    ty, nd = data[2], data[3]
    if not 1 <= nd <= 3 or ty not in SN3_PASCALVINCENT_TYPEMAP:
        raise ValueError(f"{path}: unsupported IDX element type {ty} or number of dims {nd}")
    if len(data) < 4 * (nd + 1):
        raise ValueError(f"{path}: the IDX header is truncated")
    sizes = [int.from_bytes(data[4 * (i + 1):4 * (i + 2)], "big") for i in range(nd)]
    dtype = SN3_PASCALVINCENT_TYPEMAP[ty]
    count = int(np.prod(sizes))
    available = (len(data) - 4 * (nd + 1)) // dtype.itemsize
    if available < count or (strict and available != count):
        raise ValueError(f"{path}: the IDX header announces {count} elements of shape {sizes}, the file holds "
                         f"{available}")
    parsed = np.frombuffer(data, dtype=dtype, count=count, offset=4 * (nd + 1))
    return tt.from_numpy(parsed.astype(dtype.newbyteorder("="), copy=True).reshape(sizes))


def read_label_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype is not _uint8():
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.dim() != 1:
        raise ValueError(f"x should have 1 dimension instead of {x.dim()}")
    return x.long()


def read_image_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype is not _uint8():
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.dim() != 3:
        raise ValueError(f"x should have 3 dimension instead of {x.dim()}")
    return x


def _uint8():
    import tritensor as tt
    return tt.uint8


def _to_image(array, mode):
    """A PIL image of ``array`` when Pillow is installed, else the array itself."""
    try:
        from PIL import Image
    except ImportError:
        return array
    return Image.fromarray(array, mode=mode)


class MNIST(VisionDataset):
    """The MNIST handwritten digits from ``<root>/MNIST/raw`` (train: 60000, test: 10000)."""

    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(os.fspath(root), transform=transform, target_transform=target_transform)
        self.train = train
        if not self._check_exists():
            if download:
                raise NotImplementedError(
                    f"tritensor.vision does not download data sets: place the {self.__class__.__name__} IDX files "
                    f"({', '.join(name for name, _ in self.resources)}, gzip-compressed or not) in {self.raw_folder}")
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        self.data, self.targets = self._load_data()

    def _files(self):
        prefix = "train" if self.train else "t10k"
        return (os.path.join(self.raw_folder, f"{prefix}-images-idx3-ubyte"),
                os.path.join(self.raw_folder, f"{prefix}-labels-idx1-ubyte"))

    def _load_data(self):
        images, labels = self._files()
        return read_image_file(images), read_label_file(labels)

    def _check_exists(self):
        return all(os.path.exists(p) or os.path.exists(p + ".gz") for p in self._files())

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        img = _to_image(img.numpy(), "L")      # a PIL image, as every other data set returns
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    @property
    def raw_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def class_to_idx(self):
        return {_class: i for i, _class in enumerate(self.classes)}

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST from ``<root>/FashionMNIST/raw`` (the MNIST file format)."""

    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class FakeData(VisionDataset):
    """torchvision's FakeData: ``size`` random images of ``image_size`` (C, H, W) and random
    targets below ``num_classes``. Item ``i`` is drawn from the generator seeded with
    ``i + random_offset`` (the global generator's state is restored after), so it is the same on
    every read; the image is ``randn`` scaled by 255 and cast to uint8, as ToPILImage makes it
    (a PIL image, or its (H, W[, C]) uint8 array without Pillow)."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None, target_transform=None,
                 random_offset=0):
        super().__init__(transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index):
        import tritensor as tt
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        rng_state = tt.get_rng_state()
        tt.manual_seed(index + self.random_offset)
        img = tt.randn(*self.image_size)
        target = tt.randint(0, self.num_classes, size=(1,), dtype=tt.long)[0]
        tt.set_rng_state(rng_state)
        array = img.mul(255).byte().permute(1, 2, 0).numpy()
        img = _to_image(array[:, :, 0], "L") if array.shape[2] == 1 else _to_image(array, "RGB")
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target.item()

    def __len__(self):
        return self.size


# --------------------------------------------------------------------------- ImageFolder
IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename, extensions):
    return filename.lower().endswith(extensions if isinstance(extensions, str) else tuple(extensions))


def is_image_file(filename):
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory):
    """The class folders of ``directory`` (sorted) and their indices."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {cls_name: i for i, cls_name in enumerate(classes)}


def make_dataset(directory, class_to_idx=None, extensions=None, is_valid_file=None, allow_empty=False):
    """(path, class index) of every valid file under the class folders, walked in sorted order."""
    directory = os.path.expanduser(os.fspath(directory))
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    both_none = extensions is None and is_valid_file is None
    both_something = extensions is not None and is_valid_file is not None
    if both_none or both_something:
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
    if extensions is not None:
        def is_valid_file(x):
            return has_file_allowed_extension(x, extensions)
    instances = []
    available_classes = set()
    for target_class in sorted(class_to_idx.keys()):
        class_index = class_to_idx[target_class]
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if is_valid_file(path):
                    instances.append((path, class_index))
                    available_classes.add(target_class)
    empty_classes = set(class_to_idx.keys()) - available_classes
    if empty_classes and not allow_empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty_classes))}. "
        if extensions is not None:
            msg += f"Supported extensions are: {extensions if isinstance(extensions, str) else ', '.join(extensions)}"
        raise FileNotFoundError(msg)
    return instances


def pil_loader(path):
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("tritensor.vision.datasets.ImageFolder reads images with Pillow: "
                          "pip install 'tritensor[vision]'") from e
    with open(path, "rb") as f:
        img = Image.open(f)
        return img.convert("RGB")


def default_loader(path):
    return pil_loader(path)


class DatasetFolder(VisionDataset):
    """Samples arranged ``root/<class>/<file>``, read by ``loader``."""

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None, is_valid_file=None,
                 allow_empty=False):
        super().__init__(os.fspath(root), transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx=class_to_idx, extensions=extensions,
                                    is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None, allow_empty=False):
        if class_to_idx is None:
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(directory, class_to_idx, extensions=extensions, is_valid_file=is_valid_file,
                            allow_empty=allow_empty)

    def find_classes(self, directory):
        return find_classes(directory)

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self):
        return len(self.samples)


class ImageFolder(DatasetFolder):
    """Images arranged ``root/<class>/<image>`` (classes sorted by name), loaded as RGB PIL
    images."""

    def __init__(self, root, transform=None, target_transform=None, loader=default_loader, is_valid_file=None,
                 allow_empty=False):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None, transform=transform,
                         target_transform=target_transform, is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples

