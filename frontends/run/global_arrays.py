"""Run a program whose arguments are global arrays, laid out over the
devices by its frontend (frontends/: shard annotations, StableHLO from
JAX): scatter the inputs, run the SPMD function on a back end, gather the
results.

    from coll.frontends import stablehlo
    prog = compile(lowered.compiler_ir("stablehlo"), stablehlo, backend="cpu")
    ys = prog.run(xs)                # global arrays in, global arrays out
    ys, times = prog.run(xs, 10)     # and the seconds of 10 timed runs
    ref = prog.reference(xs)         # the unpartitioned program (shard), XLA's results (StableHLO), else ValueError

A frontend of this kind (`GLOBAL = True`) has `parse(source, context)`,
`layouts(module_op, entry)` (a Boundary: which block of each global argument
and result rank r holds), `route(module_op)` (to coll's SPMD function) and,
where it can give one, `reference(module_op, entry)` (the same program
unpartitioned, as memref-level text). The SPMD function runs on the CPU
(one simulated device per rank: its global view) or under MPI (a process
per rank). Blocks that several ranks hold must agree. bf16 arrays are
uint16 bit patterns, fp8 ones uint8; ml_dtypes arrays (JAX's) are taken as they are.
One call runs at a time (a lock from scatter to gather).
"""
import ctypes
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt
from mlir import ir

from ...core import routes
from ...core.pipeline import run
from ...execution.forks import program_lock
from ...execution.measure import check_repeat
from ...execution.signature import NUMPY_DTYPES, aligned_zeros, ml_dtype
from ...ir import make_context
from ...ir.verifier import verify_or_raise
from ...lowering import cpu, mpi
from ...lowering.cpu.runtime import CpuProgram
from ...lowering.mpi.runtime import MpiProgram
from ..shard import Boundary, Layout, ShardError
from ..spmd import ranks_of

BACKENDS = ("cpu", "mpi")
_CACHE: dict[tuple, "GlobalProgram"] = {}
REPLICA_WINDOWS = 64  # per call 1/64 of each replica: 7/64 of a block at N = 8 (1/16 cost a fifth of a psum at 1 MiB)
_libc = ctypes.CDLL(None)
_libc.memcmp.restype = ctypes.c_int
_libc.memcmp.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


# XLA's results for global inputs (a frontend's `oracle`).
Oracle = Callable[[Sequence[np.ndarray]], list[np.ndarray]]
# Per output: [(a block, the rank whose copy is taken, the other ranks that hold it)], and whether they cover it.
Plan = list[tuple[list[tuple[tuple[slice, ...], int, list[int]]], bool]]


class Launcher(Protocol):
    """Every rank's blocks in, every rank's blocks out: an MpiProgram, or _OnCpu."""
    ranks: int
    strategies: Any

    def launch(self, ins: list[np.ndarray], outs: list[np.ndarray], repeat: int = 0) -> Any: ...


