"""The explicit level as a plain task graph, for the cost model and the
timeline: one Task per coll.alloc / copy / combine / join / wait, in program
order, with the indices of the tasks it waits for.

Plain Python data (no MLIR handles), so graphs can be cached and simulated
without a Context.
"""
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from mlir import ir

from ..ir.ops import COLLECTIVE_NAMES, Combine, Copy, OpView, view
from ..ir.types import device_of, is_token
from ..ir.views import root_of
from .stats import nbytes

# (root buffer, first byte, end byte) of a view.
Span = tuple[ir.Value, int, int]


@dataclass
class Task:
    kind: str            # alloc | copy | combine | join | wait | local
    device: int | None = None  # where it runs: combine/alloc device, copy target
    src: int | None = None     # copy source device
    bytes: int = 0       # copy: bytes moved; combine: output bytes; alloc: size
    touched: int = 0     # bytes read + written (copy: 2 x bytes)
    touched_scratch: int = 0  # the part of `touched` in coll.alloc buffers
    inputs: int = 0      # combine: number of inputs
    to_scratch: bool = False  # copy into a coll.alloc buffer (else a result)
    peer_reads: tuple[tuple[int | None, int], ...] = ()  # combine: (home device, bytes) of each input read in
                              # another device's memory (coll.peer_access)
    deps: list[int] = field(default_factory=list)
    group_set: int = 0   # bytes of the regions its data-sharing group touches
    # (argument number, first byte, end byte, written) of each region it
    # touches in the function's arguments: what local work around the
    # collective waits for or is waited for by (analysis/overlap.py)
    regions: tuple[tuple[int, int, int, bool], ...] = ()
    seconds: float = 0.0  # local: its cost, computed by whoever made it (analysis/overlap.py)


@dataclass
class Graph:
    tasks: list[Task]
    working_set: int     # bytes of every distinct buffer the program touches
    devices: list[int]   # device ids, sorted
    largest: int = 0     # bytes of its largest buffer


def _root(value: ir.Value) -> ir.Value:
    """The buffer a (possibly viewed) memref value belongs to."""
    return root_of(value)[0]


