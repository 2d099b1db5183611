"""Collective-level modules for the common case (used by coll-gen and tests)."""
import operator
import re
from collections.abc import Sequence
from typing import Any, cast

from mlir import ir
from mlir.dialects import func

from . import MAX_DEVICES, builders, load_dialect, peers
from .kinds import ELEMENTS, KINDS
from .ops import COLLECTIVE_OPS, OPS, CollectiveOp
from .types import ELEMENT_TYPES
from .verifier import verify

SYMBOL_NAME = re.compile(r"[A-Za-z_][\w$.]*")  # a function name collective_module (and coll-gen --name) takes
MAX_DIM = 2 ** 62  # a dimension at or above it overflows the byte counts


class GenerateError(ValueError):
    """What the verifier finds wrong with the module collective_module's
    arguments make (a group that does not divide an axis, a bitwise kind
    on floats, ...): `findings`, its messages."""

    def __init__(self, findings: Sequence[str]) -> None:
        super().__init__("; ".join(findings))
        self.findings = list(findings)


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


def axis_attributes(cls: type[CollectiveOp], axis: int | None = None, **named: Any) -> dict[str, int | None]:
    """{axis attribute: value} of `cls` (its AXES): each one given by its
    name (all_to_all's split_axis=...), else `axis` (coll-gen --axis: the
    one axis of a collective that has one, the default of the others).
    Names that are not axes of `cls` are ignored."""
    return {a: named[a] if named.get(a) is not None else axis for a in cls.AXES}


def output_shape(op: str, shape: list[int], devices: int, axis: int | None = None, **named: Any) -> list[int]:
    """The output shape of collective `op` (a name like 'reduce_scatter')
    over `devices` inputs of `shape` (axes as in axis_attributes)."""
    cls = _class(op)
    # An axis left out (None) raises in result_shape, as it always did.
    axes = cast(list[int], list(axis_attributes(cls, axis, **named).values()))
    return cls.result_shape(list(shape), devices, axes)


def collective_module(op: str, devices: int, shape: list[int], dtype: str, kind: str = "sum",
                      strategy: str | None = None, root: int | None = None, axis: int | None = None,
                      in_place: bool = False, to_device: int | None = None, threshold: int | None = None,
                      name: str | None = None, order: str | None = None, **named: Any) -> str:
    """Text of a module with one function @name(x0.., y0..) running
    collective `op` (all_reduce, reduce_scatter, all_gather, reduce,
    broadcast, all_to_all, permute). In place, the outputs are the inputs
    (the function takes no argument for them). `arrays`: the collective's
    own axis attributes by name (its AXES, e.g. split_axis=0; else `axis`)
    and array attributes (its ARRAYS, e.g. pairs=[0, 1, 1, 0]; absent: its
    default_arrays). Needs a current Context; axes must be in range (the
    verifier reports the rest)."""
    load_dialect()
    cls = _class(op)
    axis = _check_arguments(cls, devices, shape, dtype, kind, strategy, root, axis, in_place, to_device,
                            threshold, name, named)
    arrays = {k: v for k, v in named.items() if k not in cls.AXES}
    unknown = sorted(set(arrays) - set(cls.ARRAYS))
    if unknown:
        raise ValueError(f"{op} has no attribute '{unknown[0]}'")
    arrays = {**cls.default_arrays(devices), **arrays}
    name = name or op
    n_in, n_out = cls.buffers(devices, to_device)
    out_shape = output_shape(op, shape, devices, axis, **named)
    attrs: dict[str, Any] = dict(strategy=strategy, to_device=to_device, threshold=threshold)
    if cls.HAS_KIND:
        attrs["kind"] = kind
        attrs["order"] = order  # (None: absent, the canonical contract)
    if cls.ROOTED:
        attrs["root"] = root
    attrs.update(axis_attributes(cls, axis, **named))
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
        findings = verify(module.operation)
        if findings:
            raise GenerateError([m for _, m in findings])
        return str(module)


def _integer(value: Any) -> bool:
    """An int (numpy's too), not a bool."""
    if isinstance(value, bool):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _check_arguments(cls: type[CollectiveOp], devices: Any, shape: Any, dtype: Any, kind: Any, strategy: Any,
                     root: Any, axis: Any, in_place: Any, to_device: Any, threshold: Any, name: Any,
                     named: dict[str, Any]) -> int | None:
    """Refuses collective_module's arguments that cannot make a module (a
    TypeError or ValueError naming the argument and what it expects);
    what the module's verifier checks (a group that divides the axis, a
    kind for the element type, pairs, ...) is left to it. Returns `axis`
    (0 where the collective has an axis and none is given, as coll-gen's
    --axis)."""
    op = cls.short_name()
    if not _integer(devices):
        raise TypeError(f"devices must be an int in 1..{MAX_DEVICES}, got {type(devices).__name__} {devices!r}")
    if not 1 <= devices <= MAX_DEVICES:
        raise ValueError(f"devices must be in 1..{MAX_DEVICES}, got {devices}")
    if not isinstance(shape, (list, tuple)) or not all(_integer(d) for d in shape):
        raise TypeError(f"shape must be a list of non-negative ints (e.g. [4, 100]; [] for a scalar), got {shape!r}")
    if any(not 0 <= d < MAX_DIM for d in shape):
        raise ValueError(f"shape must be a list of non-negative ints below 2^62, got {list(shape)!r}")
    if not isinstance(dtype, str) or dtype not in ELEMENT_TYPES:
        raise ValueError(f"dtype must be one of {', '.join(ELEMENT_TYPES)}, got {dtype!r}")
    if cls.HAS_KIND and (not isinstance(kind, str) or kind not in KINDS):
        valid = [k for k, v in KINDS.items() if not v.bitwise or ELEMENTS[dtype].integer]
        raise ValueError(f"kind must be one of the reduction kinds valid for {dtype}: {', '.join(valid)}; "
                         f"got {kind!r}")
    if strategy is not None and strategy not in ("auto",) + cls.STRATEGIES:
        raise ValueError(f"strategy must be one of {op}'s: {', '.join(('auto',) + cls.STRATEGIES)} (or None); "
                         f"got {strategy!r}")
    if cls.ROOTED and root is None:
        raise ValueError(f"{op} needs root (the root device)")
    for arg, v in (("root", root), ("to_device", to_device), ("threshold", threshold)):
        if v is not None and not (_integer(v) and -2 ** 63 <= v < 2 ** 63):
            raise TypeError(f"{arg} must be None or an int that fits in 64 bits, got {v!r}")
    if not isinstance(in_place, bool):
        raise TypeError(f"in_place must be a bool, got {type(in_place).__name__} {in_place!r}")
    if name is not None and not (isinstance(name, str) and SYMBOL_NAME.fullmatch(name)):
        raise ValueError(f"name must be a symbol name like {op}, got {name!r}")
    if cls.AXES and axis is None:
        axis = 0
    for key, a in [("axis", axis)] * bool(cls.AXES) + [(k, named[k]) for k in cls.AXES if named.get(k) is not None]:
        if not (_integer(a) and 0 <= a < len(shape)):
            raise ValueError(f"{key} must be an int with 0 <= {key} < {len(shape)} (the rank of shape "
                             f"{list(shape)!r}), got {a!r}")
    return cast(int | None, axis)


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
