"""coll-opt's start-up against the bindings' own: `coll-opt` on a one-op
file (parse, verify, print) and `python -c "import mlir.ir"`, interleaved
(this machine is noisy: each pair runs back to back), so the ratio is
measured side by side. Also `coll-opt --list-passes` (every pass module
loaded). Prints the medians and the ratios.

  python bench/startup.py [--rounds 15]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def _time(cmd):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"startup.py: error: {' '.join(map(str, cmd))} failed: {proc.stderr.strip()[:300]}")
    return time.perf_counter() - t0


def main(argv=None):
    p = argparse.ArgumentParser(prog="startup.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)
    if not 1 <= args.rounds <= 1000:
        p.error(f"--rounds must be in 1..1000, got {args.rounds}")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "f.mlir")
        Path(src).write_text("func.func @f() {\n  return\n}\n")
        cmds = {"import mlir.ir": [sys.executable, "-c", "import mlir.ir"],
                "coll-opt FILE": [str(BIN / "coll-opt"), src, "-o", os.devnull],
                "coll-opt --list-passes": [str(BIN / "coll-opt"), "--list-passes"]}
        for c in cmds.values():  # warm the file cache and .pyc files
            _time(c)
        times = {k: [] for k in cmds}
        for _ in range(args.rounds):
            for k, c in cmds.items():
                times[k].append(_time(c))
    base = statistics.median(times["import mlir.ir"])
    print(f"start-up, median of {args.rounds} interleaved rounds (load {os.getloadavg()[0]:.1f}):")
    for k, ts in times.items():
        m = statistics.median(ts)
        print(f"  {k:24s} {m * 1e3:8.1f} ms  {m / base:5.2f}x import mlir.ir")
    return 0


if __name__ == "__main__":
    sys.exit(main())
