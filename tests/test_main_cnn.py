"""`python -m tritensor --model cnn` (issue 22 item 6): a shortened run of the main job (one epoch,
through main() as the command line runs it), and its cross-check on the emulated GPU: the CNN's
forward and every parameter's gradient on cuda against the cpu device and against the network
written by hand in NumPy (im2col convolutions, batch norm's affine map, first-maximum pooling)."""
import numpy as np

import tritensor as tt
from tritensor import __main__ as job


def test_a_shortened_cnn_run_trains_saves_reloads_and_cross_checks(capsys):
    status = job.main(["--model", "cnn", "--device", "cpu", "--epochs", "1", "--batch-size", "64",
                       "--min-accuracy", "0.6"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "scikit-learn's 8x8 handwritten digits" in out or "SYNTHETIC" in out
    for layer in ("Conv2d(1, 32, kernel_size=(3, 3)", "BatchNorm2d(32", "ReLU()", "MaxPool2d(kernel_size=2",
                  "Linear(in_features=256, out_features=10"):
        assert layer in out
    assert "identical predictions" in out and "vs NumPy by hand: agree" in out


def test_the_mlp_stays_the_default():
    parser_default = job.build_model(tt, 16)
    assert type(parser_default).__name__ == "NeuralNetwork"
    assert type(job.build_model(tt, 16, "cnn")).__name__ == "ConvNet"


def test_cnn_cross_check_on_the_gpu_device(capsys):
    tt.manual_seed(3)
    model = job.build_model(tt, 0, "cnn", channels=(4, 8))     # narrow: the emulated device is slow
    rng = np.random.default_rng(3)
    for m in model.features:
        if isinstance(m, tt.nn.BatchNorm2d):      # running statistics away from (0, 1), as after training
            m.running_mean.copy_(tt.from_numpy(0.3 * rng.standard_normal(m.num_features).astype(np.float32)))
            m.running_var.copy_(tt.from_numpy(rng.uniform(0.5, 2.0, m.num_features).astype(np.float32)))
    model.eval()
    x = tt.from_numpy(rng.random((3, 8, 8)).astype(np.float32))
    y = tt.tensor([1, 7, 3])
    assert job.cross_check(tt, model, x, y, "cuda", job.numpy_reference_cnn), capsys.readouterr().out
    # the hand-written reference is itself checked: it disagrees with a changed network
    logits, loss, grads = job.numpy_reference_cnn(model, x.numpy(), y.numpy())
    assert logits.shape == (3, 10) and sorted(grads) == sorted(n for n, _ in model.named_parameters())
    with tt.no_grad():
        model.features[0].weight.mul_(1.01)
    assert not np.allclose(job.numpy_reference_cnn(model, x.numpy(), y.numpy())[0], logits)
