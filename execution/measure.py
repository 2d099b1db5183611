"""Measuring a collective the way people who tune collectives read it
(nccl-tests' columns), for coll-run, coll-perf and the benchmarks: one
definition of each column (COLUMNS), the arithmetic, the check's verdict
and the table.

    runs = Runs(problem, inputs)        # the reference once, one set of run buffers
    m = runs.measure(prog, iters=5)     # check one run, then time `iters` more
    m.median, m.algbw, m.busbw, m.status

algbw = size / time, where size is nccl-tests' size: the larger of one
device's input and output buffer (all_gather: the gathered output,
reduce_scatter: the input); busbw = algbw x the collective's `busbw` factor
(collectives/*.py: all_reduce 2(N-1)/N; reduce_scatter, all_gather,
all_to_all (N-1)/N; broadcast, reduce 1), which makes numbers comparable
across collectives, strategies and N: the rate each device's busiest link
would need under the bandwidth-optimal algorithm. Both use the median time.
"""
import dataclasses
import numbers
import statistics
import textwrap
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..collectives import BY_NAME
from ..collectives.base import Collective
from . import check
from .check import Arrays, Problem
from .signature import NUMPY_DTYPES, aligned_copy

MAX_REPEAT = 10 ** 6  # timed runs: more is a typo that would run until killed
MAX_TIMEOUT = 7 * 24 * 3600  # seconds a run may be given (a week)


class Runnable(Protocol):
    """What Runs measures: a compiled program of any target."""

    def run(self, inputs: Arrays, outputs: Arrays) -> Any: ...

    def time(self, inputs: Arrays, outputs: Arrays, repeat: int) -> Sequence[float]: ...


def check_repeat(repeat: object, least: int = 1) -> int:
    """`repeat` (timed runs) as an int in least..MAX_REPEAT, else ValueError
    (every public `time`/`launch`/`run(repeat)` checks it, as coll-run
    checks --repeat: `time(repeat=0)` used to time one run anyway)."""
    if isinstance(repeat, bool) or not isinstance(repeat, numbers.Integral):
        raise ValueError(f"repeat must be an integer, got {type(repeat).__name__} {repeat!r}")
    value = int(repeat)
    if not least <= value <= MAX_REPEAT:
        raise ValueError(f"repeat must be in {least}..{MAX_REPEAT}, got {repeat}")
    return value


# Every column coll-run and coll-perf print: name -> what it is (their
# --help and docs/running.md say the same).
COLUMNS = {
    "strategy": "the strategy the program was lowered with (auto: the one it chose)",
    "devices": "N, the devices (or ranks) the collective spans",
    "size": "bytes per device as nccl-tests counts them: the larger of one device's input and output "
            "buffer (all_gather: the gathered output; reduce_scatter: the input)",
    "count": "elements in `size`",
    "time": "seconds of one call, timed after the runtime's untimed first call and the warm-up calls; "
            "min, median and max over the timed calls",
    "algbw": "size / median time (GB/s, 1e9 bytes)",
    "busbw": "algbw x the collective's bus factor: all_reduce 2(N-1)/N; reduce_scatter, all_gather, "
             "all_to_all (N-1)/N; broadcast, reduce 1 (nccl-tests' busbw: comparable across collectives, "
             "strategies and N)",
    "#wrong": "output elements that fail the check against numpy (exact on the generated inputs), plus 1 "
              "when an out-of-place program wrote its input buffers",
    "replicas": "whether every replica of a multi-device result holds the same bits",
    "check": "ok, or FAIL with the largest error (floats) or the count of wrong elements; unchecked when no "
             "reference is known (an explicit program without a coll.implements on its arguments)",
}


def collective_class(op: str) -> type[Collective] | None:
    """The registry class of collective `op` ('all_reduce'), or None."""
    return BY_NAME.get("coll." + op)


def bus_factor(op: str, n: int) -> float | None:
    """nccl-tests' busbw / algbw of collective `op` over n devices (its
    `busbw` hook), None for what is not one collective (a whole program)."""
    cls = collective_class(op)
    return cls.busbw(n) if cls is not None else None


def size_bytes(problem: Problem) -> int:
    """nccl-tests' size of `problem`: the larger of one device's input and
    output buffer."""
    item = NUMPY_DTYPES[problem.element].itemsize
    numel = max(int(np.prod(problem.shape, dtype=np.int64)), int(np.prod(problem.output_shape, dtype=np.int64)))
    return numel * item


def devices(problem: Problem) -> int:
    """N: the devices (ranks) the collective of `problem` spans."""
    return check._ranks(problem)


def memory_needed(problem: Problem) -> int:
    """Bytes that measuring `problem` with Runs holds: the inputs (twice in
    place: the pristine ones and the run's), the outputs, the expected
    values, and the check's float64 blocks (the whole problem where the
    collective is not elementwise)."""
    item = NUMPY_DTYPES[problem.element].itemsize
    numel = int(np.prod(problem.shape, dtype=np.int64))
    out = int(np.prod(problem.output_shape, dtype=np.int64))
    in_place = any(a is not None for a in problem.alias)
    block = min(numel, check.CHUNK) if check._elementwise(problem) else numel
    return (item * (numel * problem.n_inputs * (2 if in_place else 1) + out * (problem.n_outputs + 1))
            + 8 * block * (problem.n_inputs + 4))


