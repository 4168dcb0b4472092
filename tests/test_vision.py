"""tritensor.vision: transforms (torchvision's reprs, errors and values; resizing against values
recorded from torch's interpolate by tests/data/make_vision_values.py), the IDX data sets on
tiny files made here, ImageFolder on a tiny tree of PNGs, and the models."""
import gzip
import os

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.vision import datasets, transforms as T

Image = pytest.importorskip("PIL.Image")


# --------------------------------------------------------------------------- transforms
def test_compose_repr_and_a_tutorial_pipeline():
    t = T.Compose([T.Resize(20), T.CenterCrop(16), T.RandomHorizontalFlip(), T.ToTensor(),
                   T.Normalize((0.5, 0.5, 0.5), (0.2, 0.2, 0.2))])
    assert repr(t) == ("Compose(\n    Resize(size=20, interpolation=bilinear, max_size=None, antialias=True)\n"
                       "    CenterCrop(size=(16, 16))\n    RandomHorizontalFlip(p=0.5)\n    ToTensor()\n"
                       "    Normalize(mean=(0.5, 0.5, 0.5), std=(0.2, 0.2, 0.2))\n)")
    img = Image.fromarray((np.arange(30 * 40 * 3) % 256).astype(np.uint8).reshape(30, 40, 3))
    out = t(img)
    assert out.shape == (3, 16, 16) and out.dtype is tt.float32
    assert repr(T.RandomCrop(32, padding=4)) == "RandomCrop(size=(32, 32), padding=4)"


def test_to_tensor_modes_and_arrays():
    gray = np.array([[0, 255], [51, 102]], np.uint8)
    np.testing.assert_allclose(to_numpy(T.ToTensor()(Image.fromarray(gray, mode="L"))), [gray / 255], rtol=1e-6)
    rgb = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    t = T.ToTensor()(Image.fromarray(rgb, mode="RGB"))
    assert t.shape == (3, 2, 2) and t.is_contiguous()
    np.testing.assert_allclose(to_numpy(t), rgb.transpose(2, 0, 1) / 255, rtol=1e-6)
    one_bit = Image.new("1", (2, 1))
    one_bit.putpixel((0, 0), 1)
    bits = T.ToTensor()(one_bit)
    assert bits.tolist() == [[[1.0, 0.0]]]
    floats = T.ToTensor()(Image.fromarray(np.array([[1.5, -2.0]], np.float32), mode="F"))
    assert floats.dtype is tt.float32 and floats.tolist() == [[[1.5, -2.0]]]       # not scaled
    assert T.ToTensor()(np.ones((2, 3), np.float64)).dtype is tt.float64
    assert T.ToTensor()(gray).shape == (1, 2, 2)
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray. Got <class 'list'>"):
        T.ToTensor()([1, 2])
    with pytest.raises(ValueError, match="pic should be 2/3 dimensional. Got 1 dimensions."):
        T.ToTensor()(np.zeros(3))


def test_normalize_values_and_errors(device):
    x = tt.arange(12, dtype=tt.float32, device=device).reshape(3, 2, 2)
    out = T.Normalize([1.0, 2.0, 3.0], [2.0, 4.0, 0.5])(x)
    want = (np.arange(12).reshape(3, 2, 2) - np.array([1, 2, 3])[:, None, None]) / np.array([2, 4, 0.5])[:, None, None]
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-6)
    assert x[0, 0, 0].item() == 0           # out of place unless inplace=True
    with pytest.raises(TypeError, match=r"^Input tensor should be a float tensor. Got tritensor.int64.$"):
        T.Normalize([0.5], [0.5])(tt.ones(1, 2, 2, dtype=tt.int64))
    with pytest.raises(ValueError, match="std evaluated to zero after conversion to tritensor.float32, leading to "
                                         "division by zero."):
        T.Normalize([0.5], [0.0])(tt.ones(1, 2, 2))
    with pytest.raises(ValueError, match=r"Expected tensor to be a tensor image of size \(..., C, H, W\)"):
        T.Normalize([0.5], [0.5])(tt.ones(2, 2))


