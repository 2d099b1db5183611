"""Side by side with the peers: JAX's programs under XLA's CPU runtime and
under coll, and torch.distributed's gloo against coll's MPI back end.

  python bench/xla_side_by_side.py [--programs psum,all_gather,psum_scatter,all_to_all,ppermute_ring]
      [--kib 4 64 1024 16384 65536] [--repeat 10] [--rounds 2] [--backends cpu mpi]
      [--torch PYTHON] [--gloo-ranks 2 4] [--gloo-kib 4 1024 16384]

1. XLA against coll. Each program of bench/jax_programs.py (8 host
   devices, f32, KiB per device as given) runs under XLA (`f(*xs)` with
   the inputs already placed, to `block_until_ready`: dispatch, the 8
   device threads' collective and a fresh output, as a JAX user runs it),
   then the same StableHLO through coll on the CPU back end (8 simulated
   devices in one process), timed twice: the user's call (`prog.run(xs)`:
   the global arrays in, scattered to the devices' blocks, the compiled
   function, the results gathered into global arrays with the replica
   check: the region XLA's time covers) and the bare compiled function on
   preallocated buffers ("bare"); and on the MPI back end (8 processes
   under mpirun, each call after a barrier, the slowest rank: bare only, as
   a user's call there is one mpirun). Every measurement is its own process, in
   that order, `--rounds` times (interleaved: the three see the same
   machine); coll's outputs are checked against XLA's (bitwise on the
   collectives' small-integer data, within 1e-5 relative for the MLPs). Peak
   memory: the largest resident set of the measuring process (XLA, coll
   cpu) or of its largest rank (mpi), compile time included.
2. gloo against coll's MPI back end (only with --torch): all_reduce sum
   of f32 over 2 and 4 processes, gloo (torch.distributed, one process per
   rank, file rendezvous, a barrier before each call, the slowest rank's
   time) against coll's all_reduce (strategy auto) under mpirun, in turn.
   torch is not a dependency of coll; make its venv once (torch 2.13.0 for
   the CPU, as on this machine's package mirror):
       python3 -m venv /tmp/torch-venv
       /tmp/torch-venv/bin/pip install torch==2.13.0+cpu numpy
   and pass --torch /tmp/torch-venv/bin/python.

Times are medians of `--repeat` calls per round, then the median over
rounds; ratios are coll's time over the peer's (below 1: coll faster).
The machine's load average is printed with every row: on a shared machine
the numbers say what this run measured, under that load.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEVICES = 8
PROGRAMS = ("psum", "all_gather", "psum_scatter", "all_to_all", "ppermute_ring")
TIMEOUT = 1800


def _peak_mib(who=resource.RUSAGE_SELF):
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: KiB


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


# -- the measuring processes (each prints one JSON line) ----------------------

def xla_child(name, n, repeat, outdir):
    """XLA: export `name` for n elements per device, time it, keep its
    inputs and outputs for coll's check."""
    import time
    sys.path.insert(0, str(HERE))
    import jax_programs
    import numpy as np
    f, xs = jax_programs.placed(jax_programs.programs(n, DEVICES, [name])[name])
    Path(outdir, f"{name}.mlir").write_text(jax_programs.generic(f, xs))
    ys = f(*xs)
    ys = ys if isinstance(ys, (tuple, list)) else [ys]
    for y in ys:
        y.block_until_ready()
    np.savez(Path(outdir, f"{name}.npz"), **{f"x{i}": np.asarray(x) for i, x in enumerate(xs)},
             **{f"y{j}": np.asarray(y) for j, y in enumerate(ys)})
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f(*xs)
        (out[0] if isinstance(out, (tuple, list)) else out).block_until_ready()
        times.append(time.perf_counter() - t0)
    return {"seconds": _median(times), "peak_mib": _peak_mib()}


def coll_child(backend, name, repeat, outdir):
    """coll: the StableHLO XLA's child wrote, through coll on `backend`."""
    import numpy as np

    from coll.frontends import stablehlo
    from coll.frontends.run import global_arrays
    data = np.load(Path(outdir, f"{name}.npz"))
    prog = global_arrays.compile(Path(outdir, f"{name}.mlir").read_text(), stablehlo, backend=backend)
    xs = [data[f"x{i}"] for i in range(len(prog.inputs))]
    ys, times = prog.run(xs, repeat)
    # Bitwise on the collectives' exact data; the MLPs' f32 compute within 1e-5.
    worst = max(float(np.max(np.abs(y.astype(np.float64) - data[f"y{j}"]), initial=0.0))
                / (float(np.max(np.abs(data[f"y{j}"]), initial=0.0)) or 1.0) for j, y in enumerate(ys))
    same = worst <= 1e-5
    call = []
    if backend == "cpu":  # the user's call: global arrays in, global arrays out (on MPI each call is an mpirun)
        import time
        for _ in range(repeat):
            t0 = time.perf_counter()
            prog.run(xs)
            call.append(time.perf_counter() - t0)
    peak = max(_peak_mib(), _peak_mib(resource.RUSAGE_CHILDREN))
    return {"seconds": _median(times), "peak_mib": peak, "same": same, "strategies": prog.strategies,
            **({"call_seconds": _median(call)} if call else {})}


