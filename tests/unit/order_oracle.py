"""Random explicit programs and an element-by-element ground truth for
coll-check-order (tests/unit/test_order_crosscheck.py, and the long run in
bench/check_order_crosscheck.py).

The generator builds each view the way numpy would: every buffer is an
array holding the address of each element's first byte, and a view op is the
numpy operation that means the same (a subview is a slice, transpose is
transpose, collapse/expand are reshapes, memref.view and reinterpret_cast
recompute addresses from the aligned pointer). From that it writes the MLIR
text; MLIR's verifiers check the types it writes. The oracle never reads the
MLIR: it enumerates every byte each op reads and writes, builds
happens-before by a plain graph search over token edges and host blocking
points, and lists the ops with a race (or an unwritten read of scratch) and
the copies nobody waits for.
"""
import random

import numpy as np

F32 = 4
SPACE = 1 << 20  # address space per root buffer: roots never alias


class View:
    def __init__(self, name, addr, esize, device, strides, offset, shift, identity, dynamic=False):
        self.name, self.addr, self.esize, self.device = name, addr, esize, device
        self.strides, self.offset, self.shift = strides, offset, shift  # in elements / bytes
        self.identity, self.dynamic = identity, dynamic

    @property
    def shape(self):
        return self.addr.shape

    def type(self):
        shape = "x".join(str(d) for d in self.shape)
        elem = "f32" if self.esize == F32 else "i8"
        parts = [f"{shape}x{elem}" if shape else elem]
        if self.dynamic:
            parts.append("strided<[" + ", ".join("?" for _ in self.shape) + "], offset: ?>")
        elif getattr(self, "dyn_offset", False):
            parts.append(f"strided<[{', '.join(map(str, self.strides))}], offset: ?>")
        elif not self.identity:
            parts.append(f"strided<[{', '.join(map(str, self.strides))}], offset: {self.offset}>")
        parts.append(f"#coll.device<{self.device}>")
        return "memref<" + ", ".join(parts) + ">"

    def bytes(self):
        return {int(a) + k for a in self.addr.flat for k in range(self.esize)}


