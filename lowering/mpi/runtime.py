"""Run coll programs as one process per rank under mpirun (OpenMPI or MPICH).

    prog = compile(text)              # global view (one rank per device), SPMD form or per-rank
    prog.run(inputs, outputs)         # numpy arrays of the global view; outputs in place
    prog.time(inputs, outputs, 10)    # seconds per run (slowest rank, per run)
    launch([(prog, inputs, outputs), ...], repeat)   # several programs, one mpirun

Same interface as lowering/cpu/runtime.py. compile() lowers the module once, here,
through the `mpi` route (core/routes.py: the per-rank projection, then the
LLVM dialect) and links it with mpicc into a shared library
(lowering/mpi/toolchain.py). Each run starts `mpirun -n N python
.../lowering/mpi/worker.py JOBDIR`; rank r gets its slice of the global view's
arrays, its outputs come back through JOBDIR.

Faults: nothing waits forever. A run that has not finished within `timeout`
seconds is killed, and a rank that crashes or exits early fails the run;
either way MpiError names each rank that did not finish and what it was
doing (from its status file). Outputs are written only when every rank
succeeded. A group of the wrong size is refused before mpirun starts (and
again by each rank, before any message).
"""
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time as _time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from mlir import ir

from ...core.errors import PassError
from ...core.tools import tool
from ...execution.measure import check_repeat
from ...execution.program import Program
from ...execution.signature import ArgSpec, check_arrays
from ...frontends.spmd import GLOBAL_ARGS_ATTR, RANK_INPUTS_ATTR, RANKS_ATTR
from ..base import Backend
from ..driver import lower
from . import toolchain
from .exe import build_executable
from .to_mpi import MAX_TAG_ATTR
from .toolchain import Mpi

Arrays = Sequence[np.ndarray]


class MpiError(RuntimeError):
    """A run that failed: which ranks, doing what."""


def available() -> tuple[bool, str]:
    """(True, '') when mpirun, mpicc and the LLVM tools are here, else why not."""
    if toolchain.find() is None:
        return False, ("no MPI found (mpirun and mpicc on PATH); `make` installs OpenMPI "
                       "(apt-get install openmpi-bin libopenmpi-dev)")
    try:
        tool("mlir-translate")
        tool("llc")
    except FileNotFoundError as e:
        return False, f"the LLVM tools are not installed: {e}"
    return True, ""


def mpirun_command(mpi: Mpi, ranks: int) -> list[str]:
    """mpirun with what this machine needs: as root OpenMPI wants
    --allow-run-as-root; with more ranks than cores, --oversubscribe."""
    cmd = [mpi.mpirun]
    if mpi.implementation == "OpenMPI":
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        cmd += ["--oversubscribe", "--bind-to", "none"]
    return cmd + ["-n", str(ranks)]


class MpiProgram:
    """A per-rank program for `ranks` ranks, in shared library `lib`.
    `rank_specs`: one rank's ArgSpecs, its first `rank_inputs` are inputs;
    `global_args`: see rank_args; `specs`, `n_inputs`: the global view's."""
    # Set by build and Backend.compile (lowering/base.py).
    pipeline: str
    written: Any
    _ctx: ir.Context

    def __init__(self, lib: Path, mpi: Mpi, entry: str, ranks: int, rank_specs: list[ArgSpec], rank_inputs: int,
                 global_args: list[int], specs: list[ArgSpec], n_inputs: int, strategies: list[str],
                 traffic: int | None, compile_seconds: float | None, timeout: float, max_tag: int = 0) -> None:
        self.lib, self.mpi, self.entry, self.ranks = lib, mpi, entry, ranks
        self.rank_specs, self.rank_inputs, self.global_args = rank_specs, rank_inputs, global_args
        self.specs, self.n_inputs = specs, n_inputs
        self.strategies, self.traffic_bytes = strategies, traffic
        self.compile_seconds, self.timeout, self.max_tag = compile_seconds, timeout, max_tag
        self.profiled = False  # built with split=True (coll-profile-collectives)
        # Per rank, (seconds in collectives, calls) of the last launch's timed
        # runs in a profiled program (the worker reads the counters).
        self.rank_splits: list[tuple[float, int]] = []

    def split(self) -> tuple[float, int] | None:
        """(seconds spent in collectives, calls of the entry) in the last
        launch's timed runs, the mean over the ranks (rank_splits: each);
        None in a program built without split=True."""
        if not self.profiled:
            return None
        if not self.rank_splits:
            return 0.0, 0
        return (float(np.mean([t for t, _ in self.rank_splits])), self.rank_splits[0][1])

    def rank_args(self, r: int) -> list[int]:
        """The global view's indices of rank r's arguments (slots), -1 for a
        placeholder (a buffer another rank holds there, as a rooted op's
        output on the root)."""
        k = len(self.rank_specs)
        return self.global_args[r * k:(r + 1) * k]

    def run(self, inputs: Arrays, outputs: Arrays) -> None:
        """Runs once on every rank; writes `outputs` in place."""
        self.launch(inputs, outputs, 0)

    def time(self, inputs: Arrays, outputs: Arrays, repeat: int = 10) -> list[float]:
        """Seconds of each of `repeat` runs after a warm-up run: per run, the
        slowest rank (runs start together, after a barrier)."""
        return self.launch(inputs, outputs, check_repeat(repeat))

    def launch(self, inputs: Arrays, outputs: Arrays, repeat: int, ranks: int | None = None,
               env: dict[str, str] | None = None) -> list[float]:
        """One mpirun of the program; see `launch`."""
        return launch([(self, inputs, outputs)], repeat, ranks, env)[0]


