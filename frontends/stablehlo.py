"""The StableHLO frontend: programs as JAX exports them (and other XLA
frontends), in MLIR's generic printed form.

    module = parse(lowered.compiler_ir("stablehlo"))   # or generic text
    boundary = layouts(module.operation)                # which block each rank holds
    pipeline.run(module.operation, routes.pipeline(route(module.operation)))

Two forms come in (docs/frontends.md):

- **shard_map** (`sdy.manual_computation` over every mesh axis; with GSPMD,
  the function called between SPMDFullToShardShape and SPMDShardToFullShape):
  the body is already one device's program. `coll-from-stablehlo` makes it the
  function's body, an SPMD function (`coll.ranks` = the mesh's size, rank r
  = the mesh position with linear index r), its collectives coll's tensor
  collectives over the groups their replica groups name (dense lists of
  partition ids, or `#stablehlo.replica_group_mesh_axes` resolved against
  the `sdy.mesh`), collective_permute coll.permute over the pairs it
  names, `partition_id` a read of the rank;
- **jit with shardings** (`sdy.sharding` on arguments and results, no
  collective yet): the shardings become upstream `shard` annotations and
  the module takes coll's shard route, whose partitioning inserts the
  collectives XLA's partitioner would.

In both, the local compute is still StableHLO: `coll-stablehlo-to-linalg`
runs jaxlib's own `stablehlo-legalize-to-linalg` in a child process
(jaxlib bundles another MLIR than coll's). It runs after the import, so
the collectives' reduction regions, which that pass rewrites too, are
read before it. What this frontend cannot import is refused at the op,
named: `num_replicas > 1`, a partially manual shard_map, one without a
collective, Shardy's open dimensions and sub-axes, tuple results, a
collective_permute without a channel, and any collective without a coll
form (send, recv).
"""
import json
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mlir import ir
from mlir.rewrite import RewritePatternSet, walk_and_apply_patterns

from ..collectives import BY_NAME, COLLECTIVES as COLLECTIVE_CLASSES
from ..core.errors import PassError
from ..core.registry import register
from ..ir import make_context
from ..ir.kinds import ELEMENTS
from ..ir.types import token_type
from . import shard, tensor
from .shard import Boundary, Layout, grid_groups
from .spmd import RANKS_ATTR

# How to get the generic form out of JAX: said with every refusal of another form.
GENERIC_HINT = ("print the generic form from JAX: jax.jit(f).lower(*args).compiler_ir('stablehlo')"
                ".operation.get_asm(print_generic_op_form=True, enable_debug_info=True), or hand that "
                "module to coll.frontends.stablehlo.parse as it is")
BYTECODE_MAGIC = b"ML\xefR"
PREFIXES = ("stablehlo.", "sdy.", "mhlo.", "chlo.")

# The one op of a reduction region -> coll's kind (ir/kinds.py).
KINDS = {"stablehlo.add": "sum", "stablehlo.multiply": "prod", "stablehlo.maximum": "max",
         "stablehlo.minimum": "min", "stablehlo.and": "and", "stablehlo.or": "or", "stablehlo.xor": "xor"}
# StableHLO collective -> its coll class (each collective's STABLEHLO mapping, coll/collectives/).
COLLECTIVES = {cls.STABLEHLO[0]: cls for cls in COLLECTIVE_CLASSES if cls.STABLEHLO}
COLLECTIVE_NAMES = tuple(cls.NAME for cls in COLLECTIVE_CLASSES)
# Ops whose ids are partition ids whenever they have a channel (StableHLO's
# cross_partition mode); the others need use_global_device_ids for that.
CROSS_PARTITION = ("stablehlo.all_to_all", "stablehlo.collective_broadcast", "stablehlo.collective_permute")
RANK_OPS = ("stablehlo.partition_id", "stablehlo.replica_id")
# collective_permute's pairs become coll.permute's (a mapping of its own: _Importer.permute).
PERMUTE = BY_NAME["coll.permute"]
# Known collectives with no coll form.
NO_FORM = {"stablehlo.send": "coll has no point-to-point send", "stablehlo.recv": "coll has no point-to-point recv"}
# What the pattern set rewrites (or refuses): collectives and rank reads.
IMPORTED = {*COLLECTIVES, *NO_FORM, *RANK_OPS, "stablehlo.collective_permute"}
# A func.call as parse holds it while it is inside a shard_map body.
DEFERRED_CALL = "coll_stablehlo.call"
MAX_CALL_DEPTH = 64
LEGALIZE = Path(__file__).with_name("jaxlib_legalize.py")
LEGALIZE_TIMEOUT = 300


class StableHLOError(PassError):
    """Input this frontend does not take, located at the op it is about."""


# -- reading Shardy's attributes (opaque to 22.1.8: read from their text) ---

@dataclass
class Mesh:
    """An `sdy.mesh`: axis names and sizes, and the device (partition id)
    at each mesh position (`device_ids`, else position = id)."""
    name: str
    axes: list         # [(name, size)]
    device_ids: list

    @property
    def shape(self):
        return [s for _, s in self.axes] or [1]

    @property
    def size(self):
        return math.prod(self.shape)

    def axis(self, name, where):
        names = [n for n, _ in self.axes]
        if name not in names:
            raise StableHLOError(f"axis \"{name}\" is not an axis of mesh @{self.name} ({', '.join(names)})", where)
        return names.index(name)

    def rank_of(self, device, where):
        """The rank (mesh position) of partition id `device`."""
        if device not in self.device_ids:
            raise StableHLOError(f"device {device} is not in mesh @{self.name} (devices "
                                 f"{self.device_ids[0]}..{self.device_ids[-1]})", where)
        return self.device_ids.index(device)


def _mesh(op):
    text = str(op.attributes["mesh"])
    name = ir.StringAttr(op.attributes["sym_name"]).value
    axes = [(n, int(s)) for n, s in re.findall(r'"([^"]+)"\s*=\s*(\d+)', text)]
    ids = re.search(r"device_ids\s*=\s*\[([^\]]*)\]", text)
    size = math.prod(s for _, s in axes)
    device_ids = [int(x) for x in ids.group(1).split(",") if x.strip()] if ids else list(range(size))
    if len(device_ids) != size:
        raise StableHLOError(f"mesh @{name} has {size} positions but {len(device_ids)} device_ids", op.location)
    return Mesh(name, axes, device_ids)


def _meshes(module_op):
    return {m.name: m for m in (_mesh(op.operation) for op in module_op.regions[0].blocks[0].operations
                                if op.operation.name == "sdy.mesh")}


