"""tt.nn.Module, Parameter and the containers: registration, traversal, modes, device moves,
state_dict, hooks and repr, against torch's documented behaviour (reprs and error texts copied
from torch 2.13, with tritensor's names where torch names its own classes)."""
import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.scale = nn.Parameter(tt.ones(1))
        self.register_buffer("running", tt.zeros(4))
        self.register_buffer("scratch", tt.zeros(2), persistent=False)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x) * self.scale))


# --------------------------------------------------------------------------- Parameter
def test_parameter_shares_storage_and_is_a_tensor():
    data = tt.tensor([1.0, 2.0, 3.0])
    p = nn.Parameter(data)
    assert isinstance(p, tt.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and not data.requires_grad
    with tt.no_grad():
        data[0] = 10.0
    assert p[0].item() == 10.0                      # same memory
    out = p * 2
    assert type(out) is tt.Tensor and type(p.detach()) is tt.Tensor and type(p.data) is tt.Tensor
    assert repr(p) == "Parameter containing:\ntensor([10.,  2.,  3.], requires_grad=True)"
    assert not nn.Parameter(tt.ones(2), requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        nn.Parameter(tt.tensor([1, 2]))


def test_parameter_data_swap_keeps_object():
    p = nn.Parameter(tt.ones(2, 3))
    pid = id(p)
    p.data = tt.zeros(4, dtype=tt.float64)
    assert id(p) == pid and p.shape == (4,) and p.dtype is tt.float64 and p.requires_grad


def test_parameter_deepcopy_and_pickle():
    p = nn.Parameter(tt.tensor([1.0, 2.0]), requires_grad=False)
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is nn.Parameter and not q.requires_grad
        np.testing.assert_array_equal(to_numpy(q), [1.0, 2.0])
        assert q.data_ptr() != p.data_ptr()


def test_buffer_marker():
    m = nn.Module()
    m.b = nn.Buffer(tt.ones(2), persistent=False)
    m.c = nn.Buffer(tt.zeros(1))
    assert isinstance(m.b, nn.Buffer) and not isinstance(tt.ones(1), nn.Buffer)
    assert [n for n, _ in m.named_buffers()] == ["b", "c"]
    assert list(m.state_dict().keys()) == ["c"]


# --------------------------------------------------------------------------- registration
def test_registration_order_and_traversal():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.named_parameters(prefix="net")][0] == "net.scale"
    assert [n for n, _ in net.named_buffers()] == ["running", "scratch"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert list(net.children())[1] is net.act and list(net.modules())[0] is net
    assert net.fc1.weight is net._modules["fc1"]._parameters["weight"]
    assert sum(p.numel() for p in net.parameters()) == 1 + 12 + 4 + 8 + 2


def test_shared_parameters_and_modules_not_duplicated():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in seq.named_parameters(remove_duplicate=False)] == \
        ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(list(seq.modules())) == 3
    assert [n for n, _ in seq.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    tied = nn.Module()
    tied.a = nn.Linear(2, 2)
    tied.b = nn.Linear(2, 2)
    tied.b.weight = tied.a.weight
    assert [n for n, _ in tied.named_parameters()] == ["a.weight", "a.bias", "b.bias"]


def test_reassignment_moves_between_kinds_and_delattr():
    m = nn.Module()
    m.x = nn.Parameter(tt.ones(1))
    with pytest.raises(TypeError, match="cannot assign 'tritensor.nn.modules.linear.Linear' as parameter 'x'"):
        m.x = nn.Linear(1, 1)
    m.x = None                              # None keeps the parameter slot
    assert "x" in m._parameters and m.x is None
    del m.x
    m.register_buffer("x", tt.ones(1))
    m.x = nn.Linear(1, 1)                   # a buffer name reused for a module
    assert "x" not in m._buffers and m._modules["x"] is m.x
    m.register_parameter("bias", None)
    assert m.bias is None and list(m.named_parameters()) == [("x.weight", m.x.weight), ("x.bias", m.x.bias)]
    m.register_buffer("buf", None)
    assert m.buf is None and "buf" not in m.state_dict()
    m.buf = tt.ones(2)                      # assigning a tensor to a buffer name stays a buffer
    assert m._buffers["buf"] is m.buf
    del m.buf
    del m.x
    assert "buf" not in m._buffers and "x" not in m._modules
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'x'"):
        m.x
    m.add_module("sub", None)
    m.register_module("other", nn.Tanh())
    assert [n for n, _ in m.named_children()] == ["other"]
    assert "other" in dir(m) and "bias" in dir(m)


def test_setattr_and_register_errors():
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(tt.ones(1))
    with pytest.raises(AttributeError, match=r"^cannot assign parameters before Module.__init__\(\) call$"):
        Early()
    lin = nn.Linear(3, 4)
    with pytest.raises(TypeError) as e:
        lin.weight = 3
    assert str(e.value) == "cannot assign 'int' as parameter 'weight' (tritensor.nn.Parameter or None expected)"
    with pytest.raises(TypeError) as e:
        lin.weight = tt.ones(4, 3)
    assert str(e.value) == ("cannot assign 'torch.FloatTensor' as parameter 'weight' (tritensor.nn.Parameter "
                            "or None expected)")
    with pytest.raises(KeyError) as e:
        lin.register_buffer("weight", tt.ones(1))
    assert str(e.value) == "\"attribute 'weight' already exists\""
    with pytest.raises(TypeError) as e:
        lin.register_parameter("x", tt.ones(1))
    assert str(e.value) == ("cannot assign 'torch.FloatTensor' object to parameter 'x' (tritensor.nn.Parameter "
                            "or None required)")
    with pytest.raises(KeyError) as e:
        lin.register_parameter("a.b", None)
    assert e.value.args[0] == 'parameter name can\'t contain "."'
    with pytest.raises(TypeError, match="is not a Module subclass"):
        lin.add_module("m", 3)
    with pytest.raises(AttributeError) as e:
        lin.nope
    assert str(e.value) == "'Linear' object has no attribute 'nope'"
    with pytest.raises(NotImplementedError) as e:
        nn.Module()(1)
    assert str(e.value) == 'Module [Module] is missing the required "forward" function'


def test_get_submodule_and_parameter():
    net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Tanh(), nn.Linear(2, 1)))
    assert net.get_submodule("") is net
    assert net.get_submodule("1.1") is net[1][1]
    assert net.get_parameter("1.1.bias") is net[1][1].bias
    with pytest.raises(AttributeError) as e:
        net.get_submodule("0.foo")
    assert str(e.value) == "Linear has no attribute `foo`"
    with pytest.raises(AttributeError) as e:
        net.get_submodule("0.weight")
    assert str(e.value) == "`weight` is not an nn.Module"
    with pytest.raises(AttributeError) as e:
        net.get_parameter("0.foo")
    assert str(e.value) == "Linear has no attribute `foo`"


