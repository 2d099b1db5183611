"""Run the prepared GPU checks and benchmark in stages (bench/README-gpu.md).

    python3 build/gpu/gpu_run.py smoke    [--results DIR]          ~2 min
    python3 build/gpu/gpu_run.py sanitize [--results DIR]
    python3 build/gpu/gpu_run.py perf     [--results DIR] [--n N] [--resume]
    python3 build/gpu/gpu_run.py dtype    [--results DIR]
    python3 build/gpu/gpu_run.py all      [--results DIR] [--budget S] [--resume]
    python3 build/gpu/gpu_run.py report   --results DIR [DIR...] [--out DIR]

The folder (--folder, default: this file's) is what bench/gpu_prepare.py
built: program libraries, libmlir_cuda_runtime.so + libLLVM.so stub,
cuda_driver.py, manifest.json. Needs numpy, and torch for perf and dtype;
no MLIR. Every stage appends one JSON row per finished check to
DIR/progress.jsonl as it goes (what a time-out leaves), and exits:
  0  everything ran and passed
  1  a wrong result, a sanitizer finding, a kernel fault or a time-out;
     a usage error (a bad argument, a folder whose manifest.json is not
     gpu_prepare.py's, or that lacks cuda_driver.py), before anything runs
  2  cannot run here (no manifest, no GPU, no torch, a driver too old for
     the cubins)
  3  compute-sanitizer not found (smoke, sanitize): the checks did not run
  5  the stage's --budget ran out: rerun with --resume for the rest

Stages:
  smoke     the smoke program (ring, N = 4, 1 MiB) under compute-sanitizer
            memcheck, then initcheck, each in a process of its own
  sanitize  every sanitize program (each strategy, N = 4, 4099 floats) under
            memcheck and initcheck; racecheck only where a kernel uses shared
            memory (manifest: racecheck sees nothing else), --racecheck all
            to force
  perf      every perf entry (strategy x N x size): checked cold (the call
            that captures the graph), warm (a replay) and op by op, then
            timed: wall time of the synchronous call and device time (events
            around the call's enqueued work: lowering/gpu/graph.c), as a
            graph and op by op; torch's own equivalent (sum of the inputs,
            copies to every output) and a device-to-device copy of the same
            size, timed with events; the share of the D2D copy rate reached
            for the bytes the strategy moves
  dtype     every element type program, checked cold, warm and op by op
  all       sanitize, dtype, perf, then report, sharing one --budget
  report    progress rows (and the manifest) -> results.json and README.md
            (tables by N: device time and D2D share per strategy, torch,
            fastest, auto's pick under each profile; auto vs fastest)
Checks compare every output with torch's reduction of the inputs (every
call) and with numpy's on the host (the cold call; whole buffers up to 4M
elements, both ends above), the outputs poisoned before each checked call. A program runs in a worker
process; a kernel fault (the context is lost) ends the worker, and the next
one goes on from the following program; a program past --timeout is killed
and reported. Peak device memory stays under the manifest's cap (sizes over
it were not built; each row records torch's peak).
"""
import argparse
import ctypes
import glob
import json
import math
import os
import platform
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def use_bundle(folder):
    """The bundle's cuda_driver.py (a copy of lowering/gpu/driver.py) first
    on the path: this file runs from the bundle, or from bench/ with
    --folder."""
    folder = os.path.abspath(folder)
    if folder not in sys.path:
        sys.path.insert(0, folder)

NUMPY_WHOLE = 1 << 22      # elements: above, numpy checks the two ends only
NUMPY_ENDS = 1 << 18       # (torch checks every element of every call, on the GPU)
SANITIZER_TOOLS = ("memcheck", "initcheck")
TIME_TARGET = 0.2          # seconds of timed calls per measurement
REPEATS = (5, 100)         # fewest and most timed calls per measurement
AUTO_WITHIN = 1.10         # auto within 10% of the fastest ...
AUTO_SHARE = 0.90          # ... at >= 90% of the points (issue 25)
FAULT_EXIT, BUDGET_EXIT, NO_TOOL_EXIT, SETUP_EXIT = 4, 5, 3, 2
TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
                "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64"}


class SetupError(Exception):
    """Cannot run here (exit SETUP_EXIT)."""


class UsageError(Exception):
    """A bad argument or bundle, found before anything runs (exit 1)."""


# -- the command line: coll/tools/args.py and argtypes.py, copied (this file runs
# without the package; tests/unit/test_gpu_run.py checks the copies agree)

class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):  # a usage error exits 1, as coll's tools, not argparse's 2 (SETUP_EXIT here)
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def count(lo=1, hi=None):
    """An integer in lo..hi (hi None: no upper bound)."""
    def parse(text):
        try:
            value = int(text, 10)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{value} is out of range; expected {lo}..{'' if hi is None else hi}")
        return value
    parse.__name__ = "count"
    return parse


def seconds(hi=7 * 24 * 3600, zero=False):
    """A finite number of seconds, > 0 (>= 0 with `zero`) and at most `hi`."""
    def parse(text):
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
        if not math.isfinite(value) or not (0 <= value if zero else 0 < value) or value > hi:
            raise argparse.ArgumentTypeError(f"{text} is out of range; expected seconds {'>=' if zero else '>'} 0 "
                                             f"and at most {hi:g}")
        return value
    parse.__name__ = "seconds"
    return parse


# -- the manifest ------------------------------------------------------------------

ENTRY_KEYS = {"entry": str, "n": int, "numel": int, "dtype": str, "kind": str, "workspace_bytes": int}