def algbw(size: int, seconds: float) -> float:
    """Bytes per second (0 for a time of 0)."""
    return size / seconds if seconds > 0 else 0.0


def busbw(op: str, n: int, size: int, seconds: float) -> float | None:
    factor = bus_factor(op, n)
    return None if factor is None else algbw(size, seconds) * factor


@dataclass
class Measurement:
    """One program on one problem: its timed calls and its check."""
    op: str
    n: int | str              # devices ("-": not known)
    size: int                 # bytes, nccl-tests' size
    count: int                # elements in size
    times: list[float]        # seconds per timed call, warm-up excluded
    ok: bool = True
    worst: float = 0.0        # largest error (floats) or wrong elements (integers)
    wrong: int | None = 0     # output elements that fail the check (None: not checked)
    replicas: str = "-"       # identical, DIFFER, or - (no replicated result)
    floating: bool = True
    strategy: str = "-"
    wrote_inputs: bool = False  # an out-of-place program changed its input buffers
    extra: dict[str, Any] = field(default_factory=dict)  # more JSON fields (as_dict)
    checked: bool = True      # False: nothing was compared (no reference, or not asked): never "ok"

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def max(self) -> float:
        return max(self.times)

    @property
    def algbw(self) -> float:
        return algbw(self.size, self.median)

    @property
    def busbw(self) -> float | None:
        return None if isinstance(self.n, str) else busbw(self.op, self.n, self.size, self.median)

    @property
    def status(self) -> str:
        """coll-run's check column."""
        if self.ok:
            return "ok" if self.checked else "unchecked"
        why = []
        if self.wrong or self.worst:  # every output's wrong elements, replicas too (as #wrong)
            why.append(f"FAIL (max error {self.worst:.3g})" if self.floating
                       else f"FAIL ({self.wrong} elements differ)")
        if self.replicas == "DIFFER":
            why.append("replicas differ")
        if self.wrote_inputs:
            why.append("wrote its inputs")
        return ", ".join(why) if why[0].startswith("FAIL") else "FAIL (" + ", ".join(why) + ")"

    def as_dict(self) -> dict[str, Any]:
        return dict(op=self.op, strategy=self.strategy, devices=self.n, size=self.size, count=self.count,
                    times_s=list(self.times), min_s=self.min, median_s=self.median, max_s=self.max,
                    algbw_GBps=self.algbw / 1e9, busbw_GBps=None if self.busbw is None else self.busbw / 1e9,
                    ok=self.ok, wrong=self.wrong, replicas=self.replicas, **self.extra)


def timed(prog: Runnable, inputs: Arrays, outputs: Arrays, iters: int, warmup: int = 0) -> list[float]:
    """Seconds of `iters` calls of `prog` after `warmup` calls (each runtime
    makes one untimed call first: compilation, first touch of the pages)."""
    times = prog.time(inputs, outputs, warmup + iters)
    return [float(t) for t in times[warmup:]]


