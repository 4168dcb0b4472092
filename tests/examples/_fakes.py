"""Stand-ins for what the example programs fetch from outside (no network, no gym, no torchtext here).

The test installs them in ``sys.modules`` under the real names, so the programs run with their own
``import requests`` / ``import gymnasium as gym`` lines unchanged:
- ``requests_serving(payload)``: a ``requests`` whose ``get(url, stream=True)`` returns the given
  bytes as the response's ``raw`` stream (the gcn/gat programs read the Cora tarball from it);
- ``gymnasium``: ``make("CartPole-v1")``, the classic cart-pole (Barto, Sutton and Anderson 1983)
  with gymnasium's constants, Euler integration, termination bounds, 500-step truncation and
  ``spec.reward_threshold`` 475; it records the states it returned (``env.states``);
- ``super_resolution_data()``: the ``data`` module of super_resolution (BSDS300 is downloaded and
  read with Pillow there): smooth synthetic grayscale images, input = target shrunk by the factor;
- ``vgg16_without_downloads(models)``: ``VGG16_Weights.IMAGENET1K_V1`` and a ``vgg16`` that builds
  the network with random weights (tritensor.vision downloads none: fast_neural_style's loss
  network is then random).
"""
import io
import math
import tarfile
import types

import numpy as np


def requests_serving(payload):
    class _Response:
        def __init__(self):
            self.raw = io.BytesIO(payload)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    module = types.ModuleType("requests")
    module.urls = []

    def get(url, stream=False, **kwargs):
        module.urls.append(url)
        return _Response()

    module.get = get
    return module