def manifest_error(manifest):
    """Why `manifest` is not one gpu_prepare.py wrote (what this file reads
    of it), or None."""
    if not isinstance(manifest, dict):
        return f"holds a JSON {type(manifest).__name__}; expected an object"
    if not isinstance(manifest.get("libraries"), list):
        return "has no 'libraries' list"
    if not isinstance(manifest.get("tools"), dict):
        return "has no 'tools' object"
    for i, lib in enumerate(manifest["libraries"]):
        if not isinstance(lib, dict) or not isinstance(lib.get("file"), str) or not isinstance(lib.get("set"), str):
            return f"libraries[{i}] has no 'file' and 'set'"
        if "error" in lib:
            continue
        if not isinstance(lib.get("entries"), list):
            return f"libraries[{i}] ({lib['file']}) has no 'entries' list"
        for j, e in enumerate(lib["entries"]):
            bad = [k for k, t in ENTRY_KEYS.items() if not isinstance(e, dict) or not isinstance(e.get(k), t)]
            if bad:
                return f"libraries[{i}].entries[{j}] ({lib['file']}) has no valid '{bad[0]}'"
            if e["dtype"] not in ELEM_BYTES:
                return f"libraries[{i}].entries[{j}] ({lib['file']}) has element type '{e['dtype']}'"
    return None


def load_manifest(folder):
    path = os.path.join(folder, "manifest.json")
    if not os.path.exists(path):
        raise SetupError(f"no manifest.json in {folder}; build it with bench/gpu_prepare.py")
    try:
        with open(path, "rb") as f:
            manifest = json.loads(f.read().decode("utf-8"))
    except OSError as e:
        raise UsageError(f"{path} cannot be read: {e.strerror or e}") from None
    except (UnicodeDecodeError, ValueError) as e:  # JSONDecodeError is a ValueError
        raise UsageError(f"{path} is not gpu_prepare.py's manifest: not JSON ({e})") from None
    why = manifest_error(manifest)
    if why:
        raise UsageError(f"{path} is not gpu_prepare.py's manifest: it {why}")
    return manifest


def programs(manifest, sets):
    """[(id, library, entry)] of the entries of the libraries in `sets`."""
    out = []
    for lib in manifest["libraries"]:
        if lib["set"] in sets and "error" not in lib:
            for e in lib["entries"]:
                out.append((f"{lib['file']}:{e['entry']}", lib, e))
    return out


def row_base(stage, pid, lib, e):
    return dict(stage=stage, id=pid, file=lib["file"], set=lib["set"], **{
        k: e[k] for k in ("entry", "strategy", "n", "numel", "dtype", "kind")},
        bytes=e["numel"] * ELEM_BYTES[e["dtype"]])


ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8}


# -- progress ----------------------------------------------------------------------