def launch(runs: Sequence[tuple[MpiProgram, Arrays, Arrays]], repeat: int, ranks: int | None = None,
           env: dict[str, str] | None = None, timeout: float | None = None, calls: int = 1) -> list[list[float]]:
    """One mpirun for several programs of one group size: `runs` is
    [(program, inputs, outputs)]; each runs once (its outputs are written in
    place), then `repeat` timed rounds run every program in turn, each after
    a barrier (interleaved, so that they see the same machine), `calls`
    calls in a row per timed run. `ranks`: default the programs'; any other
    is refused before anything starts. Returns per program the seconds per
    call of each timed run (slowest rank)."""
    repeat = check_repeat(repeat, least=0)
    group = {p.ranks for p, _, _ in runs}
    if len(group) != 1:
        raise MpiError(f"one launch runs programs of one group size, got {sorted(group)}")
    n = group.pop()
    ranks = n if ranks is None else ranks
    if ranks != n:
        raise MpiError(f"the program is for {n} ranks, not {ranks}: nothing was started")
    arrays = [check_arrays(p.specs, p.n_inputs, i, o) for p, i, o in runs]  # (written inputs: copied back below)
    with tempfile.TemporaryDirectory(prefix="coll-mpi-") as tmp:
        job = Path(tmp)
        programs = []
        for j, (p, _, _) in enumerate(runs):
            shutil.copy(p.lib, job / f"prog{j}.so")
            # A slot that holds an input of the global view (in place, also
            # one the rank writes) gets its values; the others start zeroed.
            programs.append({"lib": f"prog{j}.so", "entry": p.entry, "n_inputs": p.rank_inputs,
                             "profiled": p.profiled,
                             "label": f"@{p.entry}" + (f" ({', '.join(p.strategies)})" if p.strategies else ""),
                             "slots": [[list(s.shape), s.dtype.str, s.element,
                                        [s.layout[0], list(s.layout[1])] if s.layout else None]
                                       for s in p.rank_specs]})
            for r in range(ranks):
                given = {f"a{i}": arrays[j][g] for i, g in enumerate(p.rank_args(r)) if 0 <= g < p.n_inputs}
                np.savez(job / f"in{j}_{r}.npz", **given)  # type: ignore[arg-type]  # numpy's stub reads **kwds as allow_pickle
        (job / "job.json").write_text(json.dumps({"ranks": ranks, "repeat": repeat, "calls": calls,
                                                  "programs": programs,
                                                  "max_tag": max(p.max_tag for p, _, _ in runs)}))
        mpi = runs[0][0].mpi
        _mpirun(mpi, job, ranks, env, timeout or max(p.timeout for p, _, _ in runs))
        all_times = []
        for j, (p, inputs, outputs) in enumerate(runs):
            results = [np.load(job / f"out{j}_{r}.npz") for r in range(ranks)]
            for r, res in enumerate(results):
                for i, g in enumerate(p.rank_args(r)[p.rank_inputs:]):
                    if g >= 0:
                        arrays[j][g][...] = res[f"arr_{i}"]
            # In place, inputs are written too, and as_array may have copied
            # one (made it contiguous); a bf16 view shares the caller's memory.
            written = {g for r in range(ranks) for g in p.rank_args(r)[p.rank_inputs:] if g >= 0}
            for g, (theirs, arr) in enumerate(zip(list(inputs) + list(outputs), arrays[j])):
                if g in written and not np.shares_memory(theirs, arr):
                    theirs[...] = arr
            times = np.max([res["times"] for res in results], axis=0) if repeat else []
            if p.profiled:
                p.rank_splits = [(float(res["profile"][0]) * 1e-9, int(res["profile"][1])) for res in results]
            all_times.append([float(t) for t in times])
    return all_times


