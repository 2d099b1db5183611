"""Token chains -> streams and events made once per program (coll-to-gpu).

Upstream gpu-to-llvm lowers every `gpu.wait async` to a new stream and
events, and `gpu.wait` to a sync and destroy of each stream it names: for a
ring on 8 devices that is ~100 streams, ~200 events and ~100 syncs per call,
more than a small allreduce itself costs. So the token graph is lowered to
the runtime wrappers (libmlir_cuda_runtime.so) here instead:

  load   the library's constructor `__coll_init` creates one stream per
         chain (logical device; GPU with streams=single), one event per
         cross-stream dependency and the scratch pools, into globals;
         its destructor `__coll_fini` frees and destroys them.
  call   each op runs on its chain's stream: the stream pointer is loaded
         from the global and handed to `gpu.memcpy` / `gpu.launch_func` as
         their one async dependency (an unrealized cast to a token, which
         reconcile-unrealized-casts folds away). A dependency on another
         chain is `mgpuEventRecord` right after its producer (once, however
         many chains wait) and `mgpuStreamWaitEvent`; what the chain already
         implies (vector clocks) is not waited for again. A host sync joins
         every live chain into one stream and calls `mgpuStreamSynchronize`
         once.
So per call: no stream or event creation, at most one record per event,
one host sync per coll.wait. Kernels still go through upstream's
gpu-lower-to-nvvm-pipeline. A program's streams, events and pool are
shared by its calls: calls from several host threads at once would race.
"""
from mlir import ir
from mlir.dialects import gpu, llvm

from .legalize_memcpy import _descriptor_type

STREAMS, EVENTS, POOLS = "__coll_streams", "__coll_events", "__coll_pools"
INIT, FINI = "__coll_init", "__coll_fini"
# After upstream's kernel loader (priority 123): the context exists then.
CTOR_PRIORITY = 124
RUNTIME = {  # name: (arguments, result); upstream CudaRuntimeWrappers.cpp
    "mgpuStreamCreate": ("", "!llvm.ptr"),
    "mgpuStreamDestroy": ("!llvm.ptr", None),
    "mgpuStreamSynchronize": ("!llvm.ptr", None),
    "mgpuStreamWaitEvent": ("!llvm.ptr, !llvm.ptr", None),
    "mgpuEventCreate": ("", "!llvm.ptr"),
    "mgpuEventDestroy": ("!llvm.ptr", None),
    "mgpuEventRecord": ("!llvm.ptr, !llvm.ptr", None),
    "mgpuMemAlloc": ("i64, !llvm.ptr, i8", "!llvm.ptr"),  # bytes, stream, host-shared
    "mgpuMemFree": ("!llvm.ptr, !llvm.ptr", None),
}


def _token_type():
    return gpu.AsyncTokenType.get()


def _ptr():
    return ir.Type.parse("!llvm.ptr")


def _call(name, args, result=None):
    return llvm.call(result, list(args), [], [], callee=ir.FlatSymbolRefAttr.get(name))


def _load_global(base, index):
    """base[index] (`base`: the address of an array of pointers)."""
    slot = llvm.getelementptr(_ptr(), base, [], ir.DenseI32ArrayAttr.get([index]),
                              ir.TypeAttr.get(_ptr()), ir.IntegerAttr.get(
                                  ir.IntegerType.get_signless(32), 0))
    return llvm.load(_ptr(), slot)


class _Tok:
    """A point on a chain: the vector clock of what is complete when it is
    (chain -> ops of that chain), the op that made it and its event."""
    __slots__ = ("value", "chain", "pos", "clock", "gen", "op", "event")

    def __init__(self, value, chain, pos, clock, gen, op):
        self.value, self.chain, self.pos, self.clock = value, chain, pos, clock
        self.gen, self.op, self.event = gen, op, None


def _implies(clock, tok):
    return clock.get(tok.chain, 0) >= tok.pos


def _array_global(name, count):
    arr = f"!llvm.array<{count} x ptr>"
    return (f"llvm.mlir.global internal @{name}() {{addr_space = 0 : i32}} : {arr} {{\n"
            f"  %z = llvm.mlir.zero : {arr}\n  llvm.return %z : {arr}\n}}")


def _slot(name, k):
    """Lines that leave the address of name[k] in %<name>_p<k>."""
    return [f"%{name}_a{k} = llvm.mlir.addressof @{name} : !llvm.ptr",
            f"%{name}_p{k} = llvm.getelementptr %{name}_a{k}[{k}] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr"]


