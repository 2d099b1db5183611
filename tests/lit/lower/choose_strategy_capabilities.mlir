// coll-choose-strategy{capabilities=...}: the candidates are the strategies
// whose needs the back end meets. With peer access (the CPU's simulated
// devices share one memory; the cpu and gpu routes pass it) the cost model
// weighs oneshot and twoshot too, and a peer strategy it picks sets
// coll.peer_access on the module. Without it (MPI ranks share nothing)
// no peer strategy is a candidate, whatever the profile.
// CPU profile, 8 x 16 MiB: twoshot (reduce-scatter by peer reads, then N(N-1)
// chunk copies), as coll-predict prints it; without capabilities: all2all.
// RUN: coll-gen all-reduce --devices 8 --shape 4194304 --dtype f32 | coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{profile=cpu capabilities=peer_access})' | FileCheck %s --check-prefix=CPU
// RUN: coll-gen all-reduce --devices 8 --shape 4194304 --dtype f32 | coll-opt --pass-pipeline='builtin.module(coll-predict{profile=cpu capabilities=peer_access})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=PREDICT
// RUN: coll-gen all-reduce --devices 8 --shape 4194304 --dtype f32 | coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{profile=cpu})' | FileCheck %s --check-prefix=NOPEER
// A profile where every op costs 1 us and bytes are free: oneshot, one
// combine per device and no copy, is the fastest.
// RUN: coll-gen all-reduce --devices 4 --shape 1024 --dtype f32 | coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{profile=%S/Inputs/per_op.json capabilities=peer_access})' | FileCheck %s --check-prefix=ONESHOT
// MPI profile, tiny to large: never a peer strategy.
// RUN: coll-gen all-reduce --devices 4 --shape 16 --dtype f32 | coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{profile=mpi})' | FileCheck %s --check-prefix=MPI
// RUN: coll-gen all-reduce --devices 4 --shape 16384 --dtype f32 | coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{profile=mpi})' | FileCheck %s --check-prefix=MPI
// RUN: coll-gen all-reduce --devices 4 --shape 16777216 --dtype f32 | coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{profile=mpi})' | FileCheck %s --check-prefix=MPI
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-choose-strategy{profile=cpu capabilities=peer_acess})' 2>&1 | FileCheck %s --check-prefix=BAD

// CPU: module attributes {coll.peer_access}
// CPU: "coll.all_reduce"{{.*}}strategy = "twoshot"
// PREDICT: N=8 numel=4194304 f32 (16777216 B per device): pick twoshot (reference rule: ring)
// PREDICT: oneshot
// PREDICT: twoshot
// NOPEER-NOT: coll.peer_access
// NOPEER: "coll.all_reduce"{{.*}}strategy = "all2all"
// ONESHOT: module attributes {coll.peer_access}
// ONESHOT: "coll.all_reduce"{{.*}}strategy = "oneshot"
// MPI-NOT: coll.peer_access
// MPI: "coll.all_reduce"{{.*}}strategy = "{{naive|ring|all2all|rhd|tree}}"
// BAD: error: coll-choose-strategy: unknown capability 'peer_acess'; expected a comma-separated list of: peer_access, shared_memory

func.func @f(%x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
