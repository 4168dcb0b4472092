"""PyTorch's own example programs (pytorch/examples) run on tritensor, unmodified.

The programs are not part of this repository: point ``PYTORCH_EXAMPLES`` at a checkout of
https://github.com/pytorch/examples (commit 77f55b912142 was checked) and run

    PYTORCH_EXAMPLES=/path/to/examples pytest tests/test_examples.py

(without it, every test here skips). A test runs a program's own file as ``python <file> <args>``
would, with ``import torch``/``torchvision`` answered by tritensor (tests/examples/_swap.py), on
synthetic data of the real shapes (MNIST IDX files, a Cora tarball served by a stand-in
``requests``, a word corpus, a cart-pole in place of gymnasium's: tests/examples/_fakes.py), with
its sizes cut to seconds by its own command-line arguments, and checks a property of a working
program: the loss falls, the model learns the synthetic task, the checkpoint it saved reloads to the
same parameters and results, outputs have the documented shapes. tests/examples/README.md lists
the programs and what each needs.
"""
import importlib.util
import math
import os
import re
import runpy
import struct
import sys

import numpy as np
import pytest

import tritensor as tt

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples")
EXAMPLES = os.environ.get("PYTORCH_EXAMPLES", "")
if not os.path.isfile(os.path.join(EXAMPLES, "mnist", "main.py")):
    pytest.skip("PYTORCH_EXAMPLES does not name a checkout of pytorch/examples", allow_module_level=True)


