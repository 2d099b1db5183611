"""The op layer: every coll op read in one place, and the registry of ops.

`Combine.of(op).rhs`, not operand-segment arithmetic at the call site. Each
op class is a registered `ir.OpView`, so `op.opview` (and iterating a block)
gives it. The explicit-level ops are defined here; each collective is a
class of its own file in coll/collectives/, which registers it
(`register_op`, `register_collectives`): OPS, COLLECTIVE_OPS, COLLECTIVE_NAMES
and STRATEGIES are filled in place when `coll` is imported (coll/__init__.py
loads the collectives first), so a module that imported them early still
sees every op.
"""
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

from mlir import ir
from mlir._mlir_libs import _mlir as _cext

from .peers import home_device
from .types import device_of, memo_table

VARIADIC = -1

# A frontend's SPMD local work, cloned once per rank (frontends/spmd.py),
# carries its rank's device here (the collectives carry theirs in
# `devices`): what a back end that places work reads.
DEVICE_ATTR = "coll.device"
# A buffer rebuilt from slot k of its function's table of buffer pointers
# (lowering/cpu/split.py: a part of a long function loads the buffers it
# uses): one slot per buffer, so distinct slots are distinct buffers, as
# distinct arguments are.
SLOT_ATTR = "coll.slot"

# What a back end offers that a strategy may need (a strategy names its
# needs, a back end its capabilities; coll-choose-strategy and the tools
# compare the two).
PEER_ACCESS = "peer_access"      # a device reads and writes another's buffers in place
SHARED_MEMORY = "shared_memory"  # every device is in one address space
CAPABILITIES = (PEER_ACCESS, SHARED_MEMORY)

# Where a collective's buffers live (Placement.inputs, Placement.outputs).
EACH = "each"                  # one buffer per device of the group, in `devices` order
ROOT = "root"                  # one buffer, on the `root` device (in the group or not)
EACH_OR_TO_DEVICE = "each_or_to_device"  # EACH, or one buffer on `to_device` where the op names it

# The contract of a reducing collective's `order` attribute (absent:
# CANONICAL): every element is one fixed association of the device
# contributions, ((x_0 (+) x_1) (+) x_2) ..., whatever the strategy, size, N
# or back end; ANY lets a strategy associate as it runs fastest.
CANONICAL, ANY_ORDER = "canonical", "any"
ORDERS = (CANONICAL, ANY_ORDER)


@dataclass(frozen=True)
class Placement:
    """Where a collective's inputs and outputs live, and how an output's
    shape follows from an input's. Buffer counts, the devices of each
    buffer, the SPMD view (frontends/spmd.py), the in-place form, coll-gen,
    coll-perf's sizing and the tests' variants derive from it: no code
    outside collectives/ asks which collective it holds
    (tests/unit/test_layers.py)."""
    inputs: str = EACH
    outputs: str = EACH
    scatters: str | None = None  # the axis attribute along which each output holds 1/N of an input
    gathers: str | None = None   # the axis attribute along which each output holds N inputs

    @property
    def axes(self) -> tuple[str, ...]:
        """Its axis attributes, in the order claims record them."""
        return tuple(a for a in (self.scatters, self.gathers) if a)

    @property
    def rooted(self) -> bool:
        """Whether it has a `root` attribute."""
        return ROOT in (self.inputs, self.outputs)

    def devices(self, side: str, devices: list[int], root: int | None = None,
                to_device: int | None = None) -> list:
        """The devices of its `side` ("inputs" or "outputs") buffers, in order."""
        where = self.inputs if side == "inputs" else self.outputs
        if where == ROOT:
            return [root]
        if where == EACH_OR_TO_DEVICE and to_device is not None:
            return [to_device]
        return list(devices)

    def count(self, side: str, n: int, to_device: int | None = None) -> int:
        """How many `side` buffers it has over a group of n devices."""
        return len(self.devices(side, list(range(n)), 0, to_device))

    def single(self, side: str, root: int | None, to_device: int | None) -> int | None:
        """The one device that holds its `side` buffer, or None (one per device)."""
        where = self.inputs if side == "inputs" else self.outputs
        return root if where == ROOT else to_device if where == EACH_OR_TO_DEVICE else None

    def result_shape(self, shape: Sequence[int], n: int, axes: dict[str, int]) -> list[int]:
        """Each output's shape for inputs of `shape` over n devices."""
        out = list(shape)
        if self.scatters:
            out[axes[self.scatters]] //= n
        if self.gathers:
            out[axes[self.gathers]] *= n
        return out


