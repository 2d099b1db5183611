"""XLA's own SPMD partitioner on a jit program with shardings, run as a
child process of frontends/stablehlo_partition.py
(`python jaxlib_partition.py N < jit.mlir > out.json`).

XLA compiles the module for N partitions with Shardy (JAX's default
partitioner), and XLA's debug dump keeps the module as it is right after
the `spmd-partitioning` pass: one device's program, its collectives
inserted, before any fusion, layout assignment or custom call of the CPU
compiler (the optimized module that `compiled.as_text()` shows has all
three, and bitcasts whose meaning is a layout). jaxlib parses that HLO
text (`hlo_module_from_text`) and converts it to StableHLO
(`hlo_to_stablehlo`); it goes back in generic form with its locations.

Out, on stdout, one JSON object: `module` (the partitioned module's
generic text) and `inputs`/`outputs`: per argument and result, per
partition, the block it holds ([start, stop] per dimension), as XLA
compiled it, for the caller to check against the layouts it scatters by.
Exit status 3: jaxlib does not import here (stderr says why); 1: XLA
refused the module (stderr: one JSON list of [location, message]).
"""
import glob
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np


def _drop_copies(module: Any, ir: Any) -> None:  # jaxlib's Module and its `ir` module
    """HLO's copy (a sharding constraint's, a resharding's) is mhlo.copy:
    on tensors it is its operand, and StableHLO has no such op for the
    legalization to linalg to take."""
    copies = []

    def visit(op: Any) -> Any:
        if op.name == "mhlo.copy":
            copies.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in copies:
        op.results[0].replace_all_uses_with(op.operands[0])
        op.erase()


def compile_partitioned(text: str, n: int) -> tuple[Any, list[Any]]:
    """(executable, devices) of StableHLO `text` compiled by XLA as JAX
    compiles a program for n partitions (one replica, Shardy), partition p
    on CPU device p: the partition ids in the program's replica groups and
    partition_id are the ranks 0..N-1. Also what frontends/stablehlo_xla.py
    runs a module with. XLA_FLAGS must give n host devices before jax starts."""
    # jax here, not at the top: it reads XLA_FLAGS when it starts (main sets them first)
    from jax._src import xla_bridge
    from jax._src.lib import xla_client as xc  # jax: as above
    backend = xla_bridge.get_backend("cpu")
    devices = backend.devices()[:n]
    options = xc.CompileOptions()
    build = options.executable_build_options
    build.num_partitions, build.num_replicas = n, 1
    build.use_spmd_partitioning = build.use_shardy_partitioner = True
    build.device_assignment = xc.DeviceAssignment.create(np.arange(n).reshape(1, n))
    return backend.compile_and_load(text, xc.DeviceList(tuple(devices)), options), devices


def main() -> int:
    n = int(sys.argv[1])
    text = sys.stdin.read()
    with tempfile.TemporaryDirectory() as dump:
        # Before jax starts: the device count and the dump are fixed then.
        os.environ["XLA_FLAGS"] = " ".join([
            os.environ.get("XLA_FLAGS", ""), f"--xla_force_host_platform_device_count={n}",
            f"--xla_dump_to={dump}", "--xla_dump_hlo_pass_re=spmd-partitioning", "--xla_dump_hlo_as_text",
            # Replica groups as lists of partition ids: as mesh axes
            # (`mesh[...], device_ids=([2,4]T(1,0)) {axis}`), hlo_to_stablehlo
            # drops the device order and the groups come out wrong.
            "--xla_enable_rgv3_materialization=false"])
        os.environ["JAX_PLATFORMS"] = "cpu"
        try:  # after the flags; jaxlib may be missing (exit status 3)
            from jax._src.interpreters import mlir as jax_mlir  # jax: optional, ~0.9 s to import
            from jax._src.lib import xla_client as xc  # jax: as above
            from jax._src.lib.mlir import ir  # jax: as above
            from jax._src.sharding_impls import GSPMDSharding  # jax: as above
        except ImportError as e:
            print(f"{type(e).__name__}: {e}", file=sys.stderr)
            return 3
        try:
            exe, devices = compile_partitioned(text, n)
        except Exception as e:  # XlaRuntimeError: jaxlib's only error type here
            print(json.dumps([["", str(e).splitlines()[0] if str(e) else type(e).__name__]]), file=sys.stderr)
            return 1
        found = sorted(glob.glob(os.path.join(dump, "*after_spmd-partitioning*.txt")))
        if not found:
            print(json.dumps([["", "XLA ran no spmd-partitioning pass (a program for one partition?)"]]),
                  file=sys.stderr)
            return 1
        with open(found[-1]) as fh:
            hlo = xc.hlo.hlo_module_from_text(fh.read())
    stablehlo = xc._xla.mlir.hlo_to_stablehlo(hlo.as_serialized_hlo_module_proto())
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(stablehlo)
        _drop_copies(module, ir)
        out = module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
        # The global shapes: of @main, the entry XLA compiled.
        main = ir.SymbolTable(ir.Module.parse(text).operation)["main"]
        ft = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        shapes_in = [list(ir.RankedTensorType(t).shape) for t in ft.inputs]
        shapes_out = [list(ir.RankedTensorType(t).shape) for t in ft.results]

    def blocks(shardings: Sequence[Any], shapes: Sequence[list[int]]) -> list[list[list[list[int]]]]:
        """Per value, per partition: [start, stop] per dimension."""
        out: list[list[list[list[int]]]] = []
        for hs, shape in zip(shardings, shapes):
            where = GSPMDSharding(tuple(devices), hs).devices_indices_map(tuple(shape))
            out.append([[list(s.indices(d)[:2]) for s, d in zip(where[dev], shape)] for dev in devices])
        return out
    json.dump({"module": out, "inputs": blocks(exe.get_parameter_shardings(), shapes_in),
               "outputs": blocks(exe.get_output_shardings(), shapes_out)}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