_DIM = re.compile(r"\{([^{}]*)\}(p\d+)?")


def _sharding(text, meshes, where):
    """`<@mesh, [{}, {"x"}]>` (the inside of `#sdy.sharding` or of one
    entry of `#sdy.sharding_per_value`) -> (Mesh, per dimension the mesh
    axis indices it is split over). Refuses what has no plain block layout."""
    m = re.match(r"\s*(?:#sdy\.sharding)?<\s*@([\w.$-]+)\s*,\s*\[(.*)\](.*)>\s*$", text, re.S)
    if not m:
        raise StableHLOError(f"cannot read sharding {text}; expected <@mesh, [{{...}}, ...]> "
                             "(an inline mesh is not imported)", where)
    mesh_name, dims_text, rest = m.groups()
    if mesh_name not in meshes:
        raise StableHLOError(f"sharding {text.strip()} names @{mesh_name}, which is not an sdy.mesh of this module",
                             where)
    mesh = meshes[mesh_name]
    if "unreduced" in rest:
        raise StableHLOError(f"sharding {text.strip()} has unreduced axes; expected values split or replicated",
                             where)
    dims = []
    for inside, priority in _DIM.findall(dims_text):
        if "?" in inside or priority:
            raise StableHLOError(f"sharding {text.strip()} has an open dimension or a priority: expected "
                                 "closed dimensions, as jit's in/out shardings and shard_map give", where)
        if ":" in inside:
            raise StableHLOError(f"sharding {text.strip()} splits a dimension over a sub-axis; expected whole "
                                 "mesh axes", where)
        dims.append([mesh.axis(a, where) for a in re.findall(r'"([^"]+)"', inside)])
    return mesh, dims


def _per_value(text):
    """The entries of `#sdy.sharding_per_value<[<...>, <...>]>`, as text."""
    inner = text[text.index("[") + 1:text.rindex("]")]
    out, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [c for c in (x.strip() for x in out + [cur]) if c]


def _attr_dicts(func, key, n):
    if key not in func.attributes:
        return [{} for _ in range(n)]
    return [{a.name: a.attr for a in ir.DictAttr(d)} for d in ir.ArrayAttr(func.attributes[key])]


# -- what a module is --------------------------------------------------------

def _ops(root):
    """Every op under `root`, nested ones first, listed before any change."""
    found = []

    def visit(op):
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    found.append(child.operation)
                    visit(child.operation)
    visit(root)
    return found


def detect(module_op):
    """Whether `module_op` is StableHLO (an op of stablehlo, sdy, mhlo or
    chlo, or XLA's partition count on the module)."""
    if "mhlo.num_partitions" in module_op.attributes:
        return True
    found = []

    def visit(op):  # stops at the first: the driver asks this of every module
        if op.name.startswith(PREFIXES):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    module_op.walk(visit)
    return bool(found)


def entry(module_op):
    """The function JAX exports (`main`), else the only public one."""
    funcs = [op.operation for op in module_op.regions[0].blocks[0].operations
             if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)]
    names = [ir.StringAttr(f.attributes["sym_name"]).value for f in funcs]
    if "main" in names:
        return funcs[names.index("main")]
    public = [f for f in funcs if "sym_visibility" not in f.attributes
              or ir.StringAttr(f.attributes["sym_visibility"]).value == "public"]
    if len(public) != 1:
        raise StableHLOError(f"expected one public function (JAX exports @main), found "
                             f"{', '.join('@' + n for n in names) or 'none'}", module_op.location)
    return public[0]


def _manual(func):
    found = [op for op in _ops(func) if op.name == "sdy.manual_computation"]
    if len(found) > 1:
        raise StableHLOError("a second shard_map in one function: coll-from-stablehlo imports a function "
                             "that is one shard_map (sdy.manual_computation)", found[1].location)
    return found[0] if found else None


def _is_jit(module_op):
    """A jit program with shardings: no shard_map, sdy.sharding at its boundary."""
    f = entry(module_op)
    if _manual(f) is not None:
        return False
    return any("sdy.sharding" in attrs for key in ("arg_attrs", "res_attrs")
               for attrs in _attr_dicts(f, key, 0))


# -- the frontend (frontends/__init__.py) --------------------------------------
NAME = "stablehlo"
# its arguments are global arrays, laid out over the mesh by the shardings
# (`layouts`; a runner scatters them: backends/frontend.py).
GLOBAL = True


def route(module_op=None, backend=None, **_):
    """The pipeline elements from this StableHLO module to coll's SPMD
    function on memrefs: import, local compute to linalg, then the shard
    frontend's route (jit with shardings: partitioning inserts the
    collectives) or the tensor frontend's (shard_map: the collectives are
    there); the SPMD frontend takes it on from there."""
    front = ["coll-from-stablehlo", "coll-stablehlo-to-linalg"]
    if module_op is not None and _is_jit(module_op):
        # No cse before partitioning: one linalg.fill shared by two matmuls
        # of different shardings aborts upstream's shard-partition (22.1.8).
        return front + shard.route()
    return front + ["canonicalize", "cse"] + tensor.route() + ["canonicalize", "cse"]


# -- parsing -----------------------------------------------------------------

_SNIFF = re.compile(rb'"(?:sdy|stablehlo|mhlo|chlo)\.|^\s*(?:sdy|stablehlo|mhlo|chlo)\.|mhlo\.num_partitions', re.M)


def sniff(data):
    """Whether input bytes look like StableHLO (generic or pretty), for a
    tool deciding, before it parses, to parse with `parse` (which allows
    the unregistered dialects and refuses the pretty form with advice).
    MLIR bytecode says nothing about its dialects here: False."""
    return not data.startswith(BYTECODE_MAGIC) and _SNIFF.search(data) is not None


