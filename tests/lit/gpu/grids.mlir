// Combine grids are sized from occupancy: blocks of 256 threads, as many
// per multiprocessor as the kernel's register bound lets reside
// (gpu_kernels.register_bound, checked by ptxas in test_gpu_resources.py),
// times the chip's multiprocessors; fewer when the data needs fewer (one
// 16-byte vector per thread); the kernels loop over the rest.

// ring, 4 x 4 Mi floats: chunks of 1 Mi floats need 1024 blocks; sm_90 has
// room for 132 x 5 (x2 kernels: 48 registers).
// RUN: coll-gen all-reduce --devices 4 --shape 4194304 | %PYTHON -m coll.tools.coll_build --emit=gpu --strategy=ring | FileCheck %s --check-prefix=RING
// RING-COUNT-12: @coll_kernels::@combine_sum_f32_x2 blocks in (%c660, %c1, %c1) threads in (%c256, %c1, %c1)
// RING-NOT: gpu.launch_func

// sm_80 (A100): 108 multiprocessors.
// RUN: coll-gen all-reduce --devices 4 --shape 4194304 | %PYTHON -m coll.tools.coll_build --emit=gpu --strategy=ring --chip=sm_80 | FileCheck %s --check-prefix=SM80
// SM80-COUNT-12: @coll_kernels::@combine_sum_f32_x2 blocks in (%c540, %c1, %c1)

// oneshot on 8 devices: x8 kernels (96 registers): 2 blocks per multiprocessor.
// RUN: coll-gen all-reduce --devices 8 --shape 4194304 --peer-access | %PYTHON -m coll.tools.coll_build --emit=gpu --strategy=oneshot | FileCheck %s --check-prefix=ONESHOT
// ONESHOT-COUNT-8: @coll_kernels::@combine_sum_f32_x8 blocks in (%c264, %c1, %c1)

// 5000 floats in 4 ring chunks of about 1250: 2 blocks of 1024 floats.
// RUN: coll-gen all-reduce --devices 4 --shape 5000 | %PYTHON -m coll.tools.coll_build --emit=gpu --strategy=ring | FileCheck %s --check-prefix=SMALL
// SMALL: @coll_kernels::@combine_sum_f32_x2 blocks in (%c2, %c1, %c1)
