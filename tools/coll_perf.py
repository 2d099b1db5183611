"""coll-perf: a sweep over sizes in the shape of nccl-tests, for every
collective and back end.

  coll-perf [COLLECTIVE ...] [--backend cpu|mpi|gpu|all] [-b 4K] [-e 4M] [-f 4 | -i BYTES]
            [-g 4] [-n 20] [-w 5] [-c 1] [-o sum] [-d float] [-r 0] [-s auto|all|S[,S...]]
            [--json FILE] [--plot FILE.png] [--quiet]

For each back end, collective, strategy, element type and reduction kind
it prints one table as nccl-tests does (all_reduce_perf and the others):
one line per size with, out of place and in place, the time, algbw,
busbw and #wrong, then the average bus bandwidth. The columns are
execution/measure.py's, the same numbers coll-run prints for the same
module (time: the median of the timed calls, in us). Each size of each
strategy is compiled once, checked once against numpy on generated inputs
(-c 1), then timed: -w calls discarded, -n timed (after the runtime's own
untimed first call).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from mlir import ir

from coll import lowering as registry
from coll.analysis.cost_model import output_path_error
from coll.collectives import COLLECTIVES
from coll.execution import check
from coll.execution.measure import Runs, help_text, memory_needed
from coll.execution.memory import MemoryLimit, require
from coll.execution.signature import NUMPY_DTYPES
from coll.ir import MAX_DEVICES, make_context
from coll.ir.generate import collective_module
from coll.ir.kinds import ELEMENTS, KINDS
from coll.ir.verifier import _kind_error as kind_error  # the verifier's rule, the one place it is

from ..lowering.base import Backend
from .args import ArgumentParser
from .diagnostics import Failure, tool_main
from .output import write_atomically

# nccl-tests' names of the element types that it has.
NCCL_TYPES = {"f16": "half", "bf16": "bfloat16", "f32": "float", "f64": "double", "i8": "int8",
              "i16": "int16", "i32": "int32", "i64": "int64", "i1": "bool"}
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _size(text: str) -> int:
    """'4K' -> 4096 (nccl-tests' -b/-e: bytes, optionally K, M, G or T)."""
    t = text.strip().upper()
    unit = t[-1:] if t[-1:] in UNITS and t[-1:] else ""
    try:
        n = int(t[:-1] if unit else t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid size '{text}'; expected bytes, optionally with K, M, G or T "
                                         "(e.g. 64K)") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"invalid size '{text}'; expected at least 1 byte")
    return n * UNITS[unit]


def _parser() -> ArgumentParser:
    p = ArgumentParser(prog="coll-perf", description="Time collectives over a range of sizes, as nccl-tests does.",
                       epilog=help_text() + "\n\nIn each table, time is the median of the timed calls in us "
                       "(nccl-tests prints their mean); N/A: no in-place form, or -c 0.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("collectives", nargs="*", metavar="COLLECTIVE",
                   help=f"{', '.join(c.short_name() for c in COLLECTIVES)} (default: all_reduce), or all")
    p.add_argument("--backend", default="cpu", help="cpu (default), mpi, gpu (cuda), or all (those not available "
                   "here are skipped with the reason)")
    p.add_argument("-b", "--minbytes", type=_size, default=_size("4K"), help="smallest size (default 4K)")
    p.add_argument("-e", "--maxbytes", type=_size, default=_size("4M"), help="largest size (default 4M)")
    p.add_argument("-f", "--stepfactor", type=int, default=None, help="multiply the size by this (default 4)")
    p.add_argument("-i", "--stepbytes", type=_size, default=None, help="or add this many bytes")
    p.add_argument("-g", "--devices", type=int, default=4, help="devices (mpi: ranks), default 4")
    p.add_argument("-n", "--iters", type=int, default=20, help="timed calls per size (default 20)")
    p.add_argument("-w", "--warmup_iters", type=int, default=5, help="calls before those, not counted (default 5)")
    p.add_argument("-c", "--check", type=int, default=1, choices=(0, 1), help="check the results (default 1)")
    p.add_argument("-o", "--op", default="sum", help="reduction kind: sum (default), prod, max, min, and, or, xor, "
                   "or all")
    p.add_argument("-d", "--datatype", default="float", help="float (default), half, bfloat16, double, int8, "
                   "int16, int32, int64, the coll names (f32, ...), or all")
    p.add_argument("-r", "--root", type=int, default=0, help="root of reduce and broadcast (default 0)")
    p.add_argument("-s", "--strategy", default="auto", help="auto (default: what the compiler chooses), all "
                   "(every strategy of each collective), or a comma-separated list")
    p.add_argument("--json", help="write every measurement here")
    p.add_argument("--plot", help="write a plot of busbw against size, one line per strategy (.png)")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    return p