def _row_major(shape):
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def _dense(offset, strides, shape):
    """Does a reshape's result type get the identity layout?"""
    return offset == 0 and tuple(strides) == _row_major(shape)


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.lines, self.decls, self.args = [], [], []
        self.n = 0
        self.roots = []      # (View, scratch?)
        self.ops = []        # oracle records
        self.tokens = []     # op indices whose token is live

    def fresh(self, prefix="v"):
        self.n += 1
        return f"%{prefix}{self.n}"

    def const(self, k):
        name = self.fresh("c")
        self.lines.append(f"  {name} = arith.constant {k} : index")
        return name

    # -- buffers ---------------------------------------------------------------
    def make_roots(self):
        r = self.r
        for k in range(r.randint(2, 4)):
            dev = r.randrange(3)
            base = (len(self.roots) + 1) * SPACE
            if r.random() < 0.2:
                nb = r.choice([32, 48, 64])
                addr = base + np.arange(nb)
                v = View(f"%arg{len(self.args)}", addr, 1, dev, (1,), 0, 0, True)
            else:
                shape = r.choice([(12,), (16,), (8,), (4, 6), (3, 8), (6, 4)])
                addr = base + F32 * np.arange(int(np.prod(shape))).reshape(shape)
                v = View(f"%arg{len(self.args)}", addr, F32, dev, _row_major(shape), 0, 0, True)
            self.args.append(v)
            self.roots.append((v, False))
        for k in range(r.randint(0, 2)):
            dev = r.randrange(3)
            shape = r.choice([(8,), (12,), (4, 4)])
            base = (len(self.roots) + 1) * SPACE
            addr = base + F32 * np.arange(int(np.prod(shape))).reshape(shape)
            v = View(self.fresh("s"), addr, F32, dev, _row_major(shape), 0, 0, True)
            self.lines.append(f"  {v.name} = \"coll.alloc\"() : () -> {v.type()}")
            self.roots.append((v, True))
            self.record("alloc", name="coll.alloc")
            if r.random() < 0.85:  # most scratch is written before it is read
                x = self.fresh("f")
                self.lines.append(f"  {x} = arith.constant 0.0 : f32")
                self.lines.append(f"  linalg.fill ins({x} : f32) outs({v.name} : {v.type()}) loc(\"op{len(self.ops)}\")")
                v.scratch = True
                self.record("host", (), (), [(v, True)], name="linalg.fill")

    def step(self, v):
        """One random view op on `v` (or None when none applies)."""
        r = self.r
        rank = len(v.shape)
        choice = r.choice(["view", "rc", "expand", "collapse", "transpose", "cast", "subview", "msc"])
        if v.esize == 1:
            choice = "view" if r.random() < 0.8 else "rc8"
        if choice == "view" and v.esize == 1 and v.identity and v.offset == 0:
            nb = v.addr.size
            shape = r.choice([(2,), (3,), (4,), (2, 2), (2, 3)])
            numel = int(np.prod(shape))
            if numel * F32 > nb:
                return None
            shift = r.randrange(nb - numel * F32 + 1)
            c = self.const(shift)
            addr = int(v.addr.flat[0]) + shift + F32 * np.arange(numel).reshape(shape)
            w = View(self.fresh(), addr, F32, v.device, _row_major(shape), 0, v.shift + shift, True)
            self.lines.append(f"  {w.name} = memref.view {v.name}[{c}][] : {v.type()} to {w.type()}")
            return w
        if choice == "rc8":
            n = r.randint(1, 8)
            s = r.randint(1, 4)
            o = r.randrange(max(1, v.addr.size - (n - 1) * s))
            if o + (n - 1) * s >= v.addr.size:
                return None
            addr = int(v.addr.flat[0]) - v.offset + o + s * np.arange(n)
            w = View(self.fresh(), addr, 1, v.device, (s,), o, v.shift, False)
            self.lines.append(f"  {w.name} = memref.reinterpret_cast {v.name} to offset: [{o}], sizes: [{n}], "
                              f"strides: [{s}] : {v.type()} to {w.type()}")
            return w
        if v.dynamic and choice not in ("subview", "transpose", "cast"):
            return None
        if choice == "rc" and v.identity and v.esize == F32:
            total = v.addr.size
            shape = r.choice([(2, 2), (3,), (4,), (2, 3), (3, 2)])
            strides = tuple(r.randint(0 if r.random() < 0.1 else 1, 5) for _ in shape)
            span = sum((d - 1) * s for d, s in zip(shape, strides))
            if span >= total:
                return None
            o = r.randrange(total - span)
            base = int(v.addr.flat[0])  # the aligned pointer of v
            idx = np.indices(shape)
            addr = base + F32 * (o + sum(i * s for i, s in zip(idx, strides)))
            w = View(self.fresh(), addr, F32, v.device, strides, o, v.shift, False)
            self.lines.append(f"  {w.name} = memref.reinterpret_cast {v.name} to offset: [{o}], sizes: "
                              f"[{', '.join(map(str, shape))}], strides: [{', '.join(map(str, strides))}] : "
                              f"{v.type()} to {w.type()}")
            return w
        if choice == "expand" and rank == 1:
            n = v.shape[0]
            ds = [a for a in range(2, n) if n % a == 0]
            if not ds:
                return None
            a = r.choice(ds)
            shape = (a, n // a)
            s = v.strides[0]
            w = View(self.fresh(), v.addr.reshape(shape), v.esize, v.device, (s * shape[1], s),
                     v.offset, v.shift, _dense(v.offset, (s * shape[1], s), shape))
            self.lines.append(f"  {w.name} = memref.expand_shape {v.name} [[0, 1]] output_shape "
                              f"[{shape[0]}, {shape[1]}] : {v.type()} into {w.type()}")
            return w
        if choice == "collapse" and rank == 2 and v.strides[0] == v.strides[1] * v.shape[1]:
            # (collapsing keeps the identity layout only of an identity source)
            w = View(self.fresh(), v.addr.reshape(-1), v.esize, v.device, (v.strides[1],),
                     v.offset, v.shift, v.identity)
            self.lines.append(f"  {w.name} = memref.collapse_shape {v.name} [[0, 1]] : {v.type()} into {w.type()}")
            return w
        if choice == "transpose" and rank == 2:
            w = View(self.fresh(), v.addr.transpose(), v.esize, v.device, v.strides[::-1],
                     v.offset, v.shift, False, v.dynamic)
            self.lines.append(f"  {w.name} = memref.transpose {v.name} (d0, d1) -> (d1, d0) : {v.type()} to {w.type()}")
            return w
        if choice == "cast" and not v.dynamic:
            w = View(self.fresh(), v.addr, v.esize, v.device, v.strides, v.offset, v.shift, False, True)
            self.lines.append(f"  {w.name} = memref.cast {v.name} : {v.type()} to {w.type()}")
            return w
        if choice == "msc" and not v.dynamic:
            # Into another device's space and back: the same bytes.
            w = View(self.fresh(), v.addr, v.esize, (v.device + 1) % 3, v.strides, v.offset, v.shift, v.identity)
            self.lines.append(f"  {w.name} = memref.memory_space_cast {v.name} : {v.type()} to {w.type()}")
            u = View(self.fresh(), v.addr, v.esize, v.device, v.strides, v.offset, v.shift, v.identity)
            self.lines.append(f"  {u.name} = memref.memory_space_cast {w.name} : {w.type()} to {u.type()}")
            return u
        if choice == "subview":
            shape = tuple(r.randint(1, d) for d in v.shape)
            return self.subview(v, shape)
        return None

    def subview(self, v, shape, drop=None, final=False):
        """A subview of `v` of `shape` (same rank), dropping unit dim `drop`;
        the `final` view of a chain may take its offsets as SSA constants
        (then its type has a dynamic offset)."""
        r = self.r
        offs, steps = [], []
        for n, d in zip(shape, v.shape):
            step = r.choice([1, 1, 2, 3])
            while step > 1 and (n - 1) * step >= d:
                step -= 1
            if (n - 1) * step >= d:
                return None
            offs.append(r.randrange(d - (n - 1) * step))
            steps.append(step)
        sl = tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in zip(offs, shape, steps))
        addr = v.addr[sl]
        strides = [st * s for st, s in zip(v.strides, steps)]
        offset = v.offset + sum(o * st for o, st in zip(offs, v.strides))
        out_shape, out_strides = list(shape), list(strides)
        if drop is not None:
            addr = addr.reshape([d for k, d in enumerate(shape) if k != drop])
            del out_shape[drop], out_strides[drop]
        w = View(self.fresh(), addr, v.esize, v.device, tuple(out_strides), offset, v.shift, False, v.dynamic)
        fmt = lambda xs: ", ".join(map(str, xs))  # noqa: E731
        offs_text = fmt(offs)
        # (MLIR infers a static offset when a dynamic one meets stride 0)
        if final and not v.dynamic and not getattr(v, "dyn_offset", False) and 0 not in v.strides \
                and r.random() < 0.2:
            offs_text = fmt([self.const(o) for o in offs])
            w.dyn_offset = True
        self.lines.append(f"  {w.name} = memref.subview {v.name}[{offs_text}] [{fmt(shape)}] [{fmt(steps)}] : "
                          f"{v.type()} to {w.type()}")
        return w

    def view_of(self, shape, device=None):
        """A random chain of view ops ending in an f32 view of `shape`."""
        r = self.r
        for _ in range(50):
            cands = [(v, s) for v, s in self.roots if device is None or v.device == device]
            if not cands:
                return None
            v, scratch = r.choice(cands)
            mark = len(self.lines)
            for _ in range(r.randint(0, 3)):
                w = self.step(v)
                if w is not None:
                    v = w
            w = self.fit(v, shape)
            if w is not None and w.esize == F32:
                w.scratch = scratch
                w.root_device = v.device
                return w
            del self.lines[mark:]
        return None

    def fit(self, v, shape):
        r = self.r
        if v.esize == 1:
            if not (v.identity and v.offset == 0):
                return None
            v = self.step_view(v)
            if v is None:
                return None
        if len(v.shape) == len(shape):
            if all(a <= b for a, b in zip(shape, v.shape)):
                if tuple(v.shape) == tuple(shape) and r.random() < 0.3:
                    return v
                return self.subview(v, shape, final=True)
            return None
        if len(v.shape) == 2 and len(shape) == 1:
            k = r.randrange(2)
            full = [1, 1]
            full[k] = shape[0]
            if full[k] > v.shape[k]:
                return None
            return self.subview(v, tuple(full), drop=1 - k, final=True)
        if len(v.shape) == 1 and len(shape) == 2 and v.shape[0] >= shape[0] * shape[1]:
            n = shape[0] * shape[1]
            w = self.subview(v, (n,)) if v.shape[0] > n else v
            if w is None or v.dynamic:
                return None
            s = w.strides[0]
            u = View(self.fresh(), w.addr.reshape(shape), F32, w.device, (s * shape[1], s), w.offset,
                     w.shift, _dense(w.offset, (s * shape[1], s), shape))
            self.lines.append(f"  {u.name} = memref.expand_shape {w.name} [[0, 1]] output_shape "
                              f"[{shape[0]}, {shape[1]}] : {w.type()} into {u.type()}")
            return u
        return None

    def step_view(self, v):
        for _ in range(5):
            self.r.random()
            w = self.step(v)
            if w is not None and w.esize == F32:
                return w
        return None

    # -- ops -------------------------------------------------------------------
    def deps(self, reads=(), writes=()):
        """Random tokens; or, more often, the tokens of the earlier ops this
        one conflicts with (the program a careful author writes), maybe
        missing one (the bug the check is for)."""
        r = self.r
        live = list(self.tokens)
        if r.random() < 0.2 or not (reads or writes):
            k = r.choice([0, 0, 1, 1, 2, 3])
            return sorted(r.sample(live, min(k, len(live))))
        rb = set().union(*[v.bytes() for v in reads]) if reads else set()
        wb = set().union(*[v.bytes() for v in writes]) if writes else set()
        need = []
        for i in live:
            o = self.ops[i]
            pr = set().union(*[v.bytes() for v, _ in o["reads"]]) if o["reads"] else set()
            pw = set().union(*[v.bytes() for v, _ in o["writes"]]) if o["writes"] else set()
            if (pw & (rb | wb)) or (pr & wb) or o["kind"] == "join" and r.random() < 0.3:
                need.append(i)
        if need and r.random() < 0.25:
            need.remove(r.choice(need))
        return sorted(need)

    def record(self, kind, deps=(), reads=(), writes=(), token=False, name=""):
        i = len(self.ops)
        self.ops.append(dict(kind=kind, deps=list(deps), reads=list(reads), writes=list(writes), name=name))
        if token:
            self.tokens.append(i)
        return i

    def settle(self, reads, writes):
        """Before a host op, most often wait for what it conflicts with."""
        if self.r.random() < 0.15:
            return
        d = self.deps(reads, writes)
        if not d:
            return
        i = len(self.ops)
        toks = ", ".join("!coll.token" for _ in d)
        self.lines.append(f"  \"coll.wait\"({', '.join(self.tok(x) for x in d)}) : ({toks}) -> () loc(\"op{i}\")")
        self.record("wait", d, name="coll.wait")

    def here(self):
        i = len(self.ops)
        return i, f'loc("op{i}")'

    def tok(self, i):
        return f"%t{i}"

    def dep_text(self, deps):
        return "".join(f", {self.tok(d)}" for d in deps)

    def op(self):
        r = self.r
        i = len(self.ops)
        loc = f'loc("op{i}")'
        kind = r.choices(["copy", "combine", "join", "wait", "load", "store", "mcopy", "fill", "call",
                          "call_tok", "vload", "vstore"], [8, 5, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1])[0]
        shape = r.choice([(1,), (2,), (3,), (4,), (2, 2), (2, 3), (3, 2)])
        if kind in ("copy", "mcopy"):
            a, b = self.view_of(shape), self.view_of(shape)
            if a is None or b is None:
                return
            if kind == "copy":
                d = self.deps([a], [b])
                toks = "".join(", !coll.token" for _ in d)
                self.lines.append(f"  {self.tok(i)} = \"coll.copy\"({a.name}, {b.name}{self.dep_text(d)}) : "
                                  f"({a.type()}, {b.type()}{toks}) -> !coll.token {loc}")
                self.record("async", d, [(a, True)], [(b, True)], token=True, name="coll.copy")
            else:
                self.settle([a], [b])
                i, loc = self.here()
                self.lines.append(f"  memref.copy {a.name}, {b.name} : {a.type()} to {b.type()} {loc}")
                self.record("host", (), [(a, True)], [(b, True)], name="memref.copy")
        elif kind == "combine":
            dev = r.randrange(3)
            vs = [self.view_of(shape, dev) for _ in range(3)]
            if None in vs:
                return
            if r.random() < 0.2:
                vs[2] = vs[0]  # in place
            d = self.deps(vs[:2], vs[2:])
            toks = "".join(", !coll.token" for _ in d)
            types = ", ".join(v.type() for v in vs)
            self.lines.append(f"  {self.tok(i)} = \"coll.combine\"({', '.join(v.name for v in vs)}{self.dep_text(d)}) "
                              f"{{kind = \"sum\", operandSegmentSizes = array<i32: 1, 1, 1, {len(d)}>}} : "
                              f"({types}{toks}) -> !coll.token {loc}")
            self.record("async", d, [(vs[0], True), (vs[1], True)], [(vs[2], True)], token=True, name="coll.combine")
        elif kind in ("join", "wait"):
            d = self.deps()
            if not d:
                return
            toks = ", ".join("!coll.token" for _ in d)
            args = ", ".join(self.tok(x) for x in d)
            if kind == "join":
                self.lines.append(f"  {self.tok(i)} = \"coll.join\"({args}) : ({toks}) -> !coll.token {loc}")
                self.record("join", d, token=True, name="coll.join")
            else:
                self.lines.append(f"  \"coll.wait\"({args}) : ({toks}) -> () {loc}")
                self.record("wait", d, name="coll.wait")
        elif kind in ("load", "store"):
            v = self.view_of(shape)
            if v is None:
                return
            idx = [r.randrange(d) for d in v.shape]
            cs = ", ".join(self.const(k) for k in idx)
            one = [(v_sub(v, idx), True)]
            self.settle([one[0][0]] if kind == "load" else [], [one[0][0]])
            i, loc = self.here()
            if kind == "load":
                self.lines.append(f"  {self.fresh('x')} = memref.load {v.name}[{cs}] : {v.type()} {loc}")
                self.record("host", (), one, (), name="memref.load")
            else:
                x = self.fresh("f")
                self.lines.append(f"  {x} = arith.constant 1.0 : f32")
                self.lines.append(f"  memref.store {x}, {v.name}[{cs}] : {v.type()} {loc}")
                self.record("host", (), (), one, name="memref.store")
        elif kind in ("vload", "vstore"):
            v = self.view_of(shape)
            if v is None or v.dynamic or getattr(v, "dyn_offset", False) or v.strides[-1] != 1:
                return  # (vector ops need a unit innermost stride)
            # A vector of the trailing dimension, at a constant index.
            n = r.randint(1, v.shape[-1])
            idx = [r.randrange(d) for d in v.shape[:-1]] + [r.randrange(v.shape[-1] - n + 1)]
            sl = tuple(idx[:-1]) + (slice(idx[-1], idx[-1] + n),)
            part = View(v.name, v.addr[sl], v.esize, v.device, (), 0, 0, False)
            part.scratch = v.scratch
            self.settle([part] if kind == "vload" else [], [part])
            i, loc = self.here()
            cs = ", ".join(self.const(k) for k in idx)
            if kind == "vload":
                self.lines.append(f"  {self.fresh('x')} = vector.load {v.name}[{cs}] : {v.type()}, vector<{n}xf32> {loc}")
                self.record("host", (), [(part, True)], (), name="vector.load")
            else:
                x = self.fresh("f")
                self.lines.append(f"  {x} = arith.constant dense<3.0> : vector<{n}xf32>")
                self.lines.append(f"  vector.store {x}, {v.name}[{cs}] : {v.type()}, vector<{n}xf32> {loc}")
                self.record("host", (), (), [(part, True)], name="vector.store")
        elif kind == "fill":
            v = self.view_of(shape)
            if v is None:
                return
            self.settle([], [v])
            i, loc = self.here()
            x = self.fresh("f")
            self.lines.append(f"  {x} = arith.constant 2.0 : f32")
            self.lines.append(f"  linalg.fill ins({x} : f32) outs({v.name} : {v.type()}) {loc}")
            self.record("host", (), (), [(v, True)], name="linalg.fill")
        elif kind in ("call", "call_tok"):
            v = self.view_of(shape)
            if v is None:
                return
            self.settle([v], [v])
            i, loc = self.here()
            fn = f"@ext{i}"
            res = " -> !coll.token" if kind == "call_tok" else ""
            self.decls.append(f"func.func private {fn}({v.type()}){res}")
            lhs = f"{self.tok(i)} = " if kind == "call_tok" else ""
            self.lines.append(f"  {lhs}func.call {fn}({v.name}) : ({v.type()}){' -> !coll.token' if res else ' -> ()'} {loc}")
            self.record("async" if res else "host", (), [(v, False)], [(v, False)], token=bool(res), name="func.call")

    def program(self, nops):
        self.make_roots()
        for _ in range(nops):
            self.op()
        r = self.r
        ret = ""
        live = self.tokens
        if live and r.random() < 0.85:
            i = len(self.ops)
            pick = live if r.random() < 0.7 else r.sample(live, r.randint(1, len(live)))
            pick = sorted(pick)
            if r.random() < 0.15:
                ret = pick[-1]
                self.record("return", [ret], name="func.return")
            else:
                toks = ", ".join("!coll.token" for _ in pick)
                self.lines.append(f"  \"coll.wait\"({', '.join(self.tok(x) for x in pick)}) : ({toks}) -> () "
                                  f"loc(\"op{i}\")")
                self.record("wait", pick, name="coll.wait")
        args = ", ".join(f"{v.name}: {v.type()}" for v in self.args)
        sig = " -> !coll.token" if ret != "" else ""
        body = "\n".join(self.lines)
        tail = f"  return {self.tok(ret)} : !coll.token" if ret != "" else "  return"
        return "\n".join(self.decls + [f"func.func @f({args}){sig} {{", body, tail, "}"])


