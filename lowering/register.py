"""The passes of lowering/ as data: pass name -> "module:function" (core/registry.py
reads this table and imports a module only when its pass is used)."""

PASSES = {
    "coll-ieee-minmax": "coll.lowering.cpu.ieee_minmax:ieee_minmax",
    "coll-approximate-math": "coll.lowering.cpu.local_math:approximate_math",
    "coll-outline-row-reductions": "coll.lowering.cpu.row_reductions:outline_row_reductions_pass",
    "coll-reassociate-local-reductions": "coll.lowering.cpu.local_math:reassociate_local_reductions",
    "coll-fp8-conversions": "coll.lowering.cpu.fp8:fp8_conversions",
    "coll-to-cpu": "coll.lowering.cpu.to_cpu:to_cpu",
    "coll-static-local-buffers": "coll.lowering.cpu.local_buffers:static_local_buffers_pass",
    "coll-parallel-devices": "coll.lowering.cpu.parallel:parallel_devices_pass",
    "coll-profile-collectives": "coll.lowering.cpu.profile:profile_collectives_pass",
    "coll-cpu-to-llvm": "coll.lowering.cpu.to_cpu:cpu_to_llvm",
    "coll-gpu-legalize-memcpy": "coll.lowering.gpu.legalize_memcpy:legalize_memcpy_pass",
    "coll-gpu-local-buffers": "coll.lowering.gpu.local_buffers:gpu_local_buffers",
    "coll-gpu-fuse-epilogues": "coll.lowering.gpu.epilogue:fuse_epilogues_pass",
    "coll-gpu-kernel-names": "coll.lowering.gpu.local_buffers:gpu_kernel_names",
    "coll-gpu-collapse-parallel": "coll.lowering.gpu.local_buffers:gpu_collapse_parallel",
    "coll-to-gpu": "coll.lowering.gpu.to_gpu:to_gpu_pass",
    "coll-mpi-abi": "coll.lowering.mpi.abi:mpi_abi",
    "coll-mpi-requests": "coll.lowering.mpi.requests:mpi_requests",
    "coll-mpi-static-scratch": "coll.lowering.mpi.static_scratch:mpi_static_scratch",
    "coll-mpi-overlap": "coll.lowering.mpi.overlap:mpi_overlap_pass",
    "coll-to-mpi": "coll.lowering.mpi.to_mpi:to_mpi",
    "coll-spmd-to-mpi": "coll.lowering.mpi.to_mpi:spmd_to_mpi",
}