class Program:
    """The module's host state: how many streams, events and pools the
    constructor makes (streams shared by the module's functions; each
    function has its own events and pool)."""

    def __init__(self):
        self.streams = 0
        self.events = 0
        self.pools = []       # bytes of each pool

    def pool(self, nbytes):
        """Index of a new pool of `nbytes`."""
        self.pools.append(nbytes)
        return len(self.pools) - 1

    def text(self, declared=()):
        """The globals, constructor and destructor (LLVM dialect text);
        `declared`: runtime functions the module declares already."""
        if not (self.streams or self.events or self.pools):
            return ""
        # Pools are allocated and freed on stream 0: a program whose only
        # ops are coll.alloc still needs that one stream.
        self.streams = max(self.streams, 1 if self.pools else 0)
        decls = [f"llvm.func @{n}({a})" + (f" -> {r}" if r else "")
                 for n, (a, r) in RUNTIME.items() if n not in declared]
        kinds = ((STREAMS, self.streams, "mgpuStreamCreate", "mgpuStreamDestroy"),
                 (EVENTS, self.events, "mgpuEventCreate", "mgpuEventDestroy"))
        init, fini = [], []
        for name, count, create, destroy in kinds:
            for k in range(count):
                v = f"%{name}_v{k}"
                init += _slot(name, k) + [f"{v} = llvm.call @{create}() : () -> !llvm.ptr",
                                          f"llvm.store {v}, %{name}_p{k} : !llvm.ptr, !llvm.ptr"]
                fini += _slot(name, k) + [f"{v} = llvm.load %{name}_p{k} : !llvm.ptr -> !llvm.ptr",
                                          f"llvm.call @{destroy}({v}) : (!llvm.ptr) -> ()"]
        # Pools: allocated once (cuMemAlloc, and cuMemFree synchronizes the
        # device: neither belongs in a call), freed before the streams go.
        s0 = [f"%s0_a = llvm.mlir.addressof @{STREAMS} : !llvm.ptr",
              "%s0 = llvm.load %s0_a : !llvm.ptr -> !llvm.ptr"] if self.pools else []
        pool_init, pool_fini = list(s0), list(s0)
        for k, nbytes in enumerate(self.pools):
            v = f"%{POOLS}_v{k}"
            pool_init += _slot(POOLS, k) + [
                f"%n{k} = llvm.mlir.constant({nbytes} : i64) : i64",
                f"%host{k} = llvm.mlir.constant(0 : i8) : i8",
                f"{v} = llvm.call @mgpuMemAlloc(%n{k}, %s0, %host{k}) : (i64, !llvm.ptr, i8) -> !llvm.ptr",
                f"llvm.store {v}, %{POOLS}_p{k} : !llvm.ptr, !llvm.ptr"]
            pool_fini += _slot(POOLS, k) + [
                f"{v} = llvm.load %{POOLS}_p{k} : !llvm.ptr -> !llvm.ptr",
                f"llvm.call @mgpuMemFree({v}, %s0) : (!llvm.ptr, !llvm.ptr) -> ()"]
        if self.pools:
            pool_fini.append("llvm.call @mgpuStreamSynchronize(%s0) : (!llvm.ptr) -> ()")

        def func(name, lines):
            return f"llvm.func internal @{name}() {{\n" + "".join(
                f"  {x}\n" for x in lines + ["llvm.return"]) + "}"
        arrays = [_array_global(name, count) for name, count in (
            (STREAMS, self.streams), (EVENTS, self.events), (POOLS, len(self.pools))) if count]
        return "\n".join(decls + arrays + [func(INIT, init + pool_init), func(FINI, pool_fini + fini),
            f"llvm.mlir.global_ctors ctors = [@{INIT}], priorities = [{CTOR_PRIORITY} : i32], "
            "data = [#llvm.zero]",
            f"llvm.mlir.global_dtors dtors = [@{FINI}], priorities = [{CTOR_PRIORITY} : i32], "
            "data = [#llvm.zero]"])

    def install(self, module_op):
        """Adds text() to the module."""
        body = module_op.regions[0].blocks[0]
        declared = {ir.StringAttr(op.operation.attributes["sym_name"]).value
                    for op in body.operations if op.operation.name == "llvm.func"}
        text = self.text(declared)
        if not text:
            return
        parsed = ir.Module.parse(text)
        for op in list(parsed.body.operations):
            body.append(op.operation)


