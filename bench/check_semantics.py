"""Time of coll-check-semantics on lowered programs (not a timed test).

Targets (issue 13): N = 64 ring checked in under 5 s, N = 256 in under 60 s.
The lowering is timed apart: only the check counts.

  python bench/check_semantics.py [--n 64 256] [--strategy ring] [--numel 1048576]
"""
import argparse
import time

from mlir import ir

from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.passes.check_semantics import check_module
from coll.passes.lower_all_reduce import lower_all_reduce


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--strategy", nargs="+", default=["ring"])
    ap.add_argument("--numel", type=int, default=1 << 20)
    args = ap.parse_args()
    with make_context(), ir.Location.unknown():
        for strategy in args.strategy:
            for n in args.n:
                m = ir.Module.parse(all_reduce_module(n, [args.numel], "f32", "sum", strategy=strategy))
                t0 = time.perf_counter()
                lower_all_reduce(m.operation)
                t1 = time.perf_counter()
                findings = check_module(m.operation)
                t2 = time.perf_counter()
                assert not findings, findings[0][1]
                print(f"{strategy:8} N={n:4} numel={args.numel}: lowered in {t1 - t0:6.2f} s, "
                      f"checked in {t2 - t1:6.2f} s")


if __name__ == "__main__":
    main()
