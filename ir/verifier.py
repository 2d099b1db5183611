"""The coll verifier: what IRDL cannot say.

Runs after parsing and after every coll pass. Slice bounds are left to
upstream's memref.subview verifier, which rejects static out-of-bounds
slices itself. Each finding is a
(location, message) pair; `verify_or_raise` turns findings into a
VerifyError that tools print as located MLIR diagnostics.
"""
# `return self.error(...)`: report and stop, how every check here ends.
# mypy: disable-error-code="func-returns-value"
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any, TypeVar, cast

from mlir import ir

from . import BITWISE_KINDS, KINDS, MAX_DEVICES, peers
from .errors import LocatedError
from .kinds import ELEMENTS
from .ops import ASYNC_OPS, COLLECTIVE_NAMES, COLLECTIVE_OPS, OPS, ORDERS, CollectiveOp, Combine, Implements
from .types import ELEMENT_TYPES, built_facts, device_of, element_name, is_token, token_type_of
from .views import ANY_BUFFER, distinct_each_iteration, root_key, root_of, sources, span

MAX_BYTES = 2 ** 62

Finding = tuple[ir.Location, str]  # (location, message)
_T = TypeVar("_T")


class VerifyError(LocatedError):
    """The verifier's findings [(location, message)], as one error."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(m for _, m in findings), findings[0][0] if findings else None,
                         findings=[(loc, msg, ()) for loc, msg in findings])


@lru_cache(maxsize=256)
def _kind_error(kind: str, elem: str) -> str | None:
    if kind not in KINDS:
        return f"unknown reduction kind '{kind}'; expected one of: {', '.join(KINDS)}"
    if elem not in ELEMENT_TYPES:
        return (f"unsupported element type {elem}; expected one of: "
                f"{', '.join(ELEMENT_TYPES)}")
    if kind in BITWISE_KINDS and not elem.startswith("i"):
        return f"bitwise reduction kind '{kind}' needs an integer or i1 element type, got {elem}"
    if elem == "i1" and kind not in BITWISE_KINDS:
        return f"i1 buffers support only the bitwise kinds (and, or, xor), got '{kind}'"
    return None


def as_(cls: Callable[[Any], _T], x: Any) -> _T | None:
    """x viewed as `cls` (an attribute or type class), or None."""
    try:
        return cls(x)
    except (ValueError, TypeError):
        return None


def _get(attrs: ir.OpAttributeMap, name: str) -> ir.Attribute | None:
    """attrs[name], or None when the bindings cannot build it (a dense
    array of f8 elements raises TypeError; found by fuzz/engine.py)."""
    try:
        return attrs[name]
    except (TypeError, ValueError):
        return None


def _memref(v: ir.Value) -> ir.MemRefType | None:
    return as_(ir.MemRefType, v.type)


def _shaped(v: ir.Value) -> ir.MemRefType | ir.RankedTensorType | None:
    """A collective's buffer type: a memref, or a ranked tensor (tensor form)."""
    return as_(ir.MemRefType, v.type) or as_(ir.RankedTensorType, v.type)


def _buffer_type(v: ir.Value) -> ir.ShapedType:
    """_shaped(v) of a collective's buffer, which IRDL makes a memref or a
    ranked tensor."""
    return cast(ir.ShapedType, _shaped(v))


def device_of_value(v: ir.Value) -> int | None:
    mt = _memref(v)
    return device_of(mt) if mt is not None else None


def _value_name(v: ir.Value) -> str:
    try:
        return v.get_name()
    except Exception:  # a name is only for the message
        return "its buffer"


def _contiguous(mt: ir.MemRefType) -> bool:
    """Row-major contiguous, at any offset (what collapse_shape needs)."""
    if str(mt.affine_map) == str(ir.AffineMap.get_identity(mt.rank)):
        return True  # also covers zero-sized dims, whose strides are undefined
    try:
        strides, offset = mt.get_strides_and_offset()
    except (ValueError, TypeError):
        return False
    if any(d == 0 for d in mt.shape):
        return True
    expect, want = 1, []
    for d in reversed(list(mt.shape)):
        want.append(expect)
        expect *= d
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    # Strides of unit dimensions do not matter for contiguity.
    return offset != dyn and all(s == w or d == 1 for s, w, d in zip(strides, reversed(want), mt.shape))


def _type_text(mt: ir.ShapedType) -> str:
    """memref<8x?xf32> or tensor<8x?xf32> (a dynamic shape printed, not its layout)."""
    base = "tensor" if isinstance(mt, ir.RankedTensorType) else "memref"
    return f"{base}<{_shape_text(mt)}x{mt.element_type}>"


