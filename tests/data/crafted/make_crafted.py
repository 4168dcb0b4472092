"""Writes the crafted checkpoints of issue 20 (tests/data/crafted/*.pt): each one broke tt.load's
promise once (a segfault, a read outside a storage, code run, SIGBUS, a bare EOFError ...).
tests/test_serialization_safety.py loads every one and asserts tritensor's answer.

    python tests/data/crafted/make_crafted.py            # write the files (no torch needed)
    /work/torchenv/bin/python tests/data/crafted/make_crafted.py --torch
                                                         # also record torch 2.13's answers in
                                                         # torch_outcomes.txt (for comparison)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))          # tests/, for checkpoint_forge

from checkpoint_forge import (BUILD, REDUCE, TRUE, base_records, checkpoint, dict_of, glob, num,  # noqa: E402
                              ordered_dict, pickle_of, storage, tensor, text, tup, zip_records)

# What the exploit runs if builtins.exec is ever allowlisted: sets a flag the test looks for.
EXPLOIT_CODE = "import builtins; builtins._tritensor_pwned = True"


def _with(records, index, **claims):
    records[index].update(claims)
    return records


def _unpickler_cases():
    t = tensor()
    return {
        # item 1: BUILD {"itemsize": 1} onto the global torch.int64 (the process's dtype object)
        "build_dtype_itemsize": pickle_of(dict_of(t=t, d=glob("torch", "int64") + dict_of(itemsize=num(1)) + BUILD)),
        # item 1: BUILD {"_offset": 2**24} on a rebuilt tensor: moves it past its storage after the check
        "build_tensor_offset": pickle_of(dict_of(t=t + dict_of(_offset=num(1 << 24)) + BUILD)),
        # torch's legacy set_ state through BUILD, out of bounds
        "build_tensor_legacy_oob": pickle_of(dict_of(
            t=t + tup(storage(), num(0), tup(num(1 << 20)), tup(num(1))) + BUILD)),
        # BUILD on an allowlisted class itself (an attribute write to a global)
        "build_global_class": pickle_of(dict_of(c=glob("collections", "OrderedDict")
                                                + dict_of(fromkeys=num(1)) + BUILD)),
        # BUILD replacing a method of a state dict
        "build_ordered_dict_keys": pickle_of(dict_of(sd=ordered_dict() + dict_of(keys=num(1)) + BUILD)),
        # _rebuild_parameter_with_state(tensor, True, OrderedDict(), {"dtype": torch.float64})
        "param_state_dtype": pickle_of(dict_of(p=glob("torch._utils", "_rebuild_parameter_with_state") + tup(
            t, TRUE, ordered_dict(), dict_of(dtype=glob("torch", "float64"))) + REDUCE)),
        "param_state_offset": pickle_of(dict_of(p=glob("torch._utils", "_rebuild_parameter_with_state") + tup(
            t, TRUE, ordered_dict(), dict_of(_offset=num(1 << 24))) + REDUCE)),
        # item 9: builtins.exec called with code (runs under weights_only=True if ever allowlisted)
        "exec_global": pickle_of(dict_of(t=t, x=glob("builtins", "exec") + tup(text(EXPLOIT_CODE)) + REDUCE)),
        # a storage outside any tensor (came back as an internal _LoadedStorage)
        "storage_in_dict": pickle_of(dict_of(t=t, s=storage())),
        # bytearray(2**40): 1 TiB asked by a 200-byte file
        "bytearray_alloc": pickle_of(dict_of(b=glob("builtins", "bytearray") + tup(num(1 << 40)) + REDUCE)),
        # a size at the int64 edge: numel overflows int64 (stride 0 keeps the extent small)
        "numel_overflow": pickle_of(dict_of(t=tensor(size=(1 << 62, 4), stride=(0, 0)))),
        # a size past int64
        "size_past_int64": pickle_of(dict_of(t=tensor(size=(1 << 63,), stride=(0,)))),
    }


def _zip_cases():
    # 16 MiB of pickle (a list of 16 Mi Nones) that deflates to ~16 KiB
    n = 1 << 24
    bomb_pickle = b"\x80\x02]" + b"(" + b"N" * n + b"e."
    return {
        # item 2: the storage's directory entry claims 1 MiB the file does not have (SIGBUS under mmap)
        "dir_claims_more": zip_records(_with(base_records(), 2, csize=1 << 20, usize=1 << 20)),
        "pkl_missing": zip_records(base_records()[1:]),
        "storage_missing": zip_records([r for r in base_records() if r["name"] != "archive/data/0"]),
        "truncated": checkpoint()[:300],
        "bad_crc_storage": zip_records(_with(base_records(), 2, crc=0x12345678)),
        "bad_crc_pkl": zip_records(_with(base_records(), 0, crc=0x12345678)),
        # data.pkl deflated 1000x: claims 16 MiB from 16 KiB (a 3 MB file inflated to 3 GiB once)
        "deflate_bomb": zip_records(_with(base_records(bomb_pickle), 0, method=8)),
        # a deflated data.pkl whose directory claims fewer bytes than it inflates to
        "deflate_lying_size": zip_records(_with(base_records(), 0, method=8, usize=40)),
        # the storage record holds 8 bytes where the pickle names 4 floats
        "storage_size_mismatch": checkpoint(storages={"0": b"\x00" * 8}),
        # the storage's data runs into the next record (stored; sizes agree; inside the file)
        "records_overlap": zip_records(_with(base_records(), 2, csize=16 + 40, usize=16 + 40)),
        # the local header names another record than the directory
        "local_name_differs": zip_records(_with(base_records(), 2, local_name="archive/data/X")),
        "encrypted": zip_records(_with(base_records(), 2, flags=0x801)),
        "version_99": zip_records(base_records(version=b"99\n")),
        "not_in_subdirectory": zip_records([dict(r, name=r["name"].replace("archive/", ""))
                                            for r in base_records()]),
        "central_directory_offset_lies": checkpoint(cd_offset_delta=7),
        "truncated_pickle": checkpoint(pickle_bytes=b"\x80\x02}q\x00(X\x01\x00\x00\x00t"),
    }


def all_cases():
    cases = {name: checkpoint(pickle_bytes=p) for name, p in _unpickler_cases().items()}
    cases.update(_zip_cases())
    return cases


def _torch_outcomes(paths):
    import torch
    lines = [f"# torch {torch.__version__}: torch.load(path, weights_only=True, mmap=...) on each crafted file"]
    for name, path in paths.items():
        for mm in (False, True):
            try:
                out = torch.load(path, weights_only=True, mmap=mm)
                res = f"loaded {type(out).__name__}"
            except BaseException as e:     # noqa: BLE001 - a record of whatever torch does
                msg = str(e).split(". This is an internal miniz error")[0]
                msg = msg.split("WeightsUnpickler error:")[-1].split("\n\nCheck the documentation")[0]
                msg = " ".join(msg.split())
                res = f"{type(e).__name__}: {msg[:160]}"
            lines.append(f"{name:30s} mmap={mm!s:5s} {res}")
    with open(os.path.join(HERE, "torch_outcomes.txt"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main():
    paths = {}
    for name, data in sorted(all_cases().items()):
        paths[name] = os.path.join(HERE, f"{name}.pt")
        with open(paths[name], "wb") as fh:
            fh.write(data)
    if "--torch" in sys.argv:
        _torch_outcomes(paths)


if __name__ == "__main__":
    main()