def append_row(results, row):
    """One line in progress.jsonl, flushed to disk: what a kill leaves."""
    os.makedirs(results, exist_ok=True)
    row = dict(row, t=round(time.time(), 3))
    with open(os.path.join(results, "progress.jsonl"), "a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())
    return row


def read_rows(results):
    path = os.path.join(results, "progress.jsonl")
    if not os.path.exists(path):
        return []
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:  # a line cut by a kill
                    pass
    return rows


# -- compute-sanitizer -------------------------------------------------------------

def sanitizer_candidates():
    """Where compute-sanitizer may be: PATH, CUDA_HOME/CUDA_PATH, the
    toolkit folders, and pip's nvidia packages (which install it without
    the execute bit)."""
    found = []
    which = shutil.which("compute-sanitizer")
    if which:
        found.append(which)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            found.append(os.path.join(os.environ[var], "bin", "compute-sanitizer"))
    found += sorted(glob.glob("/usr/local/cuda*/bin/compute-sanitizer"), reverse=True)
    found += sorted(glob.glob("/usr/local/cuda*/compute-sanitizer/compute-sanitizer"), reverse=True)
    found += sorted(glob.glob("/opt/nvidia/**/compute-sanitizer", recursive=True))
    roots = [p for p in sys.path if p and os.path.isdir(p)]
    try:
        import site
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except (AttributeError, ImportError):
        pass
    for root in dict.fromkeys(roots):
        for pattern in ("nvidia/*/bin/compute-sanitizer", "nvidia/*/compute-sanitizer/compute-sanitizer",
                        "nvidia/*/*/bin/compute-sanitizer", "nvidia/cu*/bin/compute-sanitizer"):
            found += sorted(glob.glob(os.path.join(root, pattern)))
    return [p for p in dict.fromkeys(found) if os.path.isfile(p)]


def _is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def make_runnable(path):
    """`path`, executable: as is, made so in place (its folder's other
    programs too: it starts helpers from there), or a copy of its folder
    made executable in a temporary directory. (path, note)."""
    if os.access(path, os.X_OK):
        return path, ""
    folder = os.path.dirname(path)
    helpers = [os.path.join(folder, n) for n in os.listdir(folder)
               if not n.endswith(".so") and ".so." not in n and _is_elf(os.path.join(folder, n))]
    try:
        for p in set(helpers + [path]):
            os.chmod(p, os.stat(p).st_mode | 0o111)
        return path, f"made executable in place: {path}"
    except OSError:
        pass
    copy = os.path.join(tempfile.mkdtemp(prefix="coll-sanitizer-"), "bin")
    shutil.copytree(folder, copy)
    for p in helpers + [path]:
        q = os.path.join(copy, os.path.basename(p))
        os.chmod(q, os.stat(q).st_mode | 0o111)
    return os.path.join(copy, os.path.basename(path)), f"copied with execute bits to {copy}"


def find_sanitizer():
    """(path, note) of a runnable compute-sanitizer, or (None, where it looked)."""
    for path in sanitizer_candidates():
        try:
            exe, note = make_runnable(path)
        except OSError:
            continue
        try:
            r = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        if r.returncode == 0:
            version = (r.stdout.strip().splitlines() or [""])[-1]
            return exe, "; ".join(x for x in (note, version) if x)
    return None, ("searched PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda*/bin, /opt/nvidia "
                  "and pip's nvidia packages")


FINDING = re.compile(r"^=+ (?!ERROR SUMMARY|RACECHECK SUMMARY|COMPUTE-SANITIZER|LEAK SUMMARY)"
                     r"(Invalid|Uninitialized|Race|Error|Program hit|Warning: Race|Address|"
                     r"Misaligned|Out-of-range|Unused memory|Leaked)", re.M)


def sanitizer_errors(output):
    """Errors a compute-sanitizer report counts (None: no summary line)."""
    counts = [int(m) for m in re.findall(r"ERROR SUMMARY: (\d+) error", output)]
    counts += [int(m) for m in re.findall(r"hazards displayed \((\d+) error", output)]
    return sum(counts) if counts else None


def sanitizer_findings(output):
    return [line.strip() for line in output.splitlines() if FINDING.match(line.strip())][:20]


# -- workers: a process per batch of programs, restarted after a fault -------------

def _reader(stream, q):
    for line in iter(stream.readline, ""):
        q.put(line)
    q.put(None)


def run_worker(args, mode, ids, prefix=(), timeout=120, budget_end=None, log=None):
    """Runs `ids` (in order) in worker processes: each worker prints
    `@@begin ID` / `@@end ID` around a program and appends its rows itself.
    A worker that exits mid-program (a fault, a crash) or stays in one past
    `timeout` seconds (killed, with its process group) gets a failure row for
    that program, and the next worker starts after it. Returns (rows written
    here, {id: output of its worker while it ran}, budget left?)."""
    rows, outputs = [], {"*": ""}  # "*": every line of every worker
    todo = list(ids)
    while todo:
        if budget_end is not None and time.time() > budget_end:
            return rows, outputs, False
        task = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump({"mode": mode, "stage": args.stage, "ids": todo, "results": args.results,
                   "folder": args.folder, "deadline": budget_end}, task)
        task.close()
        cmd = list(prefix) + [sys.executable, "-u", os.path.abspath(__file__), "worker", task.name]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True, env=env)
        q = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, q), daemon=True).start()
        current, lines, deadline, timed_out = None, [], time.time() + timeout + 60, False
        rowed = set()  # programs whose worker wrote their row
        progressed = False
        while True:
            try:
                line = q.get(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                break
            if line is None:
                break
            lines.append(line)
            outputs["*"] += line
            if log:
                log.write(line)
                log.flush()
            if line.startswith("@@row "):
                try:
                    rowed.add(json.loads(line[6:])["id"])
                except (json.JSONDecodeError, KeyError):
                    pass
            elif line.startswith("@@begin "):
                current = line.split(None, 1)[1].strip()
                lines = [line]
                deadline = time.time() + timeout
            elif line.startswith("@@end "):
                done = line.split(None, 1)[1].strip()
                outputs[done] = "".join(lines)
                if done in todo:
                    todo.remove(done)
                progressed = True
                current, lines = None, []
                deadline = time.time() + timeout + 60  # the next program, or the exit
        rc = proc.wait()
        os.unlink(task.name)
        if current is not None:  # died or hung inside a program
            outputs[current] = "".join(lines)
            why = (f"timed out after {timeout:g} s (killed)" if timed_out else
                   "kernel fault: the worker lost its CUDA context" if rc == FAULT_EXIT else
                   f"worker died (exit {rc})")
            if current not in rowed:
                rows.append(append_row(args.results, dict(stage=args.stage, id=current, ok=False,
                                                          error=why, tail="".join(lines)[-2000:])))
            print(f"  {current}: FAIL {why}; the next worker goes on", flush=True)
            if current in todo:
                todo.remove(current)
        elif rc == BUDGET_EXIT:
            return rows, outputs, False
        elif todo and progressed:  # ended between programs: a new worker for the rest
            print(f"  worker ended between programs ({'timed out' if timed_out else f'exit {rc}'}); "
                  "the next worker goes on", flush=True)
        elif todo:  # failed before its first program: so would the next
            why = "timed out before its first program" if timed_out else f"exit {rc}"
            tail = "".join(lines)[-2000:]
            for pid in todo:
                rows.append(append_row(args.results, dict(stage=args.stage, id=pid, ok=False,
                                                          error=f"worker failed to start: {why}",
                                                          tail=tail)))
            print(f"  worker failed to start ({why}):\n{tail}", flush=True)
            todo = []
    return rows, outputs, True


# -- checks shared by the workers ---------------------------------------------------

def numpy_reference(arrays, kind):
    """The allreduce of host arrays in numpy (floats in float64)."""
    import numpy as np
    fn = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    wide = arrays[0].dtype.kind == "f"
    acc = arrays[0].astype(np.float64) if wide else arrays[0].copy()
    for a in arrays[1:]:
        acc = fn(acc, a.astype(np.float64) if wide else a)
    return acc


def numpy_close(got, want, dtype, n):
    import numpy as np
    if dtype in ("f16", "bf16"):
        return bool(np.allclose(got.astype(np.float64), want, rtol=1e-2, atol=1e-2))
    if dtype in ("f32", "f64"):
        return bool(np.allclose(got.astype(np.float64), want, rtol=1e-5, atol=1e-5 * n))
    return bool(np.array_equal(got, want))


def median(xs):
    return statistics.median(xs) if xs else None


def check_one(args, pid, lib, e, calls=3):
    """Runs one program with the CUDA driver alone (no torch: light under
    compute-sanitizer) on random inputs: the cold call (capture), a warm
    call (replay) and a call op by op, each checked against numpy with the
    outputs poisoned before (not before the cold call: initcheck then sees
    any read of an output before its write). Float programs only."""
    import cuda_driver
    import numpy as np
    drv = cuda_driver.Driver(0)
    preload(args.folder)
    np_t = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[e["dtype"]]
    rng = np.random.default_rng(len(pid))
    n, numel = e["n"], e["numel"]
    xs = [(rng.random(numel) + 0.5).astype(np_t) for _ in range(n)]
    ys = [np.empty_like(xs[0]) for _ in range(n)]
    shapes = [a.shape for a in xs + ys]
    sizes = [a.nbytes for a in xs + ys]
    if e["workspace_bytes"]:
        shapes.append((e["workspace_bytes"],))
        sizes.append(e["workspace_bytes"])
    ptrs = [drv.alloc(nb) for nb in sizes]
    want = numpy_reference(xs, e["kind"])
    row = row_base(args.stage, pid, lib, e)
    results = []
    try:
        for ptr, a in zip(ptrs, xs):
            drv.upload(ptr, a)
        prog = cuda_driver.Program(os.path.join(args.folder, lib["file"]), e["entry"])
        try:
            call_args = prog.bind(ptrs, shapes)
            for k, how in enumerate(["cold"] + ["warm"] * (calls - 2) + ["direct"]):
                if how == "direct" and prog.has_graphs():
                    prog.set_graphs(False)
                if k:
                    for ptr, y in zip(ptrs[n:], ys):
                        drv.fill(ptr, y.nbytes, 0xFF)  # NaN until written
                prog.call(call_args)
                drv.synchronize()  # raises on a fault
                for ptr, y in zip(ptrs[n:], ys):
                    drv.download(y, ptr)
                results.append((how, all(numpy_close(y, want, e["dtype"], n) for y in ys)))
            if prog.has_graphs():
                prog.set_graphs(True)
                row["graph_counts"] = counts = prog.graph_counts()
                # cold: captured; warm: replayed; else the graph path did not run
                results.append(("graph", counts["captures"] == 1 and counts["replays"] == calls - 2
                                and counts["refused"] == 0))
        finally:
            prog.close()
    finally:
        for ptr in ptrs:
            drv.free(ptr)
    row["calls"] = {how: ok for how, ok in results}
    row["ok"] = all(ok for _, ok in results)
    if not row["ok"]:
        row["error"] = ", ".join("CUDA graph not captured and replayed" if how == "graph" else
                                 f"wrong result ({how})" for how, ok in results if not ok)
    return row


def preload(folder):
    """The stub and the wrappers, by path, before any program."""
    for name in ("libLLVM.so", "libmlir_cuda_runtime.so"):
        ctypes.CDLL(os.path.join(folder, name), mode=ctypes.RTLD_GLOBAL)


# -- torch parts -------------------------------------------------------------------

def _torch_ops(torch):
    return {"sum": torch.add, "prod": torch.mul, "max": torch.maximum, "min": torch.minimum,
            "and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor}


def make_inputs(torch, e, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    dt = getattr(torch, TORCH_DTYPES[e["dtype"]])
    shape = (e["numel"],)
    xs = []
    for _ in range(e["n"]):
        if e["dtype"] == "i1":
            xs.append(torch.randint(0, 2, shape, device="cuda", generator=g).bool())
        elif e["dtype"].startswith("i"):
            lo, hi = (-100, 100) if e["kind"] != "prod" else (-3, 4)
            xs.append(torch.randint(lo, hi, shape, device="cuda", generator=g).to(dt))
        elif e["kind"] == "prod":
            xs.append((torch.rand(shape, device="cuda", generator=g) + 0.5).to(dt))
        else:
            xs.append(torch.rand(shape, device="cuda", generator=g).to(dt))
    return xs


def reference(torch, xs, kind):
    fn = _torch_ops(torch)[kind]
    wide = xs[0].dtype in (torch.float16, torch.bfloat16)
    acc = xs[0].float() if wide else xs[0].clone()
    for x in xs[1:]:
        acc = fn(acc, x.float() if wide else x)
    return acc.to(xs[0].dtype)


def close_enough(torch, y, ref, e):
    if e["dtype"] in ("f16", "bf16"):
        return bool(torch.allclose(y.float(), ref.float(), rtol=1e-2, atol=1e-2))
    if e["dtype"] in ("f32", "f64"):
        return bool(torch.allclose(y, ref, rtol=1e-5, atol=1e-5 * e["n"]))
    return bool(torch.equal(y, ref))


def _host(t):
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.cpu().numpy()


def numpy_check(xs, ys, e):
    numel = e["numel"]
    parts = [slice(0, numel)] if numel <= NUMPY_WHOLE else [
        slice(0, NUMPY_ENDS), slice(numel - NUMPY_ENDS, numel)]
    for part in parts:
        want = numpy_reference([_host(x[part]) for x in xs], e["kind"])
        if not all(numpy_close(_host(y[part]), want, e["dtype"], e["n"]) for y in ys):
            return False
    return True


def poison(torch, t):
    if t.dtype.is_floating_point:
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.view(torch.uint8).fill_(0x5A)
    else:
        t.fill_(-7)


def event_seconds(torch, fn, repeat):
    """Device seconds of each of `repeat` calls of `fn` (torch's stream)."""
    out = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) / 1e3)
    return out


def wall_seconds(torch, fn, repeat):
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t0)
    return out


