"""The fuzzer's inputs: valid modules to start from (corpus: generated
collectives, their explicit programs, the lit tests' chunks) and the
mutations of them: text-level (numbers, types, devices, kinds, attributes,
operands, SSA names, shapes, lines, characters), IR-level (still parse and
verify, so they reach the passes), structure-aware (view chains and
strided slices on coll operands, upstream memory ops, deep nesting) and
byte-level corruption; with the pass pipeline each input runs through.
Input i depends only on (seed, i) (make_input)."""
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mlir import ir

from coll.core.registry import names
from coll.ir import make_context
from coll.ir.errors import MLIRError
from coll.ir.generate import all_reduce_module
from coll.passes.lower_collectives import lower_collectives

from ..collectives import BY_NAME
from ..ir.ops import COLLECTIVE_NAMES
from ..tools.parse_guard import known_crashes
from . import classes

ROOT = Path(__file__).resolve().parent.parent
# The all_reduce strategies a module without peer access can take (the
# registry's, so a new one is fuzzed with no edit), and `auto`.
STRATEGIES = ("auto",) + tuple(s for s in BY_NAME["coll.all_reduce"].STRATEGIES
                               if not BY_NAME["coll.all_reduce"].needs(s))


# -- seeds ----------------------------------------------------------------------

def _valid_kinds(dtype: str) -> tuple[str, ...]:
    if dtype == "i1":
        return ("and", "or", "xor")
    if dtype.startswith("i"):
        return ("sum", "prod", "max", "min", "and", "or", "xor")
    return ("sum", "prod", "max", "min")


def corpus(seed: int = 0) -> list[str]:
    """Valid modules to mutate: collective level (generated), their
    explicit programs (lowered), and the chunks of the lit tests."""
    rng = random.Random(seed)
    shapes: tuple[list[int], ...] = ([7], [2, 3], [], [0], [64], [3, 1, 2], [5])
    dtypes = ("f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64")
    out = []
    with make_context():
        for i in range(24):
            n = rng.choice((1, 2, 3, 4))
            shape = rng.choice(shapes)
            dtype = rng.choice(dtypes)
            kind = rng.choice(_valid_kinds(dtype))
            to = rng.choice((None, None, 0, n))
            strategy = rng.choice((None,) + tuple(STRATEGIES))
            text = all_reduce_module(n, shape, dtype, kind, to_device=to, strategy=strategy,
                                     threshold=rng.choice((None, 0, 10)))
            out.append(text)
            if i % 2 == 0:
                m = ir.Module.parse(text)
                lower_collectives(m.operation, rng.choice(STRATEGIES[1:]))
                out.append(str(m))
    for path in sorted((ROOT / "tests" / "lit").glob("*/*.mlir")):
        for chunk in path.read_text().split("// -----"):
            if '"coll.' in chunk:
                out.append(chunk)
    return out


# -- mutations -----------------------------------------------------------------
INTERESTING = ("0", "1", "-1", "2", "3", "4", "7", "1023", "1024", "1025", "65536",
               "2147483647", "2147483648", "-2147483649", "9223372036854775807",
               "18446744073709551616", "100000000")


TYPES = ("f32", "f16", "bf16", "f64", "i1", "i8", "i16", "i32", "i64", "index", "i7",
         "f8E4M3FN", "complex<f32>", "vector<2xf32>", "!coll.token", "none")


KINDS = ("sum", "prod", "max", "min", "and", "or", "xor", "mean", "", "SUM")
SYNTAX = "(){}<>[],:%\"=x0123456789 -#!@."
GENERIC_OP = re.compile(r'"coll\.\w+"\(([^)]*)\)')
SSA = re.compile(r"%[\w.$-]+")


def _pick(rng: random.Random, matches: Sequence[re.Match[str]]) -> re.Match[str] | None:
    return rng.choice(matches) if matches else None


