"""Prints a collective-level module with N devices, bypassing coll-gen's
own limit (used to test the verifier's)."""
import sys

n = int(sys.argv[1])
t = "memref<8xf32>"
args = ", ".join(f"%x{i}: {t}" for i in range(n)) + ", " + ", ".join(f"%y{i}: {t}" for i in range(n))
ops = ", ".join([f"%x{i}" for i in range(n)] + [f"%y{i}" for i in range(n)])
print(f"func.func @f({args}) {{")
print(f'  %t = "coll.all_reduce"({ops}) {{kind = "sum", devices = array<i64: {", ".join(map(str, range(n)))}>, '
      f"operandSegmentSizes = array<i32: {n}, {n}, 0>}} : ({', '.join([t] * 2 * n)}) -> !coll.token")
print('  "coll.wait"(%t) : (!coll.token) -> ()')
print("  return")
print("}")
