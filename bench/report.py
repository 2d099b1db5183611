"""Writes bench/report.md and its plots (bench/report/*.png):

1. schedule quality of each strategy for N = 2..64 (copies, kernels, bytes
   per device against 2(N-1)/N of the buffer, critical path against the
   ring and recursive halving/doubling latency bounds), and what the
   cost model predicts on an NVLink H200 node;
2. compile time against N (bench/compile_time.py);
3. the CPU profile calibration (bench/calibrate_cpu.py) and the validation
   grid of `auto` with it (bench/validate.py);
4. CPU execution efficiency against memcpy (bench/cpu_run.py);
5. GPU results under bench/results/, if any;
6. timelines of naive, ring and all2all on 4 devices.

  python bench/report.py [--quick]      (make report)
"""
import argparse
import datetime
import glob
import json
import math
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import calibrate_cpu  # noqa: E402
import compile_time  # noqa: E402
import validate  # noqa: E402
from mlir import ir  # noqa: E402

from coll.ir import make_context  # noqa: E402
from coll.ir.generate import all_reduce_module  # noqa: E402
from coll.analysis import cost_model, stats, taskgraph, timeline  # noqa: E402
from coll.passes import choose_strategy  # noqa: E402
from coll.passes.lower_all_reduce import lower_all_reduce  # noqa: E402

