"""python -m tritensor: train the PyTorch tutorial network on real data, on the best device.

The network is the one of PyTorch's "Build the Neural Network" tutorial (Flatten, Linear, ReLU,
Linear, ReLU, Linear) trained with CrossEntropyLoss and SGD or Adam, written exactly as a torch
user writes it with only the import swapped. The data is scikit-learn's bundled 8x8 handwritten
digits (1797 images; it installs offline with the `examples` extra); without scikit-learn a
synthetic data set of the same shape is used, and the run says so.

With ``--model cnn`` it trains a small convolutional network instead, as PyTorch's CIFAR-10
tutorial builds one: two blocks of Conv2d (3x3), BatchNorm2d, ReLU and MaxPool2d (8x8 -> 4x4 ->
2x2), then a Linear classifier, trained 8 epochs with Adam at 3e-3; it reaches about 98% test
accuracy on the digits in about a minute on a 2-core cpu. The MLP stays the default.

After training it saves the model with tt.save, loads it back into a fresh model and checks that
both predict the same; it then cross-checks one batch of forward and backward results against
the NumPy reference (the cpu device, and an independent NumPy implementation of the network),
and prints what ran where. Exit status 0 means every check passed.

    python -m tritensor                    # best device: a real GPU, else cpu
    python -m tritensor --device cuda      # cuda; emulated (Triton's interpreter) without a GPU
    python -m tritensor --optimizer sgd --epochs 20
    python -m tritensor --model cnn        # the convolutional network
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time


def _real_gpu() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:   # no CuPy, no driver, no device: all mean "no real GPU"
        return False


def pick_device(requested: str) -> tuple[str, str]:
    """(device, what it is). Decided before tritensor is imported: emulation is chosen by an
    environment variable that Triton reads when the kernels are first decorated."""
    gpu = _real_gpu()
    if requested == "auto":
        requested = "cuda" if gpu else "cpu"
    if requested.startswith("cuda"):
        if gpu and not os.environ.get("TRITENSOR_EMULATE_CUDA"):
            return requested, "a real GPU: compiled Triton kernels"
        os.environ["TRITENSOR_EMULATE_CUDA"] = "1"
        return requested, "the emulated GPU: the same Triton kernels under Triton's interpreter"
    return requested, "the cpu device: the NumPy reference backend"


def load_digits(seed: int):
    """(images float32 (N, 8, 8) in [0, 1], labels int64 (N,), source description)."""
    import numpy as np
    try:
        from sklearn.datasets import load_digits as _load
    except ImportError:
        rng = np.random.default_rng(seed)
        # Ten fixed random prototypes plus noise: learnable, but no substitute for real data.
        protos = rng.random((10, 8, 8))
        labels = rng.integers(0, 10, 1797)
        images = np.clip(protos[labels] + 0.35 * rng.standard_normal((1797, 8, 8)), 0, 1)
        return (images.astype(np.float32), labels.astype(np.int64),
                "SYNTHETIC data (scikit-learn is not installed: pip install 'tritensor[examples]' "
                "for the real digits)")
    digits = _load()
    return (digits.images.astype(np.float32) / 16.0, digits.target.astype(np.int64),
            "scikit-learn's 8x8 handwritten digits (1797 images, 10 classes)")


def build_model(tt, hidden: int, kind: str = "mlp", channels=(32, 64)):
    """The tutorial's MLP (``hidden`` units), or the CNN (``channels`` of its two convolutions)."""
    nn = tt.nn

    class NeuralNetwork(nn.Module):      # PyTorch's tutorial network, sized for 8x8 images
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(8 * 8, hidden),
                nn.ReLU(),
                nn.Linear(hidden, hidden),
                nn.ReLU(),
                nn.Linear(hidden, 10),
            )

        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))

    class ConvNet(nn.Module):            # conv, batch norm, ReLU, pooling: 8x8 -> 4x4 -> 2x2
        def __init__(self, c1, c2):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, c1, kernel_size=3, padding=1, bias=False),
                nn.BatchNorm2d(c1),
                nn.ReLU(),
                nn.MaxPool2d(2),
                nn.Conv2d(c1, c2, kernel_size=3, padding=1, bias=False),
                nn.BatchNorm2d(c2),
                nn.ReLU(),
                nn.MaxPool2d(2),
            )
            self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(c2 * 2 * 2, 10))

        def forward(self, x):
            return self.classifier(self.features(x.unsqueeze(1)))    # (N, 8, 8) images: one channel

    return ConvNet(*channels) if kind == "cnn" else NeuralNetwork()