def _span(value: ir.Value) -> Span:
    """(root, first byte, end byte) of a view: its static offset in the
    root (the whole root when the offset is dynamic)."""
    r, chain = root_of(value)
    size = nbytes(value.type)
    t = ir.MemRefType(value.type)
    _, off = t.get_strides_and_offset()
    _, root_off = ir.MemRefType(r.type).get_strides_and_offset()
    if t.is_dynamic_stride_or_offset(off) and chain and chain[-1].name == "memref.cast":
        return _span(chain[-1].operands[0])  # a cast that forgot a static layout (one combine's rhs type)
    if t.is_dynamic_stride_or_offset(off) or t.is_dynamic_stride_or_offset(root_off):
        return r, 0, nbytes(r.type)
    lo = (off - root_off) * (size // max(_numel(t), 1))
    return r, lo, lo + size


def _numel(t: ir.ShapedType) -> int:
    n = 1
    for d in t.shape:
        n *= d
    return n


def _groups(tasks: list[Task], spans: list[list[Span]]) -> None:
    """Sets each task's group_set: tasks whose regions overlap (in any
    buffer) form a group, as the CPU runtime's tiling groups them
    (lowering/cpu/fuse.py); a group's bytes are the union of its regions.
    A ring's chunk is a group of its own, a naive reduction reads every
    input whole and joins them all."""
    parent = list(range(len(tasks)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    by_root: dict[ir.Value, list[tuple[int, int, int]]] = {}
    for i, sp in enumerate(spans):
        for r, lo, hi in sp:
            by_root.setdefault(r, []).append((lo, hi, i))
    merged: list[tuple[int, int, int]] = []  # (lo, hi, a task in it), per root
    for ivs in by_root.values():
        ivs.sort(key=lambda x: (x[0], x[1]))
        lo, hi, first = ivs[0]
        for a, b, i in ivs[1:]:
            if a < hi:
                parent[find(i)] = find(first)
                hi = max(hi, b)
            else:
                merged.append((lo, hi, first))
                lo, hi, first = a, b, i
        merged.append((lo, hi, first))
    size: dict[int, int] = {}
    for lo, hi, i in merged:
        g = find(i)
        size[g] = size.get(g, 0) + hi - lo
    for i, t in enumerate(tasks):
        if spans[i]:
            t.group_set = size.get(find(i), 0)


def _is_alloc(value: ir.Value) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.operation.name == "coll.alloc"


def from_function(func_op: ir.Operation) -> Graph:
    """Graph of every coll op in `func_op`, in program order."""
    tasks: list[Task] = []
    index: dict[ir.Value, int] = {}
    roots: dict[ir.Value, int] = {}
    devices: set[int] = set()
    spans: list[list[Span]] = []

    def touch(value: ir.Value) -> None:
        r = _root(value)
        if r not in roots:
            roots[r] = nbytes(r.type)

    def visit(op: ir.Operation) -> ir.WalkResult:
        op = op.operation
        name = op.name
        if not name.startswith("coll.") or name in COLLECTIVE_NAMES:
            return ir.WalkResult.ADVANCE
        v = cast(OpView, view(op))  # a coll op
        deps = [index[d] for d in getattr(v, "deps", []) if d in index]
        t = Task(kind=name[len("coll."):], deps=deps)
        if name == "coll.alloc":
            buf = op.results[0]
            t.device, t.bytes = device_of(buf.type), nbytes(buf.type)
            touch(buf)
        elif name == "coll.copy":
            copy = Copy.of(op)
            src, dst = copy.source, copy.target
            t.src, t.device = device_of(src.type), device_of(dst.type)
            t.bytes = nbytes(src.type)
            t.to_scratch = _is_alloc(_root(dst))
            t.touched = 2 * t.bytes
            t.touched_scratch = t.bytes * (_is_alloc(_root(src)) + t.to_scratch)
            touch(src)
            touch(dst)
        elif name == "coll.combine":
            combine = Combine.of(op)
            bufs = combine.inputs + [combine.out]
            t.device = device_of(bufs[-1].type)
            t.bytes = nbytes(bufs[-1].type)
            t.touched = sum(nbytes(b.type) for b in bufs)
            t.touched_scratch = sum(nbytes(b.type) for b in bufs if _is_alloc(_root(b)))
            t.inputs = len(bufs) - 1
            t.peer_reads = tuple((home, nbytes(b.type)) for b, home in combine.peers)
            for b in bufs:
                touch(b)
        if name in ("coll.copy", "coll.combine"):
            spans.append([_span(b) for b in v.reads + v.writes])
            t.regions = tuple((ir.BlockArgument(r).arg_number, lo, hi, k >= len(v.reads))
                              for k, (r, lo, hi) in enumerate(spans[-1]) if isinstance(r, ir.BlockArgument))
        else:
            spans.append([])
        for d in (t.device, t.src):
            if d is not None:
                devices.add(d)
        if op.results and is_token(op.results[0].type):
            index[op.results[0]] = len(tasks)
        tasks.append(t)
        return ir.WalkResult.ADVANCE

    func_op.walk(visit, ir.WalkOrder.PRE_ORDER)
    _groups(tasks, spans)
    return Graph(tasks, sum(roots.values()), sorted(devices), max(roots.values(), default=0))


def functions(module_op: ir.Operation) -> list[tuple[str, ir.Operation]]:
    """[(name, func op)] of the module's top-level functions."""
    out: list[tuple[str, ir.Operation]] = []
    for block in module_op.regions[0].blocks:
        for op in block.operations:
            if op.operation.name == "func.func":
                out.append((ir.StringAttr(op.operation.attributes["sym_name"]).value, op.operation))
    return out


def steps(graph: Graph, counted: Sequence[str] = ("copy", "combine")) -> list[int]:
    """Dependent step of each task: tasks of a `counted` kind count 1, others
    0. The default is passes/stats.py's critical path; counted=("copy",)
    gives communication rounds, what latency lower bounds count."""
    out: list[int] = []
    for t in graph.tasks:
        d = max((out[i] for i in t.deps), default=0)
        out.append(d + (1 if t.kind in counted else 0))
    return out
