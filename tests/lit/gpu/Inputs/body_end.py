"""Prints the last ops of the graph body in coll-to-gpu's output (stdin),
the first stream's value renamed S0, so that a FileCheck of the ending
(every chain joined into the capture's origin) does not depend on SSA
numbering: used by graph.mlir."""
import re
import sys

text = sys.stdin.read()
body = re.search(r"func\.func private @__coll_body_\w+\(.*?\n  }\n", text, re.S).group(0)
base = re.search(r"(%\w+) = llvm\.mlir\.addressof @__coll_streams", body).group(1)
slot = re.search(rf"(%\w+) = llvm\.getelementptr {base}\[0\]", body).group(1)
s0 = re.search(rf"(%\w+) = llvm\.load {slot} ", body).group(1)
lines = [line.strip() for line in body.splitlines()[-int(sys.argv[1]) - 2:-1]]
print("\n".join(re.sub(rf"{re.escape(s0)}\b", "S0", line) for line in lines))
