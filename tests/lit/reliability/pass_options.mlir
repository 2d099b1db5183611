// Bad options of the reliability passes are tool-level errors naming the
// pass, the option and what was expected.
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-shuffle{seed=x})' 2>&1 | FileCheck %s --check-prefix=SEED
// RUN: not coll-opt %s --coll-shuffle=seed 2>&1 | FileCheck %s --check-prefix=NOVALUE
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-check-order{strict=1})' 2>&1 | FileCheck %s --check-prefix=CHECKOPT
// SEED: coll-opt: error: invalid pass pipeline: invalid value 'x' for option 'seed' of pass 'coll-shuffle'; expected an integer (int64)
// NOVALUE: coll-opt: error: invalid pass pipeline: option 'seed' of pass 'coll-shuffle' needs a value (seed=...)
// CHECKOPT: coll-opt: error: invalid pass pipeline: unknown option 'strict' for pass 'coll-check-order'; expected one of: none
// Integers as upstream's command line reads them: 0x hex, leading-0 octal;
// no '_', nothing beyond int64.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-shuffle{seed=0x10})' --dump-pass-pipeline 2>&1 | FileCheck %s --check-prefix=HEX
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-shuffle{seed=1_000})' 2>&1 | FileCheck %s --check-prefix=UNDERSCORE
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-shuffle{seed=9223372036854775808})' 2>&1 | FileCheck %s --check-prefix=BIG
// HEX: coll-shuffle{seed=16}
// UNDERSCORE: invalid value '1_000' for option 'seed' of pass 'coll-shuffle'; expected an integer (int64)
// BIG: invalid value '9223372036854775808' for option 'seed'
// CHECK-NOT: Traceback

func.func @f() {
  return
}
