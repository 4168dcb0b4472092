"""Bounds checks of index tensors on cuda without a host synchronisation (runtime/device_errors.py).

torch checks the indices of its cuda kernels on the device (CUDA_KERNEL_ASSERT): the op returns at
once and the error surfaces at a later call that waits for the device, as "RuntimeError: CUDA
error: device-side assert triggered"; CUDA_LAUNCH_BLOCKING=1 makes it surface at the op. The
expected texts are the cpu's (torch 2.13 on the cpu, the same mistakes: tests/test_indexing.py
and friends hold them too), placed between torch's assert line and its hint lines. These tests
run on the emulated device (a real GPU runs them the same way).
"""
import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from tritensor.runtime import device_errors

ASSERT = "CUDA error: device-side assert triggered\n"
HINT = ("\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1")
C = "cuda"


def _i(values, dtype=tt.int64):
    return tt.tensor(values, dtype=dtype, device=C)


X = np.arange(12.0).reshape(3, 4)


def _x():
    return tt.tensor(X, dtype=tt.float32, device=C)


# name -> (the op on fresh operands, the cpu's exception type, the cpu's message)
CASES = {
    "getitem": (lambda x: x[_i([0, 5])], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    "index_select": (lambda x: x.index_select(1, _i([1, 4])), IndexError, "index out of range in self"),
    "embedding": (lambda x: F.embedding(_i([[0, 3]]), x), IndexError, "index out of range in self"),
    "gather": (lambda x: x.gather(1, _i([[0], [4], [1]])), RuntimeError,
               "index 4 is out of bounds for dimension 1 with size 4"),
    "take": (lambda x: x.take(_i([0, 12])), IndexError,
             "out of range: tried to access index 12 on a tensor of 12 elements."),
    "index_add": (lambda x: x.index_add_(0, _i([0, 3]), tt.ones(2, 4, device=C)), RuntimeError,
                  "index 3 is out of bounds for dimension 0 with size 3"),
    "index_copy": (lambda x: x.index_copy_(0, _i([0, 3]), tt.ones(2, 4, device=C)), IndexError,
                   "index_copy_(): index 3 is out of bounds for dimension 0 with size 3"),
    "index_fill": (lambda x: x.index_fill_(1, _i([1, -5]), 0.0), IndexError,
                   "index -5 is out of bounds for dimension 1 with size 4"),
    "searchsorted_sorter": (lambda x: tt.searchsorted(x[0], _x()[1], sorter=_i([1, 0, 3, 4])), RuntimeError,
                            "torch.searchsorted(): sorter index out of range"),
    "lu_unpack_pivots": (lambda x: tt.lu_unpack(x[:, :3], _i([1, 2, 5], tt.int32)), RuntimeError,
                         "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly "
                         "pass the result of lu_factor?"),
    "lu_solve_pivots": (lambda x: tt.linalg.lu_solve(tt.eye(3, device=C), _i([1, 2, 5], tt.int32), x[:, :1]),
                        RuntimeError, "Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did "
                        "you properly pass the result of lu_factor?"),
    "cross_entropy": (lambda x: F.cross_entropy(x, _i([1, 4, 0])), IndexError, "Target 4 is out of bounds."),
    "nll_loss": (lambda x: F.nll_loss(x, _i([1, 7, -100])), IndexError, "Target 7 is out of bounds."),
}
# The launchers of these read the index on the host anyway (the scatter family groups writes by
# target there): that read is a sync, so the deferred error surfaces inside the same call,
# before anything is written.
AT_OWN_SYNC = {
    "setitem": (lambda x: x.__setitem__(_i([0, 5]), 1.0), IndexError,
                "index 5 is out of bounds for dimension 0 with size 3"),
    "index_put_accumulate": (lambda x: x.index_put_((_i([0, 5]),), tt.ones(4, device=C), accumulate=True),
                             IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    "scatter": (lambda x: x.scatter_(1, _i([[0], [4], [1]]), 1.0), RuntimeError,
                "index 4 is out of bounds for dimension 1 with size 4"),
    "scatter_add": (lambda x: x.scatter_add_(1, _i([[0], [4], [1]]), tt.ones(3, 1, device=C)), RuntimeError,
                    "index 4 is out of bounds for dimension 1 with size 4"),
    "scatter_reduce": (lambda x: x.scatter_reduce_(1, _i([[0], [-1], [1]]), tt.ones(3, 1, device=C), "amax"),
                       RuntimeError, "index -1 is out of bounds for dimension 1 with size 4"),
    "put": (lambda x: x.put_(_i([0, -13]), tt.ones(2, device=C)), IndexError,
            "out of range: tried to access index -13 on a tensor of 12 elements."),
}


@pytest.fixture
def no_host_read(monkeypatch):
    """Fails a host read of cuda memory (as tests/test_nn_functional.py's cross_entropy test) and
    counts the sync points reached (device_errors.SYNCS: every wait for a cuda device)."""
    real = tt.Tensor._to_host_array

    def refuse(self):
        assert self.device.type != "cuda", "a cuda tensor was read back on the host"
        return real(self)
    monkeypatch.setattr(tt.Tensor, "_to_host_array", refuse)
    start = device_errors.SYNCS[0]
    yield lambda: device_errors.SYNCS[0] - start
    monkeypatch.undo()


def _raises_deferred(message):
    return pytest.raises(RuntimeError, match="^" + _escape(ASSERT + message + HINT) + "$")


def _escape(text):
    import re
    return re.escape(text)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_index_surfaces_at_the_next_sync_once(name, monkeypatch, no_host_read):
    fn, _, message = CASES[name]
    x = _x()
    syncs = no_host_read
    out = fn(x)                                # returns: nothing was read back, nothing waited for
    assert syncs() == 0
    monkeypatch.undo()
    with _raises_deferred(message):
        tt.cuda.synchronize()
    tt.cuda.synchronize()                      # reported once; the device stays usable
    assert (_x()[_i([2, -1])] * 2).tolist() == [[16, 18, 20, 22], [16, 18, 20, 22]]
    if name in ("getitem", "index_select", "gather", "take", "embedding"):
        # the bad lanes read an unspecified value, but one from inside the source's storage
        assert np.isin(out.cpu().numpy(), X).all()


@pytest.mark.parametrize("name", sorted(AT_OWN_SYNC))
def test_launchers_reading_the_index_raise_in_the_call_before_writing(name):
    fn, _, message = AT_OWN_SYNC[name]
    x = _x()
    with _raises_deferred(message):
        fn(x)
    assert (x.cpu().numpy() == X).all()       # nothing written (read after the raise: no error left)


@pytest.mark.launch_blocking
@pytest.mark.parametrize("name", sorted(CASES) + sorted(AT_OWN_SYNC))
def test_cuda_launch_blocking_raises_the_cpus_error_at_the_call(name):
    fn, error, message = {**CASES, **AT_OWN_SYNC}[name]
    with pytest.raises(error, match="^" + _escape(message) + "$"):
        fn(_x())
    tt.cuda.synchronize()                      # nothing deferred


SYNC_POINTS = {
    "item": lambda y: y[0, 0].item(),
    "tolist": lambda y: y.tolist(),
    "cpu": lambda y: y.cpu(),
    "to_cpu_numpy": lambda y: y.to("cpu").numpy(),
    "synchronize": lambda y: tt.cuda.synchronize(),
    "stream_synchronize": lambda y: tt.cuda.current_stream().synchronize(),
    "event_synchronize": lambda y: tt.cuda.current_stream().record_event().synchronize(),
    "nonzero": lambda y: tt.nonzero(y),        # its launcher reads the count back: a sync
}


@pytest.mark.parametrize("point", sorted(SYNC_POINTS))
def test_every_sync_point_reports(point):
    y = _x()[_i([1, -4])]
    with _raises_deferred("index -4 is out of bounds for dimension 0 with size 3"):
        SYNC_POINTS[point](y)
    SYNC_POINTS[point](y)


def test_the_first_failing_check_is_reported_and_a_clean_device_reads_nothing(monkeypatch):
    reads = []
    real = device_errors._RecordStorage.read
    monkeypatch.setattr(device_errors._RecordStorage, "read", lambda self: reads.append(1) or real(self))
    x = _x()
    x[_i([1, 2])].sum().item()                 # checked, in range: the record is read once, clear
    assert len(reads) == 1
    tt.cuda.synchronize()                      # nothing queued since: no read
    (x * 2).tolist()
    assert len(reads) == 1
    x.gather(1, _i([[9], [0], [0]]))
    x.index_select(0, _i([7]))
    with _raises_deferred("index 9 is out of bounds for dimension 1 with size 4"):
        tt.cuda.synchronize()
    tt.cuda.synchronize()


def test_an_index_changed_in_place_still_fails_the_backward():
    # the op indexes with the check's clamped copy, which shares the index's version counter
    x = tt.ones(4, 3, device=C, requires_grad=True)
    idx = _i([0, 2])
    y = x.index_select(0, idx)
    idx.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_the_cpu_still_raises_at_the_call():
    with pytest.raises(IndexError, match="^index 5 is out of bounds for dimension 0 with size 3$"):
        tt.tensor(X)[tt.tensor([0, 5])]


def test_each_device_has_its_own_record():
    x1 = tt.arange(5.0, device="cuda:1")
    x1[tt.tensor([7], device="cuda:1")]
    tt.cuda.synchronize(0)                     # device 0 has nothing to report
    with _raises_deferred("index 7 is out of bounds for dimension 0 with size 5"):
        tt.cuda.synchronize(1)


def test_a_wait_for_one_stream_leaves_the_checks_of_another_pending(monkeypatch):
    # on a real GPU a check queued on stream s may not have run when another stream was waited
    # for: the device stays dirty until s (or the whole device) is waited for
    monkeypatch.setattr(device_errors, "_done_on_return", lambda: False)
    x = _x()
    s = tt.cuda.Stream()
    with tt.cuda.stream(s):
        x[_i([1])]
    tt.cuda.current_stream().synchronize()     # the record is read (clear) but s is still pending
    assert 0 in device_errors.DIRTY
    s.synchronize()
    assert 0 not in device_errors.DIRTY
    with tt.cuda.stream(s):
        x[_i([4])]
    with _raises_deferred("index 4 is out of bounds for dimension 0 with size 3"):
        tt.cuda.current_stream().record_event().synchronize()   # any wait reads the record
    assert 0 in device_errors.DIRTY            # an event's wait clears no stream's mark
    tt.cuda.synchronize()                      # a device-wide wait clears them all
    assert 0 not in device_errors.DIRTY


def test_a_cuda_graph_replay_checks_again():
    x, idx = _x(), _i([1, 2])
    y = x[idx]                                 # warm-up outside the capture
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        y = x[idx]
    idx.copy_(_i([0, 3]))
    g.replay()
    with _raises_deferred("index 3 is out of bounds for dimension 0 with size 3"):
        y.tolist()
    idx.copy_(_i([2, -3]))
    g.replay()
    assert y.tolist() == [X[2].tolist(), X[0].tolist()]