def gloo_child(ranks, n, repeat):
    """torch.distributed gloo all_reduce (sum, f32, n per rank) over `ranks`
    processes; runs in the torch venv (no coll, no numpy needed)."""
    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "times.json")
        mp.spawn(_gloo_rank, args=(ranks, n, repeat, str(Path(tmp, "rendezvous")), str(out)), nprocs=ranks)
        seconds = json.loads(out.read_text())
    return {"seconds": _median(seconds), "peak_mib": _peak_mib(resource.RUSAGE_CHILDREN)}


def _gloo_rank(rank, ranks, n, repeat, rendezvous, out):
    import time

    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=ranks)
    x = torch.full((n,), float(rank + 1))
    for _ in range(3):  # warm-up
        dist.all_reduce(x)
    times = []
    for _ in range(repeat):
        x.fill_(float(rank + 1))
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        times.append(time.perf_counter() - t0)
    assert float(x[0]) == ranks * (ranks + 1) / 2, "gloo's all_reduce is wrong"
    slowest = torch.tensor(times)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    if rank == 0:
        Path(out).write_text(json.dumps(slowest.tolist()))
    dist.destroy_process_group()


def coll_mpi_all_reduce(ranks, n, repeat):
    """coll's own all_reduce (strategy auto) over `ranks` processes."""
    import numpy as np

    from coll.ir import generate, make_context
    from coll.lowering import mpi
    with make_context():
        text = generate.collective_module("all_reduce", devices=ranks, shape=[n], dtype="f32")
    prog = mpi.compile(text)
    xs = [np.full(n, r + 1, np.float32) for r in range(ranks)]
    ys = [np.zeros(n, np.float32) for _ in range(ranks)]
    (times,) = mpi.launch([(prog, xs, ys)], repeat)
    assert all(np.array_equal(y, np.full(n, ranks * (ranks + 1) / 2, np.float32)) for y in ys)
    peak = max(_peak_mib(), _peak_mib(resource.RUSAGE_CHILDREN))
    return {"seconds": _median(times), "peak_mib": peak, "strategies": prog.strategies}


# -- the driver -----------------------------------------------------------------

