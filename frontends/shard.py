"""coll-from-shard: the collectives of a partitioned SPMD function (what
upstream `shard-partition` makes) -> coll's SPMD tensor collectives.

A function that uses a `shard.grid` of N processes becomes an SPMD function
with `coll.ranks = N`: rank r is the grid's process with linear index r
(row-major, as shard numbers them). A shard collective over `grid_axes`
runs within each group of processes that share their other coordinates;
its coll op names the group (`devices`, when it is the whole grid in
order) or the groups (`groups`, group after group, each in the order of
the linear index over `grid_axes`; `devices` then lists the positions in
a group, 0..size-1). Over no axes a
collective is the identity. `shard.all_slice` is local work: a
`tensor.extract_slice` at the rank's position in its group. The rank is
`mpi.comm_rank` (what the mpi route lowers; a process index of shard
becomes arithmetic on it). Anything of shard left over is an error: a
shard op passes through silently nowhere.
"""
import functools
import json
import math
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from mlir import ir
from mlir.rewrite import FrozenRewritePatternSet, PatternRewriter, RewritePatternSet, walk_and_apply_patterns

from ..collectives import COLLECTIVES as COLLECTIVE_CLASSES
from ..core.errors import PassError
from ..core.pipeline import run
from ..core.registry import register
from ..core.routes import pipeline
from ..core.tools import tool
from ..ir import IRDL_FILE
from ..ir.types import token_type
from ..ir.walk import all_ops, is_public
from .spmd import RANKS_ATTR
from .tensor import route as tensor_route

# Upstream's partitioning, nested under func.func as it must be (22.1.8).
# No cse between propagation and partitioning: it would merge two equal
# tensor.empty/linalg.fill that propagation sharded differently (the
# accumulators of two matmuls of one shape), and shard-partition then
# aborts (22.1.8: Assertion `gridOp' failed).
PARTITION = "builtin.module(func.func(sharding-propagation),func.func(shard-partition,canonicalize,cse))"
PARTITION_TIMEOUT = 300

# shard's reduction kinds -> coll's (ir/kinds.py); `average` and `generic`
# have no coll kind.
SHARD_KINDS = {"sum": "sum", "product": "prod", "max": "max", "min": "min",
               "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor"}

# shard op -> (coll op, {coll attribute: shard attribute}, reduces, rooted):
# each collective's SHARD mapping (coll/collectives/).
FROM_SHARD = {cls.SHARD[0]: (cls.NAME, cls.SHARD[1], cls.HAS_KIND, cls.ROOTED)
               for cls in COLLECTIVE_CLASSES if cls.SHARD}
INDEX_OPS = ("shard.process_linear_index", "shard.process_multi_index", "shard.grid_shape")
# What shard-partition leaves that carries no work once partitioned.
DEAD = ("shard.sharding",)


def _grid_shape(grid_op: ir.Operation) -> list[int]:
    """The static shape of a shard.grid."""
    return list(grid_op.opview.shape)  # type: ignore[attr-defined]  # a shard.GridOp (OpView says nothing of it)


def _i64(x: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), x)


def grid_coords(shape: Sequence[int], r: int) -> list[int]:
    """Rank r's coordinates on a grid of `shape` (row-major linear index)."""
    out = []
    for d in reversed(shape):
        out.append(r % d)
        r //= d
    return out[::-1]


def grid_groups(shape: Sequence[int], axes: Sequence[int]) -> list[list[int]]:
    """Every group of ranks a collective over grid `axes` runs in: ranks
    that share the other coordinates, ordered by their linear index over
    `axes` (in the order given)."""
    found: dict[tuple[int, ...], dict[int, int]] = {}
    for r in range(math.prod(shape)):
        c = grid_coords(shape, r)
        key = tuple(c[d] for d in range(len(shape)) if d not in axes)
        pos = 0
        for a in axes:
            pos = pos * shape[a] + c[a]
        found.setdefault(key, {})[pos] = r
    return [[g[p] for p in sorted(g)] for _, g in sorted(found.items())]


