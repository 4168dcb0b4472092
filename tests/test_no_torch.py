"""tritensor must import and work, cpu and (emulated) cuda, autograd included, without torch."""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import tritensor as tt

    assert tt.cuda.is_available()
    for dev in ("cpu", "cuda"):
        x = tt.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.5]], device=dev, requires_grad=True)
        y = (x * 2 + 1).exp().sum() + x.t().sin().sum() + (x[:, ::2] ** 2).mean()
        y.backward()
        a = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.5]])
        expected = 2 * np.exp(2 * a + 1) + np.cos(a)
        expected[:, ::2] += 2 * a[:, ::2] / 4
        got = x.grad.cpu().numpy()
        assert np.allclose(got, expected, rtol=1e-5), (dev, got, expected)
        assert str(x.grad.device) == ("cpu" if dev == "cpu" else "cuda:0")
        r = tt.randn(5, device=dev)
        assert r.shape == (5,)
    z = tt.arange(6, device="cuda").view(2, 3).float().cpu()
    assert z.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    bad = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
    assert not bad, bad
    print("OK no torch")
""")


def test_runs_without_importing_torch():
    env = dict(os.environ)
    env["TRITENSOR_EMULATE_CUDA"] = "1"
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                          timeout=300, cwd=here)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK no torch" in proc.stdout
