// With ptxas on PATH the kernels are embedded as a cubin (an ELF object)
// instead of PTX, which the driver would JIT-compile at load time.
// REQUIRES: ptxas
// RUN: coll-gen all-reduce --devices 2 --shape 8 | %PYTHON -m coll.tools.coll_build --emit=llvm --format=bin | FileCheck %s
// RUN: coll-gen all-reduce --devices 2 --shape 8 | %PYTHON -m coll.tools.coll_build --emit=llvmir | FileCheck %s --check-prefix=AUTO

// CHECK: gpu.binary @coll_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}bin = "\7FELF
// AUTO: call ptr @mgpuModuleLoad(ptr @coll_kernels_binary