def _sub_at(text: str, m: re.Match[str], new: str, group: int = 0) -> str:
    return text[:m.start(group)] + new + text[m.end(group):]


def m_number(text: str, rng: random.Random) -> str:
    m = _pick(rng, list(re.finditer(r"(?<![\w%#.])-?\d+(?![\w.])", text)))
    if m is None:
        return text
    v = rng.choice(INTERESTING) if rng.random() < 0.6 else str(int(m.group()) + rng.choice((-1, 1)))
    return _sub_at(text, m, v)


def m_elemtype(text: str, rng: random.Random) -> str:
    m = _pick(rng, list(re.finditer(r"\b(f16|bf16|f32|f64|i1|i8|i16|i32|i64)\b", text)))
    return text if m is None else _sub_at(text, m, rng.choice(TYPES))


def m_device(text: str, rng: random.Random) -> str:
    ms = list(re.finditer(r"(, )?#coll\.device<(-?\d+)( : i64)?>", text))
    m = _pick(rng, ms)
    if m is None:
        return text
    r = rng.random()
    if r < 0.3 and m.group(1):
        return _sub_at(text, m, "")  # drop the placement
    if r < 0.4:
        return _sub_at(text, m, (m.group(1) or "") + "#coll.device<\"x\">")
    return _sub_at(text, m, rng.choice(INTERESTING), 2)


def m_kind(text: str, rng: random.Random) -> str:
    m = _pick(rng, list(re.finditer(r'kind = "(\w*)"', text)))
    return text if m is None else _sub_at(text, m, rng.choice(KINDS), 1)


def m_attr(text: str, rng: random.Random) -> str:
    """Drop, add or retype an attribute of a generic op."""
    ms = list(re.finditer(r"(\w+) = (array<[^>]*>|\"[^\"]*\"|-?\d+ : i\d+)(, )?", text))
    r = rng.random()
    if r < 0.4 and ms:
        m = rng.choice(ms)
        return _sub_at(text, m, "")
    opens = list(re.finditer(r"\) \{", text))
    if opens:
        m = rng.choice(opens)
        extra = rng.choice(('strategy = "ring", ', 'strategy = "tree", ', "to_device = 0 : i64, ",
                            "to_device = 9 : i64, ", "threshold = -1 : i64, ", 'threshold = "x", ',
                            'devices = "0", ', "kind = 3 : i64, ", "operandSegmentSizes = array<i32: 1>, "))
        return text[:m.end()] + extra + text[m.end():]
    return text


def m_array(text: str, rng: random.Random) -> str:
    """Change an array<...> (devices, operandSegmentSizes): drop, repeat or
    change an entry."""
    m = _pick(rng, list(re.finditer(r"array<(i\d+)(: ([^>]*))?>", text)))
    if m is None:
        return text
    items = [s.strip() for s in (m.group(3) or "").split(",") if s.strip()]
    r = rng.random()
    if items and r < 0.3:
        items.pop(rng.randrange(len(items)))
    elif items and r < 0.6:
        items.insert(rng.randrange(len(items) + 1), rng.choice(items))
    elif items:
        items[rng.randrange(len(items))] = rng.choice(INTERESTING[:12])
    else:
        items = ["0"]
    body = f"{m.group(1)}: {', '.join(items)}" if items else m.group(1)
    return _sub_at(text, m, f"array<{body}>")


