"""tt.utils.data: datasets, samplers and the DataLoader, as torch.utils.data."""
from ._collate import default_collate, default_convert  # noqa: F401
from ._worker import WorkerInfo, get_worker_info  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
from .distributed import DistributedSampler  # noqa: F401
from .dataset import (  # noqa: F401
    ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split,
)
from .sampler import (  # noqa: F401
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)
