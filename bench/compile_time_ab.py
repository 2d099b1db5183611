"""Compile time of two checkouts side by side: the lowering and CPU-route
stages of bench/compile_time.py (coll-lower-collectives + verifier; coll-to-cpu
+ coll-cpu-to-llvm), each in a fresh child process, the two checkouts
interleaved round by round (the order alternating), so that a change of the
machine's load hits both alike. Times are CPU seconds of the child (user +
sys, getrusage): on a shared machine wall time includes waiting for a core.

  python bench/compile_time_ab.py --base /path/to/other/checkout [--n 256]
                                  [--strategy ring] [--numel 4096] [--rounds 5]
                                  [--to-cpu "tile=0 split=0"]

--to-cpu adds a stage: coll-to-cpu alone on the explicit module, with those
options (tile=0 split=0: every copy and combine through its rewrite, no
tiled loops and no pointer-level program).

Prints every round, then the median of each stage per checkout and the ratio
this / base (below 1: this checkout is faster). The explicit modules of the
two sides are compared too (the route stages must start from the same IR).
"""
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r'''
import json, resource, sys
sys.path.insert(0, sys.argv[1])
import compile_time as ct
stage, d = sys.argv[2], sys.argv[3]
if stage == "lower":
    out = ct.stage_lower(d, int(sys.argv[4]), sys.argv[5], int(sys.argv[6]))
elif stage == "route":
    out = ct.stage_route(d)
else:  # coll-to-cpu alone, with the options given
    import os
    from mlir import ir
    from coll.ir import make_context
    from coll.core.pipeline import run
    with make_context():
        m, _ = ct._parse(os.path.join(d, "explicit.mlir"))
        cpu = []
        _, secs, rss = ct._timed(lambda: run(m.operation, "builtin.module(coll-to-cpu{" + sys.argv[4] + "})"), cpu)
    out = {"to_cpu_cpu": cpu[0], "to_cpu_s": secs}
r = resource.getrusage(resource.RUSAGE_SELF)
out["process_cpu"] = r.ru_utime + r.ru_stime
print("RESULT " + json.dumps(out))
'''


def _pythonpath(checkout, work):
    folder = os.path.join(work, "path")
    os.makedirs(folder, exist_ok=True)
    link = os.path.join(folder, "coll")
    if not os.path.islink(link):
        os.symlink(os.path.realpath(checkout), link)
    return folder


def run_stage(checkout, work, stage, args):
    env = dict(os.environ, PYTHONPATH=_pythonpath(checkout, work))
    proc = subprocess.run([sys.executable, "-c", CHILD, os.path.join(checkout, "bench"), stage, work, *map(str, args)],
                          env=env, capture_output=True, text=True)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise SystemExit(f"{checkout} {stage} failed:\n{proc.stderr[-2000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


def main(argv=None):
    from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
    from coll.tools.argtypes import checkout, count
    side = checkout(os.path.join("bench", "compile_time.py"))  # its stages run in each checkout
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", required=True, type=side, help="the other checkout (e.g. a clone at the commit before)")
    p.add_argument("--this", default=HERE, type=side, help="the checkout measured against it (default: this one)")
    p.add_argument("--n", type=count(2, 4096), default=256)
    p.add_argument("--strategy", default="ring")
    p.add_argument("--numel", type=count(1), default=4096)
    p.add_argument("--rounds", type=count(1), default=5)
    p.add_argument("--to-cpu", default=None, help="options of a coll-to-cpu-only stage")
    args = p.parse_args(argv)
    sides = {"base": args.base, "this": args.this}
    cols = {"lower_cpu": "lower CPU s", "route_cpu": "route CPU s"}
    if args.to_cpu is not None:
        cols["to_cpu_cpu"] = "to-cpu CPU s"
    got = {s: {c: [] for c in cols} for s in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.rounds):
            order = list(sides) if k % 2 == 0 else list(sides)[::-1]
            for side in order:
                work = os.path.join(tmp, side)
                os.makedirs(work, exist_ok=True)
                low = run_stage(sides[side], work, "lower", (args.n, args.strategy, args.numel))
                extra = ""
                if args.to_cpu is not None:
                    alone = run_stage(sides[side], work, "to_cpu", (args.to_cpu,))
                    got[side]["to_cpu_cpu"].append(alone["to_cpu_cpu"])
                    extra = f", coll-to-cpu{{{args.to_cpu}}} {alone['to_cpu_cpu']:.2f} CPU s"
                route = run_stage(sides[side], work, "route", ())
                got[side]["lower_cpu"].append(low["lower_cpu"])
                got[side]["route_cpu"].append(route["route_cpu"])
                print(f"round {k + 1} {side}: lower {low['lower_cpu']:.2f} CPU s, route {route['route_cpu']:.2f} "
                      f"CPU s ({route['route_s']:.1f} s wall, {low['ops']} ops){extra}", flush=True)
        same = _digest(os.path.join(tmp, "base", "explicit.mlir")) == _digest(os.path.join(tmp, "this", "explicit.mlir"))
        same_llvm = _digest(os.path.join(tmp, "base", "llvm.mlir")) == _digest(os.path.join(tmp, "this", "llvm.mlir"))
    print(f"\nN={args.n} {args.strategy}, {args.numel} elements, {args.rounds} rounds, medians:")
    print(f"{'':16}{'base':>10}{'this':>10}{'this/base':>11}")
    for c, head in cols.items():
        a, b = statistics.median(got["base"][c]), statistics.median(got["this"][c])
        print(f"{head:16}{a:10.2f}{b:10.2f}{b / a:11.3f}")
    print(f"explicit IR identical: {same}; LLVM-dialect IR identical: {same_llvm}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