def m_operand(text: str, rng: random.Random) -> str:
    """Drop, repeat or swap an operand of a generic coll op, with or without
    its type (the parser must catch the mismatch)."""
    m = _pick(rng, list(GENERIC_OP.finditer(text)))
    if m is None:
        return text
    ops = [s.strip() for s in m.group(1).split(",") if s.strip()]
    line_end = text.find("\n", m.end())
    line_end = len(text) if line_end < 0 else line_end
    tm = re.search(r": \(([^)]*)\) ->", text[m.end():line_end])
    types = _split_types(tm.group(1)) if tm else None
    r = rng.random()
    k = rng.randrange(len(ops)) if ops else 0
    if ops and r < 0.4:
        ops.pop(k)
        if types and len(types) > k and rng.random() < 0.7:
            types.pop(k)
    elif ops and r < 0.7:
        ops.insert(k, ops[k])
        if types and len(types) > k and rng.random() < 0.7:
            types.insert(k, types[k])
    elif len(ops) > 1:
        j = rng.randrange(len(ops))
        ops[k], ops[j] = ops[j], ops[k]
        if types and len(types) == len(ops) and rng.random() < 0.5:
            types[k], types[j] = types[j], types[k]
    new_line = text[m.start():line_end].replace(m.group(1), ", ".join(ops), 1)
    if tm and types is not None:
        new_line = new_line.replace(tm.group(1), ", ".join(types), 1)
    return text[:m.start()] + new_line + text[line_end:]


def _split_types(s: str) -> list[str]:
    """'memref<3xf32, #x>, !coll.token' -> ['memref<3xf32, #x>', '!coll.token']."""
    out, depth, cur = [], 0, ""
    for ch in s:
        depth += (ch in "<([{") - (ch in ">)]}")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def m_ssa(text: str, rng: random.Random) -> str:
    """Use another SSA value in place of one (tokens for buffers, ...)."""
    ms = list(SSA.finditer(text))
    if len(ms) < 2:
        return text
    m = rng.choice(ms)
    return _sub_at(text, m, rng.choice(ms).group())


def m_shape(text: str, rng: random.Random) -> str:
    m = _pick(rng, list(re.finditer(r"memref<((\d+|\?)x)+", text)))
    if m is None:
        return text
    dims = re.findall(r"(\d+|\?)x", m.group())
    k = rng.randrange(len(dims))
    dims[k] = rng.choice(("0", "1", "?", "3", "8", "1000000", "4294967296"))
    return _sub_at(text, m, "memref<" + "".join(d + "x" for d in dims))