def parse(source, context=None):
    """StableHLO in generic form -> ir.Module in `context` (default: the
    current one, else a new one with coll loaded; unregistered dialects are
    allowed in it, as stablehlo and sdy are not dialects of coll's MLIR).
    `source`: text, bytes, or a module of any MLIR bindings (jaxlib's
    `compiler_ir('stablehlo')` included), printed generic with its
    locations. Bytecode and the pretty form are refused (StableHLOError,
    located) with how to print the generic form."""
    ctx = context or ir.Context.current or make_context()
    if isinstance(source, ir.Module) and source.context is ctx:
        return source
    if hasattr(source, "operation") and hasattr(source.operation, "get_asm"):
        source = source.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    data = source.encode() if isinstance(source, str) else bytes(source)
    with ctx, ir.Location.unknown():
        if data.startswith(BYTECODE_MAGIC):
            raise StableHLOError(f"MLIR bytecode (jax.export's serialized module, or another MLIR's "
                                 f"bytecode) is not read across MLIR versions; {GENERIC_HINT}",
                                 ir.Location.file("<input>", 1, 1))
        ctx.allow_unregistered_dialects = True
        text = data.decode("utf-8", errors="replace")
        try:
            return ir.Module.parse(text)
        except ir.MLIRError as e:
            diags = e.error_diagnostics
            said = diags[0].message if diags else str(e)
            if "does not reference a valid function" in said and '"sdy.manual_computation"' in text:
                # A call in a shard_map body (jax.nn.relu is one): 22.1.8
                # takes Shardy's unregistered region for a symbol table of
                # its own and finds no callee there. The calls wait as
                # DEFERRED_CALL ops until the body is the function's.
                return ir.Module.parse(text.replace('"func.call"(', f'"{DEFERRED_CALL}"('))
            if re.search(r"Dialect `(sdy|stablehlo|mhlo|chlo)' not found|custom op '(sdy|stablehlo|mhlo|chlo)\.",
                         said):
                raise StableHLOError(f"StableHLO in the pretty form ({said}); coll's MLIR reads it only in "
                                     f"the generic form: {GENERIC_HINT}",
                                     diags[0].location if diags else None) from None
            raise


# -- the layouts at the boundary -------------------------------------------