# --------------------------------------------------------------------------- modes, grads
def test_train_eval_requires_grad_apply_zero_grad():
    net = Net()
    assert net.training and net.fc1.training
    assert net.eval() is net and not net.training and not net.fc2.training
    net.train()
    assert net.act.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train(1)
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Net"]
    net(tt.ones(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any().item() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_to_keeps_parameter_identity_and_moves_grad():
    net = Net()
    net.register_buffer("steps", tt.tensor([3]))
    net(tt.ones(1, 3)).sum().backward()
    params = list(net.parameters())
    grads = [to_numpy(p.grad) for p in params]
    assert net.to("cuda") is net
    assert [id(p) for p in net.parameters()] == [id(p) for p in params]
    for p, g in zip(net.parameters(), grads):
        assert p.device.type == "cuda" and p.grad.device.type == "cuda" and p.requires_grad and p.is_leaf
        np.testing.assert_array_equal(to_numpy(p.grad), g)
    assert net.running.device.type == "cuda" and net.steps.device.type == "cuda"
    net.double()
    assert net.fc1.weight.dtype is tt.float64 and net.fc1.weight.grad.dtype is tt.float64
    assert net.steps.dtype is tt.int64                  # integer buffers keep their dtype
    net.to("cpu", tt.float16)
    assert net.fc1.weight.dtype is tt.float16 and net.fc1.weight.device.type == "cpu"
    net.float().bfloat16()
    assert net.scale.dtype is tt.bfloat16
    net.half().cpu()
    assert net.fc2.bias.dtype is tt.float16
    net.to(tt.zeros(1, dtype=tt.float64))
    assert net.fc2.bias.dtype is tt.float64
    net.cuda().to(dtype=tt.float32, device="cpu")
    assert net.fc2.bias.dtype is tt.float32 and net.fc2.bias.device.type == "cpu"
    with pytest.raises(TypeError) as e:
        net.to(tt.int64)
    assert str(e.value) == ("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            "dtype=tritensor.int64")


# --------------------------------------------------------------------------- state_dict
def test_state_dict_keys_buffers_and_metadata():
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd.keys()) == ["scale", "running", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert all(type(v) is tt.Tensor and not v.requires_grad for v in sd.values())
    assert sd["fc1.weight"].data_ptr() == net.fc1.weight.data_ptr()
    assert dict(sd._metadata) == {"": {"version": 1}, "fc1": {"version": 1}, "act": {"version": 1},
                                  "fc2": {"version": 1}}
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight
    dest = OrderedDict()
    assert list(net.fc1.state_dict(destination=dest, prefix="x.").keys()) == ["x.weight", "x.bias"]


def test_load_state_dict_copies_in_place():
    a, b = Net(), Net()
    w = b.fc1.weight
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.fc1.weight is w and w.requires_grad
    np.testing.assert_array_equal(to_numpy(w), to_numpy(a.fc1.weight))
    assert w.data_ptr() != a.fc1.weight.data_ptr()
    c = Net()
    c.load_state_dict(a.state_dict(), assign=True)
    assert type(c.fc1.weight) is nn.Parameter and c.fc1.weight.data_ptr() == a.fc1.weight.data_ptr()


def test_load_state_dict_errors():
    lin = nn.Linear(3, 4)
    with pytest.raises(RuntimeError) as e:
        lin.load_state_dict({"weight": tt.zeros(4, 3)})
    assert str(e.value) == 'Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "bias". '
    with pytest.raises(RuntimeError) as e:
        lin.load_state_dict({"weight": tt.zeros(4, 3), "bias": tt.zeros(4), "extra": tt.zeros(1)})
    assert str(e.value) == ('Error(s) in loading state_dict for Linear:\n\tUnexpected key(s) in state_dict: '
                            '"extra". ')
    with pytest.raises(RuntimeError) as e:
        lin.load_state_dict({"weight": tt.zeros(3, 4), "bias": tt.zeros(4)})
    assert str(e.value) == ("Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a "
                            "param with shape tritensor.Size([3, 4]) from checkpoint, the shape in current model "
                            "is tritensor.Size([4, 3]).")
    seq = nn.Sequential(nn.Linear(2, 2))
    with pytest.raises(RuntimeError) as e:
        seq.load_state_dict({"0.weight": tt.zeros(2, 2), "1.weight": tt.zeros(1)})
    assert str(e.value) == ('Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: '
                            '"0.bias". \n\tUnexpected key(s) in state_dict: "1.weight". ')
    before = to_numpy(lin.bias)
    result = lin.load_state_dict({"weight": tt.ones(4, 3), "junk": tt.ones(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["junk"]
    assert repr(result) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['junk'])"
    np.testing.assert_array_equal(to_numpy(lin.weight), np.ones((4, 3)))
    np.testing.assert_array_equal(to_numpy(lin.bias), before)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        lin.load_state_dict([1])


def test_load_state_dict_across_devices_and_dtypes():
    src = nn.Linear(2, 3)
    dst = nn.Linear(2, 3).to("cuda").double()
    dst.load_state_dict(src.state_dict())
    assert dst.weight.device.type == "cuda" and dst.weight.dtype is tt.float64
    np.testing.assert_allclose(to_numpy(dst.weight), to_numpy(src.weight).astype(np.float64))


def test_module_pickle_and_deepcopy():
    net = Net()
    for clone in (pickle.loads(pickle.dumps(net)), copy.deepcopy(net)):
        assert type(clone.fc1.weight) is nn.Parameter
        assert [n for n, _ in clone.named_parameters()] == [n for n, _ in net.named_parameters()]
        np.testing.assert_array_equal(to_numpy(clone.fc2.weight), to_numpy(net.fc2.weight))
        assert "scratch" in clone._non_persistent_buffers_set


# --------------------------------------------------------------------------- repr
def test_repr_nested_as_torch():
    m = nn.Sequential(OrderedDict(fc=nn.Linear(3, 4), act=nn.ReLU(inplace=True),
                                  blk=nn.Sequential(nn.Linear(4, 4, bias=False), nn.Dropout(0.2)),
                                  ln=nn.LayerNorm(8)))
    assert repr(m) == (
        "Sequential(\n"
        "  (fc): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (act): ReLU(inplace=True)\n"
        "  (blk): Sequential(\n"
        "    (0): Linear(in_features=4, out_features=4, bias=False)\n"
        "    (1): Dropout(p=0.2, inplace=False)\n"
        "  )\n"
        "  (ln): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)\n"
        ")")
    assert repr(nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])) == (
        "ModuleList(\n"
        "  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
        "  (3): ReLU()\n"
        ")")
    assert repr(nn.ModuleDict({"a": nn.Tanh(), "b": nn.GELU(approximate="tanh")})) == (
        "ModuleDict(\n  (a): Tanh()\n  (b): GELU(approximate='tanh')\n)")
    assert repr(nn.ModuleList()) == "ModuleList()" and repr(nn.Sequential()) == "Sequential()"

    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Identity()

        def extra_repr(self):
            return "k=1"
    assert repr(WithExtra()) == "WithExtra(\n  k=1\n  (inner): Identity()\n)"


# --------------------------------------------------------------------------- hooks
def test_forward_hooks_order_replace_and_remove():
    lin = nn.Linear(2, 2)
    calls = []

    def pre(m, args):
        calls.append("pre")
        return args[0] * 0            # a non-tuple result is wrapped into the args tuple

    def pre_first(m, args):
        calls.append("pre_first")

    def fwd(m, args, out):
        calls.append("fwd")
        return out + 100

    h_pre = lin.register_forward_pre_hook(pre)
    lin.register_forward_pre_hook(pre_first, prepend=True)
    h_fwd = lin.register_forward_hook(fwd)
    out = lin(tt.ones(1, 2))
    assert calls == ["pre_first", "pre", "fwd"]
    np.testing.assert_allclose(to_numpy(out), to_numpy(lin.bias)[None] + 100, rtol=1e-6)
    h_pre.remove()
    h_fwd.remove()
    h_fwd.remove()                     # removing twice is harmless
    calls.clear()
    x = tt.ones(1, 2)
    np.testing.assert_allclose(to_numpy(lin(x)), to_numpy(x) @ to_numpy(lin.weight).T + to_numpy(lin.bias),
                               rtol=1e-6)
    assert calls == ["pre_first"]


def test_forward_hooks_with_kwargs_and_always_call():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            if factor < 0:
                raise ValueError("negative")
            return x * factor

    m = Scale()

    def pre(mod, args, kwargs):
        return args, {"factor": kwargs.get("factor", 1.0) * 2}

    seen = []
    m.register_forward_pre_hook(pre, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(kwargs["factor"]), with_kwargs=True)
    always = m.register_forward_hook(lambda mod, args, out: seen.append("always"), always_call=True)
    assert to_numpy(m(tt.ones(1), factor=3.0)).tolist() == [6.0]
    assert seen == [6.0, "always"]
    seen.clear()
    with pytest.raises(ValueError, match="negative"):
        m(tt.ones(1), factor=-1.0)
    assert seen == ["always"]
    always.remove()
    bad = m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of \(new_args, "):
        m(tt.ones(1))
    bad.remove()
    with m.register_forward_hook(lambda mod, args, out: out * 0):
        assert to_numpy(m(tt.ones(1))).tolist() == [0.0]
    assert to_numpy(m(tt.ones(1))).tolist() == [2.0]


def test_full_backward_hooks_see_and_replace_gradients():
    lin = nn.Linear(3, 2)
    x_np = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]], dtype=np.float32)
    w_np = to_numpy(lin.weight)
    x = tt.tensor(x_np, requires_grad=True)
    seen = {}

    def pre_hook(m, grad_output):
        seen["pre"] = to_numpy(grad_output[0])
        return (grad_output[0] * 2,)          # doubles the gradient flowing into the layer

    def hook(m, grad_input, grad_output):
        assert m is lin and len(grad_input) == 1 and len(grad_output) == 1
        seen["gin"] = to_numpy(grad_input[0])
        seen["gout"] = to_numpy(grad_output[0])
        return (grad_input[0] + 1,)

    h1 = lin.register_full_backward_pre_hook(pre_hook)
    h2 = lin.register_full_backward_hook(hook)
    y = lin(x)
    up = np.array([[1.0, 2.0], [3.0, -1.0]], dtype=np.float32)
    (y * tt.tensor(up)).sum().backward()
    np.testing.assert_allclose(seen["pre"], up)
    np.testing.assert_allclose(seen["gout"], 2 * up)                 # after the pre-hook
    np.testing.assert_allclose(seen["gin"], 2 * up @ w_np, rtol=1e-6)
    np.testing.assert_allclose(to_numpy(x.grad), 2 * up @ w_np + 1, rtol=1e-6)
    np.testing.assert_allclose(to_numpy(lin.weight.grad), 2 * up.T @ x_np, rtol=1e-6)
    h1.remove()
    h2.remove()
    x.grad = None
    lin(x).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), np.ones((2, 2)) @ w_np, rtol=1e-6)


