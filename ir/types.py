"""Types and attributes of the coll dialect, and memref helpers."""
import os
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from mlir import ir

from .kinds import ELEMENT_TYPES  # noqa: F401 - re-exported

# Printing a type or attribute costs 5-15 us in the bindings (a stream per
# call), a dict lookup on the uniqued object under 1 us: facts read from
# text are memoized by the object, in tables made by memo_table. An entry
# keeps its Context, and all the IR in it, alive: the tables keep the
# entries of the KEEP_CONTEXTS contexts make_context made last (a test
# worker that compiled 1500 programs held 9 GB of dead contexts through
# them, 2026-12-07), and at most _BOUND entries.
_BOUND = 1 << 18  # a 256-device ring has 2^16 distinct slice types
KEEP_CONTEXTS = 4
_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")
_TABLES: list[dict[Any, Any]] = []
_RECENT: list[ir.Context] = []  # the contexts make_context made last, oldest first
_PID = os.getpid()


def memo_table(table: dict[_K, _V]) -> dict[_K, _V]:
    """`table` (empty), registered to drop the entries of old contexts."""
    _TABLES.append(table)
    return table


def made_context(ctx: ir.Context) -> None:
    """Called by make_context with each context it makes: the tables drop
    the entries of every context but the KEEP_CONTEXTS last (one still in
    use then computes them again)."""
    _RECENT.append(ctx)
    if len(_RECENT) <= KEEP_CONTEXTS or os.getpid() != _PID:
        return  # (a forked child, tools/parse_guard.py's, must not destroy a context: its threads are not there)
    del _RECENT[0]
    for table in _TABLES:  # (a snapshot: another thread may fill a table meanwhile)
        for k, v in list(table.items()):
            if not any(_context_of(k, v) is c for c in _RECENT):
                table.pop(k, None)


def _context_of(key: object, value: object) -> ir.Context | None:
    """The context an entry's IR objects live in: the key's (a context, an
    IR object, a tuple that starts with a context), else the value's."""
    for x in (key[0] if isinstance(key, tuple) and key else key, value):
        if isinstance(x, ir.Context):
            return x
        ctx = getattr(x, "context", None)
        if isinstance(ctx, ir.Context):
            return ctx
    return None


def _memo(table: dict[_K, _V], key: _K, compute: Callable[[], _V]) -> _V:
    try:
        return table[key]
    except KeyError:
        pass
    if len(table) > _BOUND:
        table.clear()
    value = table[key] = compute()
    return value


_TOKEN_TYPES: dict[ir.Context | None, ir.Type | None] = memo_table({})  # context -> !coll.token


def token_type() -> ir.Type:
    t = token_type_of(ir.Context.current)
    return t if t is not None else ir.Type.parse("!coll.token")  # raises: no coll dialect


def device_attr(device: int) -> ir.Attribute:
    return ir.Attribute.parse(f"#coll.device<{int(device)}>")


_DEVICES: dict[ir.Attribute, int | None] = memo_table({})  # memory-space attribute -> device id
_PLACED: dict[ir.Type, int | None] = memo_table({})  # type -> device id


def device_of(type_: ir.Type) -> int | None:
    """Device id of a memref type placed with #coll.device<i>, else None."""
    try:
        return _PLACED[type_]
    except KeyError:
        return _memo(_PLACED, type_, lambda: _space_device(ir.MemRefType(type_).memory_space))


def _space_device(space: ir.Attribute | None) -> int | None:
    if space is None:
        return None
    return _memo(_DEVICES, space, lambda: _device_text(str(space)))


def _device_text(text: str) -> int | None:
    if text.startswith("#coll.device<"):
        try:
            return int(text[len("#coll.device<"):].split(":")[0].split(">")[0].strip())
        except ValueError:  # #coll.device<true>: not a device id
            return None
    return None


def token_type_of(ctx: ir.Context | None) -> ir.Type | None:
    """!coll.token in `ctx`, or None where the dialect is not loaded."""
    return _memo(_TOKEN_TYPES, ctx, lambda: _parse_token(ctx))