def cora_tarball(nodes, features, edges, classes=3, seed=0):
    """A ``cora.tgz`` of the Cora layout (``cora/cora.content``: id, 0/1 features, class name;
    ``cora/cora.cites``: cited id, citing id), where a node's class decides which block of
    features it tends to have, so the classes can be learned."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(np.arange(1000, 1000 + 10 * nodes))[:nodes]
    labels = rng.integers(0, classes, nodes)
    block = features // classes
    content = []
    for node, label in zip(ids, labels):
        x = (rng.random(features) < 0.05).astype(int)
        x[label * block:(label + 1) * block] |= (rng.random(block) < 0.5)
        content.append("\t".join([str(node), *map(str, x), f"class_{label}"]))
    # edges mostly within a class, as citations are
    a = rng.integers(0, nodes, edges)
    same = np.array([rng.choice(np.flatnonzero(labels == labels[i])) for i in a])
    b = np.where(rng.random(edges) < 0.8, same, rng.integers(0, nodes, edges))
    cites = [f"{ids[i]}\t{ids[j]}" for i, j in zip(a, b)]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, lines in (("cora/cora.content", content), ("cora/cora.cites", cites)):
            data = ("\n".join(lines) + "\n").encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


class CartPole:
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_threshold_radians = 12 * 2 * math.pi / 360
    x_threshold = 2.4
    max_episode_steps = 500

    def __init__(self, render_mode=None):
        self.render_mode = render_mode
        self.spec = types.SimpleNamespace(id="CartPole-v1", reward_threshold=475.0,
                                          max_episode_steps=self.max_episode_steps)
        self.np_random = np.random.default_rng()
        self.state = None
        self.states = []

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.state = self.np_random.uniform(-0.05, 0.05, 4)
        self.steps = 0
        return self._observe(), {}

    def _observe(self):
        obs = np.array(self.state, dtype=np.float32)
        self.states.append(obs)
        return obs

    def step(self, action):
        if action not in (0, 1):
            raise ValueError(f"{action!r} ({type(action)}) invalid")
        x, x_dot, theta, theta_dot = self.state
        total_mass = self.masspole + self.masscart
        polemass_length = self.masspole * self.length
        force = self.force_mag if action == 1 else -self.force_mag
        costheta, sintheta = math.cos(theta), math.sin(theta)
        temp = (force + polemass_length * theta_dot ** 2 * sintheta) / total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta ** 2 / total_mass))
        xacc = temp - polemass_length * thetaacc * costheta / total_mass
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        self.state = (x, x_dot, theta, theta_dot)
        self.steps += 1
        terminated = bool(abs(x) > self.x_threshold or abs(theta) > self.theta_threshold_radians)
        truncated = self.steps >= self.max_episode_steps
        return self._observe(), 1.0, terminated, truncated, {}

    def render(self):
        return None


def gymnasium():
    module = types.ModuleType("gymnasium")
    module.envs = []

    def make(name, render_mode=None, **kwargs):
        if name != "CartPole-v1":
            raise NotImplementedError(f"the test's gymnasium stand-in has CartPole-v1 only, not {name}")
        env = CartPole(render_mode)
        module.envs.append(env)
        return env

    module.make = make
    return module


def super_resolution_data(crop_size=24):
    import tritensor as tt
    import tritensor.nn.functional as F

    def pairs(count, upscale_factor, seed):
        size = crop_size - crop_size % upscale_factor
        g = tt.Generator().manual_seed(seed)
        freq = tt.rand(count, 2, generator=g) * 3 + 1
        phase = tt.rand(count, 1, 1, generator=g) * 2 * math.pi
        y = tt.linspace(0, 1, size).view(1, size, 1)
        x = tt.linspace(0, 1, size).view(1, 1, size)
        target = 0.5 + 0.25 * (tt.sin(freq[:, :1, None] * 2 * math.pi * y + phase)
                               + tt.cos(freq[:, 1:, None] * 2 * math.pi * x))
        target = target.unsqueeze(1)                       # (count, 1, size, size), in [0, 1]
        return tt.utils.data.TensorDataset(F.avg_pool2d(target, upscale_factor), target)

    module = types.ModuleType("data")
    module.get_training_set = lambda upscale_factor: pairs(8, upscale_factor, seed=0)
    module.get_test_set = lambda upscale_factor: pairs(4, upscale_factor, seed=1)
    return module


def vgg16_without_downloads(models):
    """(VGG16_Weights, vgg16) to monkeypatch into ``models`` (tritensor.vision.models)."""
    weights = types.SimpleNamespace(IMAGENET1K_V1="IMAGENET1K_V1")
    real = models.vgg16

    def vgg16(weights=None, **kwargs):
        return real(weights=None, **kwargs)
    return weights, vgg16


# language_translation reads Multi30k through torchtext and tokenizes it with spacy: a word-for-word
# "German" of a small English vocabulary stands in (a learnable translation), split by spaces.
SRC_WORDS = ["ein", "mann", "frau", "hund", "läuft", "sitzt", "im", "park", "auf", "der", "straße", "kind"]
TGT_WORDS = ["a", "man", "woman", "dog", "runs", "sits", "in-the", "park", "on", "the", "street", "child"]


def torchtext(pairs=96, seed=0):
    """``torchtext`` with ``data.utils.get_tokenizer``, ``vocab.build_vocab_from_iterator`` and
    ``datasets.Multi30k`` (re-iterable (src, tgt) line pairs) / ``datasets.multi30k.URL``."""
    rng = np.random.default_rng(seed)

    def corpus(count):
        lines = []
        for _ in range(count):
            words = rng.integers(0, len(SRC_WORDS), size=int(rng.integers(3, 7)))
            lines.append((" ".join(SRC_WORDS[w] for w in words) + "\n", " ".join(TGT_WORDS[w] for w in words) + "\n"))
        return lines

    splits = {"train": corpus(pairs), "valid": corpus(pairs // 4)}

    class Vocab:
        def __init__(self, tokens):
            self.itos, self.stoi, self.default = list(tokens), {t: i for i, t in enumerate(tokens)}, None

        def __len__(self):
            return len(self.itos)

        def __call__(self, tokens):
            return [self.stoi.get(t, self.default) for t in tokens]

        def set_default_index(self, index):
            self.default = index

        def lookup_tokens(self, indices):
            return [self.itos[i] for i in indices]

    def build_vocab_from_iterator(iterator, min_freq=1, specials=(), special_first=True):
        counts = {}
        for tokens in iterator:
            for t in tokens:
                counts[t] = counts.get(t, 0) + 1
        words = sorted((t for t, c in counts.items() if c >= min_freq and t not in specials),
                       key=lambda t: (-counts[t], t))
        return Vocab(list(specials) + words if special_first else words + list(specials))

    module = types.ModuleType("torchtext")
    module.data = types.ModuleType("torchtext.data")
    module.data.utils = types.ModuleType("torchtext.data.utils")
    module.data.utils.get_tokenizer = lambda kind, language=None: str.split
    module.vocab = types.ModuleType("torchtext.vocab")
    module.vocab.build_vocab_from_iterator = build_vocab_from_iterator
    module.datasets = types.ModuleType("torchtext.datasets")
    module.datasets.multi30k = types.SimpleNamespace(URL={})
    module.datasets.Multi30k = lambda split, language_pair: list(splits[split])
    return {"torchtext": module, "torchtext.data": module.data, "torchtext.data.utils": module.data.utils,
            "torchtext.vocab": module.vocab, "torchtext.datasets": module.datasets}


def matplotlib():
    """``matplotlib`` and ``matplotlib.pyplot`` whose functions draw nothing (plots are not checked)."""
    class _Quiet(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return lambda *args, **kwargs: None

    module, pyplot = _Quiet("matplotlib"), _Quiet("matplotlib.pyplot")
    module.pyplot = pyplot
    return {"matplotlib": module, "matplotlib.pyplot": pyplot}
