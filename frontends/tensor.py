"""coll-bufferize: tensor collectives -> the destination-passing memref form,
for upstream one-shot-bufferize to finish the function.

Each tensor collective becomes

    %in  = bufferization.to_buffer %t [read_only]    one per input
    %out = memref.alloc()   (or %in, in place)       one per output
    linalg.fill 0 -> %out   (the outputs the op leaves alone, zero_outputs)
    %tok = coll.<collective>(%in..., %out..., deps...)
    %r   = bufferization.to_tensor %out restrict writable

so that `builtin.module(coll-bufferize, one-shot-bufferize{...})` bufferizes
functions that mix linalg and collectives. In place (all_reduce, reduce,
broadcast: an output on its input's device) when the input tensor has no
use after the collective and may be written: that to_buffer is not
`read_only`, so one-shot-bufferize sees a write of the input and copies it
first where that would clobber a value still needed (upstream's conflict
analysis decides; we only choose the form that needs no copy).

Value semantics over asynchronous ops: a collective that reads another's
result gets its token in `deps`; one that writes in place into a tensor an
earlier collective reads waits for that reader; and a `coll.wait` is put
before the first later op that is not a coll op and touches a tensor or a
memref (host code sees finished values), or before the terminator.
"""
from mlir import ir
from mlir.dialects import arith, bufferization, memref

from ..core.errors import PassError
from ..core.registry import register
from ..ir.kinds import ELEMENTS
from ..ir.ops import COLLECTIVE_NAMES, CollectiveOp
from ..ir.views import VIEW_OPS, root_of
from ..ir.walk import ancestor_in, find_ops
from ..passes.check_results import RESULT_IDS, RESULT_READERS
from .spmd import collective_of

WRITABLE = "bufferization.writable"  # upstream's function-argument attribute


def _token_type() -> ir.Type:
    return ir.Type.parse("!coll.token")


def _check_types(c: CollectiveOp) -> None:
    for role, v in [(f"input #{i}", v) for i, v in enumerate(c.inputs)] + \
                   [(f"result #{j + 1}", v) for j, v in enumerate(c.values)]:
        t = ir.RankedTensorType(v.type)
        if not t.has_static_shape:
            raise PassError(f"{role} is {t}; coll-bufferize needs static shapes (dynamic shapes are "
                            "not supported yet)", c.location)
        if str(t.element_type) not in ELEMENTS:
            raise PassError(f"{role} has unsupported element type {t.element_type}; expected one of: "
                            f"{', '.join(ELEMENTS)}", c.location)


def _func_of(op: ir.Operation) -> ir.Operation | None:
    f = op.parent
    while f is not None and f.name != "func.func":
        f = f.parent
    return f


def _writable(value: ir.Value) -> bool:
    """Whether one-shot-bufferize may write into the buffer of `value`: a
    function argument unless marked `bufferization.writable = false`."""
    if not isinstance(value.owner, ir.Block):
        return True
    parent = value.owner.owner.operation
    if parent.name != "func.func" or "arg_attrs" not in parent.attributes:
        return True
    attrs = ir.ArrayAttr(parent.attributes["arg_attrs"])
    d = ir.DictAttr(attrs[value.arg_number])
    return not (WRITABLE in d and str(d[WRITABLE]) == "false")


def _used_after(t: ir.Value, op: ir.Operation, mine: int = 0) -> bool:
    """Whether `t` has a use other than `mine` uses by `op` that does not
    come before `op` in its block (writing its buffer then would clobber
    a value still read)."""
    for use in t.uses:
        user = use.owner.operation
        if user == op and mine:
            mine -= 1
            continue
        at = ancestor_in(user, op.block)
        if at is None or not at.is_before_in_block(op):
            return True
    return mine != 0


