"""Records the values tests/test_batchnorm.py checks tritensor's normalisation against: run with
torch 2.13 (CPU) in /work/torchenv; prints the Python literals pasted into
test_values_recorded_from_torch (tritensor's tests never import torch).

    /work/torchenv/bin/python tests/data/make_norm_values.py
"""
import numpy as np
import torch
import torch.nn.functional as F


def inputs():
    """The deterministic inputs (the test builds the same ones with NumPy)."""
    i = np.arange(2 * 4 * 3, dtype=np.float64).reshape(2, 4, 3)
    x = ((i * 7) % 11) / 3 - 1.2
    w = np.array([0.5, -1.0, 2.0, 1.5])
    b = np.array([0.1, 0.2, -0.3, 0.0])
    return x, w, b


def r(t):
    return np.round(t.detach().double().numpy(), 6).tolist()


def main():
    x, w, b = (torch.tensor(a) for a in inputs())
    x.requires_grad_()
    bn = torch.nn.BatchNorm1d(4).double()
    with torch.no_grad():
        bn.weight.copy_(w)
        bn.bias.copy_(b)
    y = bn(x)
    bn(x * 2 + 1)                  # a second step for the running statistics
    g = torch.linspace(-1, 1, 24, dtype=torch.float64).reshape(2, 4, 3)
    (dx,) = torch.autograd.grad(y, x, g)
    bn.eval()
    print("BATCH_NORM = {")
    print(f"    'train': {r(y)},")
    print(f"    'dx': {r(dx)},")
    print(f"    'running_mean': {r(bn.running_mean)},")
    print(f"    'running_var': {r(bn.running_var)},")
    print(f"    'eval': {r(bn(x))},")
    print("}")
    gn = F.group_norm(x, 2, w, b)
    (gdx,) = torch.autograd.grad(gn, x, g)
    print(f"GROUP_NORM = {{'out': {r(gn)}, 'dx': {r(gdx)}}}")
    print(f"INSTANCE_NORM = {r(F.instance_norm(x, weight=w, bias=b))}")
    print(f"LOCAL_RESPONSE_NORM = {r(F.local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.5))}")


if __name__ == "__main__":
    main()
