"""Collective-level modules for the common case (used by coll-gen and tests)."""
from typing import Any, cast

from mlir import ir
from mlir.dialects import func

from . import builders, load_dialect, peers
from .ops import COLLECTIVE_OPS, OPS, CollectiveOp
from .types import ELEMENT_TYPES


def parse_shape(text: str) -> list[int]:
    """'4x100' -> [4, 100]; '' or 'scalar' -> [] (rank 0)."""
    if text in ("", "scalar"):
        return []
    dims = [int(d) for d in text.lower().split("x")]
    if any(d < 0 for d in dims):
        raise ValueError(f"negative dimension in shape '{text}'")
    return dims


def element_type(name: str) -> ir.Type:
    if name not in ELEMENT_TYPES:
        raise ValueError(f"unsupported element type '{name}'; expected one of {', '.join(ELEMENT_TYPES)}")
    return ir.Type.parse(name)


def all_reduce_module(devices: int, shape: list[int], dtype: str, kind: str = "sum", to_device: int | None = None,
                      strategy: str | None = None, threshold: int | None = None, name: str = "all_reduce",
                      peer_access: bool = False) -> str:
    """Text of a module with one function @name(x0..x{N-1}, outputs...) that
    all-reduces the inputs (`peer_access`: the devices address each other's
    memory, ir/peers.py). Needs a current Context."""
    load_dialect()
    with ir.Location.unknown():
        module = ir.Module.create()
        if peer_access:
            peers.enable(module.operation)
        mt = ir.MemRefType.get(list(shape), element_type(dtype))
        n_out = 1 if to_device is not None else devices
        with ir.InsertionPoint(module.body):
            f = func.FuncOp(name, ir.FunctionType.get([mt] * (devices + n_out), []))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            block = f.add_entry_block()
            with ir.InsertionPoint(block):
                args = list(block.arguments)
                tok = builders.all_reduce(args[:devices], args[devices:], kind,
                                          list(range(devices)), strategy=strategy,
                                          to_device=to_device, threshold=threshold)
                builders.wait([tok])
                func.ReturnOp([])
        return str(module)


def _class(op: str) -> type[CollectiveOp]:
    cls = OPS.get("coll." + op)
    if cls is None or cls not in COLLECTIVE_OPS:
        raise ValueError(f"unknown collective '{op}'; expected one of: "
                         f"{', '.join(c.short_name() for c in COLLECTIVE_OPS)}")
    return cls


def _axes(cls: type[CollectiveOp], axis: int | None, split_axis: int | None,
          concat_axis: int | None) -> dict[str, int | None]:
    """{axis attribute: value}: `axis` is the one axis of a collective
    that has one (coll-gen --axis), split/concat those of all_to_all."""
    given = {"split_axis": split_axis, "concat_axis": concat_axis}
    return {a: given.get(a, axis) if len(cls.AXES) > 1 else axis for a in cls.AXES}


def output_shape(op: str, shape: list[int], devices: int, axis: int | None = None, split_axis: int | None = None,
                 concat_axis: int | None = None) -> list[int]:
    """The output shape of collective `op` (a name like 'reduce_scatter')
    over `devices` inputs of `shape`."""
    cls = _class(op)
    # An axis left out (None) raises in result_shape, as it always did.
    axes = cast(list[int], list(_axes(cls, axis, split_axis, concat_axis).values()))
    return cls.result_shape(list(shape), devices, axes)


def collective_module(op: str, devices: int, shape: list[int], dtype: str, kind: str = "sum",
                      strategy: str | None = None, root: int | None = None, axis: int | None = None,
                      split_axis: int | None = None, concat_axis: int | None = None, in_place: bool = False,
                      to_device: int | None = None, threshold: int | None = None, name: str | None = None,
                      order: str | None = None, **arrays: list[int]) -> str:
    """Text of a module with one function @name(x0.., y0..) running
    collective `op` (all_reduce, reduce_scatter, all_gather, reduce,
    broadcast, all_to_all, permute). In place, the outputs are the inputs
    (the function takes no argument for them). `arrays`: the collective's
    own array attributes (its ARRAYS, e.g. pairs=[0, 1, 1, 0]; absent: its
    default_arrays). Needs a current Context; axes must be in range (the
    verifier reports the rest)."""
    load_dialect()
    cls = _class(op)
    unknown = sorted(set(arrays) - set(cls.ARRAYS))
    if unknown:
        raise ValueError(f"{op} has no attribute '{unknown[0]}'")
    arrays = {**cls.default_arrays(devices), **arrays}
    name = name or op
    n_in, n_out = cls.buffers(devices, to_device)
    out_shape = output_shape(op, shape, devices, axis, split_axis, concat_axis)
    attrs: dict[str, Any] = dict(strategy=strategy, to_device=to_device, threshold=threshold)
    if cls.HAS_KIND:
        attrs["kind"] = kind
        attrs["order"] = order  # (None: absent, the canonical contract)
    if cls.ROOTED:
        attrs["root"] = root
    attrs.update(_axes(cls, axis, split_axis, concat_axis))
    attrs.update(arrays)
    with ir.Location.unknown():
        module = ir.Module.create()
        el = element_type(dtype)
        in_t = ir.MemRefType.get(list(shape), el)
        out_t = ir.MemRefType.get(out_shape, el)
        alias: list[int | None] = [None] * n_out
        if in_place:
            alias = _in_place_outputs(cls, list(range(n_in)), n_out, devices, root, to_device)
        types = [in_t] * n_in + [out_t] * alias.count(None)
        with ir.InsertionPoint(module.body):
            f = func.FuncOp(name, ir.FunctionType.get(types, []))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            block = f.add_entry_block()
            with ir.InsertionPoint(block):
                args = list(block.arguments)
                ins, rest = args[:n_in], iter(args[n_in:])
                outs = [ins[a] if a is not None else next(rest) for a in alias]
                tok = builders.collective(op, ins, outs, list(range(devices)), **attrs)
                builders.wait([tok])
                func.ReturnOp([])
        return str(module)


def _in_place_outputs(cls: type[CollectiveOp], ins: list[int], n_out: int, devices: int, root: int | None,
                      to_device: int | None) -> list[int | None]:
    """The outputs of the in-place form: each output is the input on its
    device (ValueError where the op or its root has none)."""
    op = cls.short_name()
    if not cls.IN_PLACE:
        raise ValueError(f"{op} has no in-place form")
    group = list(range(devices))
    in_devs, out_devs = cls.placement(group, root, to_device)
    if any(d is None or not 0 <= d < devices for d in in_devs + out_devs):
        raise ValueError(f"in-place {op} needs its {'root' if cls.ROOTED else 'destination'} in the group")
    # an output aliases the input on its device, where there is one
    return [ins[in_devs.index(d)] if d in in_devs else None for d in out_devs]
