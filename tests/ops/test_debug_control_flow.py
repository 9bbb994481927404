"""debug.callback inside cond, switch, while_loop and scan runs exactly as often as the
program's control flow says, eagerly and under jit, under grad/jvp/vmap: the counts are
JAX 0.4's (jax.debug.callback, recorded as literals), and an L-BFGS run counts the
evaluations optax's counts."""

import numpy as np
import pytest

import zerax as zx
import zerax.numpy as znp
import zerax.optim as optim
import zerax.optim.tree_utils as otu
from zerax import debug, lax


class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, *args):
        self.n += 1


def _cases(cb):
    """name -> (function of (x, p), JAX's counts for p=1 and p=-1)."""
    def closure_operand(x, p):  # the branch closes over x: not the jit's program's call
        return lax.cond(p > 0, lambda y: (debug.callback(cb, x), y + 1)[1],
                        lambda y: y - 1, 0.0)

    def no_operand(x, p):  # constants only: the branch's call, not a trace-time one
        return lax.cond(p > 0, lambda y: (debug.callback(cb), y + 1)[1],
                        lambda y: y - 1, x)

    def grad_in_branch(x, p):
        return lax.cond(p > 0,
                        lambda y: zx.grad(lambda z: (debug.callback(cb), z * y)[1])(y),
                        lambda y: y - 1, x)

    def both_branches(x, p):
        return lax.cond(p > 0, lambda y: (debug.callback(cb, y), y + 1)[1],
                        lambda y: (debug.callback(cb, -y), y - 1)[1], x)

    def switch(x, p):
        def branch(k):
            def f(y):
                if k == 2:
                    debug.callback(cb, y)
                return y * k
            return f
        return lax.switch(znp.where(p > 0, 2, 1), [branch(0), branch(1), branch(2)], x)

    def while_body(x, p):
        return lax.while_loop(lambda c: c[0] < 5,
                              lambda c: (debug.callback(cb, c[0]), (c[0] + 1, c[1] * p))[1],
                              (0, x))[1]

    def while_cond(x, p):
        return lax.while_loop(lambda c: (debug.callback(cb, c[0]), c[0] < 5)[1],
                              lambda c: (c[0] + 1, c[1] * p), (0, x))[1]

    def while_closure(x, p):
        return lax.while_loop(lambda c: c < 3, lambda c: (debug.callback(cb, x), c + 1)[1], 0)

    def scan_cond(x, p):
        def body(c, y):
            c = lax.cond(y * p > 3, lambda c: (debug.callback(cb, c), c + 1)[1],
                         lambda c: c, c)
            return c, c
        return lax.scan(body, x, znp.arange(7.0))[0]

    def scan_no_operand(x, p):
        return lax.scan(lambda c, _: ((debug.callback(cb), c + 1)[1], None), x, None,
                        length=4)[0]

    def jvp_while_int_operand(x, p):
        def body(c):
            debug.callback(cb, c[0])
            return c[0] + 1, c[1] * 2
        return zx.jvp(lambda x: lax.while_loop(lambda c: c[0] < 5, body, (0, x))[1],
                      (x,), (1.0,))[1]

    def grad_scan(x, p):
        return zx.grad(lambda x: lax.scan(
            lambda c, _: ((debug.callback(cb, c), c * p)[1], None), x, None, length=4)[0])(x)

    def grad_fori(x, p):
        return zx.grad(lambda x: lax.fori_loop(
            0, 4, lambda i, c: (debug.callback(cb, i), c * p)[1], x))(x)

    def grad_scan_cond(x, p):
        def body(c, y):
            return lax.cond(y > 3, lambda c: (debug.callback(cb, c), c * p)[1],
                            lambda c: c, c), None
        return zx.grad(lambda x: lax.scan(body, x, znp.arange(7.0))[0])(x)

    def vmap_while(x, p):
        return zx.vmap(lambda x: lax.while_loop(
            lambda c: c[0] < x, lambda c: (debug.callback(cb, c[1]), (c[0] + 1, c[1] * 2))[1],
            (0.0, x))[1])(znp.arange(3.0) + x)

    def vmap_cond(x, p):  # a batched predicate runs both branches, as JAX's select
        return zx.vmap(lambda y: lax.cond(y > 0, lambda y: (debug.callback(cb, y), y)[1],
                                          lambda y: -y, y))(znp.array([1.0, -1.0, 2.0]) * p)

    return {
        "closure_operand": (closure_operand, (1, 0)),
        "no_operand": (no_operand, (1, 0)),
        "grad_in_branch": (grad_in_branch, (1, 0)),
        "both_branches": (both_branches, (1, 1)),
        "switch": (switch, (1, 0)),
        "while_body": (while_body, (5, 5)),
        # JAX's eager count; jax.jit drops a callback in cond_fun (0 calls), zerax
        # makes it at each evaluation of the predicate, as eagerly.
        "while_cond": (while_cond, (6, 6)),
        "while_closure": (while_closure, (3, 3)),
        "scan_cond": (scan_cond, (3, 0)),
        "scan_no_operand": (scan_no_operand, (4, 4)),
        "jvp_while_int_operand": (jvp_while_int_operand, (5, 5)),
        "grad_scan": (grad_scan, (4, 4)),
        "grad_fori": (grad_fori, (4, 4)),
        "grad_scan_cond": (grad_scan_cond, (3, 3)),
        "vmap_while": (vmap_while, (9, 9)),
        "vmap_cond": (vmap_cond, (3, 3)),
    }


