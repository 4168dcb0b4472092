"""tritensor.vision.models' ResNets (issue 22 item 5): torchvision's module layout and state_dict
keys, logits for seeded weights recorded from torch (tests/data/make_resnet_values.py writes
tests/data/resnet_values.json with torchvision's definition; no weights are committed: the same
seeded_state_dict below makes them), a checkpoint written by torch.save (a small one, by the
same script) loading through tt.load to torch's logits, and PyTorch's fine-tuning tutorial as
written: freeze the base, replace fc, optimise the classifier only; the frozen base records no
graph, so it saves nothing for backward."""
import json
import os

import numpy as np
import pytest

import tritensor as tt
from tritensor.vision import models

nn = tt.nn

with open(os.path.join(os.path.dirname(__file__), "data", "resnet_values.json")) as _f:
    RECORDED = json.load(_f)


def seeded_state_dict(shapes, seed):
    """tests/data/make_resnet_values.py's function, verbatim: the weights both sides use."""
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


def _layout(model):
    return [[k, list(v.shape)] for k, v in model.state_dict().items()]


@pytest.fixture(scope="module")
def resnet18():
    return models.resnet18()


@pytest.fixture(scope="module")
def resnet50():
    return models.resnet50()


def test_state_dict_keys_and_shapes_are_torchvisions(resnet18, resnet50):
    assert _layout(resnet18) == RECORDED["layouts"]["resnet18"]
    assert _layout(resnet50) == RECORDED["layouts"]["resnet50"]
    assert _layout(models.resnet34()) == RECORDED["layouts"]["resnet34"]
    assert len(RECORDED["layouts"]["resnet18"]) == 122 and len(RECORDED["layouts"]["resnet50"]) == 320


@pytest.mark.parametrize("name", ["resnet18", "resnet50"])
def test_loaded_weights_give_the_logits_recorded_from_torch(name, request):
    model = request.getfixturevalue(name)
    case = RECORDED["logits"][name]
    weights = seeded_state_dict(RECORDED["layouts"][name], case["seed"])
    result = model.load_state_dict({k: tt.from_numpy(v) for k, v in weights.items()})
    assert not result.missing_keys and not result.unexpected_keys
    model.eval()
    with tt.no_grad():
        logits = model(tt.from_numpy(seeded_input(case["input_shape"], case["seed"] + 1)))
    want = np.array(case["logits"])
    assert logits.shape == want.shape
    np.testing.assert_allclose(logits.numpy(), want, rtol=1e-4, atol=2e-4 * np.abs(want).max())
    assert model.layer1[0].bn1.num_batches_tracked.item() == 7


def test_a_checkpoint_written_by_torch_save_loads_through_tt_load(resnet18):
    """tests/data/resnet18_torchvision_layout.pth is torch.save's file of a torchvision-layout
    ResNet-18 state_dict (its weights strided, overlapping views of one storage, to stay small):
    tt.load reads it, load_state_dict takes it, and the logits are those torch computed from it."""
    case = RECORDED["checkpoint"]
    state = tt.load(os.path.join(os.path.dirname(__file__), "data", case["file"]))
    assert [[k, list(v.shape)] for k, v in state.items()] == RECORDED["layouts"]["resnet18"]
    assert state["layer4.1.conv2.weight"].stride() == (13, 17, 3, 1)         # views, as torch wrote them
    result = resnet18.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    resnet18.eval()
    with tt.no_grad():
        logits = resnet18(tt.from_numpy(seeded_input(case["input_shape"], case["input_seed"])))
    want = np.array(case["logits"])
    np.testing.assert_allclose(logits.numpy(), want, rtol=1e-4, atol=2e-4 * np.abs(want).max())


