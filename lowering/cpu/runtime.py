"""The CPU back end's programs: an ExecutionEngine over the lowered module,
called through the C interface on numpy arrays (conventions:
execution/signature.py)."""
import ctypes
import functools
import os
import time as _time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from ...execution.forks import program_lock
from ...execution.measure import check_repeat
from ...execution.memory import require
from ...execution.program import Program
from ...execution.signature import ArgSpec, check_arrays, staged_all
from ...ir.errors import LocatedError
from ...ir.walk import find_ops
from ...passes.blas_contractions import linked_libraries
from ..base import Backend
from ..driver import lower

OPT_LEVEL = 3


def _caches(root: str = "/sys/devices/system/cpu/cpu0/cache") -> dict[int, int]:
    """{level: bytes} of cpu0's data and unified caches (Linux sysfs; {}
    when unknown)."""
    out: dict[int, int] = {}
    for d in Path(root).glob("index*"):
        try:
            if (d / "type").read_text().strip() == "Instruction":
                continue
            level = int((d / "level").read_text())
            size = (d / "size").read_text().strip()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
            out[level] = max(out.get(level, 0), int(size.rstrip("KMG")) * scale)
        except (OSError, ValueError):
            continue
    return out


# Programs whose buffers take at least this many bytes write their results
# with non-temporal stores (coll-to-cpu{nontemporal}): nothing reads them
# before the call returns, and a plain store first reads each line in.
# Not the last-level cache's size: on this 2-core VM (2 MiB of L2 per
# core, 480 MiB of L3 shared), with one call right after another on the
# same buffers, streamed allreduces beat plain ones from 8 MiB of buffers
# up (2026-12-03, bench/cpu_strategies.py-style, interleaved: twoshot at
# N=4 x 1 MiB 0.29 against 0.37 ms, at 8 x 8 MiB 4.6 against 9.0 ms, at
# 3 x 64 MiB 14.4 against 29.3 ms), except twoshot at 8 x 1 MiB (16 MiB:
# 0.63 against 0.59 ms); from 32 MiB each strategy won or tied.
STREAM_L2S = 16


def stream_threshold(caches: dict[int, int]) -> int:
    """Bytes of buffers from which results are streamed: STREAM_L2S times
    one core's L2, at most the last-level cache; 0 (never) when unknown."""
    if not caches:
        return 0
    llc = caches[max(caches)]
    return min(llc, STREAM_L2S * caches[2]) if 2 in caches else llc


NONTEMPORAL = stream_threshold(_caches())


def _runner_utils() -> list[str]:
    """libmlir_c_runner_utils.so: memrefCopy, used for non-contiguous copies."""
    lib = Path(ir.__file__).parent / "lib" / "libmlir_c_runner_utils.so"
    return [str(lib)] if lib.exists() else []


ASYNC_RUNTIME = "libmlir_async_runtime.so"
# The process that first ran a program on the async runtime's pool (its
# threads are not in a child forked after that: a call there would wait
# for them forever).
_pool_pid: int | None = None


def uses_async_runtime(module: ir.Module) -> bool:
    """Whether the module calls the async runtime (coll-parallel-devices'
    async.execute ops, coll-to-cpu's workers); if so, the runtime is loaded into the process once,
    for good. Not as an ExecutionEngine shared library: an engine's
    destruction calls the library's __mlir_execution_engine_destroy, which
    resets the runtime every program shares (LLVM 22), and the next call of
    another program dereferenced null (a segfault, after a program was
    garbage collected)."""
    # Calls, not declarations: the route's async lowering declares the
    # runtime in every program, also where nothing runs on the pool (a
    # program below the thresholds runs in a forked child).
    uses = any(ir.FlatSymbolRefAttr(op.attributes["callee"]).value.startswith("mlirAsyncRuntime")
               for op in find_ops(module.operation, "llvm.call") if "callee" in op.attributes)
    if uses:
        _load_async_runtime()
    return uses


@functools.cache
def _load_async_runtime() -> None:
    # RTLD_GLOBAL: the JIT resolves the runtime's symbols in the process.
    ctypes.CDLL(str(Path(ir.__file__).parent / "lib" / ASYNC_RUNTIME), mode=os.RTLD_NOW | os.RTLD_GLOBAL)


