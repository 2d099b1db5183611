"""A program as it goes down the route, and what was learnt about it.

`read` makes one when a module is read (parsed, verified, bufferized, an
SPMD entry expanded: what a runtime calls), with the facts every layer
below asks: its entry and argument specs, how many arguments are inputs,
which it writes, its form (a global view, or an SPMD function kept per
rank), and the pipeline elements reading it ran. lowering/driver.py
`lower` adds what lowering learns (strategies, traffic, scratch, the
route) and reads the module's ops through `index`: one walk per state of
the module, shared by every question asked of that state (`run` drops it).
docs/architecture.md follows a program down the route of `coll-run
--backend=mpi`."""
from dataclasses import dataclass, field
from types import ModuleType

from mlir import ir

from ..core import routes
from ..core.pipeline import run as run_pipeline
from ..frontends import tensor
from ..frontends.spmd import has_local_work, is_spmd, ranks_of
from ..ir.verifier import verify_or_raise
from ..ir.walk import OpIndex
from .signature import ArgSpec, _inputs_of, find_entry, read_signature, to_buffers, written_arguments


@dataclass
class Program:
    operation: ir.Operation         # the module's operation: what the passes run on
    module: ir.Module | None = None  # the ir.Module, where read() parsed it: what the runtimes compile
    entry: str = ""                 # the entry function's name ("": not read from text)
    specs: list[ArgSpec] = field(default_factory=list)  # its arguments
    n_inputs: int | None = None     # how many leading arguments are inputs
    written: tuple[int, ...] = ()   # the arguments the entry writes (read before lowering)
    ranks: int | None = None        # its group size when the entry stays per rank (SPMD or projected)
    front: list[str] = field(default_factory=list)  # what reading it ran (bufferize, global view, interface)
    # What lowering learnt (lowering/driver.py):
    strategies: list[str] = field(default_factory=list)
    traffic: int | None = None      # bytes the explicit program moves (None: it came in below)
    scratch: int = 0                # bytes of its coll.alloc buffers
    pipeline: str = ""              # the whole route it went down, as pass pipeline text
    _index: OpIndex | None = field(default=None, repr=False)
    _detected: dict[str, bool] = field(default_factory=dict, repr=False)  # frontend name -> its detect(), this state

    @classmethod
    def of(cls, target: "Program | ir.Module | ir.Operation | ir.OpView") -> "Program":
        """`target` if it is a Program, else one around the module operation
        the caller parsed (nothing read from it yet)."""
        if isinstance(target, Program):
            return target
        return cls(target.operation, target if isinstance(target, ir.Module) else None)

    @property
    def parsed(self) -> ir.Module:
        """The ir.Module read() parsed (a Program made by `of` around an
        operation has none)."""
        assert self.module is not None, "this Program holds an operation, not a parsed ir.Module"
        return self.module

    @property
    def index(self) -> OpIndex:
        """Every op of the module in its current state, from one walk."""
        if self._index is None:
            self._index = OpIndex(self.operation)
        return self._index

    def detected(self, frontend: ModuleType) -> bool:
        """Whether `frontend` (frontends/) finds its form in the module as it
        is now (asked of each state once)."""
        if frontend.NAME not in self._detected:
            self._detected[frontend.NAME] = frontend.detect(self.operation)
        return self._detected[frontend.NAME]

    def run(self, elements: list[str]) -> None:
        """Runs pipeline `elements` on the module (which changes it)."""
        if elements:
            self.changed()
            run_pipeline(self.operation, routes.pipeline(elements))

    def changed(self) -> None:
        """Forgets what was learnt of the module's previous state."""
        self._index, self._detected = None, {}

    @property
    def entry_op(self) -> ir.OpView:
        return find_entry(self.parsed, self.entry or None)


def read(module_text: str, entry: str | None = None, keep_local_work: bool = False) -> Program:
    """Parses and verifies a module for a runtime (in the current Context).
    A module in the tensor form is bufferized first (the entry's tensor
    results become output arguments); an entry in SPMD form is expanded
    into its global view (`keep_local_work`: not when it has local work
    around its collectives; the mpi route runs that per rank). The entry
    gets the C interface the runtimes call."""
    module = ir.Module.parse(module_text)
    verify_or_raise(module.operation)
    prog = Program(module.operation, module)
    tensor_inputs = to_buffers(module, entry, prog.front, prog.detected(tensor))
    if tensor_inputs is not None:
        prog.changed()
    func = find_entry(module, entry)
    ranks, per_rank = 1, None
    # One rank's buffers: runtimes take the global view's.
    if is_spmd(func) and not (keep_local_work and has_local_work(func)):
        # Each rank's inputs, counted on one rank (a broadcast's global view
        # reads only its root's, yet every rank passes one).
        spmd_ranks = ranks_of(func)
        assert spmd_ranks is not None, "is_spmd: coll.ranks is set"
        ranks = spmd_ranks
        per_rank = _inputs_of(func)
        prog.run(["coll-spmd-to-global"])
        prog.front.append("coll-spmd-to-global")
        func = find_entry(module, entry)
    prog.entry, prog.specs = read_signature(func)
    if tensor_inputs is not None:  # the arguments it had; its results came after
        prog.n_inputs = tensor_inputs * ranks
    elif per_rank is not None:
        prog.n_inputs = ranks * per_rank
    else:
        prog.n_inputs = _inputs_of(func)
    if "llvm.emit_c_interface" not in func.attributes:
        elem = f"coll-entry{routes.options_text(function=prog.entry)}"
        prog.run([elem])
        prog.front.append(elem)
    func = find_entry(module, prog.entry)
    prog.ranks = ranks_of(func)
    prog.written = written_arguments(func)
    return prog