@dataclass
class Layout:
    """How one global array is split over a grid: per dimension, the grid
    axes it is split over ([] = whole). Rank r (the grid's linear index r)
    holds `block(grid, r)`."""
    shape: tuple[int, ...]  # global
    local: tuple[int, ...]  # one rank's block
    element: str
    split: list[list[int]]  # per dimension, a list of grid axes
    name: str | None = None  # what the frontend calls it (None: x0.., y0..)

    def block(self, grid: Sequence[int], r: int) -> tuple[slice, ...]:
        """Rank r's block: a tuple of slices into the global array."""
        coords = grid_coords(grid, r)
        out = []
        for d, axes in enumerate(self.split):
            i = 0
            for a in axes:
                i = i * grid[a] + coords[a]
            out.append(slice(i * self.local[d], (i + 1) * self.local[d]))
        return tuple(out) + tuple(slice(None) for _ in range(len(self.shape) - len(self.split)))


@dataclass
class Boundary:
    """A program's entry function, its global arguments and results, and the
    block of each that rank r holds (`Layout.block(grid, r)`): what a
    runner scatters and gathers by (frontends/run/global_arrays.py)."""
    entry: str
    grid: list[int]         # rank r = the grid position with linear index r
    inputs: list[Layout]    # per argument
    outputs: list[Layout]   # per result


class _Grid:
    """A shard.grid: its shape, and the groups of a collective over some axes."""

    def __init__(self, op: ir.Operation, user: ir.Operation) -> None:
        self.name = ir.StringAttr(op.attributes["sym_name"]).value
        self.shape = _grid_shape(op)
        if any(d < 0 for d in self.shape):
            shape = "x".join(str(d) if d >= 0 else "?" for d in self.shape)
            raise PassError(f"grid @{self.name} has dynamic shape {shape}; coll-from-shard needs a static grid "
                            "(the number of ranks is fixed at compile time)", user.location)
        self.size = 1
        for d in self.shape:
            self.size *= d

    def coords(self, r: int) -> list[int]:
        return grid_coords(self.shape, r)

    def groups(self, axes: Sequence[int]) -> list[list[int]]:
        return grid_groups(self.shape, axes)

    def position(self, axes: Sequence[int], index: Sequence[int]) -> int:
        """A multi-index over `axes` (shard's `root`) -> position in a group."""
        pos = 0
        for a, i in zip(axes, index):
            pos = pos * self.shape[a] + i
        return pos


def _ints(op: ir.Operation, name: str) -> list[int]:
    try:
        return list(ir.DenseI16ArrayAttr(op.attributes[name]))
    except (KeyError, ValueError, TypeError):
        pass
    try:
        return list(ir.DenseI64ArrayAttr(op.attributes[name]))
    except (KeyError, ValueError, TypeError):
        return []


def _reduction(op: ir.Operation) -> str:
    if "reduction" not in op.attributes:
        return "sum"  # shard's default
    m = re.match(r"#shard<partial (\w+)>", str(op.attributes["reduction"]))
    kind = m.group(1) if m else str(op.attributes["reduction"])
    if kind not in SHARD_KINDS:
        raise PassError(f"'{op.name}' reduction '{kind}' has no coll reduction kind; expected one of: "
                        f"{', '.join(SHARD_KINDS)}", op.location)
    return SHARD_KINDS[kind]


def _check_static(op: ir.Operation) -> None:
    for v in list(op.operands) + list(op.results):
        t = v.type
        if isinstance(t, ir.ShapedType) and not ir.ShapedType(t).has_static_shape:
            raise PassError(f"'{op.name}' on {t}: coll-from-shard needs static shapes, expected a tensor with "
                            "no dynamic dimension", op.location)
        if isinstance(t, ir.MemRefType):
            raise PassError(f"'{op.name}' on {t}: coll-from-shard converts shard collectives on tensors "
                            "(before bufferization), expected a ranked tensor", op.location)


