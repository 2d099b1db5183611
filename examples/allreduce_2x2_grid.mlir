// A user's own allreduce algorithm, written at the explicit level: a
// two-dimensional allreduce (sum) on a 2x2 device grid, 8 f32 per device.
// Device (row r, column c) is d(2r+c); rows {d0, d1} and {d2, d3}, columns
// {d0, d2} and {d1, d3}. Each buffer is two halves, h0 = [0, 4), h1 = [4, 8).
//
//   1. reduce-scatter along rows: column c's device gets its row's half hc,
//      summed, in its own output (y0[h0] = x0[h0] + x1[h0], ...);
//   2. allreduce along columns: partners swap their half and add it in place;
//   3. all-gather along rows: each device sends its half to its row partner.
//
// The coll.implements at the end claims that the program computes
// all_reduce(sum) of x0..x3 into y0..y3; coll-check-semantics proves it
// before anything runs, coll-run runs it and checks it against numpy:
//
//   coll-opt examples/allreduce_2x2_grid.mlir --coll-check-order --coll-check-semantics
//   coll-run examples/allreduce_2x2_grid.mlir --backend=cpu
!a = memref<8xf32>
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
!d2 = memref<8xf32, #coll.device<2>>
!d3 = memref<8xf32, #coll.device<3>>
!l0 = memref<4xf32, strided<[1]>, #coll.device<0>>
!l1 = memref<4xf32, strided<[1]>, #coll.device<1>>
!l2 = memref<4xf32, strided<[1]>, #coll.device<2>>
!l3 = memref<4xf32, strided<[1]>, #coll.device<3>>
!u0 = memref<4xf32, strided<[1], offset: 4>, #coll.device<0>>
!u1 = memref<4xf32, strided<[1], offset: 4>, #coll.device<1>>
!u2 = memref<4xf32, strided<[1], offset: 4>, #coll.device<2>>
!u3 = memref<4xf32, strided<[1], offset: 4>, #coll.device<3>>
!s0 = memref<4xf32, #coll.device<0>>
!s1 = memref<4xf32, #coll.device<1>>
!s2 = memref<4xf32, #coll.device<2>>
!s3 = memref<4xf32, #coll.device<3>>
!tok = !coll.token
module {
  func.func @grid_all_reduce(%a0: !a, %a1: !a, %a2: !a, %a3: !a, %b0: !a, %b1: !a, %b2: !a, %b3: !a)
      attributes {llvm.emit_c_interface} {
    %x0 = memref.memory_space_cast %a0 : !a to !d0
    %x1 = memref.memory_space_cast %a1 : !a to !d1
    %x2 = memref.memory_space_cast %a2 : !a to !d2
    %x3 = memref.memory_space_cast %a3 : !a to !d3
    %y0 = memref.memory_space_cast %b0 : !a to !d0
    %y1 = memref.memory_space_cast %b1 : !a to !d1
    %y2 = memref.memory_space_cast %b2 : !a to !d2
    %y3 = memref.memory_space_cast %b3 : !a to !d3
    // Halves: xN_h0 = xN[0:4], xN_h1 = xN[4:8], likewise for the outputs.
    %x0_h0 = memref.subview %x0[0] [4] [1] : !d0 to !l0
    %x1_h0 = memref.subview %x1[0] [4] [1] : !d1 to !l1
    %x2_h0 = memref.subview %x2[0] [4] [1] : !d2 to !l2
    %x3_h0 = memref.subview %x3[0] [4] [1] : !d3 to !l3
    %x0_h1 = memref.subview %x0[4] [4] [1] : !d0 to !u0
    %x1_h1 = memref.subview %x1[4] [4] [1] : !d1 to !u1
    %x2_h1 = memref.subview %x2[4] [4] [1] : !d2 to !u2
    %x3_h1 = memref.subview %x3[4] [4] [1] : !d3 to !u3
    %y0_h0 = memref.subview %y0[0] [4] [1] : !d0 to !l0
    %y1_h0 = memref.subview %y1[0] [4] [1] : !d1 to !l1
    %y2_h0 = memref.subview %y2[0] [4] [1] : !d2 to !l2
    %y3_h0 = memref.subview %y3[0] [4] [1] : !d3 to !l3
    %y0_h1 = memref.subview %y0[4] [4] [1] : !d0 to !u0
    %y1_h1 = memref.subview %y1[4] [4] [1] : !d1 to !u1
    %y2_h1 = memref.subview %y2[4] [4] [1] : !d2 to !u2
    %y3_h1 = memref.subview %y3[4] [4] [1] : !d3 to !u3

    // 1. Reduce-scatter along rows: d0 and d2 reduce h0, d1 and d3 reduce h1.
    %r0 = "coll.alloc"() : () -> !s0
    %r1 = "coll.alloc"() : () -> !s1
    %r2 = "coll.alloc"() : () -> !s2
    %r3 = "coll.alloc"() : () -> !s3
    %c10 = "coll.copy"(%x1_h0, %r0) : (!l1, !s0) -> !tok
    %c01 = "coll.copy"(%x0_h1, %r1) : (!u0, !s1) -> !tok
    %c32 = "coll.copy"(%x3_h0, %r2) : (!l3, !s2) -> !tok
    %c23 = "coll.copy"(%x2_h1, %r3) : (!u2, !s3) -> !tok
    %p0 = "coll.combine"(%x0_h0, %r0, %y0_h0, %c10) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!l0, !s0, !l0, !tok) -> !tok
    %p1 = "coll.combine"(%x1_h1, %r1, %y1_h1, %c01) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!u1, !s1, !u1, !tok) -> !tok
    %p2 = "coll.combine"(%x2_h0, %r2, %y2_h0, %c32) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!l2, !s2, !l2, !tok) -> !tok
    %p3 = "coll.combine"(%x3_h1, %r3, %y3_h1, %c23) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!u3, !s3, !u3, !tok) -> !tok

    // 2. Allreduce along columns: partners swap their row sums and add in
    //    place, each add after both copies (the other copy reads what it writes).
    %q0 = "coll.alloc"() : () -> !s0
    %q1 = "coll.alloc"() : () -> !s1
    %q2 = "coll.alloc"() : () -> !s2
    %q3 = "coll.alloc"() : () -> !s3
    %m20 = "coll.copy"(%y2_h0, %q0, %p2) : (!l2, !s0, !tok) -> !tok
    %m02 = "coll.copy"(%y0_h0, %q2, %p0) : (!l0, !s2, !tok) -> !tok
    %m31 = "coll.copy"(%y3_h1, %q1, %p3) : (!u3, !s1, !tok) -> !tok
    %m13 = "coll.copy"(%y1_h1, %q3, %p1) : (!u1, !s3, !tok) -> !tok
    %s0 = "coll.combine"(%y0_h0, %q0, %y0_h0, %m20, %m02) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!l0, !s0, !l0, !tok, !tok) -> !tok
    %s2 = "coll.combine"(%y2_h0, %q2, %y2_h0, %m02, %m20) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!l2, !s2, !l2, !tok, !tok) -> !tok
    %s1 = "coll.combine"(%y1_h1, %q1, %y1_h1, %m31, %m13) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!u1, !s1, !u1, !tok, !tok) -> !tok
    %s3 = "coll.combine"(%y3_h1, %q3, %y3_h1, %m13, %m31) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!u3, !s3, !u3, !tok, !tok) -> !tok

    // 3. All-gather along rows: each device sends its finished half across.
    %g01 = "coll.copy"(%y0_h0, %y1_h0, %s0) : (!l0, !l1, !tok) -> !tok
    %g10 = "coll.copy"(%y1_h1, %y0_h1, %s1) : (!u1, !u0, !tok) -> !tok
    %g23 = "coll.copy"(%y2_h0, %y3_h0, %s2) : (!l2, !l3, !tok) -> !tok
    %g32 = "coll.copy"(%y3_h1, %y2_h1, %s3) : (!u3, !u2, !tok) -> !tok

    %done = "coll.join"(%g01, %g10, %g23, %g32) : (!tok, !tok, !tok, !tok) -> !tok
    "coll.implements"(%a0, %a1, %a2, %a3, %b0, %b1, %b2, %b3, %done)
        {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1, 2, 3>,
         operandSegmentSizes = array<i32: 4, 4, 1>}
        : (!a, !a, !a, !a, !a, !a, !a, !a, !tok) -> ()
    "coll.wait"(%done) : (!tok) -> ()
    return
  }
}
