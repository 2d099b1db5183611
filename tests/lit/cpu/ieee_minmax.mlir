// coll-ieee-minmax: arith.maximumf/minimumf become the LLVM intrinsics, which
// keep IEEE semantics (NaN propagates, -0 < +0); upstream arith-expand, which
// the CPU route runs, would turn them into compare-and-select (max(-0, +0) = -0).
// RUN: coll-opt %s --coll-ieee-minmax | FileCheck %s
// RUN: coll-opt %s --coll-ieee-minmax --arith-expand | FileCheck %s --check-prefix=EXPANDED

// CHECK-LABEL: func.func @f
// CHECK: %[[A:.*]] = llvm.intr.maximum(%arg0, %arg1) : (vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// CHECK: llvm.intr.minimum(%[[A]], %arg1) : (vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// CHECK-NOT: arith.maximumf
// CHECK-NOT: arith.minimumf
// EXPANDED-NOT: arith.cmpf
// EXPANDED: llvm.intr.maximum
func.func @f(%a: vector<4xf32>, %b: vector<4xf32>) -> vector<4xf32> {
  %m = arith.maximumf %a, %b : vector<4xf32>
  %n = arith.minimumf %m, %b : vector<4xf32>
  return %n : vector<4xf32>
}
