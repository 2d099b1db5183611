"""Local work through the CPU route against numpy (lowering/cpu/local_math.py):
f32 exp and tanh as inline arithmetic, reductions reassociated. The stated
tolerances are the ones docs/benchmarks.md quotes: exp within 1 ulp of
the correctly rounded result (measured: 1), tanh within 6 ulp (measured: 6
near -5.8, 4 near 0), and
gelu, softmax and layernorm (chains of those with reassociated sums)
within 1e-6 relative to their scale."""
from collections.abc import Callable

import numpy as np
import pytest

from coll.lowering import cpu

ID = "affine_map<(i, j) -> (i, j)>"
ROW = "affine_map<(i, j) -> (i)>"


def _generic(maps: list[str], iterators: str, ins: list[str], out: str, body: str) -> str:
    args = ", ".join(f"%x{k}: f32" for k in range(len(ins)))
    return f"""  linalg.generic {{indexing_maps = [{", ".join(maps)}], iterator_types = [{iterators}]}}
      ins({", ".join(ins)} : {", ".join(_T[v] for v in ins)}) outs({out} : {_T[out]}) {{
  ^bb0({args}, %o: f32):
{body}
  }}
"""


_T: dict[str, str] = {}


def _program(rows: int, cols: int, params: list[tuple[str, bool]], ops: list[Callable[[], str]]) -> str:
    """func @f over memrefs `params` (name, is a row vector), ops in order."""
    _T.clear()
    for name, row in params:
        _T[name] = f"memref<{rows}xf32>" if row else f"memref<{rows}x{cols}xf32>"
    sig = ", ".join(f"{n}: {_T[n]}" for n, _ in params)
    return f"func.func @f({sig}) attributes {{llvm.emit_c_interface}} {{\n" + "".join(o() for o in ops) + \
        "  return\n}\n"


def _fill(name: str, value: str) -> Callable[[], str]:
    return lambda: (f"  %init{name[1:]} = arith.constant {value} : f32\n"
                    f"  linalg.fill ins(%init{name[1:]} : f32) outs({name} : {_T[name]})\n")