def m_lines(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    if len(lines) < 2:
        return text
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    r = rng.random()
    if r < 0.4:
        del lines[i]
    elif r < 0.7:
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def m_truncate(text: str, rng: random.Random) -> str:
    return text[:rng.randrange(len(text) + 1)]


def m_char(text: str, rng: random.Random) -> str:
    if not text:
        return rng.choice(SYNTAX)
    i = rng.randrange(len(text))
    r = rng.random()
    if r < 0.33:
        return text[:i] + text[i + 1:]
    c = rng.choice(SYNTAX)
    return text[:i] + c + (text[i:] if r < 0.66 else text[i + 1:])


MUTATORS = (m_number, m_elemtype, m_device, m_kind, m_attr, m_array, m_operand,
            m_ssa, m_shape, m_lines, m_truncate, m_char)


# Structured mutations are the interesting ones; raw text ones mostly test
# the parser, so they are drawn less often.
WEIGHTS = (3, 2, 3, 2, 3, 3, 4, 3, 2, 1, 0.5, 1)


# -- IR-level mutations: still parse and verify, so they reach the passes ----

def _body_ops(module: Any) -> list[Any]:
    out = []
    for f in module.body.operations:
        for region in f.operation.regions:
            for block in region.blocks:
                out += [op.operation for op in block.operations]
    return out


def _recreate(op: Any, operands: list[Any], attrs: dict[str, Any] | None = None) -> Any:
    attrs = attrs if attrs is not None else {n: op.attributes[n] for n in op.attributes}
    with ir.InsertionPoint(op):
        new = ir.Operation.create(op.name, results=[r.type for r in op.results],
                                  operands=operands, attributes=attrs, loc=op.location)
    for old, r in zip(op.results, new.results):
        old.replace_all_uses_with(r)
    op.erase()
    return new


def _earlier_values(ops: list[Any], op: Any, type_: Any) -> list[Any]:
    """Values of `type_` defined before `op` in its block (or arguments)."""
    vals = [a for a in op.parent.regions[0].blocks[0].arguments if a.type == type_]
    for o in ops:
        if o == op:
            break
        vals += [r for r in o.results if r.type == type_]
    return vals


def ir_mutation(text: str, rng: random.Random) -> str:
    """One structural edit of a parsed module: drop or rewire a token
    dependency, swap a buffer operand for another of its type, or duplicate
    a coll op. Returns the text unchanged when it does not parse."""
    if known_crashes(text):  # parsing it would abort this process
        return text
    with make_context():
        try:
            m = ir.Module.parse(text)
        except MLIRError:
            return text
        ops = [o for o in _body_ops(m) if o.name in ("coll.copy", "coll.combine", "coll.join", "coll.wait")]
        if not ops:
            return text
        op = rng.choice(ops)
        operands = list(op.operands)
        attrs = {n: op.attributes[n] for n in op.attributes}
        what = rng.choice(("drop", "rewire", "buffer", "clone"))
        tok = [k for k, v in enumerate(operands) if str(v.type) == "!coll.token"]
        if what == "drop" and tok:
            k = rng.choice(tok)
            operands.pop(k)
            if op.name == "coll.combine":
                seg = list(ir.DenseI32ArrayAttr(attrs["operandSegmentSizes"]))
                seg[3] -= 1
                attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(seg)
            _recreate(op, operands, attrs)
        elif what == "rewire" and tok:
            k = rng.choice(tok)
            choices = _earlier_values(_body_ops(m), op, operands[k].type)
            if choices:
                operands[k] = rng.choice(choices)
                _recreate(op, operands, attrs)
        elif what == "buffer" and len(operands) > len(tok):
            k = rng.choice([k for k in range(len(operands)) if k not in tok])
            choices = _earlier_values(_body_ops(m), op, operands[k].type)
            if choices:
                operands[k] = rng.choice(choices)
                _recreate(op, operands, attrs)
        elif what == "clone" and op.name != "coll.wait":
            op.clone(ir.InsertionPoint(op))
        return str(m)


def make_input(seeds: Sequence[str], seed: int, i: int) -> tuple[str, str]:
    """(text, pipeline) of input i: deterministic in (seed, i)."""
    rng = random.Random(f"{seed}:{i}")
    text = rng.choice(seeds)
    if rng.random() < 0.35:
        text = ir_mutation(text, rng)
        if rng.random() < 0.5:
            return text, random_pipeline(rng)
    for _ in range(rng.choice((1, 1, 2, 3))):
        text = rng.choices(MUTATORS, WEIGHTS)[0](text, rng)
    return text, random_pipeline(rng)


# What the classes' inputs need before the explicit lowering (issue 23).
FRONTS = ((), ("coll-from-shard",), ("coll-spmd-to-global",), ("coll-spmd-to-mpi",),
          ("coll-from-shard", "coll-bufferize", "one-shot-bufferize{bufferize-function-boundaries "
           "function-boundary-type-conversion=identity-layout-map}", "coll-spmd-to-global"))


def random_pipeline(rng: random.Random, text: str | None = None) -> str:
    elems = list(rng.choice(FRONTS)) if text is not None else []
    elems += [f"coll-lower-all-reduce{{strategy={rng.choice(STRATEGIES)}}}"]
    if rng.random() < 0.3:
        elems.append(f"coll-shuffle{{seed={rng.randrange(100)}}}")
    elems += ["coll-check-order", "coll-check-semantics", "canonicalize", "cse"]
    if "coll-to-cpu" in _registered():
        elems.append("coll-to-mpi" if text is not None and rng.random() < 0.3 else "coll-to-cpu")
    return "builtin.module(" + ",".join(elems) + ")"


def _registered() -> list[str]:
    return names()


# -- structure-aware categories ---------------------------------------------

def parse_or_none(text: str) -> Any:
    """(context, module) of `text`, or None when it does not parse (or
    would crash the parser)."""
    if known_crashes(text):
        return None
    ctx = make_context()
    with ctx:
        try:
            return ctx, ir.Module.parse(text)
        except MLIRError:
            return None


def _coll_buffer_uses(m: Any) -> list[tuple[Any, int]]:
    """[(op, operand index)] of memref operands of coll.copy/combine and the collectives."""
    out: list[tuple[Any, int]] = []
    for op in _body_ops(m):
        if op.name in ("coll.copy", "coll.combine", *COLLECTIVE_NAMES):
            out += [(op, k) for k, v in enumerate(op.operands) if isinstance(v.type, ir.MemRefType)
                    or str(v.type).startswith("memref<")]
    return out


def m_view_chain(text: str, rng: random.Random) -> str:
    """A chain of 1-3 views (memref.cast, memory_space_cast, reinterpret
    or expand/collapse round trips) in front of a coll operand."""
    parsed = parse_or_none(text)
    if parsed is None:
        return text
    ctx, m = parsed
    with ctx, ir.Location.unknown():
        uses = _coll_buffer_uses(m)
        if not uses:
            return text
        op, k = rng.choice(uses)
        v = op.operands[k]
        t = ir.MemRefType(v.type)
        for _ in range(rng.choice((1, 2, 3))):
            r = rng.random()
            with ir.InsertionPoint(op):
                if r < 0.4:
                    new_t = t
                    if rng.random() < 0.3 and t.rank == 1:  # to a dynamic layout and back
                        new_t = ir.MemRefType.get(t.shape, t.element_type,
                                                  ir.Attribute.parse("strided<[1], offset: ?>"), t.memory_space)
                    v = ir.Operation.create("memref.cast", results=[new_t], operands=[v]).result
                    if new_t != t:
                        v = ir.Operation.create("memref.cast", results=[t], operands=[v]).result
                elif r < 0.7:
                    dev = rng.choice((0, 1, 2, 7, 1023))
                    space = ir.Attribute.parse(f"#coll.device<{dev}>")
                    other = ir.MemRefType.get(t.shape, t.element_type, t.layout, space)
                    v = ir.Operation.create("memref.memory_space_cast", results=[other], operands=[v]).result
                    if rng.random() < 0.7:
                        v = ir.Operation.create("memref.memory_space_cast", results=[t], operands=[v]).result
                else:
                    v = ir.Operation.create("memref.cast", results=[t], operands=[v]).result
        op.operands[k] = v
        return str(m)


def m_strided_slice(text: str, rng: random.Random) -> str:
    """Replace the buffers of a rank-1 coll.copy by same-shaped strided
    slices of themselves: [off] [size] [stride] within bounds (sometimes
    not)."""
    parsed = parse_or_none(text)
    if parsed is None:
        return text
    ctx, m = parsed
    with ctx, ir.Location.unknown():
        copies = [op for op in _body_ops(m) if op.name in ("coll.copy", "coll.combine")]
        if not copies:
            return text
        op = rng.choice(copies)
        bufs = [k for k, v in enumerate(op.operands) if str(v.type).startswith("memref<")]
        types = [ir.MemRefType(op.operands[k].type) for k in bufs]
        if not types or any(t.rank != 1 or t.shape[0] < 1 for t in types):
            return text
        n = min(t.shape[0] for t in types)
        stride = rng.choice((1, 2, 3, 7))
        size = max(1, rng.randrange(1, n + 1) // stride)
        off_max = max(0, n - (size - 1) * stride - 1)
        for k, t in zip(bufs, types):
            off = rng.randrange(0, off_max + 1) + (1 if rng.random() < 0.05 else 0)
            space = f", {t.memory_space}" if t.memory_space is not None else ""
            rt = ir.Type.parse(f"memref<{size}x{t.element_type}, strided<[{stride}], offset: {off}>{space}>")
            with ir.InsertionPoint(op):
                sub = ir.Operation.create(
                    "memref.subview", results=[rt], operands=[op.operands[k]],
                    attributes={"static_offsets": ir.DenseI64ArrayAttr.get([off]),
                                "static_sizes": ir.DenseI64ArrayAttr.get([size]),
                                "static_strides": ir.DenseI64ArrayAttr.get([stride]),
                                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0])})
            op.operands[k] = sub.result
        return str(m)


