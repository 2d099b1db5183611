"""Prints one module (peer access on) with a function per reducing
collective, strategy, N in 2, 3, 4, 8 and element type (f32, bf16): the
programs whose canonical lowering coll-check-semantics must prove in device
order (check_semantics_order.mlir): 104 functions."""

STRATEGIES = {
    "all_reduce": ["naive", "ring", "rhd", "tree", "all2all", "oneshot", "twoshot"],
    "reduce_scatter": ["ring", "direct"],
    "reduce": ["direct", "ring", "tree", "oneshot"],
}


def function(op: str, strategy: str, n: int, elem: str) -> str:
    shape, out, n_out, extra = "24", "24", n, ""
    if op == "reduce_scatter":
        shape, out, extra = f"{3 * n}x2", "3x2", ", scatter_axis = 0 : i64"
    if op == "reduce":
        n_out, extra = 1, f", root = {n - 1} : i64"
    ins = [f"%x{i}: memref<{shape}x{elem}>" for i in range(n)]
    outs = [f"%y{i}: memref<{out}x{elem}>" for i in range(n_out)]
    names = ", ".join([f"%x{i}" for i in range(n)] + [f"%y{i}" for i in range(n_out)])
    types = ", ".join([f"memref<{shape}x{elem}>"] * n + [f"memref<{out}x{elem}>"] * n_out)
    devices = ", ".join(map(str, range(n)))
    return (f"  func.func @{op}_{strategy}_{n}_{elem}({', '.join(ins + outs)}) {{\n"
            f'    %t = "coll.{op}"({names}) {{kind = "sum", devices = array<i64: {devices}>, '
            f'strategy = "{strategy}", operandSegmentSizes = array<i32: {n}, {n_out}, 0>{extra}}} '
            f": ({types}) -> !coll.token\n"
            '    "coll.wait"(%t) : (!coll.token) -> ()\n'
            "    return\n"
            "  }\n")


print("module attributes {coll.peer_access} {")
for op, strategies in STRATEGIES.items():
    for strategy in strategies:
        for n in (2, 3, 4, 8):
            for elem in ("f32", "bf16"):
                print(function(op, strategy, n, elem), end="")
print("}")
