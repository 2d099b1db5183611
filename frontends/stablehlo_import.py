"""The StableHLO frontend's passes (the frontend itself, its parsing and
the layouts at the boundary, is frontends/stablehlo.py):

- coll-from-stablehlo: a shard_map body (Shardy's sdy.manual_computation,
  or GSPMD's manual region), or the program XLA's partitioner made of a
  jit program (coll-xla-partition), becomes the function's body, an SPMD
  function whose collectives are coll's tensor collectives; an
  unpartitioned jit program's Shardy shardings become upstream shard
  annotations (for the shard route); calls are inlined;
- coll-stablehlo-to-linalg: the local compute to linalg with jaxlib's own
  stablehlo-legalize-to-linalg, in a child process (jaxlib bundles another
  MLIR than coll's).
"""
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import numpy as np
from mlir import ir
from mlir.rewrite import FrozenRewritePatternSet, PatternRewriter, RewritePatternSet, walk_and_apply_patterns

from ..core.registry import register
from ..ir.kinds import ELEMENTS
from ..ir.types import token_type
from ..ir.walk import all_ops, clone_remapped
from .shard import grid_groups
from .spmd import RANKS_ATTR
from .stablehlo import (  # XLA's partitioned programs (coll-xla-partition)
    BOOL_KINDS,
    CROSS_PARTITION,
    DEFERRED_CALL,
    FROM_STABLEHLO,
    GSPMD_MARKUP,
    IMPORTED,
    KINDS,
    NO_FORM,
    PARTITIONED_ATTR,
    PERMUTE,
    PREFIXES,
    Mesh,
    StableHLOError,
    attr_dicts,
    boundary_values,
    call_target,
    constant_work,
    entry,
    gspmd_of,
    is_jit,
    is_partitioned,
    layouts,
    manual_boundary,
    meshes_of,
    num_attr,
    read_sharding,
    shard_map_of,
    through_constraints,
)
from .stablehlo import _Gspmd as Gspmd
from .stablehlo_lower import lower, refusal

MAX_CALL_DEPTH = 64
LEGALIZE = Path(__file__).with_name("jaxlib_legalize.py")
LEGALIZE_TIMEOUT = 300


# -- coll-from-stablehlo -------------------------------------------------------

def _channel(op: ir.Operation) -> int:
    """The channel handle's id (0 when there is none)."""
    if "channel_handle" not in op.attributes:
        return 0
    m = re.search(r"handle\s*=\s*(-?\d+)", str(op.attributes["channel_handle"]))
    return int(m.group(1)) if m else 0


