"""The lowering's worst shapes: time and peak memory of coll-lower-collectives.

Each case runs `coll-opt --coll-lower-collectives` on one generated
collective in its own child process and prints its wall time, its peak
resident memory (VmHWM of the child's own image) and what happened
(lowered, or refused by the op limit, passes/lower_collectives.py
MAX_OPS). The cases:

  issue     the shapes of issue 34: all_to_all split_axis 0, concat_axis 1
            on 2 devices at 300000x2 i8 (600 KB per device) and 32 MiB per
            device: one piece per row, refused before anything is built;
  huge      8 devices x 32 MiB f32 blocks of one piece (all_gather,
            reduce_scatter, all_to_all along the leading axis): lowered,
            the decomposition costs no memory per element;
  worst     one piece per row, at the most pieces the limit accepts times
            --fraction (all_to_all split 0 / concat 1, all_gather and
            reduce_scatter along the last axis, 2 devices): what an
            accepted worst shape costs;
  route     (not by default) `coll-run --backend=cpu --repeat 1`, the whole
            route to a run, of all_to_all split 1 / concat 0 on 4 devices at
            1024 x 1024 f32 (4 MiB per device, 1024 pieces per block): the
            back end pays per copy again.

  python bench/lowering_bounds.py [--fraction 0.1] [--only issue,huge,worst,route] [--timeout 600]
"""
import os
import subprocess
import sys
import tempfile
import time

from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.passes.lower_collectives import MAX_OPS
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import fraction, seconds  # one validation for every script

# TOOL ARGS..., then its peak resident memory (KiB), last on stderr: VmHWM
# of this process image (ru_maxrss keeps a forking parent's across exec).
PEAK = """import sys
from coll.tools import coll_opt, coll_run
tool = {"coll-opt": coll_opt, "coll-run": coll_run}[sys.argv.pop(1)]
try:
    tool.main()
    rc = 0
except SystemExit as e:
    rc = e.code or 0
sys.stdout.flush()
print(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")), file=sys.stderr)
sys.exit(rc)
"""


def lower_in_child(text, timeout, tool=("coll-opt", "--coll-lower-collectives", "-o", os.devnull)):
    """(outcome, seconds, peak MiB) of coll-lower-collectives (or `tool`:
    its name and arguments after the input file) on module `text`."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "m.mlir")
        with open(src, "w") as f:
            f.write(text)
        t0 = time.monotonic()
        try:
            r = subprocess.run([sys.executable, "-c", PEAK, tool[0], src, *tool[1:]],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"killed after {timeout:g} s", time.monotonic() - t0, None
        secs = time.monotonic() - t0
    lines = r.stderr.strip().splitlines()
    peak = int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else None
    if r.returncode == 0:
        return "lowered" if tool[0] == "coll-opt" else "ran, " + r.stdout.split()[-1], secs, peak
    said = next((l for l in lines if "error:" in l), "failed")
    return ("refused: op limit" if "above the limit" in said else said[-80:]), secs, peak


def cases(fraction):
    """[(group, op, n, shape, dtype, attrs)]."""
    out = [("issue", "all_to_all", 2, [300000, 2], "i8", dict(split_axis=0, concat_axis=1)),
           ("issue", "all_to_all", 2, [1 << 24, 2], "i8", dict(split_axis=0, concat_axis=1))]
    big = 1 << 23  # f32 elements: 32 MiB per device
    out += [("huge", "all_gather", 8, [big], "f32", dict(axis=0)),
            ("huge", "reduce_scatter", 8, [big], "f32", dict(axis=0)),
            ("huge", "all_to_all", 8, [big], "f32", dict(split_axis=0, concat_axis=0))]
    # Pieces per block p on 2 devices: the estimate is 16 p + 12 ops.
    p = max(1, int(fraction * (MAX_OPS - 12) / 16))
    out += [("worst", "all_to_all", 2, [2 * p, 2], "i8", dict(split_axis=0, concat_axis=1)),
            ("worst", "all_gather", 2, [p, 1], "i8", dict(axis=1)),
            ("worst", "reduce_scatter", 2, [p, 2], "i8", dict(axis=1)),
            ("route", "all_to_all", 4, [1024, 1024], "f32", dict(split_axis=1, concat_axis=0))]
    return out


def main(argv=None):
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fraction", type=fraction(), default=0.1,
                    help="the worst cases' pieces as a fraction of what the limit accepts (0 < F <= 1)")
    ap.add_argument("--only", default="issue,huge,worst", help="comma-separated groups (route: also)")
    ap.add_argument("--timeout", type=seconds(), default=600.0, help="seconds a case may take before it is killed")
    args = ap.parse_args(argv)
    groups = set(args.only.split(","))
    unknown = groups - {"issue", "huge", "worst", "route"}
    if unknown:
        ap.error(f"--only: unknown group(s) {', '.join(sorted(unknown))}; expected issue, huge, worst, route")
    print(f"coll-lower-collectives (route: coll-run --backend=cpu), one child process per case (op limit {MAX_OPS})")
    print(f"{'case':6} {'collective':15} {'N':>2} {'shape':>12} {'type':4} {'axes':22} {'bytes/dev':>10} "
          f"{'outcome':18} {'time':>8} {'peak':>9}")
    for group, op, n, shape, dtype, attrs in cases(args.fraction):
        if group not in groups:
            continue
        with make_context():
            text = collective_module(op, n, shape, dtype, **attrs)
        tool = ("coll-run", "--backend=cpu", "--repeat", "1") if group == "route" else \
            ("coll-opt", "--coll-lower-collectives", "-o", os.devnull)
        outcome, secs, peak = lower_in_child(text, args.timeout, tool)
        nbytes = {"i8": 1, "f32": 4}[dtype]
        for d in shape:
            nbytes *= d
        axes = " ".join(f"{k}={v}" for k, v in attrs.items())
        mem = f"{peak:7.0f} MiB" if peak is not None else "       -"
        print(f"{group:6} {op:15} {n:2} {'x'.join(map(str, shape)):>12} {dtype:4} {axes:22} "
              f"{nbytes / 2**20:6.2f} MiB {outcome:18} {secs:6.2f} s {mem}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