def v_sub(v, idx):
    """The one-element view at `idx` of v (for the oracle only)."""
    w = View(v.name, v.addr[tuple(idx)].reshape(()), v.esize, v.device, (), 0, 0, False)
    w.scratch = v.scratch
    return w


def generate(seed, nops=None):
    """(MLIR text, oracle records) of a random program."""
    g = Gen(seed)
    text = g.program(nops if nops is not None else g.r.randint(2, 10))
    return text, g.ops


# -- the ground truth -------------------------------------------------------------
def truth(ops):
    """({op index} with a race or unwritten read, {op index} reported as
    never waited for): by enumeration, independent of the checker."""
    n = len(ops)
    if not any(o["name"].startswith("coll.") or o["kind"] == "async" for o in ops):
        return set(), set()  # no coll op, no token: not coll-check-order's business
    blocking = [o["kind"] in ("wait", "host") for o in ops]
    preds = [set(o["deps"]) for o in ops]
    for i in range(n):
        preds[i].update(j for j in range(i) if blocking[j])
    before = []  # before[i]: every j ordered before i
    for i in range(n):
        seen, stack = set(), list(preds[i])
        while stack:
            j = stack.pop()
            if j not in seen:
                seen.add(j)
                stack.extend(preds[j])
        before.append(seen)
    sets = [dict(r=[(v.bytes(), ex, v) for v, ex in o["reads"]],
                 w=[(v.bytes(), ex, v) for v, ex in o["writes"]]) for o in ops]
    bad = set()
    for q in range(n):
        rq = set().union(*[b for b, _, _ in sets[q]["r"]]) if sets[q]["r"] else set()
        wq = set().union(*[b for b, _, _ in sets[q]["w"]]) if sets[q]["w"] else set()
        for p in range(q):
            if p in before[q]:
                continue
            rp = set().union(*[b for b, _, _ in sets[p]["r"]]) if sets[p]["r"] else set()
            wp = set().union(*[b for b, _, _ in sets[p]["w"]]) if sets[p]["w"] else set()
            if (wp & rq) or (rp & wq) or (wp & wq):
                bad.add(q)
        name = ops[q]["name"]
        if name in ("coll.copy", "memref.copy", "coll.combine"):
            for rb, _, rv in sets[q]["r"]:
                for wb, _, wv in sets[q]["w"]:
                    if not rb & wb:
                        continue
                    same = rv.addr.shape == wv.addr.shape and (rv.addr == wv.addr).all()
                    if name != "coll.combine" or not same:
                        bad.add(q)
        # Unwritten scratch: exact reads must be covered by exact writes
        # ordered before.
        written = set()
        for p in before[q]:
            for b, ex, v in sets[p]["w"]:
                if ex:
                    written |= b
        for b, ex, v in sets[q]["r"]:
            if ex and v.scratch and not b <= written:
                bad.add(q)
    finals = [i for i, o in enumerate(ops) if o["kind"] in ("wait", "return")]
    done = set()
    for f in finals:
        done |= before[f] if ops[f]["kind"] == "wait" else before_return(ops, before, f)
    late = [i for i, o in enumerate(ops) if o["name"] in ("coll.copy", "coll.combine") or
            (o["name"] == "func.call" and o["kind"] == "async")]
    late = [i for i in late if i not in done]
    reported = {i for i in late if not any(i in before[j] for j in late)}
    return bad, reported