def _layout(value_type, dims, mesh, where, what, name=None):
    t = ir.RankedTensorType(value_type) if isinstance(value_type, ir.RankedTensorType) else None
    if t is None or not t.has_static_shape:
        raise StableHLOError(f"{what} is {value_type}; expected a statically shaped tensor", where)
    shape = list(t.shape)
    dims = dims + [[] for _ in range(len(shape) - len(dims))]
    local = []
    for d, axes in enumerate(dims):
        count = math.prod(mesh.shape[a] for a in axes) if mesh else 1
        if shape[d] % count:
            raise StableHLOError(f"{what}: dimension {d} of {shape[d]} does not split into {count} blocks", where)
        local.append(shape[d] // count)
    element = str(t.element_type)
    if element not in ELEMENTS:
        raise StableHLOError(f"{what} has element type {element}; expected one of: {', '.join(ELEMENTS)}", where)
    return Layout(tuple(shape), tuple(local), element, dims, name)


def _arg_name(arg):
    """JAX's name of an argument (its location, with debug info), or None."""
    loc = arg.location
    return loc.name_str if loc.is_a_name() else None


def _result_name(attrs):
    info = attrs.get("jax.result_info")
    if info is None:
        return None
    name = ir.StringAttr(info).value
    return name if name and name != "result" else None


def layouts(module_op):
    """The Boundary of the StableHLO module (read before `route` runs:
    the import drops Shardy's attributes). Raises StableHLOError."""
    meshes = _meshes(module_op)
    f = entry(module_op)
    name = ir.StringAttr(f.attributes["sym_name"]).value
    ft = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    block = f.regions[0].blocks[0]
    arg_attrs = _attr_dicts(f, "arg_attrs", len(ft.inputs))
    res_attrs = _attr_dicts(f, "res_attrs", len(ft.results))
    mc = _manual(f)
    gspmd = _gspmd(module_op, f) if mc is None else None
    if mc is not None:
        shape_of, ins, outs = _manual_boundary(f, mc, meshes)
        grid = shape_of.shape
    elif gspmd is not None:
        grid = gspmd.mesh.shape
        ins = [(gspmd.mesh, split) for split in gspmd.ins]
        outs = [(gspmd.mesh, split) for split in gspmd.outs]
    else:
        mesh, ins, outs = None, [], []
        for i, attrs in enumerate(arg_attrs):
            ins.append(_sharding(str(attrs["sdy.sharding"]), meshes, f.location) if "sdy.sharding" in attrs
                       else (None, []))
        for j, attrs in enumerate(res_attrs):
            outs.append(_sharding(str(attrs["sdy.sharding"]), meshes, f.location) if "sdy.sharding" in attrs
                        else (None, []))
        used = {m.name: m for m, _ in ins + outs if m is not None}
        if len(used) > 1:
            raise StableHLOError(f"the shardings name meshes {', '.join('@' + n for n in sorted(used))}; expected "
                                 "one mesh", f.location)
        mesh = next(iter(used.values()), None)
        grid = mesh.shape if mesh else [1]
        ins = [(mesh, dims) for _, dims in ins]
        outs = [(mesh, dims) for _, dims in outs]
    inputs = [_layout(t, dims, m, f.location, f"argument #{i}", _arg_name(block.arguments[i]))
              for i, (t, (m, dims)) in enumerate(zip(ft.inputs, ins))]
    outputs = [_layout(t, dims, m, f.location, f"result #{j}", _result_name(res_attrs[j]))
               for j, (t, (m, dims)) in enumerate(zip(ft.results, outs))]
    return Boundary(name, list(grid), inputs, outputs)


def _manual_boundary(func, mc, meshes):
    """(mesh, per argument (mesh, dims), per result (mesh, dims)) of a
    function that is one shard_map: its in_shardings by the argument each
    operand is, its out_shardings by the result each is returned as."""
    in_sh = [_sharding(t, meshes, mc.location) for t in _per_value(str(mc.attributes["in_shardings"]))]
    out_sh = [_sharding(t, meshes, mc.location) for t in _per_value(str(mc.attributes["out_shardings"]))]
    used = {m.name for m, _ in in_sh + out_sh}
    if len(used) > 1:
        raise StableHLOError(f"the shard_map's shardings name meshes {', '.join('@' + n for n in sorted(used))}; "
                             "expected one mesh", mc.location)
    mesh = (in_sh + out_sh)[0][0] if in_sh + out_sh else _only_mesh(meshes, mc)
    args, results = _boundary_values(func, mc)
    n_args = len(func.regions[0].blocks[0].arguments)
    ins = [(mesh, [])] * n_args
    for k, a in enumerate(args):
        ins[a] = in_sh[k]
    outs = [out_sh[k] for k in results]
    return mesh, ins, outs


def _only_mesh(meshes, where):
    if len(meshes) != 1:
        raise StableHLOError(f"expected one sdy.mesh, found {len(meshes)}", where)
    return next(iter(meshes.values()))


def _through_constraints(value):
    """`value` with sdy.sharding_constraint ops looked through (they carry
    no work once the shardings are the boundary's)."""
    while not isinstance(value.owner, ir.Block) and value.owner.name == "sdy.sharding_constraint":
        value = value.owner.operands[0]
    return value


def _boundary_values(func, mc):
    """For a function that is one shard_map: the argument number of each
    operand of `mc`, and the result of `mc` each function result is.
    Refuses other work outside the shard_map, at the op."""
    block = func.regions[0].blocks[0]
    for op in block.operations:
        op = op.operation
        if op.name not in ("sdy.manual_computation", "sdy.sharding_constraint", "func.return"):
            raise StableHLOError(f"'{op.name}' outside the shard_map body: coll-from-stablehlo imports a function "
                                 "that is one shard_map (sdy.manual_computation) from its arguments to its "
                                 "results; expected the work inside the shard_map", op.location)
    args = []
    for v in mc.operands:
        v = _through_constraints(v)
        if not isinstance(v.owner, ir.Block):
            raise StableHLOError("a shard_map operand that is not a function argument; expected the function's "
                                 "arguments as the shard_map's operands", mc.location)
        args.append(v.arg_number)
    ret = block.operations[len(block.operations) - 1]
    results = []
    for v in ret.operands:
        v = _through_constraints(v)
        if v.owner != mc:
            raise StableHLOError("a function result that is not a result of the shard_map; expected the "
                                 "function to return the shard_map's results", ret.location)
        results.append(v.result_number)
    return args, results


# -- GSPMD's manual regions (jax_use_shardy_partitioner=False) -----------------

GSPMD_MARKUP = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")
_TILED = re.compile(r"\{devices=\[([\d,]+)\]<=\[(\d+)\](\s+last_tile_dim_replicate)?\}$")


def _target(op):
    """A custom call's target, else None."""
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return None
    return ir.StringAttr(op.attributes["call_target_name"]).value


def _hlo_sharding(op):
    return ir.StringAttr(op.attributes["mhlo.sharding"]).value if "mhlo.sharding" in op.attributes else None


def _tiles(text, rank, n, where):
    """An HLO sharding string -> the tile counts of the value's dimensions,
    then the count of replicas of each tile, over devices 0..n-1 in order
    (`<=[n]`); what has no such form is refused."""
    if text == "{replicated}":
        return [1] * rank + [n]
    m = _TILED.match(text or "")
    if not m or int(m.group(2)) != n:
        raise StableHLOError(f"GSPMD sharding {text} is not imported; expected {{replicated}} or "
                             f"{{devices=[...]<=[{n}]}} (tiles over the devices in order; Shardy, JAX's "
                             "default, has no such limit)", where)
    tiles = [int(x) for x in m.group(1).split(",")]
    tiles += [] if m.group(3) else [1]
    if len(tiles) != rank + 1 or math.prod(tiles) != n:
        raise StableHLOError(f"GSPMD sharding {text} does not tile a value of rank {rank} over {n} devices", where)
    return tiles


def _common_grid(all_tiles, where):
    """The grid every tiling is a coarsening of: device d is the grid
    position with linear index d, and a tiling's dimension spans the grid
    axes between its prefix products."""
    cuts = sorted({math.prod(t[:i + 1]) for t in all_tiles for i in range(len(t))} - {1})
    grid, last = [], 1
    for c in cuts:
        if c % last:
            raise StableHLOError(f"GSPMD shardings tile the devices in incompatible ways ({all_tiles}); expected "
                                 "tilings of one grid", where)
        grid.append(c // last)
        last = c
    return grid or [1]


def _split_of(tiles, grid):
    """Per dimension of a value tiled by `tiles`, the grid axes it spans."""
    bounds, cum = [], 1
    for g in grid:
        cum *= g
        bounds.append(cum)
    out, lo = [], 1
    for t in tiles[:-1]:
        hi = lo * t
        out.append([a for a, b in enumerate(bounds) if lo < b <= hi])
        lo = hi
    return out


@dataclass
class _Gspmd:
    """A function whose body is a GSPMD manual region: the call of the
    region, its callee, the mesh of the tilings, the argument each call
    operand is and the call result each function result is, their splits."""
    call: object
    callee: object
    name: str
    mesh: Mesh
    args: list
    results: list
    ins: list      # per function argument: its split
    outs: list     # per function result: its split


def _gspmd(module_op, func):
    """The GSPMD manual region of `func` (JAX's shard_map without Shardy),
    or None; refuses work outside it, at the op."""
    block = func.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    if not any(_target(op) == "SPMDFullToShardShape" for op in ops):
        return None
    for op in ops[:-1]:
        if _target(op) not in GSPMD_MARKUP and op.name != "func.call":
            raise StableHLOError(f"'{op.name}' outside the manual region: coll-from-stablehlo imports a function "
                                 "that is one shard_map (GSPMD: the call between SPMDFullToShardShape and "
                                 "SPMDShardToFullShape); expected the work inside it", op.location)
    calls = [op for op in ops if op.name == "func.call"]
    if len(calls) != 1:
        raise StableHLOError(f"a GSPMD function with {len(calls)} calls; expected one manual region",
                             func.location)
    call = calls[0]
    name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
    callee = ir.SymbolTable(module_op)[name]
    n = _num_attr(module_op, "mhlo.num_partitions") or 1

    def chain(v, targets):
        """v through the custom calls `targets` (outermost last): (the
        value they start from, the first one's sharding)."""
        sharding = None
        for t in targets:
            op = v.owner
            if isinstance(op, ir.Block) or _target(op) != t:
                raise StableHLOError(f"expected a custom call {t} here (GSPMD's manual region boundary)",
                                     call.location)
            sharding = sharding or _hlo_sharding(op)
            v = op.operands[0]
        return v, sharding

    args, in_text = [], {}
    for v in call.operands:
        v, _ = chain(v, ["SPMDFullToShardShape"])
        arg, text = chain(v, ["Sharding"])
        if not isinstance(arg.owner, ir.Block):
            raise StableHLOError("a manual region operand that is not a function argument", call.location)
        args.append(arg.arg_number)
        in_text[arg.arg_number] = text
    ret = ops[-1]
    results, out_text = [], []
    for v in ret.operands:
        op = v.owner
        if isinstance(op, ir.Block) or _target(op) != "SPMDShardToFullShape":
            raise StableHLOError("a function result that is not the manual region's (SPMDShardToFullShape)",
                                 ret.location)
        out_text.append(_hlo_sharding(op))
        r, _ = chain(op.operands[0], ["Sharding"])
        if r.owner != call:
            raise StableHLOError("a function result that is not a result of the manual region", ret.location)
        results.append(r.result_number)
    ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    rank = lambda t: len(ir.RankedTensorType(t).shape)
    in_tiles = [_tiles(in_text.get(i, "{replicated}"), rank(t), n, func.location) for i, t in enumerate(ft.inputs)]
    out_tiles = [_tiles(t, rank(ty), n, func.location) for t, ty in zip(out_text, ft.results)]
    grid = _common_grid(in_tiles + out_tiles, func.location)
    mesh = Mesh("gspmd", [(f"d{i}", g) for i, g in enumerate(grid)], list(range(n)))
    return _Gspmd(call, callee, name, mesh, args, results, [_split_of(t, grid) for t in in_tiles],
                  [_split_of(t, grid) for t in out_tiles])


# -- coll-from-stablehlo -------------------------------------------------------

def _num_attr(op, name):
    return ir.IntegerAttr(op.attributes[name]).value if name in op.attributes else None


def _channel(op):
    """The channel handle's id (0 when there is none)."""
    if "channel_handle" not in op.attributes:
        return 0
    m = re.search(r"handle\s*=\s*(-?\d+)", str(op.attributes["channel_handle"]))
    return int(m.group(1)) if m else 0


class _Importer:
    """One module's import: its meshes, partition count and the SPMD
    function's mesh."""

    def __init__(self, module_op):
        self.module = module_op
        replicas = _num_attr(module_op, "mhlo.num_replicas")
        if replicas is not None and replicas > 1:
            raise StableHLOError(f"mhlo.num_replicas = {replicas}: coll imports programs over partitions "
                                 "(shard_map, jit shardings), expected num_replicas = 1", module_op.location)
        self.partitions = _num_attr(module_op, "mhlo.num_partitions")
        self.meshes = _meshes(module_op)
        self.mesh = None

    # -- the function ---------------------------------------------------------
    def run(self):
        f = entry(self.module)
        mc = _manual(f)
        gspmd = _gspmd(self.module, f) if mc is None else None
        if mc is not None:
            self.inline_manual(f, mc)
        elif gspmd is not None:
            self.inline_gspmd(f, gspmd)
        elif _is_jit(self.module):
            self.annotate(f)
        _inline_calls(self.module, f)
        collectives = [op for op in _ops(f) if op.name in IMPORTED]
        if collectives and self.mesh is None:
            raise StableHLOError(f"'{collectives[0].name}' outside a shard_map: coll-from-stablehlo imports "
                                 "collectives of shard_map bodies (sdy.manual_computation)", collectives[0].location)
        if collectives:
            walk_and_apply_patterns(f, self.patterns())
        if self.mesh is not None and not any(op.name in COLLECTIVE_NAMES for op in _ops(f)):
            # coll's SPMD form is a function whose ranks meet in collectives:
            # without one, the back ends would take it for one rank's program.
            raise StableHLOError(f"the shard_map body has no collective between its {self.mesh.size} devices (none, "
                                 "or only groups of one); expected at least one (a program whose devices never "
                                 "communicate runs as one device's program, once per block)", f.location)
        self.clean(f)

    def inline_manual(self, f, mc):
        """The shard_map body becomes the function's body: its arguments
        take the local types, its results the body's, coll.ranks = N."""
        mesh, _, _ = _manual_boundary(f, mc, self.meshes)
        manual = re.findall(r'"([^"]+)"', str(mc.attributes["manual_axes"]))
        free = [n for n, s in mesh.axes if n not in manual and s > 1]
        if free:
            raise StableHLOError(f"a partially manual shard_map (manual axes {', '.join(manual)} of mesh "
                                 f"@{mesh.name}, not {', '.join(free)}); expected every mesh axis manual",
                                 mc.location)
        args, results = _boundary_values(f, mc)
        self.inline(f, mesh, mc, mc.regions[0].blocks[0], args, results)

    def inline_gspmd(self, f, gspmd):
        """GSPMD's manual region (the body called between its
        SPMDFullToShardShape and SPMDShardToFullShape custom calls) becomes
        the function's body, as a shard_map's does."""
        callee = gspmd.callee
        self.inline(f, gspmd.mesh, gspmd.call, callee.regions[0].blocks[0], gspmd.args, gspmd.results)
        if not any(op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == gspmd.name
                   for op in _ops(self.module)):
            callee.erase()

    def inline(self, f, mesh, anchor, body, args, results):
        """`body` (one device's program) moved into `f` before `anchor`: body
        argument k is f's argument args[k] (now of the local type), f's
        result j the body's result results[j]; then the markup around it
        (`anchor`, sharding ops) goes, and f is an SPMD function of
        mesh.size ranks."""
        if self.partitions is not None and self.partitions != mesh.size:
            raise StableHLOError(f"mhlo.num_partitions = {self.partitions} but the manual region runs on "
                                 f"{mesh.size} devices; expected it over every partition", anchor.location)
        self.mesh = mesh
        block = f.regions[0].blocks[0]
        for k, a in enumerate(args):
            arg, local = block.arguments[a], body.arguments[k].type
            if any(args[j] == a for j in range(k)) and arg.type != local:
                raise StableHLOError(f"argument #{a} enters the manual region twice with different shardings",
                                     anchor.location)
            arg.set_type(local)
            body.arguments[k].replace_all_uses_with(arg)
        markup = [o.operation for o in block.operations][:-1]  # all but the return: checked by the caller
        inner_ret = body.operations[len(body.operations) - 1]
        for op in [o.operation for o in body.operations][:-1]:
            op.move_before(anchor)
        ret = block.operations[len(block.operations) - 1]
        for j, k in enumerate(results):
            ret.operands[j] = inner_ret.operands[k]
        for op in reversed(markup):
            op.erase()
        ft = ir.FunctionType.get([a.type for a in block.arguments], [v.type for v in ret.operands])
        f.attributes["function_type"] = ir.TypeAttr.get(ft)
        f.attributes[RANKS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), mesh.size)
        # The arguments are the caller's: bufferization must not write them.
        attrs = _attr_dicts(f, "arg_attrs", len(block.arguments))
        for d in attrs:
            d["bufferization.writable"] = ir.BoolAttr.get(False)
        f.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in attrs])

    def annotate(self, f):
        """jit with shardings: shard.grid for the mesh, shard.shard on each
        argument (its users) and result (both ways, as shard-partition
        wants a result's sharding fixed)."""
        boundary = layouts(self.module)
        block = f.regions[0].blocks[0]
        mesh_names = {m.name for key in ("arg_attrs", "res_attrs")
                      for d in _attr_dicts(f, key, 0) if "sdy.sharding" in d
                      for m in [_sharding(str(d["sdy.sharding"]), self.meshes, f.location)[0]]}
        mesh = self.meshes[mesh_names.pop()]
        for op in _ops(f):
            if op.name.startswith("sdy."):
                raise StableHLOError(f"'{op.name}' inside a jit program: coll imports the shardings of its "
                                     "arguments and results only", op.location)
        with ir.InsertionPoint.at_block_begin(self.module.regions[0].blocks[0]), f.location:
            ir.Operation.create("shard.grid", attributes={"sym_name": ir.StringAttr.get(mesh.name),
                                                          "shape": ir.DenseI64ArrayAttr.get(mesh.shape)})
        first = block.operations[0]
        for arg, lay in zip(block.arguments, boundary.inputs):
            with ir.InsertionPoint(first), f.location:
                s = _shard_sharding(mesh.name, lay.split)
                sh = ir.Operation.create("shard.shard", results=[arg.type], operands=[arg, s])
            arg.replace_all_uses_except(sh.results[0], sh)
        ret = block.operations[len(block.operations) - 1]
        for j, lay in enumerate(boundary.outputs):
            v = ret.operands[j]
            with ir.InsertionPoint(ret), ret.location:
                s = _shard_sharding(mesh.name, lay.split)
                a = ir.Operation.create("shard.shard", results=[v.type], operands=[v, s])
                b = ir.Operation.create("shard.shard", results=[v.type], operands=[a.results[0], s],
                                        attributes={"annotate_for_users": ir.UnitAttr.get()})
            ret.operands[j] = b.results[0]

    def clean(self, f):
        """Drops Shardy and XLA's markup; refuses what is left of sdy."""
        # Only what bufferization reads stays (JAX's names are read by
        # `layouts` before the import; results become arguments later).
        if "arg_attrs" in f.attributes:
            dicts = [{k: v for k, v in d.items() if k == "bufferization.writable"}
                     for d in _attr_dicts(f, "arg_attrs", 0)]
            f.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in dicts])
        if "res_attrs" in f.attributes:
            del f.attributes["res_attrs"]
        if "sym_visibility" in f.attributes:  # public is the default; find_entry wants none
            del f.attributes["sym_visibility"]
        for op in _ops(self.module):
            if op.name.startswith("sdy.") and op.name != "sdy.mesh":
                raise StableHLOError(f"'{op.name}' has no coll form; coll-from-stablehlo imports shard_map "
                                     "bodies and the shardings of jit programs", op.location)
            if op.name == "stablehlo.custom_call":
                target = str(op.attributes["call_target_name"]) if "call_target_name" in op.attributes else "?"
                raise StableHLOError(f"'stablehlo.custom_call' {target} has no coll form (GSPMD's markup is "
                                     "imported around a shard_map's manual region only: export a jit program with "
                                     "Shardy, JAX's default)", op.location)
        for op in [o.operation for o in self.module.regions[0].blocks[0].operations]:
            if op.name == "sdy.mesh":
                op.erase()
        for key in [a for a in self.module.attributes if a.startswith(PREFIXES)]:
            del self.module.attributes[key]

    # -- the collectives ------------------------------------------------------
    def patterns(self):
        s = RewritePatternSet()
        for name in COLLECTIVES:
            s.add(name, self.collective)
        for name in NO_FORM:
            s.add(name, self.no_form)
        s.add("stablehlo.collective_permute", self.permute)
        s.add("stablehlo.partition_id", self.partition_id)
        s.add("stablehlo.replica_id", self.replica_id)
        return s.freeze()

    def no_form(self, op, rewriter):
        raise StableHLOError(f"'{op.name}' has no coll form: {NO_FORM[op.name]}", op.location)

    def groups(self, op):
        """The groups of ranks `op` runs in (each in group order), or
        None when every rank is alone (cross-replica, one replica)."""
        mesh, n = self.mesh, self.mesh.size
        text = str(op.attributes["replica_groups"]) if "replica_groups" in op.attributes else "dense<>"
        m = re.match(r"#stablehlo\.replica_group_mesh_axes<\s*mesh\s*=\s*@([\w.$-]+)\s*,\s*axes\s*=\s*\[(.*)\]\s*>",
                     text)
        if m:
            if "sub_axis_info" in m.group(2):
                raise StableHLOError(f"'{op.name}' groups over a sub-axis ({text}); expected whole mesh axes",
                                     op.location)
            named = self.meshes.get(m.group(1))
            if named is None or named.axes != mesh.axes:
                raise StableHLOError(f"'{op.name}' groups over mesh @{m.group(1)}, not the shard_map's mesh "
                                     f"@{mesh.name}", op.location)
            axes = [mesh.axis(a, op.location) for a in re.findall(r'name\s*=\s*"([^"]+)"', m.group(2))]
            return grid_groups(mesh.shape, axes)
        try:
            dense = ir.DenseIntElementsAttr(op.attributes["replica_groups"]) \
                if "replica_groups" in op.attributes else None
        except ValueError:
            raise StableHLOError(f"'{op.name}' replica_groups {text}: expected a dense tensor of ids or "
                                 "#stablehlo.replica_group_mesh_axes", op.location) from None
        ids = []
        if dense is not None and dense.type.shape and 0 not in dense.type.shape:
            rows, cols = ir.ShapedType(dense.type).shape
            flat = [int(dense[i]) for i in range(rows * cols)]
            ids = [flat[r * cols:(r + 1) * cols] for r in range(rows)]
        if any(i < 0 for g in ids for i in g):
            raise StableHLOError(f"'{op.name}' has groups of different sizes (padded with -1); expected groups "
                                 "of one size", op.location)
        partitions = _channel(op) > 0 and ("use_global_device_ids" in op.attributes or op.name in CROSS_PARTITION)
        if partitions:  # ids are partition ids; none: all of them
            return [[mesh.rank_of(i, op.location) for i in g] for g in ids] or [list(range(n))]
        # Replica ids, and there is one replica (0): with a channel the
        # group spans every partition, without one each rank is alone.
        if any(i != 0 for g in ids for i in g):
            raise StableHLOError(f"'{op.name}' groups replicas {ids} but the program has one replica; "
                                 "expected groups of partition ids (use_global_device_ids)", op.location)
        return [list(range(n))] if _channel(op) > 0 else None

    def collective(self, op, rewriter):
        cls = COLLECTIVES[op.name]
        if len(op.operands) != 1 or len(op.results) != 1:
            raise StableHLOError(f"'{op.name}' on {len(op.operands)} operands; expected one (a tuple "
                                 "collective is not imported)", op.location)
        src, res = op.operands[0], op.results[0]
        element = str(ir.RankedTensorType(src.type).element_type)
        if element not in ELEMENTS:
            raise StableHLOError(f"'{op.name}' on {src.type}: coll has no element type {element}; expected one "
                                 f"of: {', '.join(ELEMENTS)}", op.location)
        kind = self.kind(op) if cls.HAS_KIND else None
        groups = self.groups(op)
        if groups is not None:
            sizes = {len(g) for g in groups}
            covered = sorted(r for g in groups for r in g)
            if len(sizes) != 1 or covered != list(range(self.mesh.size)):
                raise StableHLOError(f"'{op.name}' groups {groups} do not split ranks 0..{self.mesh.size - 1} "
                                     "into groups of one size; expected every rank in exactly one group",
                                     op.location)
        if groups is None or len(groups[0]) == 1:  # each rank alone: nothing moves
            if src.type != res.type:
                raise StableHLOError(f"'{op.name}' in groups of one returns {res.type} for {src.type}",
                                     op.location)
            rewriter.replace_op(op, [src])
            return
        attrs = {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0])}
        if len(groups) == 1 and groups[0] == list(range(self.mesh.size)):
            attrs["devices"] = ir.DenseI64ArrayAttr.get(groups[0])
        else:  # devices: the positions in a group
            attrs["devices"] = ir.DenseI64ArrayAttr.get(list(range(len(groups[0]))))
            attrs["groups"] = ir.DenseI64ArrayAttr.get([r for g in groups for r in g])
        if kind is not None:
            attrs["kind"] = ir.StringAttr.get(kind)
        i64 = ir.IntegerType.get_signless(64)
        for ours, theirs in cls.STABLEHLO[1].items():
            attrs[ours] = ir.IntegerAttr.get(i64, ir.IntegerAttr(op.attributes[theirs]).value)
        if cls.ROOTED:  # the first of each group
            attrs["root"] = ir.IntegerAttr.get(i64, groups[0][0] if "groups" not in attrs else 0)
        if "split_count" in op.attributes and ir.IntegerAttr(op.attributes["split_count"]).value != len(groups[0]):
            raise StableHLOError(f"'{op.name}' split_count = {ir.IntegerAttr(op.attributes['split_count']).value} "
                                 f"but its groups have {len(groups[0])} ranks; expected them equal", op.location)
        with ir.InsertionPoint(op), op.location:
            new = ir.Operation.create(cls.NAME, results=[token_type(), res.type], operands=[src], attributes=attrs)
        rewriter.replace_op(op, [new.results[1]])

    def permute(self, op, rewriter):
        """collective_permute -> coll.permute over every rank: its pairs are
        partition ids (a channel: StableHLO's cross_partition mode), each
        the rank that device is; a rank no pair targets gets zeros (coll's
        tensor form, as StableHLO says)."""
        src, res = op.operands[0], op.results[0]
        element = str(ir.RankedTensorType(src.type).element_type)
        if element not in ELEMENTS:
            raise StableHLOError(f"'{op.name}' on {src.type}: coll has no element type {element}; expected one "
                                 f"of: {', '.join(ELEMENTS)}", op.location)
        if _channel(op) <= 0:
            raise StableHLOError(f"'{op.name}' without a channel permutes replicas within each partition, and "
                                 "the program has one replica; expected a channel_handle (pairs of partition "
                                 "ids, as JAX's ppermute exports)", op.location)
        dense = ir.DenseIntElementsAttr(op.attributes["source_target_pairs"])
        pairs = [self.mesh.rank_of(int(dense[i]), op.location) for i in range(len(dense))]
        attrs = {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0]),
                 "devices": ir.DenseI64ArrayAttr.get(list(range(self.mesh.size))),
                 "pairs": ir.DenseI64ArrayAttr.get(pairs)}
        with ir.InsertionPoint(op), op.location:
            new = ir.Operation.create(PERMUTE.NAME, results=[token_type(), res.type], operands=[src],
                                      attributes=attrs)
        rewriter.replace_op(op, [new.results[1]])

    def kind(self, op):
        """The reduction kind of `op`'s region: its one op before the return."""
        ops = [o.operation.name for o in op.regions[0].blocks[0].operations]
        if len(ops) != 2 or ops[0] not in KINDS:
            raise StableHLOError(f"'{op.name}' reduces with {ops[:-1]}; expected one of "
                                 f"{', '.join(KINDS)} in its region", op.location)
        return KINDS[ops[0]]  # valid for the element type: the verifier checks, at the op

    def partition_id(self, op, rewriter):
        """The rank's partition id: the rank (mpi.comm_rank, which the
        routes read as coll-from-shard's rank), through the mesh's
        device_ids when they are not 0..N-1."""
        i32 = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(op), op.location:
            comm = ir.Operation.create("mpi.comm_world", results=[ir.Type.parse("!mpi.comm")]).results[0]
            value = ir.Operation.create("mpi.comm_rank", results=[i32], operands=[comm]).results[0]
            ids = self.mesh.device_ids
            if ids != list(range(len(ids))):
                index = ir.Operation.create("arith.index_cast", results=[ir.IndexType.get()],
                                            operands=[value]).results[0]
                table = ir.Operation.create("arith.constant", results=[ir.RankedTensorType.get([len(ids)], i32)],
                                            attributes={"value": ir.DenseElementsAttr.get(
                                                np.array(ids, dtype=np.int32))}).results[0]
                value = ir.Operation.create("tensor.extract", results=[i32], operands=[table, index]).results[0]
            value = ir.Operation.create("tensor.from_elements", results=[ir.RankedTensorType.get([], i32)],
                                        operands=[value]).results[0]
            # Back to partition_id's tensor<ui32>; legalized with the users.
            new = ir.Operation.create("stablehlo.convert", results=[op.results[0].type], operands=[value])
        rewriter.replace_op(op, [new.results[0]])

    def replica_id(self, op, rewriter):
        """One replica: its id is 0."""
        t = op.results[0].type
        with ir.InsertionPoint(op), op.location:
            new = ir.Operation.create("stablehlo.constant", results=[t], attributes={
                "value": ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(ir.RankedTensorType(t).element_type,
                                                                              0))})
        rewriter.replace_op(op, [new.results[0]])