def test_fine_tuning_as_the_tutorial_writes_it():
    tt.manual_seed(0)
    model = models.resnet18()
    for param in model.parameters():                 # freeze the base
        param.requires_grad = False
    model.fc = nn.Linear(model.fc.in_features, 3)    # a new classifier: its parameters require grad
    optimizer = tt.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    frozen = {k: v.clone() for k, v in model.state_dict().items() if not k.startswith("fc.")}
    rng = np.random.default_rng(0)
    x = tt.from_numpy(rng.standard_normal((6, 3, 32, 32)).astype(np.float32))
    y = tt.tensor([0, 1, 2, 0, 1, 2])
    model.train()
    losses = []
    for _ in range(4):
        logits = model(x)
        loss = loss_fn(logits, y)
        # the frozen base recorded no graph: fc's input has no node, so nothing of the base was
        # saved for backward; the graph is the loss, fc's addmm and fc's two leaves
        assert logits.grad_fn.name() == "AddmmBackward0"
        leaves, seen, stack = set(), set(), [loss.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if node.name() == "AccumulateGrad":
                leaves.add(id(node.variable))
            stack.extend(n for n, _ in node.next_functions)
        assert leaves == {id(model.fc.weight), id(model.fc.bias)}
        assert len(seen) <= 8
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert all(p.grad is None for n, p in model.named_parameters() if not n.startswith("fc."))
    after = model.state_dict()
    for k, v in frozen.items():
        if "running" in k or "num_batches" in k:
            continue                     # batch norm in train mode still tracks statistics, as torch's
        assert tt.equal(after[k], v), k
    assert after["bn1.num_batches_tracked"].item() == 4


def test_constructor_arguments_and_errors():
    with pytest.raises(NotImplementedError, match="does not download weights"):
        models.resnet18(weights="IMAGENET1K_V1")
    small = models.ResNet(models.BasicBlock, [1, 1, 1, 1], num_classes=7, zero_init_residual=True)
    assert small.fc.out_features == 7 and [k for k in small.state_dict() if k.startswith("layer2.0.downsample")] == [
        "layer2.0.downsample.0.weight", "layer2.0.downsample.1.weight", "layer2.0.downsample.1.bias",
        "layer2.0.downsample.1.running_mean", "layer2.0.downsample.1.running_var",
        "layer2.0.downsample.1.num_batches_tracked"]
    assert small.layer1[0].bn2.weight.abs().sum().item() == 0       # zero_init_residual
    assert small.layer1[0].bn1.weight.tolist() == [1.0] * 64
    with pytest.raises(ValueError, match="BasicBlock only supports groups=1 and base_width=64"):
        models.BasicBlock(64, 64, groups=2)
    with pytest.raises(NotImplementedError, match="Dilation > 1 not supported in BasicBlock"):
        models.BasicBlock(64, 64, dilation=2)
    with pytest.raises(ValueError, match="replace_stride_with_dilation should be None or a 3-element tuple"):
        models.ResNet(models.Bottleneck, [1, 1, 1, 1], replace_stride_with_dilation=[False])
    assert repr(small.layer1[0].conv1) == "Conv2d(64, 64, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)"



def test_a_residual_block_differentiates_in_training_mode():
    """A downsampling Bottleneck in training mode (batch statistics, in-place ReLU, the residual added
    in place; 1x1 and strided 3x3 convolutions) against finite differences, in float64, for the
    input and the parameters of both paths."""
    tt.manual_seed(1)
    down = nn.Sequential(nn.Conv2d(3, 8, 1, stride=2, bias=False), nn.BatchNorm2d(8))
    m = models.Bottleneck(3, 2, stride=2, downsample=down)
    m = m.double().train()
    params = (m.conv1.weight, m.bn1.weight, m.bn1.bias, down[0].weight, down[1].weight)   # the others: as these
    x = tt.tensor(np.random.default_rng(2).standard_normal((2, 3, 4, 4)), requires_grad=True)
    # gradcheck perturbs each input in place: the parameters it perturbs are the module's own
    assert tt.autograd.gradcheck(lambda x, *ps: m(x), (x,) + params, eps=1e-6, atol=1e-5)


def test_a_block_on_the_gpu_device_matches_the_cpu():
    tt.manual_seed(4)
    down = nn.Sequential(nn.Conv2d(4, 8, 1, stride=2, bias=False), nn.BatchNorm2d(8))
    cpu = models.Bottleneck(4, 2, stride=2, downsample=down).train()
    gpu = models.Bottleneck(4, 2, stride=2, downsample=nn.Sequential(
        nn.Conv2d(4, 8, 1, stride=2, bias=False), nn.BatchNorm2d(8)))
    gpu.load_state_dict(cpu.state_dict())
    gpu.to("cuda").train()
    x = np.random.default_rng(4).standard_normal((2, 4, 6, 6)).astype(np.float32)
    outs = []
    for m, device in ((cpu, "cpu"), (gpu, "cuda")):
        xt = tt.tensor(x, device=device, requires_grad=True)
        y = m(xt)
        y.pow(2).sum().backward()
        outs.append([y.detach().cpu().numpy(), xt.grad.cpu().numpy(), m.conv2.weight.grad.cpu().numpy(),
                     m.bn3.running_var.cpu().numpy()])
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-4)