def test_full_backward_hook_tuple_io_and_inputs_without_grad():
    class Pair(nn.Module):
        def forward(self, a, k, b):
            return a * b, a + k

    m = Pair()
    got = []
    m.register_full_backward_hook(lambda mod, gin, gout: got.append((gin, gout)))
    a = tt.tensor([1.0, 2.0], requires_grad=True)
    b = tt.tensor([3.0, 4.0])
    p, q = m(a, 5.0, b)
    (p.sum() + 2 * q.sum()).backward()
    # torch 2.13's values: None for the non-tensor input, zeros for the input that needs no grad
    gin, gout = got[0]
    assert len(gin) == 3 and gin[1] is None
    np.testing.assert_allclose(to_numpy(gin[0]), [3.0 + 2.0, 4.0 + 2.0])
    np.testing.assert_allclose(to_numpy(gin[2]), [0.0, 0.0])
    np.testing.assert_allclose(to_numpy(gout[0]), [1.0, 1.0])
    np.testing.assert_allclose(to_numpy(gout[1]), [2.0, 2.0])
    got.clear()
    p, q = m(a, 5.0, b)
    p.sum().backward()                       # an unused output's grad_output is None
    gin, gout = got[0]
    assert gout[1] is None
    np.testing.assert_allclose(to_numpy(gin[0]), [3.0, 4.0])
    # no input requires grad: the hook fires from the outputs, grad_input all None (torch warns)
    lin = nn.Linear(2, 1)
    fired = []
    lin.register_full_backward_hook(lambda mod, gin, gout: fired.append(gin))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lin(tt.ones(1, 2)).sum().backward()
    assert fired == [(None,)] and any("Full backward hook is firing" in str(x.message) for x in w)


