"""Types and attributes of the coll dialect, and memref helpers."""
from functools import lru_cache

from mlir import ir

from .kinds import ELEMENT_TYPES  # noqa: F401 - re-exported


def token_type():
    return ir.Type.parse("!coll.token")


def device_attr(device):
    return ir.Attribute.parse(f"#coll.device<{int(device)}>")


_DEVICES = {}  # memory-space attribute -> device id (printing one is slow)


def device_of(type_):
    """Device id of a memref type placed with #coll.device<i>, else None."""
    space = ir.MemRefType(type_).memory_space
    if space is None:
        return None
    try:
        return _DEVICES[space]
    except KeyError:
        pass
    text = str(space)
    dev = None
    if text.startswith("#coll.device<"):
        try:
            dev = int(text[len("#coll.device<"):].split(":")[0].split(">")[0].strip())
        except ValueError:  # #coll.device<true>: not a device id
            dev = None
    if len(_DEVICES) > 65536:  # entries keep their Context alive
        _DEVICES.clear()
    _DEVICES[space] = dev
    return dev


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


_FLAT = {}  # (context, text) -> type: parsing the same type again is slow


def flat_type(elem, length, device=None, offset=None):
    """memref<length x elem> on `device`, with a strided layout when `offset`
    is given (the type of a subview at that offset)."""
    text = _flat_text(str(elem), int(length), device, offset)
    key = (ir.Context.current, text)
    t = _FLAT.get(key)
    if t is None:
        if len(_FLAT) > 65536:  # entries keep their Context alive
            _FLAT.clear()
        t = _FLAT[key] = ir.Type.parse(text)
    return t


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