RESIZED = {   # torch's F.interpolate of make_vision_values.image(): (size, values)
    'shrink_antialias': ((3, 2), [[[1.095455, 1.345455], [1.801136, 1.460227], [1.369318, 1.264773]]]),
    'grow_bilinear': ((6, 7), [[[0.0, 1.0, 1.321429, 0.25, 1.5, 1.357143, 0.5], [1.125, 1.196429, 1.285714, 1.375, 1.464286, 1.553571, 1.625], [2.083333, 1.535714, 1.470238, 2.333333, 1.261905, 1.583333, 2.583333], [1.416667, 2.107143, 2.35119, 1.666667, 0.595238, 0.916667, 1.916667], [0.75, 1.75, 2.071429, 1.0, 1.089286, 1.178571, 1.25], [0.25, 1.25, 1.571429, 0.5, 1.75, 1.607143, 0.75]]]),  # noqa: E501
    'shrink_bilinear': ((3, 2), [[[1.28125, 1.59375], [1.84375, 0.9375], [1.729167, 1.635417]]]),
    'nearest': ((3, 7), [[[0.0, 0.0, 1.75, 0.25, 0.25, 2.0, 0.5], [2.25, 2.25, 0.75, 2.5, 2.5, 1.0, 2.75], [1.25, 1.25, 3.0, 1.5, 1.5, 0.0, 1.75]]]),  # noqa: E501
}


@pytest.mark.parametrize("name", sorted(RESIZED))
def test_resize_tensor_matches_torch_interpolate(name):
    image = ((np.arange(20, dtype=np.float64).reshape(1, 4, 5) * 7) % 13) / 4.0
    size, want = RESIZED[name]
    mode = T.InterpolationMode.NEAREST if name == "nearest" else T.InterpolationMode.BILINEAR
    got = T.Resize(size, interpolation=mode, antialias=name == "shrink_antialias")(tt.tensor(image))
    np.testing.assert_allclose(to_numpy(got), want, atol=1e-6)


def test_resize_sizes_pil_and_uint8():
    x = tt.rand(3, 30, 40)
    assert T.Resize(20)(x).shape == (3, 20, 26)            # the smaller edge, the aspect kept (truncated)
    assert T.Resize(20, max_size=24)(x).shape == (3, 18, 24)
    assert T.Resize((7, 9))(x).shape == (3, 7, 9)
    assert T.Resize(30)(x) is x                            # already that size
    img = Image.fromarray(np.zeros((30, 40), np.uint8))
    assert T.Resize(20)(img).size == (26, 20)
    u8 = T.Resize((2, 2))(tt.full((1, 4, 4), 200, dtype=tt.uint8))
    assert u8.dtype is tt.uint8 and u8.tolist() == [[[200, 200], [200, 200]]]
    with pytest.raises(TypeError, match="Size should be int or sequence. Got <class 'float'>"):
        T.Resize(2.5)
    with pytest.raises(ValueError, match="If size is a sequence, it should have 1 or 2 values"):
        T.Resize((1, 2, 3))
    with pytest.raises(ValueError, match=r"max_size = 10 must be strictly greater than the requested size"):
        T.Resize(20, max_size=10)(x)


