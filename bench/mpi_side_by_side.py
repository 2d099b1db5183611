"""MPI side by side: coll's MPI back end (every strategy, and `auto`)
against MPI_Allreduce (upstream's mpi.allreduce, and mpi4py's) and
torch.distributed's gloo, in one run, f32 sum, with the columns of
execution/measure.py (time min/median/max, algbw, busbw, check).

  python bench/mpi_side_by_side.py [--ranks 2 4] [--kib 4 16 64 256 1024 4096 16384 65536]
                                   [--repeat 10] [--torch-python PY | --setup-torch] [--json out.json]

Per group size N: one mpirun per size runs coll's programs and upstream's
MPI_Allreduce interleaved (execution/mpi.py launch: each after a barrier,
the slowest rank's time per call); then one mpirun of mpi4py's
MPI_Allreduce (bench/mpi4py_worker.py) and one gloo job of N processes
(bench/gloo_worker.py) over every size. Sizes under 1 MiB are timed 16
calls in a row per run (bench/mpi_run.py's rule). Every result is
checked. Per point: each program's row, its time over the fastest's, and
whether `auto` is within 10% of the fastest coll strategy.

mpi4py is the `bench` extra of pyproject.toml (pinned there); the script
installs it into this environment when it is missing. gloo needs torch,
which the project does not depend on: a Python with torch is taken from
--torch-python, else `.venv-torch/bin/python` in the repository (made by
--setup-torch: a separate venv with TORCH_PIN), else the gloo column is
skipped with the reason.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mpi_run  # noqa: E402 - bench/: the MPI_Allreduce module of mpi_run.py

from coll.collectives import AllReduce
from coll.execution import check
from coll.execution.measure import Measurement, human_size, seconds
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import mpi
from coll.tools.args import ArgumentParser
from coll.tools.argtypes import count, output_path  # one validation for every script

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
TORCH_VENV = ROOT / ".venv-torch"
TORCH_PIN = ("torch==2.13.0", "numpy==2.4.6")  # the gloo environment (CPU build of torch)
STRATEGIES = AllReduce.runnable(())  # ranks share no memory: no peer strategies
MAX_RANKS = 4 * os.cpu_count()


def bench_extra():
    """The `bench` extra's requirements, from pyproject.toml (pinned there)."""
    import tomllib
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]["bench"]


def ensure_mpi4py():
    """(True, '') once mpi4py imports, installing the `bench` extra's pin if
    needed; else (False, why)."""
    try:
        import mpi4py  # noqa: F401
        return True, ""
    except ImportError:
        pass
    pins = bench_extra()
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", *pins], capture_output=True, text=True)
    if r.returncode:
        return False, f"could not install {' '.join(pins)}: {r.stderr.strip().splitlines()[-1:]}"
    return True, ""