def _load(name):
    """tests/examples/<name>.py, loaded from its file (tests/examples stays off sys.path)."""
    spec = importlib.util.spec_from_file_location(f"examples_{name}", os.path.join(HERE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_fakes, _swap = _load("_fakes"), _load("_swap")

pytestmark = pytest.mark.emulated_blocks("fast")


def write_mnist(root, n_train=64, n_test=32, seed=0):
    """MNIST's IDX files under ``root/MNIST/raw``: digit ``d`` is a bright bar at rows 2d..2d+5
    over dim noise, so a working classifier separates the ten classes quickly."""
    rng = np.random.default_rng(seed)
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = (np.arange(n) % 10).astype(np.uint8)
        images = rng.integers(0, 40, size=(n, 28, 28)).astype(np.uint8)
        for image, label in zip(images, labels):
            image[2 * label:2 * label + 6, 4:24] = 255
        with open(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 0x803, n, 28, 28) + images.tobytes())
        with open(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 0x801, n) + labels.tobytes())


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """The programs' working directory, tmp/work, so that their '../data' is tmp/data."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def run_program(path, argv, monkeypatch, main=True):
    """Run the checkout's ``path`` as ``python <path> <argv>`` (``main``) or import it (not __main__),
    its folder first on sys.path and torch's names answered by tritensor; returns its globals. Its own
    modules (a program's model.py, data.py) and the torch aliases leave sys.modules after, as the
    next program may have modules of the same names."""
    path = os.path.join(EXAMPLES, path)
    folder = os.path.dirname(path)
    forget_aliases = _swap.install(monkeypatch)
    monkeypatch.setattr(sys, "argv", [path] + list(argv))
    monkeypatch.syspath_prepend(folder)
    before = set(sys.modules)
    try:
        return runpy.run_path(path, run_name="__main__" if main else "example")
    finally:
        for module in set(sys.modules) - before:
            if (getattr(sys.modules[module], "__file__", None) or "").startswith(folder + os.sep):
                del sys.modules[module]
        forget_aliases()


def printed(pattern, text):
    return [float(v) for v in re.findall(pattern, text)]


# --------------------------------------------------------------------------- mnist, mnist_rnn
@pytest.mark.parametrize("name, accel", [("mnist/main.py", "--no-accel"), ("mnist_rnn/main.py", None)])
def test_mnist_programs_train_and_their_checkpoint_reloads(name, accel, workdir, monkeypatch, capsys):
    write_mnist("../data")
    argv = ["--epochs", "1", "--batch-size", "16", "--test-batch-size", "32", "--log-interval", "1",
            "--save-model"] + ([accel] if accel else [])
    g = run_program(name, argv, monkeypatch)
    out = capsys.readouterr().out
    losses = printed(r"Loss: ([0-9.]+)", out)
    assert len(losses) == 4 and all(math.isfinite(v) for v in losses)
    assert losses[-1] < losses[0]                       # four Adadelta steps on separable digits
    test_loss = printed(r"Test set: Average loss: ([0-9.]+)", out)[0]
    # the state_dict it saved reloads into a new Net whose test run prints the same result
    state = tt.load("mnist_cnn.pt" if name == "mnist/main.py" else "mnist_rnn.pt")
    model = g["Net"]()
    model.load_state_dict(state)
    for key, value in model.state_dict().items():
        assert tt.equal(value, state[key]), key
    loader = tt.utils.data.DataLoader(g["datasets"].MNIST("../data", train=False, transform=g["transforms"].Compose(
        [g["transforms"].ToTensor(), g["transforms"].Normalize((0.1307,), (0.3081,))])), batch_size=32)
    if name == "mnist/main.py":
        g["test"](model, tt.device("cpu"), loader)
    else:
        g["test"](type("Args", (), {"dry_run": False}), model, tt.device("cpu"), loader)
    assert printed(r"Test set: Average loss: ([0-9.]+)", capsys.readouterr().out) == [test_loss]
    if name == "mnist/main.py":
        assert "Accuracy: 32/32" in out                 # it has learned the bars


# --------------------------------------------------------------------------- regression
def test_regression_fits_the_polynomial(workdir, monkeypatch, capsys):
    tt.manual_seed(0)
    g = run_program("regression/main.py", [], monkeypatch)
    out = capsys.readouterr().out
    assert printed(r"Loss: ([0-9.]+) after", out)[0] < 1e-3
    w, b = g["fc"].weight.detach().view(-1), g["fc"].bias.detach()
    np.testing.assert_allclose(w.numpy(), g["W_target"].view(-1).numpy(), atol=0.1)
    np.testing.assert_allclose(b.numpy(), g["b_target"].numpy(), atol=0.1)


# --------------------------------------------------------------------------- vae, dcgan
def test_vae_trains_and_saves_its_images(workdir, monkeypatch, capsys):
    Image = pytest.importorskip("PIL.Image")
    write_mnist("../data")
    os.mkdir("results")
    run_program("vae/main.py", ["--epochs", "1", "--batch-size", "16", "--no-accel", "--log-interval", "1"],
                monkeypatch)
    out = capsys.readouterr().out
    losses = printed(r"\tLoss: ([0-9.]+)", out)
    assert len(losses) == 4 and losses[-1] < losses[0]
    # make_grid: 8 images of 28 to a row, 2 pixels of padding around each
    assert Image.open("results/reconstruction_1.png").size == (8 * 30 + 2, 2 * 30 + 2)
    assert Image.open("results/sample_1.png").size == (8 * 30 + 2, 8 * 30 + 2)


def test_dcgan_on_fake_data_one_step_and_checkpoints(workdir, monkeypatch, capsys):
    Image = pytest.importorskip("PIL.Image")
    g = run_program("dcgan/main.py", ["--dataset", "fake", "--batchSize", "4", "--ngf", "4", "--ndf", "4", "--nz", "8",
                                 "--workers", "0", "--dry-run", "--outf", "out", "--manualSeed", "1"], monkeypatch)
    out = capsys.readouterr().out
    loss_d, loss_g = (float(v) for v in re.search(r"Loss_D: ([0-9.]+) Loss_G: ([0-9.]+)", out).groups())
    assert 0 < loss_d < 10 and 0 < loss_g < 10
    for net, file in ((g["netG"], "out/netG_epoch_0.pth"), (g["netD"], "out/netD_epoch_0.pth")):
        state = tt.load(file)
        assert state.keys() == net.state_dict().keys()
        for key, value in net.state_dict().items():
            assert tt.equal(value, state[key]), key
    fake = g["netG"](g["fixed_noise"])
    assert fake.shape == (4, 3, 64, 64) and float(fake.abs().max()) <= 1      # tanh images
    assert g["netD"](fake).shape == (4,)
    assert Image.open("out/fake_samples_epoch_000.png").size == (4 * 66 + 2, 66 + 2)


# --------------------------------------------------------------------------- sequences
def test_time_sequence_prediction_stops_where_torch_stops(workdir, monkeypatch):
    """generate_sine_wave.py saves a NumPy array with torch.save; train.py's torch.load refuses it
    under weights_only (torch's default since 2.6), in tritensor as in torch."""
    for name, module in _fakes.matplotlib().items():
        monkeypatch.setitem(sys.modules, name, module)
    run_program("time_sequence_prediction/generate_sine_wave.py", [], monkeypatch)
    assert os.path.exists("traindata.pt")
    with pytest.raises(Exception, match="Weights only load failed"):
        run_program("time_sequence_prediction/train.py", ["--steps", "1"], monkeypatch)


@pytest.mark.parametrize("model, lr", [("LSTM", "0.01"), ("Transformer", "0.003")])
def test_word_language_model_learns_the_corpus(model, lr, workdir, monkeypatch, capsys):
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far"]
    os.makedirs("data/wikitext-2")
    for split, lines in (("train", 60), ("valid", 12), ("test", 12)):
        with open(f"data/wikitext-2/{split}.txt", "w") as f:
            for i in range(lines):
                f.write(" ".join(words[(i + j) % 10] for j in range(8)) + "\n")
    run_program("word_language_model/main.py",
                ["--model", model, "--epochs", "3", "--emsize", "16", "--nhid", "16", "--bptt", "8", "--batch_size",
                 "4", "--dropout", "0", "--use-optimizer", "--lr", lr, "--save", "model.pt"], monkeypatch)
    out = capsys.readouterr().out
    valid = printed(r"valid loss +([0-9.]+)", out)
    test = printed(r"test loss +([0-9.]+)", out)
    assert len(valid) == 3 and valid[-1] < valid[0]
    assert test[0] < math.log(11)                        # better than uniform over the 11 words
    # the test split is the valid split's text: the reloaded best model gives the best valid loss
    assert test[0] == min(valid)


# --------------------------------------------------------------------------- images
def test_super_resolution_trains_and_its_pickled_model_reloads(workdir, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "data", _fakes.super_resolution_data())   # BSDS300 is downloaded there
    g = run_program("super_resolution/main.py", ["--upscale_factor", "3", "--batchSize", "4", "--testBatchSize", "4",
                                                 "--nEpochs", "3", "--threads", "0"], monkeypatch)
    out = capsys.readouterr().out
    epoch_loss = printed(r"Epoch \d Complete: Avg. Loss: ([0-9.]+)", out)
    assert epoch_loss[-1] < epoch_loss[0]
    model = tt.load("model_epoch_3.pth", weights_only=False)
    x = g["testing_data_loader"].dataset.tensors[0]
    y = model(x)
    assert y.shape == (4, 1, 24, 24)                    # PixelShuffle(3) of 8 x 8 inputs
    assert tt.equal(y, g["model"](x))


def test_siamese_network_one_step(workdir, monkeypatch):
    write_mnist("../data", n_train=20, n_test=10)
    g = run_program("siamese_network/main.py", [], monkeypatch, main=False)
    tt.manual_seed(0)
    dataset = g["APP_MATCHER"]("../data", train=True)
    pairs = [dataset[i] for i in range(4)]
    assert [float(t) for _, _, t in pairs] == [1.0, 0.0, 1.0, 0.0]
    assert pairs[0][0].shape == (1, 28, 28) and pairs[0][0].dtype == tt.float32
    model = g["SiameseNetwork"]()
    optimizer = tt.optim.Adadelta(model.parameters(), lr=1.0)
    images_1, images_2, targets = (tt.stack(v) for v in zip(*pairs))
    outputs = model(images_1, images_2).squeeze()
    loss = tt.nn.BCELoss()(outputs, targets)
    loss.backward()
    optimizer.step()
    assert outputs.shape == (4,) and bool(((outputs > 0) & (outputs < 1)).all())
    assert all(p.grad is not None for p in model.parameters())


# --------------------------------------------------------------------------- graphs
@pytest.mark.parametrize("name, argv", [
    ("gcn/main.py", ["--epochs", "30", "--hidden-dim", "16", "--dropout-p", "0.1"]),
    ("gat/main.py", ["--epochs", "5", "--hidden-dim", "8", "--num-heads", "2", "--lr", "0.05", "--dropout-p", "0.1"]),
])
def test_graph_networks_classify_the_synthetic_cora(name, argv, workdir, monkeypatch, capsys):
    requests = _fakes.requests_serving(_fakes.cora_tarball(nodes=1700, features=30, edges=3000))
    monkeypatch.setitem(sys.modules, "requests", requests)
    run_program(name, argv + ["--no-accel", "--val-every", "1"], monkeypatch)
    out = capsys.readouterr().out
    assert requests.urls == ["https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz"]
    train_loss = printed(r"loss_train: ([0-9.]+)", out)
    assert train_loss[-1] < train_loss[0]
    accuracy = printed(r"Test set results: loss [0-9.]+ accuracy ([0-9.]+)", out)[0]
    assert accuracy > 0.6                               # three classes: chance is 1/3


# --------------------------------------------------------------------------- forward-forward
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_mnist_forward_forward_lowers_each_layer_loss(device, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_mnist("data")
    epochs, size = (20, "64") if device == "cpu" else (4, "16")
    accel = ["--no_accel"] if device == "cpu" else []   # the program takes the accelerator when there is one
    g = run_program("mnist_forward_forward/main.py", ["--epochs", str(epochs), "--train_size", size, "--test_size", size,
                                                 "--log-interval", str(epochs - 1)] + accel, monkeypatch)
    assert g["device"].type == device and g["net"].layers[0].weight.device.type == device
    out = capsys.readouterr().out
    losses = printed(r"Loss:  ([0-9.]+)", out)
    assert len(losses) == 4                             # two layers, logged at their first and last epochs
    assert losses[1] < losses[0] and losses[3] < losses[2]
    assert 0 <= printed(r"test error: ([0-9.]+)", out)[0] <= 1


# --------------------------------------------------------------------------- reinforcement learning
@pytest.mark.parametrize("name", ["reinforcement_learning/actor_critic.py", "reinforcement_learning/reinforce.py"])
def test_policy_gradient_step_lowers_the_surrogate_loss(name, monkeypatch):
    gym = _fakes.gymnasium()
    monkeypatch.setitem(sys.modules, "gymnasium", gym)
    g = run_program(name, [], monkeypatch, main=False)
    env, policy = gym.envs[0], g["policy" if name.endswith("reinforce.py") else "model"]
    state, _ = env.reset()
    env.states[:] = [state]
    actions = []
    for t in range(200):
        action = g["select_action"](state)
        actions.append(action)
        state, reward, terminated, truncated, _ = env.step(action)
        policy.rewards.append(reward)
        if terminated or truncated:
            break
    states = tt.from_numpy(np.stack(env.states[:len(actions)]))
    # the program's returns, normalised; the surrogate sum(-log pi(a|s) * (return)) of its loss
    R, returns = 0, []
    for r in policy.rewards[::-1]:
        R = r + g["args"].gamma * R
        returns.insert(0, R)
    returns = tt.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + g["eps"])

    def surrogate():
        with tt.no_grad():
            probs = policy(states)
            probs = probs[0] if isinstance(probs, tuple) else probs
            return float(-(tt.log(probs[tt.arange(len(actions)), tt.tensor(actions)]) * returns).sum())

    before = surrogate()
    g["finish_episode"]()
    saved = policy.saved_log_probs if name.endswith("reinforce.py") else policy.saved_actions
    assert policy.rewards == [] and saved == []             # the episode's buffers are emptied
    assert surrogate() < before


@pytest.mark.parametrize("name", ["reinforcement_learning/actor_critic.py", "reinforcement_learning/reinforce.py"])
def test_policy_gradient_main_loop_runs(name, monkeypatch, capsys):
    gym = _fakes.gymnasium()
    monkeypatch.setitem(sys.modules, "gymnasium", gym)
    g = run_program(name, ["--log-interval", "1"], monkeypatch, main=False)
    # solved as soon as the running reward passes 12 (the program starts it at 10): a few episodes
    gym.envs[0].spec.reward_threshold = 12.0
    g["main"]()
    out = capsys.readouterr().out
    assert "Solved! Running reward is now" in out
    assert printed(r"Average reward: ([0-9.]+)", out)


# --------------------------------------------------------------------------- language_translation
@pytest.fixture
def root_logger_handlers():
    """The program adds a console handler to the root logger (and basicConfig a file one): removed after."""
    import logging
    root = logging.getLogger()
    before = list(root.handlers)
    yield
    for handler in root.handlers[:]:
        if handler not in before:
            root.removeHandler(handler)
            handler.close()


def test_language_translation_trains_saves_and_translates(workdir, monkeypatch, capsys, caplog, root_logger_handlers):
    model_args = ["--batch", "16", "--attn_heads", "2", "--enc_layers", "1", "--dec_layers", "1", "--embed_size", "16",
                  "--dim_feedforward", "32", "--dropout", "0"]
    caplog.set_level("INFO")
    tt.manual_seed(0)
    for name, module in _fakes.torchtext().items():        # Multi30k, spacy's tokenizers: not here
        monkeypatch.setitem(sys.modules, name, module)
    run_program("language_translation/main.py", ["-e", "3", "--lr", "0.003", "--logging_dir", "run/"] + model_args,
                monkeypatch)
    train_loss = printed(r"Train loss: ([0-9.]+)", caplog.text)
    val_loss = printed(r"Val loss: ([0-9.]+)", caplog.text)
    assert len(train_loss) == 3 and train_loss[-1] < train_loss[0] and val_loss[-1] < val_loss[0]
    assert os.path.exists("run/best.pt") and os.path.exists("run/last.pt")
    # --inference reloads best.pt and greedy-decodes each line read until input() ends
    lines = iter(["ein mann läuft im park"])
    monkeypatch.setattr("builtins.input", lambda: next(lines))
    capsys.readouterr()
    with pytest.raises(StopIteration):
        run_program("language_translation/main.py", ["--inference", "--model_path", "run/best.pt"] + model_args,
                    monkeypatch)
    out = capsys.readouterr().out
    assert out.startswith("> ") and out.count("\n") == 1      # one translation printed, then the next prompt
    translation = out.replace(">", "").split()
    assert len(translation) <= 7 + 5 - 1               # max_len: the source's 7 tokens + 5, less <bos>
    assert set(translation) <= set(_fakes.TGT_WORDS) | {"<unk>", "<pad>", "<eos>"}


# --------------------------------------------------------------------------- fast_neural_style
def test_fast_neural_style_trains_and_stylizes(workdir, monkeypatch, capsys):
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(0)
    os.makedirs("ds/images")
    for i in range(2):
        Image.fromarray(rng.integers(0, 256, (40, 48, 3), dtype=np.uint8)).save(f"ds/images/{i}.png")
    Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)).save("style.png")
    Image.fromarray(rng.integers(0, 256, (20, 28, 3), dtype=np.uint8)).save("content.png")
    weights, vgg16 = _fakes.vgg16_without_downloads(tt.vision.models)      # the loss network: random here
    monkeypatch.setattr(tt.vision.models, "VGG16_Weights", weights, raising=False)
    monkeypatch.setattr(tt.vision.models, "vgg16", vgg16)
    run_program("fast_neural_style/neural_style/neural_style.py",
                ["train", "--dataset", "ds", "--style-image", "style.png", "--save-model-dir", "out", "--epochs",
                 "2", "--image-size", "32", "--batch-size", "2", "--log-interval", "1"], monkeypatch)
    out = capsys.readouterr().out
    total = printed(r"total: ([0-9.]+)", out)
    assert len(total) == 2 and total[1] < total[0]      # one Adam step on the content + style loss
    (model_file,) = os.listdir("out")
    run_program("fast_neural_style/neural_style/neural_style.py", ["eval", "--content-image", "content.png", "--model",
                                                      os.path.join("out", model_file), "--output-image", "styled.png"],
                monkeypatch)
    with Image.open("styled.png") as styled:
        assert styled.size == (28, 20) and styled.mode == "RGB"


