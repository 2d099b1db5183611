"""Run coll programs on CPU-simulated devices: N devices are N host buffers;
copies and combines are compiled through LLVM and run by the upstream
ExecutionEngine.

    prog = compile(text)              # any level: collective, explicit, memref
    prog.run(inputs, outputs)         # numpy arrays; outputs written in place
    prog.time(inputs, outputs, 10)    # seconds per run

Same interface as runtime/cuda.py. Array conventions: runtime/signature.py.
"""
import ctypes
import threading
import time as _time
from pathlib import Path

from mlir import ir
from mlir.execution_engine import ExecutionEngine

from ..ir import STRATEGIES, make_context
from ..lowering.route import lower
from .memory import require
from .signature import check_arrays, parse_program, staged_all

OPT_LEVEL = 3
# The cost-model profile `auto` chooses by (analysis/profiles/cpu.json,
# measured by bench/calibrate_cpu.py), among every strategy the CPU runs.
PROFILE = "cpu"
_CACHE = {}


def _last_level_cache(root="/sys/devices/system/cpu/cpu0/cache"):
    """Bytes of this machine's last-level cache (Linux sysfs; 0 when unknown)."""
    best = (0, 0)
    for d in Path(root).glob("index*"):
        try:
            level = int((d / "level").read_text())
            size = (d / "size").read_text().strip()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
            best = max(best, (level, int(size.rstrip("KMG")) * scale))
        except (OSError, ValueError):
            continue
    return best[1]


# Programs whose buffers exceed the last-level cache write their results
# with non-temporal stores (coll-to-cpu{nontemporal}): nothing reads them
# before the call returns, and a plain store first reads each line in.
NONTEMPORAL = _last_level_cache()


def _runner_utils():
    """libmlir_c_runner_utils.so: memrefCopy, used for non-contiguous copies."""
    lib = Path(ir.__file__).parent / "lib" / "libmlir_c_runner_utils.so"
    return [str(lib)] if lib.exists() else []


def available():
    """(True, '') when programs can be compiled and run here (importing this
    module already needs the MLIR execution engine)."""
    if not _runner_utils():
        return False, "libmlir_c_runner_utils.so not found in the mlir package"
    return True, ""


class CpuProgram:
    """A compiled entry function. `specs`: one ArgSpec per argument;
    `n_inputs`: how many leading arguments are inputs (None if unknown);
    `strategies`: what coll-lower-all-reduce chose; `traffic_bytes`: bytes
    the explicit program reads plus writes (None if not known)."""

    def __init__(self, engine, entry, specs, n_inputs, strategies, traffic, compile_seconds):
        self.engine = engine
        self.entry = entry
        self.specs = specs
        self.n_inputs = n_inputs
        self.strategies = strategies
        self.traffic_bytes = traffic
        self.compile_seconds = compile_seconds
        self._fn = engine.lookup(entry)
        # Scratch is static (lowering/cpu_scratch.py): one call at a time.
        # ctypes lets go of the GIL during a call, so threads could overlap.
        self._lock = threading.Lock()

    def _packed(self, inputs, outputs):
        arrays = check_arrays(self.specs, self.n_inputs, inputs, outputs)
        views, descs, bases = staged_all(arrays, self.specs)
        ptrs = [ctypes.pointer(d) for d in descs]
        packed = (ctypes.c_void_p * len(ptrs))()
        for i, p in enumerate(ptrs):
            packed[i] = ctypes.cast(ctypes.pointer(p), ctypes.c_void_p)
        # Arguments with a layout run in a buffer of their span: what the
        # program wrote is copied back to the caller's arrays.
        back = [(a, v) for a, v in zip(arrays, views) if v is not a and a.flags.writeable]
        # Keep arrays and descriptors alive as long as the packed arguments.
        return packed, (arrays, descs, ptrs, bases, back)

    @staticmethod
    def _write_back(keep):
        for a, v in keep[-1]:
            a[...] = v

    def run(self, inputs, outputs):
        """Runs once; writes `outputs` in place."""
        packed, keep = self._packed(inputs, outputs)
        with self._lock:
            self._fn(packed)
        self._write_back(keep)

    def time(self, inputs, outputs, repeat=10):
        """Seconds of each of `repeat` runs, after one warm-up run, which
        also touches every page of the inputs, outputs and scratch: no
        timed run faults a page in."""
        packed, keep = self._packed(inputs, outputs)
        times = []
        with self._lock:
            self._fn(packed)
            for _ in range(max(int(repeat), 1)):
                t0 = _time.perf_counter()
                self._fn(packed)
                times.append(_time.perf_counter() - t0)
        self._write_back(keep)
        return times


def compile(module_text, entry=None, strategy="auto", threshold=None, tile=-1, shuffle_seed=None,
            check_order=True, scratch=None, profile=None, nontemporal=None):
    """Compiles `module_text` (collective, explicit or memref level) for the
    CPU; lowers what is not lowered yet (coll-lower-all-reduce with
    `strategy`/`threshold`, coll-to-cpu with `tile`, coll-cpu-to-llvm).
    With `shuffle_seed`, the explicit program is first put in another valid
    order of its token graph (coll-shuffle): chaos testing of the ordering.
    `scratch`: coll-to-cpu's (None: static, allocated once per program;
    "heap": allocated at every call). `auto` picks the strategy the cost
    model predicts fastest on `profile` (None: PROFILE; "": none, the
    reference threshold rule). `nontemporal`:
    coll-to-cpu's (None: NONTEMPORAL, this machine's; 0: never).
    An explicit-level input is checked by coll-check-order unless
    `check_order=False`. Cached per arguments. Raises ir.MLIRError (parse), VerifyError or
    PassError (lowering; both carry locations) or ValueError."""
    if nontemporal is None:
        nontemporal = NONTEMPORAL
    key = (module_text, entry, strategy, threshold, tile, shuffle_seed, check_order, scratch, profile,
           nontemporal)
    if key in _CACHE:
        return _CACHE[key]
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy '{strategy}'; expected one of: {', '.join(STRATEGIES)}")
    t0 = _time.perf_counter()
    ctx = make_context()
    with ctx:
        module, name, specs, n_inputs = parse_program(module_text, entry)
        if strategy == "auto" and profile is None:
            profile = PROFILE  # ("": no profile, the reference rule)
        low = lower(module.operation, "cpu", strategy, threshold, profile,
                    check_order=check_order, tile=None if tile == -1 else tile,
                    shuffle_seed=shuffle_seed, scratch=scratch, nontemporal=nontemporal or None)
        strategies, traffic = low.strategies, low.traffic
        # Scratch lives as long as the program, the arguments are the caller's.
        require(low.scratch + sum(s.nbytes for s in specs),
                f"running @{name} on the CPU ({len(specs)} argument buffers and "
                f"{low.scratch} bytes of scratch)")
        engine = ExecutionEngine(module, opt_level=OPT_LEVEL, shared_libs=_runner_utils())
    prog = CpuProgram(engine, name, specs, n_inputs, strategies, traffic,
                      _time.perf_counter() - t0)
    prog._ctx = ctx  # keep the context alive as long as the engine
    prog.pipeline = low.pipeline
    _CACHE[key] = prog
    return prog


def clear_cache():
    """Drops the compiled programs (and the memory their engines hold)."""
    _CACHE.clear()
