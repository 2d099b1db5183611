// Combines over 128 and 256 inputs assemble: every strategy with a combine
// over all N inputs builds a library whose kernels ptxas assembled
// (--format=bin). A kernel takes at most 16 inputs (an address each, so 144
// bytes of parameters at most); a wider combine is a chain of launches that
// folds into the device's accumulator. The programs are the smallest with
// that combine: one output device for naive and oneshot, 32 elements (one
// non-empty chunk) for all2all and twoshot; the kernels are those of every
// size and output form (they depend on kind, type and arity only).
// REQUIRES: ptxas
// RUN: coll-gen all-reduce --devices 128 --shape 32 --to-device 0 | %PYTHON -m coll.tools.coll_build --emit=so --format=bin --strategy=naive -o %t.naive128.so
// RUN: coll-gen all-reduce --devices 256 --shape 32 --to-device 0 | %PYTHON -m coll.tools.coll_build --emit=so --format=bin --strategy=naive -o %t.naive256.so
// RUN: coll-gen all-reduce --devices 128 --shape 32 | %PYTHON -m coll.tools.coll_build --emit=so --format=bin --strategy=all2all -o %t.all2all128.so
// RUN: coll-gen all-reduce --devices 256 --shape 32 | %PYTHON -m coll.tools.coll_build --emit=so --format=bin --strategy=all2all -o %t.all2all256.so
// RUN: coll-gen all-reduce --devices 128 --shape 32 --to-device 0 --peer-access | %PYTHON -m coll.tools.coll_build --emit=so --format=bin --strategy=oneshot -o %t.oneshot128.so
// RUN: coll-gen all-reduce --devices 256 --shape 32 --to-device 0 --peer-access | %PYTHON -m coll.tools.coll_build --emit=so --format=bin --strategy=oneshot -o %t.oneshot256.so
// RUN: coll-gen all-reduce --devices 128 --shape 32 --peer-access | %PYTHON -m coll.tools.coll_build --emit=so --format=bin --strategy=twoshot -o %t.twoshot128.so
// RUN: coll-gen all-reduce --devices 256 --shape 32 --peer-access | %PYTHON -m coll.tools.coll_build --emit=so --format=bin --strategy=twoshot -o %t.twoshot256.so
// RUN: coll-gen reduce --devices 128 --shape 32 --root 0 --strategy direct | %PYTHON -m coll.tools.coll_build --emit=so --format=bin -o %t.reduce128.so
// RUN: coll-gen reduce --devices 256 --shape 32 --root 0 --strategy direct --dtype f16 | %PYTHON -m coll.tools.coll_build --emit=so --format=bin -o %t.reduce256.so

// The chain of naive's combine on 256 devices: 16 inputs, then 15 more per
// kernel behind the accumulator: 1 + 240 / 15 = 17 kernels of 16 inputs.
// RUN: coll-gen all-reduce --devices 256 --shape 32 --to-device 0 | %PYTHON -m coll.tools.coll_build --emit=gpu --strategy=naive | FileCheck %s
// CHECK-LABEL: func.func @all_reduce(
// CHECK-COUNT-17: gpu.launch_func async [%{{.*}}] @coll_kernels::@combine_sum_f32_x16 blocks
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @combine_sum_f32_x16(
// CHECK-NOT: gpu.func

// f16 folds in an f32 accumulator (rounded once, in the last kernel).
// RUN: coll-gen reduce --devices 40 --shape 32 --root 0 --strategy direct --dtype f16 | %PYTHON -m coll.tools.coll_build --emit=gpu | FileCheck %s --check-prefix=F16
// F16-LABEL: func.func @reduce(
// F16: gpu.launch_func async {{.*}} @coll_kernels::@combine_sum_f16_x16_tof32
// F16: gpu.launch_func async {{.*}} @coll_kernels::@combine_sum_f16_x16_fromf32_tof32
// F16: gpu.launch_func async {{.*}} @coll_kernels::@combine_sum_f16_x10_fromf32 blocks
// F16-NOT: gpu.launch_func
