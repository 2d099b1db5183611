"""What every back end is: one object (lowering/<name>/__init__.py) with its
name, its route below the explicit level, its capabilities, its command-line
options, whether it is available here, and `compile`.

`compile` is the same for every back end up to the build: a module (text
or an `ir.Module` of the caller's Context), cached per arguments, parsed
and verified in a Context of its own (the tensor form bufferized, an SPMD
entry expanded, execution/signature.py), then `build`, which the back end
writes: lower (lowering/driver.py) and make a program with `run` and `time`.
"""
import inspect
import math
import time as _time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from mlir import ir

from ..core import routes
from ..core.pipeline import split_top
from ..execution.measure import MAX_TIMEOUT
from ..execution.program import read
from ..ir import STRATEGIES, make_context


@dataclass(frozen=True)
class Option:
    """A back end's own command-line option (coll-run, coll-build):
    `--flag` sets compile's keyword `dest`."""
    flag: str
    dest: str
    type: type = str
    default: object = None
    help: str = ""
    choices: tuple[str, ...] | None = None
    const: object = None  # a flag without a value: --flag sets `dest` to const


class Runnable(Protocol):
    """What every back end's `build` makes (lowering/*/runtime.py); `compile`
    sets the last four."""
    def run(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> None: ...
    def time(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], repeat: int = ...) -> list[float]: ...
    strategies: list[str]
    traffic_bytes: int | None
    written: Any
    pipeline: str
    compile_seconds: float | None
    _ctx: ir.Context


class Backend:
    name: str = ""
    aliases: tuple[str, ...] = ()  # other names coll-run accepts (the GPU's `cuda`)
    capabilities: frozenset[str] = frozenset()  # what its strategies may need (ir/ops.py PEER_ACCESS, SHARED_MEMORY)
    profile: str | None = None  # the cost-model profile `auto` chooses by (None: the default rule)
    per_rank = False      # one process per rank: an SPMD function with local work stays SPMD
    keep_local_work = False  # execution/program.py read keeps an SPMD entry with local work (the per-rank route)
    options: tuple[Option, ...] = ()  # its Options
    # build(program, strategy, threshold, **its options): the runnable program
    # of `program` (read, in the current Context): lowers it
    # (lowering/driver.py) and compiles what it runs. Each back end's own
    # keyword options, which compile checks against its signature.
    build: Callable[..., Runnable]

    def __init__(self) -> None:
        self._cache: dict[tuple, Runnable] = {}

    def route(self, module_op: ir.Operation | ir.Module | None = None, **options: Any) -> list[str]:
        """The pipeline elements from the explicit level to what it runs
        (`module_op`: the module at the explicit level, for routes that
        depend on what it holds)."""
        raise NotImplementedError

    def available(self) -> tuple[bool, str]:
        """(True, '') when programs can be compiled and run here, else (False, why)."""
        raise NotImplementedError

    def compile(self, module: str | ir.Module, entry: str | None = None, strategy: str = "auto",
                threshold: int | None = None, **options: Any) -> Runnable:
        """Compiles `module` (collective, explicit or lower level; text or an
        ir.Module) for this back end, lowering what is not lowered yet;
        cached per arguments. The program has `run(inputs, outputs)`,
        `time(inputs, outputs, repeat)`, `strategies`, `traffic_bytes`,
        `pipeline` (the route it ran) and `compile_seconds`. Raises
        ir.MLIRError (parse), VerifyError or PassError (lowering; both
        carry locations) or ValueError."""
        self._check_arguments(module, entry, strategy, threshold, options)
        # (get_asm gives a str unless binary=True; the stubs say object)
        text = module if isinstance(module, str) else str(module.operation.get_asm(enable_debug_info=True))
        key = (text, entry, strategy, threshold, tuple(sorted(options.items())))
        if key in self._cache:
            return self._cache[key]
        t0 = _time.perf_counter()
        ctx = make_context()
        with ctx:
            program = read(text, entry, keep_local_work=self.keep_local_work)
            prog = self.build(program, strategy, threshold, **options)
        if not hasattr(prog, "written"):  # (a back end that runs one rank's function maps it to the global view)
            prog.written = program.written
        if program.front and getattr(prog, "pipeline", None):  # the whole route: it replays in coll-opt
            prog.pipeline = routes.pipeline(program.front, split_top(prog.pipeline[len("builtin.module("):-1]))
        prog.compile_seconds = _time.perf_counter() - t0
        prog._ctx = ctx  # keep the context alive as long as the program
        self._cache[key] = prog
        return prog

    def _check_arguments(self, module: object, entry: object, strategy: object, threshold: object,
                         options: dict[str, Any]) -> None:
        """compile's arguments, checked before anything is parsed: a
        ValueError that names the argument, never an AttributeError deep
        inside (found by an outside attack)."""
        if not isinstance(module, str) and not hasattr(getattr(module, "operation", None), "get_asm"):
            raise ValueError(f"module must be MLIR text or an ir.Module, got {type(module).__name__}")
        if entry is not None and not isinstance(entry, str):
            raise ValueError(f"entry must be a function name (str) or None, got {type(entry).__name__} {entry!r}")
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy '{strategy}'; expected one of: {', '.join(STRATEGIES)}")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int)
                                      or threshold < 0):
            raise ValueError(f"threshold must be None or an integer >= 0, got {threshold!r}")
        params = inspect.signature(self.build).parameters
        known = [k for k in params if k not in ("program", "strategy", "threshold")]
        unknown = sorted(set(options) - set(known))
        if unknown and not any(p.kind == p.VAR_KEYWORD for p in params.values()):
            raise ValueError(f"{self.name}.compile has no option '{unknown[0]}'; expected one of: {', '.join(known)}")
        for o in self.options:  # the documented values of each of its own options
            v = options.get(o.dest)
            if v is None or not o.choices or v in o.choices:
                continue
            switch = set(o.choices) == {"on", "off"}  # on/off: True/False too
            if not (switch and isinstance(v, bool)):
                raise ValueError(f"{o.dest} must be one of: {', '.join(map(repr, o.choices))}"
                                 f"{' (or True/False)' if switch else ''}, got {v!r}")
        timeout = options.get("timeout")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or math.isnan(timeout) or not 0 < timeout <= MAX_TIMEOUT):
            raise ValueError(f"timeout must be seconds, > 0 and at most a week ({MAX_TIMEOUT}), got {timeout!r}")

    def clear_cache(self) -> None:
        """Drops the compiled programs (and what they hold)."""
        for prog in self._cache.values():
            close = getattr(prog, "close", None)
            if close is not None:
                close()
        self._cache.clear()
