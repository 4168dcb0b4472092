"""tt.save / tt.load in PyTorch's zip format (scaffold: being written this session)."""


def save(obj, f, *args, **kwargs):
    raise NotImplementedError("tt.save is not implemented yet")


def load(f, *args, **kwargs):
    raise NotImplementedError("tt.load is not implemented yet")


def save_file(tensors, filename, metadata=None):
    raise NotImplementedError("tt.save_file is not implemented yet")


def load_file(filename, device="cpu"):
    raise NotImplementedError("tt.load_file is not implemented yet")