class _Dialect(ir.Dialect):
    DIALECT_NAMESPACE = "coll"


try:
    _cext.register_dialect(_Dialect)
except RuntimeError:  # this module imported a second time (under another name)
    pass


# The registry (filled in place by register_op and register_collectives).
OPS: dict[str, type["OpView"]] = {}              # op name -> its class
COLLECTIVE_OPS: list[type["CollectiveOp"]] = []  # the collective classes (register_collectives)
COLLECTIVE_NAMES: list[str] = []                 # their op names
ASYNC_OPS: list[str] = []                        # ops that return a token that completes later
STRATEGIES: list[str] = ["auto"]  # every collective's strategy names (auto: coll-choose-strategy decides)


_View = TypeVar("_View", bound="OpView")
_Attr = TypeVar("_Attr", bound=ir.Attribute)


def register_op(cls: type[_View]) -> type[_View]:
    """Class decorator: `cls` becomes the OpView of ops named cls.NAME."""
    _cext.register_operation(_Dialect, replace=True)(cls)
    OPS[cls.NAME] = cls
    if cls.ASYNC and cls.NAME not in ASYNC_OPS:
        ASYNC_OPS.append(cls.NAME)
    return cls


def register_collectives(classes: Sequence[type["CollectiveOp"]]) -> None:
    """The collectives, in the order every listing shows them (the one list
    is coll/collectives/__init__.py)."""
    COLLECTIVE_OPS[:] = classes
    COLLECTIVE_NAMES[:] = [cls.NAME for cls in classes]
    STRATEGIES[:] = ["auto"] + list(dict.fromkeys(s for cls in classes for s in cls.STRATEGIES))
    ASYNC_OPS[:] = COLLECTIVE_NAMES + [name for name in ASYNC_OPS if name not in COLLECTIVE_NAMES]


def _attr(op: ir.Operation | ir.OpView, name: str, cls: type[_Attr]) -> _Attr | None:
    """attrs[name] as `cls`, or None when absent or of another kind (a
    dense array of f8 elements even raises TypeError in the bindings)."""
    try:
        a = op.attributes[name]
    except (KeyError, TypeError, ValueError):
        return None
    try:
        return cls(a)
    except (TypeError, ValueError):
        return None


def attr_str(op: ir.Operation | ir.OpView, name: str) -> str | None:
    a = _attr(op, name, ir.StringAttr)
    return a.value if a is not None else None


def attr_int(op: ir.Operation | ir.OpView, name: str) -> int | None:
    a = _attr(op, name, ir.IntegerAttr)
    return a.value if a is not None else None


def attr_ints(op: ir.Operation | ir.OpView, name: str) -> list[int] | None:
    a = _attr(op, name, ir.DenseI64ArrayAttr)
    return list(a) if a is not None else None


_SEGMENTS: dict[ir.Attribute, tuple[int, ...]] = memo_table({})  # operandSegmentSizes attribute -> its sizes


def _segment_sizes(attr: ir.Attribute) -> list[int]:
    """list(DenseI32ArrayAttr(attr)), memoized by the (uniqued) attribute:
    iterating a dense array in the bindings costs 4 us an element, and a
    lowered program has a handful of distinct segment sizes on many ops."""
    try:
        return list(_SEGMENTS[attr])
    except KeyError:
        pass
    if len(_SEGMENTS) > 4096:  # entries keep their Context alive
        _SEGMENTS.clear()
    sizes = _SEGMENTS[attr] = tuple(ir.DenseI32ArrayAttr(attr))
    return list(sizes)


