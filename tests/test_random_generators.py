"""Issue 16 item 4: tt.Generator (state save/restore, seeds, torch's errors), generator= on every
random op, randperm / bernoulli / multinomial / normal, and full-precision float64 on cuda.
Expected messages and values are torch 2.13's, written here by hand."""
import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.ops.random import (
    bernoulli, cuda_get_rng_state, cuda_set_rng_state, get_rng_state, multinomial, normal, randperm,
    set_rng_state,
)


def _draws(g, device):
    """One of each random op, all from generator g."""
    return [tt.rand(5, generator=g, device=device, dtype=tt.float64).tolist(),
            tt.randn(3, generator=g, device=device).tolist(),
            tt.randint(0, 9, (4,), generator=g, device=device).tolist(),
            randperm(6, generator=g, device=device).tolist(),
            bernoulli(tt.full((5,), 0.5, device=device), generator=g).tolist(),
            multinomial(tt.ones(4, device=device), 2, generator=g).tolist(),
            normal(tt.zeros(3, device=device), 1.0, generator=g).tolist(),
            tt.empty(3, device=device).uniform_(generator=g).tolist()]


def test_generator_state_round_trip_repeats_every_op(device):
    g = tt.Generator(device).manual_seed(3)
    state = g.get_state()
    assert state.dtype == tt.uint8 and state.device.type == "cpu"
    assert state.shape == ((16,) if device == "cuda" else (104,))
    first = _draws(g, device)
    assert first != _draws(g, device)           # the stream moved on
    g.set_state(state)
    assert _draws(g, device) == first
    assert _draws(tt.Generator(device).manual_seed(3), device) == first   # a seed is a stream


def test_cuda_state_is_seed_and_offset():
    g = tt.Generator("cuda").manual_seed(7)
    tt.rand(5, generator=g, device="cuda")               # 5 words, rounded up to 8
    tt.rand(3, generator=g, device="cuda", dtype=tt.float64)   # 2 words a number: 6 -> 8
    raw = to_numpy(g.get_state()).view("<u8").tolist()
    assert raw == [7, 16]
    bad = tt.tensor(np.array([7, 6], "<u8").view(np.uint8))
    with pytest.raises(RuntimeError, match="^offset must be a multiple of 4$"):
        g.set_state(bad)
    with pytest.raises(RuntimeError, match="^RNG state is wrong size$"):
        g.set_state(tt.zeros(3, dtype=tt.uint8))


def test_generator_seeds_and_errors():
    g = tt.Generator()
    assert g.device == tt.device("cpu") and g.initial_seed() == 67280421310721
    assert g.manual_seed(-1).initial_seed() == 2 ** 64 - 1
    for bad, err, msg in [(2 ** 64, ValueError, "Overflow when unpacking long long"),
                          (1.5, RuntimeError, "manual_seed expected a long, but got float"),
                          ("a", RuntimeError, "manual_seed expected a long, but got str")]:
        with pytest.raises(err, match=f"^{msg}$"):
            g.manual_seed(bad)
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2 ** 64
    with pytest.raises(RuntimeError, match="^Expected a CPUGeneratorImplState of size 104 but found the input RNG "
                                           "state size to be 3$"):
        g.set_state(tt.zeros(3, dtype=tt.uint8))
    with pytest.raises(TypeError, match="^RNG state must be a torch.ByteTensor$"):
        g.set_state(tt.zeros(104))
    with pytest.raises(TypeError, match="^expected a torch.ByteTensor, but got list$"):
        g.set_state([1, 2])
    with pytest.raises(RuntimeError, match="^Expected a 'cuda' device type for generator but found 'cpu'$"):
        tt.rand(2, device="cuda", generator=g)


def test_global_rng_state_functions():
    tt.manual_seed(0)
    s = get_rng_state()
    x = tt.rand(4)
    set_rng_state(s)
    assert tt.rand(4).tolist() == x.tolist()
    c = cuda_get_rng_state()
    y = tt.randn(5, device="cuda")
    cuda_set_rng_state(c)
    assert tt.randn(5, device="cuda").tolist() == y.tolist()


def test_cuda_float64_draws_use_53_bits():
    u = to_numpy(tt.rand(600, device="cuda", dtype=tt.float64, generator=tt.Generator("cuda").manual_seed(1)))
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.05
    # float32 values widened would have zero low mantissa bits; full precision uses them
    assert (np.frexp(u)[0] * 2 ** 53 % 2 ** 29 != 0).mean() > 0.9
    n = to_numpy(tt.randn(600, device="cuda", dtype=tt.float64))
    assert abs(n.mean()) < 0.15 and abs(n.std() - 1) < 0.15 and (n.astype(np.float32) != n).mean() > 0.9