class _Function:
    """One function's conversion: its grid size and its rank (made once)."""

    def __init__(self, func_op: ir.Operation, grids: dict[str, ir.Operation]) -> None:
        self.func, self.grids = func_op, grids
        self.ranks: tuple[int, str] | None = None  # (size, name) of the first grid used
        self._rank: ir.Value | None = None
        self.touched = False
        self.dead: list[ir.Operation] = []

    def grid(self, op: ir.Operation) -> _Grid:
        name = ir.FlatSymbolRefAttr(op.attributes["grid"]).value
        if name not in self.grids:
            raise PassError(f"'{op.name}' names @{name}, which is not a shard.grid of this module", op.location)
        g = _Grid(self.grids[name], op)
        if self.ranks is None:
            self.ranks = (g.size, g.name)
        elif self.ranks[0] != g.size:
            raise PassError(f"'{op.name}' runs on grid @{g.name} of {g.size} processes, but this function also "
                            f"uses grid @{self.ranks[1]} of {self.ranks[0]}; expected grids of one size "
                            "(one rank per process)", op.location)
        return g

    def rank(self) -> ir.Value:
        """This rank as an index, made once at the function's entry."""
        if self._rank is None:
            block = self.func.regions[0].blocks[0]
            with ir.InsertionPoint.at_block_begin(block), self.func.location:
                comm = ir.Operation.create("mpi.comm_world", results=[ir.Type.parse("!mpi.comm")]).results[0]
                r = ir.Operation.create("mpi.comm_rank", results=[ir.IntegerType.get_signless(32)],
                                        operands=[comm]).results[0]
                self._rank = ir.Operation.create("arith.index_cast", results=[ir.IndexType.get()],
                                                 operands=[r]).results[0]
        return self._rank

    def const(self, x: int) -> ir.Value:
        return ir.Operation.create("arith.constant", results=[ir.IndexType.get()],
                                   attributes={"value": ir.IntegerAttr.get(ir.IndexType.get(), x)}).results[0]

    def coord(self, g: _Grid, axis: int) -> ir.Value:
        """rank's coordinate along `axis`: (rank / stride) % size."""
        stride = 1
        for d in g.shape[axis + 1:]:
            stride *= d
        q = self.rank()
        if stride != 1:
            q = ir.Operation.create("arith.divui", results=[ir.IndexType.get()],
                                    operands=[q, self.const(stride)]).results[0]
        if stride * g.shape[axis] == g.size:  # the leading axis: no remainder
            return q
        return ir.Operation.create("arith.remui", results=[ir.IndexType.get()],
                                   operands=[q, self.const(g.shape[axis])]).results[0]

    def position(self, g: _Grid, axes: Sequence[int]) -> ir.Value:
        """rank's position in its group over `axes` (an index value; `axes` not empty)."""
        pos: ir.Value | None = None
        for a in axes:
            c = self.coord(g, a)
            if pos is None:
                pos = c
                continue
            m = ir.Operation.create("arith.muli", results=[ir.IndexType.get()],
                                    operands=[pos, self.const(g.shape[a])]).results[0]
            pos = ir.Operation.create("arith.addi", results=[ir.IndexType.get()], operands=[m, c]).results[0]
        assert pos is not None, "a position over no axes"
        return pos

    # -- the ops -------------------------------------------------------------
    def collective(self, op: ir.Operation) -> None:
        name, attrs_of, reduces, rooted = FROM_SHARD[op.name]
        _check_static(op)
        g = self.grid(op)
        axes = _ints(op, "grid_axes")
        src, res = op.operands[0], op.results[0]
        kind = _reduction(op) if reduces else None
        if not axes or all(g.shape[a] == 1 for a in axes):  # a group of one: nothing moves
            if src.type != res.type:
                raise PassError(f"'{op.name}' over no grid axes returns {res.type} for {src.type}; expected the "
                                "same type", op.location)
            res.replace_all_uses_with(src)
            return
        if ir.RankedTensorType(src.type).element_type != ir.RankedTensorType(res.type).element_type:
            raise PassError(f"'{op.name}' converts {src.type} to {res.type}; coll collectives keep the element "
                            "type, expected the same element type", op.location)
        groups = g.groups(axes)
        attrs: dict[str, ir.Attribute] = {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0])}
        if len(groups) == 1 and groups[0] == list(range(g.size)):
            attrs["devices"] = ir.DenseI64ArrayAttr.get(groups[0])
        else:  # devices: the positions in a group
            attrs["devices"] = ir.DenseI64ArrayAttr.get(list(range(len(groups[0]))))
            attrs["groups"] = ir.DenseI64ArrayAttr.get([r for grp in groups for r in grp])
        if kind is not None:  # reduces
            attrs["kind"] = ir.StringAttr.get(kind)
        for ours, theirs in attrs_of.items():
            attrs[ours] = _i64(ir.IntegerAttr(op.attributes[theirs]).value)
        if rooted:
            root = _ints(op, "root")
            if len(root) != len(axes):
                raise PassError(f"'{op.name}' root {root} is not a multi-index over grid_axes {axes}",
                                op.location)
            attrs["root"] = _i64(g.position(axes, root))  # devices: the rank; groups: the position
        new = ir.Operation.create(name, results=[token_type(), res.type], operands=[src], attributes=attrs)
        res.replace_all_uses_with(new.results[1])

    def all_slice(self, op: ir.Operation) -> None:
        """Local work: the block of the input at the rank's position."""
        _check_static(op)
        g = self.grid(op)
        axes = _ints(op, "grid_axes")
        src, res = op.operands[0], op.results[0]
        axis = ir.IntegerAttr(op.attributes["slice_axis"]).value
        shape = list(ir.RankedTensorType(res.type).shape)
        if not axes:
            res.replace_all_uses_with(src)
            return
        size = ir.IndexType.get()
        off = ir.Operation.create("arith.muli", results=[size],
                                  operands=[self.position(g, axes), self.const(shape[axis])]).results[0]
        dyn = ir.ShapedType.get_dynamic_stride_or_offset()
        new = ir.Operation.create("tensor.extract_slice", results=[res.type], operands=[src, off], attributes={
            "static_offsets": ir.DenseI64ArrayAttr.get([dyn if d == axis else 0 for d in range(len(shape))]),
            "static_sizes": ir.DenseI64ArrayAttr.get(shape),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 0])})
        res.replace_all_uses_with(new.results[0])

    def index(self, op: ir.Operation) -> None:
        g = self.grid(op)
        if op.name == "shard.grid_shape":
            axes = _ints(op, "axes") or list(range(len(g.shape)))
            values = [self.const(g.shape[a]) for a in axes]
        elif op.name == "shard.process_linear_index":
            values = [self.rank()]
        else:
            axes = _ints(op, "axes") or list(range(len(g.shape)))
            values = [self.coord(g, a) for a in axes]
        for old, new in zip(op.results, values):
            old.replace_all_uses_with(new)

    # -- the patterns ----------------------------------------------------------
    # walk_and_apply_patterns visits the function's ops in program order,
    # post-order, and a pattern may erase only the op it visits (22.1.8; see
    # lowering/cpu/to_cpu.py). Shard ops hold no regions, so they come in the
    # order of the text, whatever holds them; what a pattern makes is not
    # shard's. A shard.sharding is still used when it is visited: it goes
    # after the walk.
    def patterns(self) -> FrozenRewritePatternSet:
        s = RewritePatternSet()
        for name in _shard_op_names():
            if name in DEAD:
                s.add(name, self._dead)
            elif name in FROM_SHARD:
                s.add(name, self._converts(self.collective))
            elif name == "shard.all_slice":
                s.add(name, self._converts(self.all_slice))
            elif name in INDEX_OPS:
                s.add(name, self._converts(self.index))
            else:
                s.add(name, _no_form)
        return s.freeze()

    def _converts(self, convert: Callable[[ir.Operation], None]
                  ) -> Callable[[ir.Operation, PatternRewriter], None]:
        def pattern(op: ir.Operation, rewriter: PatternRewriter) -> None:
            op = op.operation
            self.touched = True
            with ir.InsertionPoint(op), op.location:
                convert(op)
            _erase(op, rewriter.erase_op)
        return pattern

    def _dead(self, op: ir.Operation, rewriter: PatternRewriter) -> bool:
        self.touched = True
        self.dead.append(op.operation)
        return True  # its users come later: it goes once they have (run)

    def run(self) -> None:
        self.touched, self.dead = False, []
        walk_and_apply_patterns(self.func, self.patterns())
        for op in reversed(self.dead):
            _erase(op, lambda o: o.erase())
        if self.touched and self.ranks is not None:
            self.func.attributes[RANKS_ATTR] = _i64(self.ranks[0])
            # The arguments are the caller's: bufferization must not reuse
            # them in place (the runtimes pass inputs that are only read).
            n = len(self.func.regions[0].blocks[0].arguments)
            attrs = self.func.attributes
            old = list(ir.ArrayAttr(attrs["arg_attrs"])) if "arg_attrs" in attrs else [ir.DictAttr.get({})] * n
            new = []
            for a in old:
                d = ir.DictAttr(a)
                items = {d[i].name: d[i].attr for i in range(len(d))}
                items.setdefault("bufferization.writable", ir.BoolAttr.get(False))
                new.append(ir.DictAttr.get(items))
            if n:
                attrs["arg_attrs"] = ir.ArrayAttr.get(new)


