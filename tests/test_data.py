"""tt.utils.data against torch.utils.data's documented behaviour: datasets, samplers, collation,
the DataLoader's options and errors, and worker processes (kept few and small: each starts
processes)."""
import collections
import math
import os
import random
import warnings

import numpy as np
import pytest

import tritensor as tt
from tritensor.utils.data import (
    BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler, SequentialSampler, Subset,
    SubsetRandomSampler, TensorDataset, WeightedRandomSampler, default_collate, default_convert, get_worker_info,
    random_split,
)

Point = collections.namedtuple("Point", ["x", "y"])


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return tt.tensor([float(i), float(i * i)]), i


class Sharded(IterableDataset):
    """range(n), each worker taking every num_workers-th element (get_worker_info)."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n


class FailsAt(Dataset):
    def __init__(self, bad):
        self.bad = bad

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"sample {i} is broken")
        return i


class DiesAt(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            os._exit(7)
        return i


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        import time
        time.sleep(3)
        return i


class WorkerReport(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return (info.id, info.num_workers, info.seed, type(info.dataset).__name__,
                os.environ.get("TT_TEST_INIT_WORKER"), tt.initial_seed(), random.random(), np.random.random())


def _init_worker(worker_id):
    os.environ["TT_TEST_INIT_WORKER"] = str(worker_id)


def _values(batches):
    return [[b.tolist() if isinstance(b, tt.Tensor) else b for b in batch] for batch in batches]


# ------------------------------------------------------------------------------ datasets
def test_tensor_dataset_and_size_check():
    x, y = tt.arange(6.).reshape(3, 2), tt.tensor([7, 8, 9])
    ds = TensorDataset(x, y)
    assert len(ds) == 3
    a, b = ds[1]
    assert a.tolist() == [2.0, 3.0] and b.item() == 8
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, tt.arange(4))


def test_concat_subset_and_dataset_add():
    a, b = Squares(3), Squares(2)
    cat = a + b
    assert isinstance(cat, ConcatDataset) and len(cat) == 5 and cat.cumulative_sizes == [3, 5]
    assert cat[3][1] == 0 and cat[-1][1] == 1 and cat[2][1] == 2
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        cat[-6]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Sharded(3)])
    sub = Subset(Squares(10), [9, 2, 5])
    assert len(sub) == 3 and sub[0][1] == 9 and [s[1] for s in sub.__getitems__([2, 1])] == [5, 2]
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__"):
        Dataset()[0]


def test_random_split_lengths_fractions_and_generator():
    ds = Squares(10)
    parts = random_split(ds, [3, 7], generator=tt.Generator().manual_seed(1))
    again = random_split(ds, [3, 7], generator=tt.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [3, 7]
    assert parts[0].indices == again[0].indices and parts[1].indices == again[1].indices
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    # fractions: floor of each, the remainder handed out round-robin from the first split
    assert [len(p) for p in random_split(ds, [0.25, 0.25, 0.5])] == [3, 2, 5]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert [len(p) for p in random_split(Squares(2), [0.1, 0.9])] == [1, 1]
        assert [len(p) for p in random_split(Squares(1), [0.0, 1.0])] == [0, 1]
    assert any("Length of split at index 0 is 0" in str(x.message) for x in w)
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        random_split(ds, [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(ds, [1.5, -0.5])
    tt.manual_seed(5)
    a = random_split(ds, [5, 5])[0].indices
    tt.manual_seed(5)
    assert random_split(ds, [5, 5])[0].indices == a


# ------------------------------------------------------------------------------ samplers
def test_sequential_random_and_subset_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    perm = list(RandomSampler(range(7), generator=tt.Generator().manual_seed(3)))
    assert sorted(perm) == list(range(7))
    assert list(RandomSampler(range(7), generator=tt.Generator().manual_seed(3))) == perm
    # num_samples past len without replacement: whole permutations, then part of one
    longer = list(RandomSampler(range(3), num_samples=7, generator=tt.Generator().manual_seed(0)))
    assert len(longer) == 7 and sorted(longer[:3]) == [0, 1, 2] and sorted(longer[3:6]) == [0, 1, 2]
    drawn = list(RandomSampler(range(5), replacement=True, num_samples=70, generator=tt.Generator().manual_seed(0)))
    assert len(drawn) == 70 and set(drawn) <= set(range(5)) and len(set(drawn)) == 5
    assert len(RandomSampler(range(5), num_samples=9)) == 9
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    tt.manual_seed(11)
    first = list(RandomSampler(range(20)))
    tt.manual_seed(11)
    assert list(RandomSampler(range(20))) == first      # the global seed reproduces the order
    sub = list(SubsetRandomSampler([10, 20, 30, 40], generator=tt.Generator().manual_seed(2)))
    assert sorted(sub) == [10, 20, 30, 40]
    weighted = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=tt.Generator().manual_seed(0)))
    assert set(weighted) <= {1, 3} and weighted.count(3) > weighted.count(1)


def test_batch_sampler():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
        BatchSampler(range(3), 2, 1)


# ------------------------------------------------------------------------------ shuffling is random
# Statistical checks on fixed seeds: each runs the same draws every time (it cannot flake), and the
# p-value thresholds (1e-3) are met by a fair shuffle and missed by the biased ones shown beside.
def _chi2_sf(x, dof):
    """P(chi-square with ``dof`` degrees of freedom > x), in closed form (integer dof)."""
    half = x / 2
    if dof % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, dof // 2):
            term *= half / i
            total += term
        return math.exp(-half) * total
    total, term = math.erfc(math.sqrt(half)), math.sqrt(x) * math.sqrt(2 / math.pi) * math.exp(-half)
    for i in range(1, (dof + 1) // 2):
        total += term
        term *= x / (2 * i + 1)
    return total


def _chi2_p(counts, expected=None):
    """p-value of the chi-square test of ``counts`` (any shape) against ``expected`` (default:
    equally likely cells)."""
    counts = np.asarray(counts, dtype=np.float64).ravel()
    expected = np.full_like(counts, counts.mean()) if expected is None else np.asarray(expected, np.float64)
    return _chi2_sf(float(((counts - expected) ** 2 / expected).sum()), counts.size - 1)


def test_chi_square_p_values():
    """The closed form against tabulated values (0.05 and 0.001 critical values)."""
    for dof, x05, x001 in ((1, 3.841, 10.828), (2, 5.991, 13.816), (5, 11.070, 20.515), (9, 16.919, 27.877),
                           (23, 35.172, 49.728), (35, 49.802, 66.619)):
        assert abs(_chi2_sf(x05, dof) - 0.05) < 2e-4 and abs(_chi2_sf(x001, dof) - 0.001) < 2e-5


def _position_counts(orders, n):
    """counts[position, value] over many orders of range(n)."""
    counts = np.zeros((n, n), dtype=np.int64)
    for order in orders:
        counts[np.arange(n), list(order)] += 1
    return counts


def _permutation_counts(orders, n):
    """How often each of the n! permutations of range(n) occurs."""
    import itertools
    index = {p: i for i, p in enumerate(itertools.permutations(range(n)))}
    counts = np.zeros(len(index), dtype=np.int64)
    for order in orders:
        counts[index[tuple(order)]] += 1
    return counts


def _assert_uniform(orders, n):
    """Every value equally likely at every position (chi-square, (n-1)^2 dof) and, for n <= 5,
    every permutation equally likely (n! - 1 dof)."""
    orders = [tuple(o) for o in orders]
    assert all(sorted(o) == list(range(n)) for o in orders)
    assert _chi2_p(_position_counts(orders, n)) > 1e-3
    if n <= 5:
        assert _chi2_p(_permutation_counts(orders, n)) > 1e-3


def test_the_uniformity_check_rejects_biased_shuffles():
    """The check above, on shuffles that are not uniform: a constant order (a sampler seeded with
    a constant), rotations only, and the classic swap-with-any-position shuffle (n^n paths onto
    n! orders: some orders come up more often)."""
    rng = random.Random(0)
    n, trials = 4, 2400
    constant = [(2, 0, 3, 1)] * trials
    rotations = [tuple((i + k) % n for i in range(n)) for k in (rng.randrange(n) for _ in range(trials))]

    def naive():
        a = list(range(n))
        for i in range(n):
            j = rng.randrange(n)
            a[i], a[j] = a[j], a[i]
        return tuple(a)
    swaps = [naive() for _ in range(trials)]
    for orders in (constant, rotations, swaps):
        with pytest.raises(AssertionError):
            _assert_uniform(orders, n)


def test_random_sampler_orders_are_uniform_and_differ_by_seed_and_epoch():
    n = 4
    sampler = RandomSampler(range(n), generator=tt.Generator().manual_seed(0))
    epochs = [tuple(sampler) for _ in range(2400)]      # one generator: each epoch draws anew
    _assert_uniform(epochs, n)
    assert len(set(epochs[:8])) > 1                      # consecutive epochs differ
    # different seeds, different orders (20! orders: a repeat among 30 seeds is a bug)
    by_seed = {tuple(RandomSampler(range(20), generator=tt.Generator().manual_seed(s))) for s in range(30)}
    assert len(by_seed) == 30
    # no generator: a fresh one per epoch seeded from the global generator; still uniform
    tt.manual_seed(1)
    unseeded = RandomSampler(range(n))
    _assert_uniform([tuple(unseeded) for _ in range(2400)], n)
    # with replacement: each index equally likely, positions independent
    drawn = list(RandomSampler(range(6), replacement=True, num_samples=6000, generator=tt.Generator().manual_seed(2)))
    assert _chi2_p(np.bincount(drawn, minlength=6)) > 1e-3
    pairs = np.bincount(np.array(drawn[0::2]) * 6 + np.array(drawn[1::2]), minlength=36)
    assert _chi2_p(pairs) > 1e-3


def test_generator_is_honoured_and_the_global_one_left_alone():
    """The order follows ``generator=`` alone: the same seed gives the same order whatever the
    global generator holds, and drawing it does not move the global generator."""
    for make in (lambda g: list(RandomSampler(range(30), generator=g)),
                 lambda g: list(SubsetRandomSampler(list(range(30)), generator=g)),
                 lambda g: list(WeightedRandomSampler([1.0] * 30, 30, generator=g)),
                 lambda g: random_split(range(30), [10, 20], generator=g)[0].indices,
                 lambda g: [int(b) for b in DataLoader(list(range(30)), batch_size=None, shuffle=True, generator=g)]):
        tt.manual_seed(0)
        first = make(tt.Generator().manual_seed(7))
        after = tt.randint(0, 2 ** 30, (4,)).tolist()
        tt.manual_seed(123)
        assert make(tt.Generator().manual_seed(7)) == first
        tt.manual_seed(0)
        make(tt.Generator().manual_seed(8))
        assert tt.randint(0, 2 ** 30, (4,)).tolist() == after         # the global stream untouched
        assert make(tt.Generator().manual_seed(8)) != first


def test_dataloader_shuffle_is_uniform_and_new_each_epoch():
    n = 4
    loader = DataLoader(list(range(n)), batch_size=None, shuffle=True, generator=tt.Generator().manual_seed(3))
    epochs = [tuple(int(i) for i in loader) for _ in range(2400)]
    _assert_uniform(epochs, n)
    assert len(set(epochs[:8])) > 1
    tt.manual_seed(4)                                    # without a generator: the global seed
    plain = DataLoader(list(range(n)), batch_size=None, shuffle=True)
    _assert_uniform([tuple(int(i) for i in plain) for _ in range(2400)], n)
    # batches of a shuffled loader: every element once per epoch, orders differ between epochs
    batched = DataLoader(list(range(10)), batch_size=3, shuffle=True, generator=tt.Generator().manual_seed(5))
    a, b = ([int(i) for batch in batched for i in batch] for _ in range(2))
    assert sorted(a) == sorted(b) == list(range(10)) and a != b


def test_random_split_is_uniform():
    """Which elements land in which part: every permutation of the indices equally likely."""
    g = tt.Generator().manual_seed(6)
    orders = []
    for _ in range(2400):
        first, second = random_split(range(4), [1, 3], generator=g)
        orders.append(tuple(first.indices + second.indices))
    _assert_uniform(orders, 4)
    membership = np.zeros(6, dtype=np.int64)
    for _ in range(1200):
        for i in random_split(range(6), [2, 4], generator=g)[0].indices:
            membership[i] += 1
    assert membership.sum() == 2400 and _chi2_p(membership) > 1e-3


def test_subset_and_weighted_samplers_follow_their_distributions():
    g = tt.Generator().manual_seed(9)
    sub = SubsetRandomSampler([10, 11, 12, 13], generator=g)
    _assert_uniform([tuple(i - 10 for i in sub) for _ in range(2400)], 4)
    weights = [0.5, 1.0, 0.0, 2.5]
    drawn = np.bincount(list(WeightedRandomSampler(weights, 8000, generator=g)), minlength=4)
    assert drawn[2] == 0
    assert _chi2_p(drawn[[0, 1, 3]], np.array([0.5, 1.0, 2.5]) / 4.0 * 8000) > 1e-3
    # without replacement: distinct indices, the first drawn in proportion to the weights
    firsts = [next(iter(WeightedRandomSampler(weights, 3, replacement=False, generator=g))) for _ in range(2000)]
    assert _chi2_p(np.bincount(firsts, minlength=4)[[0, 1, 3]], np.array([0.5, 1.0, 2.5]) / 4.0 * 2000) > 1e-3
    assert sorted(WeightedRandomSampler(weights, 3, replacement=False, generator=g)) == [0, 1, 3]


def test_sampler_arguments_and_boundaries():
    """torch's argument checks and sizes at their boundaries (found by mutation testing: each
    line kills a mutant the tests above let live)."""
    assert len(list(RandomSampler(range(3), num_samples=1))) == 1                 # 1 is positive
    for n in (31, 32, 33, 64):                 # replacement draws come in chunks of 32, as torch's
        assert len(list(RandomSampler(range(3), replacement=True, num_samples=n))) == n
    # draws that all come from the last (partial) chunk: still uniform over every index
    g = tt.Generator().manual_seed(12)
    tail = [i for _ in range(300) for i in RandomSampler(range(6), replacement=True, num_samples=20, generator=g)]
    assert _chi2_p(np.bincount(tail, minlength=6)) > 1e-3
    # no generator: the global one (torch's SubsetRandomSampler and WeightedRandomSampler draw from it)
    for make in (lambda: list(SubsetRandomSampler([5, 6, 7, 8, 9])), lambda: list(WeightedRandomSampler([1.0] * 5, 5))):
        tt.manual_seed(21)
        first = make()
        tt.manual_seed(21)
        assert make() == first
        assert make() != first            # the global stream moved on
    sampler = WeightedRandomSampler([1, 3], 2)
    assert sampler.weights.dtype == np.float64 and len(sampler) == 2      # torch: a double tensor
    assert len(list(WeightedRandomSampler([1.0], 1))) == 1
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match=f"num_samples should be a positive integer value, but got num_samples={bad}"):
            WeightedRandomSampler([1.0, 2.0], bad)
    with pytest.raises(ValueError, match="replacement should be a boolean value, but got replacement=1"):
        WeightedRandomSampler([1.0, 2.0], 2, replacement=1)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(1, 2\)"):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    with pytest.raises(RuntimeError, match=r"^cannot sample n_sample > prob_dist.size\(-1\) samples without replacement$"):
        list(WeightedRandomSampler([0.0, 1.0, 2.0], 3, replacement=False))     # a zero weight is no candidate
    assert sorted(WeightedRandomSampler([0.0, 1.0, 2.0], 2, replacement=False)) == [1, 2]
    for bad in (0, True, 2.0):
        with pytest.raises(ValueError, match=f"batch_size should be a positive integer value, but got batch_size={bad}"):
            BatchSampler(range(3), bad, False)
    assert [len(BatchSampler(range(n), 3, False)) for n in (5, 6, 7)] == [2, 2, 3]
    assert [len(BatchSampler(range(n), 3, True)) for n in (5, 6, 7)] == [1, 2, 2]


# ------------------------------------------------------------------------------ collation
def test_default_collate_every_supported_type():
    t = default_collate([tt.tensor([1.0, 2.0]), tt.tensor([3.0, 4.0])])
    assert t.shape == (2, 2) and t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    a = default_collate([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)])
    assert isinstance(a, tt.Tensor) and a.dtype == tt.int32 and a.tolist() == [[1, 2], [3, 4]]
    s = default_collate([np.float32(1.5), np.float32(2.5)])
    assert s.dtype == tt.float32 and s.tolist() == [1.5, 2.5]
    f = default_collate([1.0, 2.5])
    assert f.dtype == tt.float64 and f.tolist() == [1.0, 2.5]
    i = default_collate([1, 2, 3])
    assert i.dtype == tt.int64 and i.tolist() == [1, 2, 3]
    b = default_collate([True, False])
    assert b.dtype == tt.bool and b.tolist() == [True, False]
    assert default_collate(["a", "b"]) == ["a", "b"]
    assert default_collate([b"x", b"y"]) == [b"x", b"y"]
    d = default_collate([{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}])
    assert d["a"].tolist() == [1, 2] and [x.tolist() for x in d["b"]] == [[1.0, 3.0], [2.0, 4.0]]
    od = default_collate([collections.OrderedDict(z=1, a=2), collections.OrderedDict(z=3, a=4)])
    assert type(od) is collections.OrderedDict and list(od) == ["z", "a"]
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(p, Point) and p.x.tolist() == [1, 3] and p.y.dtype == tt.float64
    tup = default_collate([(1, "a"), (2, "b")])
    assert isinstance(tup, list) and tup[0].tolist() == [1, 2] and tup[1] == ("a", "b")   # tuples -> list
    lst = default_collate([[1, 2], [3, 4]])
    assert [x.tolist() for x in lst] == [[1, 3], [2, 4]]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers, "
                                        "dicts or lists; found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([tt.ones(2), tt.ones(3)])


def test_default_convert():
    x = default_convert(np.arange(3))
    assert isinstance(x, tt.Tensor) and x.tolist() == [0, 1, 2]
    d = default_convert({"a": np.ones(2, np.float32), "b": 3, "s": "k"})
    assert d["a"].dtype == tt.float32 and d["b"] == 3 and d["s"] == "k"
    assert isinstance(default_convert((np.zeros(1), 1)), list)
    strs = np.array(["a", "b"])
    assert default_convert(strs) is strs
    assert default_convert(Point(np.zeros(1), 2)).y == 2


# ------------------------------------------------------------------------------ DataLoader
def test_loader_order_batches_drop_last_and_len():
    ds = Squares(7)
    dl = DataLoader(ds, batch_size=3)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3
    assert batches[0][0].tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 4.0]] and batches[2][1].tolist() == [6]
    dl = DataLoader(ds, batch_size=3, drop_last=True)
    assert len(dl) == 2 and [b[1].tolist() for b in dl] == [[0, 1, 2], [3, 4, 5]]
    # batch_size=None: no batching, samples converted one by one
    single = list(DataLoader(TensorDataset(tt.arange(3)), batch_size=None))
    assert len(single) == 3 and single[1][0].item() == 1
    assert len(DataLoader(Sharded(7), batch_size=2)) == 4 and len(DataLoader(Sharded(7), batch_size=2,
                                                                            drop_last=True)) == 3
    assert [b.tolist() for b in DataLoader(Sharded(5), batch_size=2)] == [[0, 1], [2, 3], [4]]
    bs = DataLoader(ds, batch_sampler=[[6, 0], [3]])
    assert [b[1].tolist() for b in bs] == [[6, 0], [3]] and len(bs) == 2


def test_shuffle_reproducible_with_generator_and_global_seed():
    ds = Squares(12)

    def order(**kw):
        return [i for b in DataLoader(ds, batch_size=5, shuffle=True, **kw) for i in b[1].tolist()]

    a = order(generator=tt.Generator().manual_seed(42))
    assert a == order(generator=tt.Generator().manual_seed(42)) and sorted(a) == list(range(12))
    assert a != list(range(12))
    tt.manual_seed(3)
    b = order()
    tt.manual_seed(3)
    assert order() == b


def test_loader_option_conflicts():
    ds = Squares(4)
    cases = [
        (dict(sampler=SequentialSampler(ds), shuffle=True), "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=[[0]], batch_size=2),
         "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"),
        (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler option is mutually exclusive"),
        (dict(batch_sampler=[[0]], shuffle=True), "batch_sampler option is mutually exclusive"),
        (dict(batch_size=None, drop_last=True),
         "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"),
        (dict(num_workers=-1), "num_workers option should be non-negative"),
        (dict(timeout=-1), "timeout option should be non-negative"),
        (dict(prefetch_factor=2), "prefetch_factor option could only be specified in multiprocessing"),
        (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
        (dict(multiprocessing_context="fork"), "multiprocessing_context can only be used with multi-process"),
        (dict(num_workers=1, multiprocessing_context="nope"), "should specify a valid start method"),
    ]
    for kwargs, msg in cases:
        with pytest.raises(ValueError, match=msg):
            DataLoader(ds, **kwargs)
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        DataLoader(Sharded(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Sharded(3), sampler=[0])
    dl = DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        dl.batch_size = 3
    with pytest.raises(TypeError):
        len(DataLoader(type("NoLen", (IterableDataset,), {"__iter__": lambda self: iter([1])})()))


def test_pin_memory_pins_every_tensor_of_the_batch():
    if not hasattr(tt.Tensor, "pin_memory"):
        pytest.xfail("Tensor.pin_memory() is being added by the runtime engineer")
    batch = next(iter(DataLoader(Squares(4), batch_size=2, pin_memory=True)))
    assert all(t.is_pinned() for t in batch)


# ------------------------------------------------------------------------------ workers
def test_workers_match_single_process_and_get_worker_info():
    ds = Squares(9)
    expected = _values(DataLoader(ds, batch_size=2))
    assert _values(DataLoader(ds, batch_size=2, num_workers=2)) == expected
    assert get_worker_info() is None
    dl = DataLoader(WorkerReport(), batch_size=None, num_workers=2, worker_init_fn=_init_worker,
                    generator=tt.Generator().manual_seed(0))
    reports = list(dl)
    # tasks go round-robin to the workers and come back in order
    assert [r[0] for r in reports] == [0, 1, 0, 1]
    assert {r[1] for r in reports} == {2} and {r[3] for r in reports} == {"WorkerReport"}
    assert [r[4] for r in reports] == ["0", "1", "0", "1"]          # worker_init_fn(worker_id) ran there
    base = reports[0][2]
    assert reports[1][2] == base + 1                                 # seed = base_seed + worker_id
    assert reports[0][5] == base and reports[1][5] == base + 1       # tt seeded with it
    assert reports[0][6] != reports[1][6]                            # so is Python's random
    assert reports[0][7] != reports[1][7]                            # and NumPy's global generator


def test_iterable_dataset_sharded_over_workers():
    batches = [b.tolist() for b in DataLoader(Sharded(7), batch_size=2, num_workers=2)]
    # worker 0 yields 0,2,4,6 and worker 1 1,3,5; batches alternate between them
    assert batches == [[0, 2], [1, 3], [4, 6], [5]]


def test_worker_exception_carries_its_traceback():
    with pytest.raises(ValueError) as info:
        list(DataLoader(FailsAt(3), batch_size=2, num_workers=2))
    text = str(info.value)
    assert text.startswith("Caught ValueError in DataLoader worker process 1.\n"
                           "Original Traceback (most recent call last):")
    assert "sample 3 is broken" in text and "__getitem__" in text


def test_dead_worker_is_an_error_not_a_hang():
    # timeout=20 bounds the test even if the liveness check failed (it would then time out instead)
    import time
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(DataLoader(DiesAt(), batch_size=1, num_workers=1, timeout=20))
    assert time.monotonic() - start < 10


def test_persistent_workers_over_two_epochs():
    dl = DataLoader(Squares(6), batch_size=4, num_workers=2, persistent_workers=True, shuffle=True,
                    generator=tt.Generator().manual_seed(0))
    first = [b[1].tolist() for b in dl]
    pids = [w.pid for w in dl._iterator._workers]
    second = [b[1].tolist() for b in dl]
    assert [w.pid for w in dl._iterator._workers] == pids and all(w.is_alive() for w in dl._iterator._workers)
    assert sorted(sum(first, [])) == sorted(sum(second, [])) == list(range(6))
    assert [len(b) for b in first] == [4, 2]
    dl._iterator._shutdown_workers()
    # an iterable dataset restarts its stream in each worker at each epoch
    it = DataLoader(Sharded(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in it] == [b.tolist() for b in it] == [[0, 2], [1, 3], [4]]
    it._iterator._shutdown_workers()


def test_workers_stop_when_iterator_is_dropped():
    import gc
    dl = DataLoader(Squares(20), batch_size=1, num_workers=1)
    iterator = iter(dl)
    next(iterator)
    worker = iterator._workers[0]
    del iterator
    worker.join(timeout=5)
    assert worker.exitcode == 0          # it left by itself, it was not terminated
    # an iterator that dies in a reference cycle: the collector closes its queues before its
    # __del__ runs, and the workers must still leave cleanly
    iterator = iter(dl)
    next(iterator)
    worker = iterator._workers[0]
    iterator.cycle = iterator
    del iterator
    gc.collect()
    worker.join(timeout=5)
    assert worker.exitcode == 0


def test_timeout_is_a_runtime_error():
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.3 seconds"):
        next(iter(DataLoader(Slow(), num_workers=1, timeout=0.3)))


def test_multiprocessing_context_is_honoured():
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")     # a fresh interpreter: dataset and batches travel pickled
    dl = DataLoader(TensorDataset(tt.arange(5.0)), batch_size=2, num_workers=1, multiprocessing_context=ctx)
    assert dl.multiprocessing_context is ctx
    assert [b[0].tolist() for b in dl] == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert DataLoader(Squares(2), num_workers=1, multiprocessing_context="fork").multiprocessing_context \
        .get_start_method() == "fork"
