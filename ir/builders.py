"""Python builders for every coll op, usable from any frontend.

All builders insert at the current InsertionPoint and Location, like the
upstream generated builders.
"""
from collections.abc import Iterable, Sequence

from mlir import ir

from .types import memo_table, token_type

# Dependencies: tokens, None for none.
Deps = Iterable[ir.Value | None]
# A keyword attribute of a collective: str, int, an int list, or None (absent).
AttrValue = str | int | list[int] | tuple[int, ...] | None


# (context, attribute class, values) -> dense array attribute
_DENSE: dict[tuple[ir.Context | None, type, tuple[int, ...]], ir.Attribute] = memo_table({})


def _dense(cls: type[ir.DenseI32ArrayAttr] | type[ir.DenseI64ArrayAttr], values: Iterable[int]) -> ir.Attribute:
    """`cls.get(values)` (DenseI32ArrayAttr, DenseI64ArrayAttr), built once
    per context: building one costs 5 us, and every copy, combine and slice
    the lowerings emit has one of a handful (segment sizes, slice sizes and
    strides)."""
    ints = tuple(int(v) for v in values)
    key = (ir.Context.current, cls, ints)
    attr = _DENSE.get(key)
    if attr is None:
        if len(_DENSE) > 4096:  # entries keep their Context alive
            _DENSE.clear()
        attr = _DENSE[key] = cls.get(list(ints))
    return attr


def _segments(sizes: Iterable[int]) -> ir.Attribute:
    return _dense(ir.DenseI32ArrayAttr, sizes)


def _i64s(values: Iterable[int]) -> ir.Attribute:
    return _dense(ir.DenseI64ArrayAttr, values)


def _tokens(deps: Deps) -> list[ir.Value]:
    return [d for d in deps if d is not None]


def _attrs(attrs: dict[str, AttrValue]) -> dict[str, ir.Attribute]:
    """{name: attribute} of a collective's keyword attributes (None: absent)."""
    i64 = ir.IntegerType.get_signless(64)
    out: dict[str, ir.Attribute] = {}
    for key, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, str):
            out[key] = ir.StringAttr.get(value)
        elif isinstance(value, (list, tuple)):
            out[key] = ir.DenseI64ArrayAttr.get([int(v) for v in value])
        else:
            out[key] = ir.IntegerAttr.get(i64, int(value))
    return out


