"""Local elementwise and row-reduction work, n x n f32, as the CPU route
compiles it (linalg.generic on memrefs, what the StableHLO frontend leaves
around collectives) against numpy in one run: the route before
lowering/cpu/local_math.py ("loops": convert-linalg-to-loops, libm calls
for exp and tanh, reductions in order) and with it ("route": f32 exp/tanh
inline, reductions reassoc, so that LLVM's -O3 vectorizes the loops).

    python bench/elementwise.py [--n 1024] [--rounds 3] [--repeat 7] [--names sgd,tanh,...]
    python bench/elementwise.py --mpi [--ranks 2] [--n 1024] [--rounds 3] [--repeat 7] [--names ...]

CPU time of the calling thread per call (time.thread_time: the time a
shared machine's other work takes the core is left out; every call here
runs on one thread), the median of --repeat calls per round, the median
over rounds, interleaved round by round. numpy writes into preallocated
outputs (`out=`), its temporaries included.

`--mpi`: each kernel on each of --ranks ranks under mpirun (the MPI route's
shared library: the SPMD form, an all_reduce of one element after the
kernel), wall ms per call of the slowest rank, median over rounds; run it
with the checkout before a change on PYTHONPATH to compare.
"""
import ctypes
import os
import sys
import time
from collections.abc import Callable

import numpy as np

ID, ROW = "affine_map<(i, j) -> (i, j)>", "affine_map<(i, j) -> (i)>"
PAR, RED = '"parallel", "parallel"', '"parallel", "reduction"'


def generic(maps: list[str], iterators: str, ins: list[str], out: str, body: str) -> tuple:
    return (maps, iterators, ins, out, body)


# name -> (memref params: name -> is a row vector, inputs, ops); an op is a
# generic or ("fill", buffer, value)
KERNELS: dict[str, tuple[dict[str, bool], list[str], list[tuple]]] = {
    "sgd": ({"w": False, "g": False, "o": False}, ["w", "g"], [generic(
        [ID, ID, ID], PAR, ["w", "g"], "o",
        "%lr = arith.constant 0.01 : f32\n%m = arith.mulf %x1, %lr : f32\n%r = arith.subf %x0, %m : f32")]),
    "rowsum": ({"a": False, "s": True}, ["a"], [
        ("fill", "s", "0.0"), generic([ID, ROW], RED, ["a"], "s", "%r = arith.addf %x0, %y : f32")]),
    "rowmax": ({"a": False, "s": True}, ["a"], [
        ("fill", "s", "0xFF800000"), generic([ID, ROW], RED, ["a"], "s", "%r = arith.maximumf %x0, %y : f32")]),
    "exp": ({"a": False, "b": False}, ["a"], [generic([ID, ID], PAR, ["a"], "b", "%r = math.exp %x0 : f32")]),
    "tanh": ({"a": False, "b": False}, ["a"], [generic([ID, ID], PAR, ["a"], "b", "%r = math.tanh %x0 : f32")]),
    "gelu": ({"a": False, "b": False}, ["a"], [generic([ID, ID], PAR, ["a"], "b", """
%h = arith.constant 0.5 : f32
%one = arith.constant 1.0 : f32
%k = arith.constant 0.7978845608 : f32
%c = arith.constant 0.044715 : f32
%x2 = arith.mulf %x0, %x0 : f32
%x3 = arith.mulf %x2, %x0 : f32
%cx3 = arith.mulf %c, %x3 : f32
%in = arith.addf %x0, %cx3 : f32
%kin = arith.mulf %k, %in : f32
%t = math.tanh %kin : f32
%t1 = arith.addf %t, %one : f32
%hx = arith.mulf %h, %x0 : f32
%r = arith.mulf %hx, %t1 : f32""")]),
    # max, exp(x - max) (fused, as linalg-fuse-elementwise-ops leaves it), sum, divide
    "softmax": ({"a": False, "m": True, "e": False, "s": True, "b": False}, ["a"], [
        ("fill", "m", "0xFF800000"), ("fill", "s", "0.0"),
        generic([ID, ROW], RED, ["a"], "m", "%r = arith.maximumf %x0, %y : f32"),
        generic([ID, ROW, ID], PAR, ["a", "m"], "e", "%d = arith.subf %x0, %x1 : f32\n%r = math.exp %d : f32"),
        generic([ID, ROW], RED, ["e"], "s", "%r = arith.addf %x0, %y : f32"),
        generic([ID, ROW, ID], PAR, ["e", "s"], "b", "%r = arith.divf %x0, %x1 : f32")]),
    "layernorm": ({"a": False, "s": True, "q": True, "b": False}, ["a"], [
        ("fill", "s", "0.0"), ("fill", "q", "0.0"),
        generic([ID, ROW], RED, ["a"], "s", "%r = arith.addf %x0, %y : f32"),
        generic([ID, ROW], RED, ["a"], "q", "%sq = arith.mulf %x0, %x0 : f32\n%r = arith.addf %sq, %y : f32"),
        generic([ID, ROW, ROW, ID], PAR, ["a", "s", "q"], "b", """
%n = arith.constant {n}.0 : f32
%eps = arith.constant 1.0e-5 : f32
%mean = arith.divf %x1, %n : f32
%m2 = arith.divf %x2, %n : f32
%mm = arith.mulf %mean, %mean : f32
%var = arith.subf %m2, %mm : f32
%ve = arith.addf %var, %eps : f32
%rs = math.rsqrt %ve : f32
%d = arith.subf %x0, %mean : f32
%r = arith.mulf %d, %rs : f32""")]),
}