class OpView(ir.OpView):
    """Base: `GROUPS` names the operand groups in order, each 1 or VARIADIC;
    with several variadic groups the sizes come from operandSegmentSizes.
    The groups are read on first use (the bindings make these views without
    calling __init__ when they wrap an op)."""
    OPERATION_NAME: ClassVar[str | None] = None
    _ODS_REGIONS = (0, True)
    NAME: ClassVar[str] = ""
    GROUPS: ClassVar[tuple[tuple[str, int], ...]] = ()  # (name, 1 or VARIADIC)
    READS: ClassVar[tuple[str, ...]] = ()   # the groups whose buffers the op reads
    WRITES: ClassVar[tuple[str, ...]] = ()  # and writes
    ASYNC: ClassVar[bool] = True  # returns a token that completes later
    # Its IRDL definition (collectives/irdl.py generates ir/coll.irdl.mlir):
    # the base of each operand group (default: memref; `deps`/`tokens`:
    # token), its results [(name, base, variadic)], its required attributes
    # {name: base} (bases: collectives/irdl.py BASES, and "kind").
    IRDL_TYPES: ClassVar[dict[str, str]] = {}
    IRDL_RESULTS: ClassVar[tuple[tuple[str, str, bool], ...]] = (("token", "token", False),)
    IRDL_ATTRS: ClassVar[dict[str, str]] = {}

    def __init__(self, op: ir.Operation | ir.OpView) -> None:
        super().__init__(op.operation)

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.NAME:
            cls.OPERATION_NAME = cls.NAME

    def __getattr__(self, name: str) -> Any:  # an operand group: list[ir.Value]
        # Only for names not found otherwise: the operand groups.
        if name.startswith("__") or name not in self._group_names():
            raise AttributeError(name)
        self._read_groups()
        return self.__dict__[name]

    @classmethod
    def _group_names(cls) -> set[str]:
        return {g for g, _ in cls.GROUPS} | {"_roles"}

    def _read_groups(self) -> None:
        operands = list(self.operation.operands)
        sizes = [g[1] for g in self.GROUPS]
        if sizes.count(VARIADIC) > 1:
            sizes = _segment_sizes(self.operation.attributes["operandSegmentSizes"])
        elif VARIADIC in sizes:
            sizes[sizes.index(VARIADIC)] = len(operands) - (sum(sizes) + 1)
        start, roles = 0, list[str]()
        for (name, _), size in zip(self.GROUPS, sizes):
            self.__dict__[name] = operands[start:start + size]
            roles += [name] * size
            start += size
        self.__dict__["_roles"] = roles

    @classmethod
    def of(cls, op: ir.Operation | ir.OpView) -> Self:
        """The view of `op`, which must be a `cls.NAME` op."""
        return op if type(op) is cls else cls(op)

    @property
    def op(self) -> ir.Operation:
        return self.operation

    def role(self, index: int) -> str:
        """The group that operand `index` belongs to."""
        return self._roles[index]

    @property
    def reads(self) -> list[ir.Value]:
        return [v for g in self.READS for v in getattr(self, g)]

    @property
    def writes(self) -> list[ir.Value]:
        return [v for g in self.WRITES for v in getattr(self, g)]

    @property
    def groups(self) -> list[list[ir.Value]]:
        """The operand groups, in order, as lists (to rebuild the op)."""
        return [getattr(self, name) for name, _ in self.GROUPS]

    @property
    def segmented(self) -> bool:
        """Whether the op carries operandSegmentSizes (several variadic groups)."""
        return [g[1] for g in self.GROUPS].count(VARIADIC) > 1

    @property
    def token(self) -> ir.Value | None:
        results = self.operation.results
        return results[0] if len(results) else None


def segment_sizes(*groups: Sequence[object]) -> ir.DenseI32ArrayAttr:
    """The operandSegmentSizes attribute of an op built from `groups`."""
    return ir.DenseI32ArrayAttr.get([len(g) for g in groups])


