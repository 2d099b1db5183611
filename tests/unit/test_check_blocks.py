"""execution/check.py's Expected: the reference and the tolerances computed
once, block by block for the elementwise collectives, and outputs
compared in the element type, with only the elements that need a
tolerance (or may overflow) judged by the full rule. Its verdicts must
not depend on the block size, and it must count every wrong element.

Covering design: every collective x (f32, bf16, i32) x inputs that are
exact in any order (make_inputs) and inputs that are not (uniform), each
with the correct outputs (the CPU runtime's) and with k corrupted
elements; blocks of 7 elements (not dividing any size) against one block.
"""
import numpy as np
import pytest
from mlir import ir

from coll.execution import check
from coll.execution.signature import NUMPY_DTYPES, from_bf16, to_bf16
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.lowering import cpu

OPS = {  # op -> (shape, attributes)
    "all_reduce": ((5, 9), {}),
    "reduce_scatter": ((6, 4), {"axis": 1}),
    "all_gather": ((2, 3), {"axis": 0}),
    "reduce": ((5, 3), {"root": 1}),
    "broadcast": ((17,), {"root": 2}),
    "all_to_all": ((4, 6), {"split_axis": 0, "concat_axis": 1}),
}
N = 4


def _problem(op, el, kind="sum"):
    shape, attrs = OPS[op]
    with make_context():
        text = collective_module(op, N, list(shape), el, kind=kind, **attrs)
        return text, check.describe(ir.Module.parse(text))


def _uniform(problem, seed):
    rng = np.random.default_rng(seed)
    v = [rng.uniform(-1, 1, problem.shape) for _ in range(problem.n_inputs)]
    el = problem.element
    if el == "bf16":
        return [to_bf16(x) for x in v]
    if el.startswith("i"):
        return [rng.integers(-99, 99, problem.shape).astype(NUMPY_DTYPES[el]) for _ in v]
    return [x.astype(NUMPY_DTYPES[el]) for x in v]


def _outputs(text, problem, xs):
    ys = check.make_outputs(problem)
    cpu.compile(text).run([x.copy() for x in xs], ys)
    return check.op_outputs(problem, xs, ys)


def _corrupt(ys, problem, k, seed):
    """k elements of the outputs changed, on distinct positions."""
    rng = np.random.default_rng(seed)
    out = [y.copy() for y in ys]
    flat = [y.reshape(-1) for y in out]
    spots = rng.choice(sum(f.size for f in flat), k, replace=False)
    for s in spots:
        j = 0
        while s >= flat[j].size:
            s -= flat[j].size
            j += 1
        if problem.element == "bf16":
            flat[j][s] = to_bf16(from_bf16(flat[j][s:s + 1]) + 0.5)[0]
        elif problem.element.startswith("i"):
            flat[j][s] += 1
        else:
            flat[j][s] += 0.5
    return out


def _verdicts(problem, xs, ys, monkeypatch):
    got = []
    for chunk in (7, 1 << 20):
        monkeypatch.setattr(check, "CHUNK", chunk)
        e = check.Expected(problem, xs)
        got.append(e.verify(ys))
    return got


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("el", ("f32", "bf16", "i32"))
def test_blocks_do_not_change_the_verdict(op, el, monkeypatch):
    text, problem = _problem(op, el)
    for inputs in ("exact", "uniform"):
        xs = check.make_inputs(problem, 3) if inputs == "exact" else _uniform(problem, 5)
        ys = _outputs(text, problem, xs)
        small, whole = _verdicts(problem, xs, ys, monkeypatch)
        assert small == whole and small[0] and small[2] == 0, (op, el, inputs, small)
        assert check.check(problem, xs, ys)[0]
        k = 3
        bad = _corrupt(ys, problem, k, 11)
        small, whole = _verdicts(problem, xs, bad, monkeypatch)
        assert small == whole, (op, el, inputs, small, whole)
        assert not small[0] and small[2] == k and small[1] > 0, (op, el, inputs, small)
        assert not check.check(problem, xs, bad)[0]


@pytest.mark.parametrize("kind", ("sum", "prod", "max", "min"))
def test_exact_inputs_need_no_tolerance(kind):
    """On make_inputs' values every element is compared exactly in the
    element type: no element goes to the full rule (the fast path that
    coll-run --strategy=all at 8 x 64 MiB relies on)."""
    _, problem = _problem("all_reduce", "f32", kind)
    e = check.Expected(problem, check.make_inputs(problem, 0))
    assert [g.special for g in e.groups] == [None]
    _, problem = _problem("all_reduce", "f32", "sum")
    e = check.Expected(problem, _uniform(problem, 1))
    assert e.groups[0].special is not None and e.groups[0].special[0].size > 0


def test_an_overflow_some_order_gives_is_judged_by_the_full_rule(monkeypatch):
    """f16 sums that overflow in some orders: inf is accepted where an
    order gives it, a finite value where it is within the tolerance, and
    a wrong value fails, in any block size."""
    problem = check.Problem("f", 2, 2, (3,), "f16", "sum", collective=True, op="all_reduce")
    xs = [np.array([60000, 1, 65504], np.float16), np.array([60000, 2, -65504], np.float16)]
    for ys, ok in (([np.array([np.inf, 3, 0], np.float16)] * 2, True),
                   ([np.array([np.inf, 4, 0], np.float16)] * 2, False),
                   ([np.array([65504, 3, 0], np.float16)] * 2, False)):
        small, whole = _verdicts(problem, xs, ys, monkeypatch)
        assert small == whole and small[0] == ok, (ys, small)


def test_identical_replicas_are_judged_once_and_counted_each(monkeypatch):
    """Replicas with the same bits share a verdict: k wrong elements in each
    of N identical replicas are N*k wrong elements."""
    text, problem = _problem("all_reduce", "i32")
    xs = check.make_inputs(problem, 2)
    ys = _outputs(text, problem, xs)
    bad = _corrupt(ys[:1], problem, 2, 3) * N
    small, whole = _verdicts(problem, xs, bad, monkeypatch)
    assert small == whole and not small[0] and small[2] == 2 * N
    assert check.identical(bad) and not check.identical([bad[0], ys[1], ys[2], ys[3]])


def test_grid_is_the_largest_power_of_two_dividing_each_value():
    rng = np.random.default_rng(4)
    a = np.concatenate([rng.uniform(-1, 1, 1000), rng.integers(-1024, 1024, 1000) / 64.0,
                        [1.0, -8.0, 1.5, 2.0 ** -1022, 3 * 2.0 ** -1070, 5e-324, 2.0 ** 1023 * 1.5]])
    a = a[a != 0]
    g = check._grid(a)
    m, e = np.frexp(g)
    assert np.all(m == 0.5)  # powers of two
    q = a / g  # exact: a power of two divides
    assert np.all(q == np.round(q)) and np.all(np.abs(q) % 2 == 1)  # the largest: the quotient is odd
    assert np.isinf(check._grid(np.array([0.0, -0.0]))).all()
