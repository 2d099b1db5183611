"""coll-run: compile a collective module, run it on a back end, check it,
time it.

  coll-run FILE --backend=cpu|gpu|mpi [--strategy auto|S|all]
           [--inputs in.npz] [--outputs out.npz] [--repeat K] [--seed S]
           [back-end options: --ranks N --timeout SECONDS (mpi), --chip SM (gpu)]

FILE is at the collective level (one coll.all_reduce, reduce_scatter,
all_gather, reduce, broadcast or all_to_all) or the explicit level.
--strategy (other than auto) overrides the module's strategy attribute; `all`
runs every strategy of the collective the back end can run, in turn (an
in-place one gets fresh copies of the inputs for every run), and says in a
note on stderr which of its strategies it did not run and why (a capability
the back end lacks; in a program of several collectives, one strategy not
applying to all of them, as --strategy sets each one's). Inputs come
from --inputs (npz keys x0..x{N-1}) or are generated from --seed; --outputs
receives y0..y{M-1} of the first strategy run, and only when everything
succeeded. bf16 arrays are uint16 bit patterns. The table's columns (time
min/median/max, algbw, busbw as nccl-tests defines them) are
execution/measure.py's, defined in --help. Errors are MLIR-style diagnostics
and exit code 1.

The back ends and their options come from their registry (coll/lowering/):
--backend=mpi runs one process per device under mpirun; --ranks must be the
program's device count (a run with another is refused before anything
starts); a run that has not finished within --timeout seconds is killed and
reported rank by rank. `cuda` is another name of `gpu`.

A FILE with local work around its collectives (a frontend's linalg on
tensors, loops, several collectives), in the global view or SPMD, runs as
the program it is: x0.. are its inputs (by what it does with its
arguments), y0.. its outputs (or, working in place, its arguments after the
run). It has no reference of its own: the check column says `unchecked`,
and with --strategy=all every strategy's results must agree with the
first one's.

A FILE annotated with upstream shard (a shard.grid, shard.shard on a
tensor program, not partitioned) runs over its grid (mpi: one rank per
process; cpu: one simulated device per process): the npz holds the global
arguments x0.. (generated from --seed without one); coll-run partitions it
(the shard frontend's route), scatters each argument by its annotation,
runs, gathers the results into y0.. and checks them against the same
function run unsharded (CPU JIT).

A FILE that JAX exported (StableHLO in the generic form: a shard_map or a
jit with shardings) runs the same way over its mesh, and is checked
against XLA itself: the module compiled and run on XLA's CPU client with
the same inputs (where jaxlib is installed; else `unchecked`). Its npz
keys are JAX's names for the arguments and results where the export has
them (exported with debug info: `w`, `params['w1']`, `result[0]`), else
x0.. and y0...
"""
from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np
from mlir import ir

from coll.collectives import BY_NAME, COLLECTIVES
from coll.execution.check import CHUNK, WholeProgram, _elementwise, as_float, combine_depth, describe, make_inputs
from coll.execution.measure import (
    COLUMNS,
    MAX_REPEAT,  # timed runs per strategy
    MAX_TIMEOUT,  # seconds per run
    PERF_ONLY,
    Measurement,
    Runs,
    help_text,
    row,
    table,
)
from coll.execution.memory import require
from coll.execution.npz import NpzError, load
from coll.execution.signature import NUMPY_DTYPES, aligned_copy, aligned_zeros, find_entry
from coll.frontends import FRONTENDS
from coll.frontends.spmd import collective_of
from coll.frontends.stablehlo_xla import XlaError
from coll.ir import STRATEGIES, make_context
from coll.ir.errors import LocatedError, MLIRError
from coll.ir.kinds import ELEMENTS
from coll.ir.verifier import verify
from coll.ir.walk import find_ops

from .args import ArgumentParser
from .argtypes import count, seed
from .diagnostics import Collector, Failure, format_error, from_location, print_warnings, tool_main
from .output import check_writable, write_atomically
from .parse_guard import SourceError, check_input
from .source import parse, read_input

STRATEGY_CHOICES = tuple(STRATEGIES) + ("all",)


