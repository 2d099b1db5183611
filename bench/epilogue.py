"""A collective with its epilogue: all_reduce, then a residual add and
RMSNorm (the fused op vLLM and TensorRT-LLM hand-write), on CPU-simulated
devices, with the epilogue fused into the collective's tiles
(lowering/cpu/epilogue.py, the default) and not (`epilogues="off"`), in
one run, interleaved round by round; the outputs compared bit for bit.

    python bench/epilogue.py [--devices 8] [--mib 1 4 16 64] [--strategies auto,twoshot,ring]
                             [--rounds 3] [--repeat 5] [--backend cpu|mpi]

With --backend=mpi (a rank per device; use --devices 2-4 and strategies
that need no peer access, e.g. auto,ring), fused is coll-mpi-overlap
forced on (`epilogues="on"`; lowering/mpi/overlap.py: the epilogue in
tiles of rows among the collective's messages, each tile once the
collective has finished its rows); the default, auto, fuses where the
cost model predicts it pays: columns `predicted` (its unfused over fused
time, coll-spmd-to-mpi's prediction, analysis/overlap.py) beside the
measured one, and `auto` (which the default builds, overlap.py `pays`).

The program is the SPMD function a frontend leaves (`program`): the
all_reduce writes a buffer of the function's own (memref.alloc, as
bufferization makes it), z = y + residual (the next residual, a result),
ss = sum(z^2) over each row, out = z * rsqrt(ss / H + eps) * gamma.
Fused, that buffer shrinks to one tile and is never written to memory;
unfused, it is allocated, written, and read back by the epilogue. Column
`unfused (result an argument)` times the unfused program with y a result
of the function instead (no allocation: what is left is the fusion's
cache reuse). Wall ms per call, the best of --repeat, the median over
rounds; rows of 4096 f32 (16 KiB).
"""
import statistics
import sys

import numpy as np

H = 4096


def program(devices: int, rows: int, h: int = H, dtype: str = "f32", result_argument: bool = False) -> str:
    """The SPMD function @step(x, r, gamma, z, out) (and y, with
    `result_argument`): y = all_reduce(x); z = y + r; out = RMSNorm(z) * gamma."""
    T, R = f"memref<{rows}x{h}x{dtype}>", f"memref<{rows}x{dtype}>"
    devs = ", ".join(map(str, range(devices)))
    y_arg, y_alloc, y_free = (f", %y: {T}", "", "") if result_argument else (
        "", f"  %y = memref.alloc() : {T}\n", f"  memref.dealloc %y : {T}\n")
    return f"""#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
module attributes {{coll.peer_access}} {{
func.func @step(%x: {T}, %r: {T}, %g: memref<{h}x{dtype}>, %z: {T}, %out: {T}{y_arg}) attributes {{coll.ranks = {devices} : i64}} {{
{y_alloc}  %t = "coll.all_reduce"(%x, %y) {{devices = array<i64: {devs}>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}} : ({T}, {T}) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}} ins(%y, %r : {T}, {T}) outs(%z : {T}) {{
  ^bb0(%a: {dtype}, %b: {dtype}, %o: {dtype}):
    %s = arith.addf %a, %b : {dtype}
    linalg.yield %s : {dtype}
  }}
  %ss = memref.alloc() : {R}
  %zero = arith.constant 0.0 : {dtype}
  linalg.fill ins(%zero : {dtype}) outs(%ss : {R})
  linalg.generic {{indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}} ins(%z : {T}) outs(%ss : {R}) {{
  ^bb0(%a: {dtype}, %acc: {dtype}):
    %sq = arith.mulf %a, %a : {dtype}
    %s = arith.addf %acc, %sq : {dtype}
    linalg.yield %s : {dtype}
  }}
  %hinv = arith.constant {1.0 / h} : {dtype}
  %eps = arith.constant 1.0e-6 : {dtype}
  linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}} outs(%ss : {R}) {{
  ^bb0(%s: {dtype}):
    %m = arith.mulf %s, %hinv : {dtype}
    %e = arith.addf %m, %eps : {dtype}
    %q = math.rsqrt %e : {dtype}
    linalg.yield %q : {dtype}
  }}
  linalg.generic {{indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}} ins(%z, %ss, %g : {T}, {R}, memref<{h}x{dtype}>) outs(%out : {T}) {{
  ^bb0(%a: {dtype}, %q: {dtype}, %w: {dtype}, %o: {dtype}):
    %n = arith.mulf %a, %q : {dtype}
    %v = arith.mulf %n, %w : {dtype}
    linalg.yield %v : {dtype}
  }}
  memref.dealloc %ss : {R}
{y_free}  return
}}
}}
"""