def repeats(seconds):
    return int(min(REPEATS[1], max(REPEATS[0], TIME_TARGET / max(seconds, 1e-7))))


class TorchWorker:
    """A worker's torch state: the CUDA context and the references it
    measured (per N and size, per size)."""

    def __init__(self, args):
        try:
            import torch
        except ImportError:
            raise SetupError("torch is needed (device memory and the references)") from None
        if not torch.cuda.is_available():
            raise SetupError("torch sees no CUDA GPU")
        self.torch = torch
        self.args = args
        torch.cuda.init()
        torch.empty(1, device="cuda")  # the primary context, which the wrappers use too
        preload(args.folder)
        self.torch_ref, self.d2d = {}, {}
        self.cap = load_manifest(args.folder).get("memory_cap_bytes", 60 << 30)

    def run(self, pid, lib, e, timing):
        torch = self.torch
        import cuda_driver
        torch.cuda.reset_peak_memory_stats()
        row = row_base(self.args.stage, pid, lib, e)
        xs = make_inputs(torch, e, seed=len(pid))
        ys = [torch.empty_like(x) for x in xs]
        ws = [torch.empty(e["workspace_bytes"], dtype=torch.uint8, device="cuda")] \
            if e["workspace_bytes"] else []
        ref = reference(torch, xs, e["kind"])
        prog = cuda_driver.Program(os.path.join(self.args.folder, lib["file"]), e["entry"])
        checks = {}
        try:
            bufs = xs + ys + ws
            call_args = prog.bind([t.data_ptr() for t in bufs], [tuple(t.shape) for t in bufs])

            def call():
                prog.call(call_args)

            def checked(how):
                for y in ys:
                    poison(torch, y)
                torch.cuda.synchronize()  # our streams do not wait for torch's
                t0 = time.perf_counter()
                call()
                torch.cuda.synchronize()  # raises on a fault
                t = time.perf_counter() - t0
                checks[how] = all(close_enough(torch, y, ref, e) for y in ys) and (
                    how != "cold" or numpy_check(xs, ys, e))  # numpy on the host: once
                return t
            graphs = prog.has_graphs()
            checked("cold")
            warm = checked("warm")
            if graphs:
                prog.set_graphs(False)
                checked("direct")
                prog.set_graphs(True)
            if timing:
                row.update(self.timing(prog, call, graphs, repeats(warm)))
                checks["timed"] = all(close_enough(torch, y, ref, e) for y in ys)
                # The references last: torch's own allreduce overwrites the outputs.
                row.update(self.references(e, xs, ys, row["repeat"]))
            if graphs:
                row["graph_counts"] = counts = prog.graph_counts()
                checks["graph"] = counts["captures"] >= 1 and counts["refused"] == 0
        finally:
            prog.close()
        row["peak_device_bytes"] = torch.cuda.max_memory_allocated()
        checks["memory"] = row["peak_device_bytes"] <= self.cap
        row["checks"] = checks
        row["ok"] = all(checks.values())
        if not row["ok"]:
            row["error"] = ", ".join(
                "CUDA graph not captured" if k == "graph" else
                f"peak device memory over the cap ({self.cap >> 30} GiB)" if k == "memory" else
                f"wrong result ({k})" for k, v in checks.items() if not v)
        # Rebound, not deleted: `call` and `checked` close over these, and a
        # closure over a deleted name reads as undefined (ruff F821).
        xs = ys = ws = ref = None  # the device memory goes before empty_cache
        torch.cuda.empty_cache()
        return row

    def timing(self, prog, call, graphs, repeat):
        """Wall and device seconds (medians), as a graph and op by op."""
        out = {"repeat": repeat}
        modes = [("graph", True), ("direct", False)] if graphs else [("direct", False)]
        for name, on in modes:
            if graphs:
                prog.set_graphs(on)
                prog.set_timing(True)
            call()  # warm in this mode
            walls, devs = [], []
            for _ in range(repeat):
                t0 = time.perf_counter()
                call()
                walls.append(time.perf_counter() - t0)
                if graphs:
                    devs.append(prog.device_seconds())
            out[f"{name}_wall_s"] = median(walls)
            out[f"{name}_device_s"] = median([d for d in devs if d is not None]) if devs else None
        if graphs:
            prog.set_graphs(True)
            prog.set_timing(False)
        return out

    def references(self, e, xs, ys, repeat):
        """torch's equivalent and the D2D copy rate at this N and size
        (measured once per worker)."""
        key = (e["n"], e["numel"], e["dtype"])
        if key not in self.torch_ref:
            self.torch_ref[key] = self.torch_equivalent(xs, ys, repeat)
        out = dict(self.torch_ref[key])
        nbytes = e["numel"] * ELEM_BYTES[e["dtype"]]
        if nbytes not in self.d2d:
            self.d2d[nbytes] = self.copy_rate(nbytes, repeat)
        out["d2d_Bps"] = self.d2d[nbytes]
        return out

    def torch_equivalent(self, xs, ys, repeat):
        """torch's own allreduce on one GPU, on the program's buffers: sum
        the inputs into the first output, copy it to the others."""
        torch = self.torch

        def direct():
            torch.add(xs[0], xs[1], out=ys[0])
            for x in xs[2:]:
                ys[0].add_(x)
            for y in ys[1:]:
                y.copy_(ys[0])
        direct()
        torch.cuda.synchronize()
        return {"torch_device_s": median(event_seconds(torch, direct, repeat)),
                "torch_wall_s": median(wall_seconds(torch, direct, repeat))}

    def copy_rate(self, nbytes, repeat):
        """Device-to-device copy of `nbytes`: bytes read + written per second."""
        torch = self.torch
        a = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        a.fill_(1)
        b.copy_(a)
        torch.cuda.synchronize()
        t = median(event_seconds(torch, lambda: b.copy_(a), repeat))
        return 2 * nbytes / t if t else None