# Tensor ops whose result one-shot-bufferize puts in (a view of) the buffer of
# operand 0 (views) or of operand 1 (inserts into a destination).
_VIEW_TENSOR_OPS = ("tensor.extract_slice", "tensor.cast", "tensor.expand_shape", "tensor.collapse_shape",
                    "tensor.reshape", "tensor.bitcast")
_INSERT_TENSOR_OPS = ("tensor.insert_slice", "tensor.insert")


def _ties(op: ir.Operation, value: ir.Value) -> list[ir.Value] | None:
    """The results of `op` that one-shot-bufferize may place in the buffer of
    its operand `value`; None when `op` may alias it in ways not known here
    (loops, calls, regions of other ops)."""
    name = op.name
    operands = list(op.operands)
    if name.startswith("linalg.") and op.results:
        inits = operands[len(operands) - len(op.results):]  # destination-passing: result k in init k
        return [r for r, init in zip(op.results, inits) if init == value]
    if name in _VIEW_TENSOR_OPS:
        return list(op.results) if operands[0] == value else []
    if name in _INSERT_TENSOR_OPS:
        return list(op.results) if operands[1] == value else []
    if name in COLLECTIVE_NAMES or name.startswith(("bufferization.", "func.return", "arith.", "math.")) \
            or name in ("tensor.extract", "tensor.dim", "tensor.empty", "coll.wait", "scf.yield"):
        return []  # reads it (a collective: its results are rewritten to buffers of their own)
    return None


def _sources(op: ir.Operation, value: ir.Value, state: "_State") -> list[ir.Value] | None:
    """The operands whose buffer the result `value` of `op` may share; None
    when not known."""
    name = op.name
    operands = list(op.operands)
    if name.startswith("linalg."):
        k = list(op.results).index(value)
        return [operands[len(operands) - len(op.results) + k]]
    if name in _VIEW_TENSOR_OPS:
        return [operands[0]]
    if name in _INSERT_TENSOR_OPS:
        return [operands[1]]
    if name == "bufferization.to_tensor":  # a collective's result: in its input's buffer when in place
        src = state.in_place.get(value)
        return [src] if src is not None else []
    if name in ("tensor.empty", "arith.constant"):
        return []
    return None


def _alias_class(t: ir.Value, state: "_State") -> set[ir.Value] | None:
    """Every tensor whose buffer may be `t`'s once one-shot-bufferize has run,
    following destination-passing ties and tensor views both ways; None when
    some link is not known (a loop's block argument, a call, an unknown op)."""
    seen, work = {t}, [t]
    while work:
        v = work.pop()
        if isinstance(v.owner, ir.Block):
            parent = v.owner.owner.operation
            # A function's argument, or a loop's iter_arg: this iteration's
            # value (one-shot-bufferize sees the write of the collective's
            # to_buffer and resolves the init and the loop's results itself).
            if parent.name not in ("func.func", "scf.for") or (parent.name == "scf.for" and v.arg_number == 0):
                return None
            linked: list[ir.Value] | None = []
        else:
            producer = v.owner.operation
            linked = _sources(producer, v, state)
            if linked is None:
                return None
        for use in v.uses:
            user = use.owner.operation
            tied = _ties(user, v)
            if tied is None:
                return None
            linked = linked + tied
        for w in linked:
            if _tensor_type(w.type) and w not in seen:
                seen.add(w)
                work.append(w)
    return seen


def _in_place_safe(t: ir.Value, op: ir.Operation, state: "_State") -> bool:
    """Whether the collective `op` may write its result into the buffer of its
    input `t`: no tensor that may share that buffer (`_alias_class`) is used
    after `op` or is a read-only argument. The result's to_tensor claims
    `restrict` (no other tensor has its buffer), which is true only then: a
    later op writing into a buffer of the same class (one-shot reuses a
    tensor.empty's buffer for every destination that needs no copy) would
    clobber the collective's result while it is still read."""
    group = _alias_class(t, state)
    if group is None:
        return False
    # t itself: read once by op, and by nothing after it.
    return all(_writable(v) and not _used_after(v, op, mine=int(v == t)) for v in group)