def _parser(backends: Any) -> ArgumentParser:
    p = ArgumentParser(prog="coll-run", description="Run a collective module on a back end, check it and time it.",
                       epilog=help_text([c for c in COLUMNS if c not in PERF_ONLY]),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="input .mlir file")
    p.add_argument("--backend", required=True, help=", ".join(backends.names()))
    p.add_argument("--strategy", default="auto", choices=STRATEGY_CHOICES)
    p.add_argument("--inputs", help="npz with the inputs: x0..x{N-1}, or a JAX export's argument names "
                   "(default: generated from --seed)")
    p.add_argument("--outputs", help="npz to write the results to: y0..y{M-1}, or a JAX export's result names")
    p.add_argument("--repeat", type=count(1, MAX_REPEAT), default=5,
                   help="timed runs per strategy, after one checked run and one untimed run (default 5)")
    p.add_argument("--seed", type=seed(), default=0, help="seed of the generated inputs (default 0)")
    p.add_argument("--entry", default=None, help="function to run (default: the one with llvm.emit_c_interface)")
    p.add_argument("--dump-pass-pipeline", action="store_true",
                   help="print the route each strategy is lowered with (coll-opt --pass-pipeline text) on stderr")
    by_dest: dict[str, list[tuple[str, Any]]] = {}  # an option several back ends take: one flag
    for b in backends.BACKENDS.values():
        for o in b.options:
            by_dest.setdefault(o.dest, []).append((b.name, o))
    for dest, owners in by_dest.items():
        o = owners[0][1]
        helps = "; ".join(f"{name}: {x.help}" for name, x in owners)
        if o.const is not None:
            p.add_argument(o.flag, dest=dest, action="store_const", const=o.const, default=None, help=helps)
        else:
            choices = None if any(x.choices is None for _, x in owners) else \
                list(dict.fromkeys(c for _, x in owners for c in x.choices))
            p.add_argument(o.flag, dest=dest, type=o.type, default=None, choices=choices, help=helps)
    return p


def _backend_options(args: argparse.Namespace, backend: Any, backends: Any) -> dict[str, Any]:
    """The compile options of `backend` given on the command line; an option
    of another back end is refused."""
    mine = {o.dest for o in backend.options}
    for b in backends.BACKENDS.values():
        for o in b.options:
            if o.dest not in mine and getattr(args, o.dest) is not None:
                owners = [x.name for x in backends.BACKENDS.values() if any(p.dest == o.dest for p in x.options)]
                _fail(f"{o.flag} applies to --backend={' or '.join(owners)} only")
    given = {o.dest: getattr(args, o.dest) for o in backend.options if getattr(args, o.dest) is not None}
    for o in backend.options:  # (the flag takes every back end's choices)
        if o.dest in given and o.choices is not None and given[o.dest] not in o.choices:
            _fail(f"{o.flag}={given[o.dest]} does not apply to --backend={backend.name}; expected one of: "
                  f"{', '.join(o.choices)}")
    timeout = given.get("timeout")
    if timeout is not None and not 0 < timeout <= MAX_TIMEOUT:
        _fail(f"--timeout must be > 0 seconds and at most a week ({MAX_TIMEOUT}), got {timeout}")
    given.pop("ranks", None)  # not a compile option: checked against the program's
    return given


def _collectives_of(text: str, devices: bool = False) -> Any:
    """The names of the collectives in module `text` (and the devices they
    span, with `devices`)."""
    with make_context():
        found = find_ops(ir.Module.parse(text).operation, lambda n: n in {c.NAME for c in COLLECTIVES})
        names = {op.name for op in found}
        return (names, {d for op in found for d in collective_of(op).devices}) if devices else names


def _every_strategy(names: Sequence[str], backend: Any, shown: str) -> list[str]:
    """--strategy=all on a program holding the collectives `names`: every
    strategy that each of them can run on `backend` (--strategy forces one
    strategy on all of them). The strategies of its collectives that it
    does not run are said in one note on stderr, with why (a capability
    the back end lacks, a collective the strategy does not apply to); when
    none is left, auto runs alone."""
    classes = [c for c in COLLECTIVES if c.NAME in names]
    caps = backend.capabilities
    runs = [s for s in STRATEGIES if s != "auto" and classes and all(s in c.runnable(caps) for c in classes)]
    skipped: dict[str, list[str]] = {}  # why -> the strategies
    for s in STRATEGIES:
        having = [c for c in classes if s in c.STRATEGIES]
        if s == "auto" or s in runs or not having:
            continue
        lacking = sorted(set().union(*(c.needs(s) for c in having)) - caps)
        if lacking:
            why = (f"need{{s}} {', '.join(n.replace('_', ' ') for n in lacking)}, "
                   f"which the {backend.name} back end does not offer")
        else:
            why = f"do{{es}} not apply to {', '.join(c.short_name() for c in classes if s not in c.STRATEGIES)}"
        skipped.setdefault(why, []).append(s)
    one = {"s": "s", "es": "es"}  # the verb of one strategy
    parts = [f"{', '.join(ss)}: {why.format(**(one if len(ss) == 1 else {'s': '', 'es': ''}))}"
             for why, ss in skipped.items()]
    if not runs:
        parts.append("the program has no collective" if not classes else
                     f"no strategy runs every one of its collectives "
                     f"({', '.join(sorted(c.short_name() for c in classes))}) on --backend={backend.name}")
    if parts:
        print(f"{shown}: note: --strategy=all: {'; '.join(parts)}" + ("" if runs else "; running auto only"),
              file=sys.stderr)
    return runs or ["auto"]


