"""Peer access: devices that can address each other's memory.

The fact is the module attribute `coll.peer_access` (unit): every device of
the module can read and write every other's buffers in place (logical
devices on one GPU always can; GPUs with peer access enabled; the CPU's
simulated devices, which share one address space). Only then may a combine
read buffers placed on other devices (ir/verifier.py), which the `oneshot`
and `twoshot` strategies do (passes/peer_strategies.py).

A combine on device j reads buffer b of device i through a *peer view*:
`memref.memory_space_cast` of b to `#coll.device<j>`, i.e. b as device j
addresses it. So every operand of the combine has the type of device j (one
variadic group, one type, as IRDL wants), and the buffer's home stays
visible: `home_device` walks the view back to the buffer's placement.
"""
from mlir import ir
from mlir.dialects import memref

from .types import device_of, on_device
from .views import view_op

ATTR = "coll.peer_access"


def _module_of(op: ir.Operation | ir.OpView) -> ir.Operation | None:
    at: ir.Operation | None = op.operation
    while at is not None and at.name != "builtin.module":
        at = at.parent
    return at


def enabled(op: ir.Operation | ir.OpView) -> bool:
    """Whether the module holding `op` (or `op` itself) has peer access."""
    m = _module_of(op)
    return m is not None and ATTR in m.attributes


def enable(module_op: ir.Operation) -> None:
    module_op.attributes[ATTR] = ir.UnitAttr.get(module_op.context)


def home_device(value: ir.Value) -> int | None:
    """The device whose memory holds `value`: its memory space, or, for a
    peer view, the device of the buffer it views."""
    dev = device_of(value.type)
    op = view_op(value)
    while op is not None:
        src = op.operands[0]
        d = device_of(src.type)
        if d is None:  # above the placement cast: a plain memref
            break
        dev = d
        op = view_op(src)
    return dev


def peer_view(value: ir.Value, device: int) -> ir.Value:
    """`value` (a placed buffer) as `device` addresses it; itself when it is
    placed there already."""
    if device_of(value.type) == device:
        return value
    return memref.memory_space_cast(on_device(value.type, device), value)