def _erase(op: ir.Operation, erase: Callable[[ir.Operation], object]) -> None:
    if any(True for r in op.results for _ in r.uses):
        raise PassError(f"'{op.name}' is still used after coll-from-shard", op.location)
    erase(op)


def _no_form(op: ir.Operation, rewriter: PatternRewriter) -> NoReturn:
    raise PassError(f"'{op.name}' has no coll form; coll-from-shard converts "
                    f"{', '.join(sorted(FROM_SHARD))}, shard.all_slice and the process "
                    "index ops (partition with shard-partition first)", op.location)


@functools.cache
def _shard_op_names() -> list[str]:
    """Every op of upstream's shard dialect (its Python module lists them):
    a pattern matches an op by name, and an op not converted is an error."""
    from mlir.dialects import shard  # here: 5 ms that coll-opt's start-up need not pay
    names = (getattr(cls, "OPERATION_NAME", None) for cls in vars(shard).values()
             if isinstance(cls, type) and issubclass(cls, ir.OpView))
    return sorted({n for n in names if isinstance(n, str) and n.startswith("shard.")})


@register("coll-from-shard",
          "Convert the shard collectives of partitioned SPMD functions (shard-partition's output) into coll's "
          "SPMD tensor collectives: groups from the grid and grid_axes, reduction kinds mapped, all_slice as "
          "a slice at the rank's offset; the function gets coll.ranks",
          anchor="builtin.module")