class CollectiveOp(OpView):
    """%t = coll.<collective>(inputs..., outputs..., deps...): inputs and
    outputs on the devices its PLACEMENT says, in order; it starts after the
    `deps` tokens. Tensor form: %t, %values... = coll.<collective>(inputs...,
    deps...) (see `is_tensor`).

    What the IR needs of a collective: the class facts below, which the
    verifier, the IRDL generator and ir/generate.py read, and the hooks
    `check_attributes`, `default_arrays`, `zero_outputs`. What a collective
    computes and how it lowers (strategies, spec, numpy reference, frontends'
    names, coll-gen's options, test samples) is collectives/base.py
    `Collective`, the class every collective's file subclasses."""
    GROUPS = (("inputs", VARIADIC), ("outputs", VARIADIC), ("deps", VARIADIC))
    READS, WRITES = ("inputs",), ("outputs",)
    HAS_KIND: ClassVar[bool] = True    # it reduces (a `kind` attribute)
    IN_PLACE: ClassVar[bool] = False   # an output may be an input
    PLACEMENT: ClassVar[Placement] = Placement()  # where its buffers live (ROOTED, AXES, ... derive from it)
    REPLICATED: ClassVar[bool] = False  # its outputs are replicas of one result (bit-identical)
    ATTRS: ClassVar[dict[str, str]] = {}  # optional attributes beyond strategy: name -> what it means (IRDL doc)
    # Integer-array attributes that are part of what it computes (e.g. a
    # permute's `pairs`): name -> what it means. The claim, coll-gen, the
    # numpy reference, the cost model's candidates and generated modules
    # carry them (see `arrays`, `default_arrays`).
    ARRAYS: ClassVar[dict[str, str]] = {}
    # Its strategy names, in the order they were declared (the values its
    # `strategy` attribute may take besides auto; collectives/base.py fills it).
    STRATEGIES: ClassVar[tuple[str, ...]] = ()
    # Derived from PLACEMENT (__init_subclass__):
    ROOTED: ClassVar[bool] = False               # a `root` device attribute
    AXES: ClassVar[tuple[str, ...]] = ()         # its integer axis attributes
    DIVIDED_AXES: ClassVar[tuple[str, ...]] = ()  # the axes whose size the group must divide
    PER_DEVICE: ClassVar[str] = "inputs"         # the group with one buffer per device

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        p = cls.PLACEMENT
        cls.ROOTED = p.rooted
        cls.AXES = p.axes
        cls.DIVIDED_AXES = (p.scatters,) if p.scatters else ()
        cls.PER_DEVICE = "outputs" if p.inputs == ROOT else "inputs"
        # Every reducing collective, and only those, follows the order contract.
        cls.ATTRS = {k: v for k, v in cls.ATTRS.items() if k != "order"}
        if cls.HAS_KIND:
            cls.ATTRS["order"] = (f"{' or '.join(ORDERS)}: how the contributions associate (canonical, "
                                  "the default: in device order, the same bits for every strategy)")

    @classmethod
    def short_name(cls) -> str:
        """'all_reduce' for coll.all_reduce (what claims and coll-gen name)."""
        return cls.NAME[len("coll."):]

    @classmethod
    def result_shape(cls, shape: Sequence[int], n: int, axes: Sequence[int]) -> list[int]:
        """The shape of each output for inputs of `shape` over n devices
        (axes in AXES order, checked by the verifier)."""
        return cls.PLACEMENT.result_shape(shape, n, dict(zip(cls.AXES, axes)))

    def check_attributes(self, n: int) -> str | None:
        """What is wrong with its own attributes over a group of n devices
        (a message for the verifier), or None. Axes, root and strategy are
        the verifier's; a collective with other attributes checks them here."""
        return None

    @property
    def arrays(self) -> dict[str, list[int] | None]:
        """{name: list of ints or None} of its ARRAYS attributes."""
        return {a: attr_ints(self.operation, a) for a in self.ARRAYS}

    @classmethod
    def default_arrays(cls, n: int) -> dict[str, list[int]]:
        """{name: list} of the ARRAYS attributes a generated module has by
        default over n devices."""
        return {}

    def zero_outputs(self, spmd: bool = False) -> list[int]:
        """The outputs its tensor form defines as zeros, which its memref
        form leaves as they were (coll-bufferize fills them before it);
        `spmd`: in an SPMD function (one output, this rank's)."""
        return []

    @classmethod
    def buffers(cls, n: int, to_device: int | None = None) -> tuple[int, int]:
        """(inputs, outputs) over a group of n devices."""
        return cls.PLACEMENT.count("inputs", n, to_device), cls.PLACEMENT.count("outputs", n, to_device)

    def expected_buffers(self, n: int) -> tuple[int, int]:
        return self.buffers(n, attr_int(self.operation, "to_device"))

    @classmethod
    def placement(cls, devices: list[int], root: int | None = None,
                  to_device: int | None = None) -> tuple[list, list]:
        """(the devices of its inputs, of its outputs), in order."""
        p = cls.PLACEMENT
        return p.devices("inputs", devices, root, to_device), p.devices("outputs", devices, root, to_device)

    def outputs_noun(self) -> str:
        """What its outputs are called in a verifier message."""
        return self.short_name()

    kind = property(lambda self: attr_str(self.operation, "kind"))
    devices = property(lambda self: attr_ints(self.operation, "devices"))
    strategy = property(lambda self: attr_str(self.operation, "strategy"))
    threshold = property(lambda self: attr_int(self.operation, "threshold"))
    root = property(lambda self: attr_int(self.operation, "root"))
    to_device = property(lambda self: attr_int(self.operation, "to_device"))

    @property
    def order(self) -> str:
        """Its reduction order contract (ORDERS; CANONICAL when absent)."""
        return attr_str(self.operation, "order") or CANONICAL

    def axis(self, name: str) -> int | None:
        return attr_int(self.operation, name)

    @property
    def axes(self) -> list[int | None]:
        """Its axis attributes, in AXES order (what a claim records)."""
        return [self.axis(a) for a in self.AXES]

    @property
    def is_tensor(self) -> bool:
        """Tensor form (value semantics): tensor inputs, no `outputs`
        operands, the results after the token are the outputs."""
        return len(self.operation.results) > 1 or any(isinstance(v.type, ir.RankedTensorType) for v in self.inputs)

    @property
    def values(self) -> list[ir.Value]:
        """The tensor results (tensor form), one per output; [] otherwise."""
        return list(self.operation.results)[1:]

    def _placement(self) -> tuple[list, list]:
        return self.placement(self.devices, self.root, self.to_device)

    @property
    def input_devices(self) -> list:
        return self._placement()[0]

    @property
    def output_devices(self) -> list:
        return self._placement()[1]


