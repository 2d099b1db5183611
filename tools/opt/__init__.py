"""coll-opt's emulation of mlir-opt: LLVM-style command lines (cl.py), IR
printing around passes (ir_print.py), upstream's pass and dialect lists
(upstream.py), --verify-diagnostics (verify.py)."""
