"""Collective-level modules for the common case (used by coll-gen and tests)."""
from mlir import ir
from mlir.dialects import func

from . import builders, load_dialect, peers
from .types import ELEMENT_TYPES


def parse_shape(text):
    """'4x100' -> [4, 100]; '' or 'scalar' -> [] (rank 0)."""
    if text in ("", "scalar"):
        return []
    dims = [int(d) for d in text.lower().split("x")]
    if any(d < 0 for d in dims):
        raise ValueError(f"negative dimension in shape '{text}'")
    return dims


def element_type(name):
    if name not in ELEMENT_TYPES:
        raise ValueError(f"unsupported element type '{name}'; expected one of {', '.join(ELEMENT_TYPES)}")
    return ir.Type.parse(name)


def all_reduce_module(devices, shape, dtype, kind="sum", to_device=None,
                      strategy=None, threshold=None, name="all_reduce", peer_access=False):
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