class _Importer:
    """One module's import: its meshes, partition count and the SPMD
    function's mesh."""

    def __init__(self, module_op: ir.Operation) -> None:
        self.module = module_op
        replicas = num_attr(module_op, "mhlo.num_replicas")
        if replicas is not None and replicas > 1:
            raise StableHLOError(f"mhlo.num_replicas = {replicas}: coll imports programs over partitions "
                                 "(shard_map, jit shardings), expected num_replicas = 1", module_op.location)
        self.partitions = num_attr(module_op, "mhlo.num_partitions")
        self.meshes = meshes_of(module_op)
        self.mesh: Mesh | None = None

    @property
    def spmd_mesh(self) -> Mesh:
        """The SPMD function's mesh: set before any collective is imported (run)."""
        assert self.mesh is not None, "no SPMD function yet"
        return self.mesh

    # -- the function ---------------------------------------------------------
    def run(self) -> None:
        f = entry(self.module)
        mc = shard_map_of(f)
        gspmd = gspmd_of(self.module, f) if mc is None else None
        if mc is not None:
            self.inline_manual(f, mc)
        elif gspmd is not None:
            self.inline_gspmd(f, gspmd)
        elif is_partitioned(self.module):
            self.partitioned(f)
        elif is_jit(self.module):
            self.annotate(f)
        _inline_calls(self.module, f)
        collectives = [op for op in all_ops(f) if op.name in IMPORTED]
        if collectives and self.mesh is None:
            raise StableHLOError(f"'{collectives[0].name}' outside a shard_map: coll-from-stablehlo imports "
                                 "collectives of shard_map bodies (sdy.manual_computation)", collectives[0].location)
        if collectives:
            walk_and_apply_patterns(f, self.patterns())
        self.clean(f)

    def inline_manual(self, f: ir.Operation, mc: ir.Operation) -> None:
        """The shard_map body becomes the function's body: its arguments
        take the local types, its results the body's, coll.ranks = N."""
        mesh, _, _ = manual_boundary(f, mc, self.meshes)
        manual = re.findall(r'"([^"]+)"', str(mc.attributes["manual_axes"]))
        free = [n for n, s in mesh.axes if n not in manual and s > 1]
        if free:
            raise StableHLOError(f"a partially manual shard_map (manual axes {', '.join(manual)} of mesh "
                                 f"@{mesh.name}, not {', '.join(free)}); expected every mesh axis manual",
                                 mc.location)
        args, results = boundary_values(f, mc)
        self.inline(f, mesh, mc, mc.regions[0].blocks[0], args, results)

    def inline_gspmd(self, f: ir.Operation, gspmd: Gspmd) -> None:
        """GSPMD's manual region (the body called between its
        SPMDFullToShardShape and SPMDShardToFullShape custom calls) becomes
        the function's body, as a shard_map's does."""
        callee = gspmd.callee
        self.inline(f, gspmd.mesh, gspmd.call, callee.regions[0].blocks[0], gspmd.args, gspmd.results)
        if not any(op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == gspmd.name
                   for op in all_ops(self.module)):
            callee.erase()

    def partitioned(self, f: ir.Operation) -> None:
        """A module XLA's partitioner made (coll-xla-partition): its entry is
        already one device's program, rank p partition p (the device
        assignment coll-xla-partition compiles with), its collectives'
        groups lists of partition ids (a group over mesh axes, which
        hlo_to_stablehlo writes without their device order, is refused)."""
        n = self.partitions or 1
        self.spmd(f, Mesh("partitions", [("p", n)], list(range(n))))

    def inline(self, f: ir.Operation, mesh: Mesh, anchor: ir.Operation, body: ir.Block,
               args: Sequence[int | None], results: Sequence[int]) -> None:
        """`body` (one device's program) moved into `f` before `anchor`: body
        argument k is f's argument args[k] (now of the local type), f's
        result j the body's result results[j]; then the markup around it
        (`anchor`, sharding ops) goes, and f is an SPMD function of
        mesh.size ranks."""
        if self.partitions is not None and self.partitions != mesh.size:
            raise StableHLOError(f"mhlo.num_partitions = {self.partitions} but the manual region runs on "
                                 f"{mesh.size} devices; expected it over every partition", anchor.location)
        block = f.regions[0].blocks[0]
        constants = constant_work(f)
        inside: dict[ir.Value, ir.Value] = {}
        if constants and any(a is None for a in args):  # cloned at the body's start: they move out with it
            first = body.operations[0]
            for op in constants:
                clone_remapped(op, ir.InsertionPoint(first), inside)
        for k, a in enumerate(args):
            if a is None:  # closed over: the same value inside, if every device holds it whole
                v = through_constraints(anchor.operands[k])
                if v.type != body.arguments[k].type:
                    raise StableHLOError(f"a constant the shard_map closes over enters split ({v.type} as "
                                         f"{body.arguments[k].type}); expected it replicated", v.owner.location)
                body.arguments[k].replace_all_uses_with(inside[v])
                continue
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
        self.spmd(f, mesh)

    def spmd(self, f: ir.Operation, mesh: Mesh) -> None:
        """f becomes an SPMD function of mesh.size ranks."""
        self.mesh = mesh
        block = f.regions[0].blocks[0]
        f.attributes[RANKS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), mesh.size)
        # The arguments are the caller's: bufferization must not write them.
        attrs = attr_dicts(f, "arg_attrs", len(block.arguments))
        for d in attrs:
            d["bufferization.writable"] = ir.BoolAttr.get(False)
        f.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in attrs])

    def annotate(self, f: ir.Operation) -> None:
        """jit with shardings: shard.grid for the mesh, shard.shard on each
        argument (its users) and result (both ways, as shard-partition
        wants a result's sharding fixed)."""
        boundary = layouts(self.module)
        block = f.regions[0].blocks[0]
        mesh_names = {m.name for key in ("arg_attrs", "res_attrs")
                      for d in attr_dicts(f, key, 0) if "sdy.sharding" in d
                      for m in [read_sharding(str(d["sdy.sharding"]), self.meshes, f.location)[0]]}
        mesh = self.meshes[mesh_names.pop()]
        for op in all_ops(f):
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

    def clean(self, f: ir.Operation) -> None:
        """Drops Shardy and XLA's markup; refuses what is left of sdy."""
        # Only what bufferization reads stays (JAX's names are read by
        # `layouts` before the import; results become arguments later).
        if "arg_attrs" in f.attributes:
            dicts = [{k: v for k, v in d.items() if k == "bufferization.writable"}
                     for d in attr_dicts(f, "arg_attrs", 0)]
            f.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in dicts])
        if "res_attrs" in f.attributes:
            del f.attributes["res_attrs"]
        if "sym_visibility" in f.attributes:  # public is the default; find_entry wants none
            del f.attributes["sym_visibility"]
        for op in all_ops(self.module):
            if op.name.startswith("sdy.") and op.name != "sdy.mesh":
                raise StableHLOError(f"'{op.name}' has no coll form; coll-from-stablehlo imports shard_map "
                                     "bodies and the shardings of jit programs", op.location)
            if op.name == "stablehlo.custom_call" and call_target(op) in GSPMD_MARKUP:
                target = str(op.attributes["call_target_name"]) if "call_target_name" in op.attributes else "?"
                raise StableHLOError(f"'stablehlo.custom_call' {target} has no coll form (GSPMD's markup is "
                                     "imported around a shard_map's manual region only: export a jit program with "
                                     "Shardy, JAX's default)", op.location)
        for op in [o.operation for o in self.module.regions[0].blocks[0].operations]:
            if op.name == "sdy.mesh":
                op.erase()
        for key in [a for a in self.module.attributes if a.startswith(PREFIXES) or a == PARTITIONED_ATTR]:
            del self.module.attributes[key]

    # -- the collectives ------------------------------------------------------
    def patterns(self) -> FrozenRewritePatternSet:
        s = RewritePatternSet()
        for name in FROM_STABLEHLO:
            s.add(name, self.collective)
        for name in NO_FORM:
            s.add(name, self.no_form)
        s.add("stablehlo.collective_permute", self.permute)
        s.add("stablehlo.partition_id", self.partition_id)
        s.add("stablehlo.replica_id", self.replica_id)
        return s.freeze()

    def no_form(self, op: ir.Operation, rewriter: PatternRewriter) -> NoReturn:
        raise StableHLOError(f"'{op.name}' has no coll form: {NO_FORM[op.name]}", op.location)

    def groups(self, op: ir.Operation) -> list[list[int]] | None:
        """The groups of ranks `op` runs in (each in group order), or
        None when every rank is alone (cross-replica, one replica)."""
        mesh = self.spmd_mesh
        n = mesh.size
        text = str(op.attributes["replica_groups"]) if "replica_groups" in op.attributes else "dense<>"
        m = re.match(
            r"#stablehlo\.replica_group_mesh_axes<\s*mesh\s*=\s*@([\w.$-]+)\s*,\s*axes\s*=\s*\[(.*)\]\s*>", text)
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
        ids: list[list[int]] = []
        if dense is not None and ir.ShapedType(dense.type).shape and 0 not in ir.ShapedType(dense.type).shape:
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

    def collective(self, op: ir.Operation, rewriter: PatternRewriter) -> None:
        cls = FROM_STABLEHLO[op.name]
        if len(op.operands) != 1 or len(op.results) != 1:
            raise StableHLOError(f"'{op.name}' on {len(op.operands)} operands; expected one (a tuple "
                                 "collective is not imported)", op.location)
        src, res = op.operands[0], op.results[0]
        element = str(ir.RankedTensorType(src.type).element_type)
        if element not in ELEMENTS:
            raise StableHLOError(f"'{op.name}' on {src.type}: coll has no element type {element}; expected one "
                                 f"of: {', '.join(ELEMENTS)}", op.location)
        kind = self.kind(op) if cls.HAS_KIND else None
        if element == "i1" and kind is not None:
            kind = BOOL_KINDS.get(kind, kind)
        groups = self.groups(op)
        if groups is not None:
            sizes = {len(g) for g in groups}
            covered = sorted(r for g in groups for r in g)
            if len(sizes) != 1 or covered != list(range(self.spmd_mesh.size)):
                raise StableHLOError(f"'{op.name}' groups {groups} do not split ranks 0..{self.spmd_mesh.size - 1} "
                                     "into groups of one size; expected every rank in exactly one group",
                                     op.location)
        if groups is None or len(groups[0]) == 1:  # each rank alone: nothing moves
            if src.type != res.type:
                raise StableHLOError(f"'{op.name}' in groups of one returns {res.type} for {src.type}",
                                     op.location)
            rewriter.replace_op(op, [src])
            return
        attrs: dict[str, ir.Attribute] = {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0])}
        if len(groups) == 1 and groups[0] == list(range(self.spmd_mesh.size)):
            attrs["devices"] = ir.DenseI64ArrayAttr.get(groups[0])
        else:  # devices: the positions in a group
            attrs["devices"] = ir.DenseI64ArrayAttr.get(list(range(len(groups[0]))))
            attrs["groups"] = ir.DenseI64ArrayAttr.get([r for g in groups for r in g])
        if kind is not None:
            attrs["kind"] = ir.StringAttr.get(kind)
        i64 = ir.IntegerType.get_signless(64)
        assert cls.STABLEHLO is not None  # FROM_STABLEHLO: the collectives that have one
        for ours, theirs in cls.STABLEHLO[1].items():
            attrs[ours] = ir.IntegerAttr.get(i64, ir.IntegerAttr(op.attributes[theirs]).value)
        if cls.ROOTED:  # the first of each group
            attrs["root"] = ir.IntegerAttr.get(i64, groups[0][0] if "groups" not in attrs else 0)
        split_count = ir.IntegerAttr(op.attributes["split_count"]).value if "split_count" in op.attributes else None
        if split_count is not None and split_count != len(groups[0]):
            raise StableHLOError(f"'{op.name}' split_count = {split_count} "
                                 f"but its groups have {len(groups[0])} ranks; expected them equal", op.location)
        with ir.InsertionPoint(op), op.location:
            new = ir.Operation.create(cls.NAME, results=[token_type(), res.type], operands=[src],
                                      attributes=attrs)
        rewriter.replace_op(op, [new.results[1]])

    def permute(self, op: ir.Operation, rewriter: PatternRewriter) -> None:
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
        pairs = [self.spmd_mesh.rank_of(int(dense[i]), op.location) for i in range(len(dense))]
        attrs: dict[str, ir.Attribute] = {
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0]),
            "devices": ir.DenseI64ArrayAttr.get(list(range(self.spmd_mesh.size))),
            "pairs": ir.DenseI64ArrayAttr.get(pairs)}
        with ir.InsertionPoint(op), op.location:
            new = ir.Operation.create(PERMUTE.NAME, results=[token_type(), res.type], operands=[src],
                                      attributes=attrs)
        rewriter.replace_op(op, [new.results[1]])

    def kind(self, op: ir.Operation) -> str:
        """The reduction kind of `op`'s region: its one op before the return."""
        ops = [o.operation.name for o in op.regions[0].blocks[0].operations]
        if len(ops) != 2 or ops[0] not in KINDS:
            raise StableHLOError(f"'{op.name}' reduces with {ops[:-1]}; expected one of "
                                 f"{', '.join(KINDS)} in its region", op.location)
        return KINDS[ops[0]]  # valid for the element type: the verifier checks, at the op

    def partition_id(self, op: ir.Operation, rewriter: PatternRewriter) -> None:
        """The rank's partition id: the rank (mpi.comm_rank, which the
        routes read as coll-from-shard's rank), through the mesh's
        device_ids when they are not 0..N-1."""
        i32 = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(op), op.location:
            comm = ir.Operation.create("mpi.comm_world", results=[ir.Type.parse("!mpi.comm")]).results[0]
            value = ir.Operation.create("mpi.comm_rank", results=[i32], operands=[comm]).results[0]
            ids = self.spmd_mesh.device_ids
            if ids != list(range(len(ids))):
                index = ir.Operation.create("arith.index_cast", results=[ir.IndexType.get()],
                                            operands=[value]).results[0]
                table = ir.Operation.create("arith.constant", results=[ir.RankedTensorType.get([len(ids)], i32)],
                                            attributes={"value": ir.DenseElementsAttr.get(
                                                # an ndarray is a Buffer; numpy's stubs say so from Python 3.12
                                                np.array(ids, dtype=np.int32))}  # type: ignore[call-overload]
                                            ).results[0]
                value = ir.Operation.create("tensor.extract", results=[i32], operands=[table, index]).results[0]
            value = ir.Operation.create("tensor.from_elements", results=[ir.RankedTensorType.get([], i32)],
                                        operands=[value]).results[0]
            # Back to partition_id's tensor<ui32>; legalized with the users.
            new = ir.Operation.create("stablehlo.convert", results=[op.results[0].type], operands=[value])
        rewriter.replace_op(op, [new.results[0]])

    def replica_id(self, op: ir.Operation, rewriter: PatternRewriter) -> None:
        """One replica: its id is 0."""
        t = op.results[0].type
        with ir.InsertionPoint(op), op.location:
            new = ir.Operation.create("stablehlo.constant", results=[t], attributes={
                "value": ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(ir.RankedTensorType(t).element_type,
                                                                              0))})
        rewriter.replace_op(op, [new.results[0]])