def _mpirun(mpi: Mpi, job: Path, ranks: int, env: dict[str, str] | None, timeout: float) -> None:
    # The worker runs as a file (worker.py says why), with this interpreter.
    cmd = mpirun_command(mpi, ranks) + [sys.executable, str(Path(__file__).with_name("worker.py")), str(job)]
    full_env = dict(os.environ, **(env or {}))
    if mpi.implementation == "OpenMPI":
        # Every rank runs on this host, beside other work: a rank that spins
        # in MPI_Wait keeps its peer off the core it needs (measured on 2
        # cores, load 11: a 4 KiB MPI_Allreduce on 4 ranks took 52 ms
        # spinning, 0.5 ms yielding). The caller's setting wins.
        full_env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    # One OpenBLAS thread per rank: the ranks already fill the cores, and
    # more threads than cores slow every rank down (bench/matmul_blas.py
    # --threads; the measurement is in passes/blas_contractions.py). The
    # caller's setting wins.
    full_env.setdefault("OPENBLAS_NUM_THREADS", "1")
    t0 = _time.monotonic()
    # stdin from /dev/null: mpirun forwards its stdin to rank 0 and would
    # eat the caller's (a shell loop reading lines would silently end).
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=full_env, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc, job, ranks)
        raise MpiError(f"the run did not finish within {timeout:g} s and was killed; "
                       + _report(job, ranks, "")) from None
    text = out.decode(errors="replace")
    done = all(_status(job, r)[1] == "done" for r in range(ranks))
    if proc.returncode or not done:
        raise MpiError(f"the run failed after {_time.monotonic() - t0:.1f} s (mpirun exit code "
                       f"{proc.returncode}); " + _report(job, ranks, text))


def _status(job: Path, r: int) -> tuple[int | None, str]:
    """(pid, what rank r was last doing) from its status file."""
    try:
        pid, _, text = (job / f"status{r}").read_text().partition(" ")
        return int(pid), text
    except (OSError, ValueError):
        return None, "not started (no status)"


_SIGNALS = {int(s): s.name for s in signal.Signals}


def _signal(n: int | str) -> str:
    return f"was killed by signal {n} ({_SIGNALS.get(int(n), '?')})"


def _died(mpirun_text: str, pids: dict[int, int]) -> dict[int, str]:
    """{rank: how it ended} from what OpenMPI's mpirun or MPICH's hydra say
    (hydra names the pid: `pids` maps the ranks' pids to ranks)."""
    died: dict[int, str] = {}
    for m in re.finditer(r"process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)", mpirun_text):
        died[int(m.group(1))] = _signal(m.group(2))
    for m in re.finditer(r"Process name: \[\[\d+,\d+\],(\d+)\]\s+Exit code:\s+(\d+)", mpirun_text):
        died.setdefault(int(m.group(1)), f"exited early with status {m.group(2)}")
    for m in re.finditer(r"process rank (\d+) with PID \d+ on node \S+ exiting improperly", mpirun_text):
        died.setdefault(int(m.group(1)), "exited early without finalizing MPI")
    killed = re.search(r"EXIT STRING: .*\(signal (\d+)\)", mpirun_text)
    for m in re.finditer(r"PID (\d+) RUNNING AT \S+\s*=\s*(?:KILLED BY SIGNAL: (\d+)|EXIT CODE: (\d+))",
                         mpirun_text):
        r = pids.get(int(m.group(1)))
        if r is not None:
            sig = m.group(2) or (killed.group(1) if killed else None)
            died.setdefault(r, _signal(sig) if sig else f"exited early with status {m.group(3)}")
    return died


def _report(job: Path, ranks: int, mpirun_text: str) -> str:
    """'rank 1 was killed by signal 9 (SIGKILL) while running the program;
    rank 0 was running the program' for every rank that did not finish,
    the ones that failed first."""
    pids = {pid: r for r in range(ranks) for pid in [_status(job, r)[0]] if pid}
    died = _died(mpirun_text, pids)
    first, rest = [], []
    for r in range(ranks):
        _, doing = _status(job, r)
        if doing == "done":
            continue
        if doing.startswith(("refused", "failed")):  # the worker's own words come first
            first.append(f"rank {r} {doing}")
        elif r in died:
            first.append(f"rank {r} {died[r]} while {doing}")
        else:
            rest.append(f"rank {r} was {doing}")
    parts = first + rest or ["every rank finished but mpirun failed"]
    tail = "\n".join(l for l in mpirun_text.strip().splitlines()[-8:] if l.strip("-= "))
    return "; ".join(parts) + (f"\nmpirun said:\n{tail}" if tail else "")