@pytest.mark.parametrize("name", sorted(_cases(None)))
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_callback_counts_follow_control_flow(name, mode):
    cb = Counter()
    fn, want = _cases(cb)[name]
    f = zx.jit(fn) if mode == "jit" else fn
    got = []
    for p in (1.0, -1.0):
        cb.n = 0
        out = f(1.0, p)
        got.append(cb.n)
        np.testing.assert_allclose(out, fn(1.0, p))  # (and the eager call counts again)
    assert tuple(got) == want


def test_compiled_callbacks_in_both_branches_run_the_branch_taken():
    # Each branch of one compiled `if` holds a call back into Python (Numba's object
    # mode miscompiled this: "Instruction does not dominate all uses").
    seen = []

    def f(x):
        def body(c):
            i, y = c
            y = lax.cond(i % 2 == 0,
                         lambda y: (debug.callback(lambda v: seen.append(("even", float(v))), y),
                                    y + 1)[1],
                         lambda y: (debug.callback(lambda v: seen.append(("odd", float(v))), y),
                                    y * 2)[1], y)
            return i + 1, y
        return lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]
    assert float(zx.jit(f)(1.0)) == 10.0
    assert seen == [("even", 1.0), ("odd", 2.0), ("even", 4.0), ("odd", 5.0)]


def test_compiled_host_decompositions_in_both_branches():
    # qr and eigh call back into NumPy inside compiled loop bodies; one in each branch.
    a = np.array([[4.0, 1.0], [1.0, 3.0]])

    def f(a):
        def body(i, m):
            return lax.cond(i % 2 == 0, lambda m: znp.linalg.qr(m)[1] + m,
                            lambda m: znp.linalg.eigh(m)[1] @ m, m)
        return lax.fori_loop(0, 3, body, a)
    want = a
    for i in range(3):  # (eigh symmetrises its input, as JAX's)
        want = np.linalg.qr(want)[1] + want if i % 2 == 0 else \
            np.linalg.eigh((want + want.T) / 2)[1] @ want
    np.testing.assert_allclose(zx.jit(f)(a), want, rtol=1e-12)
    np.testing.assert_allclose(f(a), want, rtol=1e-12)


def test_lbfgs_evaluations_counted_as_optax():
    # optax's documented L-BFGS loop (a lax.while_loop of lbfgs steps with
    # value_and_grad_from_state) on Rosenbrock from (-1.2, 1): optax 0.2.8 under
    # jax.jit and eagerly counts 47 evaluations (callbacks) over 36 iterations.
    with_value, without = Counter(), Counter()

    def fun(x):
        debug.callback(with_value, x)
        debug.callback(without)
        return znp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    def run_opt(init_params):
        opt = optim.lbfgs()
        value_and_grad_fun = optim.value_and_grad_from_state(fun)

        def step(carry):
            params, state = carry
            value, grad = value_and_grad_fun(params, state=state)
            updates, state = opt.update(grad, state, params, value=value, grad=grad,
                                        value_fn=fun)
            return optim.apply_updates(params, updates), state

        def continuing(carry):
            _, state = carry
            n, err = otu.tree_get(state, "count"), otu.tree_norm(otu.tree_get(state, "grad"))
            return (n == 0) | ((n < 100) & (err >= 1e-8))
        return lax.while_loop(continuing, step, (init_params, opt.init(init_params)))

    for f in (run_opt, zx.jit(run_opt)):
        with_value.n = without.n = 0
        params, state = f(znp.asarray([-1.2, 1.0]))
        assert (with_value.n, without.n) == (47, 47)
        assert int(otu.tree_get(state, "count")) == 36
        np.testing.assert_allclose(params, [1.0, 1.0], rtol=1e-10)
