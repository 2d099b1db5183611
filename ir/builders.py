"""Python builders for every coll op, usable from any frontend.

All builders insert at the current InsertionPoint and Location, like the
upstream generated builders.
"""
from mlir import ir

from .types import token_type


def _tokens(deps):
    return [d for d in deps if d is not None]


def collective(name, inputs, outputs, devices, deps=(), **attrs):
    """%token = coll.<name>(inputs..., outputs..., deps...). `attrs`: kind,
    strategy (str); root, to_device, threshold, *_axis (int); None: absent."""
    deps = _tokens(deps)
    i64 = ir.IntegerType.get_signless(64)
    a = {"devices": ir.DenseI64ArrayAttr.get([int(d) for d in devices]),
         "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(inputs), len(outputs), len(deps)])}
    for key, value in attrs.items():
        if value is not None:
            a[key] = (ir.StringAttr.get(value) if isinstance(value, str)
                      else ir.IntegerAttr.get(i64, int(value)))
    op = ir.Operation.create(f"coll.{name}", results=[token_type()],
                             operands=list(inputs) + list(outputs) + deps, attributes=a)
    return op.result


def all_reduce(inputs, outputs, kind, devices, strategy=None, to_device=None, threshold=None,
               deps=()):
    """%token = coll.all_reduce(inputs..., outputs..., deps...): outputs <- (+)_i inputs[i].

    inputs[i] lives on devices[i]. With `to_device`, there is one output on
    that device; otherwise outputs[j] lives on devices[j].
    """
    return collective("all_reduce", inputs, outputs, devices, deps, kind=kind, strategy=strategy,
                      to_device=to_device, threshold=threshold)


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
