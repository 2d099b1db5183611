"""The coll verifier: what IRDL cannot say.

Runs after parsing and after every coll pass. Slice bounds are left to
upstream's memref.subview verifier, which rejects static out-of-bounds
slices itself. Each finding is a
(location, message) pair; `verify_or_raise` turns findings into a
VerifyError that tools print as located MLIR diagnostics.
"""
from mlir import ir

from . import BITWISE_KINDS, KINDS, MAX_DEVICES, STRATEGIES
from .types import ELEMENT_TYPES, device_of, element_name, is_token

ASYNC_OPS = ("coll.all_reduce", "coll.copy", "coll.combine", "coll.join")


class VerifyError(Exception):
    def __init__(self, findings):
        super().__init__("; ".join(m for _, m in findings))
        self.findings = findings


def _kind_error(kind, elem):
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


def as_(cls, x):
    """x viewed as `cls` (an attribute or type class), or None."""
    try:
        return cls(x)
    except (ValueError, TypeError):
        return None


def _get(attrs, name):
    """attrs[name], or None when the bindings cannot build it (a dense
    array of f8 elements raises TypeError; found by tools/fuzz.py)."""
    try:
        return attrs[name]
    except (TypeError, ValueError):
        return None


def _memref(v):
    return as_(ir.MemRefType, v.type)


def _contiguous(mt):
    """Row-major contiguous with offset 0 (what collapse_shape needs)."""
    if str(mt.affine_map) == str(ir.AffineMap.get_identity(mt.rank)):
        return True  # also covers zero-sized dims, whose strides are undefined
    strides, offset = mt.get_strides_and_offset()
    expect, want = 1, []
    for d in reversed(list(mt.shape)):
        want.append(expect)
        expect *= d
    return offset == 0 and list(strides) == list(reversed(want))


def _shape_text(mt):
    return "x".join(str(d) if d >= 0 else "?" for d in mt.shape) or "scalar"