def _kill(proc: subprocess.Popen, job: Path, ranks: int) -> None:
    """mpirun and every rank: TERM, then KILL (ranks may sit in their own
    process groups, so by the pids they reported too)."""
    pids = [p for p in (_status(job, r)[0] for r in range(ranks)) if p]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for target in [-proc.pid] + pids:
            try:
                os.kill(target, sig)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            proc.wait(timeout=3)
            if sig == signal.SIGTERM:
                continue
        except subprocess.TimeoutExpired:
            pass


def build(backend: Backend, program: Program, strategy: str, threshold: int | None, timeout: float,
          out_dir: str | Path | None, executable: str | None, shuffle_seed: int | None, profile: str | None,
          blas: bool | str | None = True, split: bool | None = None,
          epilogues: bool | str | None = None) -> MpiProgram:
    """The MpiProgram of `program` (read, in the current Context)."""
    mpi = toolchain.find()
    if mpi is None:
        raise ValueError(available()[1])
    module, name, specs, n_inputs = program.parsed, program.entry, program.specs, program.n_inputs
    entry_op = program.entry_op
    per_rank = program.ranks is not None  # SPMD (local work) or already projected
    # An SPMD function's inputs, as the program uses them (in place: also
    # written), arguments i < spmd_inputs of every rank; a projected
    # program says only which slots it does not write.
    # (What it does with an argument not known: every one given and read
    # back, as on the CPU; it was none given, the run on zeros unchecked.)
    spmd = per_rank and GLOBAL_ARGS_ATTR not in entry_op.attributes
    spmd_inputs = (len(specs) if n_inputs is None else n_inputs) if spmd else None
    low = lower(program, backend, strategy, threshold, profile, check_order=not per_rank,
                implementation=mpi.implementation, shuffle_seed=shuffle_seed, blas=blas, split=split,
                epilogues=epilogues)
    attrs = ir.SymbolTable(module.operation)[name].attributes
    if RANKS_ATTR not in attrs:  # (no collective, no coll.ranks: nothing says how many)
        raise PassError(f"@{name} has no collective and no {RANKS_ATTR}: the MPI back end needs to know its "
                        "ranks; expected a collective over devices or an SPMD function", entry_op.location)
    ranks = ir.IntegerAttr(attrs[RANKS_ATTR]).value
    global_args = list(ir.DenseI64ArrayAttr(attrs[GLOBAL_ARGS_ATTR]))
    rank_inputs = ir.IntegerAttr(attrs[RANK_INPUTS_ATTR]).value
    max_tag = ir.IntegerAttr(attrs[MAX_TAG_ATTR]).value if MAX_TAG_ATTR in attrs else 0
    k = len(global_args) // ranks
    if per_rank:  # the global view is every rank's arguments (-1: a placeholder)
        rank_specs = specs
        slots: list[ArgSpec | None] = [None] * (max(global_args) + 1)
        for j, g in enumerate(global_args):
            if g >= 0:
                slots[g] = rank_specs[j % k]
        specs = cast(list[ArgSpec], slots)  # (each index is some rank's argument)
        given = rank_inputs if spmd_inputs is None else spmd_inputs
        n_inputs = len({g for j, g in enumerate(global_args) if g >= 0 and j % k < given})
    else:  # a slot's type, from a rank that holds an argument there
        rank_specs = [next(specs[g] for g in global_args[i::k] if g >= 0) for i in range(k)]
        if n_inputs is None:  # arguments the program does not classify: all given, read back in place
            n_inputs = len(specs)
    if out_dir is None:
        out_dir = tempfile.mkdtemp(prefix="coll-mpi-build-")
        atexit.register(shutil.rmtree, out_dir, True)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = toolchain.build(module.operation, out_dir / f"lib{name}.so", mpi)
    prog = MpiProgram(lib, mpi, name, ranks, rank_specs, rank_inputs, global_args, specs, n_inputs,
                      low.strategies, low.traffic, None, timeout, max_tag)
    prog.pipeline = low.pipeline
    prog.profiled = bool(split)
    if per_rank:  # the arguments it writes, in the global view (program.written counts one rank's)
        prog.written = tuple(sorted({g for j, g in enumerate(global_args) if g >= 0 and j % k in program.written}))
    if executable is not None:
        build_executable(prog, module.operation, executable, out_dir)
    return prog
