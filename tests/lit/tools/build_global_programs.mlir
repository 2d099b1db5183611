// coll-build of a frontend's program on global arrays (a JAX export, a
// shard-annotated function) builds its SPMD function on every device's
// blocks, and says on stderr how they are laid out: argument i * N + r of
// the GPU entry is device r's block of array i. (It was refused: before
// that, an LLVM conversion error at a func.return, or the input printed
// back unlowered.)
// RUN: coll-build %root/tests/lit/stablehlo/Inputs/psum.mlir --emit=llvm -o %t.ll 2>&1 | FileCheck %s --check-prefix=JAX
// RUN: FileCheck %s --check-prefix=LLVM < %t.ll
// RUN: coll-build %root/examples/mlp_shard_4.mlir --emit=gpu 2>%t.err | FileCheck %s --check-prefix=GPU
// RUN: FileCheck %s --check-prefix=SHARD < %t.err
// RUN: coll-build %root/tests/lit/stablehlo/Inputs/mlp_jit.mlir --emit=ptx -o %t.ptx 2>/dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// A rank read stored into a tensor (jax.lax.axis_index) is a host store on
// device memory: located, after the note, and nothing written.
// RUN: not coll-build %root/tests/lit/stablehlo/Inputs/axis_index.mlir --emit=llvm -o %t.axis 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not test -e %t.axis
// JAX: psum.mlir: note: a stablehlo program on global arrays: @main is built on 8 devices (grid 8), each with its block of every array; --emit=so's entry takes argument i * 8 + r = device r's block of array i, mpi-exe's rank r its blocks in this order (coll-run scatters and gathers them for you)
// JAX-NEXT: array 0 (x0): 64xf32, blocks of 8, split: dim 0 over grid axes [0]
// JAX-NEXT: array 1 (y0): 8xf32, blocks of 8, the whole array on every device
// LLVM: llvm.func @main(
// LLVM: llvm.call @mgpuLaunchKernel
// SHARD: mlp_shard_4.mlir: note: a shard program on global arrays: @mlp is built on 4 devices (grid 4)
// SHARD-NEXT: array 0 (x0): 8x16xf32, blocks of 8x4, split: dim 1 over grid axes [0]
// SHARD-NEXT: array 1 (x1): 16x32xf32, blocks of 4x32, split: dim 0 over grid axes [0]
// SHARD-NEXT: array 2 (x2): 32x16xf32, blocks of 32x4, split: dim 1 over grid axes [0]
// SHARD-NEXT: array 3 (y0): 8x16xf32, blocks of 8x16, the whole array on every device
// The four devices' matmuls are kernels, the 16 blocks (4 arrays x 4 devices) the entry's arguments.
// GPU: func.func @mlp(%arg0: memref<8x4xf32>, %arg1: memref<8x4xf32>, %arg2: memref<8x4xf32>, %arg3: memref<8x4xf32>, %arg4: memref<4x32xf32>
// GPU-SAME: %arg15: memref<8x16xf32>)
// GPU: gpu.launch_func
// PTX: .visible .entry
// AXIS: axis_index.mlir: note: a stablehlo program on global arrays
// AXIS: axis_index.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'memref.store' has no GPU lowering
