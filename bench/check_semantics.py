"""Time of coll-check-semantics on lowered programs (not a timed test).

Targets (issue 13): N = 64 ring checked in under 5 s, N = 256 in under 60 s,
for every collective (its ring strategy; all_to_all and permute have only direct). The
lowering is timed apart: only the check counts. The collectives are run
interleaved per N, so machine load hits them alike; each line prints the
check's time, its CPU time (what load does not inflate) and the ratio of
the time to the target.

  python bench/check_semantics.py [--n 64 256] [--op all_reduce ...] [--numel 1048576]
"""
import time

from mlir import ir

from coll.ir import (
    MAX_DEVICES,  # noqa: E402
    make_context,
)
from coll.ir.generate import collective_module
from coll.ir.ops import COLLECTIVE_OPS, OPS
from coll.passes.check_semantics import check_module
from coll.passes.lower_collectives import lower_collectives
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count  # one validation for every script

MAX_NUMEL = 1 << 28
TARGET = {64: 5.0, 256: 60.0}  # seconds


def form(op, n, numel):
    """(shape, strategy, attrs) of the benchmarked form of `op`: blocks
    along the leading axis, rooted ones from device 0; all_gather gathers
    numel / N per device, all_to_all moves one element per block. The
    check costs per piece, not per element, and so does the lowering
    (collectives/spec.py runs)."""
    names = OPS["coll." + op].STRATEGIES
    strategy = "ring" if "ring" in names else names[0]  # all_to_all and permute: direct only
    attrs = {"reduce_scatter": {"axis": 0}, "all_gather": {"axis": 0}, "reduce": {"root": 0},
             "broadcast": {"root": 0}, "all_to_all": {"split_axis": 0, "concat_axis": 0}}.get(op, {})
    shape = {"reduce_scatter": [n, numel // n], "all_gather": [numel // n], "all_to_all": [n, 1]}
    return shape.get(op, [numel]), strategy, attrs


def main():
    ops = [cls.NAME[len("coll."):] for cls in COLLECTIVE_OPS]
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=count(1, MAX_DEVICES), nargs="+", default=[64, 256])
    ap.add_argument("--op", nargs="+", default=ops, choices=ops)
    ap.add_argument("--numel", type=count(1, MAX_NUMEL), default=1 << 20)
    args = ap.parse_args()
    with make_context(), ir.Location.unknown():
        for n in args.n:
            for op in args.op:
                shape, strategy, attrs = form(op, n, args.numel)
                m = ir.Module.parse(collective_module(op, n, shape, "f32", strategy=strategy, **attrs))
                t0 = time.perf_counter()
                lower_collectives(m.operation)
                t1, c1 = time.perf_counter(), time.process_time()
                findings = check_module(m.operation)
                t2, c2 = time.perf_counter(), time.process_time()
                assert not findings, findings[0][1]
                target = TARGET.get(n)
                ratio = f"  {(t2 - t1) / target:5.2f} of the {target:.0f} s target" if target else ""
                print(f"{op:14} {strategy:6} N={n:4} {'x'.join(map(str, shape)):>10}: lowered in "
                      f"{t1 - t0:6.2f} s, checked in {t2 - t1:6.2f} s ({c2 - c1:6.2f} s CPU){ratio}",
                      flush=True)


if __name__ == "__main__":
    main()