def from_shard(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        body = module_op.regions[0].blocks[0]
        grids = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation for op in body.operations
                 if op.operation.name == "shard.grid"}
        for op in body.operations:
            if op.operation.name == "func.func" and len(op.operation.regions[0].blocks):
                _Function(op.operation, grids).run()
        for op in list(body.operations):
            o = op.operation
            if o.name.startswith("shard.") and o.name != "shard.grid":
                raise PassError(f"'{o.name}' at module level has no coll form", o.location)
        for g in grids.values():
            g.erase()


def _multi_axis_grid_use(module_op: ir.Operation) -> tuple[ir.Operation, str, list[int]] | None:
    """The first shard.sharding on a grid of more than one axis, or None."""
    body = module_op.regions[0].blocks[0]
    shapes = {ir.StringAttr(op.attributes["sym_name"]).value: _grid_shape(op.operation)
              for op in body.operations if op.operation.name == "shard.grid"}
    for op in all_ops(module_op):
        if op.name == "shard.sharding":
            g = ir.FlatSymbolRefAttr(op.attributes["grid"]).value
            if len(shapes.get(g, [])) > 1:
                return op, g, shapes[g]
    return None


@register("coll-shard-partition",
          "Upstream sharding-propagation and shard-partition (nested under func.func), run in a child "
          "mlir-opt so that an upstream abort (22.1.8: resharding on a grid of more than one axis) is a "
          "located error, not a crash of the tool",
          anchor="builtin.module")