class _Verifier:
    def __init__(self, num_devices):
        self.num_devices = num_devices
        self.findings = []

    def error(self, op, message):
        self.findings.append((op.location, message))

    def device_in_range(self, op, dev, what):
        if dev < 0 or dev >= self.num_devices:
            self.error(op, f"{what} device id {dev} is out of range; expected 0 <= id < {self.num_devices}")
            return False
        return True

    # -- collective level ----------------------------------------------------
    def all_reduce(self, op):
        attrs = op.attributes
        devices = as_(ir.DenseI64ArrayAttr, _get(attrs, "devices"))
        if devices is None:
            return self.error(op, "'devices' must be an array<i64: ...> of device ids")
        devices = list(devices)
        seg = list(ir.DenseI32ArrayAttr(attrs["operandSegmentSizes"]))
        n, n_out = seg
        operands = list(op.operands)
        if n == 0:
            return self.error(op, "expected at least one input buffer (zero devices)")
        if n > MAX_DEVICES:
            return self.error(op, f"{n} devices exceed the supported maximum of {MAX_DEVICES}")
        ranks = _spmd_ranks(op)
        if ranks is not None:
            # SPMD form: one rank's buffers, the group in 'devices'.
            if (n, n_out) != (1, 1) or devices != list(range(ranks)):
                return self.error(op, f"in an SPMD function (coll.ranks = {ranks}) a collective takes one input and "
                                      f"one output (this rank's) and names its group devices = [0..{ranks - 1}]")
        elif len(devices) != n:
            return self.error(op, f"'devices' names {len(devices)} devices but the op has {n} inputs; expected one device per input")
        seen = {}
        for i, d in enumerate(devices):
            if not self.device_in_range(op, d, f"input #{i}"):
                return
            if d in seen:
                return self.error(op, f"device {d} is repeated (inputs #{seen[d]} and #{i}); expected distinct devices")
            seen[d] = i
        to_device = None
        if "to_device" in attrs:
            if as_(ir.IntegerAttr, _get(attrs, "to_device")) is None:
                return self.error(op, "'to_device' must be an integer device id")
            to_device = ir.IntegerAttr(attrs["to_device"]).value
            if not self.device_in_range(op, to_device, "destination"):
                return
        if "strategy" in attrs:
            s = as_(ir.StringAttr, _get(attrs, "strategy"))
            s = s.value if s is not None else None
            if s not in STRATEGIES:
                return self.error(op, f"unknown strategy {_get(attrs, 'strategy')}; expected one of: {', '.join(STRATEGIES)}")
        if "threshold" in attrs:
            t = as_(ir.IntegerAttr, _get(attrs, "threshold"))
            if t is None or t.value < 0:
                return self.error(op, "'threshold' must be a non-negative integer (elements)")
        expected_out = 1 if to_device is not None or ranks is not None else n
        if n_out != expected_out:
            what = "single-device output (to_device)" if to_device is not None else "multi-device output"
            return self.error(op, f"{what} expects {expected_out} output buffer(s), got {n_out}")
        ref = _memref(operands[0])
        for i, v in enumerate(operands):
            role = f"input #{i}" if i < n else f"output #{i - n}"
            mt = _memref(v)
            if any(d < 0 for d in mt.shape):
                return self.error(op, f"{role} has dynamic shape memref<{_shape_text(mt)}x{mt.element_type}>; dynamic shapes are not supported yet, expected a static shape")
            if mt.memory_space is not None:
                return self.error(op, f"{role} has memory space {mt.memory_space}; collective-level buffers carry none (placement is the 'devices' attribute)")
            if not _contiguous(mt):
                return self.error(op, f"{role} has layout {mt.layout}; expected a contiguous (identity) layout")
            if list(mt.shape) != list(ref.shape) or mt.element_type != ref.element_type:
                return self.error(op, f"{role} is {mt} but input #0 is {ref}; expected the same shape and element type on every device")
        ins = set(operands[:n])
        for j, v in enumerate(operands[n:]):
            if v in ins:
                return self.error(op, f"output #{j} is also an input; in-place all_reduce is not supported yet")
        if len(set(operands[n:])) != n_out:
            return self.error(op, "an output buffer is repeated; expected one distinct buffer per output device")
        msg = _kind_error(ir.StringAttr(attrs["kind"]).value, element_name(ref))
        if msg:
            self.error(op, msg)

    # -- explicit level --------------------------------------------------------
    def placed(self, op, v, role):
        mt = _memref(v)
        dev = device_of(mt) if mt is not None else None
        if dev is None:
            self.error(op, f"{role} of type {v.type} has no device; expected a memref in memory space #coll.device<i>")
            return None
        if not self.device_in_range(op, dev, role):
            return None
        if any(d < 0 for d in mt.shape):
            self.error(op, f"{role} has a dynamic shape; dynamic shapes are not supported yet")
            return None
        return dev

    def tokens(self, op, values):
        for v in values:
            if not is_token(v.type):
                continue
            owner = v.owner
            if not isinstance(owner, ir.Operation) and not hasattr(owner, "name"):
                self.error(op, "token operand is a block argument; expected a token produced by a coll async op")
                return
            name = owner.name if isinstance(owner, ir.Operation) else owner.operation.name
            if name not in ASYNC_OPS:
                self.error(op, f"token operand comes from '{name}'; expected a token produced by {', '.join(ASYNC_OPS)}")
                return

    def alloc(self, op):
        self.placed(op, op.results[0], "coll.alloc result")

    def copy(self, op):
        src, dst = op.operands[0], op.operands[1]
        if self.placed(op, src, "copy source") is None or self.placed(op, dst, "copy target") is None:
            return
        s, d = _memref(src), _memref(dst)
        if list(s.shape) != list(d.shape) or s.element_type != d.element_type:
            return self.error(op, f"copy source memref<{_shape_text(s)}x{s.element_type}> and target memref<{_shape_text(d)}x{d.element_type}> differ; expected the same shape and element type")
        self.tokens(op, list(op.operands)[2:])

    def combine(self, op):
        seg = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        operands = list(op.operands)
        bufs = operands[: seg[0] + seg[1] + seg[2]]
        roles = ["lhs"] + [f"rhs #{i}" for i in range(seg[1])] + ["output"]
        devs = []
        for v, role in zip(bufs, roles):
            dev = self.placed(op, v, f"combine {role}")
            if dev is None:
                return
            devs.append(dev)
        if len(set(devs)) != 1:
            return self.error(op, f"combine touches devices {sorted(set(devs))}; expected all its buffers on one device")
        ref = _memref(bufs[-1])
        for v, role in zip(bufs, roles):
            mt = _memref(v)
            if list(mt.shape) != list(ref.shape) or mt.element_type != ref.element_type:
                return self.error(op, f"combine {role} is memref<{_shape_text(mt)}x{mt.element_type}> but the output is memref<{_shape_text(ref)}x{ref.element_type}>; expected the same shape and element type")
        msg = _kind_error(ir.StringAttr(op.attributes["kind"]).value, element_name(ref))
        if msg:
            return self.error(op, msg)
        self.tokens(op, operands[len(bufs):])

    def join(self, op):
        self.tokens(op, list(op.operands))

    def implements(self, op):
        """A claim (coll-check-semantics proves it): well-formed attributes
        and a token from the program; what `op` names is the checker's."""
        attrs = op.attributes
        if as_(ir.StringAttr, _get(attrs, "op")) is None:
            return self.error(op, "'op' must name the collective the program implements, e.g. \"all_reduce\"")
        if "kind" in attrs:
            kind = as_(ir.StringAttr, _get(attrs, "kind"))
            if kind is None or kind.value not in KINDS:
                return self.error(op, f"unknown reduction kind {_get(attrs, 'kind')}; expected one of: {', '.join(KINDS)}")
        for name in ("devices", "axes"):
            if name in attrs and as_(ir.DenseI64ArrayAttr, _get(attrs, name)) is None:
                return self.error(op, f"'{name}' must be an array<i64: ...>")
        for name in ("to_device", "root"):
            if name in attrs and as_(ir.IntegerAttr, _get(attrs, name)) is None:
                return self.error(op, f"'{name}' must be an integer")
        seg = list(ir.DenseI32ArrayAttr(attrs["operandSegmentSizes"]))
        if "devices" in attrs:
            devices = list(ir.DenseI64ArrayAttr(attrs["devices"]))
            if len(devices) != seg[0]:
                return self.error(op, f"'devices' names {len(devices)} devices but the claim has {seg[0]} inputs; expected one device per input")
            for d in devices:
                if not self.device_in_range(op, d, "claimed"):
                    return
        self.tokens(op, list(op.operands)[-1:])

    def run(self, root):
        handlers = {
            "coll.all_reduce": self.all_reduce, "coll.alloc": self.alloc,
            "coll.copy": self.copy, "coll.combine": self.combine,
            "coll.join": self.join, "coll.wait": self.join, "coll.implements": self.implements,
        }

        def visit(op):
            h = handlers.get(op.name)
            if h is not None:
                h(op)
            return ir.WalkResult.ADVANCE

        root.walk(visit)
        return self.findings


SPMD_RANKS = "coll.ranks"  # on a function that holds one rank's buffers


def _spmd_ranks(op):
    """The group size of the SPMD function around `op`, or None."""
    f = op.parent
    while f is not None and f.name != "func.func":
        f = f.parent
    if f is None or SPMD_RANKS not in f.attributes:
        return None
    a = as_(ir.IntegerAttr, _get(f.attributes, SPMD_RANKS))
    return a.value if a is not None and a.value > 0 else None


def num_devices_of(module_op):
    """The module's `coll.num_devices` bound, else MAX_DEVICES."""
    attrs = module_op.attributes
    if "coll.num_devices" in attrs and as_(ir.IntegerAttr, _get(attrs, "coll.num_devices")) is not None:
        return min(ir.IntegerAttr(attrs["coll.num_devices"]).value, MAX_DEVICES)
    return MAX_DEVICES


def verify(module_op):
    """[(location, message)] for everything wrong under module_op."""
    return _Verifier(num_devices_of(module_op)).run(module_op)


def verify_or_raise(module_op):
    findings = verify(module_op)
    if findings:
        raise VerifyError(findings)