def _byte_size(mt: ir.ShapedType, shape: Iterable[int] | None = None, elem: ir.Type | None = None) -> int:
    el = ELEMENTS.get(element_name(mt if elem is None else elem))
    size = el.bytes if el else 8
    for d in mt.shape if shape is None else shape:
        size *= max(d, 0)
    return size


def _placement(type_: ir.Type) -> tuple[int | None, bool, ir.MemRefType | None, int]:
    """(device or None, dynamic shape, memref type or None, bytes) of a type:
    what `placed` checks, computed once per type (a module has few distinct
    types and many ops on them)."""
    built = built_facts(type_)
    if built is not None:
        dev, shape, elem = built
        flat = cast(ir.MemRefType, type_)  # flat_type made it: a memref type
        return dev, False, flat, _byte_size(flat, shape, elem)
    mt = as_(ir.MemRefType, type_)
    if mt is None:
        return None, False, None, 0
    return device_of(mt), any(d < 0 for d in mt.shape), mt, _byte_size(mt)


def _shape_text(mt: ir.ShapedType) -> str:
    return "x".join(str(d) if d >= 0 else "?" for d in mt.shape) or "scalar"


class _Verifier:
    def __init__(self, num_devices: int) -> None:
        self.num_devices = num_devices
        self.findings: list[Finding] = []
        # type -> _placement(type)
        self.facts: dict[ir.Type, tuple[int | None, bool, ir.MemRefType | None, int]] = {}
        # memref type -> (shape, element type), compared per combine
        self.shapes: dict[ir.Type, tuple[tuple[int, ...], ir.Type]] = {}
        self.peer_access: dict[ir.Operation | None, bool] = {}  # function -> whether its module has peer access
        self.escaped: list[ir.Operation] = []  # producers whose token escape is reported
        # (kind, types) of combines, (types) of copies, found right
        self.good: set[tuple[ir.Attribute | ir.Type, ...]] = set()
        # Peer views (home devices) are looked for only once a cast from a
        # placed buffer was seen; combines before it are checked at the end.
        self.peer_casts = False
        self.unchecked: list[tuple[ir.Operation, list[ir.Value], list[str]]] = []
        self.token: ir.Type | None = None  # !coll.token of the context verified (run)

    def error(self, op: ir.Operation, message: str) -> None:
        self.findings.append((op.location, message))

    def device_in_range(self, op: ir.Operation, dev: int, what: str) -> bool:
        if dev < 0 or dev >= self.num_devices:
            self.error(op, f"{what} device id {dev} is out of range; expected 0 <= id < {self.num_devices}")
            return False
        return True

    # -- collective level ----------------------------------------------------
    def collective(self, op: ir.Operation) -> None:
        c = cast(CollectiveOp, OPS[op.name](op))
        attrs = op.attributes
        what = op.name[len("coll."):]
        ins, outs = c.inputs, c.outputs
        if self.form(op, c):
            return
        tensor = c.is_tensor
        if tensor:
            outs = c.values  # the results stand where the outputs would be
        grouped = outs if c.PER_DEVICE == "outputs" else ins  # one buffer per device
        ranks = _spmd_ranks(op)
        if ranks is not None:
            if ranks > MAX_DEVICES:
                return self.error(op, f"its function has coll.ranks = {ranks}, more ranks than the supported "
                                      f"maximum of {MAX_DEVICES}")
            # SPMD form: this rank's buffers; the group(s) in 'devices' or 'groups'.
            n = self.spmd_group(op, c, ranks, ins, outs)
            if n is None:
                return
        else:
            dense = as_(ir.DenseI64ArrayAttr, _get(attrs, "devices"))
            if dense is None:
                return self.error(op, "'devices' must be an array<i64: ...> of device ids")
            devices = list(dense)
            n = len(grouped)
            if n == 0:
                what_ = (("tensor result" if tensor else "output buffer") if grouped is outs
                         else ("input tensor" if tensor else "input buffer"))
                return self.error(op, f"expected at least one {what_} (zero devices)")
            if n > MAX_DEVICES:
                return self.error(op, f"{n} devices exceed the supported maximum of {MAX_DEVICES}")
            if len(devices) != n:
                per = ("tensor results" if tensor else "outputs") if grouped is outs else "inputs"
                return self.error(op, f"'devices' names {len(devices)} devices but the op has {n} {per}; expected one "
                                      f"device per {per[:-1]}")
            if not self.distinct(op, devices, *(("output", "outputs") if grouped is outs else ("input", "inputs"))):
                return
        for key in ("to_device", "root"):
            if key in attrs or (key == "root" and c.ROOTED):
                if as_(ir.IntegerAttr, _get(attrs, key)) is None:
                    return self.error(op, f"'{key}' must be an integer device id")
                value = ir.IntegerAttr(attrs[key]).value
                if ranks is not None and "groups" in attrs:
                    if not 0 <= value < n:
                        return self.error(op, f"'{key}' {value} is out of range for groups of {n}; with 'groups' "
                                              f"it is a position in each group, expected 0 <= {key} < {n}")
                elif not self.device_in_range(op, value, "root" if key == "root" else "destination"):
                    return
        msg = c.check_attributes(n)  # the collective's own attributes (e.g. a permute's pairs)
        if msg:
            return self.error(op, msg)
        if "strategy" in attrs:
            sa = as_(ir.StringAttr, _get(attrs, "strategy"))
            s = sa.value if sa is not None else None
            if s not in ("auto",) + c.STRATEGIES:
                return self.error(op, f"unknown strategy {_get(attrs, 'strategy')} for {what}; expected one of: "
                                      f"{', '.join(('auto',) + c.STRATEGIES)}")
        if "order" in attrs:
            oa = as_(ir.StringAttr, _get(attrs, "order"))
            if not c.HAS_KIND:
                return self.error(op, f"'order' applies to reducing collectives only; {what} does not reduce")
            if oa is None or oa.value not in ORDERS:
                return self.error(op, f"unknown order {_get(attrs, 'order')} for {what}; expected one of: "
                                      f"{', '.join(ORDERS)}")
        if "threshold" in attrs:
            t = as_(ir.IntegerAttr, _get(attrs, "threshold"))
            if t is None or t.value < 0:
                return self.error(op, "'threshold' must be a non-negative integer (elements)")
        expected = c.expected_buffers(n)
        if ranks is not None:
            expected = (1, 1)
        if len(ins) != expected[0]:
            return self.error(op, f"{what} expects {expected[0]} input {'tensor' if tensor else 'buffer'}(s), got "
                                  f"{len(ins)}")
        if len(outs) != expected[1]:
            kind = c.outputs_noun()
            if tensor:
                return self.error(op, f"{kind} returns {expected[1]} tensor(s) after its token, got {len(outs)}")
            return self.error(op, f"{kind} expects {expected[1]} output buffer(s), got {len(outs)}")
        # form() checked the buffers: memrefs, or ranked tensors (tensor form).
        ref: Any = _shaped(ins[0])
        for i, v in enumerate(ins + outs):
            role = (f"input #{i}" if i < len(ins)
                    else f"result #{i - len(ins) + 1}" if tensor else f"output #{i - len(ins)}")
            mt: Any = _shaped(v)
            if any(d < 0 for d in mt.shape):
                return self.error(op, f"{role} has dynamic shape {_type_text(mt)}; dynamic shapes are not supported "
                                      "yet, expected a static shape")
            if self.too_big(op, mt, role):
                return
            if tensor:
                if mt.encoding is not None:
                    return self.error(op, f"{role} is {mt}, a tensor with an encoding; expected a plain ranked tensor")
            elif mt.memory_space is not None:
                return self.error(op, f"{role} has memory space {mt.memory_space}; collective-level buffers carry none "
                                      "(placement is the 'devices' attribute)")
            if not tensor and not _contiguous(mt):
                return self.error(op, f"{role} has layout {mt.layout}; expected a contiguous layout (identity, or "
                                      "strided row-major with any offset)")
            if mt.element_type != ref.element_type or (i < len(ins) and list(mt.shape) != list(ref.shape)):
                return self.error(op, f"{role} is {mt} but input #0 is {ref}; expected the same shape and element type "
                                      "on every device")
        want = self.output_shape(op, c, list(ref.shape), n)
        if want is None:
            return
        for j, v in enumerate(outs):
            role = f"result #{j + 1}" if tensor else f"output #{j}"
            if list(_buffer_type(v).shape) != want and want == list(ref.shape):
                return self.error(op, f"{role} is {_shaped(v)} but input #0 is {ref}; expected the same shape and "
                                      "element type on every device")
            if list(_buffer_type(v).shape) != want:
                base = "tensor" if tensor else "memref"
                dims = "".join(f"{d}x" for d in want)
                return self.error(op, f"{role} is {_shaped(v)} but {what} over {n} devices of {ref} inputs gives "
                                      f"{base}<{dims}{ref.element_type}>; expected that shape")
        if not tensor and self.aliasing(op, c, ins, outs):
            return
        self.tokens(op, c.deps)
        if c.HAS_KIND:
            msg = _kind_error(ir.StringAttr(attrs["kind"]).value if "kind" in attrs else "",
                              element_name(ref.element_type))
            if msg:
                self.error(op, msg)

    def distinct(self, op: ir.Operation, devices: Sequence[int], one: str, many: str) -> bool:
        """Device ids in range and each once (`one`/`many`: 'input'/'inputs')."""
        seen: dict[int, int] = {}
        for i, d in enumerate(devices):
            if not self.device_in_range(op, d, f"{one} #{i}"):
                return False
            if d in seen:
                self.error(op, f"device {d} is repeated ({many} #{seen[d]} and #{i}); expected distinct devices")
                return False
            seen[d] = i
        return True

    def spmd_group(self, op: ir.Operation, c: CollectiveOp, ranks: int, ins: list[ir.Value],
                   outs: list[ir.Value]) -> int | None:
        """The group size of a collective in an SPMD function (coll.ranks =
        `ranks`), or None (reported). It names one group, devices =
        [0..ranks-1], or several of one size: `groups` (flattened, disjoint,
        covering 0..ranks-1: what a collective over some axes of a grid runs
        in) with devices = [0..size-1], the positions in a group."""
        attrs = op.attributes
        has_groups = "groups" in attrs
        dense = as_(ir.DenseI64ArrayAttr, _get(attrs, "devices"))
        devices = list(dense) if dense is not None else None
        flat = as_(ir.DenseI64ArrayAttr, _get(attrs, "groups")) if has_groups else None
        if has_groups and flat is not None and devices:
            if devices != list(range(len(devices))) or len(flat) % len(devices):
                return self.error(op, f"with 'groups' a collective's devices = [0..size-1] are the positions in a "
                                      f"group of `size` ranks, and size divides the length of 'groups'; got devices "
                                      f"= {devices} and {len(flat)} ranks in groups")
            if sorted(flat) != list(range(ranks)):
                return self.error(op, f"'groups' must hold every rank 0..{ranks - 1} exactly once (disjoint groups "
                                      f"covering the function's ranks), got {list(flat)}")
            size = len(devices)
        else:
            size = ranks
        if (len(ins), len(outs)) != (1, 1) or (has_groups and flat is None) or devices != list(range(size)):
            one = "returns one tensor" if c.is_tensor else "one output"
            return self.error(op, f"in an SPMD function (coll.ranks = {ranks}) a collective takes one input and "
                                  f"{one} (this rank's) and names its group devices = [0..{ranks - 1}], "
                                  "or groups = [ranks, group after group] with devices = [0..size-1]")
        return size

    def form(self, op: ir.Operation, c: CollectiveOp) -> bool:
        """One form per op: memref inputs and outputs returning a token, or
        tensor inputs, no outputs, returning a token and tensors (IRDL
        checks each group alone). Reports and returns True when mixed."""
        kinds = [("tensor" if _shaped(v) is not None and isinstance(_shaped(v), ir.RankedTensorType) else "memref")
                 for v in c.inputs]
        for i, v in enumerate(c.inputs):
            if _shaped(v) is None:
                return self.error(op, f"input #{i} is {v.type}; expected a memref or a ranked tensor "
                                      "with a static shape") or True
        if "tensor" in kinds and "memref" in kinds:
            return self.error(op, f"input #{kinds.index('tensor')} is a tensor but input #{kinds.index('memref')} is a "
                                  "memref; "
                                  "expected all tensors (tensor form) or all memrefs") or True
        if c.is_tensor:
            if "memref" in kinds:
                return self.error(op, f"the op returns tensors but input #{kinds.index('memref')} is a memref; "
                                      "expected tensor inputs (tensor form) or no results but the token") or True
            if c.outputs:
                return self.error(op, f"a collective on tensors takes no output buffers, got {len(c.outputs)}; "
                                      "expected its outputs as tensor results after the token") or True
            if not c.inputs:
                return self.error(op, "a collective returning tensors needs tensor inputs, got none") or True
        return False

    def output_shape(self, op: ir.Operation, c: CollectiveOp, shape: list[int], n: int) -> list[int] | None:
        """The output shape `c` gives for inputs of `shape`, or None (reported)."""
        for key in c.AXES:
            a = as_(ir.IntegerAttr, _get(op.attributes, key))
            if a is None:
                return self.error(op, f"'{key}' must be an integer axis")
            if not 0 <= a.value < len(shape):
                return self.error(op, f"{key} {a.value} is out of range for rank {len(shape)}; expected 0 <= axis < "
                                      f"{len(shape)}")
        for key in c.DIVIDED_AXES:
            axis = cast(int, c.axis(key))  # an integer: checked above
            if shape[axis] % n:
                return self.error(op, f"{key} {axis} has size {shape[axis]}, which the {n} devices do not divide; "
                                      f"expected a multiple of {n}")
        return c.result_shape(shape, n, cast(list[int], c.axes))  # integers: checked above

    def aliasing(self, op: ir.Operation, c: CollectiveOp, ins: list[ir.Value], outs: list[ir.Value]) -> None:
        """In place: an output may be the input on its own device (the same
        elements in the same order, through any views: ir/views.py span),
        where the op allows it; an output may share no other memory with an
        input or another output, and a partial overlap is an error (the
        strategies read inputs after they write outputs)."""
        out_devs = c.output_devices
        spans_in, spans_out = [span(v) for v in ins], [span(v) for v in outs]
        roots_in = [root_key(root_of(v)[0]) for v in ins]
        roots_out = [root_key(root_of(v)[0]) for v in outs]
        src_in, src_out = [sources(v) for v in ins], [sources(v) for v in outs]

        def where(s: tuple[ir.Value, int, int], v: ir.Value) -> str:
            size = max(ELEMENTS[element_name(_buffer_type(v).element_type)].bytes, 1)
            return f"elements [{s[1] // size}, {s[2] // size}) of {_value_name(s[0])}"

        def may_be(what: str, a: tuple[set[object], str | None], b: tuple[set[object], str | None],
                   ra: object, rb: object) -> bool:
            """Refuses operands of distinct roots that may be one buffer
            (ir/views.py sources: through scf.if, scf.for, arith.select, or
            out of a region op it does not follow, ANY_BUFFER), unless they
            are iteration arguments a loop keeps distinct: the lowering could
            not tell in place from not."""
            meet = a[0] & b[0] or ANY_BUFFER in a[0] | b[0]
            if not meet or isinstance(ra, ir.Value) and isinstance(rb, ir.Value) \
                    and distinct_each_iteration(ra, rb):
                return False
            through = a[1] or b[1]
            holder = op.parent
            while holder is not None and holder.name != through:
                holder = holder.parent
            if holder is not None and ANY_BUFFER in a[0] | b[0]:  # (a loop JAX's while_loop makes, say)
                self.error(op, f"'{through}' holds this collective and passes its buffers through its regions, "
                               "which the checks do not follow; expected it in straight-line code or an scf.for")
                return True
            self.error(op, f"{what} may be one buffer (through '{a[1] or b[1]}'); expected views of one "
                           "buffer (in place) or distinct buffers")
            return True

        for j, (o, so, ro) in enumerate(zip(outs, spans_out, roots_out)):
            for i, (x, si, ri) in enumerate(zip(ins, spans_in, roots_in)):
                if ro != ri:
                    if may_be(f"output #{j} and input #{i}", src_out[j], src_in[i], ro, ri):
                        return None
                    continue  # distinct buffers
                if si is not None and so is not None and (so[2] <= si[1] or si[2] <= so[1]):
                    continue  # disjoint parts of one
                if si is None or so is None:
                    return self.error(op, f"output #{j} and input #{i} view one buffer through views whose "
                                          "offsets are not static; expected the input itself (in place) or "
                                          "another buffer")
                if si[1:] != so[1:]:
                    return self.error(op, f"output #{j} ({where(so, o)}) partly overlaps input #{i} "
                                          f"({where(si, x)}); expected the input itself (in place) or memory "
                                          "disjoint from it")
                if not c.IN_PLACE:
                    return self.error(op, f"output #{j} is also input #{i}; {op.name} has no in-place form, expected "
                                          "distinct buffers")
                if c.input_devices[i] != out_devs[j] and _spmd_ranks(op) is None:  # (SPMD: this rank's own)
                    return self.error(op, f"output #{j} (device {out_devs[j]}) is input #{i} (device "
                                          f"{c.input_devices[i]}); in place, an output must be the input on its own "
                                          "device")
        for j in range(len(outs)):
            for k in range(j):
                if roots_out[j] != roots_out[k]:
                    if may_be(f"outputs #{k} and #{j}", src_out[k], src_out[j], roots_out[k], roots_out[j]):
                        return None
                    continue
                a, b = spans_out[k], spans_out[j]
                if a is not None and b is not None and (a[2] <= b[1] or b[2] <= a[1]):
                    continue
                if a is not None and b is not None and a[1:] == b[1:] or outs[j] == outs[k]:
                    return self.error(op, "an output buffer is repeated; expected one distinct buffer per output "
                                          "device")
                return self.error(op, f"outputs #{k} and #{j} share memory; expected disjoint memory for each output")
        return None

    # -- explicit level --------------------------------------------------------
    def placed(self, op: ir.Operation, v: ir.Value, role: str) -> int | None:
        fact = self.facts.get(v.type)
        if fact is None:
            fact = self.facts[v.type] = _placement(v.type)
        dev, dynamic, mt, size = fact
        if dev is None:
            space = str(mt.memory_space) if mt is not None and mt.memory_space is not None else ""
            if space.startswith("#coll.device<"):
                self.error(op, f"{role} has memory space {space}, which names no device; expected #coll.device<i> with "
                               "an integer id i")
            else:
                self.error(op, f"{role} of type {v.type} has no device; expected a memref in memory space "
                               "#coll.device<i>")
            return None
        if not self.device_in_range(op, dev, role):
            return None
        if dynamic:
            self.error(op, f"{role} has a dynamic shape; dynamic shapes are not supported yet")
            return None
        if size >= MAX_BYTES:
            self.too_big(op, cast(ir.MemRefType, mt), role)  # a size: a memref
            return None
        return dev

    def too_big(self, op: ir.Operation, mt: ir.ShapedType, role: str) -> bool:
        """A buffer whose byte size does not fit in an index (2^62 bytes)."""
        size = _byte_size(mt)
        if size >= MAX_BYTES:
            self.error(op, f"{role} {_type_text(mt)} holds {size} bytes; "
                           f"expected fewer than 2^62 bytes")
            return True
        return False

    def token_users(self, op: ir.Operation, producers: Iterable[str]) -> None:
        """A token may flow only into coll ops (and be returned, which the
        order check reads as the final token; the lowerings refuse it): no
        lowering can store or pass it on. Checked at the user `op` (neither a
        coll op nor func.return), once per producer: walking each coll op's
        uses instead costs 20 us an op, most of a large program."""
        if not len(op.operands):
            return
        for v in op.operands:
            if v.type != self.token:
                continue
            owner = v.owner
            if isinstance(owner, ir.Block):
                continue
            producer = owner.operation
            if producer.name in producers and producer not in self.escaped:
                self.escaped.append(producer)
                self.findings.append((op.location, _escape_message(op, producer)))

    def tokens(self, op: ir.Operation, values: Iterable[ir.Value]) -> None:
        token = self.token
        for v in values:
            if not (v.type == token if token is not None else is_token(v.type)):
                continue
            owner = v.owner
            if not isinstance(owner, ir.Operation) and not hasattr(owner, "name"):
                self.error(op, "token operand is a block argument; expected a token produced by a coll async op")
                return
            name = owner.name if isinstance(owner, ir.Operation) else owner.operation.name
            if name not in ASYNC_OPS:
                self.error(op, f"token operand comes from '{name}'; expected a token produced by "
                               f"{', '.join(ASYNC_OPS)}")
                return

    def alloc(self, op: ir.Operation) -> None:
        self.placed(op, op.results[0], "coll.alloc result")

    def copy(self, op: ir.Operation) -> None:
        operands = list(op.operands)  # one list: each op.operands[i] costs as much
        src, dst = operands[0], operands[1]
        key = (src.type, dst.type)
        if key not in self.good:  # what the types say, once per pair of types
            if self.placed(op, src, "copy source") is None or self.placed(op, dst, "copy target") is None:
                return
            if self.shape_of(src.type) != self.shape_of(dst.type):
                s, d = ir.MemRefType(src.type), ir.MemRefType(dst.type)  # placed: memrefs
                return self.error(op, f"copy source memref<{_shape_text(s)}x{s.element_type}> and target "
                                      f"memref<{_shape_text(d)}x{d.element_type}> differ; expected the same shape and "
                                      "element type")
            self.good.add(key)
        self.tokens(op, operands[2:])

    def combine(self, op: ir.Operation) -> None:
        c = Combine.of(op)
        bufs = c.inputs + [c.out]
        roles = ["lhs"] + [f"rhs #{i}" for i in range(len(c.rhs))] + ["output"]
        kind = op.attributes["kind"]
        key = (kind,) + tuple(v.type for v in bufs)
        if key not in self.good and not self.combine_types(op, bufs, roles, kind):
            return
        self.good.add(key)
        if not self.peers_enabled(op):
            if not self.peer_casts:  # no peer view so far: nothing to find yet
                self.unchecked.append((op, bufs, roles))
            elif self.homes(op, bufs, roles):
                return
        self.tokens(op, c.deps)

    def combine_types(self, op: ir.Operation, bufs: list[ir.Value], roles: list[str], kind: ir.Attribute) -> bool:
        """What the types of a combine's buffers and its kind say; True when
        they are right (the same for every combine of these types)."""
        devs = []
        for v, role in zip(bufs, roles):
            dev = self.placed(op, v, f"combine {role}")
            if dev is None:
                return False
            devs.append(dev)
        if len(set(devs)) != 1:
            self.error(op, f"combine touches devices {sorted(set(devs))}; expected all its buffers on one device")
            return False
        # The element type is the rhs's (without rhs, the output's). The lhs
        # and the output may hold its accumulator type instead (ir/kinds.py
        # `compute`, f32 for f16, bf16, fp8): a partial result carried between
        # devices in it rounds once, where a combine writes the element type.
        shape = self.shape_of(bufs[-1].type)[0]
        by = 1 if len(bufs) > 2 else -1  # the buffer whose element type is the combine's
        elem = self.shape_of(bufs[by].type)[1]
        acc = ELEMENTS[element_name(elem)].compute if element_name(elem) in ELEMENTS else ""
        for k, (v, role) in enumerate(zip(bufs, roles)):
            got = self.shape_of(v.type)
            wide = acc and k in (0, len(bufs) - 1) and element_name(got[1]) == acc
            if got[0] != shape or (got[1] != elem and not wide):
                ref = -1 if got[0] != shape else by
                mt, rt = ir.MemRefType(v.type), ir.MemRefType(bufs[ref].type)  # placed: memrefs
                also = f" (or {acc} for the lhs and the output: a partial result)" if acc else ""
                self.error(op, f"combine {role} is memref<{_shape_text(mt)}x{mt.element_type}> but "
                               f"{'the output' if ref == -1 else roles[ref]} is memref<{_shape_text(rt)}x"
                               f"{rt.element_type}>; expected the same shape and element type{also}")
                return False
        msg = _kind_error(ir.StringAttr(kind).value, element_name(elem))
        if msg:
            self.error(op, msg)
            return False
        return True

    def homes(self, op: ir.Operation, bufs: list[ir.Value], roles: list[str]) -> bool:
        """Reports (and returns True) when a combine without peer access
        reaches a buffer of another device through a peer view."""
        dev = device_of(bufs[-1].type)
        for v, role in zip(bufs, roles):
            home = peers.home_device(v)
            if home != dev:
                self.error(op, f"combine on device {dev} reaches its {role} in the memory of device {home} (a peer "
                               f"view); that needs peer access: expected the module attribute '{peers.ATTR}', or a "
                               f"buffer on device {dev}")
                return True
        return False

    def cast(self, op: ir.Operation) -> None:
        """A memory_space_cast from a placed buffer can make a peer view."""
        if device_of_value(op.operands[0]) is not None:
            self.peer_casts = True

    def shape_of(self, type_: ir.Type) -> tuple[tuple[int, ...], ir.Type]:
        """(shape, element type) of a memref type, once per type."""
        got = self.shapes.get(type_)
        if got is None:
            built = built_facts(type_)
            if built is not None:
                return built[1:]
            mt = ir.MemRefType(type_)
            got = self.shapes[type_] = (tuple(mt.shape), mt.element_type)
        return got

    def peers_enabled(self, op: ir.Operation) -> bool:
        """peers.enabled(op), once per function (its module is the same)."""
        f = op.parent
        got = self.peer_access.get(f)
        if got is None:
            got = self.peer_access[f] = peers.enabled(op)
        return got

    def join(self, op: ir.Operation) -> None:
        self.tokens(op, list(op.operands))
        for v in op.operands:  # (a wait that may not run: coll-spmd-to-global aborted on one, LLVM 22)
            producer = v.owner.operation if isinstance(v.owner, ir.Operation | ir.OpView) else None
            region = region_between(op, producer) if producer is not None \
                and producer.name in COLLECTIVE_NAMES else None
            if region is not None:
                return self.error(op, f"'{op.name}' in '{region}' takes the token of a {producer.name} made outside "
                                      "it (a region may run it never, or again); expected it in the collective's "
                                      "block")
        return None

    def implements(self, op: ir.Operation) -> None:
        """A claim (coll-check-semantics proves it): well-formed attributes
        and a token from the program; what `op` names is the checker's."""
        attrs = op.attributes
        if as_(ir.StringAttr, _get(attrs, "op")) is None:
            return self.error(op, "'op' must name the collective the program implements, e.g. \"all_reduce\"")
        if "kind" in attrs:
            kind = as_(ir.StringAttr, _get(attrs, "kind"))
            if kind is None or kind.value not in KINDS:
                return self.error(op, f"unknown reduction kind {_get(attrs, 'kind')}; expected one of: "
                                      f"{', '.join(KINDS)}")
        if "order" in attrs:
            order = as_(ir.StringAttr, _get(attrs, "order"))
            if order is None or order.value not in ORDERS:
                return self.error(op, f"unknown order {_get(attrs, 'order')} for the claim; expected one of: "
                                      f"{', '.join(ORDERS)}")
            if "kind" not in attrs:
                return self.error(op, "'order' applies to a claim of a reduction only; this claim has no 'kind'")
        claim = Implements.of(op)
        # As on the collective: a broadcast names its outputs' devices.
        cls = OPS.get("coll." + (claim.collective or ""))
        arrays = tuple(cls.ARRAYS) if cls in COLLECTIVE_OPS else ()
        for name in ("devices", "axes") + arrays:
            if name in attrs and as_(ir.DenseI64ArrayAttr, _get(attrs, name)) is None:
                return self.error(op, f"'{name}' must be an array<i64: ...>")
        for name in ("to_device", "root"):
            if name in attrs and as_(ir.IntegerAttr, _get(attrs, name)) is None:
                return self.error(op, f"'{name}' must be an integer")
        per = cls.PER_DEVICE if cls in COLLECTIVE_OPS else "inputs"
        n_in = len(claim.outputs if per == "outputs" else claim.inputs)
        if "devices" in attrs:
            devices = list(ir.DenseI64ArrayAttr(attrs["devices"]))
            if len(devices) != n_in:
                return self.error(op, f"'devices' names {len(devices)} devices but the claim has {n_in} {per}; "
                                      f"expected one device per {per[:-1]}")
            for d in devices:
                if not self.device_in_range(op, d, "claimed"):
                    return
        self.tokens(op, list(op.operands)[-1:])

    def ranks_attr(self, func: ir.Operation) -> None:
        a = as_(ir.IntegerAttr, _get(func.attributes, SPMD_RANKS))
        if a is None or a.value < 1:  # (too many: the collectives say so, with the maximum)
            self.error(func, f"{SPMD_RANKS} = {func.attributes[SPMD_RANKS]}: expected the number of ranks of "
                             "this SPMD function, a positive integer")

    def run(self, root: ir.Operation) -> list[Finding]:
        handlers: dict[str, Callable[[ir.Operation], None]] = {
            **{name: self.collective for name in COLLECTIVE_NAMES}, "coll.alloc": self.alloc,
            "coll.copy": self.copy, "coll.combine": self.combine,
            "coll.join": self.join, "coll.wait": self.join, "coll.implements": self.implements,
        }

        def visit(op: ir.Operation) -> ir.WalkResult:
            name = op.name
            if name == "func.func" and SPMD_RANKS in op.attributes:
                self.ranks_attr(op)
            h = handlers.get(name)
            if h is not None:
                h(op)
                producers[0] = True
            elif not name.startswith("coll.") and name != "func.return":
                if name == "memref.memory_space_cast":
                    self.cast(op)
                if producers[0]:
                    self.token_users(op, handlers)
                else:  # no token yet (a module lowered below coll: none at all)
                    early.append(op)
            return ir.WalkResult.ADVANCE

        self.token = token_type_of(root.context)
        producers, early = [False], list[ir.Operation]()
        root.walk(visit, ir.WalkOrder.POST_ORDER)
        if producers[0]:
            for op in early:
                self.token_users(op, handlers)
        if self.peer_casts:
            for args in self.unchecked:
                self.homes(*args)
        return self.findings