def shard_partition(module_op: ir.Operation) -> None:
    """Replaces the module's body by its partitioned form (locations kept)."""
    text = str(module_op.get_asm(enable_debug_info=True, print_generic_op_form=True))
    cmd = [tool("mlir-opt"), f"--irdl-file={IRDL_FILE}", "--mlir-print-debuginfo",
           "--mlir-print-op-generic", f"--pass-pipeline={PARTITION}"]
    try:
        proc = subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=PARTITION_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise PassError(f"upstream shard-partition did not finish within {PARTITION_TIMEOUT} s",
                        module_op.location) from None
    if proc.returncode < 0 or "Assertion" in proc.stderr:
        said = next((l for l in proc.stderr.splitlines() if "Assertion" in l), proc.stderr.strip()[:300])
        said = said[said.find("Assertion"):] if "Assertion" in said else said
        where = _multi_axis_grid_use(module_op)
        if where is not None:
            op, g, shape = where
            raise PassError(f"upstream shard-partition aborted ({said}): LLVM 22.1.8 reshards only on 1-D grids, "
                            f"and grid @{g} is {'x'.join(map(str, shape))}; expected shardings on it that need "
                            "no resharding (a partial sum over some axes, results returned as they are split)",
                            op.location)
        raise PassError(f"upstream shard-partition aborted: {said}", _first_func(module_op))
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if "error:" in l]
        said = lines[0].split("error:", 1)[1].strip() if lines else proc.stderr.strip()[:300]
        raise PassError(f"upstream shard-partition failed: {said}",
                        (_said_at(lines[0], module_op.context) if lines else None) or _first_func(module_op))
    new = ir.Module.parse(proc.stdout, module_op.context)
    body = module_op.regions[0].blocks[0]
    for old in list(body.operations):
        old.operation.erase()
    for moved in list(new.body.operations):
        _append(body, moved.operation)


def _said_at(line: str, context: ir.Context) -> ir.Location | None:
    """The file location the child mlir-opt printed before `error:` (it
    prints an op's location there, the JAX line), or None."""
    m = re.match(r"(.+?):(\d+):(\d+): error:", line)
    return ir.Location.file(m.group(1), int(m.group(2)), int(m.group(3)), context) if m else None


def _first_func(module_op: ir.Operation) -> ir.Location:
    """Where to report what upstream said about no op in particular."""
    funcs = find_funcs(module_op)
    return funcs[0].location if funcs else module_op.location


def _append(block: ir.Block, op: ir.Operation) -> None:
    """Moves `op` to the end of `block`."""
    ip = ir.InsertionPoint(block)
    op.detach_from_parent()
    ip.insert(op)


def find_funcs(module_op: ir.Operation) -> list[ir.Operation]:
    """The public func.func ops of the module (with a body)."""
    return [op.operation for op in module_op.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and is_public(op.operation)]


def strip_annotations(module_op: ir.Operation) -> None:
    """The module as if never annotated: shard.shard is its operand,
    shard.sharding and shard.grid go (the unsharded reference)."""
    for op in reversed(all_ops(module_op)):
        if op.name == "shard.shard":
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
    for op in reversed(all_ops(module_op)):
        if op.name in ("shard.sharding", "shard.grid"):
            op.erase()
    for op in all_ops(module_op):
        if op.name.startswith("shard."):
            raise PassError(f"'{op.name}' in an unpartitioned program: expected only shard.grid, "
                            "shard.sharding and shard.shard annotations", op.location)


