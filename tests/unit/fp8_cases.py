"""What the fp8 tests share (test_fp8.py, test_mpi_fp8.py): inputs over an
fp8 type's range, a collective run on a back end, the reference (the f32
device-order sum rounded once, with ml_dtypes)."""
import ml_dtypes
import numpy as np

from coll.execution import check
from coll.execution.signature import to_stored
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.kinds import ELEMENTS
from coll.lowering import cpu

FP8 = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}


def inputs(n, numel, element, seed=0):
    """n arrays of fp8 bit patterns over the type's range (its subnormals
    too), so that other associations, or a rounding per hop, differ; some
    sums overflow (E4M3FN: NaN, E5M2: inf) as the reference's do."""
    rng = np.random.default_rng(seed)
    lo, hi = np.log2(ELEMENTS[element].tiny) - 2, np.log2(ELEMENTS[element].max_finite) - 1
    return [to_stored(rng.standard_normal(numel) * 2.0 ** rng.uniform(lo, hi, numel), element) for _ in range(n)]


def attrs_of(op, n):
    return {"root": (n - 1) // 2} if op == "reduce" else {"axis": 0} if op == "reduce_scatter" else {}


def run(op, n, numel, element, strategy, backend=cpu, seed=0):
    with make_context():
        text = collective_module(op, n, [numel], element, strategy=strategy, **attrs_of(op, n))
    xs = inputs(n, numel, element, seed)
    size = numel // n if op == "reduce_scatter" else numel
    ys = [np.zeros(size, np.uint8) for _ in range(1 if op == "reduce" else n)]
    backend.compile(text).run(xs, ys)
    return xs, ys


def want_of(op, n, element, xs):
    """The reference: the f32 device-order sum, rounded once with ml_dtypes."""
    md = FP8[element]
    acc = xs[0].view(md).astype(np.float32)
    for x in xs[1:]:
        acc = acc + x.view(md).astype(np.float32)
    want = acc.astype(md).view(np.uint8)
    assert np.array_equal(want, check.canonical("sum", element, xs))  # check.py's reference agrees
    return np.split(want, n) if op == "reduce_scatter" else [want] * (1 if op == "reduce" else n)
