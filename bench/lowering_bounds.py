"""The lowering's worst shapes: time, peak memory and ops, lowered and run.

Each case runs one tool on one generated collective in its own child
process and prints its wall time, its peak resident memory and what
happened (lowered with so many coll.copy/coll.combine ops, ran and checked
against numpy, or refused by the op limit, passes/lower_collectives.py
MAX_OPS). Peak memory is the child's own VmHWM (the tool's process image)
and, for coll-run, the largest of its children's ru_maxrss as well (the
MPI ranks under mpirun). Every block is one strided view
(collectives/emit.py), so the ops do not grow with the rows. The cases:

  issue     the shapes of issue 34: all_to_all split_axis 0, concat_axis 1
            on 2 devices at 300000x2 i8 (600 KB per device) and 32 MiB per
            device: one copy per pair of devices (it was one per row);
  huge      8 devices x 32 MiB f32 blocks of one piece (all_gather,
            reduce_scatter, all_to_all along the leading axis);
  worst     the most rows per block: --rows rows of 1 or 2 bytes
            (all_to_all split 0 / concat 1 on 4 devices, all_gather and
            reduce_scatter along the last axis on 2 devices), lowered;
  many      the op limit: 720 devices, refused before anything is built;
  run       `coll-run --repeat 1` on the CPU and under MPI (when mpirun is
            here) of issue 34's all_to_all on 2 and 4 devices and of the
            worst shapes: the whole route to a checked run;
  gpu       coll-to-gpu of the worst shapes (no GPU needed): each strided
            block one launch of a strided kernel, so the launches and
            memcpys do not grow with the rows either;
  route     (not by default) `coll-run --backend=cpu --repeat 1` of
            all_to_all split 1 / concat 0 on 4 devices at 1024 x 1024 f32
            (4 MiB per device, 1024 rows per block).

  python bench/lowering_bounds.py [--rows 4194304] [--only issue,huge,worst,many,gpu,run,route] [--timeout 600]
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.passes.lower_collectives import MAX_OPS
from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
from coll.tools.argtypes import count, seconds  # one validation for every script

GROUPS = ("issue", "huge", "worst", "many", "gpu", "run", "route")
TO_GPU = "--pass-pipeline=builtin.module(coll-lower-collectives,coll-to-gpu{graph=false})"
# TOOL ARGS..., then two lines last on stderr: the peak resident memory (KiB)
# of this process image (VmHWM: ru_maxrss keeps a forking parent's across
# exec) and the largest of its children's (ru_maxrss, KiB: mpirun's ranks).
PEAK = """import resource, sys
from coll.tools import coll_opt, coll_run
tool = {"coll-opt": coll_opt, "coll-run": coll_run}[sys.argv.pop(1)]
try:
    tool.main()
    rc = 0
except SystemExit as e:
    rc = e.code or 0
