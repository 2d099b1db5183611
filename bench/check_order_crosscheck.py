"""The long cross-check of coll-check-order against the element-by-element
ground truth of tests/unit/order_oracle.py (the test suite runs 300).

  python bench/check_order_crosscheck.py [--count 10000] [--seed 0] [--ring 64]

Prints the totals; exits 1 on any miss or false alarm, with its seed.
`--ring N` instead times coll-check-order on the ring lowering of an
N-device allreduce (N=64: about 24,000 ops)."""
import os
import sys
import time

from mlir import ir

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "unit"))
from order_oracle import crosscheck  # noqa: E402

from coll.ir import (
    MAX_DEVICES,  # noqa: E402
    make_context,  # noqa: E402
)
from coll.passes.check_order import check_module  # noqa: E402
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count  # one validation for every script
from coll.tools.argtypes import seed as seed_type


def main(argv=None):
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=count(1, 10 ** 8), default=10000)
    p.add_argument("--seed", type=seed_type(), default=0)
    p.add_argument("--ring", type=count(0, MAX_DEVICES), default=0, help="N of a ring allreduce to check (0: none)")
    args = p.parse_args(argv)
    if args.ring:
        return ring(args.ring)
    t0, cpu0 = time.time(), time.process_time()
    totals = dict(programs=0, clean=0, flagged=0, ops=0, flagged_ops=0, misses=0, false_alarms=0)
    failed = []
    with make_context():
        for seed in range(args.seed, args.seed + args.count):
            r = crosscheck(seed, check_module, lambda text: ir.Module.parse(text).operation)
            bad, late = r["truth"]
            totals["programs"] += 1
            totals["clean" if not bad and not late else "flagged"] += 1
            totals["ops"] += r["ops"]
            totals["flagged_ops"] += len(bad | late)
            totals["misses"] += r["miss"]
            totals["false_alarms"] += r["false_alarm"]
            if r["miss"] or r["false_alarm"]:
                failed.append(seed)
    totals["seconds"] = round(time.time() - t0, 1)
    totals["cpu_seconds"] = round(time.process_time() - cpu0, 1)
    print(" ".join(f"{k}={v}" for k, v in totals.items()))
    if failed:
        print(f"failing seeds: {failed[:20]}")
        return 1
    return 0


def ring(n):
    from coll.ir.generate import all_reduce_module
    from coll.passes.lower_collectives import lower_collectives
    with make_context():
        m = ir.Module.parse(all_reduce_module(n, [1 << 20], "f32", "sum", strategy="ring"))
        lower_collectives(m.operation)
        ops = sum(len(list(f.regions[0].blocks[0].operations)) for f in m.body.operations)
        t0, cpu0 = time.time(), time.process_time()
        findings = check_module(m.operation)
        print(f"ring N={n}: {ops} ops checked in {time.time() - t0:.2f} s "
              f"({time.process_time() - cpu0:.2f} s CPU), {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