def is_token(type_: ir.Type) -> bool:
    # Compared with the context's token type, not memoized by type: most
    # types asked about are memrefs, of which a large program has many.
    token = token_type_of(type_.context)
    return type_ == token if token is not None else str(type_) == "!coll.token"


def _parse_token(ctx: ir.Context | None) -> ir.Type | None:
    """!coll.token in `ctx`, or None where the dialect is not loaded."""
    try:
        return ir.Type.parse("!coll.token", ctx)
    except Exception:  # MLIRError: a context without the coll dialect
        return None


_NAMES: dict[ir.Type, str] = memo_table({})  # element type -> its text


def element_name(type_: ir.Type) -> str:
    """'f32', 'i1', ... for a memref or element type."""
    if isinstance(type_, ir.MemRefType):  # the bindings downcast types
        type_ = type_.element_type
    try:
        return _NAMES[type_]
    except KeyError:
        return _memo(_NAMES, type_, lambda: _element_text(type_))


def _element_text(type_: ir.Type) -> str:
    try:
        type_ = ir.MemRefType(type_).element_type
    except ValueError:
        pass
    return str(type_)


def numel(type_: ir.Type) -> int:
    n = 1
    for d in ir.MemRefType(type_).shape:
        n *= d
    return n


def contiguous(type_: ir.Type) -> bool:
    """A static-strided memref whose elements follow each other row-major
    (unit dimensions aside), at any offset: one memcpy, one message. A
    block's strided view (collectives/emit.py) is not."""
    m = ir.MemRefType(type_)
    try:
        strides, _ = m.get_strides_and_offset()
    except (ValueError, TypeError):  # a layout that is not strided
        return False
    want = 1
    for d, s in reversed(list(zip(m.shape, strides))):
        if d != 1 and s != want:
            return False
        want *= d
    return True


def flat_offset(type_: ir.Type) -> int | None:
    """The `offset` flat_type takes for the rank-1 view memref.collapse_shape
    (or expand_shape) makes of contiguous `type_`: None for an identity
    layout (the view keeps it), else the static offset, 0 included (a
    strided source collapses to `strided<[1]>` even at offset 0)."""
    m = ir.MemRefType(type_)
    layout = m.layout
    if isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(m.rank):
        return None
    return int(m.get_strides_and_offset()[1])


# (context, elem, length, device, offset) -> type: parsing is slow
_FLAT: dict[tuple[ir.Context | None, ir.Type, int, int | None, int | None], ir.MemRefType] = memo_table({})


def flat_type(elem: ir.Type, length: int, device: int | None = None,
              offset: int | None = None) -> ir.MemRefType:
    """memref<length x elem> on `device`, with a strided layout when `offset`
    is given (the type of a subview at that offset)."""
    ctx = ir.Context.current
    key = (ctx, elem, int(length), device, offset)
    try:
        return _FLAT[key]
    except KeyError:
        pass
    # MemRefType.get: half the cost of parsing its text.
    layout = None if offset is None else ir.StridedLayoutAttr.get(offset, [1], ctx)
    space = None if device is None else _memo(_SPACES, (ctx, device), lambda: device_attr(device))
    t = _memo(_FLAT, key, lambda: ir.MemRefType.get([int(length)], elem, layout, space,
                                                   loc=ir.Location.unknown(ctx)))
    _memo(_BUILT, t, lambda: (device, (int(length),), elem))
    return t


# type made by flat_type -> (device, shape, element type)
_BUILT: dict[ir.Type, tuple[int | None, tuple[int, ...], ir.Type]] = memo_table({})


def built_facts(type_: ir.Type) -> tuple[int | None, tuple[int, ...], ir.Type] | None:
    """(device, shape, element type) of a type flat_type made, else None: the
    verifier reads these instead of asking the bindings again (a large
    program has a slice type per op)."""
    return _BUILT.get(type_)


_SPACES: dict[tuple[ir.Context | None, int], ir.Attribute] = memo_table({})  # (context, device) -> #coll.device<device>


def on_device(type_: ir.Type, device: int) -> ir.MemRefType:
    """The same memref type, placed on `device`."""
    m = ir.MemRefType(type_)
    return ir.MemRefType.get(m.shape, m.element_type, m.layout, device_attr(device))