# --------------------------------------------------------------------------- ddp tutorial, one GPU
def test_ddp_tutorial_single_gpu_trains_on_cuda_0(workdir, monkeypatch, capsys):
    g = run_program("distributed/ddp-tutorial-series/single_gpu.py", ["2", "1", "--batch_size", "512"], monkeypatch, main=False)
    dataset, model, optimizer = g["load_train_objs"]()
    initial = model.weight.detach().clone()
    trainer = g["Trainer"](model, g["prepare_dataloader"](dataset, 512), optimizer, 0, 1)   # device 0: cuda:0
    trainer.train(2)
    assert model.weight.device == tt.device("cuda", 0)
    out = capsys.readouterr().out
    assert out.count("| Batchsize: 512 | Steps: 4") == 2 and out.count("Training checkpoint saved at checkpoint.pt") == 2
    state = tt.load("checkpoint.pt")
    assert state["weight"].device == tt.device("cuda", 0)
    assert tt.equal(state["weight"], model.weight.detach()) and tt.equal(state["bias"], model.bias.detach())
    # the tutorial's loss is cross_entropy over one class with probability targets: log_softmax of
    # one logit is 0, so the loss and every gradient are 0 and SGD leaves the weights as they were
    source, targets = next(iter(trainer.train_data))
    assert float(tt.nn.functional.cross_entropy(model(source.to(0)), targets.to(0))) == 0.0
    assert tt.equal(model.weight.detach().cpu(), initial.cpu())


# --------------------------------------------------------------------------- does not run
def test_mnist_hogwild_stops_at_torch_multiprocessing(workdir, monkeypatch):
    # Hogwild trains one model from several processes through shared-memory tensors, which
    # tritensor does not have: the program stops at its import with the reason, not later
    with pytest.raises(NotImplementedError, match=r"^tritensor.multiprocessing is not implemented: tensors shared "
                                                  r"between processes"):
        run_program("mnist_hogwild/main.py", ["--epochs", "1"], monkeypatch)
    assert "tritensor.multiprocessing" not in sys.modules
