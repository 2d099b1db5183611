"""Identical replicas and a check that cannot be fooled (issue 10, items 1-2).

Every device that receives a multi-device result gets the same bits, for
every strategy of every replicating reduction in the registry (the
collectives that are REPLICATED and HAS_KIND, each strategy the CPU runs),
every kind and float type, under every coll-shuffle seed; and
execution/check.py fails a missing or doubled contribution of any one device,
compares ±inf/NaN as values, and judges overflow in the element type.
"""
import numpy as np
import pytest
from mlir import ir

from coll.collectives import COLLECTIVES
from coll.execution import check
from coll.execution.check import Problem
from coll.execution.signature import NUMPY_DTYPES, from_bf16, to_bf16
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.lowering import cpu

FLOATS = ("f16", "bf16", "f32", "f64")
KINDS = ("sum", "prod", "max", "min")
# (collective, strategy): every CPU strategy of every collective whose
# outputs are replicas of one reduced result.
STRATEGIES = [(cls, s) for cls in COLLECTIVES if cls.REPLICATED and cls.HAS_KIND
              for s in cls.runnable(cpu.BACKEND.capabilities)]
IDS = [f"{cls.short_name()}-{s}" for cls, s in STRATEGIES]


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def _arrays(values, el):
    v = np.asarray(values, np.float64)
    return to_bf16(v) if el == "bf16" else v.astype(NUMPY_DTYPES[el])


def _module(cls, n, numel, el, kind, strategy=None):
    """`cls` over n devices on `numel` elements (its sample's attributes)."""
    return collective_module(cls.short_name(), n, [numel], el, kind=kind, strategy=strategy, **cls.sample(n)[1])


def _run(family, n, numel, el, kind, inputs=None, seed=1, shuffle_seed=None):
    cls, strategy = family
    with make_context():
        text = _module(cls, n, numel, el, kind, strategy)
        problem = check.describe(ir.Module.parse(text))
    xs = inputs if inputs is not None else check.make_inputs(problem, seed)
    ys = check.make_outputs(problem)
    cpu.compile(text, shuffle_seed=shuffle_seed).run([x.copy() for x in xs], ys)
    return problem, xs, ys


def _uniform(problem, seed):
    """Inputs on which rounding differs between orders (not the exact ones
    of make_inputs): where a wrong operand order would show."""
    rng = np.random.default_rng(seed)
    lo = 0.5 if problem.kind == "prod" else -1.0
    return [_arrays(rng.uniform(lo, 1.5 if lo > 0 else 1.0, problem.shape), problem.element)
            for _ in range(problem.n_inputs)]


@pytest.mark.parametrize("family", STRATEGIES, ids=IDS)
@pytest.mark.parametrize("el", FLOATS)
def test_every_replica_has_the_same_bits(family, el):
    """N=4, 1000 elements, naive used to give devices 2 and 3 ~250 and ~430
    elements that differ from device 0 in f32. Every strategy, type and N,
    one kind at each, turning with the strategy: over the strategies,
    every (type, N, kind)."""
    cls, strategy = family
    for n in (3, 4, 5):
        j = FLOATS.index(el) + n + STRATEGIES.index(family)
        for kind in (KINDS[j % 4],):
            with make_context():
                problem = check.describe(ir.Module.parse(_module(cls, n, 1000, el, kind)))
            xs = _uniform(problem, 11 * n)
            _, _, ys = _run(family, n, 1000, el, kind, xs)
            for j2, y in enumerate(ys[1:], 1):
                diff = np.count_nonzero(_bits(y) != _bits(ys[0]))
                assert diff == 0, f"{strategy} {kind} {el} N={n}: device {j2} differs in {diff} bytes"
            assert check.identical(ys)
            assert check.check(problem, xs, ys)[0], (strategy, kind, el, n)