# -- the frontend (frontends/__init__.py) --------------------------------------
NAME = "shard"
# its arguments are global arrays, laid out over the grid by its annotations
# (a runner scatters them: frontends/run/shard.py).
GLOBAL = True


def detect(module_op: ir.Operation) -> bool:
    """Whether the module uses upstream shard (a shard.grid)."""
    return any(op.operation.name == "shard.grid" for op in module_op.regions[0].blocks[0].operations)


def partitioned(module_op: ir.Operation) -> bool:
    """Whether a module on a shard.grid is partitioned already (what
    upstream shard-partition makes: shard collectives or index ops, no
    shard.shard annotation): one rank's program, its arguments each rank's
    own (an SPMD function), not global arrays."""
    names = [op.name for op in all_ops(module_op)]
    return (any(n in FROM_SHARD or n in INDEX_OPS for n in names)
            and "shard.shard" not in names and detect(module_op))


def route(module_op: ir.Operation | None = None, backend: object = None, partition: bool | None = None,
          **_: object) -> list[str]:
    """A tensor program annotated with shard.shard on a shard.grid -> its SPMD
    function on memrefs: upstream partitioning (coll-shard-partition; not
    with `partition=False`, for a program partitioned already), coll
    collectives (coll-from-shard), bufferized (the tensor frontend's route);
    the SPMD frontend then takes it to what the back end runs. `partition`
    None: unless the module is `partitioned` already."""
    if partition is None:
        partition = module_op is None or not partitioned(module_op)
    # Elementwise ops fused after partitioning, splat constants folded into
    # their bodies (no constant buffer that device code cannot read).
    return (["coll-shard-partition"] if partition else []) + [
        "coll-from-shard", "canonicalize", "cse", "linalg-fuse-elementwise-ops", *tensor_route(),
        "canonicalize", "cse"]


# -- the program's boundary: what a runner scatters and gathers -----------------

class ShardError(PassError):
    """Bad input at the function boundary, located."""


def _split_axes(sharding_op: ir.Operation | ir.OpView) -> list[list[int]]:
    """split_axes of a shard.sharding op; ShardError for what we cannot
    scatter (partial values, halos, explicit offsets)."""
    attrs = sharding_op.attributes
    for key in ("partial_axes", "partial_type"):
        if key in attrs:
            raise ShardError("a partial value at the function boundary: expected the arguments and results "
                             "split or replicated", sharding_op.location)
    for key in ("static_halo_sizes", "static_sharded_dims_offsets"):
        if key in attrs and len(list(ir.DenseI64ArrayAttr(attrs[key]))):
            raise ShardError(f"'{key}' at the function boundary: expected plain splits (no halos, no offsets)",
                             sharding_op.location)
    text = str(attrs["split_axes"])
    m = re.match(r"#shard<axisarray(\[.*\])>", text)
    if not m:
        raise ShardError(f"cannot read split_axes {text}", sharding_op.location)
    return json.loads(m.group(1))


def _annotation(value: ir.Value, user: bool = True) -> ir.OpView | None:
    """The shard.sharding op that annotates `value` (its shard.shard use
    for an argument, its defining shard.shard for a result), or None."""
    if user:
        for use in value.uses:
            o = use.owner
            if o.name == "shard.shard" and "annotate_for_users" not in o.attributes:
                return o.operands[1].owner
        return None
    o = value.owner
    if hasattr(o, "name") and o.name == "shard.shard":
        return o.operands[1].owner
    return None


