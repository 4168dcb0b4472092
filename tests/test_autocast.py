"""tt.autocast: output dtypes op by op against torch 2.13 (cpu: recorded by
tests/data/make_autocast_fixture.py; cuda: torch's documented lists, AT_FORALL_* in
ATen/autocast_mode.h), nesting, enabled=False, the weight-cast cache, the backward under autocast,
thread locality, the deprecated spellings and torch's errors."""
import json
import os
import sys
import threading
import warnings

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
from autocast_cases import CASES  # noqa: E402

with open(os.path.join(DATA, "autocast_cpu_dtypes.json")) as _f:
    CPU_DTYPES = json.load(_f)


def run_case(expr, d, device="cpu"):
    def t(*shape):
        return (tt.rand(*shape, dtype=d) + 0.5).to(device)
    return eval(expr, {"lib": tt, "F": F, "t": t})


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_cpu_output_dtypes_match_torch(low):
    mismatches = {}
    for name, expr in CASES.items():
        row = []
        for d in (tt.float32, getattr(tt, low), tt.float64):
            try:
                with tt.autocast("cpu", dtype=getattr(tt, low)):
                    row.append(run_case(expr, d).dtype.name)
            except Exception as e:
                row.append("error: " + type(e).__name__)
        if row != CPU_DTYPES[low][name]:
            mismatches[name] = (row, CPU_DTYPES[low][name])
    assert not mismatches


# cuda policies (torch's lists): (call, input dtype, expected output dtype)
CUDA_CASES = [
    ("lib.mm(t(3, 4), t(4, 2))", "float32", "float16"),             # lower_precision_fp
    ("F.linear(t(3, 4), t(2, 4), t(2))", "float32", "float16"),
    ("lib.matmul(t(2, 3, 4), t(4, 2))", "float32", "float16"),
    ("F.conv2d(t(1, 2, 5, 5), t(3, 2, 2, 2))", "float32", "float16"),
    ("lib.mv(t(3, 4), t(4))", "float32", "float16"),
    ("lib.addmm(t(3, 2), t(3, 4), t(4, 2))", "float64", "float64"),  # float64 is never cast
    ("lib.exp(t(3))", "float16", "float32"),                         # fp32
    ("lib.pow(t(3), 2.0)", "float16", "float32"),
    ("F.layer_norm(t(2, 3), (3,))", "float16", "float32"),
    ("F.mse_loss(t(3), t(3))", "float16", "float32"),
    ("F.softplus(t(3))", "float16", "float32"),
    ("lib.logsumexp(t(3), 0)", "float16", "float32"),
    ("t(3).sum()", "float16", "float32"),                            # fp32_set_opt_dtype
    ("lib.softmax(t(2, 3), 1)", "float16", "float32"),
    ("t(3).cumsum(0)", "float16", "float32"),
    ("t(3).sum(dtype=lib.float16)", "float16", "float16"),           # an explicit dtype is kept
    ("lib.cat([t(2), lib.ones(2, device='cuda')])", "float16", "float32"),   # promote
    ("lib.dot(t(2), t(2))", "float16", "float16"),
    ("F.relu(t(3))", "float16", "float16"),                          # no policy: unchanged
    ("t(3) + 1", "float16", "float16"),
]


@pytest.mark.parametrize("expr,in_dtype,out_dtype", CUDA_CASES)
def test_cuda_policies_follow_torchs_lists(expr, in_dtype, out_dtype):
    with tt.autocast("cuda"):
        assert run_case(expr, getattr(tt, in_dtype), "cuda").dtype.name == out_dtype


def test_cuda_binary_cross_entropy_is_banned():
    x = tt.rand(3, device="cuda")
    with tt.autocast("cuda"):
        with pytest.raises(RuntimeError, match="^torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss "
                           "are unsafe to autocast"):
            F.binary_cross_entropy(x, x)
        assert F.binary_cross_entropy_with_logits(x, x).dtype == tt.float32


def test_values_are_those_of_the_cast_inputs():
    a, b = tt.randn(8, 5), tt.randn(5, 3)
    with tt.autocast("cpu"):
        got = a @ b
    expected = a.bfloat16() @ b.bfloat16()
    np.testing.assert_array_equal(got.float().numpy(), expected.float().numpy())


def test_nesting_disabling_and_state_functions():
    assert not tt.is_autocast_enabled("cpu") and tt.get_autocast_dtype("cpu") is tt.bfloat16
    assert tt.get_autocast_dtype("cuda") is tt.float16
    a = tt.randn(2, 2)
    with tt.autocast("cpu"):
        assert tt.is_autocast_enabled("cpu") and not tt.is_autocast_enabled()      # default: cuda
        with tt.autocast("cpu", enabled=False):
            assert (a @ a).dtype is tt.float32
        with tt.autocast("cpu", dtype=tt.float16):
            assert (a @ a).dtype is tt.float16
            assert tt.get_autocast_dtype("cpu") is tt.float16
        assert (a @ a).dtype is tt.bfloat16
    assert (a @ a).dtype is tt.float32 and not tt.is_autocast_enabled("cpu")


