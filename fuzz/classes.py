"""Generated inputs of the program classes an outside attack found weak
(issue 23, item 8), for the fuzzer (fuzz/engine.py): explicit programs with
host memory ops between their coll ops, collectives whose outputs alias
their inputs partly or through views, SPMD collectives over groups of a
grid (and partitioned shard programs), collectives in loops, local work
around collectives. Each generator returns module text, valid or nearly so
(an offset past the end, a group that is not a partition): every tool must
end it in success or a located diagnostic.

The collectives, their attributes, buffer counts and output sizes come from
the registry (coll.collectives COLLECTIVES and each class's facts), so a
new collective is fuzzed without an edit here; the shard ops of
`partitioned_shard` are the shard dialect's."""
import random
import re

from ..collectives import COLLECTIVES

CLASSES = {cls.short_name(): cls for cls in COLLECTIVES}
OPS = tuple(CLASSES)
TYPES = ("f32", "i32", "f16", "i64")


def _attrs(op: str, rng: random.Random, n: int = 2) -> str:
    """The attributes of `op` over n devices, as text, from its class: its
    kind (HAS_KIND), root (ROOTED), axes (AXES, all 0) and arrays (ARRAYS,
    its default_arrays)."""
    cls = CLASSES[op]
    kind = rng.choice(("sum", "max", "min", "prod")) if rng.random() < 0.9 else rng.choice(("and", "xor", "mean"))
    root = rng.choice((0, 1, 1, 2, 5))
    parts = ([f'kind = "{kind}"'] if cls.HAS_KIND else []) + ([f"root = {root} : i64"] if cls.ROOTED else [])
    parts += [f"{axis} = 0 : i64" for axis in cls.AXES]
    parts += [f"{name} = array<i64: {', '.join(map(str, v))}>" for name, v in cls.default_arrays(n).items()]
    return ", ".join(parts)


def _out_len(op: str, n: int, size: int) -> int:
    """The output length of `op` over n devices on `size` elements (its
    axes all 0)."""
    cls = CLASSES[op]
    return cls.result_shape([size], n, [0] * len(cls.AXES))[0]


