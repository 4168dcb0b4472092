"""DataLoader (torch.utils.data.dataloader): batches from a dataset, in the main process or in
worker processes.

With ``num_workers > 0`` each worker is a process with its own index queue; all of them put
collated batches (tensors cross processes by pickling) on one result queue. The main process
keeps ``prefetch_factor`` batches per worker in flight, hands them out in sampler order, re-raises
a worker's exception with the worker's traceback in the message, and, while it waits, checks that
the workers are alive, so a worker that dies is a RuntimeError rather than a hang.
"""
from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import queue
import time
import warnings

from ... import accelerator as _accelerator
from ...ops.random import default_generator
from . import _worker
from ._collate import default_collate, default_convert, pin_memory as _pin_memory
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Combines a dataset and a sampler and iterates over batches (torch.utils.data.DataLoader)."""

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if not in_order:
            raise NotImplementedError("tritensor's DataLoader delivers batches in order only (in_order=False)")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._is_iterable = True
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._is_iterable = False

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._initialized = True

    # ------------------------------------------------------------------ options
    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(ctx, str):
                valid = multiprocessing.get_all_start_methods()
                if ctx not in valid:
                    raise ValueError("multiprocessing_context option should specify a valid start method in "
                                     f"{valid!r}, but got multiprocessing_context={ctx!r}")
                ctx = multiprocessing.get_context(ctx)
            elif not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={ctx}")
        self._multiprocessing_context = ctx

    def __setattr__(self, attr, val):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                          "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    # ------------------------------------------------------------------ iteration
    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        return _MultiProcessingIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._is_iterable:
            length = len(self.dataset)     # TypeError if the dataset has no __len__, as torch
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseIter:
    def __init__(self, loader):
        self._read_loader(loader)
        self._reset(loader, first_iter=True)

    def _read_loader(self, loader):
        """The loader's settings an iterator works from (the loader may change after)."""
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and not _accelerator.is_available():
            # torch: pinning only helps copies to an accelerator; without one it warns and goes on
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device "
                          "pinned memory won't be used.", stacklevel=3)
        self._pin_memory = loader.pin_memory and _accelerator.is_available()
        self._pin_memory_device = loader.pin_memory_device or None
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._generator = loader.generator

    def _draw_base_seed(self):
        """One seed per epoch, drawn from the loader's generator (or the global one)."""
        gen = self._generator if self._generator is not None else default_generator
        return int(gen._np.integers(0, 2 ** 63))

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._base_seed = self._draw_base_seed()

    def _next_index(self):
        return next(self._sampler_iter)

    def __iter__(self):
        return self

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._pin_memory:
            data = _pin_memory(data, self._pin_memory_device)
        return data

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _worker.create_fetcher(self._is_iterable, self._dataset, self._auto_collation,
                                               self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()      # StopIteration ends the epoch
        return self._fetcher.fetch(index)


class _MultiProcessingIter(_BaseIter):
    """Worker processes, index queues, one result queue; batches handed out in sampler order."""

    def __init__(self, loader):
        self._prefetch_factor = loader.prefetch_factor
        self._persistent_workers = loader.persistent_workers
        self._shutdown = True      # until the workers exist
        ctx = loader.multiprocessing_context or multiprocessing
        self._worker_init_fn = loader.worker_init_fn
        # not _BaseIter.__init__: its _reset sends work, so the workers must exist first
        self._read_loader(loader)
        base_seed = self._draw_base_seed()

        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues, self._workers = [], []
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()   # never block the main process's exit on it
            w = ctx.Process(target=_worker.worker_loop, daemon=True, args=(
                self._is_iterable, self._dataset, index_queue, self._result_queue, self._done_event,
                self._auto_collation, self._collate_fn, self._drop_last, base_seed, self._worker_init_fn,
                i, self._num_workers, self._persistent_workers, os.getpid()))
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._shutdown = False
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        _BaseIter._reset(self, loader, first_iter)
        self._send_idx = 0        # next task to send
        self._rcvd_idx = 0        # next task to hand out
        self._task_info = {}      # task -> (worker_id,) while pending, (worker_id, data) once arrived early
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: wait until each one has acknowledged the new epoch
            for q in self._index_queues:
                q.put(_worker._ResumeIteration(self._base_seed))
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return     # every worker has finished (IterableDataset)
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout):
        try:
            return True, self._result_queue.get(timeout=timeout)
        except Exception as e:
            failed = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
            for w in failed:
                self._mark_worker_as_unavailable(self._workers.index(w))
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        """The next result; waits in short slices so that a dead worker is noticed even while a
        long ``timeout`` runs."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _worker.STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            ok, data = self._try_get_data(wait)
            if ok:
                return data
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            # skip tasks of workers that have finished their IterableDataset
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:       # arrived earlier, out of order
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker.Pickled):
                data = data.load()
            if self._is_iterable and isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for w in self._workers:
                w.join(timeout=_worker.STATUS_CHECK_INTERVAL * 2)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._result_queue.cancel_join_thread()
            self._result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass
