"""What runs inside a DataLoader worker process (torch.utils.data._utils.worker), and the pieces
the main process shares with it: fetchers, the exception wrapper, worker info."""
from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import traceback

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info"]

# how often a blocked get() wakes up to check that the other side is still alive (seconds)
STATUS_CHECK_INTERVAL = 0.5


class WorkerInfo:
    """id, num_workers, seed and dataset (this worker's copy) of the current worker process."""
    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


_worker_info = None


def get_worker_info():
    """The WorkerInfo of this DataLoader worker process, or None in the main process. An
    IterableDataset uses it to give each worker its own share of the stream."""
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process with its formatted traceback
    (the traceback object itself cannot be pickled)."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        try:       # a class the main process cannot unpickle (a local class) comes back as RuntimeError
            pickle.dumps(self.exc_type)
        except Exception:
            self.exc_type = RuntimeError

    def reraise(self):
        msg = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)   # KeyError would repr() the text: keep its newlines
        try:
            exception = self.exc_type(msg)
        except Exception:   # an exception type whose constructor wants other arguments
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class Pickled(bytes):
    """A batch pickled in the worker itself: a batch that cannot be pickled becomes an error the
    main process sees, where a failure inside the queue's feeder thread would leave it waiting."""

    @classmethod
    def of(cls, data, worker_id):
        try:
            return cls(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:
            wrapped = ExceptionWrapper(where=f"in DataLoader worker process {worker_id} (pickling its batch)")
            return cls(pickle.dumps(wrapped, protocol=pickle.HIGHEST_PROTOCOL))

    def load(self):
        return pickle.loads(self)


class _IterableDatasetStopIteration:
    """A worker's IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch."""

    def __init__(self, seed=None):
        self.seed = seed


# --------------------------------------------------------------------------- fetchers
class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = \
            dataset, auto_collation, collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if callable(getitems):
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = \
            dataset, auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if is_iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


# --------------------------------------------------------------------------- the worker loop
def _seed_worker(seed, base_seed, worker_id):
    """Seed Python's, NumPy's and tritensor's generators in a worker, as torch does: the tt and
    `random` seeds are base_seed + worker_id; NumPy's legacy global state gets a SeedSequence
    mix of (worker_id, base_seed) (torch's _generate_state is the same idea)."""
    from ...ops.random import manual_seed
    random.seed(seed)
    manual_seed(seed)
    state = np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]).generate_state(4)
    np.random.seed(state)


def worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn,
                drop_last, base_seed, init_fn, worker_id, num_workers, persistent_workers, parent_pid):
    """Fetch and collate the batches the main process asks for, until told to stop (None) or the
    main process is gone."""
    global _worker_info
    try:
        seed = base_seed + worker_id
        _seed_worker(seed, base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        while os.getppid() == parent_pid:     # the main process died: stop
            try:
                r = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                # Shutting down without our None: when the main process's iterator dies in a
                # reference cycle, the garbage collector closes its queues (their finalizers) before
                # the iterator's __del__ runs, so the None it then puts is never sent.
                if done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if is_iterable and init_exception is None:   # a new epoch restarts the stream
                    fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, Pickled.of(data, worker_id)))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        # the main process may no longer read: do not block exit on flushing the queue
        data_queue.cancel_join_thread()
        data_queue.close()