def _inline_calls(module_op, func):
    """Every call in `func` (jax.nn.relu, a loop's body, a nested jit: JAX
    lowers them to private functions) replaced by its callee's body, until
    none is left; then the functions nothing calls go. One device's program
    becomes straight code: what coll's SPMD form and shard's partitioning
    take (neither crosses calls)."""
    body = module_op.regions[0].blocks[0]
    funcs = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation for op in body.operations
             if op.operation.name == "func.func"}
    for depth in range(MAX_CALL_DEPTH + 1):
        calls = [op for op in _ops(func) if op.name in ("func.call", DEFERRED_CALL)]
        if not calls:
            break
        if depth == MAX_CALL_DEPTH:
            raise StableHLOError(f"calls nested deeper than {MAX_CALL_DEPTH} (a recursive function?); expected "
                                 "calls that inlining ends", calls[0].location)
        for call in calls:
            name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            callee = funcs.get(name)
            if callee is None or len(callee.regions[0].blocks) != 1:
                raise StableHLOError(f"'func.call' of @{name}, which is not a function of this module with one "
                                     "block", call.location)
            block = callee.regions[0].blocks[0]
            mapping = dict(zip(block.arguments, call.operands))
            ops = [o.operation for o in block.operations]
            for op in ops[:-1]:
                _clone_before(op, call, mapping)
            for res, v in zip(call.results, ops[-1].operands):
                res.replace_all_uses_with(mapping.get(v, v))
            call.erase()
    text = func.get_asm(print_generic_op_form=True)
    for name, op in funcs.items():
        if op != func and "sym_visibility" in op.attributes and f"@{name}" not in text:
            op.erase()  # private, and called no more: every call was in func