def test_randperm(device):
    p = randperm(50, generator=tt.Generator(device).manual_seed(0), device=device)
    assert p.dtype == tt.int64 and sorted(p.tolist()) == list(range(50))
    assert randperm(0, device=device).shape == (0,)
    assert randperm(3, dtype=tt.float32, device=device).dtype == tt.float32
    assert randperm(128, dtype=tt.int8).shape == (128,)
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int8_t without overflow$"):
        randperm(129, dtype=tt.int8)
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: \[-1\]$"):
        randperm(-1)
    with pytest.raises(NotImplementedError, match="^\"randperm\" not implemented for 'Bool'$"):
        randperm(3, dtype=tt.bool)
    with pytest.raises(RuntimeError, match="^n cannot be greater than 2049 for Half type.$"):
        randperm(3000, dtype=tt.float16)
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        randperm(3, requires_grad=True)


def test_bernoulli(device):
    p = tt.tensor([0.0, 1.0, 1.0, 0.0], device=device)
    np.testing.assert_array_equal(to_numpy(bernoulli(p)), [0, 1, 1, 0])
    np.testing.assert_array_equal(to_numpy(p.bernoulli()), [0, 1, 1, 0])
    draws = to_numpy(bernoulli(tt.full((2000,), 0.3, device=device, dtype=tt.float64)))
    assert set(np.unique(draws)) <= {0.0, 1.0} and abs(draws.mean() - 0.3) < 0.05
    np.testing.assert_array_equal(to_numpy(bernoulli(p, 1.0)), [1, 1, 1, 1])
    x = tt.zeros(3, dtype=tt.int64, device=device).bernoulli_(tt.tensor([1.0, 0.0, 1.0], device=device))
    np.testing.assert_array_equal(to_numpy(x), [1, 0, 1])
    with pytest.raises(RuntimeError, match=r"^Expected p_in >= 0 && p_in <= 1 to be true, but got false."):
        bernoulli(tt.tensor([0.0, 2.0], device=device))
    with pytest.raises(RuntimeError, match=r"^bernoulli_ expects p to be in \[0, 1\], but got p=1.5$"):
        tt.zeros(2, device=device).bernoulli_(1.5)
    with pytest.raises(NotImplementedError, match="^\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'$"):
        bernoulli(tt.tensor([0, 1], device=device))


def test_multinomial(device):
    w = tt.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]], device=device)
    np.testing.assert_array_equal(to_numpy(multinomial(w, 1)), [[1], [0]])
    np.testing.assert_array_equal(to_numpy(w.multinomial(3, True)), [[1, 1, 1], [0, 0, 0]])
    picks = to_numpy(multinomial(tt.tensor([1.0, 3.0], device=device), 1000, replacement=True))
    assert abs(picks.mean() - 0.75) < 0.06
    no_repeat = multinomial(tt.ones(5, device=device), 5).tolist()
    assert sorted(no_repeat) == [0, 1, 2, 3, 4]
    assert multinomial(tt.ones(0, 3, device=device), 1).shape == (0, 1)
    for args, msg in [((tt.tensor([0.0, 1.0, 0.0]), 4), "cannot sample n_sample > prob_dist.size\\(-1\\) samples "
                                                          "without replacement"),
                      ((tt.tensor([0.0, -1.0]), 1), "probability tensor contains either `inf`, `nan` or element < 0"),
                      ((tt.tensor([0.0, 0.0]), 1), "invalid multinomial distribution \\(sum of probabilities <= 0\\)"),
                      ((tt.tensor(1.0), 1), "prob_dist must be 1 or 2 dim"),
                      ((tt.ones(2), 0), "cannot sample n_sample <= 0 samples"),
                      ((tt.ones(2, dtype=tt.int64), 1), "multinomial only supports floating-point dtypes for input, "
                                                         "got: Long")]:
        with pytest.raises(RuntimeError, match=f"^{msg}$"):
            multinomial(args[0].to(device), args[1])


def test_normal_overloads(device):
    assert normal(0.0, 1.0, (2, 3), device=device).shape == (2, 3)
    assert normal(tt.zeros(2, 1, device=device), tt.ones(3, device=device)).shape == (2, 3)
    assert normal(0.0, tt.ones(4, dtype=tt.float64, device=device)).dtype == tt.float64
    big = to_numpy(normal(tt.full((3000,), 2.0, device=device), 0.5))
    assert abs(big.mean() - 2.0) < 0.05 and abs(big.std() - 0.5) < 0.05
    m = tt.zeros(3, dtype=tt.float64, device=device, requires_grad=True)
    s = tt.ones(3, dtype=tt.float64, device=device, requires_grad=True)
    out = normal(m, s)
    gm, gs = tt.autograd.grad(out.sum(), [m, s])
    np.testing.assert_array_equal(to_numpy(gm), [1, 1, 1])
    np.testing.assert_allclose(to_numpy(gs), to_numpy(out.detach()))     # g * noise, noise = (out - m) / s
    with pytest.raises(RuntimeError, match="^normal expects std >= 0.0, but found std -1$"):
        normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match="^normal expects all elements of std >= 0.0$"):
        normal(tt.zeros(2, device=device), -tt.ones(2, device=device))
    with pytest.raises(TypeError, match=r"^normal\(\) received an invalid combination of arguments - got "
                                        r"\(float, float\), but expected one of:"):
        normal(0.0, 1.0)
