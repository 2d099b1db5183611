"""Analysis of the explicit level: what a schedule costs.

Per function: copies (between devices; same-device copies are counted
apart), kernels (combines), bytes sent and received per device, distinct
(src, dst) device pairs, the critical path in dependent steps (each copy
or combine is one step; joins are free) and the rounds: copy rounds (the most
cross-device copies on one dependency chain).
"""
import json
import sys
from collections.abc import Iterator
from typing import Any

from mlir import ir

from ..core.errors import PassError
from ..core.registry import register
from ..ir.kinds import ELEMENTS
from ..ir.ops import Combine, Copy
from ..ir.ops import view as view_of
from ..ir.types import device_of, is_token
from ..ir.walk import find_ops


def nbytes(type_: ir.Type) -> int:
    """Bytes of a memref (i1: one byte per element); 0 for other types."""
    mt = ir.MemRefType(type_)
    n = 1
    for d in mt.shape:
        n *= d
    elem = ELEMENTS.get(str(mt.element_type))
    return n * elem.bytes if elem else 0


TRAFFIC_OPS = (Copy.NAME, Combine.NAME)  # the ops traffic_bytes counts


def traffic_bytes(root: ir.Operation | ir.Module | list[ir.Operation]) -> int:
    """Bytes the explicit program reads plus writes: a copy reads and writes
    its size, a combine reads every input and writes its output. `root`: an
    op to walk, or the TRAFFIC_OPS ops already found."""
    total = 0
    ops = root if isinstance(root, list) else find_ops(root, lambda name: name in TRAFFIC_OPS)
    for op in ops:
        if op.name == Copy.NAME:
            total += 2 * nbytes(Copy.of(op).target.type)
        else:
            c = Combine.of(op)
            total += (len(c.inputs) + 1) * nbytes(c.out.type)
    return total


def _func_ops(module_op: ir.Operation) -> Iterator[ir.Operation]:
    for region in module_op.regions:
        for block in region.blocks:
            for op in block.operations:
                if op.operation.name == "func.func":
                    yield op.operation


def analyze_function(func_op: ir.Operation) -> dict[str, Any]:
    copies = local_copies = kernels = 0
    sent: dict[int | None, int] = {}
    received: dict[int | None, int] = {}
    pairs: set[tuple[int | None, int | None]] = set()
    depth: dict[ir.Value, int] = {}
    rounds: dict[ir.Value, int] = {}
    critical = max_rounds = 0
    for block in func_op.regions[0].blocks:
        for view in block.operations:
            op = view.operation
            name = op.name
            if not name.startswith("coll."):
                continue
            v = view_of(op)
            d = max((depth.get(t, 0) for t in getattr(v, "deps", [])), default=0)
            r = max((rounds.get(t, 0) for t in getattr(v, "deps", [])), default=0)
            if name == "coll.copy":
                copy = Copy.of(op)
                src, dst = copy.source, copy.target
                s, t = device_of(src.type), device_of(dst.type)
                if s == t:
                    local_copies += 1
                else:
                    copies += 1
                    b = nbytes(src.type)
                    sent[s] = sent.get(s, 0) + b
                    received[t] = received.get(t, 0) + b
                    pairs.add((s, t))
                    r += 1
                d += 1
            elif name == "coll.combine":
                kernels += 1
                d += 1
            if op.results and is_token(op.results[0].type):
                depth[op.results[0]] = d
                rounds[op.results[0]] = r
            critical = max(critical, d)
            max_rounds = max(max_rounds, r)
    return {
        "copies": copies,
        "local_copies": local_copies,
        "kernels": kernels,
        "bytes_sent": {str(k): v for k, v in sorted(sent.items())},
        "bytes_received": {str(k): v for k, v in sorted(received.items())},
        "max_bytes_sent": max(sent.values(), default=0),
        "max_bytes_received": max(received.values(), default=0),
        "pairs": len(pairs),
        "critical_path": critical,
        "rounds": max_rounds,  # copy rounds
    }


def analyze(module_op: ir.Operation) -> dict[str, dict[str, Any]]:
    """{function name: stats} for every func.func in the module."""
    out: dict[str, dict[str, Any]] = {}
    for f in _func_ops(module_op):
        out[ir.StringAttr(f.attributes["sym_name"]).value] = analyze_function(f)
    return out


def ring_edges(func_op: ir.Operation) -> set[tuple[int | None, int | None]]:
    """The set of (src, dst) device pairs the copies of func_op use."""
    edges: set[tuple[int | None, int | None]] = set()
    for block in func_op.regions[0].blocks:
        for op in block.operations:
            if op.operation.name == "coll.copy":
                s, t = (device_of(v.type) for v in list(op.operation.operands)[:2])
                if s != t:
                    edges.add((s, t))
    return edges


def stats_pass(module_op: ir.Operation, file: str = "-") -> None:
    text = json.dumps(analyze(module_op), indent=2, sort_keys=True)
    if file == "-":
        print(text, file=sys.stderr)
    else:
        with open(file, "w") as f:
            f.write(text + "\n")


@register("coll-stats",
          "Print per-function schedule statistics as JSON (stderr, or file=PATH)",
          anchor="builtin.module", file=(str, "-"))
def coll_stats(module_op: ir.Operation, file: str = "-") -> None:
    try:
        stats_pass(module_op, file)
    except OSError as e:
        raise PassError(f"could not write '{file}': {e.strerror}") from None
