"""Writes the StableHLO samples the lit tests beside this folder read:
JAX 0.10.2's lowering of bench/jax_programs.py's programs at 8 elements per
device, in the generic form coll reads, without locations (the parser then
names this folder's files in diagnostics). Run once, from anywhere, with
the project's venv (make setup installs jax):

    .venv/bin/python tests/lit/stablehlo/Inputs/gen.py

psum_2d_gspmd.mlir is psum_2d lowered with GSPMD (GSPMD's manual region).
JAX 0.10.2 prints replica groups as dense lists; the mesh-axes form
(`#stablehlo.replica_group_mesh_axes`, JAX 0.12 under Shardy) is written by
hand in ../replica_groups.mlir, as JAX 0.12 prints it.
"""
import runpy
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = ["psum", "pmax", "pmin_i32", "all_gather", "psum_scatter", "all_to_all", "psum_2d", "axis_index",
            "ppermute_ring", "mlp_shard_map", "mlp_jit", "pipeline_fori", "at_set", "take_along_grad", "while_psum"]

if __name__ == "__main__":
    jax_programs = runpy.run_path(str(HERE.parents[3] / "bench" / "jax_programs.py"))
    code = jax_programs["main"]([str(HERE), "--n", "8", "--no-outputs", "--names", ",".join(PROGRAMS)])
    # A shard_map as GSPMD lowers it (jax_use_shardy_partitioner=False), in a
    # process of its own: the partitioner is chosen once per process.
    code = code or subprocess.run([sys.executable, str(HERE.parents[3] / "bench" / "jax_programs.py"), str(HERE),
                                   "--n", "8", "--no-outputs", "--gspmd", "--names", "psum_2d"]).returncode
    for npz in HERE.glob("*.npz"):  # the lit tests read only the modules
        npz.unlink()
    sys.exit(code)
