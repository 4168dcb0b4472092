"""Write tests/data/linalg_spectral_values.json: torch 2.13's gradients of the spectral half of
torch.linalg (eigh, svd, pinv, matrix_exp, cond, the matrix and vector norms with their
subgradients at zero, cross, vecdot, vander, matrix_power, multi_dot) at fixed float64 inputs.

Run once with torch installed, in a separate venv (tritensor never imports torch):

    /path/to/torchenv/bin/python tests/data/make_linalg_spectral_values.py

tests/test_linalg_spectral.py evaluates the same expressions in tritensor (cpu) and compares the
gradients. A case is {"name", "inputs": [matrices as lists], "grads": [lists]}; the expression of
each name is written out in both files (EXPRESSIONS here, the test's table there).
"""
import json
import math
import pathlib

import numpy as np
import torch

RNG = np.random.default_rng(77)


def sym(n):
    a = RNG.standard_normal((n, n))
    return a + a.T


def g(*shape):
    return RNG.standard_normal(shape)


W3 = g(3)
W33 = g(3, 3)
W43 = g(4, 3)


# name -> (function of the inputs returning a scalar, inputs)
EXPRESSIONS = {
    "eigh": (lambda a: (torch.linalg.eigh(a + a.mT)[0] * torch.tensor(W3)).sum()
             + (torch.linalg.eigh(a + a.mT)[1].abs() * torch.tensor(W33)).sum(), [g(3, 3)]),
    "eigh_upper": (lambda a: (torch.linalg.eigh(a, UPLO="U")[1].abs() * torch.tensor(W33)).sum(), [g(3, 3)]),
    "eigvalsh": (lambda a: (torch.linalg.eigvalsh(a) * torch.tensor(W3)).sum(), [sym(3)]),
    "svd_tall": (lambda a: (lambda u, s, vh: (u.abs() * torch.tensor(W43)).sum() + (s * torch.tensor(W3)).sum()
                 + (vh.abs() * torch.tensor(W33)).sum())(*torch.linalg.svd(a, full_matrices=False)), [g(4, 3)]),
    "svd_wide": (lambda a: (lambda u, s, vh: (u.abs() * torch.tensor(W33)).sum() + (s * torch.tensor(W3)).sum()
                 + (vh.abs() * torch.tensor(W43.T)).sum())(*torch.linalg.svd(a, full_matrices=False)), [g(3, 4)]),
    "svd_full": (lambda a: (lambda u, s, vh: u[:, :3].abs().sum() + (s * torch.tensor(W3)).sum())(
        *torch.linalg.svd(a)), [g(4, 3)]),
    "svdvals": (lambda a: (torch.linalg.svdvals(a) * torch.tensor(W3)).sum(), [g(3, 5)]),
    "svd_legacy_V": (lambda a: (torch.svd(a).V.abs() * torch.tensor(W33)).sum(), [g(4, 3)]),
    "pinv": (lambda a: (torch.linalg.pinv(a) * torch.tensor(W43.T)).sum(), [g(4, 3)]),
    "pinv_hermitian": (lambda a: (torch.linalg.pinv(a, hermitian=True) * torch.tensor(W33)).sum(), [sym(3)]),
    "matrix_exp": (lambda a: (torch.linalg.matrix_exp(a) * torch.tensor(W33)).sum(), [g(3, 3)]),
    "matrix_exp_large": (lambda a: (torch.linalg.matrix_exp(a) * torch.tensor(W33)).sum(), [3 * g(3, 3)]),
    "cond_2": (lambda a: torch.linalg.cond(a), [g(3, 3)]),
    "cond_m2": (lambda a: torch.linalg.cond(a, -2), [g(3, 3)]),
    "cond_nuc": (lambda a: torch.linalg.cond(a, "nuc"), [g(3, 3)]),
    "matrix_norm_nuc": (lambda a: torch.linalg.matrix_norm(a, "nuc"), [g(4, 3)]),
    "matrix_norm_2": (lambda a: torch.linalg.matrix_norm(a, 2), [g(4, 3)]),
    "matrix_norm_m2": (lambda a: torch.linalg.matrix_norm(a, -2), [g(4, 3)]),
    "matrix_norm_1": (lambda a: torch.linalg.matrix_norm(a, 1), [g(4, 3)]),
    "matrix_norm_inf": (lambda a: torch.linalg.matrix_norm(a, math.inf), [g(4, 3)]),
    "norm_nuc_legacy": (lambda a: torch.norm(a, "nuc"), [g(3, 4)]),
    "cross": (lambda a, b: (torch.linalg.cross(a, b) * torch.tensor(W43[:2])).sum(), [g(2, 3), g(1, 3)]),
    "vecdot": (lambda a, b: (torch.linalg.vecdot(a, b) * torch.tensor(W3[:2])).sum(), [g(2, 3), g(3)]),
    "vander": (lambda a: (torch.linalg.vander(a, N=4) * torch.tensor(W43[:3, :1])).sum(), [g(3)]),
    "matrix_power_m2": (lambda a: (torch.linalg.matrix_power(a, -2) * torch.tensor(W33)).sum(),
                        [g(3, 3) + 3 * np.eye(3)]),
    "matrix_power_5": (lambda a: (torch.linalg.matrix_power(a, 5) * torch.tensor(W33)).sum(), [g(3, 3) / 2]),
    "multi_dot": (lambda a, b, c, d: torch.linalg.multi_dot([a, b, c, d]), [g(3), g(3, 4), g(4, 2), g(2)]),
}

# subgradients at zero: vectors with exact zeros (and ties for the inf norms)
ZEROS = [[0.0, 1.5, -2.0, 0.0], [0.0, 0.0, 0.0, 0.0], [3.0, -3.0, 1.0, 0.0]]
for ord_ in (2, 1, math.inf, -math.inf, 0, 0.5, 3, -1):
    EXPRESSIONS[f"vector_norm_{ord_}"] = (
        lambda a, o=ord_: (torch.linalg.vector_norm(a, o, dim=1) * torch.tensor(W3)).sum(), [np.array(ZEROS)])


def main():
    cases = []
    for name, (fn, inputs) in EXPRESSIONS.items():
        ts = [torch.tensor(np.asarray(x), dtype=torch.float64, requires_grad=True) for x in inputs]
        grads = torch.autograd.grad(fn(*ts), ts, allow_unused=True)     # (the 0-"norm": no gradient)
        grads = [torch.zeros_like(t) if gr is None else gr for gr, t in zip(grads, ts)]
        cases.append({"name": name, "inputs": [np.asarray(x).tolist() for x in inputs],
                      "grads": [gr.tolist() for gr in grads]})
    out = pathlib.Path(__file__).with_name("linalg_spectral_values.json")
    weights = {"W3": W3.tolist(), "W33": W33.tolist(), "W43": W43.tolist()}
    out.write_text(json.dumps({"torch": torch.__version__, "weights": weights, "cases": cases}, indent=0))
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