def token_escapes(op: ir.Operation, allowed: Iterable[str] = ()) -> list[Finding]:
    """[(location, message)] for each use of a !coll.token result of `op`
    by an op that is neither a coll op nor in `allowed`."""
    for r in op.results:
        if not is_token(r.type):
            continue
        for use in r.uses:
            user = use.owner.operation
            if not user.name.startswith("coll.") and user.name not in allowed:
                return [(user.location, _escape_message(user, op))]
    return []


def _escape_message(user: ir.Operation, producer: ir.Operation) -> str:
    return (f"'{user.name}' uses the !coll.token of '{producer.name}'; tokens may only be used by coll "
            "ops (coll.join, coll.wait, coll.copy, coll.combine) when the program is lowered")


SPMD_RANKS = "coll.ranks"  # on a function that holds one rank's buffers


def _spmd_ranks(op: ir.Operation) -> int | None:
    """The group size of the SPMD function around `op`, or None."""
    f = op.parent
    while f is not None and f.name != "func.func":
        f = f.parent
    if f is None or SPMD_RANKS not in f.attributes:
        return None
    a = as_(ir.IntegerAttr, _get(f.attributes, SPMD_RANKS))
    return a.value if a is not None and a.value > 0 else None


def num_devices_of(module_op: ir.Operation) -> int:
    """The module's `coll.num_devices` bound, else MAX_DEVICES."""
    attrs = module_op.attributes
    if "coll.num_devices" in attrs and as_(ir.IntegerAttr, _get(attrs, "coll.num_devices")) is not None:
        return min(ir.IntegerAttr(attrs["coll.num_devices"]).value, MAX_DEVICES)
    return MAX_DEVICES


def region_between(user: ir.Operation, producer: ir.Operation) -> str | None:
    """The name of the op whose region holds `user` and not `producer`
    (a branch, a loop: it may run `user` never, or again), or None when
    they are in one block. (A wait in an scf.for of a token from outside
    it aborted coll-spmd-to-global too: an outside attack, 2026-12-07.)"""
    at = user.parent
    return None if at is None or at == producer.parent else str(at.name)


def verify(module_op: ir.Operation) -> list[Finding]:
    """[(location, message)] for everything wrong under module_op."""
    return _Verifier(num_devices_of(module_op)).run(module_op)


def verify_or_raise(module_op: ir.Operation) -> None:
    findings = verify(module_op)
    if findings:
        raise VerifyError(findings)
