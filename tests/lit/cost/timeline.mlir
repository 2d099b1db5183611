// coll-timeline draws the explicit program into a PNG; before lowering
// there is nothing to draw, which is an error.
// RUN: rm -f %t.png %t.bad.png
// GEN: input = coll-gen all-reduce --devices 4 --shape 64
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-timeline{file=%t.png})' < %S/Inputs/gen/timeline.input.mlir | FileCheck %s
// RUN: %PYTHON -c "import sys; sys.exit(open(sys.argv[1], 'rb').read(8) != b'\x89PNG\r\n\x1a\n')" %t.png
// RUN: not coll-opt --coll-timeline=file=%t.bad.png < %S/Inputs/gen/timeline.input.mlir 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not test -e %t.bad.png

// The picture goes to exactly the path given, its suffix naming the format;
// a path matplotlib would append .png to is refused before anything is drawn.
// RUN: rm -rf %t.dir && mkdir %t.dir
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-timeline{file=%t.dir/t.svg})' < %S/Inputs/gen/timeline.input.mlir > /dev/null
// RUN: %PYTHON -c "import sys; sys.exit(b'<svg' not in open(sys.argv[1], 'rb').read(400))" %t.dir/t.svg
// RUN: not coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-timeline{file=%t.dir/noext})' < %S/Inputs/gen/timeline.input.mlir 2>&1 | FileCheck %s --check-prefix=NOEXT
// RUN: cd %t.dir && not coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-timeline{file=})' < %S/Inputs/gen/timeline.input.mlir 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-timeline{file=%t.dir})' < %S/Inputs/gen/timeline.input.mlir 2>&1 | FileCheck %s --check-prefix=DIR
// RUN: not coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce,coll-timeline{file=/dev/full})' < %S/Inputs/gen/timeline.input.mlir 2>&1 | FileCheck %s --check-prefix=FULL
// RUN: ls -A %t.dir | FileCheck %s --check-prefix=FILES --implicit-check-not={{.}}

// The IR passes through unchanged.
// CHECK: "coll.copy"
// BAD: error: coll-timeline: no explicit coll ops to draw; run coll-lower-all-reduce first
// NOEXT: <stdin>:1:1: error: coll-timeline: file '{{.*}}/noext' has no picture suffix; expected a path ending in .png, .svg, .pdf
// EMPTY: <stdin>:1:1: error: coll-timeline: file= is empty; expected a path ending in .png, .svg, .pdf
// DIR: <stdin>:1:1: error: coll-timeline: file '{{.*}}.dir' is a directory; expected a path ending in .png, .svg, .pdf
// FULL: <stdin>:1:1: error: coll-timeline: file '/dev/full' has no picture suffix
// FILES: {{^}}t.svg{{$}}
