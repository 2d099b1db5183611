"""coll-check-semantics on lowered programs: every strategy, N and output
kind passes (also after coll-shuffle; a float sum in the canonical order it
claims), and a mutation test: every
single-operand substitution in a copy or combine (one buffer operand
replaced by another buffer or view of the same type defined before it) is
reported exactly when it changes what the program computes, as judged by an
independent element-level simulation (numpy arrays with random integers,
and a written-mask per buffer, in program order)."""
import itertools

import numpy as np
import pytest
from mlir import ir

from coll.collectives import BY_NAME
from coll.ir.generate import all_reduce_module, axis_attributes
from coll.ir.ops import Combine, Copy, Implements
from coll.ir.views import root_of
from coll.passes.check_semantics import check_module
from coll.passes.lower_collectives import lower_collectives
from coll.passes.shuffle import shuffle

# Every all_reduce strategy a module without peer access can take (the
# registry's: a new one is proved here with no edit).
STRATEGIES = tuple(s for s in BY_NAME["coll.all_reduce"].STRATEGIES if not BY_NAME["coll.all_reduce"].needs(s))


def lowered(n, strategy, to_device, numel, shape=None, kind="sum", dtype="i32"):
    m = ir.Module.parse(all_reduce_module(n, shape or [numel], dtype, kind, to_device=to_device,
                                          strategy=strategy))
    lower_collectives(m.operation)
    return m


def body_ops(m):
    (f,) = [op for op in m.body.operations if op.operation.name == "func.func"]
    return [op.operation for op in f.regions[0].blocks[0].operations]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("n", range(1, 17))
@pytest.mark.parametrize("to_device", [None, 0, "host"])
def test_every_lowering_is_proved(ctx, strategy, n, to_device):
    to = n if to_device == "host" else to_device
    for numel in (3, 64 * n + 5):  # with and without empty chunks
        m = lowered(n, strategy, to, numel)
        assert [op.name for op in body_ops(m)].count(Implements.NAME) == 1
        assert check_module(m.operation) == []


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_every_lowering_is_proved_in_order(ctx, strategy, dtype):
    """A float sum lowered under the canonical order claims it and is
    proved in order: N up to 16, on every device or one outside the group,
    with and without empty chunks, and shuffled."""
    for n in range(1, 17):
        for to in (None, n):
            for numel in (3, 8 * n + 5):
                m = lowered(n, strategy, to, numel, dtype=dtype)
                (claim,) = [Implements.of(op) for op in body_ops(m) if op.name == Implements.NAME]
                assert claim.order == "canonical"
                assert check_module(m.operation) == []
        shuffle(m.operation, n)
        assert check_module(m.operation) == []


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind,dtype", [("max", "f32"), ("xor", "i1"), ("prod", "f16")])
def test_kinds_and_shapes(ctx, strategy, kind, dtype):
    for shape in ([5, 7], [2, 3, 4], []):
        assert check_module(lowered(4, strategy, None, 0, shape, kind, dtype).operation) == []


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("n,to_device", [(3, None), (4, 1), (5, 5)])
def test_shuffled_programs_are_proved(ctx, strategy, seed, n, to_device):
    m = lowered(n, strategy, to_device, 37)
    before = [op.name for op in body_ops(m)]
    shuffle(m.operation, seed)
    m.operation.verify()
    assert [op.name for op in body_ops(m)] != before or n < 3
    assert check_module(m.operation) == []


def test_a_wrong_kind_in_a_lowering_is_reported(ctx):
    m = lowered(3, "ring", None, 30)
    (first,) = [op for op in body_ops(m) if op.name == Combine.NAME][:1]
    first.attributes["kind"] = ir.StringAttr.get("max")
    findings = check_module(m.operation)
    # Chunk 0 (12 of 30: chunks of whole 16-byte vectors, 12, 8, 8 + 2) is max(x0, x1), then summed with x2.
    assert findings and "holds sum(max(x0[0:12], x1[0:12]), x2[0:12])" in findings[0][1]
    assert "it mixes reduction kinds" in findings[0][1]


# -- the mutation test ----------------------------------------------------------------

