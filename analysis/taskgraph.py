"""The explicit level as a plain task graph, for the cost model and the
timeline: one Task per coll.alloc / copy / combine / join / wait, in program
order, with the indices of the tasks it waits for.

Plain Python data (no MLIR handles), so graphs can be cached and simulated
without a Context.
"""
from dataclasses import dataclass, field

from mlir import ir

from ..ir.ops import COLLECTIVE_NAMES, view
from ..ir.types import device_of, is_token
from ..ir.views import root_of
from .stats import nbytes



@dataclass
class Task:
    kind: str            # alloc | copy | combine | join | wait
    device: int = None   # where it runs: combine/alloc device, copy target
    src: int = None      # copy source device
    bytes: int = 0       # copy: bytes moved; combine: output bytes; alloc: size
    touched: int = 0     # bytes read + written (copy: 2 x bytes)
    touched_scratch: int = 0  # the part of `touched` in coll.alloc buffers
    inputs: int = 0      # combine: number of inputs
    to_scratch: bool = False  # copy into a coll.alloc buffer (else a result)
    peer_reads: tuple = ()    # combine: (home device, bytes) of each input read in
                              # another device's memory (coll.peer_access)
    deps: list = field(default_factory=list)
    group_set: int = 0   # bytes of the regions its data-sharing group touches


@dataclass
class Graph:
    tasks: list
    working_set: int     # bytes of every distinct buffer the program touches
    devices: list        # device ids, sorted
    largest: int = 0     # bytes of its largest buffer


def _root(value):
    """The buffer a (possibly viewed) memref value belongs to."""
    return root_of(value)[0]


def _span(value):
    """(root, first byte, end byte) of a view: its static offset in the
    root (the whole root when the offset is dynamic)."""
    r = _root(value)
    size = nbytes(value.type)
    t = ir.MemRefType(value.type)
    _, off = t.get_strides_and_offset()
    _, root_off = ir.MemRefType(r.type).get_strides_and_offset()
    if t.is_dynamic_stride_or_offset(off) or t.is_dynamic_stride_or_offset(root_off):
        return r, 0, nbytes(r.type)
    lo = (off - root_off) * (size // max(_numel(t), 1))
    return r, lo, lo + size


def _numel(t):
    n = 1
    for d in t.shape:
        n *= d
    return n


def _groups(tasks, spans) -> None:
    """Sets each task's group_set: tasks whose regions overlap (in any
    buffer) form a group, as the CPU runtime's tiling groups them
    (lowering/cpu/fuse.py); a group's bytes are the union of its regions.
    A ring's chunk is a group of its own, a naive reduction reads every
    input whole and joins them all."""
    parent = list(range(len(tasks)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    by_root = {}
    for i, sp in enumerate(spans):
        for r, lo, hi in sp:
            by_root.setdefault(r, []).append((lo, hi, i))
    merged = []  # (root, lo, hi, a task in it)
    for r, ivs in by_root.items():
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
    size = {}
    for lo, hi, i in merged:
        g = find(i)
        size[g] = size.get(g, 0) + hi - lo
    for i, t in enumerate(tasks):
        if spans[i]:
            t.group_set = size.get(find(i), 0)


def _is_alloc(value):
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.operation.name == "coll.alloc"


def from_function(func_op):
    """Graph of every coll op in `func_op`, in program order."""
    tasks, index, roots, devices, spans = [], {}, {}, set(), []

    def touch(value) -> None:
        r = _root(value)
        if r not in roots:
            roots[r] = nbytes(r.type)

    def visit(op):
        op = op.operation
        name = op.name
        if not name.startswith("coll.") or name in COLLECTIVE_NAMES:
            return ir.WalkResult.ADVANCE
        v = view(op)
        deps = [index[d] for d in getattr(v, "deps", []) if d in index]
        t = Task(kind=name[len("coll."):], deps=deps)
        if name == "coll.alloc":
            buf = op.results[0]
            t.device, t.bytes = device_of(buf.type), nbytes(buf.type)
            touch(buf)
        elif name == "coll.copy":
            src, dst = v.source, v.target
            t.src, t.device = device_of(src.type), device_of(dst.type)
            t.bytes = nbytes(src.type)
            t.to_scratch = _is_alloc(_root(dst))
            t.touched = 2 * t.bytes
            t.touched_scratch = t.bytes * (_is_alloc(_root(src)) + t.to_scratch)
            touch(src)
            touch(dst)
        elif name == "coll.combine":
            bufs = v.inputs + [v.out]
            t.device = device_of(bufs[-1].type)
            t.bytes = nbytes(bufs[-1].type)
            t.touched = sum(nbytes(b.type) for b in bufs)
            t.touched_scratch = sum(nbytes(b.type) for b in bufs if _is_alloc(_root(b)))
            t.inputs = len(bufs) - 1
            t.peer_reads = tuple((home, nbytes(b.type)) for b, home in v.peers)
            for b in bufs:
                touch(b)
        if name in ("coll.copy", "coll.combine"):
            spans.append([_span(b) for b in v.reads + v.writes])
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


def functions(module_op):
    """[(name, func op)] of the module's top-level functions."""
    out = []
    for block in module_op.regions[0].blocks:
        for op in block.operations:
            if op.operation.name == "func.func":
                out.append((ir.StringAttr(op.operation.attributes["sym_name"]).value, op.operation))
    return out


def steps(graph, counted=("copy", "combine")):
    """Dependent step of each task: tasks of a `counted` kind count 1, others
    0. The default is passes/stats.py's critical path; counted=("copy",)
    gives communication rounds, what latency lower bounds count."""
    out = []
    for t in graph.tasks:
        d = max((out[i] for i in t.deps), default=0)
        out.append(d + (1 if t.kind in counted else 0))
    return out