def _in_place(c: CollectiveOp, i: int, j: int, spmd: bool) -> bool:
    """Whether output j may be input i (the op's in-place form)."""
    if not c.IN_PLACE:
        return False
    if spmd:
        return i == j == 0
    return c.input_devices[i] == c.output_devices[j]


def _touches_buffers(op: ir.Operation) -> bool:
    types = [v.type for v in op.operands] + [r.type for r in op.results]
    return any(isinstance(t, (ir.RankedTensorType, ir.MemRefType, ir.UnrankedTensorType,
                              ir.UnrankedMemRefType)) for t in types) or len(op.regions) > 0


def _wait_before_host(new: ir.Operation, token: ir.Value) -> None:
    """coll.wait(token) before the first later op of the block that is not a
    coll op and touches a buffer, or before the terminator; none when a coll
    op (a wait, or a collective that is waited for) takes `token` by then."""
    block_ops = list(new.block.operations)
    idx = [o.operation for o in block_ops].index(new)
    where: ir.Operation | None = None
    for view_op in block_ops[idx + 1:]:
        o = view_op.operation
        if o.name.startswith("coll.") and token in list(o.operands):
            return  # waited for, or a dependency of a later op that is (see bufferize)
        if o.name.startswith("coll.") or o.name in ("bufferization.to_tensor", "bufferization.to_buffer"):
            continue
        if _touches_buffers(o) or o == block_ops[-1].operation:
            where = o
            break
    if where is None:
        where = block_ops[-1].operation
    with ir.InsertionPoint(where), new.location:
        ir.Operation.create("coll.wait", results=[], operands=[token])


def _fill_zeros(buf: ir.Value) -> None:
    """linalg.fill of zeros into `buf` (local work, before the collective)."""
    from mlir.dialects import linalg  # its opdsl costs a tool's start-up 0.1 s: only here
    el = ir.MemRefType(buf.type).element_type
    value = ir.IntegerAttr.get(el, 0) if ELEMENTS[str(el)].integer else ir.FloatAttr.get(el, 0.0)
    zero = arith.ConstantOp(el, value).result
    linalg.fill(zero, outs=[buf])


def _bufferize_one(op: ir.Operation, state: "_State") -> ir.Operation:
    c = collective_of(op)
    _check_types(c)
    f = _func_of(op)
    spmd = f is not None and "coll.ranks" in f.attributes
    ins, values = c.inputs, c.values
    # Output j -> the input it is written into, in place, or None.
    source: list[int | None] = []
    used: set[int] = set()
    for j in range(len(values)):
        i = next((i for i, t in enumerate(ins) if i not in used and _in_place(c, i, j, spmd)
                  and _in_place_safe(t, op, state)), None)
        source.append(i)
        if i is not None:
            used.add(i)
    deps = list(c.deps)
    for t in ins:  # reading another collective's result: after it
        tok = state.producer.get(t)
        if tok is not None and tok not in deps:
            deps.append(tok)
    for i in used:  # writing what earlier collectives read: after them
        deps += [tok for tok in state.readers.get(ins[i], []) if tok not in deps]
    with ir.InsertionPoint(op), op.location:
        bufs: list[ir.Value] = []
        for i, t in enumerate(ins):
            tt = ir.RankedTensorType(t.type)
            mt = ir.MemRefType.get(list(tt.shape), tt.element_type)
            bufs.append(bufferization.ToBufferOp(mt, t, read_only=i not in used).result)
        outs: list[ir.Value] = []
        zero = c.zero_outputs(spmd)
        for j, v in enumerate(values):
            tt = ir.RankedTensorType(v.type)
            src = source[j]
            if src is not None:
                outs.append(bufs[src])
            else:
                outs.append(memref.AllocOp(ir.MemRefType.get(list(tt.shape), tt.element_type), [], []).result)
                if j in zero:  # what the op does not write is zeros in the tensor form (e.g. permute)
                    _fill_zeros(outs[-1])
        attrs = {a: op.attributes[a] for a in op.attributes}
        first = state.count + 1
        state.count += len(values)
        attrs[RESULT_IDS] = ir.DenseI64ArrayAttr.get(list(range(first, state.count + 1)))
        attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(bufs), len(outs), len(deps)])
        new = ir.Operation.create(op.name, results=[_token_type()], operands=bufs + outs + deps,
                                  attributes=attrs)
        results = [bufferization.ToTensorOp(v.type, b, restrict=True, writable=True).result
                   for v, b in zip(values, outs)]
    token = new.results[0]
    for t in ins:
        state.readers.setdefault(t, []).append(token)
    op.results[0].replace_all_uses_with(token)
    for k, (v, r) in enumerate(zip(values, results)):
        v.replace_all_uses_with(r)
        state.producer[r] = token
        src = source[k]
        if src is not None:
            state.in_place[r] = ins[src]
        _tag_readers(r, first + k)
    op.erase()
    return new


