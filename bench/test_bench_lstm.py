"""pytest-benchmark: one training step of a word-level LSTM language model (the PyTorch
word_language_model example's shape: embedding 200, hidden 200, 2 layers, 35 steps, batch 20,
a vocabulary of 1000 words, dropout 0.2 between layers), tritensor against torch eager in the
same run on the cpu: forward, cross entropy over every step, backward, clip_grad_norm_(0.25),
a plain SGD update (lr 20).

Both models start from the same weights (torch's initialisation, copied into tritensor by
state_dict names) and see the same batch; before timing, one step of each is run and tritensor's
loss and updated weights are checked against torch's (a fast wrong step is no result). Dropout
is left out of that check (the random masks differ), and is on in the timed steps.

The cuda rows (tritensor and torch on the GPU, each step synchronised) run only on a real GPU
(skipped on the emulated device: the interpreter measures nothing): ``-k cuda``; not measured
yet. To measure torch on the cpu from tritensor's venv: PYTHONPATH=/work/torchenv/lib/python3.11/site-packages OPENBLAS_NUM_THREADS=1
pytest bench/test_bench_lstm.py --benchmark-enable -n 0 (torch runs on one thread).
"""
import numpy as np
import pytest

import tritensor as tt

VOCAB, EMB, HID, LAYERS, SEQ, BATCH = 1000, 200, 200, 2, 35, 20
LR, CLIP, DROPOUT = 20.0, 0.25, 0.2


def _batch():
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, VOCAB, (SEQ + 1, BATCH))
    return tokens[:-1], tokens[1:]


class TTModel(tt.nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = tt.nn.Dropout(DROPOUT)
        self.encoder = tt.nn.Embedding(VOCAB, EMB)
        self.rnn = tt.nn.LSTM(EMB, HID, LAYERS, dropout=DROPOUT)
        self.decoder = tt.nn.Linear(HID, VOCAB)

    def forward(self, x, hidden):
        emb = self.drop(self.encoder(x))
        out, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(out)).reshape(-1, VOCAB), hidden


def _torch_model(torch):
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = torch.nn.Dropout(DROPOUT)
            self.encoder = torch.nn.Embedding(VOCAB, EMB)
            self.rnn = torch.nn.LSTM(EMB, HID, LAYERS, dropout=DROPOUT)
            self.decoder = torch.nn.Linear(HID, VOCAB)

        def forward(self, x, hidden):
            emb = self.drop(self.encoder(x))
            out, hidden = self.rnn(emb, hidden)
            return self.decoder(self.drop(out)).reshape(-1, VOCAB), hidden
    return Model()


REAL_GPU = tt.cuda.is_available() and not tt.cuda.is_emulated()


def _tt_step(model, x, y):
    hidden = (tt.zeros(LAYERS, BATCH, HID, device=x.device), tt.zeros(LAYERS, BATCH, HID, device=x.device))
    model.zero_grad()
    out, hidden = model(x, hidden)
    loss = tt.nn.functional.cross_entropy(out, y.reshape(-1))
    loss.backward()
    tt.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
    with tt.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-LR)
    return loss


def _torch_step(torch, model, x, y):
    hidden = (torch.zeros(LAYERS, BATCH, HID, device=x.device), torch.zeros(LAYERS, BATCH, HID, device=x.device))
    model.zero_grad()
    out, hidden = model(x, hidden)
    loss = torch.nn.functional.cross_entropy(out, y.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-LR)
    return loss


@pytest.fixture(scope="module")
def models():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    tm = _torch_model(torch)
    tt_model = TTModel()
    tt_model.load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    xs, ys = _batch()
    # the check: one step each without dropout, same loss and same updated weights
    tm.eval()
    tt_model.eval()
    lt = _torch_step(torch, tm, torch.tensor(xs), torch.tensor(ys))
    lo = _tt_step(tt_model, tt.tensor(xs), tt.tensor(ys))
    lt, lo = float(lt.detach()), float(lo.detach())
    assert abs(lt - lo) < 1e-4 * abs(lt), (lt, lo)
    for (name, p), (_, q) in zip(tm.named_parameters(), tt_model.named_parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-3, atol=2e-5, err_msg=name)
    tm.train()
    tt_model.train()
    return torch, tm, tt_model, xs, ys


@pytest.mark.parametrize("impl", ["tritensor", "torch"])
def test_cpu_lstm_lm_step(benchmark, models, impl):
    torch, tm, tt_model, xs, ys = models
    benchmark.group = f"cpu LSTM LM step (vocab {VOCAB}, {EMB}/{HID}, {LAYERS} layers, seq {SEQ}, batch {BATCH})"
    if impl == "tritensor":
        x, y = tt.tensor(xs), tt.tensor(ys)
        benchmark.pedantic(_tt_step, args=(tt_model, x, y), rounds=5, iterations=1, warmup_rounds=1)
    else:
        x, y = torch.tensor(xs), torch.tensor(ys)
        benchmark.pedantic(_torch_step, args=(torch, tm, x, y), rounds=5, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("impl", ["tritensor", "torch"])
def test_cuda_lstm_lm_step(benchmark, models, impl):
    if not REAL_GPU:
        pytest.skip("needs a real GPU (the emulated device runs the interpreter)")
    torch, tm, _, xs, ys = models
    benchmark.group = f"cuda LSTM LM step (vocab {VOCAB}, {EMB}/{HID}, {LAYERS} layers, seq {SEQ}, batch {BATCH})"
    if impl == "tritensor":
        model = TTModel().cuda()
        model.load_state_dict({k: tt.tensor(v.detach().cpu().numpy(), device="cuda")
                               for k, v in tm.state_dict().items()})
        x, y = tt.tensor(xs, device="cuda"), tt.tensor(ys, device="cuda")

        def step():
            _tt_step(model, x, y)
            tt.cuda.synchronize()
    else:
        if not torch.cuda.is_available():
            pytest.skip("torch without cuda")
        model = _torch_model(torch).cuda()
        model.load_state_dict(tm.state_dict())
        x, y = torch.tensor(xs, device="cuda"), torch.tensor(ys, device="cuda")

        def step():
            _torch_step(torch, model, x, y)
            torch.cuda.synchronize()
    benchmark.pedantic(step, rounds=20, iterations=1, warmup_rounds=3)