def _clone_before(op, anchor, mapping):
    """A clone of `op` before `anchor`, on the values `mapping` gives for
    the callee's (in its nested regions too); its results join `mapping`."""
    new = op.clone(ir.InsertionPoint(anchor))
    for i, v in enumerate(op.operands):
        new.operands[i] = mapping.get(v, v)

    def remap(inner):
        for i, v in enumerate(inner.operands):
            if v in mapping:
                inner.operands[i] = mapping[v]
        return ir.WalkResult.ADVANCE
    for region in new.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner.operation.walk(remap)
    for old, res in zip(op.results, new.results):
        mapping[old] = res


def _shard_sharding(mesh_name, split):
    """`shard.sharding @mesh split_axes = [...]` for a Layout's split."""
    dims = [list(d) for d in split]
    while len(dims) > 1 and not dims[-1]:
        dims.pop()
    dims = dims or [[]]
    text = "#shard<axisarray[" + ", ".join("[" + ", ".join(map(str, d)) + "]" for d in dims) + "]>"
    return ir.Operation.create("shard.sharding", results=[ir.Type.parse("!shard.sharding")], attributes={
        "grid": ir.FlatSymbolRefAttr.get(mesh_name),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0]),
        "split_axes": ir.Attribute.parse(text),
        "static_halo_sizes": ir.DenseI64ArrayAttr.get([]),
        "static_sharded_dims_offsets": ir.DenseI64ArrayAttr.get([])}).results[0]