def worker_main(task_path):
    """One worker process: runs its programs in order, one row each."""
    with open(task_path) as f:
        task = json.load(f)
    args = argparse.Namespace(folder=task["folder"], results=task["results"], stage=task["stage"])
    use_bundle(args.folder)
    manifest = load_manifest(args.folder)
    index = {f"{lib['file']}:{e['entry']}": (lib, e) for lib in manifest["libraries"]
             if "error" not in lib for e in lib["entries"]}
    torch_worker = TorchWorker(args) if task["mode"] in ("perf", "dtype") else None
    for pid in task["ids"]:
        if task.get("deadline") is not None and time.time() > task["deadline"]:
            return BUDGET_EXIT  # starts nothing more: the parent reports what is left
        lib, e = index[pid]
        os.environ["COLL_CURRENT_PROGRAM"] = pid  # names the program in sanitizer and fault reports
        print(f"@@begin {pid}", flush=True)
        try:
            if torch_worker:
                row = torch_worker.run(pid, lib, e, timing=task["mode"] == "perf")
            else:
                row = check_one(args, pid, lib, e)
        except Exception as ex:  # a CUDA error loses the context: this worker ends
            text = f"{type(ex).__name__}: {ex}"
            fault = "CUDA" in text or "cuda" in type(ex).__module__ or "CudaError" in text
            row = dict(row_base(args.stage, pid, lib, e), ok=False,
                       error=("kernel fault: " if fault else "") + text)
            append_row(args.results, row)
            print(f"@@row {json.dumps(row)}", flush=True)
            if fault:
                sys.stdout.flush()
                os._exit(FAULT_EXIT)  # no teardown in a lost context
            print(f"@@end {pid}", flush=True)
            continue
        append_row(args.results, row)
        print(f"@@row {json.dumps(row)}", flush=True)
        print(f"@@end {pid}", flush=True)
    return 0


