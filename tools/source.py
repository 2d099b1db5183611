"""Reading tool input the way mlir-opt does: any bytes, text or bytecode,
split into chunks, parsed with the input's own file name in every location.
"""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from mlir import ir

from coll.frontends.sniff import BYTECODE_MAGIC, claimed_by

DEFAULT_MARKER = "// -----"
STDIN_NAME = "<stdin>"  # what mlir-opt calls it in locations


def read_input(path: str) -> tuple[bytes, str]:
    """(bytes, name for locations). Raises OSError (a directory too)."""
    if path == "-":
        return sys.stdin.buffer.read(), STDIN_NAME
    with open(path, "rb") as f:
        return f.read(), path


def is_bytecode(data: bytes) -> bool:
    return data.startswith(BYTECODE_MAGIC)


def split_chunks(data: bytes, marker: str) -> tuple[list[tuple[bytes, tuple[int, int]]], list[tuple[int, int]]]:
    """Splits like mlir-opt (llvm::splitAndProcessBuffer): at every
    occurrence of `marker`, mid-line too; text that matches all but its last
    two characters is a near miss (a warning, not a split).

    Returns ([(chunk bytes, (line, col) where it starts)], [(line, col) of
    near misses]).
    Each chunk is padded with the newlines and spaces before it, so that
    lines and columns in it are the file's."""
    if not marker or is_bytecode(data):
        return [(data, (1, 1))], []
    mark = marker.encode()
    head, tail = (mark[:-2], mark[-2:]) if len(mark) > 2 else (mark, b"")
    pieces = data.split(head)
    starts, near, pos = [0], [], len(pieces[0])
    for piece in pieces[1:]:
        pos += len(head)
        if piece.startswith(tail):
            starts.append(pos + len(tail))
        else:
            near.append(_line_col(data, pos))
        pos += len(piece)
    chunks = []
    for k, start in enumerate(starts):
        end = starts[k + 1] - len(mark) if k + 1 < len(starts) else len(data)
        line, col = _line_col(data, start)
        chunks.append((b"\n" * (line - 1) + b" " * (col - 1) + data[start:end], (line, col)))
    return chunks, near


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


def as_text(data: bytes) -> str:
    """The chunk as str for our own scans (guard, expected-* lines); bytes
    that are not UTF-8 become U+FFFD, which none of those scans look for."""
    return data.decode("utf-8", errors="replace")


def sniffed(data: bytes | str) -> ModuleType | None:
    """The frontend that says, from the bytes, that it parses this input
    itself (its `sniff`: JAX's StableHLO), or None."""
    name = claimed_by(data if isinstance(data, bytes) else data.encode())
    if name is None:
        return None
    from coll.frontends import BY_NAME  # loads the frontends, only for input one of them claims
    return BY_NAME[name]


def parse(data: bytes, name: str, implicit_module: bool = True) -> tuple[Any, ir.Operation]:
    """Parses text or bytecode into an Operation (the top-level op).

    Module.parse names its buffer "-": locations are renamed to `name`
    afterwards. Without an implicit module the bindings' Operation.parse
    takes the name itself and, like mlir-opt, wants exactly one top-level
    op. Returns (owner to keep alive, top-level Operation); raises
    ir.MLIRError."""
    if not implicit_module and not is_bytecode(data):
        op = ir.Operation.parse(as_text(data), source_name=name).operation
        return op, op
    frontend = sniffed(data)
    if frontend is not None:  # a form coll's parser cannot read alone (StableHLO's dialects)
        module = frontend.parse(data)
        _rename_locations(module.operation, name)
        return module, module.operation
    try:
        module = ir.Module.parse(data)
    except RuntimeError:
        # A diagnostic that quotes bytes that are not UTF-8 cannot become a
        # Python str (nanobind, 22.1.8): parse the text with U+FFFD for
        # them, which gives the same error, printable.
        if is_bytecode(data):
            raise
        module = ir.Module.parse(as_text(data))
    _rename_locations(module.operation, name)
    return module, module.operation


def _rename_locations(root: ir.Operation, name: str) -> None:
    cache: dict[str, ir.Location] = {}

    def fix(loc: ir.Location) -> ir.Location:
        key = str(loc)
        if key not in cache:
            cache[key] = _renamed(loc, name)
        return cache[key]

    def visit(op: ir.Operation) -> ir.WalkResult:
        op.location = fix(op.location)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    arg.set_location(fix(arg.location))
        return ir.WalkResult.ADVANCE
    root.walk(visit, ir.WalkOrder.POST_ORDER)  # the bindings' default, said


def _renamed(loc: ir.Location, name: str) -> ir.Location:
    """`loc` with every file "-" replaced by `name` (nested locations too)."""
    if loc.is_a_file():
        if loc.filename != "-":
            return loc
        return ir.Location.file(name, loc.start_line, loc.start_col, loc.end_line, loc.end_col)
    if loc.is_a_name():
        return ir.Location.name(loc.name_str, childLoc=_renamed(loc.child_loc, name))
    if loc.is_a_callsite():
        return ir.Location.callsite(_renamed(loc.callee, name), [_renamed(loc.caller, name)])
    if loc.is_a_fused():
        if str(loc).startswith("loc(fused<"):
            return loc  # its metadata is not readable from the bindings
        return ir.Location.fused([_renamed(l, name) for l in loc.locations])
    return loc