def _usage(p: argparse.ArgumentParser, msg: str) -> NoReturn:
    p.error(msg)  # exits 1 with the usage


def _lists(p: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Any, ...]:
    """(backends, collective classes, strategies (None: all), element types,
    kinds) from the arguments; usage errors for anything unknown."""
    names = {c.short_name(): c for c in COLLECTIVES}
    wanted = [c.replace("-", "_") for c in args.collectives] or ["all_reduce"]
    if "all" in wanted:
        wanted = list(names)
    for c in wanted:
        if c not in names:
            _usage(p, f"unknown collective '{c}'; expected one of: {', '.join(names)}, all")
    classes = [names[c] for c in dict.fromkeys(wanted)]
    chosen = registry.get(args.backend)
    backends: list[Backend]
    if args.backend == "all":
        backends = list(registry.BACKENDS.values())
    elif chosen is None:
        _usage(p, f"unknown backend '{args.backend}'; expected one of: {', '.join(registry.names())}, all")
    else:
        backends = [chosen]
    by_nccl = {v: k for k, v in NCCL_TYPES.items()}
    if args.datatype == "all":
        elements = [e for e in ELEMENTS if e != "i1"]
    elif args.datatype in ELEMENTS or args.datatype in by_nccl:
        elements = [by_nccl.get(args.datatype, args.datatype)]
    else:
        _usage(p, f"unknown datatype '{args.datatype}'; expected one of: "
                  f"{', '.join(NCCL_TYPES[e] for e in ELEMENTS)}, {', '.join(ELEMENTS)}, all")
    if args.op == "all":
        kinds = ["sum", "prod", "max", "min"]
    elif args.op in KINDS:
        kinds = [args.op]
        bad = [e for e in elements if kind_error(args.op, e)]
        if bad and len(bad) == len(elements):
            _usage(p, f"-o {args.op}: {kind_error(args.op, bad[0])}")
    else:
        _usage(p, f"unknown op '{args.op}'; expected one of: {', '.join(KINDS)}, all")
    strategies: list[str] | None = None
    if args.strategy != "all":
        strategies = [s.strip() for s in args.strategy.split(",") if s.strip()]
        known: set[str] = {name for c in classes for name in c.STRATEGIES} | {"auto"}
        for s in strategies or [""]:
            if s not in known:
                _usage(p, f"unknown strategy '{s}' for {', '.join(c.short_name() for c in classes)}; expected "
                          f"one of: auto, all, {', '.join(sorted(known - {'auto'}))}")
    if not 1 <= args.devices <= MAX_DEVICES:
        _usage(p, f"-g must be 1..{MAX_DEVICES} devices, got {args.devices}")
    if args.iters < 1 or args.warmup_iters < 0:
        _usage(p, f"-n must be >= 1 and -w >= 0, got -n {args.iters} -w {args.warmup_iters}")
    if not 0 <= args.root < args.devices:
        _usage(p, f"-r must be a device of the group, 0..{args.devices - 1}, got {args.root}")
    if args.minbytes > args.maxbytes:
        _usage(p, f"-b ({args.minbytes} bytes) is larger than -e ({args.maxbytes} bytes)")
    if args.stepfactor is not None and args.stepbytes is not None:
        _usage(p, "-f and -i exclude each other; give one")
    if args.stepfactor is not None and args.stepfactor < 2:
        _usage(p, f"-f must be >= 2, got {args.stepfactor}")
    for flag, path in (("--json", args.json), ("--plot", args.plot)):
        if path is not None:
            why = output_path_error(path)
            if why:
                _usage(p, f"{flag}: {why}")
    return backends, classes, strategies, elements, kinds


