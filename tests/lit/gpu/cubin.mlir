// With ptxas on PATH the kernels are embedded as a cubin (an ELF object)
// instead of PTX, which the driver would JIT-compile at load time.
// REQUIRES: ptxas
// RUN: coll-gen all-reduce --devices 2 --shape 8 | %PYTHON -m coll.tools.coll_build --emit=llvm --format=bin | FileCheck %s
// RUN: coll-gen all-reduce --devices 2 --shape 8 | %PYTHON -m coll.tools.coll_build --emit=llvmir | FileCheck %s --check-prefix=AUTO

// (lower_to_llvm embeds the object itself and loads it at load time, see
// lowering/gpu/launch.py; the global keeps the object's target and format.)
// CHECK: llvm.mlir.global internal constant @__coll_binary_coll_kernels("\7FELF
// CHECK-SAME: coll.kernel_format = "bin", coll.kernel_target = "#nvvm.target<O = 3, chip = \22sm_90\22, features = \22+ptx80\22>"
// AUTO: call ptr @mgpuModuleLoad(ptr @__coll_binary_coll_kernels, i64
