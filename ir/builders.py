"""Python builders for every coll op, usable from any frontend.

All builders insert at the current InsertionPoint and Location, like the
upstream generated builders.
"""
from mlir import ir

from .types import token_type


def _tokens(deps):
    return [d for d in deps if d is not None]


def all_reduce(inputs, outputs, kind, devices, strategy=None, to_device=None, threshold=None):
    """%token = coll.all_reduce(inputs..., outputs...): outputs <- (+)_i inputs[i].

    inputs[i] lives on devices[i]. With `to_device`, there is one output on
    that device; otherwise outputs[j] lives on devices[j].
    """
    attrs = {
        "kind": ir.StringAttr.get(kind),
        "devices": ir.DenseI64ArrayAttr.get([int(d) for d in devices]),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(inputs), len(outputs)]),
    }
    i64 = ir.IntegerType.get_signless(64)
    if strategy is not None:
        attrs["strategy"] = ir.StringAttr.get(strategy)
    if to_device is not None:
        attrs["to_device"] = ir.IntegerAttr.get(i64, int(to_device))
    if threshold is not None:
        attrs["threshold"] = ir.IntegerAttr.get(i64, int(threshold))
    op = ir.Operation.create("coll.all_reduce", results=[token_type()],
                             operands=list(inputs) + list(outputs), attributes=attrs)
    return op.result


def alloc(type_):
    """%buf = coll.alloc : type_ (the device is type_'s memory space)."""
    return ir.Operation.create("coll.alloc", results=[type_]).result


def copy(source, target, deps=()):
    """%token = coll.copy(source -> target) after deps."""
    return ir.Operation.create("coll.copy", results=[token_type()],
                               operands=[source, target] + _tokens(deps)).result


def combine(lhs, rhs, output, kind, deps=()):
    """%token = coll.combine: output = lhs (+) rhs[0] (+) ..., after deps."""
    deps = _tokens(deps)
    attrs = {
        "kind": ir.StringAttr.get(kind),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(rhs), 1, len(deps)]),
    }
    return ir.Operation.create("coll.combine", results=[token_type()],
                               operands=[lhs] + list(rhs) + [output] + deps,
                               attributes=attrs).result


def join(deps):
    """%token = coll.join(deps...)."""
    return ir.Operation.create("coll.join", results=[token_type()],
                               operands=_tokens(deps)).result


def wait(deps):
    """coll.wait(deps...): the host blocks until they complete."""
    return ir.Operation.create("coll.wait", results=[], operands=_tokens(deps))


def subview(source, offsets, sizes, result_type):
    """memref.subview with static offsets and sizes, unit strides. Built with
    Operation.create: the generated builder's mixed static/dynamic dispatch
    costs four times as much, and lowerings emit one per chunk and device."""
    attrs = {
        "static_offsets": ir.DenseI64ArrayAttr.get([int(o) for o in offsets]),
        "static_sizes": ir.DenseI64ArrayAttr.get([int(s) for s in sizes]),
        "static_strides": ir.DenseI64ArrayAttr.get([1] * len(sizes)),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
    }
    return ir.Operation.create("memref.subview", results=[result_type], operands=[source],
                               attributes=attrs).result


def implements(inputs, outputs, token, collective, **attrs):
    """coll.implements(inputs..., outputs..., token): the claim that the
    program ending in `token` computes `collective`. `attrs`: kind (str),
    devices / axes (int lists), to_device / root (int); None ones are left out."""
    i64 = ir.IntegerType.get_signless(64)
    a = {"op": ir.StringAttr.get(collective),
         "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(inputs), len(outputs), 1])}
    for name, v in attrs.items():
        if v is None:
            continue
        if isinstance(v, str):
            a[name] = ir.StringAttr.get(v)
        elif isinstance(v, (list, tuple)):
            a[name] = ir.DenseI64ArrayAttr.get([int(x) for x in v])
        else:
            a[name] = ir.IntegerAttr.get(i64, int(v))
    return ir.Operation.create("coll.implements", operands=list(inputs) + list(outputs) + [token],
                               attributes=a)