# --------------------------------------------------------------------------- containers
def test_sequential_api():
    l0, l1, l2 = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(l0, l1, l2)
    assert len(seq) == 3 and seq[0] is l0 and seq[-1] is l2 and list(seq) == [l0, l1, l2]
    sub = seq[1:]
    assert type(sub) is nn.Sequential and list(sub._modules.keys()) == ["1", "2"] and sub[0] is l1
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    x = tt.tensor([[1.0, 2.0]])
    np.testing.assert_allclose(to_numpy(seq(x)), to_numpy(l2(l1(l0(x)))), rtol=1e-6)
    t = nn.Tanh()
    seq[1] = t
    assert seq[1] is t
    seq.append(nn.Sigmoid()).insert(0, nn.Identity())
    assert [type(m).__name__ for m in seq] == ["Identity", "Linear", "Tanh", "Linear", "Sigmoid"]
    assert list(seq._modules.keys()) == ["0", "1", "2", "3", "4"]
    del seq[0]
    assert [type(m).__name__ for m in seq] == ["Linear", "Tanh", "Linear", "Sigmoid"]
    assert list(seq._modules.keys()) == ["0", "1", "2", "3"]
    assert seq.pop(-1).__class__ is nn.Sigmoid and len(seq) == 3
    seq.extend([nn.ReLU()])
    both = seq + nn.Sequential(nn.Tanh())
    assert len(both) == 5 and len(seq) == 4
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        seq + nn.ModuleList()
    assert len(seq * 2) == 8
    named = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
    assert list(named._modules.keys()) == ["a", "b"] and named.b is named[1]