# -- the stages -------------------------------------------------------------------

def preflight(args, manifest):
    """GPU present, and a driver new enough for the cubins."""
    import cuda_driver
    ok, why = cuda_driver.available(0)
    if not ok:
        raise SetupError(why)
    version = cuda_driver.driver_version()
    need = manifest["tools"].get("cubin_needs_driver")
    cubins = any("bin" in lib.get("kernel_format", []) for lib in manifest["libraries"])
    if cubins and need and version is not None and version < need["cuda"]:
        raise SetupError(f"the driver supports CUDA {version // 1000}.{version % 1000 // 10}; the "
                         f"cubins ({manifest['tools']['ptxas']}) need CUDA "
                         f"{need['cuda'] // 1000}.{need['cuda'] % 1000 // 10} ({need['branch']}+ driver)")
    return {"driver_cuda_version": version, "gpu": cuda_driver.device_name(0),
            "host": platform.node()}


def sanitize_programs(args, manifest, sets, tools, racecheck="auto"):
    """Each program under each tool, a process each. Returns failing rows."""
    exe, note = find_sanitizer()
    if exe is None:
        print(f"gpu_run: error: compute-sanitizer not found ({note}); memcheck and initcheck "
              "did NOT run", file=sys.stderr)
        append_row(args.results, dict(stage=args.stage, id="compute-sanitizer", ok=False,
                                      error=f"not found ({note})"))
        return None
    print(f"compute-sanitizer: {exe} ({note})", flush=True)
    bad = []
    end = time.time() + args.budget if args.budget is not None else None
    done = {r["id"] for r in read_rows(args.results) if r.get("tool")} if args.resume else set()
    for pid, lib, _ in programs(manifest, sets):
        run_tools = list(tools)
        if racecheck == "all" or (racecheck == "auto" and lib.get("shared_memory")):
            run_tools.append("racecheck")
        elif racecheck == "auto":
            append_row(args.results, dict(stage=args.stage, id=f"{pid}:racecheck", tool="racecheck",
                                          ok=True, skipped="no kernel of this library uses shared "
                                          "memory, the only memory racecheck checks"))
        for tool in run_tools:
            if f"{pid}:{tool}" in done:
                continue
            if end is not None and time.time() > end:
                return bad + [dict(id=pid, budget=True)]
            prefix = [exe, "--tool", tool, "--error-exitcode", "10"]
            if tool == "memcheck":
                prefix += ["--leak-check", "no"]
            t0 = time.time()
            rows, outputs, _ = run_worker(args, "check", [pid], prefix=prefix, timeout=args.timeout)
            out = outputs["*"]  # the program's, and the summary at the tool's exit
            errors = sanitizer_errors(out)
            findings = sanitizer_findings(out)
            checked = [r for r in read_rows(args.results) if r.get("id") == pid and r.get("t", 0) >= t0 - 1
                       and r.get("stage") == args.stage and "tool" not in r]
            ok = bool(checked) and checked[-1].get("ok") and not findings and errors == 0
            why = None if ok else (
                checked[-1].get("error") if checked and not checked[-1].get("ok") else
                f"{errors} sanitizer error(s)" + (f": {findings[0]}" if findings else "") if errors else
                f"{len(findings)} sanitizer findings" if findings else
                "no compute-sanitizer summary (the tool did not finish)")
            row = append_row(args.results, dict(stage=args.stage, id=f"{pid}:{tool}", tool=tool, ok=ok,
                                                errors=errors, findings=findings, error=why,
                                                seconds=round(time.time() - t0, 1),
                                                tail=None if ok else out[-3000:]))
            print(f"  compute-sanitizer --tool {tool} {pid}: "
                  f"{'clean' if ok else 'FAIL ' + why}", flush=True)
            if not ok:
                bad.append(row)
    return bad


def stage_sanitize(args, manifest, sets):
    bad = sanitize_programs(args, manifest, sets, SANITIZER_TOOLS, args.racecheck)
    if bad is None:
        return NO_TOOL_EXIT
    if any(r.get("budget") for r in bad):
        print("gpu_run: budget spent: rerun for the rest", file=sys.stderr)
        return BUDGET_EXIT
    print(f"{args.stage}: {'all clean' if not bad else f'{len(bad)} FAILED'}", flush=True)
    for r in bad:
        print(f"gpu_run: {r['id']}: {r['error']}", file=sys.stderr)
    return 1 if bad else 0


def stage_workers(args, manifest, sets, mode):
    todo = programs(manifest, sets)
    if args.n:
        todo = [p for p in todo if p[2]["n"] in args.n]
    if args.only:
        todo = [p for p in todo if args.only in p[0]]
    if args.max_bytes:
        todo = [p for p in todo if p[2]["numel"] * ELEM_BYTES[p[2]["dtype"]] <= args.max_bytes]
    done = {r["id"] for r in read_rows(args.results) if r.get("stage") == args.stage} if args.resume else set()
    ids = [pid for pid, _, _ in todo if pid not in done]
    print(f"{args.stage}: {len(ids)} programs ({len(todo) - len(ids)} done before)", flush=True)
    end = time.time() + args.budget if args.budget is not None else None
    t0 = time.time()
    log = open(os.path.join(args.results, f"{args.stage}.log"), "a")
    _, _, in_budget = run_worker(args, mode, ids, timeout=args.timeout, budget_end=end, log=log)
    log.close()
    rows = [r for r in read_rows(args.results) if r.get("stage") == args.stage and r.get("t", 0) >= t0 - 1]
    bad = [r for r in rows if not r.get("ok")]
    for r in rows:
        status = "ok" if r.get("ok") else "FAIL " + str(r.get("error"))
        extra = f" {r['graph_device_s'] * 1e6:.1f} us" if r.get("graph_device_s") else ""
        print(f"  {r['id']}: {status}{extra}")
    print(f"{args.stage}: {len(rows) - len(bad)}/{len(rows)} ok in {time.time() - t0:.0f} s", flush=True)
    for r in bad:
        print(f"gpu_run: {r['id']}: {r.get('error')}", file=sys.stderr)
    if not in_budget:
        print("gpu_run: budget spent: rerun with --resume for the rest", file=sys.stderr)
        return BUDGET_EXIT
    return 1 if bad else 0


