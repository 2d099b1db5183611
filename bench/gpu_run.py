"""Run the prepared GPU checks and benchmark (see bench/README-gpu.md).

    python build/gpu/gpu_run.py [FOLDER] [--results DIR] [--quick] [--only TEXT]
                                [--no-sanitize | --sanitize-only]

FOLDER (default: this file's folder) is what bench/gpu_prepare.py built:
shared libraries, libmlir_cuda_runtime.so + libLLVM.so stub, cuda_driver.py,
manifest.json. Needs numpy and torch with a CUDA GPU; no MLIR.

1. Correctness: every program runs on torch tensors (device pointers) and is
   compared with torch's reduction of the same inputs, and with numpy's on
   the host (whole buffers up to 64 MB, the first and last 1M elements
   above; outputs are filled with NaN/garbage first).
2. Bandwidth: device-to-device copy bandwidth (torch copy_, bytes read +
   written per second, CUDA events) for each size.
3. Timing (perf set, f32 sum): median wall time of the synchronous call and
   its CUDA-event time (events on torch's stream before and after: the call
   ends in a host sync, so they bracket it whole), and of two torch
   references on the same GPU (CUDA events): "torch" = sum the inputs with
   add_ then copy the sum to every output; "replay" = the very same
   schedule (copies and combines on slices) issued op by op with torch.
4. compute-sanitizer (when it is installed): `--tool racecheck` and
   `--tool memcheck` on every program of the sanitize set (each strategy,
   N = 4, 4099 floats), each in a child process that checks the program
   against numpy with the CUDA driver alone (`--check-one FILE`, no torch).
Prints a table and writes results.json and results.txt to --results, and
progress.jsonl (one line per program as it completes) as it goes.
"""
import argparse
import ctypes
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
for d in (HERE, os.path.join(HERE, "..", "runtime")):
    if os.path.exists(os.path.join(d, "cuda_driver.py")):
        sys.path.insert(0, d)
        break

REPEATS = {"1MB": 30, "64MB": 10, "1GB": 3}
NUMPY_WHOLE = 1 << 24      # elements: above, numpy checks the two ends only
NUMPY_ENDS = 1 << 20
SANITIZER_TOOLS = ("racecheck", "memcheck")
TARGET_EFFICIENCY = 0.70
TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
                "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64"}


# -- pure helpers (tested without a GPU) ----------------------------------------

def load_manifest(folder):
    with open(os.path.join(folder, "manifest.json")) as f:
        return json.load(f)


def select(programs, only=None, quick=False):
    """The programs to run: the quick dtype checks first, then perf by size."""
    out = [p for p in programs if "error" not in p and p["set"] != "sanitize"]
    order = {"1MB": 0, "64MB": 1, "1GB": 2}
    out.sort(key=lambda p: (p["set"] != "dtype", order.get(p["size"], -1)))
    if quick:
        out = [p for p in out if p["set"] == "dtype" or p["size"] == "1MB"]
    if only:
        out = [p for p in out if only in p["file"]]
    return out


def replay(schedule, buffers, copy, combine):
    """Issues `schedule` (gpu_prepare.schedule) on `buffers` {name: 1-D
    array}: copy(dst_view, src_view), combine(kind, [input views], out_view)."""
    def view(ref):
        name, off, size = ref
        return buffers[name][off:off + size]
    for op in schedule["ops"]:
        if op[0] == "copy":
            copy(view(op[2]), view(op[1]))
        else:
            combine(op[1], [view(r) for r in op[2]], view(op[3]), _aliases(op[2][1:], op[3]))


def _aliases(refs, out):
    """Whether `out` overlaps one of `refs` (then combine must not write it
    before reading them)."""
    return any(r[0] == out[0] and r[1] < out[1] + out[2] and out[1] < r[1] + r[2] for r in refs)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def row_metrics(p, seconds, copy_bw):
    """Bandwidth figures of one timed program."""
    nbytes = p["numel"] * 4
    n = p["n"]
    alg = nbytes / seconds
    mem = p["traffic_bytes"] / seconds
    return {"algbw": alg, "busbw": alg * 2 * (n - 1) / n, "membw": mem,
            "efficiency": mem / copy_bw if copy_bw else float("nan")}


