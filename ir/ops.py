"""The op layer: every coll op read in one place.

`Combine.of(op).rhs`, not operand-segment arithmetic at the call site. A new
collective or op adds a class here (and its IRDL definition); nothing else
parses its operands or attributes.
"""
from mlir import ir

from .peers import home_device
from .types import device_of

VARIADIC = -1


def _attr(op, name, cls):
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


def attr_str(op, name):
    a = _attr(op, name, ir.StringAttr)
    return a.value if a is not None else None


def attr_int(op, name):
    a = _attr(op, name, ir.IntegerAttr)
    return a.value if a is not None else None


def attr_ints(op, name):
    a = _attr(op, name, ir.DenseI64ArrayAttr)
    return list(a) if a is not None else None


_SEGMENTS = {}  # operandSegmentSizes attribute -> its sizes


def _segment_sizes(attr):
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


class OpView:
    """Base: `GROUPS` names the operand groups in order, each 1 or VARIADIC;
    with several variadic groups the sizes come from operandSegmentSizes."""
    NAME = ""
    GROUPS = ()
    READS = ()   # the groups whose buffers the op reads
    WRITES = ()  # and writes

    def __init__(self, op):
        self.op = getattr(op, "operation", op)
        operands = list(self.op.operands)
        sizes = [g[1] for g in self.GROUPS]
        if sizes.count(VARIADIC) > 1:
            sizes = _segment_sizes(self.op.attributes["operandSegmentSizes"])
        elif VARIADIC in sizes:
            sizes[sizes.index(VARIADIC)] = len(operands) - (sum(sizes) + 1)
        start, self._roles = 0, []
        for (name, _), size in zip(self.GROUPS, sizes):
            self.__dict__[name] = operands[start:start + size]
            self._roles += [name] * size
            start += size

    @classmethod
    def of(cls, op):
        """The view of `op`, which must be a `cls.NAME` op."""
        return cls(op)

    def role(self, index):
        """The group that operand `index` belongs to."""
        return self._roles[index]

    @property
    def reads(self):
        return [v for g in self.READS for v in self.__dict__[g]]

    @property
    def writes(self):
        return [v for g in self.WRITES for v in self.__dict__[g]]

    @property
    def groups(self):
        """The operand groups, in order, as lists (to rebuild the op)."""
        return [self.__dict__[name] for name, _ in self.GROUPS]

    @property
    def segmented(self):
        """Whether the op carries operandSegmentSizes (several variadic groups)."""
        return [g[1] for g in self.GROUPS].count(VARIADIC) > 1

    @property
    def location(self):
        return self.op.location

    @property
    def token(self):
        return self.op.results[0] if len(self.op.results) else None


def segment_sizes(*groups):
    """The operandSegmentSizes attribute of an op built from `groups`."""
    return ir.DenseI32ArrayAttr.get([len(g) for g in groups])


class Collective(OpView):
    """%t = coll.<collective>(inputs..., outputs..., deps...): inputs[i] on
    devices[i] (Broadcast: one input on `root`), outputs on their devices;
    it starts after the `deps` tokens. Tensor form: %t, %values... =
    coll.<collective>(inputs..., deps...) (see `is_tensor`)."""
    GROUPS = (("inputs", VARIADIC), ("outputs", VARIADIC), ("deps", VARIADIC))
    READS, WRITES = ("inputs",), ("outputs",)
    STRATEGIES = ()   # the strategies its lowering implements, default first
    PEER_STRATEGIES = ()  # those that need coll.peer_access (ir/peers.py)
    AXES = ()         # its integer axis attributes
    HAS_KIND = True   # it reduces (a `kind` attribute)
    IN_PLACE = False  # an output may be an input

    kind = property(lambda self: attr_str(self.op, "kind"))
    devices = property(lambda self: attr_ints(self.op, "devices"))
    strategy = property(lambda self: attr_str(self.op, "strategy"))
    threshold = property(lambda self: attr_int(self.op, "threshold"))
    root = property(lambda self: attr_int(self.op, "root"))

    def axis(self, name):
        return attr_int(self.op, name)

    @property
    def axes(self):
        """Its axis attributes, in AXES order (what a claim records)."""
        return [self.axis(a) for a in self.AXES]

    @staticmethod
    def result_shape(shape, n, axes):
        """The shape of each output for inputs of `shape` over n devices
        (axes in AXES order, checked by the verifier)."""
        return list(shape)

    @property
    def is_tensor(self):
        """Tensor form (value semantics): tensor inputs, no `outputs`
        operands, the results after the token are the outputs."""
        return len(self.op.results) > 1 or any(isinstance(v.type, ir.RankedTensorType) for v in self.inputs)

    @property
    def values(self):
        """The tensor results (tensor form), one per output; [] otherwise."""
        return list(self.op.results)[1:]

    @property
    def input_devices(self):
        return self.devices

    @property
    def output_devices(self):
        return self.devices


class AllReduce(Collective):
    """Every output (or the one on `to_device`) = (+)_i inputs[i]."""
    NAME = "coll.all_reduce"
    # The strategies the lowering implements (passes/lower_all_reduce.py);
    # the peer ones need coll.peer_access (passes/peer_strategies.py).
    STRATEGIES = ("naive", "ring", "all2all", "rhd", "tree", "oneshot", "twoshot")
    PEER_STRATEGIES = ("oneshot", "twoshot")
    IN_PLACE = True
    to_device = property(lambda self: attr_int(self.op, "to_device"))

    @property
    def output_devices(self):
        return [self.to_device] if self.to_device is not None else self.devices