def stage_all(args, manifest):
    """sanitize, dtype, perf (every N), then the report, sharing --budget
    (each stage starts only while some is left). The worst exit code wins:
    a failure (1) over a missing tool (3) over a spent budget (5)."""
    end = time.time() + args.budget if args.budget is not None else None
    codes = []
    for stage, run in (("sanitize", lambda: stage_sanitize(args, manifest, {"sanitize"})),
                       ("dtype", lambda: stage_workers(args, manifest, {"dtype"}, "dtype")),
                       ("perf", lambda: stage_workers(args, manifest, {"perf"}, "perf"))):
        if end is not None:
            args.budget = end - time.time()
            if args.budget <= 0:
                codes.append(BUDGET_EXIT)
                break
        args.stage = stage
        codes.append(run())
    args.results_dirs, args.out = [args.results], args.out or args.results
    stage_report(args)
    for code in (1, NO_TOOL_EXIT, SETUP_EXIT, BUDGET_EXIT):
        if code in codes:
            return code
    return 0


# -- report ------------------------------------------------------------------------

def metrics(row, traffic):
    """Bandwidth figures of a timed row (device time of the graph call)."""
    t = row.get("graph_device_s") or row.get("direct_device_s")
    if not t:
        return {}
    n, nbytes = row["n"], row["bytes"]
    alg = nbytes / t
    mem = traffic / t if traffic else None
    out = {"device_s": t, "algbw": alg, "busbw": alg * 2 * (n - 1) / n, "membw": mem}
    if mem and row.get("d2d_Bps"):
        out["d2d_share"] = mem / row["d2d_Bps"]
    if row.get("torch_device_s"):
        out["x_torch"] = row["torch_device_s"] / t
    return out


def auto_vs_fastest(perf, auto):
    """Per profile: the points (N, size) where every strategy ran, auto's
    pick's device time over the fastest's, and the share within AUTO_WITHIN."""
    points = {}
    for r in perf:
        if r.get("ok") and r.get("device_s"):
            points.setdefault((r["n"], r["bytes"]), {})[r["strategy"]] = r["device_s"]
    out = {}
    for profile, picks in auto.items():
        ratios = []
        for (n, b), times in sorted(points.items()):
            pick = picks.get(f"{n}:{b}")
            if pick in times:
                fastest = min(times, key=times.get)
                ratios.append(dict(n=n, bytes=b, auto=pick, fastest=fastest,
                                   ratio=times[pick] / times[fastest]))
        within = sum(r["ratio"] <= AUTO_WITHIN for r in ratios)
        out[profile] = {"points": ratios, "within": within, "of": len(ratios),
                        "meets_target": bool(ratios) and within >= AUTO_SHARE * len(ratios)}
    return out


