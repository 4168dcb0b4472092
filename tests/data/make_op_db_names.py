"""Write tests/data/op_db_names.txt: the distinct op names of PyTorch's OpInfo database.

Run once with torch (and expecttest) installed, in a separate venv (tritensor never imports torch):

    /path/to/torchenv/bin/python tests/data/make_op_db_names.py

The list is the measure of issue 21 (tests/test_op_db_coverage.py): PyTorch's own list of ops.
"""
import pathlib

import torch
from torch.testing._internal.common_methods_invocations import op_db

names = sorted({op.name for op in op_db})
out = pathlib.Path(__file__).with_name("op_db_names.txt")
out.write_text(f"# op_db of torch {torch.__version__}: {len(names)} distinct names "
               f"(tests/data/make_op_db_names.py)\n" + "\n".join(names) + "\n")
print(f"{len(names)} names -> {out}")