def before_return(ops, before, f):
    """What a returned token orders: the token's op and what precedes it."""
    out = set()
    for d in ops[f]["deps"]:
        out |= before[d] | {d}
    return out


def checker_result(findings):
    """The same two sets from coll-check-order's findings (ops named by
    their loc("opN")), and the findings nothing explains."""
    bad, late, other = set(), set(), []
    for f in findings:
        text = str(f.location)
        if not text.startswith('loc("op'):
            other.append(f.message)
            continue
        i = int(text[len('loc("op'):].split('"')[0])
        if "but is not ordered before the final" in f.message or "but nothing waits for it" in f.message:
            late.add(i)
        elif "cannot order" in f.message or "not followed" in f.message or "does not know" in f.message:
            other.append(f.message)
        else:
            bad.add(i)
    return bad, late, other


VIEW_OP_NAMES = ("memref.subview", "memref.reinterpret_cast", "memref.transpose", "memref.view",
                 "memref.collapse_shape", "memref.expand_shape", "memref.cast",
                 "memref.memory_space_cast")
HOST_OP_NAMES = ("memref.copy", "memref.load", "memref.store", "linalg.fill", "vector.load",
                 "vector.store", "func.call")


def crosscheck(seed, check_module, parse):
    """One random program: checker against the truth. `parse(text)` gives a
    module op (in a context the caller holds). Returns a dict: seed, text,
    the two results, and a verdict."""
    text, ops = generate(seed)
    bad, late = truth(ops)
    try:
        module = parse(text)
    except Exception as err:  # a generator bug: MLIR rejects what it wrote
        return dict(seed=seed, text=text, truth=(bad, late), got=None, other=[f"does not parse: {err}"],
                    miss=True, false_alarm=True, ops=0)
    got_bad, got_late, other = checker_result(check_module(module))
    return dict(seed=seed, text=text, truth=(bad, late), got=(got_bad, got_late), other=other,
                miss=bool(bad - got_bad or late - got_late),
                false_alarm=bool(got_bad - bad or got_late - late or other),
                ops=sum(o["kind"] != "alloc" for o in ops))