def torch_python(given, setup):
    """(the Python of the gloo environment, or None, why not)."""
    if given:
        return (given, "") if os.path.exists(given) else (None, f"--torch-python {given} does not exist")
    py = TORCH_VENV / "bin" / "python"
    if setup and not py.exists():
        print(f"making {TORCH_VENV} with {' '.join(TORCH_PIN)} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(TORCH_VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *TORCH_PIN], check=True)
    if not py.exists():
        return None, f"no Python with torch (give --torch-python, or make {TORCH_VENV} with --setup-torch)"
    return str(py), ""


def calls_for(kib):
    return 16 if kib < 1024 else 1


def coll_point(n, kib, repeat):
    """{program: (times, wrong)} of coll's strategies, auto and upstream's
    MPI_Allreduce at one size, one mpirun (interleaved)."""
    numel = kib * 1024 // 4
    with make_context():
        text = all_reduce_module(n, [numel], "f32", "sum")
    from mlir import ir
    with make_context():
        problem = check.describe(ir.Module.parse(text))
    inputs = check.make_inputs(problem, n)
    timeout = 120 + numel * n * 1e-6 * 4 * repeat
    names = [*STRATEGIES, "auto", "MPI_Allreduce (mpi dialect)"]
    progs = [mpi.compile(text, strategy=s, timeout=timeout) for s in STRATEGIES]
    progs.append(mpi.compile(text, strategy="auto", timeout=timeout))
    progs.append(mpi.compile(mpi_run.mpi_allreduce_module(n, numel), timeout=timeout))
    runs = [(p, inputs, check.make_outputs(problem)) for p in progs]
    times = mpi.launch(runs, repeat, calls=calls_for(kib))
    out = {}
    for name, p, (_, _, ys), ts in zip(names, progs, runs, times):
        ok, _ = check.check(problem, inputs, ys)
        label = f"auto ({p.strategies[0]})" if name == "auto" and p.strategies else name
        out[label] = (ts, 0 if ok else -1)
    return out


def foreign(kind, n, kibs, repeat, python, warmup=2):
    """{kib: (times, wrong)} of mpi4py's or gloo's allreduce over every size,
    one job of n processes."""
    numels = [k * 1024 // 4 for k in kibs]
    job = {"numels": numels, "repeat": repeat, "warmup": warmup,
           "calls": {str(k * 1024 // 4): calls_for(k) for k in kibs}}
    with tempfile.TemporaryDirectory(prefix="coll-side-") as tmp:
        spec, result = Path(tmp) / "job.json", Path(tmp) / "out.json"
        spec.write_text(json.dumps(job))
        env = dict(os.environ, PYTHONPATH=str(BENCH))
        if kind == "mpi4py":
            from coll.lowering.mpi.toolchain import find
            found = find()
            cmd = mpi.mpirun_command(found, n) + [python, str(BENCH / "mpi4py_worker.py"), str(spec), str(result)]
            env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")  # as coll's runtime (execution/mpi.py)
        else:
            cmd = [python, str(BENCH / "gloo_worker.py"), str(spec), str(result), str(n)]
        timeout = 300 + sum(numels) * n * 4e-6 * repeat
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=timeout)
        if r.returncode or not result.exists():
            raise RuntimeError(f"{kind} job failed (exit {r.returncode}): {(r.stdout + r.stderr).strip()[-400:]}")
        doc = json.loads(result.read_text())
    return doc["library"], {k: (doc["sizes"][str(k * 1024 // 4)]["times"], doc["sizes"][str(k * 1024 // 4)]["wrong"])
                            for k in kibs}


def judge(n, kib, programs):
    """Rows of one point: {program: Measurement}, the fastest coll strategy,
    and whether auto is within 10% of it."""
    size = kib * 1024
    ms = {}
    for name, (times, wrong) in programs.items():
        ms[name] = Measurement("all_reduce", n, size, size // 4, list(times), ok=wrong == 0,
                               wrong=None if wrong < 0 else wrong, strategy=name)
    coll = {s: ms[s].median for s in STRATEGIES}
    fastest = min(coll, key=coll.get)
    auto = next(k for k in ms if k.startswith("auto"))
    return ms, fastest, ms[auto].median <= 1.1 * coll[fastest]


HEADER = (f"{'N':>2} {'size':>10}  {'program':<28} {'time min':>11} {'median':>11} {'max':>11} "
          f"{'algbw':>11} {'busbw':>11} {'/fastest':>8}  check")


def rows(n, kib, ms):
    best = min(m.median for m in ms.values())
    for name, m in ms.items():
        yield (f"{n:>2} {human_size(kib * 1024):>10}  {name:<28} {seconds(m.min):>11} {seconds(m.median):>11} "
               f"{seconds(m.max):>11} {m.algbw / 1e9:>6.2f} GB/s {m.busbw / 1e9:>6.2f} GB/s "
               f"{m.median / best:>8.2f}  {'ok' if m.ok else 'FAIL'}")


def main():
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=count(1, MAX_RANKS), nargs="+", default=[2, 4])
    ap.add_argument("--kib", type=count(1, mpi_run.MAX_KIB), nargs="+", default=[4, 16, 64, 256, 1024, 4096, 16384, 65536])
    ap.add_argument("--repeat", type=count(1, 10 ** 6), default=10, help="timed runs per program and size (default 10)")
    ap.add_argument("--torch-python", help="a Python with torch, for the gloo column")
    ap.add_argument("--setup-torch", action="store_true", help=f"make {TORCH_VENV.name}/ (torch, CPU) if missing")
    ap.add_argument("--no-mpi4py", action="store_true", help="leave the mpi4py column out (no install)")
    ap.add_argument("--json", type=output_path(), help="write the points here")
    args = ap.parse_args()
    ok, why = mpi.available()
    if not ok:
        raise SystemExit(f"mpi_side_by_side: {why}")
    others = {}
    if args.no_mpi4py:
        print("mpi4py: left out (--no-mpi4py)")
    else:
        ok, why = ensure_mpi4py()
        if ok:
            others["mpi4py MPI_Allreduce"] = ("mpi4py", sys.executable)
        else:
            print(f"mpi4py: skipped: {why}")
    py, why = torch_python(args.torch_python, args.setup_torch)
    if py:
        others["gloo allreduce (torch)"] = ("gloo", py)
    else:
        print(f"gloo: skipped: {why}")
    t0 = time.time()
    print(f"load average before: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cpus); f32 sum, "
          f"{args.repeat} timed runs per program and size")
    points, within = [], 0
    for n in args.ranks:
        measured = {k: {} for k in args.kib}
        for name, (kind, python) in others.items():
            library, got = foreign(kind, n, args.kib, args.repeat, python)
            print(f"N = {n}: {name}: {library}", flush=True)
            for k, v in got.items():
                measured[k][name] = v
        print(HEADER)
        for kib in args.kib:
            programs = coll_point(n, kib, args.repeat)
            programs.update(measured[kib])
            ms, fastest, good = judge(n, kib, programs)
            within += good
            for line in rows(n, kib, ms):
                print(line)
            print(f"{'':>2} {'':>10}  fastest coll strategy {fastest}; auto within 10% of it: {'yes' if good else 'NO'}",
                  flush=True)
            points.append({"ranks": n, "kib": kib, "fastest": fastest, "auto_within_10": good,
                           "programs": {k: m.as_dict() for k, m in ms.items()}})
            if args.json:  # after every point: a run cut short keeps what it measured
                with open(args.json, "w") as f:
                    json.dump(points, f, indent=1)
    print(f"auto within 10% of the fastest coll strategy at {within}/{len(points)} points")
    for name in others:
        big = [p for p in points if p["kib"] >= 1024 and name in p["programs"]]
        if big:
            ratios = [min(p["programs"][s]["median_s"] for s in STRATEGIES) / p["programs"][name]["median_s"]
                      for p in big]
            print(f"at >= 1 MiB: coll's best strategy / {name}: {min(ratios):.2f} .. {max(ratios):.2f}")
    failed = [(p["ranks"], p["kib"], k) for p in points for k, m in p["programs"].items() if not m["ok"]]
    if failed:
        print(f"FAILED checks: {failed}")
    print(f"{len(points)} points in {time.time() - t0:.0f} s; load average after: {os.getloadavg()[0]:.1f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
