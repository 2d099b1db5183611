"""Reading tool input the way mlir-opt does: any bytes, text or bytecode,
split into chunks, parsed with the input's own file name in every location.
"""
import sys

from mlir import ir

BYTECODE_MAGIC = b"ML\xefR"
DEFAULT_MARKER = "// -----"
STDIN_NAME = "<stdin>"  # what mlir-opt calls it in locations


def read_input(path):
    """(bytes, name for locations). Raises OSError (a directory too)."""
    if path == "-":
        return sys.stdin.buffer.read(), STDIN_NAME
    with open(path, "rb") as f:
        return f.read(), path


def is_bytecode(data):
    return data.startswith(BYTECODE_MAGIC)


def split_chunks(data, marker):
    """[(chunk bytes, first line)]; each chunk is padded with the newlines
    before it, so line numbers in it are the file's. The marker must be the
    whole line (spaces around it allowed), as in upstream tests."""
    if not marker or is_bytecode(data):
        return [(data, 1)]
    mark = marker.encode()
    out, cur, start = [], [], 1
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        if line.strip() == mark:
            out.append((b"\n" * (start - 1) + b"\n".join(cur), start))
            cur, start = [], i + 2
        else:
            cur.append(line)
    out.append((b"\n" * (start - 1) + b"\n".join(cur), start))
    return out


def as_text(data):
    """The chunk as str for our own scans (guard, expected-* lines); bytes
    that are not UTF-8 become U+FFFD, which none of those scans look for."""
    return data.decode("utf-8", errors="replace")


def parse(data, name, implicit_module=True):
    """Parses text or bytecode into an Operation (the top-level op).

    Module.parse names its buffer "-": locations are renamed to `name`
    afterwards. Without an implicit module the bindings' Operation.parse
    takes the name itself and, like mlir-opt, wants exactly one top-level
    op. Returns (owner to keep alive, top-level Operation); raises
    ir.MLIRError."""
    if not implicit_module and not is_bytecode(data):
        op = ir.Operation.parse(as_text(data), source_name=name).operation
        return op, op
    module = ir.Module.parse(data)
    _rename_locations(module.operation, name)
    return module, module.operation


def _rename_locations(root, name):
    cache = {}

    def fix(loc):
        key = str(loc)
        if key not in cache:
            cache[key] = _renamed(loc, name)
        return cache[key]

    def visit(op):
        op.location = fix(op.location)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    arg.set_location(fix(arg.location))
        return ir.WalkResult.ADVANCE
    root.walk(visit)


def _renamed(loc, name):
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
