# Copyright (c) 2017 Pytorch contributors. All rights reserved.
# BSD 3-Clause License: the full text (conditions and disclaimer) is tests/examples/LICENSE.
# Source: pytorch/examples, distributed/ddp-tutorial-series/datautils.py at commit 77f55b912142.
# Changes: the imports only (torch -> tritensor).
import tritensor as torch
from tritensor.utils.data import Dataset

class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        self.data = [(torch.rand(20), torch.rand(1)) for _ in range(size)]

    def __len__(self):
        return self.size
    
    def __getitem__(self, index):
        return self.data[index]