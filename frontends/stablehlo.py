"""The StableHLO frontend: programs as JAX exports them (and other XLA
frontends), in MLIR's generic printed form.

    module = parse(lowered.compiler_ir("stablehlo"))   # or generic text
    boundary = layouts(module.operation)                # which block each rank holds
    pipeline.run(module.operation, routes.pipeline(route(module.operation)))

This module parses, detects and routes a module and reads its layouts at
the boundary (Shardy's and GSPMD's shardings); the passes of its route,
coll-from-stablehlo and coll-stablehlo-to-linalg, are
frontends/stablehlo_import.py.

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
  collective yet): XLA's own partitioner makes it one device's program
  with collectives (`coll-xla-partition`, frontends/stablehlo_partition.py,
  which says why not upstream's), which is imported as a shard_map body.

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
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

from ..collectives import BY_NAME
from ..collectives import COLLECTIVES as COLLECTIVE_CLASSES
from ..core.errors import PassError
from ..ir import MAX_DEVICES, make_context
from ..ir.kinds import ELEMENTS
from ..ir.walk import all_ops
from . import stablehlo_xla, tensor
from .shard import Boundary, Layout
from .sniff import BYTECODE_MAGIC, claimed_by
from .spmd import BackendFacts

# How to get the generic form out of JAX: said with every refusal of another form.
GENERIC_HINT = ("print the generic form from JAX: jax.jit(f).lower(*args).compiler_ir('stablehlo')"
                ".operation.get_asm(print_generic_op_form=True, enable_debug_info=True), or hand that "
                "module to coll.frontends.stablehlo.parse as it is")
PREFIXES = ("stablehlo.", "sdy.", "mhlo.", "chlo.")

# The one op of a reduction region -> coll's kind (ir/kinds.py).
KINDS = {"stablehlo.add": "sum", "stablehlo.multiply": "prod", "stablehlo.maximum": "max",
         "stablehlo.minimum": "min", "stablehlo.and": "and", "stablehlo.or": "or", "stablehlo.xor": "xor"}
# On booleans (i1) StableHLO's add and maximum are logical or, multiply and
# minimum logical and (its spec): JAX's pmax/pmin of bools.
BOOL_KINDS = {"sum": "or", "max": "or", "prod": "and", "min": "and"}
# StableHLO collective -> its coll class (each collective's STABLEHLO mapping, coll/collectives/).
FROM_STABLEHLO = {cls.STABLEHLO[0]: cls for cls in COLLECTIVE_CLASSES if cls.STABLEHLO}
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
IMPORTED = {*FROM_STABLEHLO, *NO_FORM, *RANK_OPS, "stablehlo.collective_permute"}
# A func.call as parse holds it while it is inside a shard_map body.
DEFERRED_CALL = "coll_stablehlo.call"


class StableHLOError(PassError):
    """Input this frontend does not take, located at the op it is about."""


# -- reading Shardy's attributes (opaque to 22.1.8: read from their text) ---

@dataclass
class Mesh:
    """An `sdy.mesh`: axis names and sizes, and the device (partition id)
    at each mesh position (`device_ids`, else position = id)."""
    name: str
    axes: list[tuple[str, int]]  # [(name, size)]
    device_ids: list[int]

    @property
    def shape(self) -> list[int]:
        return [s for _, s in self.axes] or [1]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def axis(self, name: str, where: ir.Location) -> int:
        names = [n for n, _ in self.axes]
        if name not in names:
            raise StableHLOError(f"axis \"{name}\" is not an axis of mesh @{self.name} ({', '.join(names)})", where)
        return names.index(name)

    def rank_of(self, device: int, where: ir.Location) -> int:
        """The rank (mesh position) of partition id `device`."""
        if device not in self.device_ids:
            raise StableHLOError(f"device {device} is not in mesh @{self.name} (devices "
                                 f"{self.device_ids[0]}..{self.device_ids[-1]})", where)
        return self.device_ids.index(device)


def _mesh(op: ir.Operation) -> Mesh:
    text = str(op.attributes["mesh"])
    name = ir.StringAttr(op.attributes["sym_name"]).value
    axes = [(n, int(s)) for n, s in re.findall(r'"([^"]+)"\s*=\s*(\d+)', text)]
    ids = re.search(r"device_ids\s*=\s*\[([^\]]*)\]", text)
    for n, s in axes:
        if s < 1:
            raise StableHLOError(f'mesh @{name} axis "{n}" has size {s}; expected at least 1', op.location)
    size = math.prod(s for _, s in axes)
    if size > MAX_DEVICES:
        raise StableHLOError(f"mesh @{name} has {size} devices; coll runs at most {MAX_DEVICES}", op.location)
    device_ids = [int(x) for x in ids.group(1).split(",") if x.strip()] if ids else list(range(size))
    if len(device_ids) != size:
        raise StableHLOError(f"mesh @{name} has {size} positions but {len(device_ids)} device_ids", op.location)
    return Mesh(name, axes, device_ids)


def meshes_of(module_op: ir.Operation) -> dict[str, Mesh]:
    return {m.name: m for m in (_mesh(op.operation) for op in module_op.regions[0].blocks[0].operations
                                if op.operation.name == "sdy.mesh")}


_DIM = re.compile(r"\{([^{}]*)\}(p\d+)?")


# A value's sharding: its mesh (None: none named) and, per dimension, the mesh axes it is split over.
Sharding = tuple[Mesh | None, list[list[int]]]


def read_sharding(text: str, meshes: Mapping[str, Mesh], where: ir.Location) -> tuple[Mesh, list[list[int]]]:
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
    dims: list[list[int]] = []
    for inside, priority in _DIM.findall(dims_text):
        if "?" in inside or priority:
            raise StableHLOError(f"sharding {text.strip()} has an open dimension or a priority: expected "
                                 "closed dimensions, as jit's in/out shardings and shard_map give", where)
        if ":" in inside:
            raise StableHLOError(f"sharding {text.strip()} splits a dimension over a sub-axis; expected whole "
                                 "mesh axes", where)
        dims.append([mesh.axis(a, where) for a in re.findall(r'"([^"]+)"', inside)])
    return mesh, dims


def _per_value(text: str) -> list[str]:
    """The entries of `#sdy.sharding_per_value<[<...>, <...>]>`, as text."""
    inner = text[text.index("[") + 1:text.rindex("]")]
    out: list[str] = []
    depth, cur = 0, ""
    for ch in inner:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [c for c in (x.strip() for x in out + [cur]) if c]


def attr_dicts(func: ir.Operation, key: str, n: int) -> list[dict[str, ir.Attribute]]:
    if key not in func.attributes:
        return [{} for _ in range(n)]
    dicts = [ir.DictAttr(d) for d in ir.ArrayAttr(func.attributes[key])]
    return [{d[k].name: d[k].attr for k in range(len(d))} for d in dicts]


def num_attr(op: ir.Operation, name: str) -> int | None:
    return ir.IntegerAttr(op.attributes[name]).value if name in op.attributes else None


# -- what a module is --------------------------------------------------------

def detect(module_op: ir.Operation) -> bool:
    """Whether `module_op` is StableHLO (an op of stablehlo, sdy, mhlo or
    chlo, or XLA's partition count on the module)."""
    if "mhlo.num_partitions" in module_op.attributes:
        return True
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:  # stops at the first: the driver asks this of every module
        if op.name.startswith(PREFIXES):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    module_op.walk(visit, ir.WalkOrder.POST_ORDER)  # the default, which the stubs do not show
    return bool(found)


def entry(module_op: ir.Operation) -> ir.Operation:
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


def shard_map_of(func: ir.Operation) -> ir.Operation | None:
    found = [op for op in all_ops(func) if op.name == "sdy.manual_computation"]
    if len(found) > 1:
        raise StableHLOError("a second shard_map in one function: coll-from-stablehlo imports a function "
                             "that is one shard_map (sdy.manual_computation)", found[1].location)
    return found[0] if found else None


def is_jit(module_op: ir.Operation) -> bool:
    """A jit program with shardings: no shard_map, sdy.sharding at its boundary."""
    f = entry(module_op)
    if shard_map_of(f) is not None:
        return False
    return any("sdy.sharding" in attrs for key in ("arg_attrs", "res_attrs")
               for attrs in attr_dicts(f, key, 0))


# On a module that XLA's partitioner made (coll-xla-partition sets it;
# coll-from-stablehlo drops it): its entry is one device's program over
# partitions 0..mhlo.num_partitions-1.
PARTITIONED_ATTR = "coll.xla_partitioned"


def is_partitioned(module_op: ir.Operation) -> bool:
    return PARTITIONED_ATTR in module_op.attributes


# -- the frontend (frontends/__init__.py) --------------------------------------
NAME = "stablehlo"
# its arguments are global arrays, laid out over the mesh by the shardings
# (`layouts`; a runner scatters them: frontends/run/global_arrays.py).
GLOBAL = True


def route(module_op: ir.Operation | None = None, backend: BackendFacts | None = None, **_: object) -> list[str]:
    """The pipeline elements from this StableHLO module to coll's SPMD
    function on memrefs: import, local compute to linalg, then the shard
    frontend's route (jit with shardings: partitioning inserts the
    collectives) or the tensor frontend's (shard_map: the collectives are
    there); the SPMD frontend takes it on from there."""
    # 16-bit float contractions accumulate in f32, as XLA's dot_general.
    front = ["coll-from-stablehlo", "coll-stablehlo-to-linalg", "coll-widen-contractions"]
    if module_op is not None and is_jit(module_op):
        # XLA's partitioner first (frontends/stablehlo_partition.py says
        # why not upstream's): then it is one device's program, as a
        # shard_map's body is.
        front = ["coll-xla-partition"] + front
    if backend is not None and not backend.per_rank:
        # The global view unrolls loops around collectives anyway: on tensors,
        # canonicalize folds their counters (the GPU route runs no host-side
        # local work); a process per rank keeps the loop.
        front.append("coll-unroll-collective-loops")
    # Elementwise ops fused, splat constants folded into their bodies: one
    # kernel per chain on the GPU route, and no constant buffer
    # (memref.get_global) that device code cannot read. coll-inits-as-inputs
    # first: upstream's fusion miscompiles producers that read their inits;
    # coll-transposes-into-producers: a contraction writes its transposed
    # result itself, not through a strided copy (frontends/fusion.py).
    return front + ["canonicalize", "cse", "coll-inits-as-inputs", "linalg-fuse-elementwise-ops",
                    "coll-transposes-into-producers", "canonicalize"] + tensor.route() + ["canonicalize", "cse"]


def oracle(text: str | bytes, boundary: Boundary) -> Callable[[Sequence[np.ndarray]], list[np.ndarray]] | None:
    """A function from global inputs to XLA's global results for this module
    (frontends/stablehlo_xla.py: XLA compiles and runs the same text), or
    None where jaxlib is not installed: what a JAX export is checked
    against."""
    if not stablehlo_xla.available():
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    # What parse deferred (a call in a shard_map body) is a call again for XLA.
    text = text.replace(f'"{DEFERRED_CALL}"', '"func.call"')
    devices = math.prod(boundary.grid)
    ins = [lay.element for lay in boundary.inputs]
    outs = [(lay.shape, lay.element) for lay in boundary.outputs]
    return lambda xs: stablehlo_xla.run(text, devices, xs, ins, outs)


# -- parsing -----------------------------------------------------------------

def sniff(data: bytes) -> bool:
    """Whether input bytes look like StableHLO (generic or pretty), for a
    tool deciding, before it parses, to parse with `parse` (which allows
    the unregistered dialects and refuses the pretty form with advice).
    MLIR bytecode says nothing about its dialects here: False."""
    return claimed_by(data) == NAME


def parse(source: Any, context: ir.Context | None = None) -> ir.Module:
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
        except ir.MLIRError as e:  # type: ignore[attr-defined]  # mlir._mlir_libs adds it at import; not in the stubs
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

def _layout(value_type: ir.Type, dims: list[list[int]], mesh: Mesh | None, where: ir.Location, what: str,
            name: str | None = None) -> Layout:
    t = ir.RankedTensorType(value_type) if isinstance(value_type, ir.RankedTensorType) else None
    if t is None or not t.has_static_shape:
        raise StableHLOError(f"{what} is {value_type}; expected a statically shaped tensor", where)
    shape = list(t.shape)
    dims = dims + [[] for _ in range(len(shape) - len(dims))]
    local: list[int] = []
    for d, axes in enumerate(dims):
        count = math.prod(mesh.shape[a] for a in axes) if mesh else 1
        if shape[d] % count:
            raise StableHLOError(f"{what}: dimension {d} of {shape[d]} does not split into {count} blocks", where)
        local.append(shape[d] // count)
    element = str(t.element_type)
    if element not in ELEMENTS:
        raise StableHLOError(f"{what} has element type {element}; expected one of: {', '.join(ELEMENTS)}", where)
    return Layout(tuple(shape), tuple(local), element, dims, name)


def _arg_name(arg: ir.Value) -> str | None:
    """JAX's name of an argument (its location, with debug info), or None."""
    loc = arg.location
    return loc.name_str if loc.is_a_name() else None


def _result_name(attrs: Mapping[str, ir.Attribute]) -> str | None:
    info = attrs.get("jax.result_info")
    if info is None:
        return None
    name = ir.StringAttr(info).value
    return name if name and name != "result" else None


_FILE_LOC = re.compile(r'"[^"]+":\d+:\d+')


def located(f: ir.Operation, value: ir.Value | None = None) -> ir.Location:
    """Where to report something about entry function `f` (or its argument
    or result `value`): its own where it has a file:line:col; JAX gives
    @main none, so then the first op that reads `value`, else the shard_map,
    else the first op, that has one (a line of the JAX program); `f`'s
    location failing all of them."""
    if _FILE_LOC.search(str(f.location)):
        return f.location
    ops = [u.owner.operation for u in value.uses] if value is not None else []
    mc = shard_map_of(f)
    ops += [mc] if mc is not None else []
    ops += [o for o in all_ops(f)]
    return next((o.location for o in ops if _FILE_LOC.search(str(o.location))), f.location)


def layouts(module_op: ir.Operation) -> Boundary:
    """The Boundary of the StableHLO module (read before `route` runs:
    the import drops Shardy's attributes). Raises StableHLOError."""
    meshes = meshes_of(module_op)
    f = entry(module_op)
    name = ir.StringAttr(f.attributes["sym_name"]).value
    ft = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    block = f.regions[0].blocks[0]
    arg_attrs = attr_dicts(f, "arg_attrs", len(ft.inputs))
    res_attrs = attr_dicts(f, "res_attrs", len(ft.results))
    mc = shard_map_of(f)
    gspmd = gspmd_of(module_op, f) if mc is None else None
    ins: list[Sharding]
    outs: list[Sharding]
    if mc is not None:
        shape_of, ins, outs = manual_boundary(f, mc, meshes)
        grid = shape_of.shape
    elif gspmd is not None:
        grid = gspmd.mesh.shape
        ins = [(gspmd.mesh, split) for split in gspmd.ins]
        outs = [(gspmd.mesh, split) for split in gspmd.outs]
    else:
        ins, outs = [], []
        for attrs in arg_attrs:
            ins.append(read_sharding(str(attrs["sdy.sharding"]), meshes, located(f)) if "sdy.sharding" in attrs
                       else (None, []))
        for attrs in res_attrs:
            outs.append(read_sharding(str(attrs["sdy.sharding"]), meshes, located(f)) if "sdy.sharding" in attrs
                        else (None, []))
        used = {m.name: m for m, _ in ins + outs if m is not None}
        if len(used) > 1:
            raise StableHLOError(f"the shardings name meshes {', '.join('@' + n for n in sorted(used))}; "
                                 "expected one mesh", located(f))
        mesh = next(iter(used.values()), None)
        grid = mesh.shape if mesh else [1]
        ins = [(mesh, dims) for _, dims in ins]
        outs = [(mesh, dims) for _, dims in outs]
    inputs = [_layout(t, dims, m, located(f, block.arguments[i]), f"argument #{i}",
                      _arg_name(block.arguments[i]))
              for i, (t, (m, dims)) in enumerate(zip(ft.inputs, ins))]
    outputs = [_layout(t, dims, m, located(f), f"result #{j}", _result_name(res_attrs[j]))
               for j, (t, (m, dims)) in enumerate(zip(ft.results, outs))]
    return Boundary(name, list(grid), inputs, outputs)


def manual_boundary(func: ir.Operation, mc: ir.Operation, meshes: Mapping[str, Mesh]
                    ) -> tuple[Mesh, list[Sharding], list[Sharding]]:
    """(mesh, per argument (mesh, dims), per result (mesh, dims)) of a
    function that is one shard_map: its in_shardings by the argument each
    operand is, its out_shardings by the result each is returned as."""
    in_sh = [read_sharding(t, meshes, mc.location) for t in _per_value(str(mc.attributes["in_shardings"]))]
    out_sh = [read_sharding(t, meshes, mc.location) for t in _per_value(str(mc.attributes["out_shardings"]))]
    used = {m.name for m, _ in in_sh + out_sh}
    if len(used) > 1:
        raise StableHLOError(f"the shard_map's shardings name meshes {', '.join('@' + n for n in sorted(used))}; "
                             "expected one mesh", mc.location)
    mesh = (in_sh + out_sh)[0][0] if in_sh + out_sh else _only_mesh(meshes, mc.location)
    args, results = boundary_values(func, mc)
    n_args = len(func.regions[0].blocks[0].arguments)
    ins: list[Sharding] = [(mesh, [])] * n_args
    for k, a in enumerate(args):
        if a is not None:  # not a closed-over constant
            ins[a] = in_sh[k]
    outs: list[Sharding] = [out_sh[k] for k in results]
    return mesh, ins, outs


def _only_mesh(meshes: Mapping[str, Mesh], where: ir.Location) -> Mesh:
    if len(meshes) != 1:
        raise StableHLOError(f"expected one sdy.mesh, found {len(meshes)}", where)
    return next(iter(meshes.values()))


def through_constraints(value: ir.Value) -> ir.Value:
    """`value` with sdy.sharding_constraint ops looked through (they carry
    no work once the shardings are the boundary's)."""
    while not isinstance(value.owner, ir.Block) and value.owner.name == "sdy.sharding_constraint":
        value = value.owner.operands[0]
    return value


def constant_work(func: ir.Operation) -> list[ir.Operation]:
    """The ops outside a shard_map that compute from constants alone, in
    order: what JAX hoists out of the body when it closes over a numpy
    array (the constant, a broadcast of it), passed in as an operand."""
    found: list[ir.Operation] = []
    for o in func.regions[0].blocks[0].operations:
        op = o.operation
        if op.name.startswith("stablehlo.") and not len(op.regions) and \
                all(not isinstance(v.owner, ir.Block) and v.owner in found for v in op.operands):
            found.append(op)
    return found


def boundary_values(func: ir.Operation, mc: ir.Operation) -> tuple[list[int | None], list[int]]:
    """For a function that is one shard_map: the argument number of each
    operand of `mc` (None for one computed from constants alone: a numpy
    array the shard_map closes over; constant_work), and the result of `mc`
    each function result is. Refuses other work outside the shard_map, at
    the op."""
    block = func.regions[0].blocks[0]
    constants = constant_work(func)
    for o in block.operations:
        op = o.operation
        if op.name not in ("sdy.manual_computation", "sdy.sharding_constraint", "func.return") and \
                op not in constants:
            raise StableHLOError(f"'{op.name}' outside the shard_map body: coll-from-stablehlo imports a function "
                                 "that is one shard_map (sdy.manual_computation) from its arguments to its "
                                 "results; expected the work inside the shard_map", op.location)
    args: list[int | None] = []
    for v in mc.operands:
        v = through_constraints(v)
        if not isinstance(v.owner, ir.Block) and v.owner in constants:
            args.append(None)
            continue
        if not isinstance(v.owner, ir.Block):
            raise StableHLOError("a shard_map operand that is not a function argument; expected the function's "
                                 "arguments as the shard_map's operands", mc.location)
        args.append(v.arg_number)
    ret = block.operations[len(block.operations) - 1]
    results = []
    for v in ret.operands:
        v = through_constraints(v)
        if v.owner != mc:
            raise StableHLOError("a function result that is not a result of the shard_map; expected the "
                                 "function to return the shard_map's results", ret.location)
        results.append(v.result_number)
    return args, results


# -- GSPMD's manual regions (jax_use_shardy_partitioner=False) -----------------

GSPMD_MARKUP = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")
_TILED = re.compile(r"\{devices=\[([\d,]+)\]<=\[(\d+)\](\s+last_tile_dim_replicate)?\}$")


def call_target(op: ir.Operation | ir.OpView) -> str | None:
    """A custom call's target, else None."""
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return None
    return ir.StringAttr(op.attributes["call_target_name"]).value


def _hlo_sharding(op: ir.Operation | ir.OpView) -> str | None:
    return ir.StringAttr(op.attributes["mhlo.sharding"]).value if "mhlo.sharding" in op.attributes else None


def _tiles(text: str | None, rank: int, n: int, where: ir.Location) -> list[int]:
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


def _common_grid(all_tiles: list[list[int]], where: ir.Location) -> list[int]:
    """The grid every tiling is a coarsening of: device d is the grid
    position with linear index d, and a tiling's dimension spans the grid
    axes between its prefix products."""
    cuts = sorted({math.prod(t[:i + 1]) for t in all_tiles for i in range(len(t))} - {1})
    grid: list[int] = []
    last = 1
    for c in cuts:
        if c % last:
            raise StableHLOError(f"GSPMD shardings tile the devices in incompatible ways ({all_tiles}); expected "
                                 "tilings of one grid", where)
        grid.append(c // last)
        last = c
    return grid or [1]


def _split_of(tiles: list[int], grid: list[int]) -> list[list[int]]:
    """Per dimension of a value tiled by `tiles`, the grid axes it spans."""
    bounds: list[int] = []
    cum = 1
    for g in grid:
        cum *= g
        bounds.append(cum)
    out: list[list[int]] = []
    lo = 1
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
    call: ir.Operation
    callee: ir.OpView
    name: str
    mesh: Mesh
    args: list[int]
    results: list[int]
    ins: list[list[list[int]]]   # per function argument: its split
    outs: list[list[list[int]]]  # per function result: its split


def gspmd_of(module_op: ir.Operation, func: ir.Operation) -> _Gspmd | None:
    """The GSPMD manual region of `func` (JAX's shard_map without Shardy),
    or None; refuses work outside it, at the op."""
    block = func.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    if not any(call_target(op) == "SPMDFullToShardShape" for op in ops):
        return None
    for op in ops[:-1]:
        if call_target(op) not in GSPMD_MARKUP and op.name != "func.call":
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
    n = num_attr(module_op, "mhlo.num_partitions") or 1

    def chain(v: ir.Value, targets: Sequence[str]) -> tuple[ir.Value, str | None]:
        """v through the custom calls `targets` (outermost last): (the
        value they start from, the first one's sharding)."""
        sharding = None
        for t in targets:
            op = v.owner
            if isinstance(op, ir.Block) or call_target(op) != t:
                raise StableHLOError(f"expected a custom call {t} here (GSPMD's manual region boundary)",
                                     call.location)
            sharding = sharding or _hlo_sharding(op)
            v = op.operands[0]
        return v, sharding

    args: list[int] = []
    in_text: dict[int, str | None] = {}
    for v in call.operands:
        v, _ = chain(v, ["SPMDFullToShardShape"])
        arg, text = chain(v, ["Sharding"])
        if not isinstance(arg.owner, ir.Block):
            raise StableHLOError("a manual region operand that is not a function argument", call.location)
        args.append(arg.arg_number)
        in_text[arg.arg_number] = text
    ret = ops[-1]
    results: list[int] = []
    out_text: list[str | None] = []
    for v in ret.operands:
        owner = v.owner
        if isinstance(owner, ir.Block) or call_target(owner) != "SPMDShardToFullShape":
            raise StableHLOError("a function result that is not the manual region's (SPMDShardToFullShape)",
                                 ret.location)
        out_text.append(_hlo_sharding(owner))
        r, _ = chain(owner.operands[0], ["Sharding"])
        if r.owner != call:
            raise StableHLOError("a function result that is not a result of the manual region", ret.location)
        results.append(r.result_number)
    ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    def rank(t: ir.Type) -> int:
        return len(ir.RankedTensorType(t).shape)

    in_tiles = [_tiles(in_text.get(i, "{replicated}"), rank(t), n, located(func))
                for i, t in enumerate(ft.inputs)]
    out_tiles = [_tiles(t, rank(ty), n, located(func)) for t, ty in zip(out_text, ft.results)]
    grid = _common_grid(in_tiles + out_tiles, located(func))
    mesh = Mesh("gspmd", [(f"d{i}", g) for i, g in enumerate(grid)], list(range(n)))
    return _Gspmd(call, callee, name, mesh, args, results, [_split_of(t, grid) for t in in_tiles],
                  [_split_of(t, grid) for t in out_tiles])
