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

Graphs (`graph=true`, the default; not for a function with local work
around its collectives, GRAPH_SAFE). A call of ~100 small copies and
launches costs more host time to enqueue than the GPU needs to run it, so
the whole call is one CUDA graph, captured once and replayed (the shim
lowering/gpu/graph.c; upstream's wrappers have no graph calls). The
function's work moves to a private `__coll_body_<name>` whose first chain's
stream is the capture's origin: every other chain first waits on an event
recorded on it at the start (fork), a coll.wait joins every chain into it
(no host sync inside a capture) and forks again, and the work ends joined
into it. The public function keeps the name and signature:

  mode = __coll_call_begin(state, key, stream 0)   key: each buffer's address
  mode 1 (capture): body; ok = __coll_capture_end   and offset: new buffers,
  mode 0 or ok: __coll_graph_launch                 new capture
  mode 2 (direct, or capture refused): body
  __coll_call_end; mgpuStreamSynchronize(stream 0)

so a warm call is one graph launch and one sync. The body also runs as it
is, without capture (COLL_CUDA_GRAPHS=0): fork and join are plain event
waits then.
"""
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence

from mlir import ir
from mlir.dialects import gpu, llvm

from .legalize_memcpy import _descriptor_type

STREAMS, EVENTS, POOLS = "__coll_streams", "__coll_events", "__coll_pools"
INIT, FINI = "__coll_init", "__coll_fini"
GRAPH_STATE, BODY_PREFIX = "__coll_graph_", "__coll_body_"
GRAPH_WORDS = 4  # coll_graph in graph.c
GRAPH_CALLS = {  # name: (arguments, result); lowering/gpu/graph.c
    "__coll_call_begin": ("!llvm.ptr, !llvm.ptr, i64, !llvm.ptr", "i32"),
    "__coll_capture_end": ("!llvm.ptr, !llvm.ptr", "i32"),
    "__coll_graph_launch": ("!llvm.ptr, !llvm.ptr", None),
    "__coll_call_end": ("!llvm.ptr, !llvm.ptr", None),
    "__coll_graph_destroy": ("!llvm.ptr", None),
}
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


Chain = Hashable  # what orders ops on one stream (to_gpu.py: a device, a side of a copy, local work)
Clock = dict[Chain, int]  # per chain, the ops of it that a token follows


def _token_type() -> ir.Type:
    return gpu.AsyncTokenType.get()


def _ptr() -> ir.Type:
    return ir.Type.parse("!llvm.ptr")


def _call(name: str, args: Iterable[ir.Value], result: ir.Type | None = None) -> ir.Value:
    return llvm.call(result, list(args), [], [], callee=ir.FlatSymbolRefAttr.get(name))


def _load_global(base: ir.Value, index: int) -> ir.Value:
    """base[index] (`base`: the address of an array of pointers)."""
    slot = llvm.getelementptr(_ptr(), base, [], ir.DenseI32ArrayAttr.get([index]),
                              ir.TypeAttr.get(_ptr()), ir.IntegerAttr.get(
                                  ir.IntegerType.get_signless(32), 0))
    return llvm.load(_ptr(), slot)


def _key_words(types: Sequence[ir.Type]) -> tuple[list[str], int]:
    """Lines storing the graph key of memref arguments %a<i> of `types`
    into %key (each buffer's aligned address and offset, and its sizes and
    strides where the type leaves them dynamic); returns (lines, words)."""
    lines: list[str] = []
    k = 0

    def store(value: str) -> None:
        nonlocal k
        lines.extend([f"%ki{k} = arith.index_cast {value} : index to i64",
                      f"%ks{k} = llvm.getelementptr %key[{k}] : (!llvm.ptr) -> !llvm.ptr, i64",
                      f"llvm.store %ki{k}, %ks{k} : i64, !llvm.ptr"])
        k += 1
    for i, t in enumerate(types):
        mt = ir.MemRefType(t)
        lines.append(f"%p{i} = memref.extract_aligned_pointer_as_index %a{i} : {t} -> index")
        store(f"%p{i}")
        rank = mt.rank
        res = f"%b{i}, %o{i}" + (f", %sz{i}:{rank}, %st{i}:{rank}" if rank else "")
        types_out = ", ".join([str(ir.MemRefType.get([], mt.element_type))] + ["index"] * (1 + 2 * rank))
        lines.append(f"{res} = memref.extract_strided_metadata %a{i} : {t} -> {types_out}")
        store(f"%o{i}")
        strides, _ = mt.get_strides_and_offset()
        dyn = ir.ShapedType.get_dynamic_size()
        if any(d == dyn for d in mt.shape) or any(x == ir.ShapedType.get_dynamic_stride_or_offset()
                                                  for x in strides):
            for d in range(rank):
                store(f"%sz{i}#{d}")
                store(f"%st{i}#{d}")
    return lines, k


# What a function may hold besides coll ops for its call to be one graph:
# views and constants. Local work (linalg kernels around a collective,
# launched by upstream's synchronous gpu.launch_func: a stream made and
# synced per launch) cannot be captured, and needs the host syncs.
GRAPH_SAFE = ("func.return", "arith.constant", "memref.subview", "memref.collapse_shape",
              "memref.expand_shape", "memref.cast", "memref.memory_space_cast", "memref.view",
              "memref.reinterpret_cast")


def _graph_safe(func: ir.Operation) -> bool:
    ok = [True]

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name != "func.func" and not op.name.startswith("coll.") and op.name not in GRAPH_SAFE:
            ok[0] = False
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    func.walk(visit, ir.WalkOrder.POST_ORDER)  # (the default; the stubs have none)
    return ok[0]


def _is_memref(t: ir.Type) -> bool:
    try:
        ir.MemRefType(t)
        return True
    except ValueError:
        return False


def _sync_at_returns(func: ir.Operation) -> None:
    """The host sync of a graph-mode function that cannot be wrapped."""
    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.return":
            with ir.InsertionPoint(op), op.location:
                base = llvm.mlir_addressof(_ptr(), STREAMS)
                _call("mgpuStreamSynchronize", [llvm.load(_ptr(), base)])
        return ir.WalkResult.ADVANCE
    func.walk(visit, ir.WalkOrder.POST_ORDER)


def _wrap(func: ir.Operation, k: int) -> None:
    """Moves `func`'s work into a private body and gives `func` the graph
    calls of the module doc (graph state `k`)."""
    name = ir.StringAttr(func.attributes["sym_name"]).value
    ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs = list(ft.inputs)
    if ft.results or not all(_is_memref(t) for t in inputs):
        _sync_at_returns(func)  # runs its work directly: correct, one sync
        return
    body = BODY_PREFIX + name
    sig = ", ".join(f"%a{i}: {t}" for i, t in enumerate(inputs))
    args = ", ".join(f"%a{i}" for i in range(len(inputs)))
    arg_types = ", ".join(str(t) for t in inputs)
    key, words = _key_words(inputs)
    state = f"{GRAPH_STATE}{k}"
    call = f"func.call @{body}({args}) : ({arg_types}) -> ()"
    lines = [f"%n = llvm.mlir.constant({max(words, 1)} : i64) : i64",
             "%key = llvm.alloca %n x i64 : (i64) -> !llvm.ptr"] + key + [
        f"%sa = llvm.mlir.addressof @{STREAMS} : !llvm.ptr",
        "%s0 = llvm.load %sa : !llvm.ptr -> !llvm.ptr",
        f"%g = llvm.mlir.addressof @{state} : !llvm.ptr",
        "%mode = llvm.call @__coll_call_begin(%g, %key, %n, %s0) : "
        "(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32",
        "cf.switch %mode : i32, [default: ^direct, 0: ^launch, 1: ^capture]",
        "^capture:", call,
        "%ok = llvm.call @__coll_capture_end(%g, %s0) : (!llvm.ptr, !llvm.ptr) -> i32",
        "%zero = llvm.mlir.constant(0 : i32) : i32",
        '%good = llvm.icmp "ne" %ok, %zero : i32',
        "cf.cond_br %good, ^launch, ^direct",
        "^launch:",
        "llvm.call @__coll_graph_launch(%g, %s0) : (!llvm.ptr, !llvm.ptr) -> ()",
        "cf.br ^done",
        "^direct:", call, "cf.br ^done",
        "^done:",
        "llvm.call @__coll_call_end(%g, %s0) : (!llvm.ptr, !llvm.ptr) -> ()",
        "llvm.call @mgpuStreamSynchronize(%s0) : (!llvm.ptr) -> ()",
        "func.return"]
    text = "\n".join([
        f"func.func @{name}({sig}) {{"] + ["  " + x if not x.startswith("^") else x for x in lines] + [
        "}",
        f"func.func private @{body}({arg_types})",
        f"llvm.mlir.global internal @{STREAMS}() {{addr_space = 0 : i32}} : !llvm.array<1 x ptr>",
        f"llvm.mlir.global internal @{state}() {{addr_space = 0 : i32}} : !llvm.array<{GRAPH_WORDS} x i64>"]
        + [f"llvm.func @{n}({a})" + (f" -> {r}" if r else "") for n, (a, r) in GRAPH_CALLS.items()]
        + ["llvm.func @mgpuStreamSynchronize(!llvm.ptr)"])
    with func.location:
        parsed = ir.Module.parse(text)  # kept alive until its op is moved out
    wrapper = parsed.body.operations[0].operation
    module = func.parent
    assert module is not None  # (a function of a module)
    module.regions[0].blocks[0].append(wrapper)
    wrapper.move_before(func)
    keep = ("sym_name", "function_type", "sym_visibility")
    for attr in list(func.attributes):  # names
        if attr not in keep:
            wrapper.attributes[attr] = func.attributes[attr]
            del func.attributes[attr]
    func.attributes["sym_name"] = ir.StringAttr.get(body)
    func.attributes["sym_visibility"] = ir.StringAttr.get("private")
    func.attributes["llvm.linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")


class _Tok:
    """A point on a chain: the vector clock of what is complete when it is
    (chain -> ops of that chain), the op that made it and its event."""
    __slots__ = ("value", "chain", "pos", "clock", "gen", "op", "event")

    def __init__(self, value: ir.Value, chain: Chain, pos: int, clock: Clock, gen: int, op: ir.OpView) -> None:
        self.value, self.chain, self.pos, self.clock = value, chain, pos, clock
        self.gen, self.op = gen, op
        self.event: ir.Value | None = None


def _implies(clock: Mapping[Chain, int], tok: _Tok) -> bool:
    return clock.get(tok.chain, 0) >= tok.pos


def _array_global(name: str, count: int) -> str:
    arr = f"!llvm.array<{count} x ptr>"
    return (f"llvm.mlir.global internal @{name}() {{addr_space = 0 : i32}} : {arr} {{\n"
            f"  %z = llvm.mlir.zero : {arr}\n  llvm.return %z : {arr}\n}}")


def _state_global(name: str) -> str:
    arr = f"!llvm.array<{GRAPH_WORDS} x i64>"
    return (f"llvm.mlir.global internal @{name}() {{addr_space = 0 : i32}} : {arr} {{\n"
            f"  %z = llvm.mlir.zero : {arr}\n  llvm.return %z : {arr}\n}}")


def _slot(name: str, k: int) -> list[str]:
    """Lines that leave the address of name[k] in %<name>_p<k>."""
    return [f"%{name}_a{k} = llvm.mlir.addressof @{name} : !llvm.ptr",
            f"%{name}_p{k} = llvm.getelementptr %{name}_a{k}[{k}] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr"]


class Program:
    """The module's host state: how many streams, events and pools the
    constructor makes (streams shared by the module's functions; each
    function has its own events and pool)."""

    def __init__(self, graph: bool = True) -> None:
        self.streams = 0
        self.events = 0
        self.pools: list[int] = []  # bytes of each pool
        self.graph = graph    # each function's call as one CUDA graph
        self.functions: list[Chains] = []  # the Chains of each function
        self.graphs = 0       # graph states (one per wrapped function)

    def pool(self, nbytes: int) -> int:
        """Index of a new pool of `nbytes`."""
        self.pools.append(nbytes)
        return len(self.pools) - 1

    def text(self, declared: Collection[str] = ()) -> str:
        """The globals, constructor and destructor (LLVM dialect text);
        `declared`: runtime functions the module declares already."""
        if not (self.streams or self.events or self.pools or self.graphs):
            return ""
        # Pools are allocated and freed on stream 0: a program whose only
        # ops are coll.alloc still needs that one stream.
        self.streams = max(self.streams, 1 if self.pools else 0)
        calls = dict(RUNTIME, **(GRAPH_CALLS if self.graphs else {}))
        decls = [f"llvm.func @{n}({a})" + (f" -> {r}" if r else "")
                 for n, (a, r) in calls.items() if n not in declared]
        kinds = ((STREAMS, self.streams, "mgpuStreamCreate", "mgpuStreamDestroy"),
                 (EVENTS, self.events, "mgpuEventCreate", "mgpuEventDestroy"))
        init: list[str] = []
        fini: list[str] = []
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
        # Graphs go first: an instantiated graph refers to the events and pools.
        graph_fini: list[str] = []
        for k in range(self.graphs):
            graph_fini += [f"%g{k} = llvm.mlir.addressof @{GRAPH_STATE}{k} : !llvm.ptr",
                           f"llvm.call @__coll_graph_destroy(%g{k}) : (!llvm.ptr) -> ()"]

        def func(name: str, lines: list[str]) -> str:
            return f"llvm.func internal @{name}() {{\n" + "".join(
                f"  {x}\n" for x in lines + ["llvm.return"]) + "}"
        arrays = [_array_global(name, count) for name, count in (
            (STREAMS, self.streams), (EVENTS, self.events), (POOLS, len(self.pools))) if count]
        arrays += [_state_global(f"{GRAPH_STATE}{k}") for k in range(self.graphs)]
        return "\n".join(decls + arrays + [func(INIT, init + pool_init),
                                           func(FINI, graph_fini + pool_fini + fini),
            f"llvm.mlir.global_ctors ctors = [@{INIT}], priorities = [{CTOR_PRIORITY} : i32], "
            "data = [#llvm.zero]",
            f"llvm.mlir.global_dtors dtors = [@{FINI}], priorities = [{CTOR_PRIORITY} : i32], "
            "data = [#llvm.zero]"])

    def install(self, module_op: ir.Operation) -> None:
        """Wraps each function that enqueues work in graph mode (see the
        module doc), then adds text() to the module."""
        if self.graph:
            for chains in self.functions:
                if chains.graph and chains.count:
                    _wrap(chains.func, self.graphs)
                    self.graphs += 1
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

    def __init__(self, program: Program, entry: ir.Operation | ir.OpView) -> None:
        self.program = program
        program.functions.append(self)
        func = entry.operation.parent
        assert func is not None  # (an op of a function)
        self.func = func
        self.entry = entry    # the function's first op: handles load before it
        self.graph = program.graph and _graph_safe(self.func)
        self.origin: Chain | None = None  # graph mode: the chain of stream 0, the capture's origin
        self.forked: set[Chain] = set()  # graph mode: chains that joined the current gen
        # graph mode: (event, where to record it) of the current gen
        self.fork: tuple[ir.Value | None, ir.InsertionPoint | None] | None = None
        self.stream: dict[Chain, tuple[ir.Value, ir.Value]] = {}  # chain -> (stream ptr value, token value)
        self.gen = 0          # bumped by every host sync: older tokens are done
        self.head: dict[Chain, _Tok] = {}  # chain -> _Tok
        self.count: dict[Chain, int] = {}  # chain -> ops issued on it
        self.bases: dict[str, ir.Value] = {}  # global name -> its address, taken once

    def _handle(self, name: str, index: int) -> ir.Value:
        """Entry-block load of globals[name][index]."""
        with ir.InsertionPoint(self.entry):
            if name not in self.bases:
                self.bases[name] = llvm.mlir_addressof(_ptr(), name)
            return _load_global(self.bases[name], index)

    def _stream(self, chain: Chain) -> tuple[ir.Value, ir.Value]:
        if chain not in self.stream:
            k = len(self.stream)
            if k == 0:
                self.origin = chain
            self.program.streams = max(self.program.streams, k + 1)
            s = self._handle(STREAMS, k)
            with ir.InsertionPoint(self.entry):
                tok = ir.Operation.create("builtin.unrealized_conversion_cast",
                                          results=[_token_type()], operands=[s]).result
            self.stream[chain] = (s, tok)
        return self.stream[chain]

    def _event(self, tok: _Tok) -> ir.Value:
        """The event recorded right after `tok`'s op (made on first need)."""
        if tok.event is None:
            k = self.program.events
            self.program.events += 1
            tok.event = self._handle(EVENTS, k)
            with ir.InsertionPoint.after(tok.op), tok.op.location:
                _call("mgpuEventRecord", [tok.event, self._stream(tok.chain)[0]])
        return tok.event

    def _new(self, value: ir.Value, chain: Chain, clocks: list[Clock], op: ir.OpView) -> _Tok:
        pos = self.count.get(chain, 0) + 1
        self.count[chain] = pos
        clock: Clock = {}
        for c in clocks:
            for k, v in c.items():
                clock[k] = max(clock.get(k, 0), v)
        clock[chain] = pos
        tok = _Tok(value, chain, pos, clock, self.gen, op)
        self.head[chain] = tok
        return tok

    def needed(self, chain: Chain, deps: Iterable[_Tok]) -> list[_Tok]:
        """The deps that `chain` must still wait for, minimal."""
        head = self.head.get(chain)
        known = head.clock if head else {}
        live: list[_Tok] = []
        for t in deps:
            if t.gen == self.gen and not _implies(known, t) and t not in live:
                live.append(t)
        return [t for t in live
                if not any(o is not t and _implies(o.clock, t) for o in live)]

    def _wait_for(self, chain: Chain, toks: Iterable[_Tok]) -> None:
        stream = self._stream(chain)[0]
        for t in toks:
            _call("mgpuStreamWaitEvent", [stream, self._event(t)])

    def _join_capture(self, chain: Chain) -> None:
        """Graph mode: a chain's first op of a gen waits on the fork event,
        recorded on the origin stream where the gen began (so the chain is
        in the capture, and after everything before that point)."""
        stream = self._stream(chain)[0]
        if chain == self.origin or chain in self.forked:
            return
        self.forked.add(chain)
        if self.fork is None or isinstance(self.fork[1], ir.InsertionPoint):
            start = self.fork[1] if self.fork else None
            where = start if start is not None else ir.InsertionPoint(self.entry)
            k = self.program.events
            self.program.events += 1
            event = self._handle(EVENTS, k)
            with where:
                _call("mgpuEventRecord", [event, self._stream(self.origin)[0]])
            self.fork = (event, None)
        recorded, _ = self.fork
        assert recorded is not None  # (recorded above, or earlier in this gen)
        _call("mgpuStreamWaitEvent", [stream, recorded])

    def issue(self, chain: Chain, deps: Iterable[_Tok], make: Callable[[ir.Value], ir.Value]) -> _Tok:
        """Emits `make(stream token) -> token value` on `chain` after `deps`."""
        if self.graph:
            self._join_capture(chain)
        need = self.needed(chain, deps)
        self._wait_for(chain, need)
        value = make(self._stream(chain)[1])
        head = self.head.get(chain)
        clocks = ([head.clock] if head else []) + [t.clock for t in need]
        return self._new(value, chain, clocks, value.owner)

    def sync(self) -> None:
        """Host sync: every live chain joins the one whose head implies the
        most others, and the host waits on that stream once. Graph mode: no
        host sync (none may be inside a capture); every live chain joins the
        origin, and the next gen forks from there."""
        heads = [h for h in self.head.values() if h.gen == self.gen]
        if self.graph:
            if self.origin is not None:
                top = self.head.get(self.origin)
                top = top if top is not None and top.gen == self.gen else None
                self._wait_for(self.origin, [h for h in heads if h.chain != self.origin and not (
                    top is not None and _implies(top.clock, h))])
            self.gen += 1
            self.head = {}
            self.forked = set()
            self.fork = (None, ir.InsertionPoint.current)
            return
        if heads:
            main = max(reversed(heads), key=lambda h: sum(_implies(h.clock, o) for o in heads))
            self._wait_for(main.chain, [h for h in heads if not _implies(main.clock, h)])
            _call("mgpuStreamSynchronize", [self._stream(main.chain)[0]])
        self.gen += 1
        self.head = {}

    def pool(self, index: int, nbytes: int) -> ir.Value:
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