def test_decorator_form():
    @tt.autocast("cpu")
    def forward(x):
        return x @ x

    assert forward(tt.randn(2, 2)).dtype is tt.bfloat16
    with pytest.raises(TypeError, match=r"autocast\(\)\(func\) requires a callable, but got int"):
        tt.autocast("cpu")(3)


def test_backward_under_autocast_gives_parameter_dtype_gradients(device):
    w = tt.randn(4, 3, requires_grad=True, device=device)
    x = tt.randn(5, 4, device=device)
    low = tt.bfloat16 if device == "cpu" else tt.float16
    with tt.autocast(device):
        y = x @ w
        assert y.dtype is low
        loss = F.mse_loss(y, tt.zeros(5, 3, device=device))    # fp32 policy on cuda and cpu
        assert loss.dtype is tt.float32
        loss.backward()                                         # inside the region, as many loops do
    assert w.grad.dtype is tt.float32
    # the gradient is that of the low-precision forward: 2/15 * x^T (x w) in the low dtype
    yl = (x.to(low) @ w.detach().to(low)).float()
    expected = (x.t().float() @ (2 * yl / 15)).cpu().numpy()
    np.testing.assert_allclose(w.grad.cpu().numpy(), expected, rtol=2e-2, atol=2e-2)


def test_weight_cast_cache_within_a_region():
    w = tt.randn(3, 3, requires_grad=True)
    x = tt.randn(3, 3)
    with tt.autocast("cpu"):
        a = x @ w
        b = x @ w
        # both products read the same cached bfloat16 copy of w: one cast node shared
        assert a.grad_fn.next_functions[1][0] is b.grad_fn.next_functions[1][0]
    with tt.autocast("cpu", cache_enabled=False):
        c, d = x @ w, x @ w
        assert c.grad_fn.next_functions[1][0] is not d.grad_fn.next_functions[1][0]
    with tt.autocast("cpu"):
        e = x @ w
    assert e.grad_fn.next_functions[1][0] is not a.grad_fn.next_functions[1][0]   # cleared on exit


def test_autocast_is_per_thread():
    seen = {}
    inside, release = threading.Event(), threading.Event()

    def worker():
        with tt.autocast("cpu"):
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    inside.wait(5)
    a = tt.randn(2, 2)
    seen["dtype"] = (a @ a).dtype
    release.set()
    thread.join()
    assert seen["dtype"] is tt.float32


def test_errors_and_warnings_match_torch():
    with pytest.raises(ValueError, match="^Expected `device_type` of type `str`, got: `<class 'int'>`$"):
        tt.autocast(0)
    with pytest.raises(RuntimeError, match="^User specified an unsupported autocast device_type 'tpu'$"):
        tt.autocast("tpu")
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported. Disabling autocast."):
        region = tt.autocast("cpu", dtype=tt.float64)
    with region:
        assert not tt.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning, match=r"^`torch.cuda.amp.autocast\(args...\)` is deprecated. Please use "
                      r"`torch.amp.autocast\('cuda', args...\)` instead.$"):
        old = tt.cuda.amp.autocast()
    with old:
        assert tt.is_autocast_enabled("cuda")
    with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.autocast\(args...\)` is deprecated"):
        tt.cpu.amp.autocast()


def test_custom_fwd_casts_inputs_and_custom_bwd_restores_the_state():
    seen = {}

    class Square(tt.autograd.Function):
        @staticmethod
        @tt.amp.custom_fwd(device_type="cpu", cast_inputs=tt.float32)
        def forward(ctx, x):
            seen["fwd"] = (x.dtype, tt.is_autocast_enabled("cpu"))
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @tt.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = tt.is_autocast_enabled("cpu")
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = tt.randn(3, dtype=tt.bfloat16, requires_grad=True)
    with tt.autocast("cpu"):
        y = Square.apply(x)
    assert seen["fwd"] == (tt.float32, False) and y.dtype is tt.float32
    y.sum().backward()
    assert seen["bwd"] is False and x.grad.dtype is tt.bfloat16


def test_off_autocast_the_fast_path_is_untouched():
    # entering and leaving a region leaves the ops cacheable again (dispatch's per-signature path)
    from tritensor.ops import dispatch as d
    a = tt.randn(3, 3)
    with tt.autocast("cpu"):
        a @ a
    a @ a
    a @ a
    from tritensor.ops.linalg import MM
    assert d._op_cacheable.get(MM) is True