class ReduceScatter(Collective):
    """outputs[j] = slice j of (+)_i inputs[i] along `scatter_axis`."""
    NAME = "coll.reduce_scatter"
    STRATEGIES = ("ring", "direct")
    AXES = ("scatter_axis",)

    @staticmethod
    def result_shape(shape, n, axes):
        return [d // n if k == axes[0] else d for k, d in enumerate(shape)]


class AllGather(Collective):
    """outputs[j] = the inputs concatenated along `gather_axis`."""
    NAME = "coll.all_gather"
    STRATEGIES = ("ring", "direct")
    AXES = ("gather_axis",)
    HAS_KIND = False

    @staticmethod
    def result_shape(shape, n, axes):
        return [d * n if k == axes[0] else d for k, d in enumerate(shape)]


class Reduce(Collective):
    """The one output, on `root` (in the group or not), = (+)_i inputs[i]."""
    NAME = "coll.reduce"
    STRATEGIES = ("direct", "ring", "tree")
    IN_PLACE = True

    @property
    def output_devices(self):
        return [self.root]


class Broadcast(Collective):
    """The one input is on `root`; outputs[j] (on devices[j]) get a copy."""
    NAME = "coll.broadcast"
    STRATEGIES = ("direct", "ring", "tree")
    HAS_KIND = False
    IN_PLACE = True

    @property
    def input_devices(self):
        return [self.root]


class AllToAll(Collective):
    """outputs[j] = block j (along `split_axis`) of every input, concatenated
    in device order along `concat_axis`."""
    NAME = "coll.all_to_all"
    STRATEGIES = ("direct",)
    AXES = ("split_axis", "concat_axis")
    HAS_KIND = False

    @staticmethod
    def result_shape(shape, n, axes):
        out = ReduceScatter.result_shape(shape, n, axes[:1])
        return AllGather.result_shape(out, n, axes[1:])


class Alloc(OpView):
    NAME = "coll.alloc"
    GROUPS = ()

    buffer = property(lambda self: self.op.results[0])
    device = property(lambda self: device_of(self.op.results[0].type))


class Copy(OpView):
    """%t = coll.copy(source, target, deps...)."""
    NAME = "coll.copy"
    GROUPS = (("sources", 1), ("targets", 1), ("deps", VARIADIC))
    READS, WRITES = ("sources",), ("targets",)

    source = property(lambda self: self.sources[0])
    target = property(lambda self: self.targets[0])


class Combine(OpView):
    """%t = coll.combine(lhs, rhs..., output, deps...): output = lhs (+) rhs..."""
    NAME = "coll.combine"
    GROUPS = (("lhs_", 1), ("rhs", VARIADIC), ("outs", 1), ("deps", VARIADIC))
    READS, WRITES = ("lhs_", "rhs"), ("outs",)

    lhs = property(lambda self: self.lhs_[0])
    out = property(lambda self: self.outs[0])
    kind = property(lambda self: attr_str(self.op, "kind"))
    inputs = property(lambda self: self.lhs_ + self.rhs)
    device = property(lambda self: device_of(self.outs[0].type))

    @property
    def peers(self):
        """[(input, home device)] of the inputs held by another device (read
        in place through peer views, ir/peers.py)."""
        dev = self.device
        return [(v, h) for v in self.inputs for h in [home_device(v)] if h != dev]


class Join(OpView):
    NAME = "coll.join"
    GROUPS = (("deps", VARIADIC),)


class Wait(OpView):
    NAME = "coll.wait"
    GROUPS = (("deps", VARIADIC),)

    @property
    def token(self):
        return None


class Implements(OpView):
    """coll.implements(inputs..., outputs..., token): the claim that the
    explicit program ending in `token` computes collective `collective`
    ("all_reduce", ...) from inputs into outputs (coll-check-semantics)."""
    NAME = "coll.implements"
    GROUPS = (("inputs", VARIADIC), ("outputs", VARIADIC), ("tokens", 1))

    collective = property(lambda self: attr_str(self.op, "op"))
    kind = property(lambda self: attr_str(self.op, "kind"))
    devices = property(lambda self: attr_ints(self.op, "devices"))
    to_device = property(lambda self: attr_int(self.op, "to_device"))
    root = property(lambda self: attr_int(self.op, "root"))
    axes = property(lambda self: attr_ints(self.op, "axes"))
    token = property(lambda self: None)  # it returns none
    final = property(lambda self: self.tokens[0])


COLLECTIVE_OPS = (AllReduce, ReduceScatter, AllGather, Reduce, Broadcast, AllToAll)
OPS = {cls.NAME: cls for cls in COLLECTIVE_OPS + (Alloc, Copy, Combine, Join, Wait, Implements)}
COLLECTIVES = tuple(cls.NAME for cls in COLLECTIVE_OPS)
# Ops that return a token that completes later.
ASYNC_OPS = tuple(name for name in OPS if name not in (Alloc.NAME, Wait.NAME, Implements.NAME))
# Explicit-level ops that move or combine data.
DATA_OPS = (Copy.NAME, Combine.NAME)


def view(op):
    """The op-layer view of any coll op, or None for another op."""
    op = getattr(op, "operation", op)
    cls = OPS.get(op.name)
    return cls(op) if cls is not None else None