def _agree(got: Sequence[Any], want: Sequence[Any], tolerances: Sequence[float | None],
           elements: Sequence[str] | None = None) -> tuple[bool, float]:
    """(whether arrays `got` match `want`, the worst difference): an output
    with a tolerance within it of the largest finite magnitude (at least 1),
    NaN where `want` has NaN, each infinity where `want` has it (bf16, fp8
    read as floats where `elements` says so); the others exactly (the count
    of elements that differ). (An infinity once made the scale ~1e308, and
    every finite difference passed: an outside attack, 2026-12-07.)"""
    good, worst = True, 0.0
    for j, (y, r, tol) in enumerate(zip(got, want, tolerances)):
        if tol is not None:
            element = elements[j] if elements else str(y.dtype)
            a, b = as_float(y, element), as_float(r, element)
            finite = np.isfinite(b)
            same = bool(np.all(np.isnan(a) == np.isnan(b)) and np.all(a[np.isinf(b)] == b[np.isinf(b)]))
            err = float(np.max(np.abs(a[finite] - b[finite]), initial=0.0)) if same else np.inf
            err = np.inf if np.isnan(err) else err  # (an infinity where `want` is finite)
            good = good and err <= tol * max(1.0, float(np.max(np.abs(b[finite]), initial=0.0)))
        else:
            err = float(np.count_nonzero(y != r))
            good = good and err == 0
        worst = max(worst, err)
    return good, worst


def _fail(msg: str) -> NoReturn:
    raise Failure(f"coll-run: error: {msg}")


def _diag_text(diags: Sequence[Any]) -> str:
    return "\n".join(d.format() for d in diags)


def _located(exc: BaseException, filename: str) -> str:
    """Formats the errors coll's lowering raises (with their locations)."""
    return format_error(exc, filename)


PROGRAM = "program"  # _load's kind of a module that is more than one collective


def _load(path: str, entry: str | None) -> tuple[str, Any, str, Any]:
    """(module text, Problem or None, name for locations, the frontend whose
    program runs on global arrays, PROGRAM, or None); located diagnostics on bad
    input. Reads what coll-opt reads: a file or '-' (stdin), text (any bytes
    in comments) or bytecode."""

    try:
        data, name = read_input(path)
    except OSError as e:
        _fail(f"could not open input file '{path}': {e.strerror}")
    try:  # known parser crashes, then a parse in a child process
        check_input(data, name)
    except SourceError as e:
        raise Failure(e.format()) from None
    ctx = make_context()
    col = Collector(ctx, name)
    try:
        with ctx:
            try:
                module, _top = parse(data, name)
            except MLIRError as e:
                col.add_error(e)
                raise Failure(_diag_text(col.diags)) from None
            except LocatedError as e:  # a frontend's parse (the pretty form of StableHLO, ...)
                raise Failure(_located(e, name)) from None
            findings = verify(module.operation)
            if findings:
                raise Failure(_diag_text(col.diags + [from_location(l, m, name) for l, m in findings]))
            text = module.operation.get_asm(enable_debug_info=True)
            from coll.frontends.shard import partitioned  # one rank's program: per-device arrays
            frontend = next((f for f in FRONTENDS if f.GLOBAL and f.detect(module.operation)
                             and not partitioned(module.operation)), None)
            if frontend is not None:  # its arguments are global arrays (a job of its own)
                return text, None, name, frontend
            try:
                problem = describe(module, entry)
                _fits(problem)
            except WholeProgram:  # local work, several collectives: run as a program
                return text, None, name, PROGRAM
            except MLIRError as e:  # bufferizing the tensor form
                raise Failure(_located(e, path)) from None
            except ValueError as e:
                loc = getattr(e, "location", None) or find_entry(module, entry).location
                d = from_location(loc, str(e), name)
                raise Failure(d.format() if d.line else f"{name}:1:1: error: {e}") from None
            # The runtimes compile text: with its locations, so that later
            # errors still name the input (bytecode, stdin).
            return text, problem, name, None
    finally:
        col.detach()


def _fits(problem: Any) -> None:
    """Refuses, before anything is allocated, a run whose arrays cannot fit
    in memory: the inputs and their copy the programs run on, the outputs
    (and the first strategy's, for --outputs, or the expected values), and
    the float64 arrays of the check (a block of elements at a time where
    the collective is elementwise: execution/check.py Expected)."""
    numel = int(np.prod(problem.shape, dtype=object))
    b = problem.bytes_per_device if numel < 2 ** 62 else numel
    block = min(numel, CHUNK) if _elementwise(problem) else numel
    need = b * (2 * problem.n_inputs + 2 * problem.n_outputs) + 8 * block * (problem.n_inputs + 4)
    require(need, f"coll-run of {problem.n_inputs} inputs and {problem.n_outputs} outputs of "
                  f"{'x'.join(map(str, problem.shape)) or 'scalar'}x{problem.element}")


