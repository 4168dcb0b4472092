"""The cases of embedding_bag_fixtures.npz, shared by make_embedding_bag_fixtures.py (torch) and
tests/test_embedding_bag.py (tritensor): torch-free."""

CASES = {
    "sum_psw_padding": dict(num=10, dim=5, input=[1, 2, 4, 5, 4, 3, 2, 9], offsets=[0, 3, 3, 6], psw=True,
                            kwargs=dict(mode="sum", padding_idx=4)),
    "mean_2d": dict(num=7, dim=19, input=[[1, 2, 3], [6, 6, 0], [2, 5, 1]], offsets=None,
                    kwargs=dict(mode="mean")),
    "mean_padding_freq": dict(num=10, dim=3, input=[1, 2, 0, 0, 3, 1, 1], offsets=[0, 2, 4],
                              kwargs=dict(mode="mean", padding_idx=0, scale_grad_by_freq=True)),
    "max_empty_last_offset": dict(num=9, dim=18, input=[3, 8, 3, 0, 7, 7, 1, 5], offsets=[0, 3, 3, 6, 8],
                                  kwargs=dict(mode="max", include_last_offset=True)),
    "max_padding": dict(num=6, dim=4, input=[1, 2, 0, 0, 3], offsets=[0, 2, 4],
                        kwargs=dict(mode="max", padding_idx=-6)),
    "sum_last_offset_short": dict(num=6, dim=4, input=[1, 2, 5, 0, 3], offsets=[0, 2, 3], psw=True,
                                  kwargs=dict(mode="sum", include_last_offset=True)),
}