def positions(value):
    """Flat positions of `value`'s elements in its root, row-major, one by one."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.name == "memref.cast":  # forgot a static layout (a rhs group's type)
        return positions(owner.operands[0])
    mt = ir.MemRefType(value.type)
    strides, offset = mt.get_strides_and_offset()
    shape = list(mt.shape)
    idx = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int64)
    return offset + sum((idx[k] * strides[k] for k in range(len(shape))), np.zeros(idx.shape[1], np.int64))


def reference(op, xs, n, attrs, n_out):
    """What the registry's numpy reference (coll.collectives, the one coll-run
    checks with) says outputs y_0.. of `op` hold, from the inputs xs."""
    cls = BY_NAME["coll." + op]
    attrs = {**cls.default_arrays(n), **attrs, **axis_attributes(cls, **attrs)}  # coll-gen's `axis`: its name
    return [None if e is None else e[0] for e in cls.reference(xs, xs, sum, attrs, n, n_out)]


def simulate(m, seed=0, op="all_reduce", n=None, attrs=None):
    """True when the program computes its claim's `op` on `n` devices (default:
    one per claimed output; `attrs`: its axes, to_device) and reads only what
    was written: element by element, in program order, random integers and a
    written-mask per buffer."""
    ops = body_ops(m)
    (claim,) = [Implements.of(o) for o in ops if o.name == Implements.NAME]
    attrs = attrs or {}
    n = len(claim.outputs) if n is None else n
    rng = np.random.default_rng(seed)
    mem, written = {}, {}

    def buf(value):
        root, _ = root_of(value)
        if root not in mem:
            size = int(np.prod(ir.MemRefType(root.type).shape, dtype=np.int64))
            mem[root] = np.zeros(size, np.int64)
            written[root] = np.zeros(size, bool)
        return root, positions(value)

    xs = []
    for v in claim.inputs:
        root, pos = buf(v)
        mem[root][pos] = rng.integers(-10 ** 6, 10 ** 6, pos.size)
        written[root][pos] = True
        xs.append(mem[root][pos].copy().reshape(ir.MemRefType(v.type).shape))
    ok = True
    for o in ops:
        if o.name == Copy.NAME:
            c = Copy.of(o)
            (sr, sp), (dr, dp) = buf(c.source), buf(c.target)
            vals, w = mem[sr][sp].copy(), written[sr][sp].copy()
            ok &= bool(w.all())
            mem[dr][dp], written[dr][dp] = vals, w
        elif o.name == Combine.NAME:
            c = Combine.of(o)
            ins = [buf(v) for v in c.inputs]
            dr, dp = buf(c.out)
            acc = sum(mem[r][p] for r, p in ins)
            w = np.logical_and.reduce([written[r][p] for r, p in ins])
            ok &= bool(w.all())
            mem[dr][dp], written[dr][dp] = acc, w
    want = reference(op, xs, n, attrs, len(claim.outputs))
    for v, y in zip(claim.outputs, want):
        root, pos = buf(v)
        if y is None or not y.any():
            # Undefined, or zeros (permute's output that receives nothing: what an
            # untouched output holds; the random inputs make no other zero output):
            # nothing may write it.
            ok &= not bool(written[root][pos].any())
            continue
        ok &= bool(written[root][pos].all()) and bool((mem[root][pos] == np.asarray(y).ravel()).all())
    return ok


def buffer_values(ops, func):
    """Memref values in definition order: arguments, then op results."""
    out = [a for a in func.regions[0].blocks[0].arguments]
    return out, {op: [r for r in op.results if isinstance(r.type, ir.MemRefType)] for op in ops}


def mutants(text):
    """(op index, operand index, replacement index) of every substitution."""
    m = ir.Module.parse(text)
    ops = body_ops(m)
    (f,) = [op for op in m.body.operations if op.operation.name == "func.func"]
    args, results = buffer_values(ops, f.operation)
    visible = list(args)
    out = []
    for i, op in enumerate(ops):
        if op.name in (Copy.NAME, Combine.NAME):
            for k, v in enumerate(op.operands):
                if not isinstance(v.type, ir.MemRefType):
                    continue
                for r, cand in enumerate(visible):
                    if cand != v and cand.type == v.type:
                        out.append((i, k, r))
        visible += results[op]
    return out


def apply(text, i, k, r):
    m = ir.Module.parse(text)
    ops = body_ops(m)
    (f,) = [op for op in m.body.operations if op.operation.name == "func.func"]
    args, results = buffer_values(ops, f.operation)
    visible = list(args) + [v for op in ops[:i] for v in results[op]]
    ops[i].operands[k] = visible[r]
    return m


def pad(text):
    """The same program plus a copy of output 0 into a scratch buffer that
    nothing reads, and a second scratch of that type: substitutions there
    (another source that holds written data, the other scratch as target)
    are harmless, so both answers of the judge are exercised."""
    from coll.ir import builders
    m = ir.Module.parse(text)
    ops = body_ops(m)
    (join,) = [op for op in ops if op.name == "coll.join"]
    (claim,) = [Implements.of(op) for op in ops if op.name == Implements.NAME]
    (y0,) = [u.owner.results[0] for u in claim.outputs[0].uses
             if u.owner.name == "memref.memory_space_cast"]
    with ir.InsertionPoint(join), join.location:
        s1, _ = builders.alloc(y0.type), builders.alloc(y0.type)
        t = builders.copy(y0, s1, list(join.operands))
        new = builders.join(list(join.operands) + [t])
    join.results[0].replace_all_uses_with(new)
    join.erase()
    return str(m)


def judge_substitutions(text, subs, where="", **program):
    """(reported, harmless) over substitutions `subs` of `text`: each must be
    reported by coll-check-semantics exactly when the element-level
    simulation (two seeds; `program`: simulate's op, n, attrs) says the
    program no longer computes its collective."""
    reported = harmless = 0
    for i, k, r in subs:
        m = apply(text, i, k, r)
        m.operation.verify()
        findings = check_module(m.operation)
        correct = simulate(m, 1, **program) and simulate(m, 2, **program)
        at = f"{where}operand {k} of op #{i} replaced by buffer #{r}"
        if findings:
            assert not correct, f"false report ({at}): {findings[0][1]}"
            reported += 1
        else:
            assert correct, f"wrong program not reported ({at})"
            harmless += 1
    return reported, harmless


CASES = list(itertools.product(STRATEGIES, (3, 4), ("multi", "to_member", "to_host", "padded")))


@pytest.mark.parametrize("strategy,n,out", CASES)
def test_every_substitution_is_reported_or_harmless(ctx, strategy, n, out):
    to_device = {"to_member": 1, "to_host": n}.get(out)
    # 24 elements: chunks of 8 (0 on a fourth device), so equal-sized slices to substitute
    text = str(lowered(n, strategy, to_device, 24))
    if out == "padded":
        text = pad(text)
    assert simulate(ir.Module.parse(text)) and check_module(ir.Module.parse(text).operation) == []
    subs = mutants(text)
    assert subs
    reported, harmless = judge_substitutions(text, subs)
    print(f"{strategy} N={n} {out}: {len(subs)} substitutions, {reported} reported, {harmless} harmless")


# -- strided views: columns of a 2x2 buffer are runs of one element -------------

COLUMNS = """
!a = memref<2x2xi32>
!d0 = memref<2x2xi32, #coll.device<0>>
!d1 = memref<2x2xi32, #coll.device<1>>
!c1 = memref<2x1xi32, strided<[2, 1]>, #coll.device<1>>
!k1 = memref<2x1xi32, strided<[2, 1], offset: 1>, #coll.device<1>>
!c0 = memref<2x1xi32, strided<[2, 1]>, #coll.device<0>>
!k0 = memref<2x1xi32, strided<[2, 1], offset: 1>, #coll.device<0>>
func.func @f(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r = "coll.alloc"() : () -> !d0
  %x1c = memref.subview %x1[0, 0] [2, 1] [1, 1] : !d1 to !c1
  %x1k = memref.subview %x1[0, 1] [2, 1] [1, 1] : !d1 to !k1
  %rc = memref.subview %r[0, 0] [2, 1] [1, 1] : !d0 to !c0
  %rk = memref.subview %r[0, 1] [2, 1] [1, 1] : !d0 to !k0
  %t0 = "coll.copy"(%x1c, %FIRST) : (!c1, !c0) -> !coll.token
  %t1 = "coll.copy"(%x1k, %SECOND) : (!k1, !k0) -> !coll.token
  %s = "coll.combine"(%x0, %r, %y, %t0, %t1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!d0, !d0, !d0, !coll.token, !coll.token) -> !coll.token
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !coll.token) -> ()
  "coll.wait"(%s) : (!coll.token) -> ()
  return
}
"""


def test_columns_copied_through_strided_views(ctx):
    good = ir.Module.parse(COLUMNS.replace("%FIRST", "%rc").replace("%SECOND", "%rk"))
    assert simulate(good) and check_module(good.operation) == []


def test_a_column_copied_into_the_wrong_column(ctx):
    # x1's second column lands in r's first column (over the first one);
    # r's second column is never written.
    text = COLUMNS.replace("%FIRST", "%rc").replace("(%x1k, %SECOND) : (!k1, !k0)", "(%x1k, %rc) : (!k1, !c0)")
    m = ir.Module.parse(text)
    assert not simulate(m)
    msgs = [f[1] for f in check_module(m.operation)]
    assert msgs[0].startswith("coll.combine reads %0[1, 2) on device 0, which nothing has written"), msgs
    assert ("output #0 (%arg2 on device 0) [0, 1) holds sum(x0[0:1], x1[1:2]) but should hold "
            "sum(x0[0:1], x1[0:1]): x1 comes from x1[1:2] instead of x1[0:1] (the wrong slice)") in msgs, msgs


# -- every collective of SPECS: direct programs, judged by numpy --------------------
# A direct program writes each output piece with copies (and one combine) from
# the pieces listed here, written apart from SPECS; numpy gives the reference.

N, M = 3, 6  # devices, elements per input


def _pieces(op):
    """{output j: [(start, end, [(input i, source start)])]} and output size:
    written out by hand on purpose, an oracle independent of the specs
    (passes/check_semantics.py SPECS) that it tests; the registry's
    collectives are each proved by test_check_semantics_collectives.py."""
    m = M // N
    if op == "all_gather":
        return {j: [(i * M, (i + 1) * M, [(i, 0)]) for i in range(N)] for j in range(N)}, N * M
    if op == "reduce_scatter":
        return {j: [(0, m, [(i, j * m) for i in range(N)])] for j in range(N)}, m
    if op == "all_to_all":
        return {j: [(i * m, (i + 1) * m, [(i, j * m)]) for i in range(N)] for j in range(N)}, M
    if op == "broadcast":
        return {j: [(0, M, [(0, 0)])] for j in range(N)}, M
    if op == "reduce":
        return {0: [(0, M, [(i, 0) for i in range(N)])]}, M
    return {j: [(0, M, [(i, 0) for i in range(N)])] for j in range(N)}, M  # all_reduce


def _reference(op, xs):
    m = M // N
    if op == "all_gather":
        return [np.concatenate(xs)] * N
    if op == "reduce_scatter":
        return [sum(xs)[j * m:(j + 1) * m] for j in range(N)]
    if op == "all_to_all":
        return [np.concatenate([x[j * m:(j + 1) * m] for x in xs]) for j in range(N)]
    if op == "broadcast":
        return [xs[0]] * N
    if op == "reduce":
        return [sum(xs)]
    return [sum(xs)] * N


def wrong(plist):
    """Output 0 made wrong: its first two pieces swap their sources, or its
    one piece loses a source, or (one source) it is not written at all."""
    if len(plist) > 1:
        return [(s, e, plist[1 - k][2] if k < 2 else src) for k, (s, e, src) in enumerate(plist)]
    (s, e, src), = plist
    return [(s, e, src[:-1])] if len(src) > 2 else []


def direct_program(op, swap=False):
    """The text of a direct program for `op`; `swap`: output 0 wrong."""
    from mlir.dialects import func, memref

    from coll.ir import builders
    from coll.ir.types import flat_type
    pieces, out_size = _pieces(op)
    n_in = 1 if op == "broadcast" else N
    i32 = ir.IntegerType.get_signless(32)
    with ir.Location.unknown():
        module = ir.Module.create()
        tin, tout = ir.MemRefType.get([M], i32), ir.MemRefType.get([out_size], i32)
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("f", ir.FunctionType.get([tin] * n_in + [tout] * len(pieces), []))
            block = f.add_entry_block()
        with ir.InsertionPoint(block):
            args = list(block.arguments)
            xs = [memref.memory_space_cast(flat_type(i32, M, i), a) for i, a in enumerate(args[:n_in])]
            ys = [memref.memory_space_cast(flat_type(i32, out_size, j), a) for j, a in enumerate(args[n_in:])]

            def sl(buf, dev, start, size, total):
                if (start, size) == (0, total):
                    return buf
                return memref.subview(buf, [start], [size], [1], result_type=flat_type(i32, size, dev, offset=start))
            tokens = []
            for j, plist in pieces.items():
                if swap and j == 0:
                    plist = wrong(plist)
                for start, end, sources in plist:
                    size = end - start
                    dst = sl(ys[j], j, start, size, out_size)
                    if len(sources) == 1:
                        (i, s), = sources
                        tokens.append(builders.copy(sl(xs[i], i, s, size, M), dst))
                        continue
                    recv, deps = [], []
                    for i, s in sources:
                        r = builders.alloc(flat_type(i32, size, j))
                        deps.append(builders.copy(sl(xs[i], i, s, size, M), r))
                        recv.append(r)
                    tokens.append(builders.combine(recv[0], recv[1:], dst, "sum", deps))
            done = builders.join(tokens)
            builders.implements(args[:n_in], args[n_in:], done, op, kind="sum",
                                devices=list(range(n_in)), root=0 if op == "reduce" else None)
            builders.wait([done])
            func.ReturnOp([])
    return str(module)


def judge(text, op):
    """Runs the program element by element (numpy) against the reference."""
    m = ir.Module.parse(text)
    ops = body_ops(m)
    (claim,) = [Implements.of(o) for o in ops if o.name == Implements.NAME]
    rng = np.random.default_rng(5)
    mem = {}
    xs = []
    for v in claim.inputs:
        mem[v] = rng.integers(-1000, 1000, M)
        xs.append(mem[v].copy())
    for v in claim.outputs:
        mem[v] = np.full(ir.MemRefType(v.type).shape[0], 10 ** 9)  # never an input value

    def loc(value):
        root, _ = root_of(value)
        if root not in mem:
            mem[root] = np.full(int(np.prod(ir.MemRefType(root.type).shape)), 10 ** 9)
        return root, positions(value)
    for o in ops:
        if o.name == Copy.NAME:
            c = Copy.of(o)
            (sr, sp), (dr, dp) = loc(c.source), loc(c.target)
            mem[dr][dp] = mem[sr][sp]
        elif o.name == Combine.NAME:
            c = Combine.of(o)
            (dr, dp) = loc(c.out)
            mem[dr][dp] = sum(mem[r][p] for r, p in map(loc, c.inputs))
    return all(np.array_equal(mem[v], want) for v, want in zip(claim.outputs, _reference(op, xs)))


@pytest.mark.parametrize("op", ["all_reduce", "reduce", "reduce_scatter", "all_gather", "all_to_all",
                                "broadcast"])
def test_every_specified_collective(ctx, op):
    from coll.passes.check_semantics import SPECS
    assert op in SPECS
    text = direct_program(op)
    assert judge(text, op)
    assert check_module(ir.Module.parse(text).operation) == []
    bad = direct_program(op, swap=True)
    assert not judge(bad, op)
    findings = check_module(ir.Module.parse(bad).operation)
    assert findings and findings[0][1].startswith("output #0"), findings


def test_two_collectives_in_one_function(ctx):
    # z = allreduce(allreduce(x)): each claim covers its own program; the
    # second one's inputs are the first one's outputs.
    from mlir.dialects import func

    from coll.ir import builders
    with ir.Location.unknown():
        t = ir.MemRefType.get([10], ir.IntegerType.get_signless(32))
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("f", ir.FunctionType.get([t] * 6, []))
            block = f.add_entry_block()
        with ir.InsertionPoint(block):
            x, y, z = [list(block.arguments)[k:k + 2] for k in (0, 2, 4)]
            a = builders.all_reduce(x, y, "sum", [0, 1], strategy="ring")
            builders.wait([a])
            b = builders.all_reduce(y, z, "sum", [0, 1], strategy="all2all")
            builders.wait([b])
            func.ReturnOp([])
    lower_collectives(m.operation)
    assert [op.name for op in body_ops(m)].count(Implements.NAME) == 2
    assert check_module(m.operation) == []
    # The second program reading x0 instead of y0 reads what is, for its
    # claim, no input: reported at the first op that reads it.
    ops = body_ops(m)
    first = [k for k, op in enumerate(ops) if op.name == Implements.NAME][0]
    (cast,) = [op for op in ops[first:] if op.name == "memref.memory_space_cast"
               and op.operands[0] == y[0]]
    cast.operands[0] = x[0]
    findings = check_module(m.operation)
    assert findings and findings[0][1].startswith("coll.combine reads %arg0[0, 4) on device 0, which nothing "
                                                     "has written"), findings