def _read_inputs(path: str, problem: Any) -> list[Any]:
    want = NUMPY_DTYPES[problem.element]
    names = [f"x{i}" for i in range(problem.n_inputs)]
    hint = f" ({problem.element} as {want} bits)" if ELEMENTS[problem.element].ml_dtype else ""
    try:
        data = load(path, {n: (tuple(problem.shape), want) for n in names}, hint)
    except NpzError as e:
        _fail(f"{path}: {e}")
    except OSError as e:
        _fail(f"could not read inputs '{path}': {e.strerror or e}")
    return [data[n] for n in names]


def _finish(ok: bool, path: str | None, outputs: Sequence[Any] | dict[str, Any] | None) -> int:
    """Exit code 1 after a failed check (no output file), else 0 once
    `outputs` are written to --outputs `path` (when given)."""
    if not ok:
        return 1
    if path:
        try:
            _write_outputs(path, outputs)
        except OSError as e:
            _fail(f"could not write '{path}': {e.strerror}")
    return 0


def _write_outputs(path: str, outputs: Any) -> None:
    buf = io.BytesIO()
    named = outputs if isinstance(outputs, dict) else {f"y{j}": y for j, y in enumerate(outputs)}
    np.savez(buf, **named)
    write_atomically(path, buf.getvalue())


def _depth(text: str, entry: str | None, strategy: str) -> int | None:
    """The combine depth of the explicit program `strategy` lowers the
    collective to (execution/check.py: combine_depth), or None (the check's
    N-1 bound) when it cannot be had here."""
    from coll.lowering import lower  # lazy: coll.lowering adds ~60 ms to coll-run's start-up
    try:
        with make_context():
            module = ir.Module.parse(text)
            lower(module.operation, None, strategy, check_order=False)
            return combine_depth(find_entry(module, entry))
    except Exception:  # noqa: BLE001 - only a tighter bound is lost
        return None


def problem_of(argv: Sequence[str]) -> Any:
    """The Problem that coll-run `argv` would run (None: a program, or a
    frontend's global arrays), its arguments parsed and its input loaded
    as run() does: a usage error exits 1, bad input raises Failure. For
    bench/profile_run.py, before it profiles anything."""
    from coll import lowering as backends  # lazy: ~60 ms of start-up (all back ends)
    args = _parser(backends).parse_args(argv)
    return _load(args.file, args.entry)[1]


def run(argv: Sequence[str]) -> int:
    from coll import lowering as backends  # lazy: ~60 ms of start-up (all back ends)
    args = _parser(backends).parse_args(argv)
    if args.outputs is not None:
        if not args.outputs:
            _fail("--outputs needs a file path (.npz), got ''")
        for flag, other in (("the program", args.file), ("--inputs", args.inputs)):
            if other is not None and other != "-" and os.path.exists(args.outputs) and os.path.exists(other) \
                    and os.path.samefile(args.outputs, other):
                _fail(f"--outputs '{args.outputs}' is {flag}; expected another file")
        try:  # said now, not after the runs
            check_writable(args.outputs)
        except OSError as e:
            _fail(f"could not write '{args.outputs}': {e.strerror}")
    backend = backends.get(args.backend)
    if backend is None:
        _fail(f"unknown backend '{args.backend}'; expected one of: {', '.join(backends.names())}")
    options = _backend_options(args, backend, backends)
    ok, why = backend.available()
    if not ok:
        _fail(f"backend '{args.backend}' is not available here: {why}")
    text, problem, shown, frontend = _load(args.file, args.entry)
    job: _Job
    if frontend is PROGRAM:
        job = _ProgramJob(args, backend, options, text, None, shown)
    elif frontend is not None:
        job = _GlobalJob(args, backend, options, text, frontend, shown)
    else:
        job = _CollectiveJob(args, backend, options, text, problem, shown)
    rows = [job.measure(strategy) for strategy in job.strategies()]
    print(job.title())
    for line in table(rows) + job.profile:
        print(line)
    if job.failed and isinstance(job, _GlobalJob) and not args.inputs and job.drawn_floats():
        print(f"{shown}: note: the inputs were drawn uniformly from [-1, 1] (--seed {args.seed}); a program that "
              "amplifies rounding at that scale (tanh or exp of large sums, repeated) may differ from XLA by more "
              "than rounding: --inputs IN.npz runs it on data of its own scale", file=sys.stderr)
    return _finish(not job.failed, args.outputs, job.first_outputs)