sys.stdout.flush()
print(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")), file=sys.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(rc)
"""


def lower_in_child(text, timeout, tool=("coll-opt", "--coll-lower-collectives")):
    """(outcome, seconds, peak MiB) of coll-lower-collectives (or `tool`:
    its name and arguments after the input file) on module `text`; peak:
    the larger of the tool's own and its children's."""
    outcome, secs, own, children = _child(text, timeout, tool)
    peaks = [p for p in (own, children) if p is not None]
    return outcome, secs, max(peaks) if peaks else None


def _child(text, timeout, tool):
    """(outcome, seconds, own peak MiB, children's peak MiB) of `tool` on `text`."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "m.mlir"), os.path.join(tmp, "out.mlir")
        with open(src, "w") as f:
            f.write(text)
        args = list(tool[1:]) + (["-o", out] if tool[0] == "coll-opt" else [])
        t0 = time.monotonic()
        try:
            r = subprocess.run([sys.executable, "-c", PEAK, tool[0], src, *args],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"killed after {timeout:g} s", time.monotonic() - t0, None, None
        secs = time.monotonic() - t0
        lines = r.stderr.strip().splitlines()
        peaks = [int(x) / 1024 for x in lines[-2:] if x.isdigit()]
        own, children = (peaks + [None, None])[:2] if len(peaks) == 2 else (None, None)
        if r.returncode == 0:
            if tool[0] == "coll-opt":
                with open(out) as f:
                    text = f.read()
                if TO_GPU in tool:
                    return (f"{text.count('gpu.launch_func')} launches, {text.count('gpu.memcpy')} memcpys", secs,
                            own, children)
                ops = text.count('"coll.copy"') + text.count('"coll.combine"')
                return f"lowered, {ops} ops", secs, own, children
            return "ran, " + r.stdout.split()[-1], secs, own, children
    said = next((line for line in lines if "error:" in line), "failed")
    return ("refused: op limit" if "above the limit" in said else said[-80:]), secs, own, children


def cases(rows):
    """[(group, op, n, shape, dtype, attrs, backend or None: coll-opt)]."""
    a2a = dict(split_axis=0, concat_axis=1)
    out = [("issue", "all_to_all", 2, [300000, 2], "i8", a2a, None),
           ("issue", "all_to_all", 2, [1 << 24, 2], "i8", a2a, None)]
    big = 1 << 23  # f32 elements: 32 MiB per device
    out += [("huge", "all_gather", 8, [big], "f32", dict(axis=0), None),
            ("huge", "reduce_scatter", 8, [big], "f32", dict(axis=0), None),
            ("huge", "all_to_all", 8, [big], "f32", dict(split_axis=0, concat_axis=0), None)]
    worst = [("all_to_all", 4, [4 * rows, 2], "i8", a2a),
             ("all_gather", 2, [rows, 1], "i8", dict(axis=1)),
             ("reduce_scatter", 2, [rows, 2], "i8", dict(axis=1))]
    out += [("worst", *w, None) for w in worst]
    out += [("many", "all_to_all", 720, [720, 2], "i8", a2a, None)]
    out += [("gpu", *w, "gpu") for w in worst]
    backends = ["cpu"] + (["mpi"] if shutil.which("mpirun") else [])
    for backend in backends:
        out += [("run", "all_to_all", n, [300000, 2], "i8", a2a, backend) for n in (2, 4)]
        out += [("run", *w, backend) for w in worst]
    out += [("route", "all_to_all", 4, [1024, 1024], "f32", dict(split_axis=1, concat_axis=0), "cpu")]
    return out


def main(argv=None):
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=count(1, 1 << 26), default=1 << 22,
                    help="rows per block of the worst cases (1 or 2 bytes each)")
    ap.add_argument("--only", default="issue,huge,worst,many,gpu,run", help="comma-separated groups (route: also)")
    ap.add_argument("--timeout", type=seconds(), default=600.0, help="seconds a case may take before it is killed")
    args = ap.parse_args(argv)
    groups = set(args.only.split(","))
    unknown = groups - set(GROUPS)
    if unknown:
        ap.error(f"--only: unknown group(s) {', '.join(sorted(unknown))}; expected {', '.join(GROUPS)}")
    print(f"coll-lower-collectives (then coll-to-gpu: gpu), or coll-run --repeat 1 (run, route), one child "
          f"process per case (op limit {MAX_OPS}); peak: the tool's VmHWM / its children's ru_maxrss (MPI ranks)")
    print(f"{'case':6} {'collective':15} {'N':>3} {'shape':>12} {'type':4} {'axes':22} {'bytes/dev':>10} "
          f"{'tool':8} {'outcome':20} {'time':>8} {'peak':>17}")
    for group, op, n, shape, dtype, attrs, backend in cases(args.rows):
        if group not in groups:
            continue
        with make_context():
            text = collective_module(op, n, shape, dtype, **attrs)
        tool = ("coll-opt", "--coll-lower-collectives") if backend is None else ("coll-opt", TO_GPU) \
            if backend == "gpu" else ("coll-run", f"--backend={backend}", "--repeat", "1")
        outcome, secs, own, children = _child(text, args.timeout, tool)
        nbytes = {"i8": 1, "f32": 4}[dtype]
        for d in shape:
            nbytes *= d
        axes = " ".join(f"{k}={v}" for k, v in attrs.items())
        mem = f"{own:5.0f}" if own is not None else "    -"
        mem += f" / {children:5.0f} MiB" if children else " MiB        "
        print(f"{group:6} {op:15} {n:3} {'x'.join(map(str, shape)):>12} {dtype:4} {axes:22} "
              f"{nbytes / 2**20:6.2f} MiB {backend or 'lower':8} {outcome:20} {secs:6.2f} s {mem}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