def verdicts(rows):
    """Targets at >= 64 MB: efficiency >= 70% of copy bandwidth, faster than
    torch. Returns [(row, ok_efficiency, ok_torch)]."""
    out = []
    for r in rows:
        if r.get("size") in ("64MB", "1GB") and "seconds" in r:
            t = r.get("torch_seconds")
            out.append((r, r["efficiency"] >= TARGET_EFFICIENCY,
                        None if t is None else t > r["seconds"]))
    return out


def format_table(rows):
    head = (f"{'size':>5} {'N':>2} {'strategy':>8} {'variant':>10} {'ok':>3} {'ms':>9} {'ev ms':>9} "
            f"{'algbw':>8} {'busbw':>8} {'mem GB/s':>9} {'eff%':>5} {'torch ms':>9} "
            f"{'x torch':>7} {'replay ms':>9} {'x replay':>8}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "seconds" not in r:
            continue
        t = r.get("torch_seconds")
        rp = r.get("replay_seconds")
        ev = r.get("event_seconds")
        lines.append(
            f"{r['size']:>5} {r['n']:>2} {r['strategy']:>8} {r['variant']:>10} "
            f"{'yes' if r['ok'] else 'NO':>3} {r['seconds'] * 1e3:>9.3f} "
            f"{(ev * 1e3 if ev else float('nan')):>9.3f} "
            f"{r['algbw'] / 1e9:>8.1f} {r['busbw'] / 1e9:>8.1f} {r['membw'] / 1e9:>9.1f} "
            f"{r['efficiency'] * 100:>5.1f} "
            f"{(t * 1e3 if t else float('nan')):>9.3f} {(t / r['seconds'] if t else float('nan')):>7.2f} "
            f"{(rp * 1e3 if rp else float('nan')):>9.3f} "
            f"{(rp / r['seconds'] if rp else float('nan')):>8.2f}")
    return "\n".join(lines)


# -- GPU parts (torch) ---------------------------------------------------------

def preload(folder):
    """The stub and the wrappers, by path, before any program."""
    for name in ("libLLVM.so", "libmlir_cuda_runtime.so"):
        ctypes.CDLL(os.path.join(folder, name), mode=ctypes.RTLD_GLOBAL)


def _torch_ops(torch):
    return {"sum": torch.add, "prod": torch.mul, "max": torch.maximum, "min": torch.minimum,
            "and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor}


def make_inputs(torch, p, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    dt = getattr(torch, TORCH_DTYPES[p["dtype"]])
    shape = (p["numel"],)
    xs = []
    for _ in range(p["n"]):
        if p["dtype"] == "i1":
            xs.append(torch.randint(0, 2, shape, device="cuda", generator=g).bool())
        elif p["dtype"].startswith("i"):
            lo, hi = (-100, 100) if p["kind"] != "prod" else (-3, 4)
            xs.append(torch.randint(lo, hi, shape, device="cuda", generator=g).to(dt))
        elif p["kind"] == "prod":
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


def close_enough(torch, y, ref, p):
    if p["dtype"] in ("f16", "bf16"):
        return bool(torch.allclose(y.float(), ref.float(), rtol=1e-2, atol=1e-2))
    if p["dtype"] in ("f32", "f64"):
        return bool(torch.allclose(y, ref, rtol=1e-5, atol=1e-5 * p["n"]))
    return bool(torch.equal(y, ref))


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


def _host(t):
    """A device tensor (or part of it) as a numpy array (bf16 as float32)."""
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.cpu().numpy()


def numpy_check(xs, ys, p):
    """Every output against numpy's reduction of the inputs, on the host."""
    numel = p["numel"]
    parts = [slice(0, numel)] if numel <= NUMPY_WHOLE else [
        slice(0, NUMPY_ENDS), slice(numel - NUMPY_ENDS, numel)]
    for part in parts:
        want = numpy_reference([_host(x[part]) for x in xs], p["kind"])
        if not all(numpy_close(_host(y[part]), want, p["dtype"], p["n"]) for y in ys):
            return False
    return True


def time_events(torch, fn, repeat, warmup=2):
    """Seconds of each of `repeat` calls of `fn`, by CUDA events recorded
    on torch's stream around it."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) / 1e3)
    return out


def poison(torch, t):
    if t.dtype.is_floating_point:
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.view(torch.uint8).fill_(0x5A)
    else:
        t.fill_(-7)


def time_torch(torch, fn, repeat, warmup=2):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t0)
    return out


def copy_bandwidth(torch, nbytes, repeat):
    a = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    a.fill_(1)
    t = median(time_events(torch, lambda: b.copy_(a), repeat))
    return 2 * nbytes / t


def run_program(torch, cuda_driver, folder, p, timing, references=False):
    """Checks one program, and times it if asked (and the torch references
    for the same inputs if `references`)."""
    xs = make_inputs(torch, p, seed=len(p["file"]))
    ys = [torch.empty_like(x) for x in xs]
    ws = [torch.empty(p["workspace_bytes"], dtype=torch.uint8, device="cuda")] \
        if p["workspace_bytes"] else []
    bufs = xs + ys + ws
    prog = cuda_driver.Program(os.path.join(folder, p["file"]), p["entry"])
    row = {k: p[k] for k in ("set", "size", "n", "numel", "dtype", "kind", "strategy", "variant", "file")}
    try:
        args = prog.bind([t.data_ptr() for t in bufs], [tuple(t.shape) for t in bufs])
        ref = reference(torch, xs, p["kind"])
        for y in ys:
            poison(torch, y)
        torch.cuda.synchronize()  # our streams do not wait for torch's
        prog.call(args)
        row["torch_ok"] = all(close_enough(torch, y, ref, p) for y in ys)
        row["numpy_ok"] = numpy_check(xs, ys, p)
        row["ok"] = row["torch_ok"] and row["numpy_ok"]
        if timing:
            repeat = REPEATS.get(p["size"], 5)
            torch.cuda.synchronize()
            row["seconds"] = median(prog.time_calls(args, repeat))
            row["event_seconds"] = median(time_events(torch, lambda: prog.call(args), repeat))
    finally:
        prog.close()
    if timing and references and p.get("schedule"):
        row.update(torch_references(torch, p, xs, ys, repeat))
    del xs, ys, ws, bufs
    return row


def torch_references(torch, p, xs, ys, repeat):
    """Times "torch" (sum, then copy out) and "replay" (the same schedule)."""
    ops = _torch_ops(torch)

    def direct():
        acc = ys[0]
        torch.add(xs[0], xs[1], out=acc)
        for x in xs[2:]:
            acc.add_(x)
        for y in ys[1:]:
            y.copy_(acc)

    scratch = {k: torch.empty(v, dtype=xs[0].dtype, device="cuda")
               for k, v in p["schedule"]["buffers"].items()}
    bufs = {**{f"x{i}": x for i, x in enumerate(xs)}, **{f"y{i}": y for i, y in enumerate(ys)},
            **scratch}

    def combine(kind, ins, out, aliased):
        fn = ops[kind]
        if aliased:
            acc = fn(ins[0], ins[1])
            for v in ins[2:]:
                acc = fn(acc, v)
            out.copy_(acc)
            return
        fn(ins[0], ins[1], out=out)
        for v in ins[2:]:
            fn(out, v, out=out)

    def same():
        replay(p["schedule"], bufs, lambda d, s: d.copy_(s), combine)

    out = {"torch_seconds": median(time_events(torch, direct, repeat))}
    out["replay_seconds"] = median(time_events(torch, same, repeat))
    ref = reference(torch, xs, p["kind"])
    out["replay_ok"] = all(close_enough(torch, y, ref, p) for y in ys)
    return out


# -- compute-sanitizer ----------------------------------------------------------

def find_sanitizer():
    """compute-sanitizer on PATH or in a CUDA toolkit folder, else None."""
    import glob
    import shutil
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for path in sorted(glob.glob("/usr/local/cuda*/bin/compute-sanitizer"), reverse=True):
        return path
    return None


def sanitizer_errors(output):
    """Errors a compute-sanitizer report counts (None: no summary line)."""
    counts = [int(m) for m in re.findall(r"ERROR SUMMARY: (\d+) error", output)]
    counts += [int(m) for m in re.findall(r"hazards displayed \((\d+) error", output)]
    return sum(counts) if counts else None


def check_one(folder, p):
    """Runs program `p` once with the CUDA driver alone (no torch, so that it
    stays light under compute-sanitizer) on random inputs; True when every
    output matches numpy. Float programs only (the sanitize set is f32)."""
    import numpy as np
    import cuda_driver
    drv = cuda_driver.Driver(0)
    preload(folder)
    np_t = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[p["dtype"]]
    rng = np.random.default_rng(len(p["file"]))
    xs = [(rng.random(p["numel"]) + 0.5).astype(np_t) for _ in range(p["n"])]
    ys = [np.empty_like(xs[0]) for _ in range(p["n"])]
    shapes = [a.shape for a in xs + ys]
    sizes = [a.nbytes for a in xs + ys]
    if p["workspace_bytes"]:
        shapes.append((p["workspace_bytes"],))
        sizes.append(p["workspace_bytes"])
    ptrs = [drv.alloc(nb) for nb in sizes]
    try:
        for ptr, a in zip(ptrs, xs):
            drv.upload(ptr, a)
        for ptr, y in zip(ptrs[len(xs):], ys):
            drv.fill(ptr, y.nbytes, 0xFF)  # NaN until written
        prog = cuda_driver.Program(os.path.join(folder, p["file"]), p["entry"])
        try:
            prog.call(prog.bind(ptrs, shapes))
        finally:
            prog.close()
        drv.synchronize()
        for ptr, y in zip(ptrs[len(xs):], ys):
            drv.download(y, ptr)
    finally:
        for ptr in ptrs:
            drv.free(ptr)
    want = numpy_reference(xs, p["kind"])
    return all(numpy_close(y, want, p["dtype"], p["n"]) for y in ys)


def run_sanitizer(folder, programs, timeout=300):
    """racecheck and memcheck on each program, each in a child process
    (`--check-one`). Returns rows, or None when compute-sanitizer is absent."""
    exe = find_sanitizer()
    if exe is None:
        return None
    rows = []
    for p in programs:
        for tool in SANITIZER_TOOLS:
            cmd = [exe, "--tool", tool, "--error-exitcode", "3", sys.executable,
                   os.path.abspath(__file__), folder, "--check-one", p["file"]]
            t0 = time.perf_counter()
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
                out = r.stdout + r.stderr
                errors = sanitizer_errors(out)
                ok = r.returncode == 0 and errors == 0
                tail = "" if ok else out[-2000:]
            except subprocess.TimeoutExpired:
                ok, errors, tail = False, None, f"timed out after {timeout} s"
            rows.append(dict(file=p["file"], strategy=p["strategy"], tool=tool, ok=ok,
                             errors=errors, seconds=round(time.perf_counter() - t0, 1), tail=tail))
            print(f"  compute-sanitizer --tool {tool} {p['file']}: "
                  f"{'ok' if ok else 'FAIL'} ({errors} errors)", flush=True)
    return rows


def sanitizer_lines(rows):
    if rows is None:
        return ["compute-sanitizer: not found on this machine (racecheck/memcheck NOT run)"]
    bad = [r for r in rows if not r["ok"]]
    return [f"compute-sanitizer: {len(rows) - len(bad)}/{len(rows)} runs clean"] + [
        f"  FAIL {r['tool']} {r['file']}: {r['errors']} errors\n{r['tail']}" for r in bad]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", default=HERE)
    ap.add_argument("--results", default=os.path.join("bench", "results"),
                    help="where results.txt and results.json go (default: bench/results)")
    ap.add_argument("--quick", action="store_true", help="1 MB and the dtype checks only")
    ap.add_argument("--only", default=None, help="programs whose file name contains this")
    ap.add_argument("--no-sanitize", action="store_true", help="skip compute-sanitizer")
    ap.add_argument("--sanitize-only", action="store_true", help="only the compute-sanitizer runs")
    ap.add_argument("--check-one", default=None, metavar="FILE",
                    help="check one program against numpy with the CUDA driver alone (exit 1 if wrong)")
    args = ap.parse_args(argv)

    if not os.path.exists(os.path.join(args.folder, "manifest.json")):
        print(f"gpu_run: error: no manifest.json in {args.folder}; build it with "
              "bench/gpu_prepare.py", file=sys.stderr)
        return 2
    manifest = load_manifest(args.folder)
    if args.check_one:
        p = next((q for q in manifest["programs"] if q["file"] == args.check_one), None)
        if p is None:
            print(f"gpu_run: error: no program {args.check_one} in the manifest", file=sys.stderr)
            return 2
        ok = check_one(args.folder, p)
        print(f"{p['file']}: {'ok' if ok else 'WRONG RESULT'}")
        return 0 if ok else 1
    to_sanitize = [p for p in manifest["programs"] if p["set"] == "sanitize" and "error" not in p
                   and (not args.only or args.only in p["file"])]
    if args.sanitize_only:
        os.makedirs(args.results, exist_ok=True)
        rows = run_sanitizer(args.folder, to_sanitize)
        text = "\n".join(sanitizer_lines(rows))
        print(text)
        with open(os.path.join(args.results, "sanitizer.txt"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(args.results, "sanitizer.json"), "w") as f:
            json.dump(rows, f, indent=1)
        return 1 if rows and any(not r["ok"] for r in rows) else 0
    programs = select(manifest["programs"], args.only, args.quick)
    try:
        import torch
    except ImportError:
        print("gpu_run: error: torch is needed (for device memory and the references)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gpu_run: error: torch sees no CUDA GPU", file=sys.stderr)
        return 2
    import cuda_driver
    torch.cuda.init()
    torch.empty(1, device="cuda")  # creates the primary context the wrappers will use
    preload(args.folder)
    gpu = torch.cuda.get_device_name(0)
    print(f"GPU: {gpu}; {len(programs)} programs from {args.folder}", flush=True)

    t0 = time.perf_counter()
    os.makedirs(args.results, exist_ok=True)
    # One line per program as it completes: what survives a timeout.
    progress = open(os.path.join(args.results, "progress.jsonl"), "w")
    copy_bw = {}
    for label, nbytes in manifest["sizes"].items():
        if any(p["set"] == "perf" and p["size"] == label for p in programs):
            copy_bw[label] = copy_bandwidth(torch, nbytes, REPEATS.get(label, 5))
            print(f"copy bandwidth {label}: {copy_bw[label] / 1e9:.0f} GB/s (read + write)", flush=True)

    rows, refs = [], {}
    for p in programs:
        timing = p["set"] == "perf"
        key = (p["size"], p["n"], p["strategy"])
        try:
            row = run_program(torch, cuda_driver, args.folder, p, timing, key not in refs)
            if "replay_seconds" in row:
                refs[key] = {k: row[k] for k in ("torch_seconds", "replay_seconds", "replay_ok")}
        except Exception as e:
            row = {k: p[k] for k in ("set", "size", "n", "strategy", "variant", "dtype", "kind", "file")}
            row.update(ok=False, error=f"{type(e).__name__}: {e}")
        if "seconds" in row:
            row.update(row_metrics(p, row["seconds"], copy_bw.get(p["size"])))
        rows.append(row)
        progress.write(json.dumps(row) + "\n")
        progress.flush()
        torch.cuda.empty_cache()
        status = "ok" if row.get("ok") else "FAIL " + row.get("error", "wrong result")
        extra = f" {row['seconds'] * 1e3:.3f} ms" if "seconds" in row else ""
        print(f"  {p['file']}: {status}{extra}", flush=True)

    for r in rows:  # the references do not depend on the lowering variant
        r.update(refs.get((r["size"], r["n"], r["strategy"]), {}))
    table = format_table(rows)
    bad = [r for r in rows if not r.get("ok")]
    lines = [f"GPU: {gpu}", f"host: {platform.node()}", "", "copy bandwidth (GB/s, read + write): "
             + ", ".join(f"{k} {v / 1e9:.0f}" for k, v in copy_bw.items()), "", table, ""]
    lines.append(f"correctness: {len(rows) - len(bad)}/{len(rows)} programs ok"
                 + ("".join(f"\n  FAIL {r['file']}: {r.get('error', 'wrong result')}" for r in bad)))
    for r, ok_eff, ok_torch in verdicts(rows):
        lines.append(f"target {r['size']} N={r['n']} {r['strategy']} {r['variant']}: "
                     f"efficiency {r['efficiency'] * 100:.0f}% {'>=' if ok_eff else '<'} 70%, "
                     + ("no torch reference" if ok_torch is None else
                        f"{'faster' if ok_torch else 'slower'} than torch"))
    sanitized = None if args.no_sanitize else run_sanitizer(args.folder, to_sanitize)
    if not args.no_sanitize:
        lines += sanitizer_lines(sanitized)
    sanitize_bad = bool(sanitized) and any(not r["ok"] for r in sanitized)
    lines.append(f"wall time {time.perf_counter() - t0:.0f} s")
    text = "\n".join(lines)
    print(text)
    progress.close()
    with open(os.path.join(args.results, "results.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.results, "results.json"), "w") as f:
        json.dump({"gpu": gpu, "copy_bandwidth": copy_bw, "rows": rows, "sanitizer": sanitized},
                  f, indent=1)
    return 1 if bad or sanitize_bad else 0


if __name__ == "__main__":
    sys.exit(main())