def test_modulelist_and_moduledict_api():
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    ml.append(nn.Sigmoid())
    ml.extend([nn.Identity()])
    ml += [nn.GELU()]
    ml.insert(1, nn.SiLU())
    assert [type(m).__name__ for m in ml] == ["ReLU", "SiLU", "Tanh", "Sigmoid", "Identity", "GELU"]
    assert type(ml[1:3]) is nn.ModuleList and len(ml[1:3]) == 2 and isinstance(ml[-1], nn.GELU)
    del ml[0]
    assert list(ml._modules.keys()) == [str(i) for i in range(5)]
    assert isinstance(ml.pop(0), nn.SiLU) and len(ml) == 4
    ml[0] = nn.ReLU()
    assert isinstance(ml[0], nn.ReLU) and len(ml + nn.ModuleList([nn.Tanh()])) == 5
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        ml.extend(3)

    md = nn.ModuleDict({"act": nn.ReLU()})
    md.update([("lin", nn.Linear(1, 1))])
    md["out"] = nn.Sigmoid()
    assert list(md.keys()) == ["act", "lin", "out"] and "lin" in md and len(md) == 3
    assert [type(v).__name__ for v in md.values()] == ["ReLU", "Linear", "Sigmoid"]
    assert list(dict(md.items())) == ["act", "lin", "out"]
    assert isinstance(md.pop("act"), nn.ReLU) and "act" not in md
    assert [n for n, _ in md.named_parameters()] == ["lin.weight", "lin.bias"]
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        md.update([("x",)])


