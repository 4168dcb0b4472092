"""pdist / cdist (scaffold: being written this session)."""


def pdist(input, p=2):
    raise NotImplementedError("tt.pdist is not implemented yet")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    raise NotImplementedError("tt.cdist is not implemented yet")