def _tag_readers(value: ir.Value, k: int) -> None:
    """Marks every op that reads `value` (through tensor views too) with
    RESULT_READERS += [k], for coll-check-results to find after bufferization
    (linalg ops, loops and collectives keep their attributes there)."""
    for use in list(value.uses):
        user = use.owner.operation
        if user.name in _VIEW_TENSOR_OPS and use.operand_number == 0:
            for r in user.results:
                _tag_readers(r, k)
            continue
        old = list(ir.DenseI64ArrayAttr(user.attributes[RESULT_READERS])) \
            if RESULT_READERS in user.attributes else []
        if k not in old:
            user.attributes[RESULT_READERS] = ir.DenseI64ArrayAttr.get(old + [k])


def _tensor_type(t: ir.Type) -> bool:
    return isinstance(t, (ir.RankedTensorType, ir.UnrankedTensorType))


def has_tensors(module_op: ir.Operation) -> bool:
    """Whether `module_op` holds a tensor collective or a function with
    tensors in its signature: what `route` turns into buffers."""
    for op in find_ops(module_op, lambda n: n == "func.func" or n in COLLECTIVE_NAMES):
        if op.name != "func.func":
            if collective_of(op).is_tensor:
                return True
            continue
        ft = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        if any(_tensor_type(t) for t in list(ft.inputs) + list(ft.results)):
            return True
    return False


class _State:
    def __init__(self) -> None:
        self.producer: dict[ir.Value, ir.Value] = {}  # tensor -> token of the collective that produced it
        self.readers: dict[ir.Value, list[ir.Value]] = {}  # tensor -> tokens of the collectives that read it
        self.in_place: dict[ir.Value, ir.Value] = {}  # a result written into its input's buffer -> that input
        self.count = 0      # the last RESULT_IDS given


@register("coll-bufferize",
          "Rewrite tensor collectives into the memref form (to_buffer of the inputs, an alloc per output "
          "or the input's buffer in place, to_tensor restrict of the outputs), for one-shot-bufferize")
def bufferize(op: ir.Operation) -> None:
    state = _State()
    news = [_bufferize_one(c, state) for c in find_ops(op, lambda n: n in COLLECTIVE_NAMES)
            if collective_of(c).is_tensor]
    # Last first: a collective that a later one waits on (deps) before any
    # host op needs no wait of its own, the later one's covers it.
    for new in reversed(news):
        _wait_before_host(new, new.results[0])


def _escapes(value: ir.Value) -> bool:
    """Whether a buffer (or a view of it) leaves its function or is freed."""
    for use in value.uses:
        user = use.owner.operation
        if user.name in VIEW_OPS:
            if any(_escapes(r) for r in user.results):
                return True
        elif user.name in ("func.return", "func.call", "memref.dealloc", "memref.store",
                           "bufferization.to_tensor"):
            return True
    return False