class Chains:
    """One chain of async ops per key (a logical device, or a GPU), each on
    its program-long stream, for one function (see the module doc)."""

    def __init__(self, program, entry):
        self.program = program
        self.entry = entry    # the function's first op: handles load before it
        self.stream = {}      # chain -> (stream ptr value, token value)
        self.gen = 0          # bumped by every host sync: older tokens are done
        self.head = {}        # chain -> _Tok
        self.count = {}       # chain -> ops issued on it
        self.bases = {}       # global name -> its address, taken once

    def _handle(self, name, index):
        """Entry-block load of globals[name][index]."""
        with ir.InsertionPoint(self.entry):
            if name not in self.bases:
                self.bases[name] = llvm.mlir_addressof(_ptr(), name)
            return _load_global(self.bases[name], index)

    def _stream(self, chain):
        if chain not in self.stream:
            k = len(self.stream)
            self.program.streams = max(self.program.streams, k + 1)
            s = self._handle(STREAMS, k)
            with ir.InsertionPoint(self.entry):
                tok = ir.Operation.create("builtin.unrealized_conversion_cast",
                                          results=[_token_type()], operands=[s]).result
            self.stream[chain] = (s, tok)
        return self.stream[chain]

    def _event(self, tok):
        """The event recorded right after `tok`'s op (made on first need)."""
        if tok.event is None:
            k = self.program.events
            self.program.events += 1
            tok.event = self._handle(EVENTS, k)
            with ir.InsertionPoint.after(tok.op), tok.op.location:
                _call("mgpuEventRecord", [tok.event, self._stream(tok.chain)[0]])
        return tok.event

    def _new(self, value, chain, clocks, op):
        pos = self.count.get(chain, 0) + 1
        self.count[chain] = pos
        clock = {}
        for c in clocks:
            for k, v in c.items():
                clock[k] = max(clock.get(k, 0), v)
        clock[chain] = pos
        tok = _Tok(value, chain, pos, clock, self.gen, op)
        self.head[chain] = tok
        return tok

    def needed(self, chain, deps):
        """The deps that `chain` must still wait for, minimal."""
        head = self.head.get(chain)
        known = head.clock if head else {}
        live = []
        for t in deps:
            if t.gen == self.gen and not _implies(known, t) and t not in live:
                live.append(t)
        return [t for t in live
                if not any(o is not t and _implies(o.clock, t) for o in live)]

    def _wait_for(self, chain, toks):
        stream = self._stream(chain)[0]
        for t in toks:
            _call("mgpuStreamWaitEvent", [stream, self._event(t)])

    def issue(self, chain, deps, make):
        """Emits `make(stream token) -> token value` on `chain` after `deps`."""
        need = self.needed(chain, deps)
        self._wait_for(chain, need)
        value = make(self._stream(chain)[1])
        head = self.head.get(chain)
        clocks = ([head.clock] if head else []) + [t.clock for t in need]
        return self._new(value, chain, clocks, value.owner)

    def sync(self):
        """Host sync: every live chain joins the one whose head implies the
        most others, and the host waits on that stream once."""
        heads = [h for h in self.head.values() if h.gen == self.gen]
        if heads:
            main = max(reversed(heads), key=lambda h: sum(_implies(h.clock, o) for o in heads))
            self._wait_for(main.chain, [h for h in heads if not _implies(main.clock, h)])
            _call("mgpuStreamSynchronize", [self._stream(main.chain)[0]])
        self.gen += 1
        self.head = {}

    def pool(self, index, nbytes):
        """Scratch pool `index` (made by the constructor) as memref<Bxi8>."""
        i64 = ir.IntegerType.get_signless(64)
        ptr = self._handle(POOLS, index)
        with ir.InsertionPoint(self.entry):
            d = llvm.mlir_poison(_descriptor_type(1))
            for pos, v in (([0], ptr), ([1], ptr), ([2], 0), ([3, 0], nbytes), ([4, 0], 1)):
                if isinstance(v, int):
                    v = llvm.mlir_constant(ir.IntegerAttr.get(i64, v))
                d = llvm.insertvalue(d, v, ir.DenseI64ArrayAttr.get(pos))
            t = ir.MemRefType.get([nbytes], ir.IntegerType.get_signless(8))
            return ir.Operation.create("builtin.unrealized_conversion_cast", results=[t],
                                       operands=[d]).result