def sizes(lo: int, hi: int, factor: int | None = None, step: int | None = None) -> list[int]:
    """nccl-tests' sizes: lo, then times `factor` (or plus `step`) up to hi."""
    out: list[int] = []
    s = lo
    while s <= hi:
        out.append(s)
        s = s + step if step else s * (factor or 4)
    return out


def shape_of(cls: Any, size: int, n: int, item: int) -> tuple[list[int], int]:
    """(per-device input shape, elements in nccl-tests' size) for `size`
    bytes: the blocked collectives hold a multiple of n elements (at least
    n), the others at least one."""
    count = max(size // item, 1)
    blocked = bool(cls.AXES)
    if blocked:
        count = max(count - count % n, n)
    if cls.PLACEMENT.gathers and not cls.PLACEMENT.scatters:  # each output holds n inputs
        return [count // n], count
    return [count], count


def _strategies(cls: Any, backend: Any, wanted: Sequence[str] | None) -> list[str]:
    """The strategies of `cls` to run on `backend`: those its capabilities
    meet (as coll-run's `all`)."""
    every = list(cls.runnable(backend.capabilities))
    if wanted is None:
        return every
    return [s for s in wanted if s == "auto" or s in every]


class Progress:
    """A progress line on stderr for sweeps that take a while: rewritten in
    place on a terminal, else a line every 10 s."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.done, self.quiet = total, 0, quiet
        self.t0 = self.last = time.monotonic()
        self.tty = sys.stderr.isatty()

    def step(self, what: str) -> None:
        self.done += 1
        now = time.monotonic()
        if self.quiet or now - self.t0 < 2 or (not self.tty and now - self.last < 10):
            return
        self.last = now
        line = f"coll-perf: {self.done}/{self.total} measured, {now - self.t0:.0f} s; {what}"
        print("\r" + line + "\033[K" if self.tty else line, end="" if self.tty else "\n", file=sys.stderr, flush=True)

    def clear(self) -> None:
        """Before a line on stdout: a terminal's progress line erased."""
        if self.tty and not self.quiet:
            print("\r\033[K", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        self.clear()


def _module(cls: Any, n: int, shape: list[int], el: str, kind: str, strategy: str, root: int,
            in_place: bool) -> Any:
    with make_context():  # 1-D buffers: every axis is 0 (`axis`: each axis a collective has)
        return collective_module(cls.short_name(), n, shape, el, kind=kind,
                                 strategy=None if strategy == "auto" else strategy,
                                 root=root if cls.ROOTED else None, in_place=in_place, axis=0)


def measure_point(backend: Any, cls: Any, n: int, size: int, el: str, kind: str, strategy: str, root: int,
                  in_place: bool, args: argparse.Namespace) -> Any:
    """A Measurement of one size (or None where the collective has no
    in-place form), checked unless -c 0, with the strategy it ran."""
    if in_place and not cls.IN_PLACE:
        return None
    item = NUMPY_DTYPES[el].itemsize
    shape, _ = shape_of(cls, size, n, item)
    text = _module(cls, n, shape, el, kind, strategy, root, in_place)
    with make_context():
        problem = check.describe(ir.Module.parse(text))
    require(memory_needed(problem), f"coll-perf's {cls.short_name()} of {n} x {size} bytes")
    prog = backend.compile(text, strategy=strategy)
    runs = Runs(problem, check.make_inputs(problem, 0))
    try:
        return runs.measure(prog, args.iters, args.warmup_iters, checked=bool(args.check),
                            strategy=prog.strategies[0] if prog.strategies else strategy)
    finally:
        backend.clear_cache()  # no size is measured twice: a long sweep would hold every engine


def _check_memory(plan: Any, n: int, largest: int, root: int) -> None:
    """Refuses, before anything is measured, a sweep whose largest size
    cannot fit in memory (execution/measure.py memory_needed)."""
    for cls, el, kind in dict.fromkeys((c, e, k) for _, c, _, e, k in plan):
        shape, _ = shape_of(cls, largest, n, NUMPY_DTYPES[el].itemsize)
        for in_place in (False, True) if cls.IN_PLACE else (False,):
            with make_context():
                problem = check.describe(ir.Module.parse(_module(cls, n, shape, el, kind, "auto", root, in_place)))
            try:
                require(memory_needed(problem), f"coll-perf's {cls.short_name()} of {n} x {largest} bytes ({el})")
            except MemoryLimit as e:
                raise Failure(f"coll-perf: error: -e {largest}: {e}") from None


def _time_us(t: float) -> str:
    us = t * 1e6
    return f"{us:7.0f}" if us >= 10000 else f"{us:7.1f}" if us >= 100 else f"{us:7.2f}"


def header(backend: Any, cls: Any, n: int, strategy: str, el: str, kind: str, args: argparse.Namespace,
           sizes_: list[int]) -> list[str]:
    backend = backend.name
    step = f"{args.stepbytes}(bytes)" if args.stepbytes else f"{args.stepfactor or 4}(factor)"
    return [
        f"# coll-perf: {cls.short_name()}_perf, backend {backend}, {n} {'ranks' if backend == 'mpi' else 'devices'}, "
        f"strategy {strategy}, {NCCL_TYPES.get(el, el)} ({el}), {kind if cls.HAS_KIND else 'none'}",
        f"# nThread 1 nGpus {n} minBytes {sizes_[0]} maxBytes {sizes_[-1]} step: {step} warmup iters: "
        f"{args.warmup_iters} iters: {args.iters} agg iters: 1 validation: {args.check} graph: 0",
        "#",
        f"# {'':>10}  {'':>12}  {'':>8}  {'':>6}  {'':>6}           out-of-place                       in-place",
        f"# {'size':>10}  {'count':>12}  {'type':>8}  {'redop':>6}  {'root':>6}  {'time':>7}  {'algbw':>6}  "
        f"{'busbw':>6} {'#wrong':>6}  {'time':>7}  {'algbw':>6}  {'busbw':>6} {'#wrong':>6}",
        f"# {'(B)':>10}  {'(elements)':>12}  {'':>8}  {'':>6}  {'':>6}  {'(us)':>7}  {'(GB/s)':>6}  "
        f"{'(GB/s)':>6}  {'':>5}  {'(us)':>7}  {'(GB/s)':>6}  {'(GB/s)':>6}  {'':>5}",
    ]


def line(cls: Any, el: str, kind: str, root: int, out: Any, inp: Any) -> str:
    """One nccl-tests line: size, count, type, redop, root, then time,
    algbw, busbw, #wrong out of place and in place (N/A: none)."""
    m = out or inp
    text = (f"{m.size:>12}  {m.count:>12}  {NCCL_TYPES.get(el, el):>8}  {kind if cls.HAS_KIND else 'none':>6}  "
            f"{root if cls.ROOTED else -1:>6}")
    for r in (out, inp):
        if r is None:
            text += f"  {'N/A':>7}  {'N/A':>6}  {'N/A':>6}  {'N/A':>5}"
        else:
            wrong = "N/A" if r.wrong is None else str(r.wrong + (1 if r.wrote_inputs else 0))
            text += f"  {_time_us(r.median)}  {r.algbw / 1e9:6.2f}  {r.busbw / 1e9:6.2f}  {wrong:>5}"
    return text


def run(argv: Sequence[str]) -> int:
    p = _parser()
    args = p.parse_args(argv)
    backends, classes, wanted, elements, kinds = _lists(p, args)
    sweep = sizes(args.minbytes, args.maxbytes, args.stepfactor, args.stepbytes)
    ready = []
    for b in backends:
        ok, why = b.available()
        if ok:
            ready.append(b)
        else:
            print(f"# backend {b.name} skipped: {why}", flush=True)
            print(f"coll-perf: backend {b.name} skipped: {why}", file=sys.stderr)
    if not ready:
        raise Failure(f"coll-perf: error: no back end to run on ({', '.join(b.name for b in backends)} "
                      "not available here)")
    plan = []  # (backend, cls, strategy, el, kind)
    for b in ready:
        for cls in classes:
            strategies = _strategies(cls, b, wanted)
            if wanted is not None and not strategies:
                print(f"# {cls.short_name()} has none of the strategies {', '.join(wanted)} on {b.name}: skipped")
            for s in strategies:
                for el in elements:
                    for kind in (kinds if cls.HAS_KIND else [kinds[0]]):
                        if cls.HAS_KIND and kind_error(kind, el):
                            continue
                        plan.append((b, cls, s, el, kind))
    _check_memory(plan, n=args.devices, largest=sweep[-1], root=args.root)
    places = sum(1 + c.IN_PLACE for _, c, *_ in plan)
    progress = Progress(places * len(sweep), args.quiet)
    results, total_wrong, load0 = [], 0, os.getloadavg()[0]
    n = args.devices
    try:
        for b, cls, strategy, el, kind in plan:
            for text in header(b, cls, n, strategy, el, kind, args, sweep):
                print(text)
            bus, chosen, wrong = [], [], 0
            for size in sweep:
                got = []
                for in_place in (False, True):
                    where = (f"{b.name} {cls.short_name()} {strategy} {el} at {size} bytes"
                             f"{' in place' if in_place else ''}")
                    try:
                        m = measure_point(b, cls, n, size, el, kind, strategy, args.root, in_place, args)
                    except Exception as e:  # noqa: BLE001 - says which point
                        raise Failure(f"coll-perf: error: {where}: {e}") from None
                    got.append(m)
                    if m is not None:
                        progress.step(where)
                        bus.append(m.busbw)
                        wrong += (m.wrong or 0) + m.wrote_inputs
                        results.append(dict(m.as_dict(), backend=b.name, requested=strategy, dtype=el,
                                            redop=kind if cls.HAS_KIND else None, root=args.root if cls.ROOTED else -1,
                                            in_place=in_place, warmup=args.warmup_iters, checked=bool(args.check)))
                chosen.append(f"{size}: {got[0].strategy}")
                progress.clear()
                print(line(cls, el, kind, args.root, *got), flush=True)
            total_wrong += wrong
            print(f"# Out of bounds values : {wrong} {'FAILED' if wrong else 'OK'}")
            print(f"# Avg bus bandwidth    : {sum(bus) / len(bus) / 1e9:.4f} ")
            if strategy == "auto":
                print(f"# auto chose (out of place): {', '.join(chosen)}")
            print("#")
    finally:
        progress.close()
    if args.json:
        _write_json(args, argv, results, load0)
    if args.plot:
        _write_plot(args.plot, results)
    return 1 if total_wrong else 0


def _write_json(args: argparse.Namespace, argv: Sequence[str], results: list[Any], load0: float) -> None:
    doc = {"argv": list(argv), "load_average": [load0, os.getloadavg()[0]], "cpus": os.cpu_count(),
           "results": results}
    try:
        write_atomically(args.json, json.dumps(doc, indent=1) + "\n")
    except OSError as e:
        raise Failure(f"coll-perf: error: could not write '{args.json}': {e.strerror}") from None


def _write_plot(path: str, results: list[Any]) -> None:
    """busbw against size, one line per strategy (and place), one panel per
    back end and collective."""
    import matplotlib  # matplotlib: optional (--plot only) and ~100 ms to import
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after use("Agg")

    panels: dict[tuple[str, ...], dict[str, Any]] = {}
    for r in results:
        key = (r["backend"], r["op"], r["dtype"], r["redop"])
        label = r["requested"] + (" (in place)" if r["in_place"] else "")
        panels.setdefault(key, {}).setdefault(label, []).append((r["size"], r["busbw_GBps"]))
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 3.2 * len(panels)), squeeze=False)
    for ax, ((b, op, el, kind), lines) in zip(axes[:, 0], panels.items()):
        for label, pts in lines.items():
            xs, ys = zip(*sorted(pts))
            ax.plot(xs, ys, marker="o", linestyle="--" if "in place" in label else "-", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("size (bytes per device)")
        ax.set_ylabel("busbw (GB/s)")
        ax.set_title(f"{op} {el}{' ' + kind if kind else ''}, backend {b}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    try:
        write_atomically(path, buf.getvalue())
    except OSError as e:
        raise Failure(f"coll-perf: error: could not write '{path}': {e.strerror}") from None


def main(argv: list[str] | None = None) -> NoReturn:
    """The `coll-perf` command (tools/diagnostics.py main: exit codes, errors, `| head`)."""
    tool_main("coll-perf", run, argv)


if __name__ == "__main__":
    main()