def test_crops_and_flips_are_seeded_and_exact(device):
    x = tt.arange(2 * 5 * 6, dtype=tt.float32, device=device).reshape(2, 5, 6)
    xn = to_numpy(x)
    tt.manual_seed(0)
    a = T.RandomCrop(3)(x)
    tt.manual_seed(0)
    b = T.RandomCrop(3)(x)
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    windows = [xn[:, i:i + 3, j:j + 3] for i in range(3) for j in range(4)]
    assert any(np.array_equal(to_numpy(a), w) for w in windows)
    padded = T.RandomCrop((7, 8), padding=1)(x)            # the padded image is exactly 7 x 8
    np.testing.assert_array_equal(to_numpy(padded), np.pad(xn, ((0, 0), (1, 1), (1, 1))))
    edge = T.RandomCrop((5, 8), pad_if_needed=True, padding_mode="edge")(x)
    np.testing.assert_array_equal(to_numpy(edge), np.pad(xn, ((0, 0), (0, 0), (1, 1)), mode="edge"))
    np.testing.assert_array_equal(to_numpy(T.RandomHorizontalFlip(p=1.0)(x)), xn[..., ::-1])
    np.testing.assert_array_equal(to_numpy(T.RandomHorizontalFlip(p=0.0)(x)), xn)
    np.testing.assert_array_equal(to_numpy(T.CenterCrop(3)(x)), xn[:, 1:4, 2:5 - 0][:, :, :3])
    np.testing.assert_array_equal(to_numpy(T.CenterCrop((7, 6))(x)), np.pad(xn, ((0, 0), (1, 1), (0, 0))))
    with pytest.raises(ValueError, match=r"Required crop size \(9, 9\) is larger than input image size \(5, 6\)"):
        T.RandomCrop(9)(x)
    pil = Image.fromarray(np.arange(30, dtype=np.uint8).reshape(5, 6))
    np.testing.assert_array_equal(np.asarray(T.RandomHorizontalFlip(p=1.0)(pil)), np.arange(30).reshape(5, 6)[:, ::-1])
    assert T.RandomCrop(4, padding=2)(pil).size == (4, 4)
    assert T.RandomResizedCrop(4)(pil).size == (4, 4) and T.RandomResizedCrop((3, 5))(x).shape == (2, 3, 5)