@pytest.mark.parametrize("family", STRATEGIES, ids=IDS)
def test_same_bits_under_every_shuffle_seed(family):
    cls = family[0]
    kind = ("sum", "max")[STRATEGIES.index(family) % 2]  # both kinds over the strategies
    with make_context():
        problem = check.describe(ir.Module.parse(_module(cls, 4, 1000, "f32", kind)))
    xs = _uniform(problem, 3)
    _, _, base = _run(family, 4, 1000, "f32", kind, xs)
    for seed in (1, 2, 3, 4):
        _, _, ys = _run(family, 4, 1000, "f32", kind, xs, shuffle_seed=seed)
        for y, b in zip(ys, base):
            assert np.array_equal(_bits(y), _bits(b)), f"seed {seed}"


@pytest.mark.parametrize("el", FLOATS)
@pytest.mark.parametrize("family", STRATEGIES, ids=IDS)
def test_max_min_are_ieee_on_every_device(family, el):
    """maximumf/minimumf: NaN propagates, -0 < +0, on every device."""
    nan = float("nan")
    cols = [(-0.0, 0.0, -0.0), (0.0, -0.0, -0.0), (-0.0, -0.0, -0.0), (1.0, nan, 2.0),
            (nan, -1.0, -2.0), (-np.inf, 3.0, 0.0), (np.inf, -np.inf, 1.0), (5.0, 4.0, 6.0)]
    xs = [_arrays([c[i] for c in cols], el) for i in range(3)]
    for kind, want in (("max", [0.0, 0.0, -0.0, nan, nan, 3.0, np.inf, 6.0]),
                       ("min", [-0.0, -0.0, -0.0, nan, nan, -np.inf, -np.inf, 4.0])):
        problem, _, ys = _run(family, 3, len(cols), el, kind, xs)
        for y in ys:
            got = check.as_float(y, el)
            w = np.array(want)
            assert np.array_equal(np.isnan(got), np.isnan(w)), (kind, got)
            ok = ~np.isnan(w)
            assert np.array_equal(got[ok], w[ok]) and np.array_equal(np.signbit(got[ok]), np.signbit(w[ok])), (kind, got)
        assert check.check(problem, xs, ys)[0]
        flipped = [y.copy() for y in ys]
        flipped[1][0] = _arrays([-0.0], el)[0]  # max(+0, -0) must be +0
        if kind == "max":
            assert not check.check(problem, xs, flipped)[0]


def _wrong(problem, xs, drop=None, double=None):
    """The result of a program that misses or doubles one device's input."""
    ys = [x for i, x in enumerate(xs) if i != drop] + ([xs[double]] if double is not None else [])
    p = Problem("f", len(ys), 1, problem.shape, problem.element, problem.kind)
    out = check._round(check.reference(p, ys), problem.element)
    return _arrays(out, problem.element)


