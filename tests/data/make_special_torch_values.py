"""Record torch 2.13's special functions at their edge cases for tests/test_special_functions.py
(written once with torch; the tests never import it):

    /work/torchenv/bin/python tests/data/make_special_torch_values.py > tests/data/special_torch_values.json

Inputs: signed zeros, infinities, NaN, poles, the ends of the domains, region boundaries of the
algorithms, huge and tiny magnitudes; float64 and float32. NaN and infinities are written as the
strings "nan", "inf", "-inf". torch returns an uninitialised value for the Chebyshev U/V/W,
Laguerre and Legendre polynomials of a NaN x (its loop never runs): those inputs are left out.
"""
import json
import math

import torch
import torch.special as S

UNARY_X = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1e-8, -1e-8, 1e-300, 3.0, -2.5, 8.0, -8.0, 5.0, 2.09,
           -2.09, 13.0, 30.0, -30.5, 100.0, 700.0, 1e10, -1e10, 0.999999, -0.999999, 0.9, 1.5,
           float("inf"), float("-inf"), float("nan")]
UNARY = {
    "lgamma": torch.lgamma, "digamma": torch.digamma, "erfc": torch.erfc, "erfinv": torch.erfinv,
    "i0": torch.i0, "i0e": S.i0e, "i1": S.i1, "i1e": S.i1e, "ndtr": S.ndtr, "ndtri": S.ndtri,
    "log_ndtr": S.log_ndtr, "erfcx": S.erfcx, "entr": S.entr, "airy_ai": S.airy_ai, "bessel_j0": S.bessel_j0,
    "bessel_j1": S.bessel_j1, "bessel_y0": S.bessel_y0, "bessel_y1": S.bessel_y1,
    "modified_bessel_i0": S.modified_bessel_i0, "modified_bessel_i1": S.modified_bessel_i1,
    "modified_bessel_k0": S.modified_bessel_k0, "modified_bessel_k1": S.modified_bessel_k1,
    "scaled_modified_bessel_k0": S.scaled_modified_bessel_k0, "scaled_modified_bessel_k1": S.scaled_modified_bessel_k1,
    "spherical_bessel_j0": S.spherical_bessel_j0,
    "polygamma1": lambda x: torch.polygamma(1, x), "polygamma2": lambda x: torch.polygamma(2, x),
    "polygamma5": lambda x: torch.polygamma(5, x),
}
POLY_X = [-1.5, -1.0, -0.7, -0.5, 0.0, 0.3, 0.5, 0.9999, 1.0, 1.0001, 2.0, float("inf"), float("-inf")]
POLY_N = [-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 6.0, 7.0, 9.0, 10.0, 20.0, 2.7, -0.5, float("nan"), float("inf")]
POLY = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
        "laguerre_polynomial_l", "legendre_polynomial_p"]
PAIRS = {
    "zeta": (S.zeta, [(2.0, 1.0), (1.0, 2.0), (0.5, 2.0), (2.0, 0.0), (2.0, -3.0), (2.0, -2.5), (3.0, -2.5),
                      (2.5, -2.5), (4.0, float("inf")), (float("inf"), 1.0), (float("inf"), 2.0),
                      (float("nan"), 1.0), (2.0, float("nan")), (30.0, 0.5), (1.000001, 1.0), (2.0, 1e-10)]),
    "igamma": (torch.igamma, [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (-1.0, 1.0), (1.0, -1.0), (float("inf"), 1.0),
                             (float("inf"), float("inf")), (1.0, float("inf")), (float("nan"), 1.0),
                             (1.0, float("nan")), (1e-10, 1.0), (0.5, 1e-10), (25.0, 25.0), (250.0, 260.0),
                             (3.0, 1.05), (0.7, 0.4)]),
    "igammac": (torch.igammac, [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (-1.0, 1.0), (1.0, -1.0), (float("inf"), 1.0),
                               (float("inf"), float("inf")), (1.0, float("inf")), (float("nan"), 1.0),
                               (1.0, float("nan")), (1e-10, 1.0), (0.5, 1e-10), (25.0, 25.0), (250.0, 260.0),
                               (3.0, 1.05), (0.7, 0.4)]),
    "xlog1py": (S.xlog1py, [(0.0, float("nan")), (0.0, -1.0), (0.0, -2.0), (1.0, -1.0), (2.0, float("inf")),
                            (0.0, float("inf")), (float("nan"), 1.0), (1.0, 1e-20), (-3.0, 0.5)]),
}


def enc(v):
    return v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))


def main():
    out = {"unary": {}, "poly": {}, "pairs": {}}
    for dtype in (torch.float64, torch.float32):
        d = str(dtype).split(".")[1]
        x = torch.tensor(UNARY_X, dtype=torch.float64).to(dtype)
        out["unary"][d] = {"x": [enc(v) for v in x.double().tolist()],
                           **{name: [enc(v) for v in fn(x).double().tolist()] for name, fn in UNARY.items()}}
        xs, ns = torch.meshgrid(torch.tensor(POLY_X, dtype=dtype), torch.tensor(POLY_N, dtype=dtype), indexing="ij")
        xs, ns = xs.reshape(-1), ns.reshape(-1)
        out["poly"][d] = {"x": [enc(v) for v in xs.double().tolist()], "n": [enc(v) for v in ns.double().tolist()],
                          **{name: [enc(v) for v in getattr(S, name)(xs, ns).double().tolist()] for name in POLY}}
        out["pairs"][d] = {}
        for name, (fn, pts) in PAIRS.items():
            a = torch.tensor([p[0] for p in pts], dtype=dtype)
            b = torch.tensor([p[1] for p in pts], dtype=dtype)
            out["pairs"][d][name] = {"a": [enc(v) for v in a.double().tolist()], "b": [enc(v) for v in b.double().tolist()],
                                     "value": [enc(v) for v in fn(a, b).double().tolist()]}
    out["torch"] = torch.__version__
    print(json.dumps(out, indent=0))


if __name__ == "__main__":
    main()
