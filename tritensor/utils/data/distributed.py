"""DistributedSampler (torch.utils.data.distributed): each of ``num_replicas`` processes reads
its own, equally long share of a dataset.

The indices follow torch's recipe exactly: one permutation of ``range(len(dataset))`` drawn from
a generator seeded with ``seed + epoch`` (so every rank draws the same permutation without
communicating), padded by repeating its head (``drop_last=False``) or cut (``drop_last=True``)
to a multiple of ``num_replicas``, then rank ``r`` takes every ``num_replicas``-th index from
``r``. The permutation itself is tritensor's ``randperm`` (NumPy's Philox stream), not torch's
CPU generator: the same seed gives a different, equally uniform order than torch's sampler.
"""
from __future__ import annotations

import math

from ...ops.random import Generator, randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _default_group_value(name):
    """world size or rank of the default process group, as torch reads them when the argument is
    None (torch raises RuntimeError when its distributed package is absent)."""
    try:
        from ... import distributed as dist
    except ImportError:
        dist = None
    if dist is None or not getattr(dist, "is_available", lambda: False)():
        raise RuntimeError("Requires distributed package to be available")
    return getattr(dist, name)()


class DistributedSampler(Sampler):
    """torch.utils.data.DistributedSampler: a disjoint (up to padding) share of the dataset's
    indices per rank; call ``set_epoch(epoch)`` before each epoch to reshuffle."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _default_group_value("get_world_size")
        if rank is None:
            rank = _default_group_value("get_rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            # the largest multiple of num_replicas not above len(dataset)
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            # every rank seeds the same way, so all draw one permutation
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})")
        indices = indices[self.rank: self.total_size: self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(
                f"Number of subsampled indices ({len(indices)}) does not match num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Reseed the next iteration's shuffle (seed + epoch); without it every epoch repeats."""
        self.epoch = epoch