def _inline_calls(module_op: ir.Operation, func: ir.Operation) -> None:
    """Every call in `func` (jax.nn.relu, a loop's body, a nested jit: JAX
    lowers them to private functions) replaced by its callee's body, until
    none is left; then the functions nothing calls go. One device's program
    becomes straight code: what coll's SPMD form and shard's partitioning
    take (neither crosses calls)."""
    body = module_op.regions[0].blocks[0]
    funcs = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation for op in body.operations
             if op.operation.name == "func.func"}
    for depth in range(MAX_CALL_DEPTH + 1):
        calls = [op for op in all_ops(func) if op.name in ("func.call", DEFERRED_CALL)]
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
    text = str(func.get_asm(print_generic_op_form=True))
    for name, op in funcs.items():
        if op != func and "sym_visibility" in op.attributes and f"@{name}" not in text:
            op.erase()  # private, and called no more: every call was in func


def _clone_before(op: ir.Operation, anchor: ir.Operation, mapping: dict[ir.Value, ir.Value]) -> None:
    """A clone of `op` before `anchor`, on the values `mapping` gives for
    the callee's; its results join `mapping`. Its location, and its nested
    ops', is the callee's at the call (upstream's inliner does the same):
    a nested jit's ops carry only a name, the call the Python line."""
    new = clone_remapped(op, ir.InsertionPoint(anchor), mapping)
    at = anchor.location

    def locate(inner: ir.Operation) -> ir.WalkResult:
        inner.location = ir.Location.callsite(inner.location, [at])
        return ir.WalkResult.ADVANCE
    new.walk(locate, ir.WalkOrder.POST_ORDER)  # the default, which the stubs do not show


