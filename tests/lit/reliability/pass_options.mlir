// Bad options of the reliability passes are tool-level errors naming the
// pass, the option and what was expected.
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-shuffle{seed=x})' 2>&1 | filecheck %s --check-prefix=SEED
// RUN: not coll-opt %s --coll-shuffle=seed 2>&1 | filecheck %s --check-prefix=NOVALUE
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-check-order{strict=1})' 2>&1 | filecheck %s --check-prefix=CHECKOPT
// SEED: coll-opt: error: invalid pass pipeline: invalid value 'x' for option 'seed' of pass 'coll-shuffle'; expected int
// NOVALUE: coll-opt: error: invalid pass pipeline: option 'seed' of pass 'coll-shuffle' needs a value (seed=...)
// CHECKOPT: coll-opt: error: invalid pass pipeline: unknown option 'strict' for pass 'coll-check-order'; expected one of: none
// CHECK-NOT: Traceback

func.func @f() {
  return
}