def inputs(devices: int, rows: int, h: int = H, seed: int = 0) -> list[np.ndarray]:
    """x_0..x_{N-1}, r_0.., gamma_0.. (the global view's argument order)."""
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal((rows, h), dtype=np.float32) for _ in range(2 * devices)]
    return xs + [rng.standard_normal(h, dtype=np.float32) for _ in range(devices)]


def reference(devices: int, ins: list[np.ndarray]) -> list[np.ndarray]:
    """z_0.., out_0.. in numpy (the sum in device order, as coll sums)."""
    xs, rs, gs = ins[:devices], ins[devices:2 * devices], ins[2 * devices:]
    y = xs[0]
    for x in xs[1:]:
        y = y + x
    h = xs[0].shape[1]
    zs = [y + r for r in rs]
    outs = [z * (np.float32(1) / np.sqrt((z * z).sum(1, keepdims=True, dtype=np.float32) * np.float32(1.0 / h)
                                         + np.float32(1e-6))) * g for z, g in zip(zs, gs)]
    return zs + outs


def main(argv: list[str] | None = None) -> int:
    from coll import api
    from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
    from coll.tools.argtypes import count
    p = ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--devices", type=count(1, 64), default=8)
    p.add_argument("--mib", type=count(1, 1024), nargs="+", default=[1, 4, 16, 64], help="MiB per device")
    p.add_argument("--strategies", default="auto,twoshot,ring")
    p.add_argument("--rounds", type=count(1), default=3)
    p.add_argument("--repeat", type=count(1), default=5)
    p.add_argument("--backend", choices=("cpu", "mpi"), default="cpu")
    a = p.parse_args(argv)
    from coll.collectives import AllReduce
    known = ("auto",) + AllReduce.STRATEGIES
    bad = [s for s in a.strategies.split(",") if s not in known]
    if bad:
        p.error(f"--strategies: unknown strategy {bad[0]!r}; expected some of {', '.join(known)}")
    n = a.devices
    where = f"{n} CPU-simulated devices" if a.backend == "cpu" else f"{n} MPI ranks"
    print(f"all_reduce + residual + RMSNorm, {where}, f32 rows of {H}; wall ms per call")
    mpi = a.backend == "mpi"
    print("| MiB/device | strategy | fused | unfused | unfused (result an argument) | unfused/fused | "
          + ("predicted | auto | " if mpi else "") + "bitwise |")
    print("| --- " * (9 if mpi else 7) + "|")
    failed = False
    for mib in a.mib:
        rows = mib * (1 << 20) // (4 * H)
        ins = inputs(n, rows)
        for s in a.strategies.split(","):
            on = {"epilogues": "on"}  # (mpi's default fuses only where the model predicts it pays)
            progs = {"fused": api.compile(program(n, rows), a.backend, strategy=s, **on),
                     "unfused": api.compile(program(n, rows), a.backend, strategy=s, epilogues="off"),
                     "argument": api.compile(program(n, rows, result_argument=True), a.backend, strategy=s,
                                             epilogues="off")}
            outs = {k: [np.empty((rows, H), np.float32) for _ in range((3 if k == "argument" else 2) * n)]
                    for k in progs}
            times: dict[str, list[float]] = {k: [] for k in progs}
            for _ in range(a.rounds):
                for k, prog in progs.items():
                    times[k].append(min(prog.time(ins, outs[k], a.repeat)))
            same = all(np.array_equal(u, f) for u, f in zip(outs["unfused"], outs["fused"])) and all(
                np.array_equal(u, f) for u, f in zip(outs["argument"][:2 * n], outs["fused"]))
            ok = same and all(np.allclose(o, r, rtol=1e-4, atol=1e-4)
                              for o, r in zip(outs["fused"], reference(n, ins)))
            failed |= not ok
            med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
            model = ""
            if mpi:
                from coll.lowering.mpi import _cores
                from coll.lowering.mpi.overlap import pays
                from coll.lowering.mpi.to_mpi import overlap_predictions
                [pred] = overlap_predictions(program(n, rows), s)
                model = f"{pred.whole / pred.tiles:.2f}x | {'fused' if pays(pred, n, _cores()) else 'unfused'} | "
            print(f"| {mib} | {s} | {med['fused']:.2f} | {med['unfused']:.2f} | {med['argument']:.2f} | "
                  f"{med['unfused'] / med['fused']:.2f}x | {model}{'yes' if same else 'NO'}{'' if ok else ' FAIL'} |",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
