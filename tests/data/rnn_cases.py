"""The recurrent-layer cases of rnn_fixtures.npz, shared by make_rnn_fixtures.py (torch) and
tests/test_rnn.py (tritensor): torch-free."""

# name: (class, constructor kwargs, input shape, hidden given, packed lengths or None)
CASES = {
    "lstm_proj_bi_bf": ("LSTM", dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True, batch_first=True,
                                     proj_size=2), (2, 4, 3), True, None),
    "lstm_plain": ("LSTM", dict(input_size=3, hidden_size=4), (5, 2, 3), False, None),
    "gru_bi_2": ("GRU", dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True), (4, 3, 3), False, None),
    "gru_nobias": ("GRU", dict(input_size=2, hidden_size=3, bias=False), (3, 2, 2), True, None),
    "rnn_relu_unbatched": ("RNN", dict(input_size=3, hidden_size=4, nonlinearity="relu"), (5, 3), True, None),
    "rnn_tanh_bi": ("RNN", dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True, batch_first=True),
                    (3, 4, 3), True, None),
    "lstm_packed": ("LSTM", dict(input_size=3, hidden_size=4, bidirectional=True, num_layers=2), (4, 3, 3), True,
                    [2, 4, 1]),
    "gru_packed": ("GRU", dict(input_size=3, hidden_size=4, bidirectional=True), (4, 3, 3), False, [3, 1, 4]),
    "rnn_packed_proj": ("LSTM", dict(input_size=2, hidden_size=4, proj_size=3, batch_first=True), (3, 4, 2), False,
                        [4, 4, 2]),
}
CELLS = {
    "lstm_cell": ("LSTMCell", dict(input_size=3, hidden_size=5), (4, 3)),
    "gru_cell": ("GRUCell", dict(input_size=3, hidden_size=5), (4, 3)),
    "rnn_cell_tanh": ("RNNCell", dict(input_size=3, hidden_size=5), (4, 3)),
    "rnn_cell_relu": ("RNNCell", dict(input_size=3, hidden_size=5, nonlinearity="relu", bias=False), (3,)),
}
