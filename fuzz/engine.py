"""Fuzz the tools: mutate valid modules (and npz inputs, and argument
lists), run them through coll-opt's full pipeline, coll-run, coll-build and
coll-gen, and require that every input ends in success (exit 0) or a
located diagnostic with exit code 1 (file:line:col: error: for bad IR; the
file or flag named for bad files and arguments): never a Python traceback,
an internal error, a crash (signal), or a hang.

  python -m coll.fuzz.engine --count 10000 [--seed 0] [--timeout 30] [--save DIR]
                            [--tools opt,run,build,gen]

Categories, besides text mutations: view chains and strided slices on coll
operands, upstream memory ops on the arguments, deep nesting, byte-level
corruption (invalid UTF-8, NUL, truncation), npz corruption for
coll-run --inputs, file-system errors (missing input, a directory, a
missing output directory, a full disk), and coll-gen's flags.

Inputs run in a worker process that calls the tools' entry points in a
loop, its stdout/stderr captured at the file-descriptor level (MLIR prints
there directly); a worker that dies (signal) or overruns the timeout is
recorded with its input and restarted. Input i depends only on (seed, i): a
failure is replayed with `--seed S --only i --save DIR`. The engine is this
one module.
"""
import argparse
import base64
import collections
import io
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STRATEGIES = ("auto", "naive", "ring", "all2all")
LOCATED = re.compile(r"^\S[^\n]*?:\d+:\d+: error: ", re.M)
OUTCOMES = ("succeeded", "diagnosed", "check_failed", "unlocated", "tracebacks", "crashes", "hangs",
            "bad_exit", "partial_output")
CHECK_FAILED = re.compile(r"^\S+ +\d+ .* FAIL \(", re.M)  # a coll-run table row: the program is wrong
TOOLS = ("opt", "run", "build", "gen")
TOOL_WEIGHTS = (8, 2, 2, 1)
# A tool-level error names the file or the flag it is about.
NAMED = re.compile(r"^coll-[\w-]+: error: (?!internal error).*(could not|'[^']+'|--[\w-]+|\S+\.(npz|npy|mlir|so))", re.M)
USAGE = re.compile(r"^usage: (.*\n)*coll-[\w -]+: error: ", re.M)  # argparse (tools/args.py), exit 1
FAILURES = ("unlocated", "tracebacks", "crashes", "hangs", "bad_exit", "partial_output")
RESTART_EVERY = 500  # inputs per worker, to bound leaks
MEMORY_LIMIT = 4 << 30  # bytes of address space per worker


# -- seeds ----------------------------------------------------------------------

def _valid_kinds(dtype):
    if dtype == "i1":
        return ("and", "or", "xor")
    if dtype.startswith("i"):
        return ("sum", "prod", "max", "min", "and", "or", "xor")
    return ("sum", "prod", "max", "min")


def corpus(seed=0):
    """Valid modules to mutate: collective level (generated), their
    explicit programs (lowered), and the chunks of the lit tests."""
    from mlir import ir
    from coll.ir import make_context
    from coll.ir.generate import all_reduce_module
    from coll.passes.lower_collectives import lower_collectives
    rng = random.Random(seed)
    shapes = ([7], [2, 3], [], [0], [64], [3, 1, 2], [5])
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


def _pick(rng, matches):
    return rng.choice(matches) if matches else None


def _sub_at(text, m, new, group=0):
    return text[:m.start(group)] + new + text[m.end(group):]


def m_number(text, rng):
    m = _pick(rng, list(re.finditer(r"(?<![\w%#.])-?\d+(?![\w.])", text)))
    if m is None:
        return text
    v = rng.choice(INTERESTING) if rng.random() < 0.6 else str(int(m.group()) + rng.choice((-1, 1)))
    return _sub_at(text, m, v)