@pytest.mark.parametrize("el", FLOATS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", (2, 3, 5, 8, 16, 48, 100))
def test_a_missing_or_doubled_device_fails(n, kind, el):
    problem = Problem("f", n, 2, (1000,), el, kind)
    xs = check.make_inputs(problem, 5)
    good = _arrays(check._round(check.reference(problem, xs), el), el)
    assert check.check(problem, xs, [good, good])[0]
    for j in sorted({0, n // 2, n - 1}):
        bad = _wrong(problem, xs, drop=j)
        assert not check.check(problem, xs, [bad, bad])[0], f"device {j} missing passes"
        if kind in ("sum", "prod"):  # max/min are idempotent
            bad = _wrong(problem, xs, double=j)
            assert not check.check(problem, xs, [bad, bad])[0], f"device {j} doubled passes"


def test_replicas_that_differ_in_one_bit_fail():
    problem = Problem("f", 3, 3, (8,), "f32", "sum")
    xs = check.make_inputs(problem, 1)
    good = _arrays(check.reference(problem, xs), "f32")
    other = good.copy()
    other.view(np.uint32)[2] ^= 1
    assert check.check(problem, xs, [good] * 3)[0]
    assert not check.check(problem, xs, [good, good, other])[0]


def test_inf_and_nan_are_values():
    problem = Problem("f", 2, 1, (4,), "f32", "sum")
    xs = [np.array([np.inf, 1.0, np.nan, np.inf], np.float32), np.array([1.0, 2.0, 1.0, -np.inf], np.float32)]
    right = np.array([np.inf, 3.0, np.nan, np.nan], np.float32)
    assert check.check(problem, xs, [right])[0]
    for k, v in ((0, -np.inf), (0, np.nan), (1, np.inf), (2, 0.0), (3, np.inf)):
        wrong = right.copy()
        wrong[k] = v
        assert not check.check(problem, xs, [wrong])[0], (k, v)


def test_overflow_is_judged_in_the_element_type():
    problem = Problem("f", 2, 1, (3,), "f16", "sum")
    xs = [np.array([60000, 60000, -1], np.float16), np.array([60000, -60000, 1], np.float16)]
    assert check.check(problem, xs, [np.array([np.inf, 0, 0], np.float16)])[0]
    assert not check.check(problem, xs, [np.array([65504, 0, 0], np.float16)])[0]  # must be inf
    assert not check.check(problem, xs, [np.array([np.inf, np.inf, 0], np.float16)])[0]  # wrong inf
    assert not check.check(problem, xs, [np.array([-np.inf, 0, 0], np.float16)])[0]
    bf = Problem("f", 2, 1, (1,), "bf16", "prod")
    x = to_bf16(np.array([2.0 ** 100]))
    assert check.check(bf, [x, x], [to_bf16(np.array([np.inf]))])[0]
    assert from_bf16(to_bf16(np.array([np.inf])))[0] == np.inf


def test_inputs_written_by_the_program_cannot_hide_it(tmp_path):
    """An explicit program that overwrites its argument x1 with 0 before
    the combine: x1 is an output (written before it is read), the run is
    unchecked without a claim, and refused with one (the claim's input x1
    is overwritten; coll-run's reference reads a copy of the inputs taken
    before the run in any case)."""
    import subprocess
    import sys
    text = """
func.func @f(%a0: memref<8xi32>, %a1: memref<8xi32>, %b0: memref<8xi32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : i32
  linalg.fill ins(%c0 : i32) outs(%a1 : memref<8xi32>)
  %x0 = memref.memory_space_cast %a0 : memref<8xi32> to memref<8xi32, #coll.device<0>>
  %x1 = memref.memory_space_cast %a1 : memref<8xi32> to memref<8xi32, #coll.device<1>>
  %y0 = memref.memory_space_cast %b0 : memref<8xi32> to memref<8xi32, #coll.device<0>>
  %r0 = "coll.alloc"() : () -> memref<8xi32, #coll.device<0>>
  %t0 = "coll.copy"(%x1, %r0) : (memref<8xi32, #coll.device<1>>, memref<8xi32, #coll.device<0>>) -> !coll.token
  %t1 = "coll.combine"(%x0, %r0, %y0, %t0) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>}
      : (memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<0>>, !coll.token) -> !coll.token
  "coll.wait"(%t1) : (!coll.token) -> ()
  return
}
"""
    path = tmp_path / "writes_input.mlir"
    path.write_text(text)
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_run", str(path), "--backend=cpu", "--repeat=1"],
                       capture_output=True, text=True, timeout=120)
    # x1 is written before it is read: an output, not an input; without a
    # claim nothing says what the program computes, and it runs unchecked.
    assert r.returncode == 0 and "unchecked) of 1 x 8xi32 -> 2 output(s)" in r.stdout, r.stdout + r.stderr
    assert " ok" not in r.stdout
    # With its claim, coll-check-semantics sees the fill (issue 23 item 1).
    claim = ('"coll.implements"(%a0, %a1, %b0, %t1) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, '
             'to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (memref<8xi32>, memref<8xi32>, '
             'memref<8xi32>, !coll.token) -> ()\n  "coll.wait"')
    path.write_text(text.replace('"coll.wait"', claim))
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_run", str(path), "--backend=cpu", "--repeat=1"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == "", r.stdout + r.stderr
    assert r.stderr.startswith(f"{path}:12:3: error: coll-check-semantics: output #0 (%arg2 on device 0) [0, 8) "
                               "holds a value from a linalg.fill (not followed) but should hold sum(x0[0:8], "
                               "x1[0:8])"), r.stderr
    assert f"{path}:4:3: note: this linalg.fill wrote a value it depends on" in r.stderr
