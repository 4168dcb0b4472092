"""Stand-ins for what the example programs fetch from outside (no network, no gym in CI).

The test installs them in ``sys.modules`` under the real names, so the programs run with their own
``import requests`` / ``import gymnasium as gym`` lines unchanged:
- ``requests_serving(payload)``: a ``requests`` whose ``get(url, stream=True)`` returns the given
  bytes as the response's ``raw`` stream (the gcn/gat programs read the Cora tarball from it);
- ``gymnasium``: ``make("CartPole-v1")``, the classic cart-pole (Barto, Sutton and Anderson 1983)
  with gymnasium's constants, Euler integration, termination bounds, 500-step truncation and
  ``spec.reward_threshold`` 475; it records the states it returned (``env.states``).
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
