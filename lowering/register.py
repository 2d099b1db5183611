"""The passes of lowering/ (one folder per target), as data: pass name -> "module:function",
the function that `@register` (core/registry.py) makes that pass, with its
description, options and anchor. The registry imports a pass's module only
when a pipeline uses the pass or a listing needs its options, so this file
imports nothing (an entry point of the `coll.passes` group in
pyproject.toml; the registry reads it without importing its package)."""

PASSES = {
    "coll-ieee-minmax": "coll.lowering.cpu.ieee_minmax:ieee_minmax",
    "coll-to-cpu": "coll.lowering.cpu.to_cpu:to_cpu",
    "coll-cpu-to-llvm": "coll.lowering.cpu.to_cpu:cpu_to_llvm",
    "coll-gpu-legalize-memcpy": "coll.lowering.gpu.legalize_memcpy:legalize_memcpy_pass",
    "coll-gpu-local-buffers": "coll.lowering.gpu.local_buffers:gpu_local_buffers",
    "coll-gpu-collapse-parallel": "coll.lowering.gpu.local_buffers:gpu_collapse_parallel",
    "coll-to-gpu": "coll.lowering.gpu.to_gpu:to_gpu_pass",
    "coll-mpi-abi": "coll.lowering.mpi.abi:mpi_abi",
    "coll-mpi-requests": "coll.lowering.mpi.requests:mpi_requests",
    "coll-mpi-static-scratch": "coll.lowering.mpi.static_scratch:mpi_static_scratch",
    "coll-to-mpi": "coll.lowering.mpi.to_mpi:to_mpi",
    "coll-spmd-to-mpi": "coll.lowering.mpi.to_mpi:spmd_to_mpi",
}