def m_elemtype(text, rng):
    m = _pick(rng, list(re.finditer(r"\b(f16|bf16|f32|f64|i1|i8|i16|i32|i64)\b", text)))
    return text if m is None else _sub_at(text, m, rng.choice(TYPES))


def m_device(text, rng):
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


def m_kind(text, rng):
    m = _pick(rng, list(re.finditer(r'kind = "(\w*)"', text)))
    return text if m is None else _sub_at(text, m, rng.choice(KINDS), 1)


def m_attr(text, rng):
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


def m_array(text, rng):
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


def m_operand(text, rng):
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


def _split_types(s):
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


def m_ssa(text, rng):
    """Use another SSA value in place of one (tokens for buffers, ...)."""
    ms = list(SSA.finditer(text))
    if len(ms) < 2:
        return text
    m = rng.choice(ms)
    return _sub_at(text, m, rng.choice(ms).group())


def m_shape(text, rng):
    m = _pick(rng, list(re.finditer(r"memref<((\d+|\?)x)+", text)))
    if m is None:
        return text
    dims = re.findall(r"(\d+|\?)x", m.group())
    k = rng.randrange(len(dims))
    dims[k] = rng.choice(("0", "1", "?", "3", "8", "1000000", "4294967296"))
    return _sub_at(text, m, "memref<" + "".join(d + "x" for d in dims))


def m_lines(text, rng):
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


def m_truncate(text, rng):
    return text[:rng.randrange(len(text) + 1)]


def m_char(text, rng):
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

def _body_ops(module):
    out = []
    for f in module.body.operations:
        for region in f.operation.regions:
            for block in region.blocks:
                out += [op.operation for op in block.operations]
    return out


def _recreate(op, operands, attrs=None):
    from mlir import ir
    attrs = attrs if attrs is not None else {n: op.attributes[n] for n in op.attributes}
    with ir.InsertionPoint(op):
        new = ir.Operation.create(op.name, results=[r.type for r in op.results],
                                  operands=operands, attributes=attrs, loc=op.location)
    for old, r in zip(op.results, new.results):
        old.replace_all_uses_with(r)
    op.erase()
    return new


def _earlier_values(ops, op, type_):
    """Values of `type_` defined before `op` in its block (or arguments)."""
    vals = [a for a in op.parent.regions[0].blocks[0].arguments if a.type == type_]
    for o in ops:
        if o == op:
            break
        vals += [r for r in o.results if r.type == type_]
    return vals


def ir_mutation(text, rng):
    """One structural edit of a parsed module: drop or rewire a token
    dependency, swap a buffer operand for another of its type, or duplicate
    a coll op. Returns the text unchanged when it does not parse."""
    from mlir import ir
    from coll.ir import make_context
    from ..tools.parse_guard import known_crashes
    if known_crashes(text):  # parsing it would abort this process
        return text
    with make_context():
        try:
            m = ir.Module.parse(text)
        except ir.MLIRError:
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


def make_input(seeds, seed, i):
    """(text, pipeline) of input i: deterministic in (seed, i)."""
    rng = random.Random(f"{seed}:{i}")
    text = rng.choice(seeds)
    if rng.random() < 0.35:
        text = ir_mutation(text, rng)
        if rng.random() < 0.5:
            return text, _pipeline(rng)
    for _ in range(rng.choice((1, 1, 2, 3))):
        text = rng.choices(MUTATORS, WEIGHTS)[0](text, rng)
    return text, _pipeline(rng)


def _pipeline(rng):
    elems = [f"coll-lower-all-reduce{{strategy={rng.choice(STRATEGIES)}}}"]
    if rng.random() < 0.3:
        elems.append(f"coll-shuffle{{seed={rng.randrange(100)}}}")
    elems += ["coll-check-order", "coll-check-semantics", "canonicalize", "cse"]
    if "coll-to-cpu" in _registered():
        elems.append("coll-to-cpu")
    return "builtin.module(" + ",".join(elems) + ")"


def _registered():
    from coll.core.registry import load_all
    return load_all()


