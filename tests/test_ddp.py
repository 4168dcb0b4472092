"""nn.parallel.DistributedDataParallel (issue 27 items 3 and 6): 2 ranks through the launcher
(tests/ddp_worker.py: gradients and parameters after several steps equal the single-process
full-batch ones, with several buckets, gradient_as_bucket_view, no_sync accumulation,
find_unused_parameters, buffer broadcast, torch's unfinished-reduction error, SyncBatchNorm against
BatchNorm on the whole batch), plus the
single-process parts: torch's construction errors and the engine's end-of-backward callbacks."""
import pytest

import tritensor as tt
import tritensor.distributed as dist
from rank_launch import launch, world_of_one  # noqa: F401  (world_of_one: a fixture)
from tritensor.autograd.engine import queue_callback
from tritensor.nn.parallel import DistributedDataParallel as DDP


def test_ddp_on_two_ranks_matches_one_process_on_the_full_batch():
    p, _ = launch("ddp_worker.py")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert p.stdout.count("DDP CHECKS 91") == 2, p.stdout


def test_construction_errors():
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="^Default process group has not been initialized, please make sure to "
                                         "call init_process_group.$"):
        DDP(tt.nn.Linear(2, 2))


def test_world_of_one(world_of_one):
    frozen = tt.nn.Linear(2, 2).requires_grad_(False)
    with pytest.raises(RuntimeError, match="^DistributedDataParallel is not needed when a module doesn't have any "
                                           "parameter that requires a gradient.$"):
        DDP(frozen)
    with pytest.raises(ValueError, match="device_ids and output_device arguments only work with single-device"):
        DDP(tt.nn.Linear(2, 2), device_ids=[0])
    m = tt.nn.Linear(3, 1)
    with tt.no_grad():
        m.weight.copy_(tt.tensor([[1.0, 2.0, 3.0]]))
    ddp = DDP(m)
    x = tt.tensor([[1.0, 1.0, 1.0], [2.0, 0.0, 1.0]])
    out = ddp(x)
    assert out.shape == (2, 1)
    out.sum().backward()
    assert m.weight.grad.tolist() == [[3.0, 1.0, 2.0]] and m.bias.grad.tolist() == [2.0]
    assert list(ddp.state_dict()) == ["module.weight", "module.bias"]     # torch's prefix
    with tt.no_grad():                                                    # no reduction expected
        ddp(x)
    ddp(x)
    ddp(x).sum().backward()                     # a forward without backward is not an error in torch either
    assert m.weight.grad.tolist() == [[6.0, 2.0, 4.0]]
    with pytest.raises(NotImplementedError, match="register_comm_hook"):
        ddp.register_comm_hook(None, None)
    with pytest.raises(NotImplementedError, match="uneven inputs"):
        ddp.join()
    # a module on one GPU: device_ids moves the inputs there (ints or devices, as torch)
    g = DDP(tt.nn.Linear(3, 1).to("cuda:1"), device_ids=[tt.device("cuda:1")])
    assert g.device_ids == [1]
    out = g(tt.ones(2, 3))
    assert out.device == tt.device("cuda:1")
    out.sum().backward()
    assert g.module.weight.grad.tolist() == [[2.0, 2.0, 2.0]]


def test_queued_callbacks_run_once_after_the_backward():
    w = tt.ones(2, requires_grad=True)
    order = []

    def hook(p):
        order.append(("hook", p.grad.tolist()))
        queue_callback(lambda: order.append(("end", w.grad.tolist())))

    w.register_post_accumulate_grad_hook(hook)
    (w * 3).sum().backward()
    assert order == [("hook", [3.0, 3.0]), ("end", [3.0, 3.0])]
    (w * 0).sum().backward()
    assert order[2:] == [("hook", [3.0, 3.0]), ("end", [3.0, 3.0])]
    # a failed backward runs none of its callbacks, and leaves none for the next one
    bad = tt.ones(2, requires_grad=True)
    y = bad.exp()
    y.register_hook(lambda g: (queue_callback(lambda: order.append("never")), 1 / 0)[1])
    with pytest.raises(ZeroDivisionError):
        y.sum().backward()
    (w * 1).sum().backward()
    assert "never" not in order and order[-1] == ("end", [4.0, 4.0])


def test_queued_callbacks_belong_to_their_thread():
    import threading
    ran = []
    w = tt.ones(1, requires_grad=True)
    t = threading.Thread(target=lambda: queue_callback(lambda: ran.append("other thread")))
    t.start()
    t.join()
    (w * 2).sum().backward()          # this thread's backward: the other thread's queue is not its own
    assert ran == []