@register("coll-from-stablehlo",
          "Import StableHLO in generic form (JAX's export): a shard_map body becomes an SPMD function "
          "(coll.ranks) whose collectives are coll's tensor collectives over the groups the replica groups "
          "name; a jit program's Shardy shardings become upstream shard annotations; the local compute "
          "stays StableHLO (coll-stablehlo-to-linalg)",
          anchor="builtin.module")
def from_stablehlo(module_op):
    with module_op.context, module_op.location:
        _Importer(module_op).run()


# -- coll-stablehlo-to-linalg ------------------------------------------------

def _local_compute(module_op):
    return [op for op in _ops(module_op) if op.name.startswith(("stablehlo.", "chlo."))]


@register("coll-stablehlo-to-linalg",
          "The local compute of an imported StableHLO module to linalg: jaxlib's own "
          "stablehlo-legalize-to-linalg, in a child process (jaxlib bundles another MLIR); "
          "refused, located, where jaxlib does not import",
          anchor="builtin.module")
def stablehlo_to_linalg(module_op):
    left = _local_compute(module_op)
    if not left:
        return
    for op in left:
        if op.name in IMPORTED:
            raise StableHLOError(f"'{op.name}' before coll-from-stablehlo: import the collectives first "
                                 "(stablehlo-legalize-to-linalg rewrites their reduction regions)", op.location)
    text = module_op.get_asm(enable_debug_info=True, print_generic_op_form=True)
    try:
        proc = subprocess.run([sys.executable, str(LEGALIZE)], input=text, capture_output=True, text=True,
                              timeout=LEGALIZE_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise StableHLOError(f"jaxlib's stablehlo-legalize-to-linalg did not finish within {LEGALIZE_TIMEOUT} s",
                             left[0].location) from None
    if proc.returncode == 3:
        raise StableHLOError(f"'{left[0].name}': the local compute is StableHLO, which jaxlib's "
                             f"stablehlo-legalize-to-linalg takes to linalg, and jaxlib does not import here "
                             f"({proc.stderr.strip()}); expected jax and jaxlib installed (`make setup`, or "
                             "pip install -e '.[jax]')", left[0].location)
    if proc.returncode != 0:
        raise _legalize_error(proc.stderr, left, module_op)
    new = ir.Module.parse(proc.stdout, module_op.context)
    body = module_op.regions[0].blocks[0]
    for op in list(body.operations):
        op.operation.erase()
    for op in list(new.body.operations):
        op = op.operation
        op.detach_from_parent()
        ir.InsertionPoint(body).insert(op)
    left = _local_compute(module_op)
    if left:
        raise StableHLOError(f"'{left[0].name}' has no linalg form (jaxlib's stablehlo-legalize-to-linalg left "
                             "it)", left[0].location)


def _legalize_error(stderr, ops, module_op):
    """What jaxlib said, at our op whose location it names."""
    try:
        found = json.loads(stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        found = [["", stderr.strip()[:500] or "the child process failed"]]
    where = {str(op.location): op.location for op in ops}
    loc, message = found[0]
    return StableHLOError(f"jaxlib's stablehlo-legalize-to-linalg failed: {message}",
                          where.get(loc, ops[0].location if ops else module_op.location))