class _Job:
    """What coll-run measures: per strategy, compile, run once, check, time;
    a row of the table each."""

    def __init__(self, args: argparse.Namespace, backend: Any, options: dict[str, Any], text: str, problem: Any,
                 shown: str) -> None:
        self.args, self.backend, self.options = args, backend, options
        self.text, self.problem, self.shown = text, problem, shown
        self.failed = False
        self.first_outputs: Any = None  # npz arrays by name, or a list of them
        self.profile: list[str] = []  # --profile: a line per strategy
        self._last: Any = None  # the program compiled last

    def _compile(self, strategy: str, **extra: Any) -> Any:
        try:
            prog = self.backend.compile(self.text, self.args.entry, strategy=strategy, **extra, **self.options)
        except Exception as e:  # noqa: BLE001 - reported as a diagnostic
            raise Failure(_located(e, self.shown)) from None
        print_warnings(self.args.file)
        ranks = getattr(prog, "ranks", None)
        if self.args.ranks is not None and self.args.ranks != ranks:
            _fail(f"{self.shown}: the program is for {ranks} ranks (one per device), "
                  f"not --ranks {self.args.ranks}; nothing was started")
        if self.args.dump_pass_pipeline:
            print(prog.pipeline, file=sys.stderr)
        self._last = prog
        return prog

    def _row(self, m: Any) -> Any:
        """The table's row of Measurement `m` (execution/measure.py); with
        --profile, the split of the program's calls between its collectives
        and its local work (CpuProgram.split, MpiProgram.split: lowering/cpu/profile.py)."""
        self.failed = self.failed or not m.ok
        prog = self._last
        cpu: Any = prog
        while cpu is not None and not hasattr(cpu, "split"):  # under a frontend's wrappers (GlobalProgram, ...)
            cpu = getattr(cpu, "program", None)
        split = cpu.split() if getattr(self.args, "split", None) and cpu is not None else None
        if split is not None and split[1] and m.times:
            per_call, total = split[0] / split[1] * 1e3, float(np.mean(m.times)) * 1e3
            ranks = getattr(cpu, "rank_splits", None)  # (mpi: the mean over the ranks, and each)
            each = (f" (ranks {', '.join(f'{t / c * 1e3:.3g}' for t, c in ranks)} ms)"
                    if ranks and all(c for _, c in ranks) else "")
            self.profile.append(f"profile {m.strategy}: collectives {per_call:.4g} ms per call{each}, "
                                f"{100 * per_call / total:.0f}% of the {total:.4g} ms a call took (mean of "
                                f"{split[1]} calls); local work and the rest {max(total - per_call, 0):.4g} ms")
        return row(m)


class _CollectiveJob(_Job):
    """A module of one collective (or an explicit program that claims one):
    per-device arrays x0.. in, checked against numpy, replicas bitwise."""

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        problem, args = self.problem, self.args

        def load() -> list[Any]:
            return _read_inputs(args.inputs, problem) if args.inputs else make_inputs(problem, args.seed)
        # The reference is computed once, before any run, for every strategy;
        # a program that writes its inputs fails, and the next one gets them
        # back; every strategy runs in the same buffers (Runs).
        self.runs = Runs(problem, load(), reload=load)
        self.cls = BY_NAME["coll." + problem.op]

    def strategies(self) -> list[str]:
        if self.args.strategy != "all":
            return [self.args.strategy]
        if not self.problem.collective:  # its algorithm is the one written
            print(f"{self.shown}: note: --strategy=all: the program is at the explicit level (its copies and "
                  "combines are the algorithm, there is no strategy to choose); running it as written",
                  file=sys.stderr)
            return ["auto"]
        return _every_strategy([self.cls.NAME], self.backend, self.shown)  # what this back end can run

    def title(self) -> str:
        p = self.problem
        shape = "x".join(str(d) for d in p.shape)
        n_out = len(p.alias) if p.alias else p.n_outputs
        return (f"{self.shown}: {p.summary} of {p.n_inputs} x {shape or 'scalar'}x{p.element} -> "
                f"{n_out} output(s), backend {self.backend.name}, {self.args.repeat} timed run(s) after an untimed one")

    def measure(self, strategy: str) -> Any:
        p = self.problem
        prog = self._compile(strategy)
        chosen = (prog.strategies[0] if prog.strategies else "-") if p.collective else "-"
        # Generated inputs are exact in any order; given ones are judged by
        # the depth of this strategy's combines.
        depth = _depth(self.text, self.args.entry, strategy) if p.collective and self.args.inputs else None
        keep = self.first_outputs is None and bool(self.args.outputs)  # the run buffers are reused: a copy
        try:
            m = self.runs.measure(prog, self.args.repeat, strategy=chosen, depth=depth, keep=keep)
        except Failure:
            raise
        except Exception as e:  # noqa: BLE001 - reported as a diagnostic
            raise Failure(_located(e, self.shown)) from None
        if keep:
            self.first_outputs = self.runs.kept
        return self._row(m)