def test_parameterlist_and_parameterdict():
    pl = nn.ParameterList([tt.ones(2, 3), nn.Parameter(tt.zeros(1)), "x"])
    assert repr(pl) == ("ParameterList(\n"
                        "    (0): Parameter containing: [tritensor.float32 of size 2x3]\n"
                        "    (1): Parameter containing: [tritensor.float32 of size 1]\n"
                        "    (2): Object of type: str\n"
                        ")")
    assert type(pl[0]) is nn.Parameter and pl[-1] == "x" and len(pl[0:2]) == 2
    pl.append(tt.ones(1))
    pl += [tt.ones(2)]
    assert len(pl) == 5 and [n for n, _ in pl.named_parameters()] == ["0", "1", "3", "4"]
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable, but got Tensor"):
        pl.extend(tt.ones(2))
    pd = nn.ParameterDict({"b": tt.ones(2), "a": nn.Parameter(tt.zeros(3))})   # a dict: sorted keys
    assert list(pd.keys()) == ["a", "b"] and "a" in pd and type(pd["b"]) is nn.Parameter
    assert repr(pd) == ("ParameterDict(\n"
                        "    (a): Parameter containing: [torch.FloatTensor of size 3]\n"
                        "    (b): Parameter containing: [torch.FloatTensor of size 2]\n"
                        ")")
    assert pd.pop("a").shape == (3,) and len(pd) == 1
    merged = pd | nn.ParameterDict(OrderedDict(z=tt.ones(1), c=tt.ones(1)))
    assert list(merged.keys()) == ["b", "z", "c"]
    m = nn.Module()
    m.pl = pl
    m.pd = merged
    assert list(m.state_dict().keys()) == ["pl.0", "pl.1", "pl.3", "pl.4", "pd.b", "pd.z", "pd.c"]


def test_state_dict_hooks_and_set_submodule():
    lin = nn.Linear(2, 2)
    calls = []
    lin.register_state_dict_pre_hook(lambda m, prefix, keep_vars: calls.append(("pre", prefix)))
    h = lin.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.pop(prefix + "bias"))
    seq = nn.Sequential(lin)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        seq.state_dict()                     # pop() returns the tensor: torch refuses the value
    h.remove()
    lin.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.__setitem__(prefix + "extra", tt.ones(1)))
    assert list(seq.state_dict().keys()) == ["0.weight", "0.bias", "0.extra"]
    assert calls[-1] == ("pre", "0.")
    seen = []
    lin.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, meta, strict, missing, unexpected, errors: sd.pop(prefix + "extra", None))

    def post(m, keys):
        seen.append((list(keys.missing_keys), list(keys.unexpected_keys)))
        keys.missing_keys.clear()            # edits in place are kept
    seq.register_load_state_dict_post_hook(post)
    assert repr(seq.load_state_dict({"0.weight": tt.zeros(2, 2), "0.extra": tt.ones(1)})) == \
        "<All keys matched successfully>"
    assert seen == [(["0.bias"], [])]
    net = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
    net.set_submodule("1.0", nn.Tanh())
    assert isinstance(net[1][0], nn.Tanh)
    with pytest.raises(AttributeError, match="Sequential has no attribute `5`"):
        net.set_submodule("1.5", nn.Tanh(), strict=True)
    with pytest.raises(ValueError, match="Cannot set the submodule without a target name!"):
        net.set_submodule("", nn.Tanh())