_SIG = re.compile(r"func\.func @[\w$.]+\(([^)]*)\)[^\n]*\{\n")


def m_upstream_memory(text: str, rng: random.Random) -> str:
    """Upstream memory ops on the entry's arguments: a store, a fill, a
    copy between arguments, a dealloc, a load."""
    m = _SIG.search(text)
    if m is None:
        return text
    args = re.findall(r"(%[\w.$-]+): (memref<[^>]*>)", m.group(1))
    if not args:
        return text
    a, ta = rng.choice(args)
    b, tb = rng.choice(args)
    found = re.search(r"x?(f16|bf16|f32|f64|i1|i8|i16|i32|i64)>", ta)
    el = found.group(1) if found else "f32"
    cst = f"%fz_c = arith.constant {'1.0' if el.startswith(('f', 'b')) else '1'} : {el}\n"
    rank = ta.count("x")
    idx = "[" + ", ".join(["%fz_i"] * rank) + "]"
    r = rng.random()
    if r < 0.25:
        body = cst + f"linalg.fill ins(%fz_c : {el}) outs({a} : {ta})\n"
    elif r < 0.45:
        body = f"memref.copy {a}, {b} : {ta} to {tb}\n"
    elif r < 0.6:
        body = f"memref.dealloc {a} : {ta}\n"
    elif r < 0.8:
        body = cst + "%fz_i = arith.constant 0 : index\n" + f"memref.store %fz_c, {a}{idx} : {ta}\n"
    else:
        body = "%fz_i = arith.constant 0 : index\n" + f"%fz_l = memref.load {a}{idx} : {ta}\n"
    where = m.end() if rng.random() < 0.6 else text.rfind("return", m.end())
    where = m.end() if where < 0 else where
    return text[:where] + body + text[where:]


