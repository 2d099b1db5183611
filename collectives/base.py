"""The class every collective's file subclasses: what a collective computes
and how it lowers, above what the IR knows of it (ir/ops.py CollectiveOp:
its buffers, placement and attributes).

A subclass states its strategies (`@Cls.defines`), and the hooks
`reference_rule`, `estimated_ops`, `emit`, `spec` (what coll-check-semantics
proves), `reference` (numpy), `busbw`, `sample` (the tests' instances) and,
for attributes of its own, `parse_array`; its frontends' names (SHARD,
STABLEHLO) and coll-gen's options (GEN) are class facts here, read by the
layers that use them."""
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

import numpy as np

from ..ir.ops import CollectiveOp
from .emit import Emitter, buffer_ops
from .spec import Claim, Spec

# A strategy: emits its program with an emitter (some take more arguments).
Strategy = Callable[..., object]
# The numpy reference of each output: (expected array, the inputs it
# reduces or None), or None for an output it does not define.
Expected = list[tuple[np.ndarray, list[np.ndarray] | None] | None]
# Reduces arrays by the collective's kind (the numpy reference's `fold`).
Fold = Callable[[list[np.ndarray]], np.ndarray]

DEFAULT_THRESHOLD = 256000  # elements above which the default rules pick ring


class Collective(CollectiveOp):
    """A collective (one file in coll/collectives/ each)."""
    # (upstream shard op, {coll attribute: shard attribute}) for coll-from-shard
    SHARD: ClassVar[tuple[str, dict[str, str]] | None] = None
    # (StableHLO op, {coll attribute: its attribute}) for coll-from-stablehlo
    STABLEHLO: ClassVar[tuple[str, dict[str, str]] | None] = None
    GEN: ClassVar[tuple[str, ...]] = ()  # coll-gen options beyond the common ones
    # Its plainest strategy: each device gets what it needs straight from
    # the others and combines in device order; coll-run checks a program
    # with local work against the program by these (execution/check.py
    # plain_program).
    PLAIN: ClassVar[str] = "direct"
    # the Emitter class its strategies are written in (collectives/emit.py)
    EMITTER: ClassVar[type[Emitter] | None] = None
    # Filled by @defines, per class: its strategy names in the order they
    # were declared (the first is the default of the cost model's ties),
    # and name -> (function, needs).
    _STRATEGIES: ClassVar[dict[str, tuple[Strategy, frozenset[str]]]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls.STRATEGIES, cls._STRATEGIES = (), {}

    # -- strategies ------------------------------------------------------------
    @classmethod
    def defines(cls, name: str, needs: Iterable[str] = ()) -> Callable[[Strategy], Strategy]:
        """Decorator: `fn(emitter)` emits strategy `name`; `needs` are the
        capabilities (PEER_ACCESS, ...) a back end must offer to run it."""
        def add(fn: Strategy) -> Strategy:
            cls._STRATEGIES[name] = (fn, frozenset(needs))
            cls.STRATEGIES = tuple(cls._STRATEGIES)
            return fn
        return add

    @classmethod
    def needs(cls, name: str) -> frozenset[str]:
        """The capabilities strategy `name` needs (empty for an unknown name)."""
        entry = cls._STRATEGIES.get(name)
        return entry[1] if entry else frozenset()

    @classmethod
    def runnable(cls, capabilities: Iterable[str]) -> tuple[str, ...]:
        """The strategies whose needs `capabilities` meet, in order."""
        caps = frozenset(capabilities)
        return tuple(s for s, (_, needs) in cls._STRATEGIES.items() if needs <= caps)

    @classmethod
    def lowering(cls, name: str) -> Strategy:
        return cls._STRATEGIES[name][0]

    @classmethod
    def choose(cls, requested: str | None, n: int, numel: int, threshold: int = DEFAULT_THRESHOLD) -> str:
        """An explicit strategy wins; `auto` (or none) is the default rule."""
        if requested and requested != "auto":
            return requested
        return cls.reference_rule(n, numel, threshold)

    @classmethod
    def reference_rule(cls, n: int, numel: int, threshold: int = DEFAULT_THRESHOLD) -> str:
        """The default strategy without a cost model: ring when large (N > 2,
        numel > threshold), else direct (tree at N > 2 where there is one)."""
        names = cls.STRATEGIES
        if n > 2 and numel > threshold and "ring" in names:
            return "ring"
        if n > 2 and "tree" in names:
            return "tree"
        return "direct"

    @staticmethod
    def estimated_ops(strategy: str, n: int, shape: Sequence[int],
                      axes: Sequence[int] = ()) -> tuple[int, str, str]:
        """(an upper bound on the ops its lowering emits, what the limit
        message says of the lowering, the advice it gives). The default, for
        collectives that move whole buffers: at most N^2 copies, a few ops
        each. That holds for a collective that moves blocks along axes too:
        each block is one strided view, whatever its rows (collectives/emit.py
        block_pairs). The advice: what else helps, if anything ("": nothing)."""
        return 4 * n * n + buffer_ops(n), f"({n} devices)", ""

    def emit(self, e: Emitter, strategy: str) -> None:
        """Emits strategy `strategy` with emitter `e` (self.EMITTER(op))."""
        self.lowering(strategy)(e)

    @staticmethod
    def spec(claim: Claim, shape: list[int]) -> Spec:
        """What coll-check-semantics proves of a claim (collectives/spec.py)."""
        raise NotImplementedError

    @staticmethod
    def reference(x: list[np.ndarray], values: list[np.ndarray], fold: Fold,
                  attrs: dict[str, Any], n: int, n_out: int) -> Expected:
        """The numpy reference: [(expected output j, the inputs it reduces
        or None)] from inputs `x` (`values`: as floats; `fold(xs)` reduces
        arrays by the kind), `attrs` (axes, root), n devices, n_out
        outputs; None for an output it does not define."""
        raise NotImplementedError

    @classmethod
    def parse_array(cls, name: str, text: str, n: int) -> list[int]:
        """ARRAYS attribute `name` from coll-gen's option text over n
        devices (ValueError with what is expected)."""
        raise ValueError(f"{cls.short_name()} has no array attribute '{name}'")

    # The sizes `sample` knows: odd element counts (uneven chunks), fewer
    # elements than devices (empty chunks), none, rank 0, several tiles.
    SAMPLE_SIZES: ClassVar[tuple[str, ...]] = ("uneven", "small", "empty", "scalar", "large")

    @classmethod
    def sample(cls, n: int, size: str = "uneven") -> tuple[list[int], dict[str, int]] | None:
        """(shape, attrs) of a test instance over n devices for
        ir/generate.collective_module (the CPU and MPI test grids), or None
        where `size` does not apply. Without axes: a flat shape (rank 2 or 3
        on even n). With axes: 2-D, its axes leading on odd n and trailing on
        even n; a divided axis holds 2 rows a device (1 when small), the
        other axis 3, 1, 0 or 67 (uneven, small, empty, large). The root in
        the middle of the group. A collective whose lowering has other
        corners overrides it."""
        attrs: dict[str, int] = {"root": (n - 1) // 2} if cls.ROOTED else {}
        if not cls.AXES:
            shape = {"uneven": [13] if n % 2 else [3, 7] if n % 4 else [3, 1, 7], "small": [max(n - 1, 1)],
                     "empty": [0] if n % 2 else [0, 3], "scalar": [], "large": [1000]}[size]
            return shape, attrs
        if size == "scalar":
            return None
        lead = n % 2
        axes = {name: (k + 1 - lead) % 2 for k, name in enumerate(cls.AXES)}
        divided = {axes[name] for name in cls.DIVIDED_AXES}
        if len(cls.AXES) == 1:  # collective_module names a lone axis `axis`
            axes = {"axis": axes[cls.AXES[0]]}
        rest = iter({"uneven": [3, 5], "small": [1, 1], "empty": [0, 5], "large": [67, 3]}[size])
        per = 1 if size == "small" else 2
        shape = [per * n if d in divided else next(rest) for d in range(2)]
        attrs.update(axes)
        return shape, attrs

    @classmethod
    def busbw(cls, n: int) -> float:
        """nccl-tests' bus bandwidth factor: busbw = algbw * factor."""
        return (n - 1) / n if n else 0.0

