"""Collective matmul under MPI: all_gather -> matmul and matmul ->
reduce_scatter (the SPMD functions a tensor-parallel layer leaves), with
the matmul in tiles of rows among the collective's messages
(coll-mpi-overlap forced on, `epilogues="on"`; lowering/mpi/overlap.py:
after an all_gather each tile once its rows have arrived, before a
reduce_scatter each tile only when the collective first sends or combines
its rows) and not (`epilogues="off"`), in one run, interleaved round by
round; the results compared with each other (`same bits`: OpenBLAS's
sgemm rounds a tile of rows differently from the whole matrix, so f32
contractions through it agree to rounding, not bit for bit) and with
numpy in float64 (`error`: the largest difference over the largest
element; FAIL above 1e-5). The default (auto) overlaps where the cost
model predicts it pays (lowering/mpi/overlap.py `pays`; column `auto`).

    python bench/collective_matmul.py [--ranks 2 3 4] [--rows 256 1024] [--k 1024] [--n 1024]
                                      [--strategies auto,ring] [--rounds 3] [--repeat 5]

Columns: wall ms per call (the best of --repeat, the median over rounds),
the collective alone (the same all_gather or reduce_scatter without the
matmul) and the matmul alone (its ms in the unfused program less the
collective's), what overlap can save at most (the smaller of the two,
min(collective, matmul)), what it saved, the measured unfused/fused
beside the cost model's (`predicted`: its unfused over fused time,
coll-spmd-to-mpi's prediction, analysis/overlap.py), and which program
the default (auto) builds by it.
`--rows`: the matmul's rows per rank (f32; k x n weights on every rank).
"""
import statistics
import sys

import numpy as np


def _ranks(n: int) -> str:
    return ", ".join(map(str, range(n)))


def gather_matmul(n: int, rows: int, k: int, m: int, matmul: bool = True) -> str:
    """@step(x, w, c): g = all_gather(x) (rows per rank), c = g @ w."""
    X, G, W, C = (f"memref<{rows}x{k}xf32>", f"memref<{n * rows}x{k}xf32>", f"memref<{k}x{m}xf32>",
                  f"memref<{n * rows}x{m}xf32>")
    body = (f"""  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : {C})
  linalg.matmul ins(%g, %w : {G}, {W}) outs(%c : {C})
  memref.dealloc %g : {G}
""" if matmul else "")
    out = f"%c: {C}" if matmul else f"%g: {G}"
    alloc = f"  %g = memref.alloc() : {G}\n" if matmul else ""
    return f"""module {{
func.func @step(%x: {X}, %w: {W}, {out}) attributes {{coll.ranks = {n} : i64}} {{
{alloc}  %t = "coll.all_gather"(%x, %g) {{devices = array<i64: {_ranks(n)}>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>}} : ({X}, {G}) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
{body}  return
}}
}}
"""


def matmul_scatter(n: int, rows: int, k: int, m: int, matmul: bool = True) -> str:
    """@step(a, w, y): p = a @ w (rows x m a rank), y = reduce_scatter(p)."""
    A, W, P, Y = (f"memref<{rows}x{k}xf32>", f"memref<{k}x{m}xf32>", f"memref<{rows}x{m}xf32>",
                  f"memref<{rows // n}x{m}xf32>")
    head = (f"""  %p = memref.alloc() : {P}
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%p : {P})
  linalg.matmul ins(%a, %w : {A}, {W}) outs(%p : {P})
""" if matmul else "")
    args = f"%a: {A}, %w: {W}, %y: {Y}" if matmul else f"%p: {P}, %w: {W}, %y: {Y}"
    tail = f"  memref.dealloc %p : {P}\n" if matmul else ""
    return f"""module {{
func.func @step({args}) attributes {{coll.ranks = {n} : i64}} {{
{head}  %t = "coll.reduce_scatter"(%p, %y) {{devices = array<i64: {_ranks(n)}>, kind = "sum", scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>}} : ({P}, {Y}) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
{tail}  return
}}
}}
"""


