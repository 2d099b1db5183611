"""The CPU back end: N simulated devices are N host buffers; copies become
memref copies, combines vector loops (coll-to-cpu), and the upstream
ExecutionEngine runs the result. Devices share one address space, so
strategies that need peer access run here.

    from coll.backends import cpu
    prog = cpu.compile(text)          # any level: collective, explicit, memref
    prog.run(inputs, outputs)         # numpy arrays; outputs written in place
    prog.time(inputs, outputs, 10)    # seconds per run
"""
from ...core.routes import options_text
from ...ir.ops import PEER_ACCESS, SHARED_MEMORY
from ..base import Backend

# Upstream passes from memref/scf/vector/arith/func, and what frontends put
# around a collective (linalg on memrefs, affine, math), to the LLVM dialect.
# arith-expand{include-bf16} turns bf16 conversions into integer arithmetic so
# that no compiler-rt helper (__truncsfbf2) is needed at JIT time;
# expand-strided-metadata emits affine.apply, hence lower-affine after it.
CPU_TO_LLVM = (
    "canonicalize",
    "cse",
    "convert-linalg-to-loops",
    "arith-expand{include-bf16=true}",
    "convert-vector-to-scf",
    "lower-affine",
    "convert-scf-to-cf",
    "expand-strided-metadata",
    "lower-affine",
    "finalize-memref-to-llvm",
    "convert-vector-to-llvm",
    "convert-math-to-llvm",
    "convert-math-to-libm",
    "convert-arith-to-llvm",
    "convert-index-to-llvm",
    "convert-func-to-llvm",
    "convert-cf-to-llvm",
    "reconcile-unrealized-casts",
)




def route(tile=None, shuffle_seed=None, scratch=None, nontemporal=None):
    """Explicit level -> LLVM dialect for CPU-simulated devices (with
    `shuffle_seed`, the explicit program first put in another valid order
    of its token graph: coll-shuffle; `scratch`: static, the default, or
    heap; `nontemporal`: bytes from which results are streamed; coll-to-cpu's
    options)."""
    elems = [] if shuffle_seed is None else [f"coll-shuffle{options_text(seed=shuffle_seed)}"]
    return elems + [f"coll-to-cpu{options_text(tile=tile, scratch=scratch, nontemporal=nontemporal)}",
                    "coll-ieee-minmax"] + list(CPU_TO_LLVM)


class Cpu(Backend):
    name = "cpu"
    capabilities = frozenset({PEER_ACCESS, SHARED_MEMORY})
    # The cost-model profile `auto` chooses by (analysis/profiles/cpu.json,
    # measured by bench/calibrate_cpu.py), among every strategy it runs.
    profile = "cpu"

    def route(self, module_op=None, tile=None, shuffle_seed=None, scratch=None, nontemporal=None, **_):
        return route(tile, shuffle_seed, scratch, nontemporal)

    def available(self):
        from .runtime import available
        return available()

    def build(self, module, name, specs, n_inputs, strategy, threshold, tile=-1, shuffle_seed=None,
              check_order=True, scratch=None, nontemporal=None, profile=None):
        """`tile` (-1: coll-to-cpu's default), `shuffle_seed` (another valid
        order: chaos testing of the ordering), `check_order=False`: an
        explicit-level input runs unchecked (for tests of racy programs);
        `scratch` (static: allocated once per program, heap: at every call),
        `nontemporal` (bytes from which results are streamed; None: this
        machine's last-level cache, 0: never), `profile` (None: `profile`,
        "": the reference rule) are coll-to-cpu's and auto's."""
        from .runtime import build
        return build(self, module, name, specs, n_inputs, strategy, threshold, tile, shuffle_seed, check_order,
                     scratch, nontemporal, profile)


BACKEND = Cpu()
compile = BACKEND.compile
clear_cache = BACKEND.clear_cache


def __getattr__(name):
    """The runtime's API (runtime.py: programs, available, ...), loaded on
    first use so that importing the back end's passes stays cheap."""
    if name == "runtime" or name.startswith("__"):
        raise AttributeError(name)  # (the submodule itself: the import system asks first)
    from . import runtime
    return getattr(runtime, name)