def collective(name: str, inputs: Sequence[ir.Value], outputs: Sequence[ir.Value], devices: Iterable[int],
               deps: Deps = (), **attrs: AttrValue) -> ir.Value:
    """%token = coll.<name>(inputs..., outputs..., deps...). `attrs`: kind,
    strategy (str); root, to_device, threshold, *_axis (int); an integer
    list (e.g. a permute's pairs) becomes an array<i64>; None: absent."""
    tokens = _tokens(deps)
    a: dict[str, ir.Attribute] = {"devices": ir.DenseI64ArrayAttr.get([int(d) for d in devices]),
         "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(inputs), len(outputs), len(tokens)])}
    a.update(_attrs(attrs))
    op = ir.Operation.create(f"coll.{name}", results=[token_type()],
                             operands=list(inputs) + list(outputs) + tokens, attributes=a)
    return op.result


def tensor_collective(name: str, inputs: Sequence[ir.Value], result_types: Iterable[ir.Type],
                      devices: Iterable[int], deps: Deps = (),
                      **attrs: AttrValue) -> tuple[ir.Value, list[ir.Value]]:
    """The tensor form: %token, %results... = coll.<name>(inputs..., deps...)
    on tensors, one result type per output the memref form would have.
    Returns (token, [results]). `attrs` as for `collective`."""
    tokens = _tokens(deps)
    a: dict[str, ir.Attribute] = {"devices": ir.DenseI64ArrayAttr.get([int(d) for d in devices]),
         "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(inputs), 0, len(tokens)])}
    a.update(_attrs(attrs))
    op = ir.Operation.create(f"coll.{name}", results=[token_type()] + list(result_types),
                             operands=list(inputs) + tokens, attributes=a)
    return op.results[0], list(op.results)[1:]


def all_reduce(inputs: Sequence[ir.Value], outputs: Sequence[ir.Value], kind: str, devices: Iterable[int],
               strategy: str | None = None, to_device: int | None = None, threshold: int | None = None,
               deps: Deps = ()) -> ir.Value:
    """%token = coll.all_reduce(inputs..., outputs..., deps...): outputs <- (+)_i inputs[i].

    inputs[i] lives on devices[i]. With `to_device`, there is one output on
    that device; otherwise outputs[j] lives on devices[j].
    """
    return collective("all_reduce", inputs, outputs, devices, deps, kind=kind, strategy=strategy,
                      to_device=to_device, threshold=threshold)


def alloc(type_: ir.Type) -> ir.Value:
    """%buf = coll.alloc : type_ (the device is type_'s memory space)."""
    return ir.Operation.create("coll.alloc", results=[type_]).result


def copy(source: ir.Value, target: ir.Value, deps: Deps = ()) -> ir.Value:
    """%token = coll.copy(source -> target) after deps."""
    return ir.Operation.create("coll.copy", results=[token_type()],
                               operands=[source, target] + _tokens(deps)).result


def combine(lhs: ir.Value, rhs: Sequence[ir.Value], output: ir.Value, kind: str,
            deps: Deps = ()) -> ir.Value:
    """%token = coll.combine: output = lhs (+) rhs[0] (+) ..., after deps."""
    tokens = _tokens(deps)
    attrs = {
        "kind": ir.StringAttr.get(kind),
        "operandSegmentSizes": _segments((1, len(rhs), 1, len(tokens))),
    }
    return ir.Operation.create("coll.combine", results=[token_type()],
                               operands=[lhs] + list(rhs) + [output] + tokens,
                               attributes=attrs).result


def join(deps: Deps) -> ir.Value:
    """%token = coll.join(deps...)."""
    return ir.Operation.create("coll.join", results=[token_type()],
                               operands=_tokens(deps)).result


def wait(deps: Deps) -> ir.Operation:
    """coll.wait(deps...): the host blocks until they complete."""
    return ir.Operation.create("coll.wait", results=[], operands=_tokens(deps))


def subview(source: ir.Value, offsets: Iterable[int], sizes: Sequence[int],
            result_type: ir.Type) -> ir.Value:
    """memref.subview with static offsets and sizes, unit strides. Built with
    Operation.create: the generated builder's mixed static/dynamic dispatch
    costs four times as much, and lowerings emit one per chunk and device."""
    attrs = {
        "static_offsets": ir.DenseI64ArrayAttr.get([int(o) for o in offsets]),
        "static_sizes": _i64s(sizes),
        "static_strides": _i64s([1] * len(sizes)),
        "operandSegmentSizes": _segments((1, 0, 0, 0)),
    }
    return ir.Operation.create("memref.subview", results=[result_type], operands=[source],
                               attributes=attrs).result


def reinterpret(source: ir.Value, offset: int, sizes: Sequence[int], strides: Sequence[int],
                result_type: ir.Type) -> ir.Value:
    """memref.reinterpret_cast with a static offset, sizes and strides: a
    strided view of `source`'s memory (a block along a non-leading axis,
    one view whatever its number of rows)."""
    attrs = {
        "static_offsets": _i64s([offset]),
        "static_sizes": _i64s(sizes),
        "static_strides": _i64s(strides),
        "operandSegmentSizes": _segments((1, 0, 0, 0)),
    }
    return ir.Operation.create("memref.reinterpret_cast", results=[result_type], operands=[source],
                               attributes=attrs).result


def implements(inputs: Sequence[ir.Value], outputs: Sequence[ir.Value], token: ir.Value, collective: str,
               **attrs: AttrValue) -> ir.Operation:
    """coll.implements(inputs..., outputs..., token): the claim that the
    program ending in `token` computes `collective`. `attrs`: kind (str),
    devices / axes (int lists), to_device / root (int); None ones are left out."""
    i64 = ir.IntegerType.get_signless(64)
    a: dict[str, ir.Attribute] = {"op": ir.StringAttr.get(collective),
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
