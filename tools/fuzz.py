"""Fuzz coll-opt: mutate valid modules, run them through the full pipeline,
and require that every input ends in success (exit 0) or a located
diagnostic (file:line:col: error:) with exit code 1: never a Python
traceback, a crash (signal), or a hang.

  python -m coll.tools.fuzz --count 10000 [--seed 0] [--timeout 30] [--save DIR]

Inputs run in a worker process that calls coll_opt.run in a loop, its
stdout/stderr captured at the file-descriptor level (MLIR prints there
directly); a worker that dies (signal) or overruns the timeout is recorded
with its input and restarted. Input i depends only on (seed, i): a failure
is replayed with `--seed S --only i --save DIR`.
"""
import argparse
import collections
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
OUTCOMES = ("succeeded", "diagnosed", "unlocated", "tracebacks", "crashes", "hangs", "bad_exit")
FAILURES = ("unlocated", "tracebacks", "crashes", "hangs", "bad_exit")
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
    from coll.passes.lower_all_reduce import lower_all_reduce
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
            strategy = rng.choice((None,) + STRATEGIES)
            text = all_reduce_module(n, shape, dtype, kind, to_device=to, strategy=strategy,
                                     threshold=rng.choice((None, 0, 10)))
            out.append(text)
            if i % 2 == 0:
                m = ir.Module.parse(text)
                lower_all_reduce(m.operation, rng.choice(STRATEGIES[1:]))
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
    from .parse_guard import known_crashes
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


# -- worker ---------------------------------------------------------------------

def worker(result_fd, workdir):
    """Reads one JSON job per stdin line; writes one JSON result per line to
    result_fd. Output of the tool goes to workdir/output (fds 1 and 2)."""
    import traceback
    from coll.tools import coll_opt
    src, out, dst = (os.path.join(workdir, n) for n in ("input.mlir", "output", "result.mlir"))
    results = os.fdopen(result_fd, "w")
    for line in sys.stdin:
        job = json.loads(line)
        with open(src, "w") as f:
            f.write(job["text"])
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        try:
            _selftest(job.get("selftest"))
            rc = coll_opt.run([src, "--pass-pipeline=" + job["pipeline"], "-o", dst])
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
        results.write(json.dumps({"rc": rc}) + "\n")
        results.flush()


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
            [sys.executable, "-m", "coll.tools.fuzz", "--worker", str(w), self.dir],
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
        """(outcome, detail)."""
        if self.proc is None or self.done >= RESTART_EVERY:
            self.stop()
            self.start()
        self.done += 1
        try:
            job = {"text": text, "pipeline": pipeline, "selftest": selftest}
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
        rc = json.loads(line)["rc"]
        return classify(rc, self.output())


def classify(rc, output):
    if rc == "traceback" or "Traceback (most recent call last)" in output:
        return "tracebacks", output[-4000:]
    if rc == 0:
        return "succeeded", ""
    if rc == 1:
        m = LOCATED.search(output)
        if m:
            return "diagnosed", output[m.end():].split("\n", 1)[0]
        return "unlocated", output[-4000:]
    return "bad_exit", f"exit code {rc}\n{output[-4000:]}"


def fuzz(count, seed=0, timeout=30.0, save=None, only=None, progress=None):
    """Runs `count` inputs; returns ({outcome: n}, [(i, outcome, detail, text, pipeline)])."""
    seeds = corpus()
    counts = dict.fromkeys(OUTCOMES, 0)
    messages = collections.Counter()
    failures = []
    runner = Runner(timeout)
    indices = [only] if only is not None else range(count)
    t0 = time.monotonic()
    try:
        for n, i in enumerate(indices):
            text, pipeline = make_input(seeds, seed, i)
            outcome, detail = runner.run(text, pipeline)
            counts[outcome] += 1
            if outcome == "diagnosed":  # the first error, numbers blurred
                messages[re.sub(r"\d+", "N", detail)[:100]] += 1
            if outcome in FAILURES:
                failures.append((i, outcome, detail, text, pipeline))
                if save:
                    _save(save, seed, i, outcome, detail, text, pipeline)
            if progress and (n + 1) % progress == 0:
                rate = (n + 1) / (time.monotonic() - t0)
                print(f"[{n + 1}/{len(indices)}] {rate:.1f}/s {counts}", file=sys.stderr, flush=True)
    finally:
        runner.close()
    counts["tried"] = len(indices)
    fuzz.messages = messages
    return counts, failures


def _save(directory, seed, i, outcome, detail, text, pipeline):
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{seed}-{i}.mlir").write_text(text)
    (d / f"{seed}-{i}.txt").write_text(f"{outcome}\npipeline: {pipeline}\n\n{detail}\n")


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
    args = p.parse_args(argv)
    t0 = time.monotonic()
    counts, failures = fuzz(args.count, args.seed, args.timeout, args.save, args.only, args.progress)
    for msg, n in fuzz.messages.most_common(args.top):
        print(f"{n:6d}  {msg}", file=sys.stderr)
    for i, outcome, detail, _, pipeline in failures[:20]:
        print(f"--- input {i}: {outcome} ({pipeline})\n{detail.strip()[:2000]}", file=sys.stderr)
    print(json.dumps(dict(counts, seconds=round(time.monotonic() - t0, 1))))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