def program(name: str, n: int, ranks: int | None = None) -> str:
    """func @f; with `ranks`, in SPMD form with an all_reduce of %sync after
    the kernel (the MPI route needs a collective)."""
    params, _, ops = KERNELS[name]
    types = {p: f"memref<{n}xf32>" if row else f"memref<{n}x{n}xf32>" for p, row in params.items()}
    sync = "" if ranks is None else ", %sync: memref<1xf32>"
    attrs = "llvm.emit_c_interface" if ranks is None else f"coll.ranks = {ranks} : i64, llvm.emit_c_interface"
    lines = [f"func.func @f({', '.join(f'%{p}: {t}' for p, t in types.items())}{sync}) "
             f"attributes {{{attrs}}} {{"]
    for i, op in enumerate(ops):
        if op[0] == "fill":
            _, buf, value = op
            lines += [f"  %init{i} = arith.constant {value} : f32",
                      f"  linalg.fill ins(%init{i} : f32) outs(%{buf} : {types[buf]})"]
            continue
        maps, iterators, ins, out, body = op
        body = body.format(n=n).strip().splitlines()
        last = body[-1].split()[0]
        lines += [f"  linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{iterators}]}}",
                  f"      ins({', '.join('%' + v for v in ins)} : {', '.join(types[v] for v in ins)}) "
                  f"outs(%{out} : {types[out]}) {{",
                  f"  ^bb0({', '.join(f'%x{k}: f32' for k in range(len(ins)))}, %y: f32):"]
        lines += [f"    {b}" for b in body] + [f"    linalg.yield {last} : f32", "  }"]
    if ranks is not None:
        devices = ", ".join(map(str, range(ranks)))
        lines += [f'  %t = "coll.all_reduce"(%sync, %sync) {{devices = array<i64: {devices}>, kind = "sum",',
                  '      operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<1xf32>, memref<1xf32>) -> !coll.token',
                  '  "coll.wait"(%t) : (!coll.token) -> ()']
    return "\n".join(lines + ["  return", "}"])


def compiled(text: str, local_math: bool) -> Callable[[list[np.ndarray]], None]:
    """`text` down the CPU route after coll-to-cpu (coll-ieee-minmax, then
    CPU_TO_LLVM; without local_math.py's passes: the route before them),
    JIT-compiled at the CPU runtime's opt level."""
    from mlir import ir
    from mlir.execution_engine import ExecutionEngine
    from mlir.runtime import get_ranked_memref_descriptor

    from coll.core.pipeline import run
    from coll.ir import make_context
    from coll.lowering.cpu.route import CPU_TO_LLVM
    from coll.lowering.cpu.runtime import OPT_LEVEL
    passes = ["coll-ieee-minmax"] + [p for p in CPU_TO_LLVM if local_math or p not in LOCAL_MATH]
    ctx = make_context()
    with ctx:
        m = ir.Module.parse(text)
        run(m.operation, f"builtin.module({','.join(passes)})")
        engine = ExecutionEngine(m, opt_level=OPT_LEVEL)

    def call(arrays: list[np.ndarray]) -> None:
        args = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(x))) for x in arrays]
        engine.invoke("f", *args)
    call.keep = (ctx, engine)  # type: ignore[attr-defined]
    return call


LOCAL_MATH = ("coll-approximate-math", "coll-reassociate-local-reductions")


