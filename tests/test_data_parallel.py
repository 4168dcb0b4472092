"""nn.DataParallel on the emulated device's two GPUs, and DistributedSampler's partitions.

Oracles: hand-computed outputs and gradients of a Linear with set weights; the identity that
DataParallel(m) is the same function as m (values and gradients, within float32 rounding since
the two replicas' gradients are summed in a different order); DistributedSampler's partitions
recorded from torch 2.13 (shuffle=False) and the permutation properties (shuffle=True).
"""

import pytest

import tritensor as tt
from tritensor.nn.parallel import data_parallel, gather, scatter
from tritensor.utils.data import DistributedSampler

pytestmark = pytest.mark.skipif(tt.cuda.device_count() < 2, reason="needs two (emulated) GPUs")


class _Recorder(tt.nn.Module):
    """Records the device and the batch size each replica sees."""

    def __init__(self):
        super().__init__()
        self.lin = tt.nn.Linear(2, 2)
        self.seen = []

    def forward(self, x, scale=1.0):
        self.seen.append((str(x.device), x.shape[0], str(self.lin.weight.device)))
        return self.lin(x) * scale


def _linear():
    m = tt.nn.Linear(2, 2).to("cuda:0")
    with tt.no_grad():
        m.weight.copy_(tt.tensor([[1.0, 2.0], [3.0, 4.0]]))
        m.bias.copy_(tt.tensor([0.5, -0.5]))
    return m


def test_forward_backward_hand_computed():
    m = _linear()
    x = tt.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], device="cuda:0")
    y = tt.nn.DataParallel(m)(x)
    assert y.device == tt.device("cuda:0")
    assert y.tolist() == [[1.5, 2.5], [2.5, 3.5], [3.5, 6.5]]
    y.sum().backward()
    # d(sum)/dW[i, j] = sum over the batch of x[:, j]; d/db = batch size
    assert m.weight.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert m.bias.grad.tolist() == [3.0, 3.0]
    assert m.weight.grad.device == tt.device("cuda:0")


def test_replicas_run_on_each_device_and_match_the_module():
    tt.manual_seed(0)
    m = tt.nn.Sequential(tt.nn.Linear(4, 3), tt.nn.Tanh(), tt.nn.Linear(3, 2)).to("cuda:0")
    x = tt.randn(5, 4, device="cuda:0")
    rec = _Recorder().to("cuda:0")
    tt.nn.DataParallel(rec)(tt.randn(5, 2, device="cuda:0"))
    # 5 rows chunked as tensor.chunk does: 3 then 2; each replica's weight on its own device
    assert sorted(rec.seen) == [("cuda:0", 3, "cuda:0"), ("cuda:1", 2, "cuda:1")]
    dp = tt.nn.DataParallel(m, device_ids=[0, 1])
    loss = (dp(x) ** 2).sum()
    loss.backward()
    grads = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    ref = (m(x) ** 2).sum()
    ref.backward()
    assert abs(loss.item() - ref.item()) <= 1e-5 * abs(ref.item())
    for g, p in zip(grads, m.parameters()):
        assert (g - p.grad).abs().max().item() <= 1e-5


def test_dim_kwargs_output_device_and_single_row():
    m = _linear()
    x = tt.tensor([[1.0, 0.0], [0.0, 1.0]], device="cuda:0")
    # kwargs are scattered too; a non-tensor kwarg is repeated; output gathered on cuda:1
    y = tt.nn.DataParallel(_Recorder().to("cuda:0"), output_device=1)(x, scale=2.0)
    assert y.device == tt.device("cuda:1") and y.shape == (2, 2)
    # one row: only one replica is used
    rec = _Recorder().to("cuda:0")
    tt.nn.DataParallel(rec)(x[:1])
    assert rec.seen == [("cuda:0", 1, "cuda:0")]
    # dim=1: the module sees column slices, outputs concatenated along dim 1
    ident = tt.nn.Identity()
    z = tt.arange(8.0, device="cuda:0").reshape(2, 4)
    out = tt.nn.DataParallel(ident, dim=1)(z)
    assert out.tolist() == z.tolist()
    assert data_parallel(m, x).tolist() == [[1.5, 2.5], [2.5, 3.5]]