def _check_pool() -> None:
    """Refuses a threaded program's call in a process forked after another
    process ran one (its pool's threads are not there)."""
    global _pool_pid
    if _pool_pid is None:
        _pool_pid = os.getpid()
    elif _pool_pid != os.getpid():
        raise RuntimeError("this program runs its devices' local work or its collectives' tiles on the async "
                           "runtime's threads, and this "
                           "process was forked after its parent had started them (a fork copies no thread); "
                           "compile it with parallel=\"off\" (coll-run --parallel=off) in a forked process, or "
                           "start processes with multiprocessing's 'spawn' or 'forkserver'")


def one_blas_thread(lib: str) -> None:
    """OpenBLAS (coll-blas-contractions' calls) on one thread, unless the
    user set OPENBLAS_NUM_THREADS. The simulated devices run one after
    another, so more threads could use idle cores, but on this shared
    2-core machine they wait for each other: dp_mlp_step at bench scale
    (bench/jax_corpus.py, 8 devices, 64 x 1024 x 1024 gemms) took 100 ms a
    call with one thread and 470-630 ms with two (load 2, most of it in
    OpenBLAS's thread handoff, perf), and a lone 1024^2 sgemm ran at 103
    GFLOP/s on one thread against 60 on two (bench/matmul_blas.py)."""
    if "OPENBLAS_NUM_THREADS" not in os.environ:
        ctypes.CDLL(lib).scipy_openblas_set_num_threads(ctypes.c_int(1))


def available() -> tuple[bool, str]:
    """(True, '') when programs can be compiled and run here (importing this
    module already needs the MLIR execution engine)."""
    if not _runner_utils():
        return False, "libmlir_c_runner_utils.so not found in the mlir package"
    return True, ""


def _identity(a: object) -> tuple:
    """What makes a cached packing of array `a` still valid: the object, and
    its memory and layout as they are now (an array keeps its identity when
    its buffer is replaced, resize or __setstate__, or its strides set)."""
    if not isinstance(a, np.ndarray):
        return (id(a),)
    return (id(a), a.__array_interface__["data"][0], a.shape, a.strides, a.dtype, a.flags.writeable)


def _data(a: np.ndarray) -> int:
    """The address of an array's first element (a copy's is another)."""
    return int(a.__array_interface__["data"][0])


# How benchmarks time a call (bench/: --clock). "wall": elapsed time, what
# a user waits. "cpu": the CPU time of every thread of the process, which
# leaves out the time other processes hold the cores of a shared machine;
# a program whose tiles or devices run on several threads (coll-to-cpu's
# workers, coll-parallel-devices) counts the work of them all, more than
# the time it takes. (The calling thread's time alone, as benchmarks took
# before the tiles ran on several threads, leaves out the others' work.)
CLOCKS = {"wall": _time.perf_counter, "cpu": _time.process_time}


RETIRE_SECONDS = 1.0
_RETIRED: list[tuple[float, ExecutionEngine]] = []  # (when, engine) of dropped threaded programs


def _retire(engine: ExecutionEngine) -> None:
    """Keeps `engine` alive RETIRE_SECONDS; drops those retired before."""
    now = _time.monotonic()
    _RETIRED[:] = [(t, e) for t, e in _RETIRED if now - t < RETIRE_SECONDS]
    _RETIRED.append((now, engine))


