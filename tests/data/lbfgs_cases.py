"""LBFGS cases of tests/test_optim_more.py on the Rosenbrock function (float64), runnable with
torch or tritensor: make_lbfgs_values.py records torch's trajectories into lbfgs_values.json."""

START = ([-1.2, 1.0, -0.5], [[1.1], [0.7]])       # two parameters: the flat vector has 5 entries
CASES = {
    "fixed_step": dict(options=dict(lr=0.1, max_iter=5, history_size=3), steps=6),
    "strong_wolfe": dict(options=dict(lr=1, max_iter=10, history_size=4, line_search_fn="strong_wolfe"), steps=3),
    "to_convergence": dict(options=dict(max_iter=200, line_search_fn="strong_wolfe", tolerance_grad=1e-9,
                                        tolerance_change=1e-12), steps=1),
    "max_eval": dict(options=dict(lr=0.5, max_iter=50, max_eval=7, history_size=2), steps=2),
}


def rosenbrock(lib, a, b):
    z = lib.cat([a, b.reshape(-1)])
    return (100 * (z[1:] - z[:-1] ** 2) ** 2 + (1 - z[:-1]) ** 2).sum()


def run(lib, key):
    """[(loss returned, flat parameters, func_evals, n_iter) after each step]."""
    case = CASES[key]
    a = lib.tensor(START[0], dtype=lib.float64, requires_grad=True)
    b = lib.tensor(START[1], dtype=lib.float64, requires_grad=True)
    opt = lib.optim.LBFGS([a, b], **case["options"])

    def closure():
        opt.zero_grad()
        loss = rosenbrock(lib, a, b)
        loss.backward()
        return loss

    out = []
    for _ in range(case["steps"]):
        loss = opt.step(closure)
        state = opt.state[a]
        out.append((float(loss.detach()), a.detach().tolist() + b.detach().reshape(-1).tolist(), state["func_evals"],
                    state["n_iter"]))
    return out