def m_deep_nesting(text: str, rng: random.Random) -> str:
    """Nesting at depths around the guard's bound and far beyond it:
    modules, regions of a generic op, brackets, or nested types."""
    d = rng.choice((8, 64, 255, 256, 257, 1000, 20000))
    r = rng.random()
    if r < 0.35:
        return "module {\n" * d + text + "}\n" * d
    if r < 0.6:
        i = text.find("return")
        i = len(text) if i < 0 else i
        return text[:i] + '"test.nest"() ({\n' * d + '}) : () -> ()\n' * d + text[i:]
    if r < 0.8:
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice("([{") * d + text[i:]
    return text.replace("f32", "memref<" * min(d, 2000) + "f32" + ">" * min(d, 2000), 1)


STRUCTURED = (m_view_chain, m_strided_slice, m_upstream_memory, m_deep_nesting, classes.host_between)


def corrupt_bytes(data: bytes, rng: random.Random) -> bytes:
    """Byte-level corruption: invalid UTF-8, NUL bytes, a BOM, flipped
    bits, truncation in the middle of a multi-byte character."""
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4))):
        i = rng.randrange(len(buf) + 1)
        r = rng.random()
        if r < 0.25:
            buf[i:i] = rng.choice((b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x80"))
        elif r < 0.4:
            buf[i:i] = b"\x00"
        elif r < 0.5:
            buf[0:0] = b"\xef\xbb\xbf"
        elif r < 0.7 and buf:
            j = min(i, len(buf) - 1)
            buf[j] ^= 1 << rng.randrange(8)
        elif r < 0.85:
            buf[i:i] = "é∀".encode()[: rng.choice((1, 2, 3, 5))]
        else:
            buf = buf[:i]
    return bytes(buf)