def _progress(iterable, desc, total):
    try:
        from tqdm import tqdm
    except ImportError:     # tqdm is an optional extra: without it, no bar
        return iterable
    # disable=None: a bar on a terminal, none in a log or a pipe (where it would be noise)
    return tqdm(iterable, desc=desc, total=total, leave=False, dynamic_ncols=True, file=sys.stdout,
                disable=None)


def train_epoch(tt, model, loader, loss_fn, optimizer, device, desc):
    model.train()
    total, count = 0.0, 0
    bar = _progress(loader, desc, len(loader))
    for x, y in bar:
        x, y = x.to(device), y.to(device)
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * len(y)
        count += len(y)
        if hasattr(bar, "set_postfix"):
            bar.set_postfix(loss=f"{loss.item():.4f}")
    return total / count


def evaluate(tt, model, loader, loss_fn, device):
    model.eval()
    correct, total_loss, count = 0, 0.0, 0
    with tt.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            total_loss += loss_fn(logits, y).item() * len(y)
            correct += (logits.argmax(1) == y).sum().item()
            count += len(y)
    return correct / count, total_loss / count


def numpy_reference(model, x, y):
    """The network's forward and backward written directly in NumPy (float64): logits, mean
    cross-entropy, and the gradient of every parameter, by name."""
    import numpy as np
    layers = [m for m in model.linear_relu_stack if type(m).__name__ == "Linear"]
    ws = [m.weight.detach().cpu().numpy().astype(np.float64) for m in layers]
    bs = [m.bias.detach().cpu().numpy().astype(np.float64) for m in layers]
    h = [x.reshape(len(x), -1).astype(np.float64)]
    for i, (w, b) in enumerate(zip(ws, bs)):
        z = h[-1] @ w.T + b
        h.append(np.maximum(z, 0) if i < len(ws) - 1 else z)
    logits = h[-1]
    shifted = logits - logits.max(1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    loss = -logp[np.arange(len(y)), y].mean()
    g = np.exp(logp)
    g[np.arange(len(y)), y] -= 1
    g /= len(y)
    grads = {}
    names = [n for n, _ in model.named_parameters()]
    for i in reversed(range(len(ws))):
        grads[names[2 * i]] = g.T @ h[i]
        grads[names[2 * i + 1]] = g.sum(0)
        if i:
            g = (g @ ws[i]) * (h[i] > 0)
    return logits, loss, grads


def _im2col(x):
    """x (N, C, H, W) -> columns (N, C * 9, H, W) of its 3x3 neighbourhoods (zero padding 1)."""
    import numpy as np
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    return np.stack([xp[:, :, i:i + h, j:j + w] for i in range(3) for j in range(3)], 2).reshape(n, c * 9, h, w)


def _col2im(cols, c):
    """The adjoint of _im2col: each column's 3x3 taps added back to the padded image."""
    import numpy as np
    n, _, h, w = cols.shape
    taps = cols.reshape(n, c, 9, h, w)
    xp = np.zeros((n, c, h + 2, w + 2))
    for k in range(9):
        i, j = divmod(k, 3)
        xp[:, :, i:i + h, j:j + w] += taps[:, :, k]
    return xp[:, :, 1:-1, 1:-1]


def numpy_reference_cnn(model, x, y):
    """The ConvNet's forward and backward in eval mode written directly in NumPy (float64):
    3x3 convolutions as im2col products, batch norm as its running-statistics affine map,
    ReLU, 2x2 max pooling routing each gradient to its window's first maximum, the classifier."""
    import numpy as np

    def arr(t):
        return t.detach().cpu().numpy().astype(np.float64)

    convs = [m for m in model.features if type(m).__name__ == "Conv2d"]
    bns = [m for m in model.features if type(m).__name__ == "BatchNorm2d"]
    fc = model.classifier[1]
    h = x.astype(np.float64)[:, None]
    saved = []
    for conv, bn in zip(convs, bns):
        w = arr(conv.weight)
        cols = _im2col(h)
        z = np.einsum("ok,nkyx->noyx", w.reshape(w.shape[0], -1), cols)
        scale = arr(bn.weight) / np.sqrt(arr(bn.running_var) + bn.eps)
        a = (z - arr(bn.running_mean)[:, None, None]) * scale[:, None, None] + arr(bn.bias)[:, None, None]
        r = np.maximum(a, 0)
        n, c, hh, ww = r.shape
        windows = r.reshape(n, c, hh // 2, 2, ww // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, hh // 2, ww // 2, 4)
        first = windows.argmax(-1)                   # numpy's argmax: the first maximum, as torch's pooling
        saved.append((h, cols, z, a, first, scale, r.shape))
        h = windows.max(-1)
    flat = h.reshape(len(h), -1)
    logits = flat @ arr(fc.weight).T + arr(fc.bias)
    shifted = logits - logits.max(1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    loss = -logp[np.arange(len(y)), y].mean()
    g = np.exp(logp)
    g[np.arange(len(y)), y] -= 1
    g /= len(y)
    grads = {"classifier.1.weight": g.T @ flat, "classifier.1.bias": g.sum(0)}
    gh = (g @ arr(fc.weight)).reshape(h.shape)
    names = {id(p): n for n, p in model.named_parameters()}
    for conv, bn, (inp, cols, z, a, first, scale, shape) in reversed(list(zip(convs, bns, saved))):
        n, c, hh, ww = shape
        onehot = np.eye(4)[first] * gh[..., None]          # the pooled gradient at each window's maximum
        gr = onehot.reshape(n, c, hh // 2, ww // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(shape)
        ga = gr * (a > 0)
        grads[names[id(bn.bias)]] = ga.sum((0, 2, 3))
        xhat = (z - arr(bn.running_mean)[:, None, None]) / np.sqrt(arr(bn.running_var) + bn.eps)[:, None, None]
        grads[names[id(bn.weight)]] = (ga * xhat).sum((0, 2, 3))
        gz = ga * scale[:, None, None]
        w = arr(conv.weight)
        grads[names[id(conv.weight)]] = np.einsum("noyx,nkyx->ok", gz, cols).reshape(w.shape)
        gh = _col2im(np.einsum("ok,noyx->nkyx", w.reshape(w.shape[0], -1), gz), inp.shape[1])
    return logits, loss, grads


def cross_check(tt, model, x, y, device, reference=numpy_reference):
    """Forward and backward of one batch on ``device`` against the cpu device (the NumPy
    reference backend) and an independent NumPy implementation. Returns True when all agree."""
    import copy

    import numpy as np
    runs = {}
    for where in dict.fromkeys([device, "cpu"]):
        m = copy.deepcopy(model).to(where)
        m.zero_grad()
        logits = m(x.to(where))
        loss = tt.nn.functional.cross_entropy(logits, y.to(where))
        loss.backward()
        runs[where] = (logits.detach().cpu().numpy(), loss.item(),
                       {n: p.grad.cpu().numpy() for n, p in m.named_parameters()})
    ref_logits, ref_loss, ref_grads = reference(model, x.numpy(), y.numpy())
    ok = True
    print("cross-check of one batch (forward, loss, every parameter's gradient):")
    for where, (logits, loss, grads) in runs.items():
        for what, a, b in [("logits", logits, ref_logits), ("loss", np.float64(loss), ref_loss)] + \
                [(f"grad {n}", grads[n], ref_grads[n]) for n in grads]:
            err = float(np.max(np.abs(a - b))) if np.size(a) else 0.0
            scale = float(np.max(np.abs(b))) if np.size(b) else 0.0
            good = err <= 1e-4 * max(scale, 1.0)
            ok &= good
            if not good:
                print(f"  MISMATCH {where} {what}: max |diff| {err:.3g}")
        label = f"{where} ({'NumPy reference backend' if where == 'cpu' else 'Triton kernels'})"
        print(f"  {label:45s} vs NumPy by hand: {'agree' if ok else 'DIFFER'}")
    return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tritensor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("mlp", "cnn"), default="mlp",
                        help="mlp: the tutorial's network (default); cnn: conv, batch norm, ReLU, pooling")
    parser.add_argument("--device", default="auto",
                        help="auto (a real GPU, else cpu), cpu, or cuda (emulated where there is no GPU)")
    parser.add_argument("--epochs", type=int, default=None, help="default: 15 for the mlp, 8 for the cnn")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    parser.add_argument("--lr", type=float, default=None,
                        help="default: 1e-3 for Adam (3e-3 for the cnn, whose batch norm takes it), 0.05 for SGD")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", default=None, help="where to keep the trained model (default: a temporary file)")
    parser.add_argument("--min-accuracy", type=float, default=0.0,
                        help="exit with status 1 when the final test accuracy is lower")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads for the cpu device's products (default 1: these matrices are "
                             "small, and more threads only contend; 0 leaves the BLAS library's own choice)")
    args = parser.parse_args(argv)
    if args.epochs is None:
        args.epochs = 8 if args.model == "cnn" else 15
    limits = None
    if args.blas_threads > 0:
        try:     # threadpoolctl comes with scikit-learn (the examples extra); without it, no limit
            from threadpoolctl import threadpool_limits
            limits = threadpool_limits(args.blas_threads, user_api="blas")
        except ImportError:
            pass
    try:
        return _run(args)
    finally:
        if limits is not None:
            limits.restore_original_limits()


def _run(args) -> int:
    device, kind = pick_device(args.device)
    t_start = time.perf_counter()
    import numpy as np

    import tritensor as tt
    from tritensor import nn
    from tritensor.utils.data import DataLoader, TensorDataset, random_split

    tt.manual_seed(args.seed)
    images, labels, source = load_digits(args.seed)
    print(f"tritensor {tt.__version__}: training on {device}, {kind}")
    print(f"data: {source}")
    dataset = TensorDataset(tt.from_numpy(images), tt.from_numpy(labels))
    n_test = len(dataset) // 5
    train_set, test_set = random_split(dataset, [len(dataset) - n_test, n_test],
                                       generator=tt.Generator().manual_seed(args.seed))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              generator=tt.Generator().manual_seed(args.seed))
    test_loader = DataLoader(test_set, batch_size=256)

    model = build_model(tt, args.hidden, args.model).to(device)
    print(model)
    loss_fn = nn.CrossEntropyLoss()
    if args.optimizer == "adam":
        optimizer = tt.optim.Adam(model.parameters(), lr=args.lr or (3e-3 if args.model == "cnn" else 1e-3))
    else:
        optimizer = tt.optim.SGD(model.parameters(), lr=args.lr or 0.05, momentum=0.9)
    scheduler = tt.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        t0 = time.perf_counter()
        train_loss = train_epoch(tt, model, train_loader, loss_fn, optimizer, device,
                                 f"epoch {epoch}/{args.epochs}")
        scheduler.step()
        accuracy, test_loss = evaluate(tt, model, test_loader, loss_fn, device)
        print(f"epoch {epoch:2d}: train loss {train_loss:.4f}  test loss {test_loss:.4f}  "
              f"test accuracy {accuracy:6.2%}  ({time.perf_counter() - t0:.2f} s)")

    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        path = args.save or os.path.join(tmp, f"digits_{args.model}.pt")
        tt.save(model.state_dict(), path)
        restored = build_model(tt, args.hidden, args.model)
        restored.load_state_dict(tt.load(path, map_location="cpu"))
        restored.to(device).eval()
        model.eval()
        x, y = next(iter(test_loader))
        with tt.no_grad():
            same = bool((restored(x.to(device)) == model(x.to(device))).all().item())
        ok &= same
        print(f"saved to {path if args.save else 'a temporary .pt file'} "
              f"({os.path.getsize(path)} bytes) and loaded back: "
              f"{'identical predictions' if same else 'PREDICTIONS DIFFER'}")
    x, y = next(iter(DataLoader(test_set, batch_size=32)))
    ok &= cross_check(tt, model, x, y, device, numpy_reference_cnn if args.model == "cnn" else numpy_reference)
    elapsed = time.perf_counter() - t_start
    print(f"what ran where: model, loss, backward and {type(optimizer).__name__} steps on {device} "
          f"({kind}); the cross-check also on cpu (NumPy reference) and in plain NumPy")
    print(f"final test accuracy {accuracy:.2%}; {elapsed:.1f} s in all")
    if accuracy < args.min_accuracy:
        print(f"test accuracy below the required {args.min_accuracy:.0%}")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