def test_the_transfer_learning_tutorial_runs_as_written(tmp_path):
    """PyTorch's "Transfer Learning for Computer Vision Tutorial" (ConvNet as fixed feature
    extractor) with only the imports swapped, on a tiny ImageFolder of generated images (32-pixel
    crops instead of 224, one epoch, no worker processes): transforms, ImageFolder, DataLoader,
    set_grad_enabled, torch.max, .data, .double(), StepLR, deepcopy of the state_dict."""
    import copy

    Image = pytest.importorskip("PIL.Image")
    from tritensor import optim
    from tritensor.optim import lr_scheduler
    from tritensor.vision import datasets, transforms
    torch = tt

    rng = np.random.default_rng(0)
    for phase, n in (("train", 4), ("val", 2)):
        for c, cls in enumerate(("ants", "bees")):
            (tmp_path / phase / cls).mkdir(parents=True)
            for i in range(n):
                pixels = (rng.random((40, 48, 3)) * 80 + 120 * c).astype(np.uint8)
                Image.fromarray(pixels).save(tmp_path / phase / cls / f"{i}.png")
    data_transforms = {
        'train': transforms.Compose([transforms.RandomResizedCrop(32), transforms.RandomHorizontalFlip(),
                                     transforms.ToTensor(),
                                     transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]),
        'val': transforms.Compose([transforms.Resize(36), transforms.CenterCrop(32), transforms.ToTensor(),
                                   transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]),
    }
    image_datasets = {x: datasets.ImageFolder(os.path.join(tmp_path, x), data_transforms[x]) for x in ['train', 'val']}
    dataloaders = {x: torch.utils.data.DataLoader(image_datasets[x], batch_size=4, shuffle=True)
                   for x in ['train', 'val']}
    dataset_sizes = {x: len(image_datasets[x]) for x in ['train', 'val']}
    assert image_datasets['train'].classes == ['ants', 'bees'] and dataset_sizes == {'train': 8, 'val': 4}
    device = torch.device("cpu")

    model_conv = models.resnet18()
    for param in model_conv.parameters():
        param.requires_grad = False
    num_ftrs = model_conv.fc.in_features
    model_conv.fc = nn.Linear(num_ftrs, 2)
    model_conv = model_conv.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer_conv = optim.SGD(model_conv.fc.parameters(), lr=0.001, momentum=0.9)
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=7, gamma=0.1)
    conv1_before, fc_before = model_conv.conv1.weight.clone(), model_conv.fc.weight.clone()

    model, optimizer, scheduler = model_conv, optimizer_conv, exp_lr_scheduler     # train_model's body
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = -1.0
    for phase in ['train', 'val']:
        if phase == 'train':
            model.train()
        else:
            model.eval()
        running_loss = 0.0
        running_corrects = 0
        for inputs, labels in dataloaders[phase]:
            inputs = inputs.to(device)
            labels = labels.to(device)
            optimizer.zero_grad()
            with torch.set_grad_enabled(phase == 'train'):
                outputs = model(inputs)
                _, preds = torch.max(outputs, 1)
                loss = criterion(outputs, labels)
                if phase == 'train':
                    loss.backward()
                    optimizer.step()
            running_loss += loss.item() * inputs.size(0)
            running_corrects += torch.sum(preds == labels.data)
        if phase == 'train':
            scheduler.step()
        epoch_acc = running_corrects.double() / dataset_sizes[phase]
        assert epoch_acc.dtype is torch.float64 and 0 <= epoch_acc.item() <= 1
        if phase == 'val' and epoch_acc > best_acc:
            best_acc = epoch_acc
            best_model_wts = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_model_wts)
    assert torch.equal(model.conv1.weight, conv1_before) and not torch.equal(model.fc.weight, fc_before)
    assert optimizer.param_groups[0]["lr"] == 0.001 and scheduler.last_epoch == 1