# --------------------------------------------------------------------------- data sets
def _idx(array, type_code=8):
    header = bytes([0, 0, type_code, array.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def _write_mnist(root, name="MNIST", compress=False, n=5):
    raw = os.path.join(root, name, "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.default_rng(0)
    images = {}
    for split, count in (("train", n), ("t10k", 3)):
        imgs = rng.integers(0, 256, (count, 28, 28)).astype(np.uint8)
        labels = rng.integers(0, 10, count).astype(np.uint8)
        for kind, arr in (("images-idx3", imgs), ("labels-idx1", labels)):
            data = _idx(arr)
            path = os.path.join(raw, f"{split}-{kind}-ubyte")
            if compress:
                with gzip.open(path + ".gz", "wb") as f:
                    f.write(data)
            else:
                with open(path, "wb") as f:
                    f.write(data)
        images[split] = (imgs, labels)
    return images


@pytest.mark.parametrize("compress", [False, True])
def test_mnist_reads_idx_files(tmp_path, compress):
    files = _write_mnist(str(tmp_path), compress=compress)
    train = datasets.MNIST(str(tmp_path), train=True, transform=T.ToTensor())
    assert len(train) == 5 and train.data.dtype is tt.uint8 and train.targets.dtype is tt.int64
    np.testing.assert_array_equal(to_numpy(train.data), files["train"][0])
    img, target = train[3]
    assert target == int(files["train"][1][3]) and img.shape == (1, 28, 28)
    np.testing.assert_allclose(to_numpy(img)[0], files["train"][0][3] / 255, rtol=1e-6)
    raw, _ = datasets.MNIST(str(tmp_path))[0]
    assert isinstance(raw, Image.Image) and raw.mode == "L"
    test = datasets.MNIST(tmp_path, train=False)
    assert len(test) == 3 and test.class_to_idx["3 - three"] == 3
    assert repr(train) == (f"Dataset MNIST\n    Number of datapoints: 5\n    Root location: {tmp_path}\n"
                           "    Split: Train\n    StandardTransform\nTransform: ToTensor()")
    batch = next(iter(tt.utils.data.DataLoader(train, batch_size=4)))
    assert batch[0].shape == (4, 1, 28, 28) and batch[1].tolist() == files["train"][1][:4].tolist()


def test_fashion_mnist_and_missing_or_broken_files(tmp_path):
    _write_mnist(str(tmp_path), name="FashionMNIST")
    fashion = datasets.FashionMNIST(str(tmp_path), train=False)
    assert fashion.classes[9] == "Ankle boot" and len(fashion) == 3
    with pytest.raises(RuntimeError, match=r"^Dataset not found. You can use download=True to download it$"):
        datasets.MNIST(str(tmp_path))
    with pytest.raises(NotImplementedError, match="does not download data sets: place the MNIST IDX files"):
        datasets.MNIST(str(tmp_path), download=True)
    raw = tmp_path / "FashionMNIST" / "raw"
    (raw / "t10k-images-idx3-ubyte").write_bytes(b"\x08\x03\x00\x00")
    with pytest.raises(ValueError, match="not an IDX file"):
        datasets.FashionMNIST(str(tmp_path), train=False)
    (raw / "t10k-images-idx3-ubyte").write_bytes(_idx(np.zeros((3, 28, 28), np.uint8))[:-5])
    with pytest.raises(ValueError, match=r"announces 2352 elements of shape \[3, 28, 28\], the file holds 2347"):
        datasets.FashionMNIST(str(tmp_path), train=False)
    (raw / "t10k-images-idx3-ubyte").write_bytes(_idx(np.zeros((3, 28, 28), np.int32), type_code=12))
    with pytest.raises(TypeError, match="x should be of dtype torch.uint8 instead of tritensor.int32"):
        datasets.FashionMNIST(str(tmp_path), train=False)


def test_image_folder(tmp_path):
    for cls, colours in (("cat", [(255, 0, 0), (0, 255, 0)]), ("dog", [(0, 0, 255)])):
        os.makedirs(tmp_path / cls)
        for k, colour in enumerate(colours):
            Image.new("RGB", (4, 3), colour).save(tmp_path / cls / f"{k}.png")
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    folder = datasets.ImageFolder(str(tmp_path), transform=T.ToTensor())
    assert folder.classes == ["cat", "dog"] and folder.class_to_idx == {"cat": 0, "dog": 1}
    assert [os.path.basename(p) for p, _ in folder.samples] == ["0.png", "1.png", "0.png"] and folder.targets == [0, 0, 1]
    img, target = folder[1]
    assert target == 0 and img.shape == (3, 3, 4) and to_numpy(img)[:, 0, 0].tolist() == [0.0, 1.0, 0.0]
    os.makedirs(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes empty. Supported extensions are"):
        datasets.ImageFolder(str(tmp_path))
    os.makedirs(tmp_path / "none")
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder in"):
        datasets.ImageFolder(str(tmp_path / "none"))


# --------------------------------------------------------------------------- utils, FakeData
def test_make_grid_tiles_pads_and_normalizes():
    from tritensor.vision.utils import make_grid
    images = tt.arange(1.0, 4.0).view(3, 1, 1, 1).expand(3, 1, 2, 2)      # three 2x2 images of 1, 2, 3
    grid = make_grid(images, nrow=2, padding=1, pad_value=9)
    # single-channel images are repeated to 3 channels; 2 to a row: 2 rows of (1 + 2) + 1 pixels
    assert grid.shape == (3, 7, 7)
    expected = np.full((7, 7), 9.0)
    expected[1:3, 1:3], expected[1:3, 4:6], expected[4:6, 1:3] = 1, 2, 3
    for channel in to_numpy(grid):
        np.testing.assert_array_equal(channel, expected)
    # normalize: the batch's min..max (1..3) to 0..1; scale_each: every image on its own
    norm = make_grid(images, nrow=3, padding=0, normalize=True)
    np.testing.assert_allclose(to_numpy(norm)[0, 0], [0, 0, 0.5, 0.5, 1, 1])
    each = make_grid(images + tt.tensor([0.0, 1.0]).view(1, 1, 1, 2), nrow=3, padding=0, normalize=True,
                     scale_each=True)
    np.testing.assert_allclose(to_numpy(each)[0, 0], [0, 1, 0, 1, 0, 1])
    clipped = make_grid(images, nrow=3, padding=0, normalize=True, value_range=(2, 3))
    np.testing.assert_allclose(to_numpy(clipped)[0, 0], [0, 0, 0, 0, 1, 1])
    assert make_grid(images[:1]).shape == (3, 2, 2)                        # a batch of one: no padding
    assert images.min().item() == 1                                        # the input was not changed
    assert make_grid([images[0], images[1]], padding=0).shape == (3, 2, 4)
    with pytest.raises(TypeError, match="tensor or list of tensors expected, got <class 'int'>"):
        make_grid(3)
    with pytest.raises(TypeError, match="value_range has to be a tuple"):
        make_grid(images, normalize=True, value_range=[0, 1])


def test_save_image_writes_the_rounded_grid(tmp_path):
    from tritensor.vision.utils import save_image
    pixels = tt.tensor([[[0.0, 0.5], [1.0, 2.0]], [[0.1, 0.2], [0.3, -1.0]], [[0.004, 0.998], [0.5, 0.25]]])
    save_image(pixels, tmp_path / "one.png")
    with Image.open(tmp_path / "one.png") as im:
        assert im.mode == "RGB" and im.size == (2, 2)
        got = np.asarray(im)
    # value * 255 + 0.5, clamped to 0..255, truncated: round to nearest
    np.testing.assert_array_equal(got[..., 0], [[0, 128], [255, 255]])
    np.testing.assert_array_equal(got[..., 1], [[26, 51], [77, 0]])
    np.testing.assert_array_equal(got[..., 2], [[1, 254], [128, 64]])
    save_image(tt.zeros(5, 1, 3, 3), tmp_path / "grid.png", nrow=4)
    with Image.open(tmp_path / "grid.png") as im:
        assert im.size == (4 * 5 + 2, 2 * 5 + 2)


def test_fake_data_items_are_reproducible_and_keep_the_global_generator():
    fake = datasets.FakeData(size=3, image_size=(3, 4, 5), num_classes=4, transform=T.ToTensor())
    tt.manual_seed(7)
    before = tt.rand(3)
    tt.manual_seed(7)
    img, target = fake[1]
    assert tt.equal(tt.rand(3), before)                 # the item's own seed, the global state restored
    again, target_again = fake[1]
    assert tt.equal(img, again) and target == target_again and isinstance(target, int) and 0 <= target < 4
    assert img.shape == (3, 4, 5) and img.dtype == tt.float32
    # the image is randn * 255 cast to uint8 (ToPILImage's conversion) from seed index + random_offset
    tt.manual_seed(1)
    expected = tt.randn(3, 4, 5).mul(255).byte()
    np.testing.assert_allclose(to_numpy(img), to_numpy(expected) / 255, rtol=1e-6)
    shifted = datasets.FakeData(size=3, image_size=(1, 2, 2), random_offset=1)
    assert len(shifted) == 3 and isinstance(shifted[0][0], Image.Image) and shifted[0][0].mode == "L"
    with pytest.raises(IndexError, match="^FakeData index out of range$"):
        fake[3]


def test_vgg_layers_parameter_counts_and_no_download():
    from tritensor.vision.models import vgg
    # VGG-16's convolutions: sum of 9 * c_in * c_out + c_out over configuration D, hand-computed
    # (14,714,688, the features part of torchvision's documented 138,357,544)
    features = vgg.make_layers(vgg.cfgs["D"])
    assert sum(p.numel() for p in features.parameters()) == 14_714_688
    assert len(features) == 31 and type(features[4]).__name__ == "MaxPool2d" and features[30].kernel_size == 2
    bn = vgg.make_layers(vgg.cfgs["A"], batch_norm=True)
    assert [type(m).__name__ for m in bn][:4] == ["Conv2d", "BatchNorm2d", "ReLU", "MaxPool2d"]
    assert list(bn.state_dict())[:7] == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
                                         "1.running_var", "1.num_batches_tracked"]
    assert features(tt.zeros(1, 3, 32, 32)).shape == (1, 512, 1, 1)
    with pytest.raises(NotImplementedError, match="tritensor.vision does not download weights"):
        vgg.vgg16(weights="IMAGENET1K_V1")