# -- structure-aware categories ---------------------------------------------

def _parsed(text):
    """(context, module) of `text`, or None when it does not parse (or
    would crash the parser)."""
    from mlir import ir
    from coll.ir import make_context
    from ..tools.parse_guard import known_crashes
    if known_crashes(text):
        return None
    ctx = make_context()
    with ctx:
        try:
            return ctx, ir.Module.parse(text)
        except ir.MLIRError:
            return None


def _coll_buffer_uses(m):
    """[(op, operand index)] of memref operands of coll.copy/combine/all_reduce."""
    from mlir import ir
    out = []
    for op in _body_ops(m):
        if op.name in ("coll.copy", "coll.combine", "coll.all_reduce"):
            out += [(op, k) for k, v in enumerate(op.operands) if isinstance(v.type, ir.MemRefType)
                    or str(v.type).startswith("memref<")]
    return out


def m_view_chain(text, rng):
    """A chain of 1-3 views (memref.cast, memory_space_cast, reinterpret
    or expand/collapse round trips) in front of a coll operand."""
    parsed = _parsed(text)
    if parsed is None:
        return text
    ctx, m = parsed
    from mlir import ir
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


def m_strided_slice(text, rng):
    """Replace the buffers of a rank-1 coll.copy by same-shaped strided
    slices of themselves: [off] [size] [stride] within bounds (sometimes
    not)."""
    parsed = _parsed(text)
    if parsed is None:
        return text
    ctx, m = parsed
    from mlir import ir
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


def m_upstream_memory(text, rng):
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
    el = re.search(r"x?(f16|bf16|f32|f64|i1|i8|i16|i32|i64)>", ta)
    el = el.group(1) if el else "f32"
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


def m_deep_nesting(text, rng):
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


STRUCTURED = (m_view_chain, m_strided_slice, m_upstream_memory, m_deep_nesting)