def _size(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def report(rows, manifest, environment=None):
    """results.json content and the README table text."""
    latest = {}
    for r in rows:
        latest[r["id"]] = r  # a rerun's row replaces the earlier one
    rows = list(latest.values())
    traffic = {f"{lib['file']}:{e['entry']}": e["traffic_bytes"] for lib in manifest["libraries"]
               if "error" not in lib for e in lib["entries"]}
    perf = []
    for r in rows:
        if r.get("stage") == "perf" and "entry" in r:
            perf.append(dict(r, **metrics(r, traffic.get(r["id"]))))
    auto = auto_vs_fastest(perf, manifest.get("auto", {}))
    failed = [r for r in rows if not r.get("ok")]
    capped = [dict(file=lib["file"], **c) for lib in manifest["libraries"] for c in lib.get("capped", [])]
    result = {"environment": environment or {}, "tools": manifest.get("tools"),
              "rows": sorted(rows, key=lambda r: r["id"]), "perf": perf, "auto_vs_fastest": auto,
              "capped": capped, "failed": [r["id"] for r in failed]}
    return result, readme(result, manifest)


def readme(result, manifest):
    env = result["environment"]
    kernel_formats = sorted({f for lib in manifest["libraries"] for f in lib.get("kernel_format", [])})
    lines = ["# GPU results", "",
             f"GPU: {env.get('gpu', '?')}; driver CUDA {env.get('driver_cuda_version', '?')}; "
             f"kernels: {', '.join(kernel_formats)} "
             f"({(result['tools'] or {}).get('ptxas', '?')}). Written by `gpu_run.py report`.", "",
             "Cells: device time of one call (events around its enqueued work, a CUDA graph "
             "replay) and, in brackets, the share of the device-to-device copy rate reached for "
             "the bytes the strategy reads and writes. `torch`: torch's own sum of the inputs and "
             "copies, device time. `auto`: the strategy coll-choose-strategy picks.", ""]
    strategies = manifest.get("strategies", [])
    by = {}
    for r in result["perf"]:
        by.setdefault(r["n"], {}).setdefault(r["bytes"], {})[r["strategy"]] = r
    profiles = list(manifest.get("auto", {}))
    for n in sorted(by):
        lines += [f"## N = {n}", ""]
        head = ["size"] + strategies + ["torch", "D2D GB/s", "fastest"] + [f"auto ({p})" for p in profiles]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for b in sorted(by[n]):
            cells = by[n][b]
            row = [_size(b)]
            for s in strategies:
                r = cells.get(s)
                if r is None:
                    row.append("")
                elif not r.get("ok"):
                    row.append("FAIL")
                else:
                    share = r.get("d2d_share")
                    row.append(f"{r['device_s'] * 1e6:.1f} us" + (f" ({share * 100:.0f}%)" if share else ""))
            any_row = next(iter(cells.values()))
            t = any_row.get("torch_device_s")
            row.append(f"{t * 1e6:.1f} us" if t else "")
            d2d = any_row.get("d2d_Bps")
            row.append(f"{d2d / 1e9:.0f}" if d2d else "")
            ok = {s: r for s, r in cells.items() if r.get("ok") and r.get("device_s")}
            row.append(min(ok, key=lambda s: ok[s]["device_s"]) if ok else "")
            for p in profiles:
                row.append(manifest["auto"][p].get(f"{n}:{b}", ""))
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", f"Wall time of a call at N = {n} (the host's enqueueing and sync included): as a "
                  "CUDA graph / op by op.", ""]
        head = ["size"] + strategies
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for b in sorted(by[n]):
            row = [_size(b)]
            for s in strategies:
                r = by[n][b].get(s)
                g, d = (r or {}).get("graph_wall_s"), (r or {}).get("direct_wall_s")
                row.append(f"{g * 1e6:.0f} / {d * 1e6:.0f} us" if g and d else "")
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    small = [r["direct_wall_s"] / r["graph_wall_s"] for r in result["perf"]
             if r.get("ok") and r.get("graph_wall_s") and r.get("direct_wall_s") and r["bytes"] <= 1 << 20]
    if small:
        lines += ["## host overhead", "",
                  f"Up to 1 MiB per device, a call as a CUDA graph takes {statistics.median(small):.1f}x "
                  f"less wall time than op by op (median over {len(small)} points; "
                  f"{min(small):.1f}x to {max(small):.1f}x).", ""]
    lines += ["## auto vs fastest", ""]
    for p, a in result["auto_vs_fastest"].items():
        lines.append(f"- {p}: within {int((AUTO_WITHIN - 1) * 100)}% of the fastest at {a['within']} of "
                     f"{a['of']} points ({'meets' if a['meets_target'] else 'misses'} the "
                     f"{int(AUTO_SHARE * 100)}% target)")
    san = [r for r in result["rows"] if r.get("tool")]
    lines += ["", "## compute-sanitizer", ""]
    if not san:
        lines.append("not run")
    for r in san:
        state = ("skipped: " + r["skipped"] if r.get("skipped") else
                 "clean" if r.get("ok") else "FAIL " + str(r.get("error")))
        lines.append(f"- {r['id']}: {state}")
    if result["capped"]:
        lines += ["", "Not run (device memory over the cap): " + ", ".join(
            f"{c['file']}:{c['entry']}" for c in result["capped"])]
    lines += ["", f"Failed: {', '.join(result['failed']) if result['failed'] else 'none'}", ""]
    return "\n".join(lines)


def stage_report(args):
    manifest = load_manifest(args.folder)
    rows = []
    for d in args.results_dirs:
        rows += read_rows(d)
    env_path = os.path.join(args.results_dirs[0], "environment.json")
    env = json.load(open(env_path)) if os.path.exists(env_path) else {}
    result, text = report(rows, manifest, env)
    out = args.out or args.results_dirs[0]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(text)
    print(text)
    return 1 if result["failed"] else 0


# -- the command line --------------------------------------------------------------

def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:
        try:
            return worker_main(argv[1])
        except SetupError as e:
            print(f"gpu_run: error: {e}", file=sys.stderr)
            return SETUP_EXIT
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stage", choices=("smoke", "sanitize", "perf", "dtype", "all", "report"))
    ap.add_argument("results_dirs", nargs="*", help="report: the results folders to read")
    ap.add_argument("--folder", default=HERE)
    ap.add_argument("--results", default=os.path.join("bench", "results"))
    ap.add_argument("--out", default=None, help="report: where results.json and README.md go")
    ap.add_argument("--n", type=count(1, 1024), action="append", help="perf: only these N")
    ap.add_argument("--only", default=None, help="programs whose id contains this")
    ap.add_argument("--max-bytes", type=count(1), default=None, help="perf: sizes up to this")
    ap.add_argument("--resume", action="store_true", help="skip programs with a row already")
    ap.add_argument("--budget", type=seconds(zero=True), default=None, help="seconds: start nothing after")
    ap.add_argument("--timeout", type=seconds(), default=120, help="seconds per program")
    ap.add_argument("--racecheck", choices=("auto", "all", "none"), default="auto")
    args = ap.parse_args(argv)
    if args.results_dirs and args.stage != "report":
        ap.error(f"results folders ({args.results_dirs[0]}) are report's; expected --results DIR")
    use_bundle(args.folder)
    if args.stage == "report":
        args.results_dirs = args.results_dirs or [args.results]
        try:
            return stage_report(args)
        except SetupError as e:
            print(f"gpu_run: error: {e}", file=sys.stderr)
            return SETUP_EXIT
        except UsageError as e:
            print(f"gpu_run: error: {e}", file=sys.stderr)
            return 1
    try:
        manifest = load_manifest(args.folder)
        if not os.path.isfile(os.path.join(args.folder, "cuda_driver.py")):  # what preflight imports
            raise UsageError(f"{args.folder} has a manifest.json but no cuda_driver.py; expected the whole "
                             "folder bench/gpu_prepare.py builds")
        try:
            os.makedirs(args.results, exist_ok=True)
        except OSError as e:
            raise UsageError(f"--results '{args.results}' cannot be made: {e.strerror or e}") from None
        env = preflight(args, manifest)
    except SetupError as e:
        print(f"gpu_run: error: {e}", file=sys.stderr)
        return SETUP_EXIT
    except UsageError as e:
        print(f"gpu_run: error: {e}", file=sys.stderr)
        return 1
    env.update(stage=args.stage, manifest_created=manifest.get("created"), tools=manifest.get("tools"))
    with open(os.path.join(args.results, "environment.json"), "w") as f:
        json.dump(env, f, indent=1)
    print(f"GPU: {env['gpu']}; driver CUDA {env['driver_cuda_version']}; {args.stage}", flush=True)
    if args.stage in ("smoke", "sanitize"):
        return stage_sanitize(args, manifest, {args.stage})
    if args.stage == "all":
        return stage_all(args, manifest)
    if args.stage == "dtype":
        return stage_workers(args, manifest, {"dtype"}, "dtype")
    return stage_workers(args, manifest, {"perf"}, "perf")


if __name__ == "__main__":
    sys.exit(main())