def numpy_kernel(name: str, a: list[np.ndarray], out: list[np.ndarray]) -> Callable[[], None]:
    """numpy's way, into preallocated arrays (`out`: the same buffers the
    compiled function writes, the last one its result)."""
    x = a[0]
    t = np.empty_like(x)
    if name == "sgd":
        return lambda: (np.multiply(a[1], np.float32(0.01), out=t), np.subtract(x, t, out=out[-1]))
    if name == "rowsum":
        return lambda: np.sum(x, axis=1, out=out[-1])
    if name == "rowmax":
        return lambda: np.max(x, axis=1, out=out[-1])
    if name in ("exp", "tanh"):
        f = getattr(np, name)
        return lambda: f(x, out=out[-1])
    if name == "gelu":
        def gelu() -> None:
            np.multiply(x, x, out=t)
            np.multiply(t, x, out=t)
            np.multiply(t, np.float32(0.044715), out=t)
            np.add(t, x, out=t)
            np.multiply(t, np.float32(0.7978845608), out=t)
            np.tanh(t, out=t)
            np.add(t, np.float32(1), out=t)
            np.multiply(t, x, out=out[-1])
            np.multiply(out[-1], np.float32(0.5), out=out[-1])
        return gelu
    if name == "softmax":
        m, s = np.empty(x.shape[0], np.float32), np.empty(x.shape[0], np.float32)

        def softmax() -> None:
            np.max(x, axis=1, out=m)
            np.subtract(x, m[:, None], out=t)
            np.exp(t, out=t)
            np.sum(t, axis=1, out=s)
            np.divide(t, s[:, None], out=out[-1])
        return softmax
    assert name == "layernorm"
    mean, var = np.empty(x.shape[0], np.float32), np.empty(x.shape[0], np.float32)

    def layernorm() -> None:
        np.mean(x, axis=1, out=mean)
        np.subtract(x, mean[:, None], out=t)
        np.multiply(t, t, out=out[-1])
        np.mean(out[-1], axis=1, out=var)
        np.add(var, np.float32(1e-5), out=var)
        np.sqrt(var, out=var)
        np.divide(t, var[:, None], out=out[-1])
    return layernorm


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def table(names: list[str], n: int, rounds: int, repeat: int) -> None:
    print(f"# f32 {n} x {n}, CPU ms per call (thread time), {rounds} rounds x {repeat} calls, median; "
          f"load {os.getloadavg()[0]:.2f}, {os.cpu_count()} cpus")
    print(f"{'kernel':10s} {'loops':>8s} {'route':>8s} {'numpy':>8s} {'loops/route':>12s} {'route/numpy':>12s}"
          f" {'max |route-numpy|':>18s}")
    rng = np.random.default_rng(n)
    for name in names:
        params, inputs, _ = KERNELS[name]
        arrays = {p: (rng.standard_normal((n, n)).astype(np.float32) * 3 if p in inputs else
                      np.zeros(n if row else (n, n), np.float32)) for p, row in params.items()}
        text = program(name, n)
        fns = {"loops": compiled(text, False), "route": compiled(text, True)}
        outs = {k: [np.zeros_like(v) if p not in inputs else v for p, v in arrays.items()] for k in fns}
        np_out = [np.zeros_like(v) for p, v in arrays.items() if p not in inputs]
        calls: dict[str, Callable[[], object]] = {k: (lambda f=f, o=outs[k]: f(o)) for k, f in fns.items()}
        calls["numpy"] = numpy_kernel(name, [arrays[p] for p in inputs], np_out)
        for c in calls.values():
            c()
        err = float(np.abs(outs["route"][-1].astype(np.float64) - np_out[-1]).max())
        per: dict[str, list[float]] = {k: [] for k in calls}
        for _ in range(rounds):
            for k, c in calls.items():
                ts = []
                for _ in range(repeat):
                    t0 = time.thread_time()
                    c()
                    ts.append(time.thread_time() - t0)
                per[k].append(_median(ts))
        ms = {k: _median(v) * 1e3 for k, v in per.items()}
        print(f"{name:10s} {ms['loops']:8.3f} {ms['route']:8.3f} {ms['numpy']:8.3f} "
              f"{ms['loops'] / ms['route']:12.2f} {ms['route'] / ms['numpy']:12.2f} {err:18.3g}", flush=True)


def mpi_table(names: list[str], n: int, ranks: int, rounds: int, repeat: int) -> None:
    from coll.lowering import mpi
    print(f"# f32 {n} x {n} on each of {ranks} ranks (mpirun, the MPI route's library), wall ms per call of the "
          f"slowest rank, {rounds} rounds x {repeat} calls, median; load {os.getloadavg()[0]:.2f}, "
          f"{os.cpu_count()} cpus")
    rng = np.random.default_rng(n)
    for name in names:
        params, inputs, _ = KERNELS[name]
        prog = mpi.compile(program(name, n, ranks))
        ins = [rng.standard_normal((n, n)).astype(np.float32) * 3 for p in inputs for _ in range(ranks)]
        outs = [np.zeros(n if row else (n, n), np.float32) for p, row in params.items() if p not in inputs
                for _ in range(ranks)] + [np.zeros(1, np.float32) for _ in range(ranks)]
        times = [_median(prog.launch(ins, outs, repeat)) for _ in range(rounds)]
        print(f"{name:10s} {_median(times) * 1e3:8.3f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    from coll.tools.args import ArgumentParser
    from coll.tools.argtypes import count
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=count(16, 8192), default=1024)
    ap.add_argument("--rounds", type=count(1, 100), default=3)
    ap.add_argument("--repeat", type=count(1, 10000), default=7)
    ap.add_argument("--names", default=",".join(KERNELS), help=f"comma-separated, of: {', '.join(KERNELS)}")
    ap.add_argument("--mpi", action="store_true", help="under mpirun, the MPI route (see above)")
    ap.add_argument("--ranks", type=count(1, 8), default=2)
    a = ap.parse_args(argv)
    names = a.names.split(",")
    if bad := [x for x in names if x not in KERNELS]:
        ap.error(f"--names: unknown {', '.join(bad)}; expected some of {', '.join(KERNELS)}")
    if a.mpi:
        mpi_table(names, a.n, a.ranks, a.rounds, a.repeat)
    else:
        table(names, a.n, a.rounds, a.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