def inputs(n: int, rows: int, k: int, m: int, seed: int = 0,
           exact: bool = False) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(x or a per rank, w per rank): standard normal, or (`exact`) small
    integers, whose sums are exact in any order."""
    rng = np.random.default_rng(seed)
    if exact:
        return ([rng.integers(-4, 4, (rows, k)).astype(np.float32) for _ in range(n)],
                [rng.integers(-4, 4, (k, m)).astype(np.float32) for _ in range(n)])
    return ([rng.standard_normal((rows, k), dtype=np.float32) for _ in range(n)],
            [rng.standard_normal((k, m), dtype=np.float32) for _ in range(n)])


def main(argv: list[str] | None = None) -> int:
    from coll import api
    from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
    from coll.tools.argtypes import count
    p = ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=count(2, 8), nargs="+", default=[2, 3, 4])
    p.add_argument("--rows", type=count(1, 1 << 16), nargs="+", default=[256, 1024])
    p.add_argument("--k", type=count(1, 1 << 14), default=1024)
    p.add_argument("--n", type=count(1, 1 << 14), default=1024)
    p.add_argument("--strategies", default="auto,ring")
    p.add_argument("--rounds", type=count(1), default=3)
    p.add_argument("--repeat", type=count(1), default=5)
    a = p.parse_args(argv)
    for n in a.ranks:
        for rows in a.rows:
            if rows < n:
                p.error(f"--rows {rows} is fewer than --ranks {n}: a reduce_scatter's rows split evenly")
    from coll.collectives import AllGather, ReduceScatter
    for s in a.strategies.split(","):
        if s != "auto" and (s not in AllGather.STRATEGIES or s not in ReduceScatter.STRATEGIES):
            p.error(f"--strategies: {s!r} is not a strategy of both all_gather and reduce_scatter")
    k, m = a.k, a.n
    print(f"collective matmul under MPI, f32, k = {k}, n = {m}; wall ms per call")
    from coll.lowering.mpi import _cores
    from coll.lowering.mpi.overlap import pays
    from coll.lowering.mpi.to_mpi import overlap_predictions
    cores = _cores()
    print("| program | ranks | rows/rank | strategy | fused | unfused | collective | matmul | "
          "at most saved | saved | unfused/fused | predicted | auto | same bits | error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    failed = False
    for n in a.ranks:
        for rows in a.rows:
            rows -= rows % n  # (a reduce_scatter's rows split evenly)
            xs, ws = inputs(n, rows, k, m)
            w = ws[0]
            ws = [w] * n
            for name, make in (("all_gather->matmul", gather_matmul), ("matmul->reduce_scatter", matmul_scatter)):
                for s in a.strategies.split(","):
                    text = make(n, rows, k, m)
                    [pred] = overlap_predictions(text, s)
                    progs = {"fused": api.compile(text, "mpi", strategy=s, epilogues="on"),
                             "unfused": api.compile(text, "mpi", strategy=s, epilogues="off"),
                             "collective": api.compile(make(n, rows, k, m, matmul=False), "mpi", strategy=s)}
                    out_rows = {"all_gather->matmul": n * rows, "matmul->reduce_scatter": rows // n}[name]
                    shape = (out_rows, m) if name.endswith("matmul") else (rows // n, m)
                    outs = {key: [np.empty(shape if key != "collective" or name.endswith("scatter")
                                           else (n * rows, k), np.float32) for _ in range(n)] for key in progs}
                    coll_ins = xs + ws if name.startswith("all_gather") else [x @ w for x in xs] + ws
                    times: dict[str, list[float]] = {key: [] for key in progs}
                    for _ in range(a.rounds):
                        for key, prog in progs.items():
                            ins = coll_ins if key == "collective" else xs + ws
                            times[key].append(min(prog.time(ins, outs[key], a.repeat)))
                    w64 = w.astype(np.float64)
                    if name.startswith("all_gather"):
                        want = [np.concatenate(xs).astype(np.float64) @ w64] * n
                    else:
                        want = np.split(sum(x.astype(np.float64) @ w64 for x in xs), n)
                    same = all(np.array_equal(f, u) for f, u in zip(outs["fused"], outs["unfused"]))
                    err = max(float(np.abs(o - r).max() / np.abs(r).max())
                              for key in ("fused", "unfused") for o, r in zip(outs[key], want))
                    ok = err <= 1e-5
                    failed |= not ok
                    med = {key: statistics.median(v) * 1e3 for key, v in times.items()}
                    mm = max(med["unfused"] - med["collective"], 0.0)
                    print(f"| {name} | {n} | {rows} | {s} | {med['fused']:.2f} | {med['unfused']:.2f} | "
                          f"{med['collective']:.2f} | {mm:.2f} | {min(mm, med['collective']):.2f} | "
                          f"{med['unfused'] - med['fused']:.2f} | {med['unfused'] / med['fused']:.2f}x | "
                          f"{pred.whole / pred.tiles:.2f}x | {'fused' if pays(pred, n, cores) else 'unfused'} | "
                          f"{'yes' if same else 'no'} | "
                          f"{err:.1e}{'' if ok else ' FAIL'} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