@register("coll-distinct-results",
          "Give each memref a function returns a buffer of its own: a buffer returned a second time is copied "
          "into a new allocation (upstream buffer-results-to-out-params{hoist-static-allocs} crashes on one "
          "allocation returned twice, LLVM 22.1.8)")
def distinct_results(op: ir.Operation) -> None:
    for ret in find_ops(op, "func.return"):
        seen: set[ir.Value] = set()
        for i, v in enumerate(list(ret.operands)):
            if not isinstance(v.type, ir.MemRefType):
                continue
            root = root_of(v)[0]
            if root in seen:
                mt = ir.MemRefType(v.type)
                with ir.InsertionPoint(ret), ret.location:
                    copy = memref.AllocOp(ir.MemRefType.get(list(mt.shape), mt.element_type), [], []).result
                    memref.CopyOp(v, copy)
                ret.operands[i] = copy
            else:
                seen.add(root)


@register("coll-free-local-buffers",
          "Free, at the end of its function, every memref.alloc of the function's entry block that "
          "does not escape it (upstream's buffer-deallocation-pipeline refuses the coll ops: IRDL ops "
          "declare no memory effects in LLVM 22)")
def free_local_buffers(op: ir.Operation) -> None:
    for f in find_ops(op, "func.func"):
        if not len(f.regions[0].blocks):
            continue
        block = f.regions[0].blocks[0]
        ops = [o.operation for o in block.operations]
        local = [o for o in ops if o.name == "memref.alloc" and not _escapes(o.results[0])]
        with ir.InsertionPoint(ops[-1]), f.location:
            for a in local:
                memref.DeallocOp(a.results[0])


@register("coll-entry",
          "Make function `function` an entry as the runtimes call it: its tensor arguments are the caller's "
          "arrays, read-only (bufferization.writable = false: its collectives write fresh buffers), and it "
          "gets the C interface (llvm.emit_c_interface)", anchor="builtin.module", function=(str, ""))
def entry(module_op: ir.Operation, function: str = "") -> None:
    name = function
    funcs = [f for f in find_ops(module_op, "func.func") if ir.StringAttr(f.attributes["sym_name"]).value == name]
    if not funcs:
        raise PassError(f"coll-entry: no function @{name} in the module", module_op.location)
    func = funcs[0]
    with module_op.context:
        ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        old = list(ir.ArrayAttr(func.attributes["arg_attrs"])) if "arg_attrs" in func.attributes else []
        attrs, changed = [], False
        for i, t in enumerate(ft.inputs):
            d: dict[str, ir.Attribute] = {}
            if i < len(old):
                given = ir.DictAttr(old[i])
                d = {given[k].name: given[k].attr for k in range(len(given))}
            if isinstance(t, ir.RankedTensorType) and WRITABLE not in d:
                d[WRITABLE] = ir.BoolAttr.get(False)
                changed = True
            attrs.append(ir.DictAttr.get(d))
        if changed:  # only then: a later pass that changes the arguments need not know of it
            func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
        func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()


# -- the frontend (frontends/__init__.py) --------------------------------------
NAME = "tensor"
# its arguments are what the entry function takes.
GLOBAL = False
detect = has_tensors


def route(module_op: ir.Operation | None = None, backend: object = None, **_: object) -> list[str]:
    """Tensor form -> memref form: coll-bufferize, then upstream's
    one-shot-bufferize over whole functions (plain memrefs at their
    boundaries, as the collectives need contiguous buffers; a collective
    on loop-carried tensors yields its own buffer), then memref results as
    out-parameters (the entry convention: inputs, then outputs), the static
    allocations of returned buffers becoming those parameters; the other
    allocations freed at the function's end."""
    return ["coll-bufferize",
            "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map "
            "allow-return-allocs-from-loops}",
            "coll-check-results",
            "coll-distinct-results",
            "buffer-results-to-out-params{hoist-static-allocs modify-public-functions}",
            "coll-free-local-buffers"]