def _measure(python, *args):
    """One measurement in its own process: its JSON line."""
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={DEVICES}", JAX_PLATFORMS="cpu")
    proc = subprocess.run([python, str(Path(__file__)), "--child", *map(str, args)], capture_output=True,
                          text=True, timeout=TIMEOUT, env=env)
    if proc.returncode:
        return {"error": (proc.stderr.strip().splitlines() or ["exit code %d" % proc.returncode])[-1][:200]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _ms(r):
    return f"{r['seconds'] * 1e3:.3f}" if "seconds" in r else "error"


def _ratio(ours, theirs):
    if "seconds" not in ours or "seconds" not in theirs:
        return "-"
    return f"{ours['seconds'] / theirs['seconds']:.2f}"


def _rounds(fns, rounds):
    """Each measurement `rounds` times, interleaved; per measurement the
    median time over rounds and the largest peak."""
    got = [[] for _ in fns]
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            got[k].append(fn())
    out = []
    for results in got:
        ok = [r for r in results if "seconds" in r]
        if not ok:
            out.append(results[0])
            continue
        merged = dict(ok[-1], seconds=_median([r["seconds"] for r in ok]),
                      peak_mib=max(r["peak_mib"] for r in ok))
        if all("call_seconds" in r for r in ok):
            merged["call_seconds"] = _median([r["call_seconds"] for r in ok])
        merged["same"] = all(r.get("same", True) for r in ok)
        out.append(merged)
    return out


def xla_table(args):
    print(f"## JAX programs: XLA's CPU runtime vs coll ({DEVICES} devices, f32, median ms per call, "
          "peak MiB; ratio = coll / XLA)\n")
    cols = ["program", "KiB/device", "load", "XLA ms", "XLA MiB"]
    for b in args.backends:
        cols += ([f"coll {b} call ms", "call / XLA", "call / bare"] if b == "cpu" else [])
        cols += [f"coll {b} bare ms", f"coll {b} MiB", "bare / XLA"]
    print("| " + " | ".join(cols) + " |")
    print("|" + " --- |" * len(cols))
    with tempfile.TemporaryDirectory(prefix="xla-side-by-side-") as tmp:
        for kib in args.kib:
            n = kib * 1024 // 4
            for name in args.programs:
                load = os.getloadavg()[0]
                fns = [lambda: _measure(sys.executable, "xla", name, n, args.repeat, tmp)]
                fns += [lambda b=b: _measure(sys.executable, "coll", b, name, args.repeat, tmp) for b in args.backends]
                xla, *ours = _rounds(fns, args.rounds)
                row = [name, str(kib), f"{load:.1f}", _ms(xla), f"{xla.get('peak_mib', 0):.0f}"]
                for b, r in zip(args.backends, ours):
                    flag = "" if r.get("same", True) else " (DIFFERS from XLA)"
                    if b == "cpu":
                        call = {"seconds": r["call_seconds"]} if "call_seconds" in r else {}
                        row += [_ms(call), _ratio(call, xla), _ratio(call, r)]
                    row += [_ms(r) + flag, f"{r.get('peak_mib', 0):.0f}", _ratio(r, xla)]
                print("| " + " | ".join(row) + " |", flush=True)
                for r in [xla] + ours:
                    if "error" in r:
                        print(f"  error: {r['error']}", flush=True)


def gloo_table(args):
    print("\n## all_reduce sum, f32: torch.distributed gloo vs coll's MPI back end (median ms per call, "
          "slowest rank; ratio = coll / gloo)\n")
    if not args.torch:
        print("skipped: no --torch PYTHON (a venv with torch 2.13.0; see this script's docstring)")
        return
    print("| ranks | KiB/rank | load | gloo ms | gloo MiB | coll mpi ms | coll MiB | coll strategy | coll / gloo |")
    print("|" + " --- |" * 9)
    for ranks in args.gloo_ranks:
        for kib in args.gloo_kib:
            n = kib * 1024 // 4
            load = os.getloadavg()[0]
            gloo, ours = _rounds([lambda: _measure(args.torch, "gloo", ranks, n, args.repeat),
                                  lambda: _measure(sys.executable, "coll-mpi", ranks, n, args.repeat)], args.rounds)
            row = [str(ranks), str(kib), f"{load:.1f}", _ms(gloo), f"{gloo.get('peak_mib', 0):.0f}", _ms(ours),
                   f"{ours.get('peak_mib', 0):.0f}", ",".join(ours.get("strategies", [])) or "-", _ratio(ours, gloo)]
            print("| " + " | ".join(row) + " |", flush=True)
            for r in (gloo, ours):
                if "error" in r:
                    print(f"  error: {r['error']}", flush=True)


def child(argv):
    what, rest = argv[0], argv[1:]
    if what == "xla":
        result = xla_child(rest[0], int(rest[1]), int(rest[2]), rest[3])
    elif what == "coll":
        result = coll_child(rest[0], rest[1], int(rest[2]), rest[3])
    elif what == "gloo":
        result = gloo_child(int(rest[0]), int(rest[1]), int(rest[2]))
    else:
        result = coll_mpi_all_reduce(int(rest[0]), int(rest[1]), int(rest[2]))
    print(json.dumps(result))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child(argv[1:])
    from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'; not in the gloo child
    from coll.tools.argtypes import count
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated, from bench/jax_programs.py")
    p.add_argument("--kib", type=count(1, 1 << 20), nargs="+", default=[4, 64, 1024, 16384, 65536], help="KiB per device")
    p.add_argument("--backends", nargs="+", default=["cpu", "mpi"], choices=["cpu", "mpi"])
    p.add_argument("--repeat", type=count(1), default=10, help="timed calls per measurement")
    p.add_argument("--rounds", type=count(1), default=2, help="interleaved rounds of every measurement")
    p.add_argument("--torch", default=None, help="python of a venv with torch (part 2)")
    p.add_argument("--gloo-ranks", type=count(1, 64), nargs="+", default=[2, 4])
    p.add_argument("--gloo-kib", type=count(1, 1 << 20), nargs="+", default=[4, 1024, 16384])
    p.add_argument("--skip-xla", action="store_true", help="part 2 only")
    args = p.parse_args(argv)
    args.programs = [x for x in args.programs.split(",") if x]
    sys.path.insert(0, str(HERE))
    import jax_programs
    known = jax_programs.NAMES
    if not args.programs or any(x not in known for x in args.programs):
        p.error(f"--programs must name programs of bench/jax_programs.py: {', '.join(known)}")
    if args.torch and not Path(args.torch).exists():
        p.error(f"--torch: no python at '{args.torch}'")
    print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores)\n")
    if not args.skip_xla:
        xla_table(args)
    gloo_table(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