@register_op
class Alloc(OpView):
    """Explicit level: a scratch buffer on the device its memory space names."""
    NAME = "coll.alloc"
    GROUPS = ()
    ASYNC = False
    IRDL_RESULTS = (("buffer", "memref", False),)

    buffer = property(lambda self: self.operation.results[0])
    device = property(lambda self: device_of(self.operation.results[0].type))


@register_op
class Copy(OpView):
    """Explicit level: %t = coll.copy(source, target, deps...) copies source
    into target (either may be a subview, on any devices) after `deps`."""
    NAME = "coll.copy"
    GROUPS = (("sources", 1), ("targets", 1), ("deps", VARIADIC))
    READS, WRITES = ("sources",), ("targets",)

    source = property(lambda self: self.sources[0])
    target = property(lambda self: self.targets[0])


@register_op
class Combine(OpView):
    """Explicit level: %t = coll.combine(lhs, rhs..., output, deps...):
    output = lhs (+) rhs[0] (+) ... elementwise, one kernel on one device,
    after `deps`. The output may alias an input. The lhs and the output
    may hold the accumulator type of the rhs's element type (f32 for f16,
    bf16 and fp8): a partial result carried between devices, rounded once."""
    NAME = "coll.combine"
    GROUPS = (("lhs_", 1), ("rhs", VARIADIC), ("outs", 1), ("deps", VARIADIC))
    READS, WRITES = ("lhs_", "rhs"), ("outs",)
    IRDL_ATTRS = {"kind": "kind"}

    lhs = property(lambda self: self.lhs_[0])
    out = property(lambda self: self.outs[0])
    kind = property(lambda self: attr_str(self.operation, "kind"))
    inputs = property(lambda self: self.lhs_ + self.rhs)
    device = property(lambda self: device_of(self.outs[0].type))

    @property
    def peers(self) -> list[tuple[ir.Value, int | None]]:
        """[(input, home device)] of the inputs held by another device (read
        in place through peer views, ir/peers.py)."""
        dev = self.device
        return [(v, h) for v in self.inputs for h in [home_device(v)] if h != dev]


