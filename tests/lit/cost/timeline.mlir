// coll-timeline draws the explicit program into a PNG; before lowering
// there is nothing to draw, which is an error.
// RUN: rm -f %t.png %t.bad.png
// GEN: input = coll-gen all-reduce --devices 4 --shape 64
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-timeline{file=%t.png})' < %S/Inputs/gen/timeline.input.mlir | FileCheck %s
// RUN: %PYTHON -c "import sys; sys.exit(open(sys.argv[1], 'rb').read(8) != b'\x89PNG\r\n\x1a\n')" %t.png
// RUN: not coll-opt --coll-timeline=file=%t.bad.png < %S/Inputs/gen/timeline.input.mlir 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not test -e %t.bad.png

// The IR passes through unchanged.
// CHECK: "coll.copy"
// BAD: error: coll-timeline: no explicit coll ops to draw; run coll-lower-all-reduce first