def test_scatter_and_gather():
    t = tt.arange(5.0, device="cuda:0")
    parts = scatter((t, "k"), [0, 1])
    assert [p[0].tolist() for p in parts] == [[0.0, 1.0, 2.0], [3.0, 4.0]]
    assert [str(p[0].device) for p in parts] == ["cuda:0", "cuda:1"] and [p[1] for p in parts] == ["k", "k"]
    with pytest.warns(UserWarning, match="all input tensors were scalars; will instead unsqueeze"):
        out = gather([tt.tensor(1.0, device="cuda:0"), tt.tensor(2.0, device="cuda:1")], 0)
    assert out.tolist() == [1.0, 2.0] and out.device == tt.device("cuda:0")
    d = gather([{"a": tt.ones(1, device="cuda:0"), "b": None}, {"a": tt.zeros(1, device="cuda:1"), "b": None}], -1)
    assert d["a"].device == tt.device("cpu") and d["a"].tolist() == [1.0, 0.0] and d["b"] is None


def test_errors():
    m = tt.nn.Linear(2, 2)  # left on cpu
    with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on device cuda:0 "
                                           r"\(device_ids\[0\]\) but found one of them on device: cpu"):
        tt.nn.DataParallel(m, device_ids=[0, 1])(tt.ones(2, 2, device="cuda:0"))

    class Fails(tt.nn.Module):
        def forward(self, x):
            if x.device.index == 1:
                raise ValueError("boom")
            return x

    with pytest.raises(ValueError, match="Caught ValueError in replica 1 on device 1.(.|\n)*boom"):
        tt.nn.DataParallel(Fails())(tt.ones(4, 1, device="cuda:0"))
    lazy = tt.nn.LazyLinear(2).to("cuda:0")
    with pytest.raises(RuntimeError, match="Modules with uninitialized parameters can't be used with `DataParallel`"):
        tt.nn.DataParallel(lazy)(tt.ones(4, 3, device="cuda:0"))


def test_no_grad_replicas_are_detached():
    m = _linear()
    with tt.no_grad():
        y = tt.nn.DataParallel(m)(tt.ones(4, 2, device="cuda:0"))
    assert not y.requires_grad and y.grad_fn is None


# ------------------------------------------------------------------ DistributedSampler
@pytest.mark.parametrize("n,replicas,drop_last,expected", [
    # recorded from torch 2.13: DistributedSampler(range(n), r, k, shuffle=False, drop_last=...)
    (10, 3, False, [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]),
    (10, 3, True, [[0, 3, 6], [1, 4, 7], [2, 5, 8]]),
    (2, 5, False, [[0], [1], [0], [1], [0]]),
    (7, 7, True, [[0], [1], [2], [3], [4], [5], [6]]),
    (9, 4, True, [[0, 4], [1, 5], [2, 6], [3, 7]]),
])
def test_distributed_sampler_partitions(n, replicas, drop_last, expected):
    samplers = [DistributedSampler(range(n), num_replicas=replicas, rank=k, shuffle=False, drop_last=drop_last)
                for k in range(replicas)]
    assert [list(s) for s in samplers] == expected
    assert [len(s) for s in samplers] == [len(e) for e in expected]


def test_distributed_sampler_shuffle():
    n, r = 11, 3
    def shares(epoch, seed=0):
        out = []
        for k in range(r):
            s = DistributedSampler(range(n), num_replicas=r, rank=k, seed=seed)
            s.set_epoch(epoch)
            out.append(list(s))
        return out
    a = shares(0)
    # the ranks' shares interleave one permutation, padded with its head to 12
    merged = [a[k][i] for i in range(4) for k in range(r)]
    assert sorted(merged[:n]) == list(range(n)) and merged[n:] == merged[:1]
    g = tt.Generator()
    g.manual_seed(0)
    assert merged[:n] == tt.randperm(n, generator=g).tolist()  # seed + epoch seeds the permutation
    assert shares(0) == a                                        # deterministic
    assert shares(1) != a and shares(0, seed=5) != a            # epoch and seed reshuffle


def test_distributed_sampler_errors():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match=r"Invalid rank -1, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=-1)
    from tritensor.utils.data.distributed import DistributedSampler as D
    assert D is DistributedSampler
    loader = tt.utils.data.DataLoader(list(range(6)), batch_size=2,
                                      sampler=DistributedSampler(range(6), num_replicas=2, rank=1, shuffle=False))
    assert [b.tolist() for b in loader] == [[1, 3], [5]]
