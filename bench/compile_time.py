"""Compile-time benchmark of coll-lower-all-reduce (+ the verifier).

For each strategy and N: ops emitted, lowering+verification time, and time
per emitted op. Targets: N = 32 ring under 1 s; time per op within 2x
between N = 8 and N = 256 (cost linear in the IR written).

  python bench/compile_time.py [--max-n 256] [--json out.json]
"""
import argparse
import json
import time

from mlir import ir

from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.ir.verifier import verify
from coll.passes.lower_all_reduce import lower_all_reduce

STRATEGIES = ("naive", "ring", "all2all")


def count_ops(module):
    n = 0

    def visit(op):
        nonlocal n
        n += 1
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return n


def measure(n, strategy, numel):
    with make_context():
        m = ir.Module.parse(all_reduce_module(n, [numel], "f32", "sum", strategy=strategy))
        before = count_ops(m)
        t0 = time.perf_counter()
        lower_all_reduce(m.operation)
        findings = verify(m.operation)
        t1 = time.perf_counter()
        assert not findings, findings[:3]
        return count_ops(m) - before, t1 - t0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--max-n", type=int, default=256)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    ns = [n for n in (4, 8, 16, 32, 64, 128, 256) if n <= args.max_n]
    rows = []
    print(f"{'strategy':9} {'N':>4} {'ops':>9} {'time s':>8} {'us/op':>7}")
    for strategy in STRATEGIES:
        for n in ns:
            ops, secs = measure(n, strategy, 1 << 20)
            rows.append({"strategy": strategy, "n": n, "ops": ops, "seconds": secs})
            print(f"{strategy:9} {n:>4} {ops:>9} {secs:>8.3f} {secs / ops * 1e6:>7.2f}", flush=True)
    print()
    by = {(r["strategy"], r["n"]): r for r in rows}
    ring32 = by.get(("ring", 32))
    if ring32:
        ok = ring32["seconds"] < 1.0
        print(f"target: N=32 ring lowered+verified in {ring32['seconds']:.3f} s (< 1 s): {'ok' if ok else 'MISSED'}")
    for strategy in STRATEGIES:
        a, b = by.get((strategy, 8)), by.get((strategy, ns[-1]))
        if a and b and b is not a:
            ratio = (b["seconds"] / b["ops"]) / (a["seconds"] / a["ops"])
            ok = 0.5 <= ratio <= 2.0
            print(f"target: {strategy} time/op N={ns[-1]} vs N=8 = {ratio:.2f}x (within 2x): {'ok' if ok else 'MISSED'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