def _shard_sharding(mesh_name: str, split: Sequence[Sequence[int]]) -> ir.Value:
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
def from_stablehlo(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        _Importer(module_op).run()


# -- coll-stablehlo-to-linalg ------------------------------------------------

def _local_compute(module_op: ir.Operation) -> list[ir.Operation]:
    return [op for op in all_ops(module_op) if op.name.startswith(("stablehlo.", "chlo."))]


@register("coll-stablehlo-to-linalg",
          "The local compute of an imported StableHLO module to linalg: jaxlib's own "
          "stablehlo-legalize-to-linalg, in a child process (jaxlib bundles another MLIR); "
          "refused, located, where jaxlib does not import",
          anchor="builtin.module")
def stablehlo_to_linalg(module_op: ir.Operation) -> None:
    left = _local_compute(module_op)
    if not left:
        return
    for op in left:
        if op.name in IMPORTED:
            raise StableHLOError(f"'{op.name}' before coll-from-stablehlo: import the collectives first "
                                 "(stablehlo-legalize-to-linalg rewrites their reduction regions)", op.location)
    if any(op.name.startswith("chlo.") for op in left):
        _jaxlib(module_op, left, "chlo")  # chlo.top_k is a sort: to StableHLO first, for `lower`
    lower(module_op)  # what jaxlib leaves: loops, scatter, sort, ...
    _jaxlib(module_op, left, "linalg")
    left = _local_compute(module_op)
    if left:
        raise StableHLOError(refusal(left[0]), left[0].location)


def _jaxlib(module_op: ir.Operation, left: Sequence[ir.Operation], stage: str) -> None:
    """`module_op` through jaxlib_legalize.py's `stage` in a child process,
    replaced by what comes back; `left`: the ops that errors name."""
    text = str(module_op.get_asm(enable_debug_info=True, print_generic_op_form=True))
    try:
        proc = subprocess.run([sys.executable, str(LEGALIZE), stage], input=text, capture_output=True, text=True,
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
    replace_body(module_op, proc.stdout)


def replace_body(module_op: ir.Operation, text: str) -> ir.Module:
    """Replaces the ops of `module_op` with those of module `text` (what a
    child process made of it), parsed in `module_op`'s context; returns the
    parsed module (its attributes are the caller's to take)."""
    new = ir.Module.parse(text, module_op.context)
    body = module_op.regions[0].blocks[0]
    for old in list(body.operations):
        old.operation.erase()
    for o in list(new.body.operations):
        op = o.operation
        op.detach_from_parent()
        ir.InsertionPoint(body).insert(op)
    return new


def _legalize_error(stderr: str, ops: Sequence[ir.Operation], module_op: ir.Operation,
                    who: str = "jaxlib's stablehlo-legalize-to-linalg") -> StableHLOError:
    """What jaxlib's child (`who`) said, at our op whose location it names."""
    try:
        found = json.loads(stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        found = [["", stderr.strip()[:500] or "the child process failed"]]
    where = {str(op.location): op.location for op in ops}
    loc, message = found[0]
    return StableHLOError(f"{who} failed: {message}",
                          where.get(loc, ops[0].location if ops else module_op.location))