def _unary(op: str) -> str:
    return _program(256, 512, [("%a", False), ("%b", False)], [
        lambda: _generic([ID, ID], '"parallel", "parallel"', ["%a"], "%b",
                         f"    %r = {op} %x0 : f32\n    linalg.yield %r : f32")])


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in f32 steps (sign-magnitude bits as a line of integers)."""
    def line(x: np.ndarray) -> np.ndarray:
        i = x.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(line(got) - line(want))


def _run_unary(op: str, x: np.ndarray) -> np.ndarray:
    y = np.zeros_like(x)
    cpu.compile(_unary(op)).run([x], [y])
    return y


def _sweep(low: float, high: float) -> np.ndarray:
    return np.linspace(low, high, 256 * 512, dtype=np.float32).reshape(256, 512)


@pytest.mark.parametrize("low, high", [(-110.0, 95.0), (-1.0, 1.0), (-1e-3, 1e-3)])
def test_exp_within_one_ulp(low: float, high: float):
    x = _sweep(low, high)
    got = _run_unary("math.exp", x)
    with np.errstate(over="ignore"):  # past 88.7: inf, as f32 has it
        want = np.exp(x.astype(np.float64)).astype(np.float32)
    normal = want >= np.finfo(np.float32).tiny  # below it, 2^k is two factors: one more rounding
    assert _ulps(got[normal], want[normal]).max() <= 1
    assert np.all(np.abs(got[~normal] - want[~normal]) <= 2 * np.finfo(np.float32).smallest_subnormal)


@pytest.mark.parametrize("low, high", [(-12.0, 12.0), (-1.0, 1.0), (-1e-3, 1e-3)])
def test_tanh_within_six_ulp(low: float, high: float):
    x = _sweep(low, high)
    got = _run_unary("math.tanh", x)
    want = np.tanh(x.astype(np.float64)).astype(np.float32)
    assert _ulps(got, want).max() <= 6


def test_special_values():
    x = np.zeros((256, 512), np.float32)
    x[0, :6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 88.0]
    e, t = _run_unary("math.exp", x), _run_unary("math.tanh", x)
    assert np.isnan(e[0, 0]) and np.isnan(t[0, 0])
    assert e[0, 1] == np.inf and e[0, 2] == 0.0 and e[0, 3] == 1.0 and e[0, 4] == 1.0
    assert t[0, 1] == 1.0 and t[0, 2] == -1.0 and t[0, 3] == 0.0
    assert abs(e[0, 5] / np.exp(np.float64(88.0)) - 1) < 3e-7


def _gelu() -> str:
    body = """    %c0 = arith.constant 0.5 : f32
    %c1 = arith.constant 1.0 : f32
    %k = arith.constant 0.7978845608 : f32
    %c3 = arith.constant 0.044715 : f32
    %x2 = arith.mulf %x0, %x0 : f32
    %x3 = arith.mulf %x2, %x0 : f32
    %ax3 = arith.mulf %c3, %x3 : f32
    %in = arith.addf %x0, %ax3 : f32
    %kin = arith.mulf %k, %in : f32
    %t = math.tanh %kin : f32
    %t1 = arith.addf %t, %c1 : f32
    %hx = arith.mulf %c0, %x0 : f32
    %r = arith.mulf %hx, %t1 : f32
    linalg.yield %r : f32"""
    return _program(256, 512, [("%a", False), ("%b", False)],
                    [lambda: _generic([ID, ID], '"parallel", "parallel"', ["%a"], "%b", body)])


def _softmax() -> str:
    """exp(x - max) / sum: max and sum are row reductions (reassociated)."""
    p = [("%a", False), ("%m", True), ("%e", False), ("%s", True), ("%b", False)]
    return _program(256, 512, p, [
        _fill("%m", "0xFF800000"), _fill("%s", "0.0"),
        lambda: _generic([ID, ROW], '"parallel", "reduction"', ["%a"], "%m",
                         "    %r = arith.maximumf %x0, %o : f32\n    linalg.yield %r : f32"),
        lambda: _generic([ID, ROW, ID], '"parallel", "parallel"', ["%a", "%m"], "%e",
                         "    %d = arith.subf %x0, %x1 : f32\n    %r = math.exp %d : f32\n"
                         "    linalg.yield %r : f32"),
        lambda: _generic([ID, ROW], '"parallel", "reduction"', ["%e"], "%s",
                         "    %r = arith.addf %x0, %o : f32\n    linalg.yield %r : f32"),
        lambda: _generic([ID, ROW, ID], '"parallel", "parallel"', ["%e", "%s"], "%b",
                         "    %r = arith.divf %x0, %x1 : f32\n    linalg.yield %r : f32")])


def _layernorm() -> str:
    """(x - mean) * rsqrt(var + eps), mean and var from row sums."""
    p = [("%a", False), ("%s", True), ("%q", True), ("%b", False)]
    n = "arith.constant 512.0 : f32"
    return _program(256, 512, p, [
        _fill("%s", "0.0"), _fill("%q", "0.0"),
        lambda: _generic([ID, ROW], '"parallel", "reduction"', ["%a"], "%s",
                         "    %r = arith.addf %x0, %o : f32\n    linalg.yield %r : f32"),
        lambda: _generic([ID, ROW], '"parallel", "reduction"', ["%a"], "%q",
                         "    %sq = arith.mulf %x0, %x0 : f32\n    %r = arith.addf %sq, %o : f32\n"
                         "    linalg.yield %r : f32"),
        lambda: _generic([ID, ROW, ROW, ID], '"parallel", "parallel"', ["%a", "%s", "%q"], "%b",
                         f"    %n = {n}\n    %eps = arith.constant 1.0e-5 : f32\n"
                         "    %mean = arith.divf %x1, %n : f32\n    %m2 = arith.divf %x2, %n : f32\n"
                         "    %mm = arith.mulf %mean, %mean : f32\n    %var = arith.subf %m2, %mm : f32\n"
                         "    %ve = arith.addf %var, %eps : f32\n    %rs = math.rsqrt %ve : f32\n"
                         "    %d = arith.subf %x0, %mean : f32\n    %r = arith.mulf %d, %rs : f32\n"
                         "    linalg.yield %r : f32")])


def test_gelu_softmax_layernorm_against_numpy():
    x = np.random.default_rng(7).standard_normal((256, 512)).astype(np.float32) * 3
    x64 = x.astype(np.float64)
    gelu = np.zeros_like(x)
    cpu.compile(_gelu()).run([x], [gelu])
    want = 0.5 * x64 * (1 + np.tanh(0.7978845608 * (x64 + 0.044715 * x64 ** 3)))
    assert np.abs(gelu - want).max() <= 1e-6 * np.abs(want).max()

    m, e, s, soft = np.zeros(256, np.float32), np.zeros_like(x), np.zeros(256, np.float32), np.zeros_like(x)
    cpu.compile(_softmax()).run([x], [m, e, s, soft])
    ex = np.exp(x64 - x64.max(axis=1, keepdims=True))
    assert np.abs(soft - ex / ex.sum(axis=1, keepdims=True)).max() <= 1e-6

    s, q, ln = np.zeros(256, np.float32), np.zeros(256, np.float32), np.zeros_like(x)
    cpu.compile(_layernorm()).run([x], [s, q, ln])
    mean = x64.mean(axis=1, keepdims=True)
    want = (x64 - mean) / np.sqrt(((x64 - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    assert np.abs(ln - want).max() <= 1e-5