@register_op
class Join(OpView):
    """Explicit level: a token that completes when all `deps` have."""
    NAME = "coll.join"
    GROUPS = (("deps", VARIADIC),)


@register_op
class Wait(OpView):
    """Blocks the host until all `deps` have completed."""
    NAME = "coll.wait"
    GROUPS = (("deps", VARIADIC),)
    ASYNC = False
    IRDL_RESULTS = ()

    @property
    def token(self) -> None:
        return None


@register_op
class Implements(OpView):
    """Explicit level: coll.implements(inputs..., outputs..., token), the
    claim that the program ending in `token` computes the collective named
    by `op` ("all_reduce", ...) from inputs into outputs, with the
    collective's other attributes (kind, devices, to_device, root, axes).
    `order = "canonical"` claims the association too: every element of a
    sum or prod on floats is ((x_0 (+) x_1) (+) x_2) ... in device order,
    its f16/bf16 partials held in f32 and rounded once, at the end (the
    lowering of a float sum or prod under the default order sets it;
    absent or "any": only which inputs each element combines is claimed).
    Its buffers carry no placement (a program on placed buffers names them
    through memref.memory_space_cast). coll-check-semantics proves it; the
    back ends erase it."""
    NAME = "coll.implements"
    GROUPS = (("inputs", VARIADIC), ("outputs", VARIADIC), ("tokens", 1))
    ASYNC = False
    IRDL_RESULTS = ()
    IRDL_ATTRS = {"op": "string"}

    collective = property(lambda self: attr_str(self.operation, "op"))
    kind = property(lambda self: attr_str(self.operation, "kind"))
    devices = property(lambda self: attr_ints(self.operation, "devices"))
    to_device = property(lambda self: attr_int(self.operation, "to_device"))
    root = property(lambda self: attr_int(self.operation, "root"))
    axes = property(lambda self: attr_ints(self.operation, "axes"))
    # CANONICAL where the program claims the canonical order too (the
    # lowering of a collective whose order is canonical sets it); None or
    # ANY_ORDER: only which inputs each element combines is claimed.
    order = property(lambda self: attr_str(self.operation, "order"))
    token = property(lambda self: None)  # it returns none
    final = property(lambda self: self.tokens[0])
    # Set by the lowering on the claim of a collective it lowered: a claim
    # of that op where it stands (local work may surround it), not of the
    # whole function (coll-check-semantics: what a hand-written claim on the
    # function's arguments is).
    LOWERED = "lowered"
    lowered = property(lambda self: Implements.LOWERED in self.operation.attributes)


# Explicit-level ops that move or combine data.
DATA_OPS = (Copy.NAME, Combine.NAME)


def view(op: ir.Operation | ir.OpView) -> OpView | None:
    """The op-layer view of any coll op, or None for another op."""
    op = getattr(op, "operation", op)
    if not isinstance(op, ir.Operation):
        raise TypeError(f"view takes an operation (ir.Operation or an OpView), got {type(op).__name__}")
    cls = OPS.get(op.name)
    return cls(op) if cls is not None else None


if not TYPE_CHECKING:  # mypy keeps reporting a misspelt name of this module
    def __getattr__(name: str) -> type:
        """The collective op classes were here (`coll.ir.ops.AllReduce`);
        they live in coll.collectives now, one file each, and register
        themselves (COLLECTIVE_OPS): the old name still answers, with a
        FutureWarning that says where the class went. Found among the
        registered classes and their bases (Collective), so ir/ imports
        nothing above it."""
        for cls in COLLECTIVE_OPS:
            for found in cls.__mro__:
                if found.__name__ == name and found.__module__.startswith("coll.collectives"):
                    where = f"{found.__module__}.{found.__qualname__}"
                    by_name = " (or coll.collectives.BY_NAME by op name)" if found is cls else ""
                    warnings.warn(f"coll.ir.ops.{name} moved to {where}; import that instead{by_name}",
                                  FutureWarning, stacklevel=2)
                    return found
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