OUT_MD = os.path.join(HERE, "report.md")
OUT_DIR = os.path.join(HERE, "report")
STRATEGIES = ("naive", "ring", "all2all")
SCHEDULE_NS = (2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64)
COMPILE_NS = (4, 8, 16, 32, 64)
SCHEDULE_BYTES = 64 << 20  # per device, for the bytes and the predictions
COLORS = {"naive": "tab:red", "ring": "tab:blue", "all2all": "tab:green"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, name):
    path = os.path.join(OUT_DIR, name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    _plt().close(fig)
    return f"report/{name}"


def table(head, rows):
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


# -- 1. schedule quality ---------------------------------------------------------

def schedule_rows(ns=SCHEDULE_NS, nbytes=SCHEDULE_BYTES):
    nv = cost_model.load_profile("nvlink-h200")
    rows = []
    for n in ns:
        for s in STRATEGIES:
            with make_context():
                m = ir.Module.parse(all_reduce_module(n, [nbytes // 4], "f32", "sum", strategy=s))
                lower_all_reduce(m.operation)
                st = stats.analyze(m.operation)["all_reduce"]
                g = taskgraph.from_function(taskgraph.functions(m.operation)[0][1])
            rows.append(dict(n=n, strategy=s, copies=st["copies"], kernels=st["kernels"],
                             sent=st["max_bytes_sent"] / nbytes, received=st["max_bytes_received"] / nbytes,
                             steps=st["critical_path"], pairs=st["pairs"],
                             rounds=max(taskgraph.steps(g, ("copy",)), default=0),
                             nvlink_s=cost_model.simulate(g, nv).total))
        log(f"schedule quality N={n} done")
    return rows


def _n_ticks(ax, ns):
    from matplotlib.ticker import NullFormatter
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) if i % 2 == 0 or n < 10 else "" for i, n in enumerate(ns)])


def bounds(n):
    return 2 * (n - 1) / n, 2 * (n - 1), 2 * math.ceil(math.log2(n))


def schedule_section(rows):
    plt = _plt()
    ns = sorted({r["n"] for r in rows})
    by = {(r["n"], r["strategy"]): r for r in rows}
    out = []
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for s in STRATEGIES:
        axes[0].plot(ns, [by[n, s]["copies"] for n in ns], "o-", color=COLORS[s], label=f"{s} copies")
        axes[0].plot(ns, [by[n, s]["kernels"] for n in ns], "x--", color=COLORS[s], label=f"{s} kernels")
        axes[1].plot(ns, [max(by[n, s]["sent"], by[n, s]["received"]) for n in ns], "o-",
                     color=COLORS[s], label=s)
        axes[2].plot(ns, [by[n, s]["steps"] for n in ns], "o-", color=COLORS[s], label=f"{s} copies + combines")
        axes[2].plot(ns, [by[n, s]["rounds"] for n in ns], "s--", color=COLORS[s], ms=4,
                     label=f"{s} copies only")
    axes[1].plot(ns, [bounds(n)[0] for n in ns], "k:", label="bound 2(N-1)/N")
    axes[2].plot(ns, [bounds(n)[1] for n in ns], "k:", label="ring bound 2(N-1)")
    axes[2].plot(ns, [bounds(n)[2] for n in ns], "k--", label="halving/doubling 2 log2 N")
    axes[0].set(xscale="log", yscale="log", title="copies and kernels", xlabel="N")
    axes[1].set(xscale="log", yscale="log", xlabel="N")
    axes[2].set(xscale="log", yscale="log", title="critical path (dependent steps)", xlabel="N")
    axes[1].set_title("max bytes a device sends or receives / buffer\n(ring and all2all coincide)", fontsize=10)
    for ax in axes:
        ax.legend(fontsize=7)
        _n_ticks(ax, ns)
    out.append(f"![schedule quality]({_save(fig, 'schedule.png')})")

    fig, ax = plt.subplots(figsize=(6, 4))
    for s in STRATEGIES:
        ax.plot(ns, [by[n, s]["nvlink_s"] * 1e3 for n in ns], "o-", color=COLORS[s], label=s)
    ax.set(xscale="log", yscale="log", xlabel="N", ylabel="predicted ms",
           title=f"nvlink-h200 prediction, {SCHEDULE_BYTES >> 20} MiB per device")
    _n_ticks(ax, ns)
    ax.legend()
    out.append(f"![nvlink predictions]({_save(fig, 'nvlink_prediction.png')})")

    head = ["N", "strategy", "copies", "kernels", "pairs", "max sent/B", "max recv/B", "bound 2(N-1)/N",
            "crit. path", "copy rounds", "ring bound 2(N-1)", "2 log2 N",
            f"nvlink-h200 ms ({SCHEDULE_BYTES >> 20} MiB)"]
    trs = []
    for r in rows:
        b = bounds(r["n"])
        trs.append([r["n"], r["strategy"], r["copies"], r["kernels"], r["pairs"], f"{r['sent']:.3f}",
                    f"{r['received']:.3f}", f"{b[0]:.3f}", r["steps"], r["rounds"], b[1], b[2],
                    f"{r['nvlink_s'] * 1e3:.3f}"])
    out.append(table(head, trs))
    return out


def nvlink_picks(ns=(2, 4, 8, 16), sizes=(4 << 10, 256 << 10, 1 << 20, 4 << 20, 64 << 20, 1 << 30)):
    nv = cost_model.load_profile("nvlink-h200")
    rows = []
    for n in ns:
        row = [n]
        for b in sizes:
            coll = choose_strategy.Collective(tuple(range(n)), b // 4, "f32", "sum")
            row.append(choose_strategy.pick(choose_strategy.candidates(coll, nv)))
        rows.append(row)
    return table(["N"] + [validate.human(b) for b in sizes], rows)


# -- 2. compile time -----------------------------------------------------------------

def compile_section(ns=COMPILE_NS, rows=None):
    """bench/compile_time.py's stages (each in a child process) per strategy
    and N, or `rows` a run of it wrote (--json); rows also in
    report/compile-time.json."""
    if rows is None:
        rows = []
        for s in STRATEGIES:
            for n in ns:
                rows.append(compile_time.measure_point(n, s, gpu=compile_time.gpu_available()))
            log(f"compile time {s} done")
        with open(os.path.join(OUT_DIR, "compile-time.json"), "w") as f:
            json.dump(rows, f, indent=1)
    return compile_render(rows)


def compile_render(rows):
    """The plot (time against N, log axes) and the table of `rows`."""
    ns = sorted({r["n"] for r in rows})
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    styles = {"lower_s": ":", "route_s": "--", "jit_s": "-.", "e2e_s": "-", "gpu_route_s": (0, (1, 4))}
    for s in STRATEGIES:
        mine = [r for r in rows if r["strategy"] == s]
        for key, style in styles.items():
            sel = [r for r in mine if r.get(key) is not None]
            if sel:
                axes[0].plot([r["n"] for r in sel], [r[key] for r in sel], linestyle=style, marker="o",
                             color=COLORS[s], label=f"{s} {key[:-2]}" if s == "ring" or key == "e2e_s" else None)
        for key, marker in (("e2e_cpu", "o"), ("gpu_route_cpu", "s")):
            sel = [r for r in mine if r.get(key) is not None]
            if sel:
                axes[1].plot([r["n"] for r in sel], [r[key] / (r["copies"] + r["kernels"]) * 1e6 for r in sel],
                             marker=marker, linestyle="-" if key == "e2e_cpu" else ":", color=COLORS[s],
                             label=f"{s} {'CPU e2e' if key == 'e2e_cpu' else 'GPU route'}")
    axes[0].set(xscale="log", yscale="log", xlabel="N", ylabel="s", title="stage time (wall)")
    axes[1].set(xscale="log", yscale="log", xlabel="N", ylabel="us CPU per copy+kernel",
                title="CPU end to end and GPU route, per op")
    for ax in axes:
        ax.legend(fontsize=7)
        _n_ticks(ax, ns)
        ax.set_xticklabels([str(n) for n in ns])  # few Ns: every one named
    return [f"![compile time]({_save(fig, 'compile_time.png')})",
            table(compile_time.heads(), [compile_time.cells(r) for r in rows]),
            "", "\n".join(f"- {t}" for t in compile_time.targets(rows))]


# -- 3. calibration and validation ----------------------------------------------------

def profile_section(prof):
    rows = [[k, f"{prof[k]:.3g}"] for k in ("call_overhead_s", "link_latency_s", "kernel_launch_s",
                                            "alloc_s", "scratch_bandwidth_Bps")]
    rows += [[f"memory_bandwidth_Bps @ {w / 2**20:g} MiB", f"{v / 1e9:.1f} GB/s"]
             for w, v in prof["memory_bandwidth_Bps"]]
    return table(["parameter", "value"], rows)


def validation_section(rows):
    plt = _plt()
    ns = sorted({r["n"] for r in rows})
    fig, axes = plt.subplots(1, len(ns), figsize=(4 * len(ns), 3.6), squeeze=False)
    for ax, n in zip(axes[0], ns):
        # Times over the fastest measured strategy's: 1 is the best; the
        # dotted predictions show the model's absolute error too.
        sel = [r for r in rows if r["n"] == n]
        xs = [r["bytes"] for r in sel]
        best = [min(r["measured"].values()) for r in sel]
        for s in STRATEGIES:
            ax.plot(xs, [r["measured"][s] / b for r, b in zip(sel, best)], "o-", color=COLORS[s],
                    label=f"{s} measured")
            ax.plot(xs, [r["predicted"][s] / b for r, b in zip(sel, best)], ":", color=COLORS[s],
                    label=f"{s} predicted")
        ax.plot(xs, [r["measured"][r["pick"]] / b for r, b in zip(sel, best)], "k*", ms=10,
                label="auto's pick")
        ax.axhline(1 + validate.TOLERANCE, color="0.5", lw=0.8, ls="--", label="fastest + 10%")
        ax.set(xscale="log", yscale="log", xlabel="bytes per device", ylabel="time / fastest measured",
               title=f"CPU, N={n}")
    axes[0][0].legend(fontsize=6)
    out = [f"![validation]({_save(fig, 'validation.png')})"]
    trs = []
    for r in rows:
        m, p = r["measured"], r["predicted"]
        trs.append([r["n"], validate.human(r["bytes"])]
                   + [f"{m[s] * 1e3:.3f} ({p[s] * 1e3:.3f})" for s in STRATEGIES]
                   + [r["pick"], r["fastest"], f"{m[r['pick']] / m[r['fastest']]:.2f}",
                      "ok" if r["ok"] else "MISS", r["reference"], "ok" if r["ref_ok"] else "miss"])
    out.append(table(["N", "size/device"] + [f"{s} ms (pred.)" for s in STRATEGIES]
                     + ["auto pick", "fastest", "pick/fastest", "within 10%", "reference rule", "ref. within 10%"],
                     trs))
    return out


# -- 4. CPU efficiency -----------------------------------------------------------------

def cpu_section(devices=(4, 8), mibs=(1, 16, 64)):
    try:
        import cpu_run
    except ImportError as e:
        return [f"bench/cpu_run.py is not usable here ({e}): skipped."]
    import inspect
    # cpu_run.measure(n, mib) times memcpy beside each row; older versions
    # took one memcpy figure for the whole run.
    per_row = len(inspect.signature(cpu_run.measure).parameters) == 2
    memcpy = None if per_row else cpu_run.memcpy_bandwidth()
    rows = []
    for n in devices:
        for mib in mibs:
            rows += cpu_run.measure(n, mib) if per_row else cpu_run.measure(n, mib, memcpy)
        log(f"cpu_run N={n} done")
    for r in rows:
        r.setdefault("memcpy", memcpy)
    plt = _plt()
    fig, axes = plt.subplots(1, len(devices), figsize=(5 * len(devices), 3.6), squeeze=False)
    for ax, n in zip(axes[0], devices):
        for s in STRATEGIES:
            sel = [r for r in rows if r["devices"] == n and r["strategy"] == s]
            ax.plot([r["mib"] for r in sel], [r["bw_ratio"] for r in sel], "o-", color=COLORS[s], label=s)
        ax.axhline(1.0, color="k", ls=":", lw=0.8)
        ax.set(xscale="log", xlabel="MiB per device", ylabel="effective bandwidth / memcpy",
               title=f"CPU runtime, N={n}")
        ax.legend(fontsize=8)
    out = ["Effective bandwidth = bytes the explicit program reads plus writes / time (median); "
           "memcpy = numpy copyto, bytes read + written per second, timed beside the program. "
           "Ratios above 1 are expected: the runtime runs ops tile by tile (lowering/cpu_fuse.py), so "
           "scratch and just-written chunks are re-read from cache, not DRAM.",
           f"![cpu efficiency]({_save(fig, 'cpu_efficiency.png')})",
           table(["N", "MiB/device", "strategy", "ms", "eff. GB/s", "memcpy GB/s", "eff./memcpy", "numpy ms",
                  "prog/numpy", "check"],
                 [[r["devices"], r["mib"], r["strategy"], f"{r['time_s'] * 1e3:.2f}",
                   f"{r['bandwidth'] / 1e9:.1f}", f"{r['memcpy'] / 1e9:.1f}", f"{r['bw_ratio']:.2f}",
                   f"{r['numpy_s'] * 1e3:.2f}",
                   f"{r['numpy_ratio']:.2f}", "ok" if r["ok"] else "FAIL"] for r in rows])]
    return out


# -- 5. GPU results -----------------------------------------------------------------------

def gpu_section():
    found = sorted(glob.glob(os.path.join(HERE, "results", "**", "results.txt"), recursive=True))
    if not found:
        return ["none yet (bench/results/ holds no results.txt; see bench/README-gpu.md)."]
    out = []
    for path in found:
        with open(path) as f:
            out.append(f"`{os.path.relpath(path, HERE)}`:\n\n```\n{f.read().rstrip()}\n```")
    return out


# -- 6. timelines -------------------------------------------------------------------------

def timeline_section(n=4, numel=SCHEDULE_BYTES // 4):
    """By dependent step, then by predicted time on nvlink-h200."""
    nv = cost_model.load_profile("nvlink-h200")
    steps, timed = [], []
    for s in STRATEGIES:
        with make_context():
            m = ir.Module.parse(all_reduce_module(n, [numel], "f32", "sum", strategy=s))
            lower_all_reduce(m.operation)
            g = taskgraph.from_function(taskgraph.functions(m.operation)[0][1])
        name = f"timeline_n{n}_{s}.png"
        timeline.draw([(f"{s}, N={n}", g)], os.path.join(OUT_DIR, name))
        steps.append(f"![{s}](report/{name})")
        name = f"timeline_n{n}_{s}_nvlink.png"
        timeline.draw([(f"{s}, N={n}, {numel * 4 >> 20} MiB", g)], os.path.join(OUT_DIR, name), nv)
        timed.append(f"![{s} on nvlink-h200](report/{name})")
    return steps + [f"\nThe same programs ({numel * 4 >> 20} MiB per device) placed at their predicted "
                    "times on `nvlink-h200`:\n"] + timed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller grids (a smoke run)")
    p.add_argument("--compile-json", default=None,
                   help="render the compile-time section from these rows (bench/compile_time.py --json) "
                        "instead of measuring them")
    p.add_argument("--compile-only", action="store_true",
                   help="with --compile-json: write only report/compile_time.png and print the section")
    args = p.parse_args(argv)
    if args.compile_only:
        if not args.compile_json:
            p.error("--compile-only needs --compile-json")
        os.makedirs(OUT_DIR, exist_ok=True)
        with open(args.compile_json) as f:
            print("\n".join(compile_render(json.load(f))))
        return 0
    t0 = time.perf_counter()
    os.makedirs(OUT_DIR, exist_ok=True)
    started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")

    log("calibrating the CPU profile ...")
    prof = calibrate_cpu.calibrate(calibrate_cpu.QUICK_SETS if args.quick else calibrate_cpu.WORKING_SETS, log=log)
    prof_path = os.path.join(OUT_DIR, "cpu-profile.json")
    with open(prof_path, "w") as f:
        json.dump(prof, f, indent=1)
    log("validation grid ...")
    sizes = validate.QUICK_SIZES if args.quick else validate.SIZES
    vrows = validate.grid(cost_model.load_profile(prof_path), sizes=sizes, log=log)
    rate, ref_rate = validate.hit_rate(vrows), validate.hit_rate(vrows, "ref_ok")
    with open(os.path.join(OUT_DIR, "validation.json"), "w") as f:
        json.dump(vrows, f, indent=1)
    log("schedule quality ...")
    srows = schedule_rows(SCHEDULE_NS[:7] if args.quick else SCHEDULE_NS)
    log("compile time ...")
    if args.compile_json:
        with open(args.compile_json) as f:
            comp = compile_section(rows=json.load(f))
    else:
        comp = compile_section(COMPILE_NS[:3] if args.quick else COMPILE_NS)
    log("CPU efficiency ...")
    cpu = cpu_section(mibs=(1, 16) if args.quick else (1, 16, 64))
    tl = timeline_section()

    md = [f"# coll benchmark report\n",
          f"Written by `make report` (`python bench/report.py{' --quick' if args.quick else ''}`) on "
          f"{platform.node()} ({platform.machine()}, {os.cpu_count()} cpus), {started}. "
          f"Plots in `bench/report/`.\n",
          "## Validation: `auto` with the calibrated CPU profile\n",
          "`coll-lower-all-reduce{profile=P}` lowers `strategy=auto` to the strategy with the lowest time "
          "predicted by the cost model (`passes/cost_model.py`) on profile P; without a profile, `auto` "
          "is the reference rule (ring when N > 2 and numel > 256000, else naive). Here P is the CPU "
          "profile this run calibrated (`bench/report/cpu-profile.json`). Every strategy is timed on "
          "CPU-simulated devices (best of interleaved rounds, f32 sum); a point is ok when the pick's "
          "time is within 10% of the fastest strategy's.\n",
          f"**auto (cost model) within 10% of the fastest: {rate:.0%} of {len(vrows)} points "
          f"(target 90%: {'met' if rate >= validate.TARGET else 'MISSED'}).** "
          f"The reference threshold rule: {ref_rate:.0%}.\n"]
    md += validation_section(vrows)
    md += ["\nCalibrated CPU profile (`bench/calibrate_cpu.py`):\n", profile_section(prof), ""]
    md += ["## Schedule quality\n",
           f"Lowered with each strategy (f32, {SCHEDULE_BYTES >> 20} MiB per device); counts from "
           "`passes/stats.py`. Bytes are the most any device sends or receives, over the buffer size; "
           "the bandwidth lower bound is 2(N-1)/N. The critical path counts dependent copies and "
           "combines (`stats.py`); copy rounds count dependent copies only, which is what the latency "
           "bounds count: 2(N-1) rounds for a ring (ring meets it: its 3(N-1) steps are 2(N-1) copy "
           "rounds plus N-1 combines), 2 log2 N for recursive halving/doubling (not implemented; "
           "naive and all2all take 1 and 2 rounds by sending N-1 messages at once). The last column "
           "is the cost model's prediction on the `nvlink-h200` profile (public figures, "
           "`analysis/profiles/nvlink-h200.json`).\n"]
    md += schedule_section(srows)
    md += ["\nWhat `auto` with `profile=nvlink-h200` picks (f32 sum, bytes per device):\n", nvlink_picks(), ""]
    md += ["## Compile time\n", "`bench/compile_time.py`: one all_reduce (f32 sum, 4096 elements per "
           "device) through every CPU stage, each in a child process: lowering + verification, the CPU "
           "route (coll-to-cpu, coll-cpu-to-llvm), the JIT, the first checked run, and all of it in one "
           "process (e2e, like coll-run), and the GPU route from the explicit module to the shared library "
           "(`gpu route`, like coll-build --emit=so; no GPU needed). Seconds (wall, and CPU for e2e and "
           "the GPU route, its tools included), peak RSS in MB.\n"] + comp
    md += ["\n## CPU execution efficiency\n", "From `bench/cpu_run.py` (its functions, smaller sizes).\n"] + cpu
    md += ["\n## GPU results\n"] + gpu_section()
    md += ["\n## Timelines, N = 4\n", "`coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce"
           "{strategy=S},coll-timeline{file=out.png})'`: one lane per device, copies as arrows from "
           "source to target (blue into scratch, green into results), combines as boxes, by "
           "dependent step.\n"] + tl
    md.append(f"\nReport written in {time.perf_counter() - t0:.0f} s.")
    with open(OUT_MD, "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"{OUT_MD}: auto within 10% at {rate:.0%} of {len(vrows)} points "
          f"(reference rule {ref_rate:.0%}); {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
