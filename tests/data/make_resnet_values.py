"""Records what tests/test_resnet.py checks tritensor.vision.models against: torchvision's ResNet
layout (every state_dict key and shape of resnet18/34/50, in order) and the logits of a
ResNet-18 and a ResNet-50 in eval mode for seeded weights and inputs. Run with torch 2.13 (CPU)
in /work/torchenv (which has no torchvision: the models below are torchvision's definition,
torchvision/models/resnet.py, written out with torch.nn):

    /work/torchenv/bin/python tests/data/make_resnet_values.py

It writes tests/data/resnet_values.json. A real ResNet-18 checkpoint is 45 MB, so no real
weights are committed: seeded_state_dict (the same function is in the test) makes them from a
NumPy seed, and the file keeps only what torch computed with them. It also writes
tests/data/resnet18_torchvision_layout.pth, a ResNet-18 state_dict written by torch.save as a
torchvision checkpoint is (an OrderedDict of every key), kept small (~0.2 MB): each convolution's
and the classifier's weight is a strided, overlapping view of one shared random storage (torch.save
keeps views as storage + offset + strides), the batch norm tensors are their own; the running
variances absorb each convolution's fan-in, so activations stay of order one. The logits torch
computes from that file are recorded next to the others.
"""
import json
import os

import numpy as np
import torch
from torch import nn


# ----------------------------------------------------------- torchvision's ResNet (v0.20 layout)
def conv3x3(i, o, stride=1):
    return nn.Conv2d(i, o, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(i, o, stride=1):
    return nn.Conv2d(i, o, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv1x1(inplanes, planes)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes, stride)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = conv1x1(planes, planes * 4)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       nn.BatchNorm2d(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


ARCHS = {"resnet18": (BasicBlock, [2, 2, 2, 2]), "resnet34": (BasicBlock, [3, 4, 6, 3]),
         "resnet50": (Bottleneck, [3, 4, 6, 3])}


# ----------------------------------------------------------- the seeded weights (also in the test)
def seeded_state_dict(shapes, seed):
    """A state_dict's worth of NumPy arrays, one per (key, shape) in order, from one seed: convolutions
    He-scaled (activations stay of order one through the depth), batch norm affine maps near the
    identity with running statistics away from (0, 1), so that every tensor changes the logits."""
    rng = np.random.default_rng(seed)
    out = {}
    for key, shape in shapes:
        name = key.rsplit(".", 1)[-1]
        if name == "num_batches_tracked":
            out[key] = np.array(7, dtype=np.int64)
            continue
        if name == "running_var":
            a = rng.uniform(0.5, 1.5, shape)
        elif name == "weight" and len(shape) == 1:
            a = 1 + 0.2 * rng.standard_normal(shape)
        elif name in ("bias", "running_mean"):
            a = 0.2 * rng.standard_normal(shape)
        else:            # a convolution's or the classifier's weight
            a = rng.standard_normal(shape) * np.sqrt(1.0 / np.prod(shape[1:]))
        out[key] = a.astype(np.float32)
    return out


def seeded_input(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def strided_checkpoint(model, seed):
    """The state_dict written to resnet18_torchvision_layout.pth (see the module docstring)."""
    rng = np.random.default_rng(seed)
    shared = torch.from_numpy(rng.standard_normal(32768).astype(np.float32))
    fan_in, out = None, {}
    for index, (key, value) in enumerate(model.state_dict().items()):
        shape, name = tuple(value.shape), key.rsplit(".", 1)[-1]
        if value.dim() >= 2:             # convolutions (o, i, kh, kw) and fc (o, i): views of `shared`
            strides = (13, 17, shape[-1], 1)[:len(shape)] if len(shape) == 4 else (13, 17)
            span = sum((n - 1) * st for n, st in zip(shape, strides)) + 1
            offset = (index * 997) % (shared.numel() - span)
            out[key] = shared.as_strided(shape, strides, offset)
            fan_in = int(np.prod(shape[1:]))     # (each batch norm's keys follow its convolution's)
            continue
        if name == "num_batches_tracked":
            out[key] = torch.tensor(7)
        elif name == "running_var":
            out[key] = torch.from_numpy((fan_in * rng.uniform(0.5, 1.5, shape)).astype(np.float32))
        elif name == "weight":
            out[key] = torch.from_numpy((1 + 0.2 * rng.standard_normal(shape)).astype(np.float32))
        else:                            # biases and running means
            out[key] = torch.from_numpy((0.2 * rng.standard_normal(shape)).astype(np.float32))
    return out


LOGITS_CASES = {"resnet18": ((2, 3, 32, 32), 18), "resnet50": ((1, 3, 32, 32), 50)}


def main():
    torch.manual_seed(0)
    record = {"layouts": {}, "logits": {}}
    for name, (block, layers) in ARCHS.items():
        model = ResNet(block, layers)
        shapes = [(k, list(v.shape)) for k, v in model.state_dict().items()]
        record["layouts"][name] = shapes
        if name in LOGITS_CASES:
            xshape, seed = LOGITS_CASES[name]
            model.load_state_dict({k: torch.from_numpy(v) for k, v in seeded_state_dict(shapes, seed).items()})
            model.eval()
            with torch.no_grad():
                logits = model(torch.from_numpy(seeded_input(xshape, seed + 1)))
            record["logits"][name] = {"input_shape": list(xshape), "seed": seed,
                                      "logits": np.round(logits.double().numpy(), 6).tolist()}
    here = os.path.dirname(os.path.abspath(__file__))
    model = ResNet(BasicBlock, [2, 2, 2, 2])
    state = strided_checkpoint(model, 1818)
    checkpoint = os.path.join(here, "resnet18_torchvision_layout.pth")
    torch.save(state, checkpoint)
    model.load_state_dict(torch.load(checkpoint))
    model.eval()
    with torch.no_grad():
        logits = model(torch.from_numpy(seeded_input((2, 3, 32, 32), 1819)))
    record["checkpoint"] = {"file": "resnet18_torchvision_layout.pth", "input_shape": [2, 3, 32, 32],
                            "input_seed": 1819, "logits": np.round(logits.double().numpy(), 6).tolist()}
    print(f"wrote {checkpoint} ({os.path.getsize(checkpoint)} bytes); logits std {logits.std():.3f}")
    path = os.path.join(here, "resnet_values.json")
    with open(path, "w") as f:
        json.dump(record, f, separators=(",", ":"))
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
