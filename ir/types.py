"""Types and attributes of the coll dialect, and memref helpers."""
from functools import lru_cache

from mlir import ir

from .kinds import ELEMENT_TYPES  # noqa: F401 - re-exported


def token_type():
    return ir.Type.parse("!coll.token")


def device_attr(device):
    return ir.Attribute.parse(f"#coll.device<{int(device)}>")


def device_of(type_):
    """Device id of a memref type placed with #coll.device<i>, else None."""
    space = ir.MemRefType(type_).memory_space
    if space is None:
        return None
    text = str(space)
    if not text.startswith("#coll.device<"):
        return None
    try:
        return int(text[len("#coll.device<"):].split(":")[0].split(">")[0].strip())
    except ValueError:  # #coll.device<true>, <"x">: not a device id
        return None


def is_token(type_):
    return str(type_) == "!coll.token"


def element_name(type_):
    """'f32', 'i1', ... for a memref or element type."""
    try:
        type_ = ir.MemRefType(type_).element_type
    except ValueError:
        pass
    return str(type_)


def is_integer(type_):
    return element_name(type_).startswith("i")


def numel(type_):
    n = 1
    for d in ir.MemRefType(type_).shape:
        n *= d
    return n


def flat_type(elem, length, device=None, offset=None):
    """memref<length x elem> on `device`, with a strided layout when `offset`
    is given (the type of a subview at that offset)."""
    return ir.Type.parse(_flat_text(str(elem), int(length), device, offset))


@lru_cache(maxsize=4096)
def _flat_text(elem, length, device, offset):
    parts = [f"{length}x{elem}"]
    if offset is not None:
        parts.append(f"strided<[1], offset: {offset}>" if offset else "strided<[1]>")
    if device is not None:
        parts.append(f"#coll.device<{device}>")
    return "memref<" + ", ".join(parts) + ">"


def on_device(type_, device):
    """The same memref type, placed on `device`."""
    m = ir.MemRefType(type_)
    return ir.MemRefType.get(m.shape, m.element_type, m.layout, device_attr(device))