def _entry(module_op: ir.Operation, entry: str | None = None) -> ir.Operation:
    funcs = [op.operation for op in module_op.regions[0].blocks[0].operations
             if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)]
    names = [ir.StringAttr(f.attributes["sym_name"]).value for f in funcs]
    if entry is not None:
        if entry not in names:
            raise ShardError(f"no function @{entry} in the module (functions: {', '.join(names) or 'none'})",
                             module_op.location)
        return funcs[names.index(entry)]
    body = module_op.regions[0].blocks[0].operations
    where = body[0].operation.location if len(body) else module_op.location  # (the module's is line 0)
    if not funcs:
        raise ShardError("the module has no func.func to run", where)
    public = [f for f in funcs if "sym_visibility" not in f.attributes]
    if len(public) != 1:
        raise ShardError(f"{len(public)} public functions ({', '.join(names)}); expected one, or name "
                         "the entry", where)
    return public[0]


def parse(source: str | bytes | ir.Module, context: ir.Context | None = None) -> ir.Module:
    """An annotated module (text, bytes or an ir.Module) in `context`."""
    if isinstance(source, ir.Module):
        return source
    text = source.decode("utf-8", errors="replace") if isinstance(source, bytes) else source
    return ir.Module.parse(text, context) if context is not None else ir.Module.parse(text)


def layouts(module_op: ir.Operation, entry: str | None = None) -> Boundary:
    """The Boundary of an annotated, unpartitioned program: per argument and
    result of the entry, the grid axes each dimension is split over (its
    shard.shard annotation; none: whole on every rank), on the one grid the
    annotations name. Raises ShardError, located."""
    func = _entry(module_op, entry)
    name = ir.StringAttr(func.attributes["sym_name"]).value
    ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    block = func.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    values = [(a, True) for a in block.arguments] + [(v, False) for v in ret.operands]
    types = list(ft.inputs) + list(ft.results)
    k_in = len(ft.inputs)
    body = module_op.regions[0].blocks[0]
    grids = {ir.StringAttr(op.attributes["sym_name"]).value: _grid_shape(op.operation) for op in body.operations
             if op.operation.name == "shard.grid"}
    if not grids:
        raise ShardError("no shard.grid in the module: expected a program annotated with shard.shard",
                         func.location)
    anns = [_annotation(v, is_arg) for v, is_arg in values]
    named = {ir.FlatSymbolRefAttr(a.attributes["grid"]).value for a in anns if a is not None}
    if len(named) > 1:
        raise ShardError(f"the boundary is split over grids {', '.join('@' + g for g in sorted(named))}; "
                         "expected one grid", func.location)
    grid = grids[named.pop()] if named else next(iter(grids.values()))
    out: list[Layout] = []
    for i, ((_, is_arg), t, ann) in enumerate(zip(values, types, anns)):
        what = f"argument #{i}" if is_arg else f"result #{i - k_in}"
        if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
            raise ShardError(f"{what} is {t}; expected a statically shaped tensor", func.location)
        tt = ir.RankedTensorType(t)
        shape = tuple(tt.shape)
        split = _split_axes(ann) if ann is not None else [[] for _ in shape]
        split = split + [[] for _ in range(len(shape) - len(split))]
        local = []
        for d, axes in enumerate(split):
            count = math.prod(grid[a] for a in axes) if axes else 1
            if shape[d] % count:
                raise ShardError(f"{what}: dimension {d} of {shape[d]} does not split over grid axes {axes} "
                                 f"({count} blocks)", func.location)
            local.append(shape[d] // count)
        out.append(Layout(shape, tuple(local), str(tt.element_type), split))
    return Boundary(name, list(grid), out[:k_in], out[k_in:])


def reference(module_op: ir.Operation, entry: str | None = None) -> str:
    """The same program unsharded, on memrefs (the annotations stripped, the
    tensor route run), as text: what a runner checks the partitioned one
    against. The module is left as it was."""
    plain = ir.Module.parse(str(module_op.get_asm(enable_debug_info=True)), module_op.context)
    strip_annotations(plain.operation)
    run(plain.operation, pipeline(tensor_route()))
    return str(plain.operation.get_asm(enable_debug_info=True))