class _ProgramJob(_Job):
    """A module with local work around its collectives (or several of
    them), global view or SPMD, memrefs or tensors: it runs as the program
    it is, on per-device arrays x0.. (its inputs, by what it does with its
    arguments) into y0... Nothing says what it computes, so it is checked
    against the plain program (execution/check.py plain_program: every
    collective by its plainest strategy, proven by coll-check-semantics,
    built for the CPU with no fusion, on one core, OpenBLAS as the run has
    it): its outputs exactly on exact types, within FLOATS on floats, else
    FAIL. Where the plain program cannot be had (plain_program's limits, a
    build that fails, strategies or arguments other than expected), the
    table says `unchecked` and stderr why; then each strategy's outputs
    must agree with the first one's, unless the sums may associate as the
    strategies like (order = "any" on floats)."""

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        self.names, devices = _collectives_of(self.text, devices=True)
        self.devices = max(devices) + 1 if devices else "-"
        self._plain: list[Any] | None = None  # the plain program's outputs ([]: none to be had)
        self._reassociated = False  # order = "any" on floats: no run is the reference of another

    def strategies(self) -> list[str]:
        if self.args.strategy != "all":
            return [self.args.strategy]
        return _every_strategy(self.names, self.backend, self.shown)

    def title(self) -> str:
        p = self.prog
        n_in = len(p.specs) if p.n_inputs is None else p.n_inputs
        ins = ", ".join(str(s) for s in p.specs[:n_in]) or "none"
        return (f"{self.shown}: a program (no one collective on its arguments), "
                f"inputs {ins} -> {len(p.specs) - n_in} output(s), "
                f"backend {self.backend.name}, {self.args.repeat} timed run(s) after an untimed one; "
                + (PLAIN if self._plain else "no reference to check against"
                   + ("" if self.args.strategy != "all" or self._reassociated
                      else ": every strategy against the first")))

    def _arrays(self, prog: Any) -> Any:
        # Arguments the program does not classify (an input after an
        # output) are all passed in, its results read back from them.
        n_in = len(prog.specs) if prog.n_inputs is None else prog.n_inputs
        specs = prog.specs[:n_in]
        names = [f"x{i}" for i in range(len(specs))]
        if self.args.inputs:
            try:
                data = load(self.args.inputs, {n: (tuple(sp.shape), NUMPY_DTYPES[sp.element])
                                               for n, sp in zip(names, specs)})
            except NpzError as e:
                _fail(f"{self.args.inputs}: {e}")
            except OSError as e:
                _fail(f"could not read inputs '{self.args.inputs}': {e.strerror or e}")
            xs = [data[n] for n in names]
        else:
            rng = np.random.default_rng(self.args.seed)
            xs = [(rng.uniform(-1, 1, sp.shape) if sp.element.startswith(("f", "b"))
                   else rng.integers(-8, 8, sp.shape)).astype(NUMPY_DTYPES[sp.element]) for sp in specs]
        ys = [aligned_zeros(sp.shape, NUMPY_DTYPES[sp.element]) for sp in prog.specs[n_in:]]
        return xs, ys

    def measure(self, strategy: str) -> Any:
        prog = self.prog = self._compile(strategy)
        xs, ys = self._arrays(prog)
        try:
            given = [aligned_copy(x) for x in xs]  # in place, a run overwrites them
            prog.run(given, ys)
            times = prog.time([aligned_copy(x) for x in xs], [aligned_zeros(y.shape, y.dtype) for y in ys],
                              self.args.repeat)
        except Failure:
            raise
        except Exception as e:  # noqa: BLE001 - reported as a diagnostic
            raise Failure(_located(e, self.shown)) from None
        n_in = len(prog.specs) if prog.n_inputs is None else prog.n_inputs
        # Its results: the outputs, and the inputs it writes (in place; all
        # of them where it has no output). The in-place ones were neither
        # compared nor written out next to outputs (an outside attack).
        in_place = [i for i in sorted(getattr(prog, "written", ())) if i < n_in] if ys else list(range(n_in))
        got = [y.copy() for y in ys] + [given[i] for i in in_place]
        elements = [sp.element for sp in prog.specs[n_in:]] + [prog.specs[i].element for i in in_place]
        tolerances = [FLOATS.get(e) for e in elements]
        plain = self._plain_outputs(xs, ys, in_place)
        good, worst = _agree(got, plain, tolerances, elements) if plain is not None else (True, 0.0)
        if self.first_outputs is None:  # (in place next to outputs: the input's own name, x<i>)
            names = [f"y{j}" for j in range(len(ys))] + [f"x{i}" if ys else f"y{i}" for i in in_place]
            self.first_outputs, self.first = dict(zip(names, got)), got
        elif plain is None and not self._reassociated:  # another strategy: the same results
            good, worst = _agree(got, self.first, tolerances, elements)
        nbytes = sum(x.nbytes for x in xs)  # a whole program: all its inputs
        # A route that does not report what it chose (the mpi one lowers
        # each collective in place) ran the strategy it was given.
        chosen = ",".join(dict.fromkeys(prog.strategies)) or (strategy if strategy != "auto" else "-")
        m = Measurement("-", getattr(prog, "ranks", None) or self.devices, nbytes, 0, [float(t) for t in times],
                        good, worst, None, "-",
                        any(e in FLOATS for e in elements), chosen, checked=plain is not None)
        return self._row(m)

    def _plain_outputs(self, xs: list[Any], ys: list[Any], in_place: list[int]) -> list[Any] | None:
        """The plain program's outputs on inputs `xs` (computed once: every
        strategy runs on the same inputs), or None where it cannot be had
        (said once on stderr, with why)."""
        if self._plain is None and not xs and not ys:
            print(f"{self.shown}: warning: not checked: the program takes no arguments, so it has no "
                  "results to compare", file=sys.stderr)
            self._plain = []
        if self._plain is None:
            from coll.execution.check import Reassociated, plain_program
            from coll.lowering import cpu  # lazy: ~60 ms of start-up
            plain = {c.PLAIN for c in COLLECTIVES}
            try:
                # (OpenBLAS as the run has it: a matmul by loops rounds otherwise)
                prog: Any = cpu.compile(plain_program(self.text), self.args.entry, strategy="auto",
                                   blas=self.options.get("blas", "on"), epilogues="off", parallel="off")
                other = sorted(set(prog.strategies) - plain)
                if other:  # (a collective it did not reach: a reference that shares the run's faults)
                    raise ValueError(f"it would run {', '.join(other)}, not only {', '.join(sorted(plain))}")
                run: Any = self._last
                given = [len(p.specs) if p.n_inputs is None else p.n_inputs for p in (prog, run)]  # (None: all)
                if [(sp.shape, sp.element) for sp in prog.specs] != [(sp.shape, sp.element) for sp in run.specs] \
                        or given[0] != given[1]:
                    raise ValueError("its arguments are not the program's")
                given, outs = [aligned_copy(x) for x in xs], [aligned_zeros(y.shape, y.dtype) for y in ys]
                prog.run(given, outs)
                self._plain = outs + [given[i] for i in in_place]
            except Exception as e:  # noqa: BLE001 - the run goes on unchecked, and says why
                from coll.analysis.order import proves_disorder
                if isinstance(e, MLIRError) and any(proves_disorder(d.message)
                                                    for d in getattr(e, "error_diagnostics", [])):
                    # A race (or a write nothing waits for) the CPU route refuses: under MPI it
                    # is one too (an outside attack: `unchecked`, exit 0, 2026-12-08).
                    raise Failure(_located(e, self.shown)) from None
                self._reassociated = isinstance(e, Reassociated)
                why = _located(e, self.shown).replace(": error: ", ": note: ") if isinstance(e, MLIRError) else str(e)
                print(f"{self.shown}: warning: not checked: the plain program cannot be had: {why}", file=sys.stderr)
                self._plain = []
        return self._plain or None