def corrupt_bytes(data, rng):
    """Byte-level corruption: invalid UTF-8, NUL bytes, a BOM, flipped
    bits, truncation in the middle of a multi-byte character."""
    data = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4))):
        i = rng.randrange(len(data) + 1)
        r = rng.random()
        if r < 0.25:
            data[i:i] = rng.choice((b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x80"))
        elif r < 0.4:
            data[i:i] = b"\x00"
        elif r < 0.5:
            data[0:0] = b"\xef\xbb\xbf"
        elif r < 0.7 and data:
            j = min(i, len(data) - 1)
            data[j] ^= 1 << rng.randrange(8)
        elif r < 0.85:
            data[i:i] = "é∀".encode()[: rng.choice((1, 2, 3, 5))]
        else:
            data = data[:i]
    return bytes(data)


# -- npz inputs for coll-run ----------------------------------------------------

def _npz(arrays):
    buf = io.BytesIO()
    import numpy as np
    np.savez(buf, **arrays)
    return buf.getvalue()


def npz_input(text, rng):
    """(npz bytes, what) for `text`'s problem: valid, or corrupted."""
    import pickle
    import zipfile
    import numpy as np
    from coll.runtime.check import describe, make_inputs
    problem, parsed = None, _parsed(text)  # never parse a crashing text here
    if parsed is not None:
        with parsed[0]:
            try:
                problem = describe(parsed[1])
            except Exception:  # noqa: BLE001 - any module coll-run would refuse anyway
                problem = None
    arrays = {}
    if problem is not None and np.prod(problem.shape, dtype=object) <= 1 << 16:
        arrays = {f"x{i}": a for i, a in enumerate(make_inputs(problem, rng.randrange(100)))}
    what = rng.choice(("valid", "truncated", "flipped", "object", "pickle", "npy", "lying", "dtype",
                       "missing", "extra", "huge", "fortran", "empty", "bomb", "garbage", "nan"))
    if not arrays:
        arrays = {"x0": np.zeros(4, np.float32)}
    data = _npz(arrays)
    first = sorted(arrays)[0]
    if what == "truncated":
        data = data[:rng.randrange(len(data))]
    elif what == "flipped":
        b = bytearray(data)
        for _ in range(rng.choice((1, 3, 10))):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        data = bytes(b)
    elif what == "object":
        arrays[first] = np.array([None] * max(arrays[first].size, 1), dtype=object)
        data = _npz(arrays)
    elif what == "pickle":
        data = pickle.dumps(arrays)
    elif what == "npy":
        buf = io.BytesIO()
        np.save(buf, arrays[first])
        data = buf.getvalue()
    elif what in ("lying", "huge", "fortran", "bomb", "garbage"):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name, a in arrays.items():
                buf = io.BytesIO()
                np.lib.format.write_array(buf, a)
                raw = buf.getvalue()
                if name == first:
                    if what == "lying":
                        raw = raw[:max(len(raw) - rng.choice((1, 4, 16)), 10)]
                    elif what == "huge":
                        raw = re.sub(rb"'shape': \([^)]*\)", b"'shape': (99999999999, 99999999)", raw, count=1)
                    elif what == "fortran":
                        raw = raw.replace(b"'fortran_order': False", b"'fortran_order': True ")
                    elif what == "bomb":
                        raw += b"\0" * (8 << 20)
                    else:
                        raw = bytes(rng.randrange(256) for _ in range(rng.choice((0, 6, 64))))
                z.writestr(name + ".npy", raw)
        data = out.getvalue()
    elif what == "dtype":
        arrays[first] = arrays[first].astype(np.float64 if arrays[first].dtype != np.float64 else np.int8)
        data = _npz(arrays)
    elif what == "missing":
        arrays.pop(first)
        data = _npz(arrays)
    elif what == "extra":
        arrays["y9"] = np.zeros(3)
        data = _npz(arrays)
    elif what == "empty":
        data = b""
    elif what == "nan" and arrays[first].dtype.kind == "f" and arrays[first].size:
        arrays[first] = arrays[first].copy()
        arrays[first].flat[0] = rng.choice((np.nan, np.inf, -np.inf, -0.0))
        data = _npz(arrays)
    return data, what


# -- coll-gen's flags -------------------------------------------------------------

def gen_argv(rng):
    from coll.ir import KINDS
    from coll.ir.types import ELEMENT_TYPES
    argv = ["all-reduce", "--devices", rng.choice(INTERESTING + ("5", "8"))]
    if rng.random() < 0.8:
        argv += ["--shape", rng.choice(("4x100", "", "scalar", "0", "7", "3x0x2", "99999999999",
                                        "99999999999x99999999999", "4x-1", "x", "1e3", "4X4", " 4",
                                        "18446744073709551616", "2x" * 50 + "2"))]
    if rng.random() < 0.5:
        argv += ["--dtype", rng.choice(ELEMENT_TYPES)]
    if rng.random() < 0.5:
        argv += ["--kind", rng.choice(tuple(KINDS))]
    for flag in ("--to-device", "--threshold"):
        if rng.random() < 0.3:
            argv += [flag, rng.choice(INTERESTING)]
    if rng.random() < 0.3:
        argv += ["--strategy", rng.choice(STRATEGIES)]
    if rng.random() < 0.2:
        argv += ["--name", rng.choice(("f", "", "a\"b", "1x", "_ok", "a b", "é", "x" * 300))]
    return argv


# -- jobs: one input for one tool -------------------------------------------------

FS_ERRORS = ("missing_input", "directory_input", "missing_output_dir", "full_disk")


def make_job(seeds, seed, i, tools=TOOLS):
    """The job of input i (a dict the worker runs): deterministic in (seed, i)."""
    rng = random.Random(f"{seed}:{i}:tools")
    weights = [w for t, w in zip(TOOLS, TOOL_WEIGHTS) if t in tools]
    tool = rng.choices([t for t in TOOLS if t in tools], weights)[0]
    if tool == "gen":
        return {"tool": "gen", "argv": gen_argv(rng)}
    text, pipeline = make_input(seeds, seed, i)
    r = rng.random()
    category = "text"
    if r < 0.3:
        category = "structured"
        text = rng.choice(seeds)
        for _ in range(rng.choice((1, 1, 2))):
            text = rng.choice(STRUCTURED)(text, rng)
    job = {"tool": tool, "pipeline": pipeline, "category": category,
           "data": base64.b64encode(text.encode()).decode()}
    if rng.random() < 0.1:
        job["category"] = "bytes"
        job["data"] = base64.b64encode(corrupt_bytes(text.encode(), rng)).decode()
    if rng.random() < 0.04:
        job["category"] = "fs"
        job["fs"] = rng.choice(FS_ERRORS)
    if tool == "run":
        job["strategy"] = rng.choice(STRATEGIES)
        if rng.random() < 0.5:
            data, what = npz_input(text, rng)
            job["npz"] = base64.b64encode(data).decode()
            job["category"] = "npz:" + what
    if tool == "build":
        job["emit"] = rng.choice(("gpu", "gpu", "llvm", "ptx", "llvmir"))
        job["strategy"] = rng.choice(STRATEGIES)
    return job


# -- worker ---------------------------------------------------------------------

def worker(result_fd, workdir):
    """Reads one JSON job per stdin line; writes one JSON result per line to
    result_fd. Output of the tool goes to workdir/output (fds 1 and 2)."""
    import traceback
    out = os.path.join(workdir, "output")
    results = os.fdopen(result_fd, "w")
    for line in sys.stdin:
        job = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        written = None
        try:
            _selftest(job.get("selftest"))
            rc, written = run_job(job, workdir)
        except SystemExit as e:
            rc = e.code
        except BaseException:  # noqa: BLE001 - the point is to catch anything
            traceback.print_exc()
            rc = "traceback"
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        partial = bool(rc != 0 and written and os.path.isfile(written))
        results.write(json.dumps({"rc": rc, "partial": partial}) + "\n")
        results.flush()


def run_job(job, workdir):
    """Runs one job's tool in this process, as its command line would.
    Returns (exit code, the output file it may write)."""
    src = os.path.join(workdir, "input.mlir")
    dst = {"run": "out.npz", "build": "out.txt"}.get(job.get("tool", "opt"), "result.mlir")
    dst = os.path.join(workdir, dst)
    for path in (src, dst, os.path.join(workdir, "inputs.npz")):
        if os.path.isfile(path):
            os.unlink(path)
    from ..tools import coll_gen, coll_run
    tool = job.get("tool", "opt")
    if tool == "gen":
        return _exit_code(lambda: _main(coll_gen.main, ["coll-gen"] + job["argv"])), None
    data = job["text"].encode() if "text" in job else base64.b64decode(job["data"])
    with open(src, "wb") as f:
        f.write(data)
    fs = job.get("fs")
    if fs == "missing_input":
        src = os.path.join(workdir, "no-such-input.mlir")
    elif fs == "directory_input":
        src = workdir
    elif fs == "missing_output_dir":
        dst = os.path.join(workdir, "no-such-dir", os.path.basename(dst))
    elif fs == "full_disk":
        dst = "/dev/full"
    if tool == "opt":
        from coll.tools import coll_opt
        return coll_opt.run([src, "--pass-pipeline=" + job["pipeline"], "-o", dst]), dst
    if tool == "build":
        from coll.tools import coll_build
        return coll_build.main([src, f"--emit={job['emit']}", f"--strategy={job['strategy']}", "-o", dst]), dst
    argv = ["coll-run", src, "--backend=cpu", f"--strategy={job['strategy']}", "--repeat=1", "--outputs", dst]
    if "npz" in job:
        npz = os.path.join(workdir, "inputs.npz")
        with open(npz, "wb") as f:
            f.write(base64.b64decode(job["npz"]))
        argv += ["--inputs", npz]
    try:
        return _exit_code(lambda: _main(coll_run.main, argv)), dst
    finally:
        from coll.backends import cpu
        cpu.clear_cache()  # compiled engines would pile up in the worker


def _main(main, argv):
    saved = sys.argv
    sys.argv = argv
    try:
        return main()
    finally:
        sys.argv = saved


def _exit_code(fn):
    try:
        rc = fn()
    except SystemExit as e:
        rc = e.code
    return 0 if rc is None else rc


def _selftest(what):
    """Failures on demand, so tests can check that each one is detected."""
    if what == "abort":
        os.abort()
    if what == "sleep":
        time.sleep(3600)
    if what == "raise":
        raise RuntimeError("selftest")


def _limit_memory():
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass


class Runner:
    """One worker subprocess, restarted after a crash, a hang, or
    RESTART_EVERY inputs."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.dir = tempfile.mkdtemp(prefix="coll-fuzz-")
        self.proc = None
        self.done = 0

    def start(self):
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coll.fuzz.engine", "--worker", str(w), self.dir],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(w,), text=True, preexec_fn=_limit_memory)
        os.close(w)
        self.results = r
        self.buf = b""
        self.done = 0

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        os.close(self.results)
        self.proc = None

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def output(self):
        try:
            return Path(self.dir, "output").read_text(errors="replace")
        except OSError:
            return ""

    def run(self, text, pipeline, selftest=None):
        """(outcome, detail) of coll-opt on `text`."""
        return self.run_job({"text": text, "pipeline": pipeline, "selftest": selftest})

    def run_job(self, job):
        """(outcome, detail) of one job (see make_job)."""
        if self.proc is None or self.done >= RESTART_EVERY:
            self.stop()
            self.start()
        self.done += 1
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            ready = select.select([self.results], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                self.stop()
                return "hangs", f"no result after {self.timeout} s"
            chunk = os.read(self.results, 65536)
            if not chunk:
                code = self.proc.wait()
                detail = self.output()
                self.stop()
                sig = -code if code < 0 else None
                name = signal.Signals(sig).name if sig else f"exit {code}"
                return "crashes", f"worker died ({name})\n{detail[-4000:]}"
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        result = json.loads(line)
        if result.get("partial"):
            return "partial_output", f"exit code {result['rc']} but the output file was written\n{self.output()[-4000:]}"
        return classify(result["rc"], self.output(), job.get("tool", "opt"))


def classify(rc, output, tool="opt"):
    if rc == "traceback" or "Traceback (most recent call last)" in output:
        return "tracebacks", output[-4000:]
    if rc == 0:
        return "succeeded", ""
    if "internal error" in output:
        return "unlocated", output[-4000:]
    if rc == 1 and tool == "run" and CHECK_FAILED.search(output):
        return "check_failed", CHECK_FAILED.search(output).group()
    if rc == 1 and USAGE.search(output):
        return "diagnosed", output.strip().split("\n")[-1]  # argparse: a flag it cannot take
    if rc == 1:
        m = LOCATED.search(output) or NAMED.search(output)
        if m:
            return "diagnosed", output[m.start():].split("\n", 1)[0]
        return "unlocated", output[-4000:]
    return "bad_exit", f"exit code {rc}\n{output[-4000:]}"


def fuzz(count, seed=0, timeout=30.0, save=None, only=None, progress=None, tools=TOOLS):
    """Runs `count` inputs over `tools`; returns ({outcome: n}, [(i,
    outcome, detail, input text, job description)]). `fuzz.table` holds
    the counts per tool, `fuzz.categories` the inputs per category."""
    seeds = corpus()
    counts = dict.fromkeys(OUTCOMES, 0)
    table = {t: dict.fromkeys(OUTCOMES, 0) for t in tools}
    categories = collections.Counter()
    messages = collections.Counter()
    failures = []
    runner = Runner(timeout)
    indices = [only] if only is not None else range(count)
    t0 = time.monotonic()
    try:
        for n, i in enumerate(indices):
            job = make_job(seeds, seed, i, tools)
            outcome, detail = runner.run_job(job)
            counts[outcome] += 1
            table[job["tool"]][outcome] += 1
            categories[f"{job['tool']}:{job.get('category', 'flags').split(':')[0]}"] += 1
            if outcome == "diagnosed":  # the first error, numbers blurred
                messages[re.sub(r"\d+", "N", detail)[:100]] += 1
            if outcome in FAILURES:
                text, what = describe_job(job)
                failures.append((i, outcome, detail, text, what))
                if save:
                    _save(save, seed, i, outcome, detail, job)
            if progress and (n + 1) % progress == 0:
                rate = (n + 1) / (time.monotonic() - t0)
                print(f"[{n + 1}/{len(indices)}] {rate:.1f}/s {counts}", file=sys.stderr, flush=True)
    finally:
        runner.close()
    counts["tried"] = len(indices)
    fuzz.messages, fuzz.table, fuzz.categories = messages, table, categories
    return counts, failures


def describe_job(job):
    """(input as text, the rest of the job in words)."""
    if job["tool"] == "gen":
        return " ".join(job["argv"]), "coll-gen " + " ".join(job["argv"])
    text = base64.b64decode(job["data"]).decode("utf-8", "replace")
    rest = {k: v for k, v in job.items() if k not in ("data", "npz")}
    return text, json.dumps(rest)


def _save(directory, seed, i, outcome, detail, job):
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    if "data" in job:
        (d / f"{seed}-{i}.mlir").write_bytes(base64.b64decode(job["data"]))
    if "npz" in job:
        (d / f"{seed}-{i}.npz").write_bytes(base64.b64decode(job["npz"]))
    (d / f"{seed}-{i}.txt").write_text(f"{outcome}\njob: {describe_job(job)[1]}\n\n{detail}\n")


def format_table(table):
    """The outcome counts per tool, as a Markdown table."""
    cols = ("succeeded", "diagnosed", "check_failed") + FAILURES
    lines = ["| tool | inputs | " + " | ".join(cols) + " |", "|---" * (len(cols) + 2) + "|"]
    for tool, c in table.items():
        lines.append(f"| coll-{tool} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in cols) + " |")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        worker(int(argv[1]), argv[2])
        return 0
    p = argparse.ArgumentParser(prog="coll-fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per input before it counts as a hang")
    p.add_argument("--save", default=None, help="directory for failing inputs")
    p.add_argument("--only", type=int, default=None, help="run input number ONLY alone")
    p.add_argument("--progress", type=int, default=500, help="print counts every N inputs")
    p.add_argument("--top", type=int, default=0, help="print the N most frequent diagnostics")
    p.add_argument("--tools", default=",".join(TOOLS), help="tools to fuzz (default: all of opt,run,build,gen)")
    args = p.parse_args(argv)
    tools = tuple(t.strip() for t in args.tools.split(",") if t.strip())
    if not tools or any(t not in TOOLS for t in tools):
        p.error(f"--tools takes a list of {', '.join(TOOLS)}")
    t0 = time.monotonic()
    counts, failures = fuzz(args.count, args.seed, args.timeout, args.save, args.only, args.progress, tools)
    for msg, n in fuzz.messages.most_common(args.top):
        print(f"{n:6d}  {msg}", file=sys.stderr)
    for i, outcome, detail, _, what in failures[:20]:
        print(f"--- input {i}: {outcome} ({what[:300]})\n{detail.strip()[:2000]}", file=sys.stderr)
    print(format_table(fuzz.table))
    print("inputs per category: " + ", ".join(f"{k} {v}" for k, v in sorted(fuzz.categories.items())))
    print(json.dumps(dict(counts, seconds=round(time.monotonic() - t0, 1))))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