class Runs:
    """Programs run on one problem and one set of inputs (`pristine`): the
    expected outputs are computed once (check.Expected), before any
    program runs, and every program runs in the same buffers, so that
    measuring S strategies needs the inputs and the outputs once, not S
    times. An out-of-place program reads `pristine` itself: a CRC of each
    input, taken first, shows a program that wrote its inputs (a failed
    check; `reload()` then gives the inputs back for the next program).
    An in-place program runs on a copy, refilled before each."""

    def __init__(self, problem: Problem, pristine: Arrays,
                 reload: Callable[[], Arrays] | None = None) -> None:
        self.problem = problem
        self.pristine = pristine
        self.reload = reload
        self._expected: dict[int | None, check.Expected] = {}
        self.given: Arrays | None = None
        self.outputs: list[np.ndarray] | None = None
        # the op's outputs of the last checked run (in the run buffers)
        self.last_outputs: list[np.ndarray] | None = None
        self.kept: list[np.ndarray] | None = None
        self.in_place = any(a is not None for a in problem.alias)
        self._crc = None if self.in_place else _crcs(pristine)
        cls = collective_class(problem.op)
        self.replicated = bool(cls is not None and cls.REPLICATED and check._n_out(problem) > 1)

    def expected(self, depth: int | None = None) -> check.Expected:
        """check.Expected of the problem (with `depth`: see check.tolerance)."""
        if depth not in self._expected:
            judged = self.problem if depth is None else dataclasses.replace(self.problem, depth=depth)
            n_out = check.explicit_outputs(judged, check._n_out(judged))
            self._expected[depth] = check.Expected(judged, self.pristine, n_out)
        return self._expected[depth]

    def _fresh(self) -> tuple[Arrays, list[np.ndarray]]:
        """The run buffers: the inputs and zeroed outputs."""
        if self.outputs is None:
            self.given = [aligned_copy(x) for x in self.pristine] if self.in_place else self.pristine
            self.outputs = check.make_outputs(self.problem)
        else:
            assert self.given is not None  # set with the outputs
            if self.in_place:
                for g, x in zip(self.given, self.pristine):
                    np.copyto(g, x)
            for y in self.outputs:
                y.fill(0)
        return self.given, self.outputs

    def inputs_intact(self) -> bool:
        """Whether the inputs still hold their values (True in place: the
        program runs on a copy). When not, they are reloaded for the next
        program, or ValueError when there is no `reload`."""
        if self.in_place or _crcs(self.pristine) == self._crc:
            return True
        if self.reload is None:
            raise ValueError("the program wrote its input buffers; the inputs cannot be restored for the next run")
        self.pristine = self.given = self.reload()
        return False

    def run_checked(self, prog: Runnable, depth: int | None = None
                    ) -> tuple[list[np.ndarray], bool, float, int, str]:
        """Runs `prog` once on fresh buffers: (the op's outputs, ok, worst,
        wrong, replicas)."""
        given, outputs = self._fresh()
        self.expected(depth)  # from the inputs as they are before any run
        prog.run(given, outputs)
        ys = self.last_outputs = check.op_outputs(self.problem, given, outputs)
        expected = self.expected(depth)
        ok, worst, wrong = expected.verify(ys)
        replicas = "-"
        if self.replicated:
            replicas = "identical" if expected.same else "DIFFER"
        return ys, ok, worst, wrong, replicas

    def measure(self, prog: Runnable, iters: int, warmup: int = 0, strategy: str = "-", checked: bool = True,
                depth: int | None = None, keep: bool = False) -> Measurement:
        """One checked run (unless not `checked`), then `iters` timed calls
        after `warmup` in the same buffers: a Measurement. With `keep`, a
        copy of the checked run's outputs is left in `self.kept` (the timed
        calls reuse the buffers)."""
        p = self.problem
        ok, worst, replicas = True, 0.0, "-"
        wrong: int | None = None
        checked = checked and p.checked  # an explicit program without a claim: no reference
        if checked:
            ys, ok, worst, wrong, replicas = self.run_checked(prog, depth)
            if keep:
                self.kept = [np.array(y) for y in ys]
        else:
            given, outputs = self._fresh()
            if keep:  # what one call computes, though nothing compares it
                prog.run(given, outputs)
                self.kept = [np.array(y) for y in check.op_outputs(p, given, outputs)]
                self._fresh()
        assert self.given is not None and self.outputs is not None  # _fresh set them
        times = timed(prog, self.given, self.outputs, iters, warmup)
        size = size_bytes(p)
        m = Measurement(p.op, devices(p), size, size // NUMPY_DTYPES[p.element].itemsize, times, ok, worst,
                        wrong, replicas, p.element in check.EPS, strategy, checked=checked)
        if not self.inputs_intact():
            m.ok, m.wrote_inputs = False, True
        return m


def _crcs(arrays: Arrays) -> list[int]:
    return [zlib.crc32(np.ascontiguousarray(a).reshape(-1).view(np.uint8).data) for a in arrays]


# -- coll-run's table ------------------------------------------------------------

def seconds(t: float) -> str:
    return f"{t * 1e3:.3f} ms" if t < 1 else f"{t:.3f} s"


def human_size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    raise AssertionError("unreachable: GiB is the last unit")


def gbps(bps: float) -> str:
    return f"{bps / 1e9:.2f} GB/s"


HEADER = ("strategy", "devices", "size", "time min", "median", "max", "algbw", "busbw", "replicas", "check")


def row(m: Measurement) -> tuple[str, ...]:
    """coll-run's row of Measurement `m`."""
    return (m.strategy, str(m.n), human_size(m.size), seconds(m.min), seconds(m.median), seconds(m.max),
            gbps(m.algbw), "-" if m.busbw is None else gbps(m.busbw), m.replicas, m.status)


def table(rows: list[tuple[str, ...]]) -> list[str]:
    """Lines of an aligned table: HEADER, then `rows` (tuples of strings);
    numbers right-aligned, names and the check left-aligned."""
    widths = [max(len(r[i]) for r in rows + [HEADER]) for i in range(len(HEADER))]
    right = range(1, len(HEADER) - 2)
    return ["  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in [HEADER] + rows]


# coll-run's table (`table`) has every column but these two, which coll-perf prints.
PERF_ONLY = ("count", "#wrong")


def help_text(names: Sequence[str] = tuple(COLUMNS)) -> str:
    """The columns `names` (default: all), for a tool's --help epilog."""
    lines = ["columns:"]
    for name, what in COLUMNS.items():
        if name not in names:
            continue
        lines += textwrap.wrap(what, 78, initial_indent=f"  {name:<9} ", subsequent_indent=" " * 12)
    return "\n".join(lines)