class CpuProgram:
    """A compiled entry function. `specs`: one ArgSpec per argument;
    `n_inputs`: how many leading arguments are inputs (None if unknown);
    `strategies`: what coll-lower-all-reduce chose; `traffic_bytes`: bytes
    the explicit program reads plus writes (None if not known)."""
    # Set by build and Backend.compile (lowering/base.py).
    pipeline: str
    written: Any
    _ctx: ir.Context

    def __init__(self, engine: ExecutionEngine, entry: str, specs: list[ArgSpec], n_inputs: int | None,
                 strategies: list[str], traffic: int | None, compile_seconds: float | None) -> None:
        self.engine = engine
        self.entry = entry
        self.specs = specs
        self.n_inputs = n_inputs
        self.strategies = strategies
        self.traffic_bytes = traffic
        self.compile_seconds = compile_seconds
        self._fn = engine.lookup(entry)
        # Scratch is static (lowering/cpu/scratch.py): one call at a time.
        # ctypes lets go of the GIL during a call, so threads could overlap.
        self._lock = program_lock(self)
        self.threaded = False  # runs on the async runtime's pool (coll-parallel-devices); set by build
        self._last: tuple[tuple, tuple, ctypes.Array, tuple] | None = None  # _packed's

    def __del__(self) -> None:
        # A pool thread still runs the compiled code's last instructions (a
        # coroutine's cleanup, its return) after the call it finished has
        # returned; the engine destroyed then unmaps that code under it (a
        # segfault, seen when tests dropped a program right after its call,
        # 2026-12-07). A threaded program's engine lives RETIRE_SECONDS
        # more.
        if getattr(self, "threaded", False):
            _retire(self.engine)

    def _packed(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> tuple[ctypes.Array, tuple]:
        """The call's packed arguments, and what must live as long. The last
        call's are reused when the same array objects come again, unchanged
        in shape, type and writability (the frontends' call path passes its
        buffers every call; checking and packing 16 of them cost half the
        collective at 1 MiB); not where an argument is staged (a layout's
        buffer, copied in and out every call) or copied by the check (an
        input that is not C-contiguous)."""
        given = (*inputs, *outputs)
        key = tuple(_identity(a) for a in given)
        last = self._last
        if last is not None and last[0] == key:
            return last[2], last[3]
        arrays = check_arrays(self.specs, self.n_inputs, inputs, outputs, getattr(self, "written", ()))
        views, descs, bases = staged_all(arrays, self.specs)
        ptrs = [ctypes.pointer(d) for d in descs]
        packed = (ctypes.c_void_p * len(ptrs))()
        for i, p in enumerate(ptrs):
            packed[i] = ctypes.cast(ctypes.pointer(p), ctypes.c_void_p)
        # Arguments with a layout run in a buffer of their span: what the
        # program wrote is copied back to the caller's arrays.
        back = [(a, v) for a, v in zip(arrays, views) if v is not a and a.flags.writeable]
        # Keep arrays and descriptors alive as long as the packed arguments.
        keep = (arrays, descs, ptrs, bases, views, back)
        # (`given` held: no id in the key is reused while it is cached.) Not
        # where the check made a copy (an input not C-contiguous): the next
        # call's values must be copied again (an outside attack, 2026-12-08:
        # a strided input changed between calls ran on its old values).
        own = all(_data(a) == _data(g) for a, g in zip(arrays, given))
        self._last = (key, given, packed, keep) if own and all(v is a for a, v in zip(arrays, views)) else None
        return packed, keep

    @staticmethod
    def _write_back(keep: tuple) -> None:
        for a, v in keep[-1]:
            a[...] = v

    @property
    def profiled(self) -> bool:
        """Built with split=True (coll-profile-collectives)."""
        return "coll-profile-collectives" in getattr(self, "pipeline", "")

    def split(self, locked: bool = False) -> tuple[float, int] | None:
        """(seconds spent in collectives, calls of the entry) since the last
        split(), which zeroes them (time() does after its warm-up run), in a
        program built with split=True (coll-profile-collectives:
        lowering/cpu/profile.py); None in any other. `locked`: the caller
        holds the program's lock."""
        if not self.profiled:
            return None
        from mlir.runtime import get_ranked_memref_descriptor

        from .profile import READ
        out = np.zeros(2, np.int64)
        desc = get_ranked_memref_descriptor(out)
        if locked:
            self.engine.invoke(READ, ctypes.pointer(ctypes.pointer(desc)))
        else:
            with self._lock:
                self.engine.invoke(READ, ctypes.pointer(ctypes.pointer(desc)))
        return float(out[0]) * 1e-9, int(out[1])

    def run(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> None:
        """Runs once; writes `outputs` in place."""
        packed, keep = self._packed(inputs, outputs)
        if self.threaded:
            _check_pool()
        with self._lock:
            self._fn(packed)
        self._write_back(keep)

    def time(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], repeat: int = 10,
             clock: Callable[[], float] = _time.perf_counter) -> list[float]:
        """Seconds of each of `repeat` runs, after one warm-up run, which
        also touches every page of the inputs, outputs and scratch: no
        timed run faults a page in. `clock`: wall time, or one of CLOCKS.
        The outputs are
        those of the warm-up run: a program in place would otherwise leave
        the result of runs on its own results (as mpi-exe's --repeat)."""
        repeat = check_repeat(repeat)
        packed, keep = self._packed(inputs, outputs)
        views, written = keep[4], set(getattr(self, "written", ()))
        times = []
        if self.threaded:
            _check_pool()
        with self._lock:
            self._fn(packed)
            if self.profiled:
                self.split(locked=True)  # (coll-run --profile counts the timed runs only)
            n_in = 0 if self.n_inputs is None else self.n_inputs  # (None: any argument may be written)
            first = [(v, v.copy()) for i, v in enumerate(views) if i >= n_in or i in written]
            for _ in range(repeat):
                t0 = clock()
                self._fn(packed)
                times.append(clock() - t0)
        for v, result in first:
            v[...] = result
        self._write_back(keep)
        return times


def _defined_somewhere(declared: list[tuple[str, ir.Location]], libs: list[str]) -> None:
    """Refuses, located, a function the program declares (a func.func with
    no body) and calls that neither the libraries the JIT links nor the process
    define: the JIT printed an unlocated "Symbols not found" and the run
    failed as "Unknown function" of the entry (an outside attack,
    2026-12-07)."""
    if not declared:
        return
    handles = [ctypes.CDLL(lib) for lib in libs] + [ctypes.CDLL(None)]
    for name, loc in declared:
        if not any(hasattr(h, name) for h in handles):
            raise LocatedError(f"@{name} is declared but defined nowhere the CPU JIT links (the module, "
                               f"{', '.join(Path(lib).name for lib in libs) or 'no library'}, the process); "
                               "expected a definition in the module", loc)


def build(backend: Backend, program: Program, strategy: str, threshold: int | None, tile: int | None,
          shuffle_seed: int | None, check_order: bool, scratch: str | None = None, nontemporal: int | None = None,
          profile: str | None = None, blas: bool | str | None = True,
          epilogues: bool | str | None = None, split: bool | None = None,
          parallel: bool | str | None = None) -> CpuProgram:
    """The CpuProgram of `program` (read, in the current Context).
    `nontemporal` None: NONTEMPORAL (this machine's); `profile` None: the
    back end's (auto by the cost model), "": none (the reference rule)."""
    if nontemporal is None:
        nontemporal = NONTEMPORAL
    module, name, specs, n_inputs = program.parsed, program.entry, program.specs, program.n_inputs
    called = {ir.FlatSymbolRefAttr(op.attributes["callee" if op.name == "func.call" else "value"]).value
              for op in program.index.find(lambda n: n in ("func.call", "func.constant"))}
    declared = [(ir.StringAttr(f.attributes["sym_name"]).value, f.location)
                for f in program.index.find("func.func") if not len(f.regions[0].blocks)
                and ir.StringAttr(f.attributes["sym_name"]).value in called]
    low = lower(program, backend, strategy, threshold, profile, check_order=check_order,
                tile=None if tile == -1 else tile, shuffle_seed=shuffle_seed, scratch=scratch,
                nontemporal=nontemporal or None, blas=blas, epilogues=epilogues, split=split,
                parallel=parallel)
    # Scratch lives as long as the program, the arguments are the caller's.
    require(low.scratch + sum(s.nbytes for s in specs),
            f"running @{name} on the CPU ({len(specs)} argument buffers and "
            f"{low.scratch} bytes of scratch)")
    libs = linked_libraries(module.operation)
    threaded = uses_async_runtime(module)
    _defined_somewhere(declared, _runner_utils() + libs)
    engine = ExecutionEngine(module, opt_level=OPT_LEVEL, shared_libs=_runner_utils() + libs)
    if libs:
        one_blas_thread(libs[0])
    prog = CpuProgram(engine, name, specs, n_inputs, low.strategies, low.traffic, None)
    prog.pipeline = low.pipeline
    prog.threaded = threaded
    return prog