def subgroups(rng: random.Random) -> str:
    """An SPMD function whose collective runs over groups of a grid."""
    op = rng.choice(OPS)
    grid = rng.choice(((2, 2), (2, 3), (3, 2), (4, 1)))
    ranks = grid[0] * grid[1]
    perm = list(range(ranks))
    if rng.random() < 0.5:  # one axis: the groups of that axis, in grid order
        axis = rng.choice((0, 1))
        size = grid[axis]
        groups = [[i * grid[1] + j for (i, j) in sorted(
            ((a, b) for a in range(grid[0]) for b in range(grid[1])), key=lambda p: (p[1 - axis], p[axis]))
            ][k:k + size] for k in range(0, ranks, size)]
    else:  # both axes, in either order (grid_axes = [1, 0]), sometimes a bad grouping
        rng.shuffle(perm)
        size = ranks
        groups = [perm]
        if rng.random() < 0.1:
            groups = [perm[:ranks // 2], perm[ranks // 2 - 1:ranks - 1]]
    size = len(groups[0])
    t = rng.choice(TYPES)
    n = rng.choice((size, 2 * size, 4 * size, 3))
    out = _out_len(op, size, n)
    in_place = CLASSES[op].IN_PLACE and rng.random() < 0.3
    flat = ", ".join(str(r) for g in groups for r in g)
    sig = f"%x: memref<{n}x{t}>" + ("" if in_place else f", %y: memref<{out}x{t}>")
    y = "%x" if in_place else "%y"
    return (f"func.func @f({sig}) attributes {{coll.ranks = {ranks} : i64}} {{\n"
            f'  %t = "coll.{op}"(%x, {y}) {{devices = array<i64: {", ".join(map(str, range(size)))}>, '
            f"groups = array<i64: {flat}>, {_attrs(op, rng, size)}, operandSegmentSizes = array<i32: 1, 1, 0>}} : "
            f"(memref<{n}x{t}>, memref<{n if in_place else out}x{t}>) -> !coll.token\n"
            '  "coll.wait"(%t) : (!coll.token) -> ()\n  return\n}\n')


def partitioned_shard(rng: random.Random) -> str:
    """A partitioned shard program (shard collectives on a 2x2 grid)."""
    axes = rng.choice(("[0]", "[1]", "[0, 1]", "[1, 0]"))
    g = 2 if axes in ("[0]", "[1]") else 4
    op = rng.choice(("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce"))
    root = "[1]" if g == 2 else "[1, 0]"
    body = {"all_reduce": (f"shard.all_reduce %a on @g grid_axes = {axes} : tensor<4xi32> -> tensor<4xi32>", 4),
            "all_gather": (f"shard.all_gather %a on @g grid_axes = {axes} gather_axis = 0 : tensor<4xi32> -> "
                           f"tensor<{4 * g}xi32>", 4 * g),
            "reduce_scatter": (f"shard.reduce_scatter %a on @g grid_axes = {axes} scatter_axis = 0 : tensor<4xi32> -> "
                               f"tensor<{4 // g}xi32>", 4 // g),
            "all_to_all": (f"shard.all_to_all %a on @g grid_axes = {axes} split_axis = 0 concat_axis = 0 : "
                           "tensor<4xi32> -> tensor<4xi32>", 4),
            "broadcast": (f"shard.broadcast %a on @g grid_axes = {axes} root = {root} : (tensor<4xi32>) -> "
                          "tensor<4xi32>", 4),
            "reduce": (f"shard.reduce %a on @g grid_axes = {axes} root = {root} : (tensor<4xi32>) -> "
                       "tensor<4xi32>", 4)}[op]
    return (f"shard.grid @g(shape = 2x2)\nfunc.func @f(%a: tensor<4xi32>) -> tensor<{body[1]}xi32> {{\n"
            f"  %0 = {body[0]}\n  return %0 : tensor<{body[1]}xi32>\n}}\n")


def partial_alias(rng: random.Random) -> str:
    """A collective whose outputs are views of the buffers its inputs view:
    the same elements (in place through a view), disjoint parts, or a
    partial overlap, through subview, reinterpret_cast, cast or view."""
    op = rng.choice(OPS)
    n, size, t = 2, rng.choice((4, 8)), "f32"
    shift_in, shift_out = 0, rng.choice((0, 1, size // 2, size, size + 1, 2 * size))
    how = rng.choice(("subview", "reinterpret", "view"))
    total = 3 * size + 2
    lines = [f"func.func @f(%a0: memref<{total}x{t}>, %a1: memref<{total}x{t}>) "
             "attributes {llvm.emit_c_interface} {"]

    def view(name: str, src: str, off: int, length: int) -> tuple[str, str]:
        ty = f"memref<{length}x{t}, strided<[1], offset: {off}>>"
        if how == "reinterpret":
            lines.append(f"  {name} = memref.reinterpret_cast {src} to offset: [{off}], sizes: [{length}], "
                         f"strides: [1] : memref<{total}x{t}> to {ty}")
        else:
            lines.append(f"  {name} = memref.subview {src}[{off}] [{length}] [1] : memref<{total}x{t}> to {ty}")
        if rng.random() < 0.3:  # and a cast that forgets the offset, then restores it
            dyn = f"memref<{length}x{t}, strided<[1], offset: ?>>"
            lines.append(f"  {name}d = memref.cast {name} : {ty} to {dyn}")
            lines.append(f"  {name}s = memref.cast {name}d : {dyn} to {ty}")
            return f"{name}s", ty
        return name, ty
    xs = [view(f"%x{i}", f"%a{i}", shift_in, size) for i in range(n)]
    out = _out_len(op, n, size)
    k_in, k_out = CLASSES[op].buffers(n)
    ys = [view(f"%y{i}", f"%a{i}", shift_out, out) for i in range(k_out)]
    xs = xs[:k_in]
    ins = [v for v, _ in xs]
    outs = [v for v, _ in ys]
    attrs = _attrs(op, rng).replace("root = 5", "root = 1").replace("root = 2", "root = 0")
    lines.append(f'  %t = "coll.{op}"({", ".join(ins + outs)}) {{devices = array<i64: 0, 1>, {attrs}, '
                 f"operandSegmentSizes = array<i32: {len(ins)}, {len(outs)}, 0>}} : "
                 f"({', '.join([ty for _, ty in xs] + [ty for _, ty in ys])}) -> !coll.token")
    lines.append('  "coll.wait"(%t) : (!coll.token) -> ()\n  return\n}')
    return "\n".join(lines) + "\n"


def in_loop(rng: random.Random) -> str:
    """Collectives in an scf.for: in an SPMD function or the global view."""
    op = rng.choice([op for op in OPS if CLASSES[op].IN_PLACE])
    t = rng.choice(TYPES)
    attrs = _attrs(op, rng).replace("root = 5", "root = 1").replace("root = 2", "root = 0")
    trips = rng.choice((0, 1, 3))
    head = ("  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
            f"  %n = arith.constant {trips} : index\n  scf.for %i = %c0 to %n step %c1 {{\n")
    tail = '    "coll.wait"(%t) : (!coll.token) -> ()\n  }\n  return\n}\n'
    if rng.random() < 0.5:
        return (f"func.func @f(%x: memref<8x{t}>) attributes {{coll.ranks = 2 : i64}} {{\n" + head +
                f'    %t = "coll.{op}"(%x, %x) {{devices = array<i64: 0, 1>, {attrs}, '
                f"operandSegmentSizes = array<i32: 1, 1, 0>}} : (memref<8x{t}>, memref<8x{t}>) -> !coll.token\n" + tail)
    k_in, k_out = CLASSES[op].buffers(2)
    ins = ["%x0", "%x1"][:k_in]
    outs = ["%x0", "%x1"] if k_in == k_out else ["%x1", "%x0"][:k_out]  # in place, or across devices
    return (f"func.func @f(%x0: memref<8x{t}>, %x1: memref<8x{t}>) attributes {{llvm.emit_c_interface}} {{\n" + head +
            f'    %t = "coll.{op}"({", ".join(ins + outs)}) {{devices = array<i64: 0, 1>, {attrs}, '
            f"operandSegmentSizes = array<i32: {k_in}, {k_out}, 0>}} : "
            f"({', '.join([f'memref<8x{t}>'] * (k_in + k_out))})"
            " -> !coll.token\n" + tail)


def local_work(rng: random.Random) -> str:
    """Local work (linalg, loads and stores, a call) around a collective, in
    an SPMD function or the global view, before or after it."""
    t = rng.choice(("f32", "i32"))
    one = "1.0" if t == "f32" else "1"
    work = rng.choice((
        f"  %c = arith.constant {one} : {t}\n  linalg.fill ins(%c : {t}) outs(BUF : memref<8x{t}>)\n",
        f"  linalg.copy ins(SRC : memref<8x{t}>) outs(BUF : memref<8x{t}>)\n",
        f"  %i0 = arith.constant 0 : index\n  %v = memref.load SRC[%i0] : memref<8x{t}>\n"
        f"  memref.store %v, BUF[%i0] : memref<8x{t}>\n",
        f"  func.call @ext(BUF) : (memref<8x{t}>) -> ()\n",
    ))
    spmd = rng.random() < 0.5
    if spmd:
        sig, ops, types = f"%x: memref<8x{t}>, %y: memref<8x{t}>", "%x, %y", f"memref<8x{t}>, memref<8x{t}>"
        seg, dev, bufs = "1, 1, 0", "0, 1", ["%x", "%y"]
        attrs = " attributes {coll.ranks = 2 : i64}"
    else:
        sig = ", ".join(f"%{v}: memref<8x{t}>" for v in ("x0", "x1", "y0", "y1"))
        ops, types = "%x0, %x1, %y0, %y1", ", ".join([f"memref<8x{t}>"] * 4)
        seg, dev, bufs = "2, 2, 0", "0, 1", ["%x0", "%x1", "%y0", "%y1"]
        attrs = " attributes {llvm.emit_c_interface}"
    work = work.replace("BUF", rng.choice(bufs)).replace("SRC", rng.choice(bufs))
    coll = (f'  %t = "coll.all_reduce"({ops}) {{devices = array<i64: {dev}>, kind = "sum", '
            f"operandSegmentSizes = array<i32: {seg}>}} : ({types}) -> !coll.token\n"
            '  "coll.wait"(%t) : (!coll.token) -> ()\n')
    body = work + coll if rng.random() < 0.5 else coll + work
    ext = f"func.func private @ext(memref<8x{t}>)\n" if "@ext" in body else ""
    return f"{ext}func.func @f({sig}){attrs} {{\n{body}  return\n}}\n"


GENERATORS = (subgroups, partitioned_shard, partial_alias, in_loop, local_work)

_OP_LINE = re.compile(r'^( *)(%[\w.]+ = )?"coll\.(copy|combine|wait)"', re.M)


def host_between(text: str, rng: random.Random) -> str:
    """A host memory op (store, fill, copy, dealloc) inserted between the
    coll ops of an explicit program, on a buffer defined before it,
    sometimes after a coll.wait of the token before it (so that it is
    ordered and only what it writes is wrong)."""
    spots = [m for m in _OP_LINE.finditer(text)]
    if not spots:
        return text
    at = rng.choice(spots)
    before = text[:at.start()]
    bufs = re.findall(r"(%[\w.]+) = [^\n]*?(?:->|to|:) (memref<[^>]*>)\n", before)
    bufs += re.findall(r"(%[\w.]+): (memref<[^>]*>)", before)
    bufs = [(v, t) for v, t in bufs if "strided" not in t]
    if not bufs:
        return text
    v, t = rng.choice(bufs)
    found = re.search(r"x(f16|bf16|f32|f64|i1|i8|i16|i32|i64)[,>]", t)
    el = found.group(1) if found else "f32"
    rank = t.count("x") - (0 if t.startswith("memref<") and re.match(r"memref<[a-z]", t) else 0)
    rank = len(re.findall(r"\d+x", t))
    cst = f"{'1.0' if el.startswith(('f', 'b')) else '1'}"
    pad = at.group(1)
    r = rng.random()
    if r < 0.45 and rank:
        idx = ", ".join(["%fzb_i"] * rank)
        op = (f"{pad}%fzb_c = arith.constant {cst} : {el}\n{pad}%fzb_i = arith.constant 0 : index\n"
              f"{pad}memref.store %fzb_c, {v}[{idx}] : {t}\n")
    elif r < 0.75:
        op = f"{pad}%fzb_c = arith.constant {cst} : {el}\n{pad}linalg.fill ins(%fzb_c : {el}) outs({v} : {t})\n"
    else:
        same = [(w, u) for w, u in bufs if u == t]
        w, _ = rng.choice(same)
        op = f"{pad}memref.copy {w}, {v} : {t} to {t}\n"
    toks = re.findall(r"(%[\w.]+) = \"coll\.(?:copy|combine|join)\"", before)
    if toks and rng.random() < 0.6:
        op = f'{pad}"coll.wait"({toks[-1]}) : (!coll.token) -> ()\n' + op
    return before + op + text[at.start():]


def generate(rng: random.Random) -> str:
    return rng.choice(GENERATORS)(rng)