def _same_bytes(a: np.ndarray, b: np.ndarray, window: int | None = None) -> bool:
    """Whether two C-contiguous arrays hold the same bytes (memcmp), or the
    same bytes in window k of REPLICA_WINDOWS."""
    size = a.nbytes
    start, stop = (0, size) if window is None else \
        (size * window // REPLICA_WINDOWS, size * (window + 1) // REPLICA_WINDOWS)
    if stop <= start:
        return True
    return _libc.memcmp(a.ctypes.data + start, b.ctypes.data + start, stop - start) == 0


def npz_names(layouts: Sequence[Layout], prefix: str) -> list[str]:
    """The keys of a program's arrays in an .npz (coll-run --inputs and
    --outputs): the frontend's names (JAX's argument names) where it has
    them and they are distinct, else `prefix`0, `prefix`1, ..."""
    names = [lay.name or f"{prefix}{i}" for i, lay in enumerate(layouts)]
    return names if len(set(names)) == len(names) else [f"{prefix}{i}" for i in range(len(layouts))]


def lower(source: Any, frontend: ModuleType, entry: str | None = None, context: ir.Context | None = None,
          backend: object = None) -> tuple[str, Boundary, str, str | None]:
    """(SPMD module text, Boundary, the frontend's pipeline text, reference
    text or None): the frontend's route (for `backend`, a Backend object,
    where given) run on `source` in `context` (default: a fresh one with
    coll loaded). Raises ir.MLIRError or PassError, located. `frontend`: a
    module of frontends/ with GLOBAL = True; `source`: what its parse takes."""
    ctx = context or make_context()
    with ctx, ir.Location.unknown():
        module = frontend.parse(source)
        boundary = frontend.layouts(module.operation, entry) if entry else frontend.layouts(module.operation)
        ref = frontend.reference(module.operation, boundary.entry) if hasattr(frontend, "reference") else None
        text = routes.pipeline(frontend.route(module.operation, backend))
        run(module.operation, text)
        verify_or_raise(module.operation)
        func = ir.SymbolTable(module.operation)[boundary.entry]
        ranks = ranks_of(func) or 1
        if ranks != int(np.prod(boundary.grid)):
            raise ShardError(f"@{boundary.entry} runs on {ranks} ranks but its layouts are over a grid of "
                             f"{'x'.join(map(str, boundary.grid))}", func.location)
        types = list(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs)
        for lay, t in zip(boundary.inputs + boundary.outputs, types):
            if tuple(ir.MemRefType(t).shape) != lay.local:
                raise ShardError(f"@{boundary.entry} takes {t} where the layout gives blocks of "
                                 f"{'x'.join(map(str, lay.local))}", func.location)
        return str(module.operation.get_asm(enable_debug_info=True)), boundary, text, ref


def frontend_of(frontend: object) -> ModuleType:
    """The frontend `frontend` names: one whose arguments are global arrays
    (GLOBAL: coll.frontends' stablehlo and shard, or your own with
    `parse`, `layouts` and `route`, docs/frontends.md), or the NAME of one
    of coll.frontends; TypeError or ValueError otherwise (an outside attack
    passed the name and met an AttributeError deep inside)."""
    from .. import BY_NAME, FRONTENDS  # (loaded on first use)
    names = ", ".join(f.NAME for f in FRONTENDS if f.GLOBAL)
    if isinstance(frontend, str):
        found = BY_NAME.get(frontend)
        if found is None or not found.GLOBAL:
            raise ValueError(f"frontend {frontend!r} is not one whose arguments are global arrays; expected one "
                             f"of: {names}")
        return found
    if frontend in FRONTENDS and not getattr(frontend, "GLOBAL", False):
        raise ValueError(f"frontend {getattr(frontend, 'NAME', frontend)!r} is not one whose arguments are "
                         f"global arrays; expected one of: {names}")
    if not all(callable(getattr(frontend, a, None)) for a in ("parse", "layouts", "route")):
        raise TypeError(f"frontend must be one of coll.frontends ({names}: the module or its name) or one of "
                        f"your own (parse, layouts, route), got {type(frontend).__name__} {frontend!r}")
    if not getattr(frontend, "GLOBAL", False):
        raise ValueError(f"frontend {getattr(frontend, 'NAME', frontend)!r} is not one whose arguments are "
                         f"global arrays (GLOBAL); expected one of: {names}, or your own with GLOBAL = True")
    return cast(ModuleType, frontend)


def compile(source: Any, frontend: ModuleType | str, backend: str = "cpu", strategy: str = "auto",
            timeout: float = mpi.DEFAULT_TIMEOUT, entry: str | None = None, **options: Any) -> "GlobalProgram":
    """A GlobalProgram of `source` (whatever `frontend.parse` takes: text or
    a module) for `backend`: `cpu` (one simulated device per rank) or `mpi`
    (one process per rank under mpirun). `frontend`: a module of
    coll.frontends with GLOBAL (stablehlo, shard), or its name.
    `prog.inputs`/`prog.outputs` are the Layouts, `prog.pipeline` the whole
    route; `options`: the back end's compile options (cpu: blas, epilogues,
    split, ...: lowering/cpu). Cached per arguments."""
    frontend = frontend_of(frontend)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend '{backend}'; expected one of: {', '.join(BACKENDS)}")
    if not isinstance(source, (str, bytes)) and not hasattr(getattr(source, "operation", None), "get_asm"):
        raise TypeError(f"source must be the program as text, bytes or an ir.Module, got {type(source).__name__}")
    text = source if isinstance(source, (str, bytes)) else str(source.operation.get_asm(enable_debug_info=True))
    key = (text, frontend.__name__, backend, strategy, timeout, entry, tuple(sorted(options.items())))
    if key in _CACHE:
        return _CACHE[key]
    source_text = text
    text, boundary, front, ref = lower(source, frontend, entry, backend=(cpu if backend == "cpu" else mpi).BACKEND)
    ranks = int(np.prod(boundary.grid))
    if backend == "mpi" and ranks == 1:
        raise ValueError(f"@{boundary.entry} runs on one device (no mesh, no sharding): the mpi back end runs "
                         "programs over several ranks; expected backend='cpu' for it")
    program: Launcher
    compiled: CpuProgram | MpiProgram  # (each back end's compile returns its own program class)
    if backend == "cpu":
        on_cpu = cast(CpuProgram, cpu.compile(text, boundary.entry, strategy=strategy, **options))
        compiled, program = on_cpu, _OnCpu(on_cpu, ranks)
    else:
        on_mpi = cast(MpiProgram, mpi.compile(text, boundary.entry, strategy=strategy, timeout=timeout, **options))
        compiled, program = on_mpi, cast(Launcher, on_mpi)
    # The whole route: the frontend's, then what the back end ran.
    pipeline = front[:-1] + "," + compiled.pipeline[len("builtin.module("):]
    reference = cast(CpuProgram, cpu.compile(ref, boundary.entry)) if ref is not None else None
    oracle = frontend.oracle(source_text, boundary) if reference is None and hasattr(frontend, "oracle") else None
    prog = GlobalProgram(program, reference, boundary.grid, boundary.inputs + boundary.outputs,
                         len(boundary.inputs), pipeline, oracle)
    _CACHE[key] = prog
    return prog


def clear_cache() -> None:
    _CACHE.clear()


class GlobalProgram:
    """A compiled SPMD function and its layouts: global arrays in and out."""

    def __init__(self, program: Launcher, reference: CpuProgram | None, grid: list[int], layouts: list[Layout],
                 k_in: int, pipeline: str, oracle: Oracle | None = None) -> None:
        self.program, self.reference_program, self.oracle = program, reference, oracle
        self.grid, self.layouts, self.k_in, self.pipeline = grid, layouts, k_in, pipeline
        self.ranks = program.ranks
        self.strategies = program.strategies
        self._outs: list[np.ndarray] | None = None
        self._calls = 0
        self._blocks: Plan | None = None
        # The last call's inputs and their blocks (reused while the caller
        # passes the same arrays), and its results (reused once the caller
        # has let go of them: _results).
        self._ins: tuple[tuple, list[np.ndarray], list[np.ndarray], list[bool]] | None = None
        self._ys: list[tuple[np.ndarray, dict[int, np.ndarray]] | None] = []
        # One call at a time, scatter to gather: the buffers above are the
        # program's, not the call's (two threads would read each other's results).
        self._lock = program_lock(self, reentrant=True)

    @property
    def inputs(self) -> list[Layout]:
        return self.layouts[:self.k_in]

    @property
    def outputs(self) -> list[Layout]:
        return self.layouts[self.k_in:]

    def _check(self, xs: Sequence[npt.ArrayLike]) -> list[np.ndarray]:
        """The global inputs as numpy arrays (JAX arrays and ml_dtypes
        bfloat16 and fp8 taken as their bits), checked against the layouts."""
        given = [np.asarray(x) for x in xs]
        # ml_dtypes arrays (JAX's bf16 and fp8) as the bit patterns coll stores.
        arrays = [x.view(NUMPY_DTYPES[lay.element]) if ml_dtype(lay.element) == x.dtype else x
                  for x, lay in zip(given, self.inputs)]
        if len(arrays) != self.k_in:
            raise ValueError(f"expected {self.k_in} global arrays (x0..x{self.k_in - 1}), got {len(arrays)}")
        for i, (x, lay) in enumerate(zip(arrays, self.inputs)):
            if tuple(x.shape) != lay.shape or x.dtype != NUMPY_DTYPES[lay.element]:
                raise ValueError(f"x{i}: expected {lay.shape} {NUMPY_DTYPES[lay.element]}, "
                                 f"got {x.shape} {x.dtype}")
        return arrays

    def _scatter(self, xs: Sequence[np.ndarray], fresh: bool = False) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Every rank's blocks of the inputs (views where a block is
        contiguous), and the ranks' output blocks: made once and reused by
        every call (they are copied out by _gather; no page is faulted in
        again per call), or `fresh` ones (launch: programs in one mpirun)."""
        n = self.ranks
        # (the memory and layout too: an array keeps its identity when its buffer is replaced)
        key = tuple((id(x), x.__array_interface__["data"][0], x.shape, x.strides, x.dtype) for x in xs)
        if not fresh and self._ins is not None and self._ins[0] == key:
            # The same arrays as the last call: the same blocks. A view sees
            # what the caller wrote since; a block that had to be copied
            # (not contiguous in its array) is copied again.
            ins = self._ins[2]
            for k, (x, lay) in enumerate((x, lay) for x, lay in zip(xs, self.inputs) for _ in range(n)):
                if not self._ins[3][k]:
                    np.copyto(ins[k], x[lay.block(self.grid, k % n)])
        else:
            # np.asarray(order="C"), not ascontiguousarray: a 0-d block (a scalar) stays 0-d.
            ins = [np.asarray(x[lay.block(self.grid, r)], order="C")
                   for x, lay in zip(xs, self.inputs) for r in range(n)]
            if not fresh:
                views = [not b.flags.owndata for b in ins]  # np.asarray copies only what is not contiguous
                self._ins = (key, list(xs), ins, views)
        if fresh or self._outs is None:
            outs = [aligned_zeros(lay.local, NUMPY_DTYPES[lay.element]) for lay in self.outputs for _ in range(n)]
            if fresh:
                return ins, outs
            self._outs = outs
        return ins, self._outs

    def _plan(self) -> Plan:
        """Per output: [(block, the rank whose copy is taken, the other ranks
        that hold the same block)], and whether the blocks cover the array
        (then the result needs no zeroing)."""
        if self._blocks is None:
            self._blocks = []
            for lay in self.outputs:
                holders: dict[tuple[tuple[int | None, int | None], ...], tuple[tuple[slice, ...], list[int]]] = {}
                for r in range(self.ranks):
                    b = lay.block(self.grid, r)
                    holders.setdefault(tuple((x.start, x.stop) for x in b), (b, []))[1].append(r)
                covered = sum(int(np.prod(lay.local)) for _ in holders) == int(np.prod(lay.shape))
                self._blocks.append(([(b, rs[0], rs[1:]) for b, rs in holders.values()], covered))
        return self._blocks

    def _gather(self, outs: Sequence[np.ndarray], into: list[np.ndarray] | None = None) -> list[np.ndarray]:
        """Global arrays from every rank's blocks. Replicas must agree, bit
        for bit: all of them at a program's first call; after it, a window
        of 1/REPLICA_WINDOWS of their bytes, moved on each call (every byte
        is compared over REPLICA_WINDOWS calls; comparing everything every
        call cost twice the collective's own time)."""
        n, ys = self.ranks, []
        window, self._calls = (None if self._calls == 0 else self._calls % REPLICA_WINDOWS), self._calls + 1
        for j, (lay, (blocks, covered)) in enumerate(zip(self.outputs, self._plan())):
            dtype = NUMPY_DTYPES[lay.element]
            if into is not None:
                y = into[j]
            else:
                y = np.empty(lay.shape, dtype) if covered else np.zeros(lay.shape, dtype)
            for b, r, others in blocks:
                block = outs[j * n + r]
                for other in others:
                    if not _same_bytes(block, outs[j * n + other], window):
                        raise mpi.MpiError(f"y{j}: ranks {r} and {other} hold the same block but different "
                                           "values (replicas differ)")
                if y.base is None or block.base is not y.base:  # (else written in place: _results)
                    y[b] = block
            ys.append(y)
        return ys

    def _results(self, outs: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(this call's global results, the ranks' output blocks): a block
        that is contiguous in its result is written there by the rank whose
        copy is taken (no copy after the run); the other ranks write their
        own buffers (`outs`). A result is reused, not allocated again, once
        nothing but this program refers to it or to its memory (the caller
        dropped it and every view of it): a fresh result costs a page fault
        per page (16 MiB: more than the collective)."""
        n, blocks = self.ranks, list(outs)
        if len(self._ys) != len(self.outputs):
            self._ys = [None] * len(self.outputs)
        ys = []
        for j, (lay, (plan, covered)) in enumerate(zip(self.outputs, self._plan())):
            last = self._ys[j]
            # y's references: the tuple's and getrefcount's argument; its
            # memory's owner's: y's base, each block view's and the argument.
            if not (covered and last is not None and sys.getrefcount(last[0]) == 2
                    and sys.getrefcount(last[0].base) == 2 + len(last[1])):
                dtype = NUMPY_DTYPES[lay.element]
                y = aligned_zeros(lay.shape, dtype)  # (aligned as the ranks' buffers: the kernels' fast path)
                direct = {}
                for b, r, _ in plan:
                    at: tuple[Any, ...] = (*b, Ellipsis)  # (a view, also of a 0-d result)
                    v = y[at]
                    if v.flags.c_contiguous and v.shape == tuple(lay.local):
                        direct[r] = v
                last = self._ys[j] = (y, direct)
            y, direct = last
            for r, v in direct.items():
                blocks[j * n + r] = v
            ys.append(y)
        return ys, blocks

    def run(self, xs: Sequence[npt.ArrayLike], repeat: int = 0
            ) -> list[np.ndarray] | tuple[list[np.ndarray], list[float]]:
        """Global arrays xs -> global results, in one run (one mpirun); with
        `repeat`, (results, seconds of each of `repeat` timed runs after it)."""
        repeat = check_repeat(repeat, least=0)
        with self._lock:
            ins, outs = self._scatter(self._check(xs))
            ys, blocks = self._results(outs)
            times = self.program.launch(ins, blocks, repeat)
            self._gather(blocks, ys)
        return (ys, times) if repeat else ys

    @property
    def checked_against(self) -> str | None:
        """What `reference` runs: "the unpartitioned program" (shard), "XLA"
        (StableHLO, where jaxlib is installed), or None."""
        return ("the unpartitioned program" if self.reference_program is not None
                else "XLA" if self.oracle is not None else None)

    def reference(self, xs: Sequence[npt.ArrayLike]) -> list[np.ndarray]:
        """The global results computed another way: the same program
        unpartitioned on the CPU JIT (shard), or XLA running the module
        (StableHLO). Raises ValueError where there is none."""
        if self.checked_against is None:
            raise ValueError("this program has no reference (its frontend gives none)")
        xs = self._check(xs)
        if self.reference_program is None:
            assert self.oracle is not None  # checked_against
            return self.oracle(xs)
        ys = [np.zeros(lay.shape, NUMPY_DTYPES[lay.element]) for lay in self.outputs]
        self.reference_program.run([x.copy() for x in xs], ys)
        return ys


class _OnCpu:
    """The SPMD function on the CPU-simulated devices (its global view,
    coll-spmd-to-global: one device per rank), launched like an MpiProgram:
    every rank's blocks in, i * N + r."""

    def __init__(self, program: CpuProgram, ranks: int) -> None:
        self.program, self.ranks, self.strategies = program, ranks, program.strategies

    def launch(self, ins: list[np.ndarray], outs: list[np.ndarray], repeat: int = 0) -> list[float]:
        self.program.run(ins, outs)
        if not repeat:
            return []
        # Timed on the call's own blocks (where they lie in the caller's
        # arrays changes the kernel's speed: 8 blocks 1 MiB apart share
        # cache sets, psum at 8 x 1 MiB 0.51 against 0.32 ms on copies);
        # copies only of inputs the program may write in place; time()
        # leaves the outputs as the first run wrote them.
        p = self.program
        written = set(range(len(ins))) if p.n_inputs is None else set(getattr(p, "written", ()) or ())
        return p.time([x.copy() if i in written else x for i, x in enumerate(ins)], outs, repeat)  # (outs kept)


def launch(runs: Sequence[tuple[GlobalProgram, Sequence[npt.ArrayLike]]], repeat: int = 0
           ) -> list[list[np.ndarray]] | tuple[list[list[np.ndarray]], Any]:
    """Several programs compiled for `mpi` (one group size) in one mpirun:
    `runs` is [(GlobalProgram, global inputs)]; returns per program its
    global results, and with `repeat` also the seconds of each of `repeat`
    timed runs (slowest rank), the programs interleaved run by run."""
    repeat = check_repeat(repeat, least=0)
    scattered = [prog._scatter(prog._check(xs), fresh=True) for prog, xs in runs]
    times = mpi.launch([(prog.program, ins, outs) for (prog, _), (ins, outs) in zip(runs, scattered)], repeat)
    results = []
    for (prog, _), (_, outs) in zip(runs, scattered):
        with prog._lock:  # (its call count)
            results.append(prog._gather(outs))
    return (results, times) if repeat else results