# What a program with local work is checked against (_ProgramJob).
PLAIN = "checked against the plain program (each collective by its plainest strategy, unfused, one core; cpu)"
# Float outputs checked against another association of the same program:
# the error allowed, relative to the largest value.
FLOATS = {"f64": 1e-9, "f32": 1e-5, "f16": 1e-2, "bf16": 1e-2, "f8E4M3FN": 0.25, "f8E5M2": 0.5}


class _GlobalJob(_Job):
    """A program whose arguments are global arrays, laid out over its
    devices by its frontend (shard annotations, StableHLO exported by JAX):
    scattered in, gathered out (blocks that several ranks hold must agree),
    checked against the same program unpartitioned where the frontend
    gives one (shard), else `unchecked`."""

    def __init__(self, args: argparse.Namespace, backend: Any, options: dict[str, Any], text: str, frontend: Any,
                 shown: str) -> None:
        super().__init__(args, backend, options, text, None, shown)
        from coll.frontends.run import global_arrays as runner  # lazy: ~120 ms of start-up
        self.frontend = frontend
        if self.backend.name not in runner.BACKENDS:
            _fail(f"{self.args.file}: a {frontend.NAME} program runs on --backend=mpi (one rank per process of "
                  f"its grid) or --backend=cpu (one simulated device per process), not '{self.args.backend}'")

    def strategies(self) -> list[str]:
        if self.args.strategy != "all":
            return [self.args.strategy]
        from coll.frontends.run import global_arrays as runner  # lazy: ~120 ms of start-up
        try:  # its SPMD function: the collectives the strategies apply to
            text = runner.lower(self.text, self.frontend, self.args.entry)[0]
        except Exception as e:  # noqa: BLE001 - reported as a diagnostic
            raise Failure(_located(e, self.shown)) from None
        return _every_strategy(_collectives_of(text), self.backend, self.shown)

    def _compile(self, strategy: str, **extra: Any) -> Any:
        from coll.frontends.run import global_arrays as runner  # lazy: ~120 ms of start-up
        try:
            prog = runner.compile(self.text, self.frontend, self.backend.name, strategy=strategy,
                                  entry=self.args.entry, **self.options)
        except Exception as e:  # noqa: BLE001 - reported as a diagnostic
            raise Failure(_located(e, self.shown)) from None
        if self.args.ranks is not None and self.args.ranks != prog.ranks:
            _fail(f"{self.shown}: the program is partitioned over a grid of {prog.ranks} processes, not --ranks "
                  f"{self.args.ranks}; nothing was started")
        if self.args.dump_pass_pipeline:
            print(prog.pipeline, file=sys.stderr)
        self._last = prog
        return prog

    def drawn_floats(self) -> bool:
        """Whether the inputs drawn (no --inputs) hold floats."""
        return any(lay.element.startswith(("f", "b")) for lay in self.prog.inputs)

    def _inputs(self, prog: Any) -> Any:
        from coll.frontends.run.global_arrays import npz_names  # lazy: ~120 ms of start-up
        names = npz_names(prog.inputs, "x")
        if self.args.inputs:
            want = {n: (lay.shape, NUMPY_DTYPES[lay.element]) for n, lay in zip(names, prog.inputs)}
            try:
                data = load(self.args.inputs, want)
            except NpzError as e:
                _fail(f"{self.args.inputs}: {e}")
            except OSError as e:
                _fail(f"could not read inputs '{self.args.inputs}': {e.strerror or e}")
            return [data[n] for n in names]
        rng = np.random.default_rng(self.args.seed)
        return [(rng.uniform(-1, 1, lay.shape) if lay.element.startswith(("f", "b"))
                 else rng.integers(-8, 8, lay.shape)).astype(NUMPY_DTYPES[lay.element]) for lay in prog.inputs]

    def title(self) -> str:
        p = self.prog
        grid = "x".join(map(str, p.grid))
        shapes = ", ".join("x".join(map(str, lay.shape)) + "x" + lay.element for lay in p.inputs)
        against = (f"checked against {p.checked_against}" if p.checked_against else
                   "no reference to check against" + ("" if self.args.strategy != "all"
                                                      else ": every strategy against the first"))
        return (f"{self.shown}: {self.frontend.NAME} program over a grid of {grid} ({p.ranks} ranks), arguments "
                f"{shapes}, backend {self.backend.name}, {self.args.repeat} timed run(s); {against}")

    def _reference(self, prog: Any, xs: Any) -> Any:
        """The reference results (computed once: every strategy runs on the
        same inputs), or None where there is none or XLA cannot run the
        module (then said on stderr, and the table says unchecked)."""
        if not prog.checked_against:
            return None
        if getattr(self, "_ref", None) is None:
            try:
                self._ref = prog.reference(xs)
            except XlaError as e:
                print(f"{self.shown}: warning: not checked: {e}", file=sys.stderr)
                self._ref = []
            except Exception as e:  # noqa: BLE001 - reported as a diagnostic
                raise Failure(_located(e, self.shown)) from None
        return self._ref or None

    def measure(self, strategy: str) -> Any:
        prog = self.prog = self._compile(strategy)
        xs = self._inputs(prog)
        try:
            ys, times = prog.run(xs, self.args.repeat)
        except Exception as e:  # noqa: BLE001 - reported as a diagnostic
            raise Failure(_located(e, self.shown)) from None
        ref = self._reference(prog, xs)
        # Another association of the same sums (XLA's, or the unpartitioned
        # program's): within a few roundings of the largest value, in the
        # element type's precision.
        elements = [lay.element for lay in prog.outputs]
        exact = all(e not in FLOATS for e in elements)
        good, worst = _agree(ys, ref, [FLOATS.get(e) for e in elements], elements) if ref else (True, 0.0)
        if self.first_outputs is None:
            from coll.frontends.run.global_arrays import npz_names  # lazy: ~120 ms of start-up
            self.first_outputs, self.first = dict(zip(npz_names(prog.outputs, "y"), ys)), ys
        elif ref is None:  # unchecked: another strategy must give the first one's results
            good, worst = _agree(ys, self.first, [FLOATS.get(e) for e in elements], elements)
        nbytes = sum(int(np.prod(lay.local)) * np.dtype(x.dtype).itemsize for lay, x in zip(prog.inputs, xs))
        # A route that does not report what it chose (the mpi one lowers
        # each collective in place) ran the strategy it was given.
        chosen = ",".join(dict.fromkeys(prog.strategies)) or (strategy if strategy != "auto" else "-")
        # A whole program (its collectives and local work): size is its
        # inputs per device, and there is no one collective's bus factor.
        from coll.execution.measure import Measurement
        m = Measurement("-", prog.ranks, nbytes, 0, [float(t) for t in times], good, worst, None, "-", not exact,
                        chosen, checked=ref is not None)
        return self._row(m)


def main(argv: list[str] | None = None) -> NoReturn:
    """The `coll-run` command (tools/diagnostics.py main: exit codes, errors, `| head`)."""
    tool_main("coll-run", run, argv)


if __name__ == "__main__":
    main()
