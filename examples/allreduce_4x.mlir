// An allreduce (sum) over 4 devices, each holding a 1024x256 f32 buffer
// (1 MiB): @all_reduce(x0..x3, y0..y3) leaves x0+x1+x2+x3 in every y_j.
// No strategy attribute: coll-lower-all-reduce picks one, or coll-run's
// --strategy forces it. Run it on CPU-simulated devices:
//
//   coll-run examples/allreduce_4x.mlir --backend=cpu --strategy=all
//
// or lower it by hand:
//
//   coll-opt examples/allreduce_4x.mlir \
//     --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu)'
module {
  func.func @all_reduce(%x0: memref<1024x256xf32>, %x1: memref<1024x256xf32>,
                        %x2: memref<1024x256xf32>, %x3: memref<1024x256xf32>,
                        %y0: memref<1024x256xf32>, %y1: memref<1024x256xf32>,
                        %y2: memref<1024x256xf32>, %y3: memref<1024x256xf32>)
      attributes {llvm.emit_c_interface} {
    %done = "coll.all_reduce"(%x0, %x1, %x2, %x3, %y0, %y1, %y2, %y3)
        {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 4, 4, 0>}
        : (memref<1024x256xf32>, memref<1024x256xf32>, memref<1024x256xf32>, memref<1024x256xf32>,
           memref<1024x256xf32>, memref<1024x256xf32>, memref<1024x256xf32>, memref<1024x256xf32>)
        -> !coll.token
    "coll.wait"(%done) : (!coll.token) -> ()
    return
  }
}
