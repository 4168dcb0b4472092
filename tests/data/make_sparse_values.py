"""Prints what tests/test_sparse.py expects of torch (2.13, CPU): reprs, node names, gradients and
error texts of sparse COO tensors. Run with torch's venv; the tests hold the printed values as
literals (tritensor's names replace torch's: tritensor.sparse_coo for torch.sparse_coo).

    /work/torchenv/bin/python tests/data/make_sparse_values.py
"""
import torch

I = [[0, 1, 0, 2], [1, 0, 1, 2]]
V = [1.0, 2.0, 3.0, 4.0]
D = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def show(label, fn):
    try:
        out = fn()
    except Exception as e:     # noqa: BLE001  (the error text is the record)
        out = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    print(f"--- {label}\n{out}")


def coo(requires_grad=False):
    return torch.sparse_coo_tensor(I, V, (3, 3)).requires_grad_(requires_grad)


def grads_sparse_mm():
    s = coo(True)
    y = torch.sparse.mm(s, torch.tensor(D))
    y.sum().backward()
    v, dg = torch.tensor(V, requires_grad=True), torch.tensor(D, requires_grad=True)
    z = torch.sparse.mm(torch.sparse_coo_tensor(I, v, (3, 3)), dg)
    (z * z).sum().backward()
    return y.grad_fn.name(), s.grad, v.grad, dg.grad


def grads_mm():
    s = coo(True)
    y = s @ torch.tensor(D)
    (y * y).sum().backward()
    s2, x = coo(True), torch.arange(6.0).reshape(2, 3).requires_grad_()
    z = x @ s2
    (z * z).sum().backward()
    return y.grad_fn.name(), s.grad, z, x.grad, s2.grad


def grads_structural():
    s = coo(True)
    (s.to_dense() * torch.arange(9.0).reshape(3, 3)).sum().backward()
    c0 = coo(True)
    c = c0.coalesce()
    (c.values() * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    x = torch.tensor([[0.0, 1.0], [2.0, 0.0]], requires_grad=True)
    sx = x.to_sparse()
    torch.sparse.sum(sx).backward()
    acc = coo(True)
    for _ in range(2):
        torch.sparse.mm(acc, torch.tensor(D)).sum().backward()
    return s.grad, c.grad_fn.name(), c.values().grad_fn.name(), c0.grad, sx.grad_fn.name(), x.grad, acc.grad.to_dense()


def mixed_accumulation():
    s = torch.tensor([[1.0, 0.0], [0.0, 2.0]]).to_sparse().requires_grad_()
    d = torch.ones(2, 2, requires_grad=True)
    torch.sparse.sum(s * d).backward()
    first = d.grad
    (d * 3).sum().backward()
    d2 = torch.ones(2, 2, requires_grad=True)
    (d2 * 3).sum().backward()
    torch.sparse.sum(s * d2).backward()
    return first, s.grad, d.grad, d2.grad


def sums_and_adds():
    s = coo()
    h = torch.sparse_coo_tensor([[0, 1, 0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    a, b = coo(True), torch.sparse_coo_tensor([[2, 0], [0, 0]], [5.0, 6.0], (3, 3)).requires_grad_()
    z = a + b
    torch.sparse.sum(z * 2).backward()
    c = coo().coalesce()
    return (torch.sparse.sum(s), torch.sparse.sum(s, 1), s.sum(0), torch.sparse.sum(h, 1), torch.sparse.sum(h, 0),
            z.grad_fn.name(), z.is_coalesced(), a.grad, c + c, (c + c).is_coalesced(), c * torch.arange(9.0).reshape(3, 3))


s2 = torch.tensor([[1.0, 0.0], [0.0, 2.0]]).to_sparse()
for label, fn in [
    ("repr", lambda: coo()),
    ("repr empty", lambda: torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.int64), torch.zeros(0, dtype=torch.float64), (4,))),
    ("repr grad_fn", lambda: torch.sparse_coo_tensor([[1]], [2.0], (2,)).requires_grad_() * 2),
    ("nnz mismatch", lambda: torch.sparse_coo_tensor([[0, 1]], [1.0, 2.0, 3.0])),
    ("len(size)", lambda: torch.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2, 2))),
    ("negative", lambda: torch.sparse_coo_tensor([[0, -1]], [1.0, 2.0])),
    ("values size", lambda: torch.sparse_coo_tensor([[0, 1]], [[1.0], [2.0]], (2, 3))),
    ("out of range", lambda: torch.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,), check_invariants=True)),
    ("is_coalesced", lambda: torch.sparse_coo_tensor([[1, 0]], [1.0, 2.0], (2,), is_coalesced=True, check_invariants=True)),
    ("values()", lambda: coo().values()),
    ("to_sparse(3)", lambda: torch.ones(2, 2).to_sparse(3)),
    ("sparse to_sparse(1)", lambda: torch.ones(2, 2).to_sparse().to_sparse(1)),
    ("sparse.sum(dense)", lambda: torch.sparse.sum(torch.ones(2, 2))),
    ("mm size", lambda: torch.sparse.mm(s2, torch.ones(3, 3))),
    ("mm dtype", lambda: s2 @ torch.ones(2, 3, dtype=torch.float64)),
    ("mm 3d", lambda: torch.sparse.mm(torch.ones(2, 2, 2).to_sparse(), torch.ones(2, 2))),
    ("mm hybrid", lambda: torch.sparse.mm(torch.ones(2, 2, 1).to_sparse(2), torch.ones(2, 2))),
    ("mm bool", lambda: torch.sparse.mm(torch.tensor([[True]]).to_sparse(), torch.ones(1, 1, dtype=torch.bool))),
    ("mm int", lambda: torch.sparse.mm(torch.tensor([[1, 0], [0, 2]]).to_sparse(), torch.ones(2, 3, dtype=torch.int64))),
    ("mm dense dense", lambda: torch.sparse.mm(torch.ones(2, 2), torch.ones(2, 2))),
    ("add sparse dense", lambda: s2 + torch.ones(2, 2)),
    ("add density", lambda: s2 + torch.ones(2, 2).to_sparse(1)),
    ("add size", lambda: s2 + torch.ones(3, 2).to_sparse()),
    ("exp", lambda: torch.exp(s2)),
    ("mean", lambda: s2.mean()),
    ("view", lambda: s2.view(4)),
    ("numpy", lambda: s2.numpy()),
    ("data_ptr", lambda: s2.data_ptr()),
    ("sparse.mm gradients", grads_sparse_mm),
    ("mm gradients", grads_mm),
    ("structural gradients", grads_structural),
    ("sums and additions", sums_and_adds),
    ("mixed sparse/dense accumulation", mixed_accumulation),
    ("sum keepdim", lambda: (coo().sum(0, keepdim=True), coo().sum(1, keepdim=True), coo(True).sum((0, 1), keepdim=True),
                             torch.sparse_coo_tensor([[0, 1, 0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).sum((0, 1), keepdim=True))),
    ("reshape", lambda: coo().reshape(9)),
    *[(f"unary {n}", lambda n=n: getattr(torch, n)(torch.sparse_coo_tensor([[0, 1, 0], [1, 0, 1]], [0.5, -0.75, 0.25],
                                                                           (2, 2)).requires_grad_()))
      for n in ("abs", "sqrt", "sin", "tanh", "atanh", "floor", "sign", "expm1", "log1p", "deg2rad", "relu", "isnan",
                "signbit")],
    ("sin backward", lambda: torch.sparse.sum(torch.sin(coo(True))).backward()),
]:
    show(label, fn)
