"""What a collective module computes, deterministic inputs for it, and the
numpy reference to check a run against (used by coll-run, tests, benches):
each collective's own reference (its `reference`, coll/collectives/),
outputs in the op's order.

Checks: integers and i1 exactly (sum and prod wrap around like the
program); max and min exactly, with IEEE semantics (NaN propagates,
-0 < +0); floats as values (±inf and NaN must match), overflow judged in
the element type, and a tolerance per element from the reduction depth and
Σ|x| (0 where every order is exact, as on the generated inputs, so one
missing or doubled contribution fails). Every replica of a multi-device
result must hold the same bits.
"""
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np
import numpy.typing as npt
from mlir import ir

from ..collectives import BY_NAME
from ..collectives.base import Collective
from ..frontends.spmd import RANK_INPUTS_ATTR, RANKS_ATTR
from ..ir.kinds import ELEMENTS, KINDS, order_matters
from ..ir.ops import ANY_ORDER, COLLECTIVE_NAMES, EACH_OR_TO_DEVICE, OPS, Combine, Copy, Implements, attr_ints, view
from ..ir.views import VIEW_OPS, constant_int, root_of
from ..ir.walk import find_ops
from .signature import (
    NUMPY_DTYPES,
    ArgSpec,
    aligned_zeros,
    classify_arguments,
    find_entry,
    from_stored,
    in_place_arguments,
    read_signature,
    to_buffers,
    to_stored,
    where,
)

# The numpy arrays of a run, one per input or output buffer.
Arrays = Sequence[np.ndarray]
# An expectation's flat judgement: (want, exact_ieee, special elements or None).
Judged = tuple[np.ndarray, bool, tuple | None]
# One expected output: (its values, the inputs it reduces, None for data movement).
ExpectedOutput = tuple[np.ndarray, list[np.ndarray] | None]

# Float facts from the one table of element types (ir/kinds.py).
_FLOATS = {n: e for n, e in ELEMENTS.items() if not e.integer}
EPS = {n: e.eps for n, e in _FLOATS.items()}
TINY = {n: e.tiny for n, e in _FLOATS.items()}
PRECISION = {n: 1 - int(np.log2(e.eps)) for n, e in _FLOATS.items()}  # significand bits
COMPUTE = {n: e.compute for n, e in _FLOATS.items()}  # the wider type kernels combine in
MAX_FINITE = {n: e.max_finite for n, e in _FLOATS.items()}


@dataclass
class Problem:
    """outputs[j] = (+)_i inputs[i] for every output j."""
    entry: str
    n_inputs: int
    n_outputs: int
    shape: tuple[int, ...]
    element: str
    kind: str | None   # None when the program has no reduction (one input)
    strategy: str | None = None  # requested in the module, if any
    collective: bool = False  # a collective op (else the explicit level)
    op: str = "all_reduce"    # which collective (its name without coll.)
    out_shape: tuple[int, ...] | None = None  # of each output argument (None: `shape`)
    attrs: dict[str, int | list[int]] = field(default_factory=dict)  # root, to_device, the axes
    alias: tuple[int | None, ...] = ()  # per op output: the input it is (in place), else None
    depth: int | None = None  # explicit level: most combines on a path to an output (None: N-1)
    # Whether a reference is known: a collective op, or a coll.implements
    # on the function's arguments. An explicit program without one runs
    # unchecked (coll-run says so): what it should compute is nowhere said.
    checked: bool = True
    # SPMD collectives over several groups of ranks (one axis of a grid):
    # per group, the global positions of its ranks in group order; the
    # reference and the replica comparison are per group. (): one group.
    groups: tuple[tuple[int, ...], ...] = ()

    @property
    def summary(self) -> str:
        """What is run, for a table's title: 'all_reduce sum', ..."""
        if not self.checked:
            return "explicit program (no coll.implements on its arguments, unchecked)"
        what = f"{self.op} {self.kind or 'copy'}"
        if self.groups:
            return f"{what} in {len(self.groups)} group(s) of {len(self.groups[0])} ({self.groups_text})"
        return what

    @property
    def groups_text(self) -> str:
        return " ".join("[" + ",".join(map(str, g)) + "]" for g in self.groups)

    @property
    def output_shape(self) -> tuple[int, ...]:
        return self.shape if self.out_shape is None else self.out_shape

    @property
    def bytes_per_device(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * NUMPY_DTYPES[self.element].itemsize


def _ops(func: ir.OpView, name: str | Callable[[str], bool]) -> list[ir.Operation]:
    return find_ops(func, name)


class WholeProgram(ValueError):
    """The entry is more than one collective on its arguments (local work
    around it, several collectives): no numpy reference of its own; it runs
    as a program (coll-run: unchecked, strategies compared)."""


def describe(module: ir.Module, entry: str | None = None) -> Problem:
    """The Problem of a parsed module at the collective or explicit level
    (in the tensor form: bufferized in place first, as a runtime runs it).
    Raises ValueError whose `location` is the entry function's (or the
    module's when there is no entry)."""
    try:
        func = find_entry(module, entry)
        to_buffers(module, entry)
        func = find_entry(module, entry)
    except ValueError as e:
        e.location = module.operation.location  # type: ignore[attr-defined]  # read by coll-run (getattr)
        raise
    try:
        return _describe(func)
    except ValueError as e:
        e.location = func.location  # type: ignore[attr-defined]  # read by coll-run (getattr)
        raise


def _describe(func: ir.OpView) -> Problem:
    name, specs = read_signature(func)
    found = _ops(func, lambda n: n in COLLECTIVE_NAMES)
    if len(found) > 1:
        raise WholeProgram(f"@{name} holds {len(found)} collectives; coll-run checks one")
    if found:
        local = [op for op in func.regions[0].blocks[0].operations
                 if not op.operation.name.startswith("coll.")
                 and op.operation.name not in ("func.return", "arith.constant") + VIEW_OPS]  # a view is no work
        if local:  # e.g. a frontend's linalg around its collective: no reference here
            raise WholeProgram(f"@{name} has local work around its collective ('{local[0].operation.name}' at "
                               f"{where(local[0].operation)}); coll-run checks a function that is one collective "
                               "on its arguments: run this one from Python (coll.lowering.cpu.compile(text).run) "
                               "against your own reference")
        c = view(found[0])
        assert isinstance(c, Collective)  # found by its name in COLLECTIVE_NAMES
        return _describe_collective(func, name, specs, c)
    claims = _ops(func, Implements.NAME)
    if len(claims) == 1 and RANKS_ATTR not in func.attributes and _on_arguments(func, Implements.of(claims[0])):
        return _describe_claim(func, name, specs, Implements.of(claims[0]))
    if not _ops(func, "coll.copy") and not _ops(func, "coll.combine"):
        raise WholeProgram(f"@{name} holds no collective, coll.copy or coll.combine: "
                           "nothing to check against numpy")
    kinds = {Combine.of(op).kind for op in _ops(func, "coll.combine")}
    kind = kinds.pop() if len(kinds) == 1 else None
    if RANKS_ATTR in func.attributes:
        # A per-rank program (coll-to-mpi): the global view is every rank's
        # buffers, its inputs as the projection counted them.
        ranks = ir.IntegerAttr(func.attributes[RANKS_ATTR]).value
        k_in = ir.IntegerAttr(func.attributes[RANK_INPUTS_ATTR]).value
        n_in: int | None = ranks * k_in
        why, specs = None, specs * ranks
        in_place: list[int] = []
    else:
        n_in, why = classify_arguments(func)
        in_place = in_place_arguments(func) if n_in is not None else []
    # What does not fit one collective's problem (no input, an input after
    # an output, several shapes) runs as a program: coll-run's unchecked job.
    if n_in is None:
        raise WholeProgram(f"@{name}: {why}")
    # Its outputs: the arguments it writes, in order (an input written in
    # place is one of them).
    written = sorted(set(in_place) | set(range(n_in, len(specs))))
    if not written:
        raise WholeProgram(f"@{name} writes none of its arguments: no output")
    if n_in < 1:
        raise WholeProgram(f"@{name} has no input argument (every argument is only written)")
    if len({s for s in specs}) != 1:
        raise WholeProgram(f"@{name}: all arguments must have one shape and element type")
    alias = tuple(k if k < n_in else None for k in written) if in_place else ()
    return Problem(name, n_in, len(specs) - n_in, specs[0].shape, specs[0].element, kind,
                   depth=combine_depth(func), alias=alias, checked=False)


def combine_depth(func: ir.OpView) -> int | None:
    """The most coll.combine ops on any data path from an input to an
    output: each rounds to the element type once. Followed per root buffer
    (whole buffers, so never less than the truth) in program order, which
    the order check (run before) makes the order data flows in. None when
    another op writes memory (its effect on rounding is not known)."""
    depth: dict[ir.Value, int] = {}

    def of(v: ir.Value) -> int:
        return depth.get(root_of(v)[0], 0)

    for o in func.regions[0].blocks[0].operations:
        op = o.operation
        if op.name == "coll.copy":
            c = Copy.of(op)
            r = root_of(c.target)[0]
            depth[r] = max(depth.get(r, 0), of(c.source))
        elif op.name == "coll.combine":
            cb = Combine.of(op)
            r = root_of(cb.out)[0]
            depth[r] = max(depth.get(r, 0), 1 + max(of(v) for v in cb.inputs))
        elif writer_of_op(op):
            return None
    return max(depth.values(), default=0)


def plain_program(text: str) -> str:
    """`text` with every collective forced to its plainest strategy
    (Collective.PLAIN): the reference a program with local work is checked
    against (coll-run), built with no fusion and on one core. A program
    whose collectives are another dialect's (shard, StableHLO) is brought
    to coll's first, by its frontends' routes."""
    from ..frontends import FRONTENDS
    from ..ir import make_context
    from .program import Program
    with make_context():
        module = ir.Module.parse(text)
        program = Program.of(module.operation)
        for frontend in FRONTENDS:
            if program.index.find(lambda name: name in COLLECTIVE_NAMES):
                break
            if program.detected(frontend):
                program.run(frontend.route(module.operation, None))
        from ..passes.check_semantics import unclaimed
        if unclaimed(module.operation):  # (its explicit ops as they are: compared with themselves, `ok`)
            raise ValueError("it would run the program's coll.copy/coll.combine that no coll.implements claims as "
                             "they are, so it would check nothing of them")
        runs = 0
        for op in find_ops(module.operation, lambda name: name in COLLECTIVE_NAMES):
            c = cast(Collective, view(op))
            element = ir.ShapedType(c.inputs[0].type).element_type if c.inputs else None
            if c.order == ANY_ORDER and element is not None and not ELEMENTS[str(element)].integer:
                raise Reassociated(f"{op.name} has order = \"{ANY_ORDER}\" on {element}: its strategies may sum in "
                                 "other orders than the plain program, by more than its outputs can bound")
            op.attributes["strategy"] = ir.StringAttr.get(BY_NAME[op.name].PLAIN)
            runs += _trips(op)
        if runs > PLAIN_RUNS:
            raise ValueError(f"the plain program would run {runs} collectives unrolled on the CPU (its loops; "
                             f"at most {PLAIN_RUNS} are checked)")
        return str(module.operation.get_asm(enable_debug_info=True))


class Reassociated(ValueError):
    """A program whose float sums its strategies may associate as they
    like (order = "any"): no other run bounds its outputs' difference."""


# The most collective runs a plain program unrolls (the CPU route unrolls the
# loops around collectives: a check of a few seconds at most).
PLAIN_RUNS = 256


def _trips(op: ir.Operation) -> int:
    """How often `op` runs: the product of the trip counts of the scf.for
    loops around it (1 where one is not constant: the CPU route refuses it)."""
    n, at = 1, op.parent
    while at is not None and at.name != "func.func":
        if at.name == "scf.for":
            lo, hi, step = (constant_int(at.operands[k]) for k in range(3))
            if lo is not None and hi is not None and step:
                n *= max(0, -(-(hi - lo) // step))
        at = at.parent
    return n


def writer_of_op(op: ir.Operation) -> bool:
    """Might `op` (not a coll copy or combine) write memory?"""
    if op.name.startswith("coll.") or op.name in ("func.return", "arith.constant") \
            or op.name in VIEW_OPS:
        return False
    return any(isinstance(v.type, ir.MemRefType) for v in op.operands) or bool(op.regions)


def _describe_collective(func: ir.OpView, name: str, specs: list[ArgSpec], c: Collective) -> Problem:
    what = c.op.name
    args = list(func.regions[0].blocks[0].arguments)
    ins = list(c.inputs)
    alias = tuple(ins.index(o) if o in ins else None for o in c.outputs)
    extra = [o for o, a in zip(c.outputs, alias) if a is None]
    if ins + extra != args or c.deps:  # views of them, another order: no reference of its own
        raise WholeProgram(f"the operands of {what} must be the arguments of @{name}, in order "
                           "(inputs, then the outputs that are not inputs), with no deps")
    n_in = len(ins)
    if len({s for s in specs[:n_in]}) != 1 or len({s for s in specs[n_in:]}) > 1:
        raise ValueError(f"@{name}: inputs must have one shape and element type, outputs another")
    attrs: dict[str, int | list[int]] = {
        k: v for k in ("root", "to_device") + c.AXES if (v := _int_attr(c.op, k)) is not None}
    attrs.update({k: v for k, v in c.arrays.items() if v is not None})  # e.g. a permute's pairs
    out_shape = tuple(ir.MemRefType(c.outputs[0].type).shape)
    n_out = len(extra)
    groups: tuple[tuple[int, ...], ...] = ()
    if RANKS_ATTR in func.attributes:  # SPMD form: one rank's buffers, every rank's in all
        ranks = ir.IntegerAttr(func.attributes[RANKS_ATTR]).value
        # In place, rank r's output is its input r.
        n_in, n_out, alias = n_in * ranks, n_out * ranks, tuple(range(ranks)) if alias == (0,) else ()
        if c.ROOTED:
            attrs["spmd"] = 1  # every rank holds an input and an output buffer (see _expect)
        if "groups" in c.op.attributes:  # several groups: positions in a group, ranks in `groups`
            flat, size = list(ir.DenseI64ArrayAttr(c.op.attributes["groups"])), len(c.devices)
            groups = tuple(tuple(flat[i:i + size]) for i in range(0, len(flat), size))
    return Problem(name, n_in, n_out, specs[0].shape, specs[0].element,
                   c.kind if c.HAS_KIND else None, c.strategy, True, what[len("coll."):],
                   out_shape, attrs, alias, groups=groups)


def _on_arguments(func: ir.OpView, claim: Implements) -> bool:
    """Whether the claim's buffers are the function's arguments, in order
    (inputs, then the outputs that are not inputs); else (views of them)
    the program is read as an allreduce of its arguments."""
    ins = list(claim.inputs)
    extra = [o for o in claim.outputs if o not in ins]
    return ins + extra == list(func.regions[0].blocks[0].arguments)


def _describe_claim(func: ir.OpView, name: str, specs: list[ArgSpec], claim: Implements) -> Problem:
    """An explicit program that claims its collective (coll.implements):
    the Problem of that collective, checked like one at the collective level."""
    what = claim.collective
    cls = OPS.get("coll." + str(what))
    if cls is None or cls.NAME not in COLLECTIVE_NAMES:
        raise ValueError(f"@{name} claims '{what}', which is no collective coll-run knows")
    assert issubclass(cls, Collective)  # a registered collective's class
    ins = list(claim.inputs)
    alias = tuple(ins.index(o) if o in ins else None for o in claim.outputs)
    extra = [o for o, a in zip(claim.outputs, alias) if a is None]
    n_in = len(ins)
    if len({s for s in specs[:n_in]}) != 1 or len({s for s in specs[n_in:]}) > 1:
        raise ValueError(f"@{name}: inputs must have one shape and element type, outputs another")
    attrs = {k: v for k, v in (("root", claim.root), ("to_device", claim.to_device)) if v is not None}
    attrs.update(zip(cls.AXES, claim.axes if claim.axes is not None else [0] * len(cls.AXES)))
    attrs.update({k: v for k in cls.ARRAYS if (v := attr_ints(claim.operation, k)) is not None})
    out_shape = tuple(ir.MemRefType(claim.outputs[0].type).shape) if claim.outputs else None
    return Problem(name, n_in, len(extra), specs[0].shape, specs[0].element,
                   claim.kind if cls.HAS_KIND else None, None, False, what, out_shape, attrs, alias,
                   depth=combine_depth(func))


def _int_attr(op: ir.Operation, key: str) -> int | None:
    try:
        return ir.IntegerAttr(op.attributes[key]).value
    except (KeyError, ValueError):
        return None


def op_outputs(problem: Problem, inputs: Arrays, outputs: Arrays) -> list[np.ndarray]:
    """The op's outputs, in its order, after a run that was given `inputs`
    and `outputs` (in place, an output is the input array it was)."""
    if not problem.alias:
        return list(outputs)
    rest = iter(outputs)
    return [inputs[a] if a is not None else next(rest) for a in problem.alias]


def make_inputs(problem: Problem, seed: int = 0) -> list[np.ndarray]:
    """Deterministic inputs on which a correct program is exact in any
    order, so that `check` needs no tolerance for them and a missing or
    doubled contribution of any device shows: float sum on a grid k·2^-g
    with N·|k| < 2^p (every partial sum representable), prod ±2^e (every
    partial product a power of two), max/min ±2^U(-12, 12); integers
    over their whole range, i1 uniform. bf16, fp8 as their bits."""
    rng = np.random.default_rng(seed)
    shape, el = problem.shape, problem.element
    n = max(problem.n_inputs, 1)
    out: list[np.ndarray] = []
    for _ in range(problem.n_inputs):
        if el in EPS:
            if problem.kind == "prod":
                # Exponents mostly 0, so partial products stay far from overflow.
                e = rng.choice([-1, 0, 1], shape, p=[_p(n), 1 - 2 * _p(n), _p(n)])
                v = np.ldexp(rng.choice([-1.0, 1.0], shape), e)
            elif problem.kind in ("max", "min"):
                # Spread over 24 octaves (fp8: its normal range): ties at the
                # top are rare even in bf16.
                lo = max(-12.0, np.log2(TINY[el]))
                hi = min(12.0, np.floor(np.log2(MAX_FINITE[el])))
                v = rng.choice([-1.0, 1.0], shape) * 2.0 ** rng.uniform(lo, hi, shape)
            else:
                k = max(1, min(1024, (2 ** PRECISION[el] - 1) // n))
                ints, scale = rng.integers(-k, k, shape, endpoint=True), 2.0 ** -int(k).bit_length()
                if not ELEMENTS[el].ml_dtype:  # exact in the element type: scaled there, not through float64
                    dtype = NUMPY_DTYPES[el]
                    out.append(ints.astype(dtype) * dtype.type(scale))
                    continue
                v = ints * scale
            out.append(to_stored(v, el))
        elif el == "i1":
            out.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            info = np.iinfo(NUMPY_DTYPES[el])
            out.append(rng.integers(info.min, info.max, shape, dtype=NUMPY_DTYPES[el], endpoint=True))
    return [np.asarray(x).reshape(shape) for x in out]  # rank 0: arrays, not scalars


def _p(n: int) -> float:
    return min(0.25, 2.0 / n)


def make_outputs(problem: Problem) -> list[np.ndarray]:
    return [aligned_zeros(problem.output_shape, NUMPY_DTYPES[problem.element])
            for _ in range(problem.n_outputs)]


_UFUNC = {name: getattr(np, k.numpy) for name, k in KINDS.items()}


def as_float(a: npt.ArrayLike, element: str) -> np.ndarray:
    return np.asarray(from_stored(a, element), np.float64)


def _round(values: np.ndarray, element: str) -> np.ndarray:
    """float64 values rounded to the element type (inf where it overflows),
    back as float64."""
    return as_float(_stored(values, element), element)


def reference(problem: Problem, inputs: Arrays) -> np.ndarray:
    """(+)_i inputs[i] in numpy: float64 for floats (max/min with IEEE
    semantics: NaN propagates, -0 < +0), the element type (with wrap-around)
    for integers."""
    if problem.kind is None:
        return _values(problem, inputs)[0]
    fn = _UFUNC[problem.kind]
    if problem.element in EPS:
        xs = [as_float(x, problem.element) for x in inputs]
        with np.errstate(all="ignore"):
            acc = xs[0].copy()
            for x in xs[1:]:
                acc = fn(acc, x)
        if problem.kind in ("max", "min"):  # np.maximum(-0, +0) is -0; IEEE says +0
            want_neg = problem.kind == "min"
            zeros = [(x == 0) & (np.signbit(x) == want_neg) for x in xs]
            hit = np.logical_or.reduce(zeros) if zeros else np.zeros(acc.shape, bool)
            acc = np.where(acc == 0, np.where(hit, -0.0, 0.0) if want_neg else np.where(hit, 0.0, -0.0), acc)
        return acc
    acc = inputs[0].copy()
    for x in inputs[1:]:
        fn(acc, x, out=acc)
    return acc


_fold = reference  # what _expect reduces each output from


def canonical(kind: str, element: str, inputs: Arrays) -> np.ndarray:
    """What the order contract (ir/ops.py ORDERS) computes, bit for bit:
    the contributions folded in device order, ((x_0 (+) x_1) (+) x_2) ...,
    in the type the kernels combine the element in (f32 for f16, bf16, fp8,
    ir/kinds.py `compute`; else the type itself), rounded once to the
    element type at the end; stored as the inputs are (bf16, fp8: bits).
    Integers wrap. Float max and min have no order to fix: ValueError."""
    fn, xs = _UFUNC[kind], list(inputs)
    if ELEMENTS[element].integer:
        acc = np.array(xs[0], copy=True)
        for x in xs[1:]:
            fn(acc, x, out=acc)
        return acc
    if not order_matters(kind, element):
        raise ValueError(f"{kind} on {element} does not depend on the order; use reference()")
    wide = NUMPY_DTYPES[ELEMENTS[element].compute or element]  # numpy rounds each step to it
    acc = as_float(xs[0], element).astype(wide)
    with np.errstate(all="ignore"):
        for x in xs[1:]:
            acc = fn(acc, as_float(x, element).astype(wide))
    return _stored(acc.astype(np.float64), element)


def _odd_part(a: np.ndarray) -> np.ndarray:
    """Per element: (2^-e·|a| made an odd integer, as float64) — the
    significand without trailing zero bits (1 for zero)."""
    m, _ = np.frexp(np.abs(a))
    mi = (m * 2.0 ** 53).astype(np.int64)
    mi = np.where(mi == 0, 1, mi)
    low = mi & -mi
    return (mi // low).astype(np.float64)


def _grid(a: np.ndarray) -> np.ndarray:
    """The largest power of two dividing every finite nonzero a (inf for 0):
    from the bits, |a| less |a| with its lowest set bit cleared (the same
    binade, so the difference is exact); |a| itself where the significand
    bits are all zero (a power of two). Non-finite a: meaningless."""
    b = np.ascontiguousarray(a, np.float64).view(np.int64) & np.int64(0x7FFFFFFFFFFFFFFF)
    mag = b.view(np.float64)
    g = np.where((b & np.int64((1 << 52) - 1)) == 0, mag, mag - (b & (b - 1)).view(np.float64))
    g[mag == 0] = np.inf
    return g


def _values(problem: Problem, inputs: Arrays) -> list[np.ndarray]:
    if problem.element in EPS:
        return [as_float(x, problem.element) for x in inputs]
    return [np.array(x) for x in inputs]


def _n_out(problem: Problem) -> int:
    return len(problem.alias) if problem.alias else problem.n_outputs


def _ranks(problem: Problem) -> int:
    """N: the devices the collective spans."""
    cls = BY_NAME.get("coll." + problem.op)
    return _n_out(problem) if cls is not None and cls.PER_DEVICE == "outputs" else problem.n_inputs


def _expect(problem: Problem, inputs: Arrays) -> list[ExpectedOutput | None]:
    """[(expected output j, the inputs it reduces)] of the collective (its
    numpy `reference`, coll/collectives/)."""
    cls = BY_NAME.get("coll." + problem.op)
    if cls is None:
        raise ValueError(f"no reference for {problem.op}")
    values, fold, attrs = _values(problem, inputs), (lambda xs: _fold(problem, xs)), problem.attrs
    if not attrs.get("spmd"):
        return cls.reference(list(inputs), values, fold, attrs, _ranks(problem), _n_out(problem))
    # SPMD form: every rank holds an input and an output buffer; the
    # collective's placement says which of them it reads and writes.
    n, root, to = _ranks(problem), _scalar(attrs, "root"), _scalar(attrs, "to_device")
    ins = cls.PLACEMENT.devices("inputs", list(range(n)), root, to)
    outs = cls.PLACEMENT.devices("outputs", list(range(n)), root, to)
    plain = {k: v for k, v in attrs.items() if k != "spmd"}
    got = cls.reference([inputs[d] for d in ins], [values[d] for d in ins], fold, plain, n, len(outs))
    by_rank = dict(zip(outs, got))
    return [by_rank.get(j) for j in range(_n_out(problem))]


def _scalar(attrs: dict[str, int | list[int]], key: str) -> int | None:
    """An integer attribute of a Problem (root, to_device), or None."""
    value = attrs.get(key)
    assert not isinstance(value, list), f"{key} holds one integer"
    return value


def tolerance(problem: Problem, inputs: Arrays, ref: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per element: (allowed |output - ref|, the non-finite results that an
    order-dependent overflow can give: a dict of masks '+inf', '-inf',
    'nan'). The tolerance is 0 where every partial result of any order is
    exact in the element type (the inputs of `make_inputs`); else the bound
    of a chain of N-1 roundings (every strategy combines each element that
    way; kernels compute in a type at least as precise), or, for an explicit
    program in a type that kernels widen (f16, bf16), of `depth` roundings
    to it and N-1 in the wider type, from Σ|x| (sum) or
    |ref| (prod), plus one final rounding, the float64 reference's own
    rounding and the subnormal spacing."""
    el, kind = problem.element, problem.kind
    none = np.zeros(np.shape(ref), bool)
    if el not in EPS or kind in (None, "max", "min"):
        return np.zeros(np.shape(ref)), {"+inf": none, "-inf": none, "nan": none}
    xs = [as_float(x, el) for x in inputs]
    n, u, p = len(xs), EPS[el] / 2, PRECISION[el]
    big = float(MAX_FINITE[el])
    gamma = (n - 1) * u / (1 - (n - 1) * u) + u + (n - 1) * 2.0 ** -52
    if problem.depth is not None and COMPUTE[el]:
        # Kernels add in COMPUTE and round to the element type once per
        # combine: `depth` roundings of u, n-1 additions in the wider type.
        d, w = problem.depth, EPS[COMPUTE[el]] / 2
        gamma = d * u / (1 - d * u) + u + (n - 1) * w / (1 - (n - 1) * w) + (n - 1) * 2.0 ** -52
    with np.errstate(all="ignore"):
        if kind == "sum":
            pos = sum(np.where(x > 0, x, 0.0) for x in xs)
            neg = sum(np.where(x < 0, -x, 0.0) for x in xs)
            bound = np.maximum(pos, neg)  # |any partial sum|
            grid = np.minimum.reduce([_grid(x) for x in xs])
            exact = bound < np.ldexp(grid, p)  # every partial is k·grid, |k| < 2^p
            tol = gamma * (pos + neg) + n * TINY[el] * EPS[el]
            over = {"+inf": pos > big, "-inf": neg > big, "nan": (pos > big) & (neg > big)}
        else:
            hi = np.prod([np.maximum(np.abs(x), 1.0) for x in xs], axis=0)
            lo = np.prod([np.minimum(np.abs(x), 1.0) for x in xs], axis=0)
            zero = np.logical_or.reduce([x == 0 for x in xs])
            bits = sum(np.log2(_odd_part(x)) for x in xs)
            exact = (hi <= big) & (zero | ((bits < p) & (lo >= TINY[el])))
            tol = gamma * np.abs(ref) + n * TINY[el] * EPS[el] * hi
            negative = np.logical_xor.reduce([np.signbit(x) for x in xs])  # the sign of any order
            over = {"+inf": (hi > big) & ~negative, "-inf": (hi > big) & negative,
                    "nan": (hi > big) & zero}  # inf · 0
    finite = np.logical_and.reduce([np.isfinite(x) for x in xs])
    tol = np.where(exact | ~finite, 0.0, tol)
    return tol, {k: v & finite for k, v in over.items()}


def identical(outputs: Arrays) -> bool:
    """Whether every output holds the same bits (the replicas of a
    multi-device result)."""
    if not outputs:
        return True
    first = _words(outputs[0])
    return all(_same_words(first, _words(y)) for y in outputs[1:])


def _words(a: np.ndarray) -> np.ndarray:
    """The bytes of `a`, flat, as 8-byte words where they divide evenly
    (an eighth of the elements to compare)."""
    b = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    return b.view(np.uint64) if b.size % 8 == 0 else b


def _same_words(a: np.ndarray, b: np.ndarray) -> bool:
    """a == b everywhere, a block at a time (no temporary the size of a)."""
    if a.dtype != b.dtype or a.size != b.size:
        return False
    return all(np.array_equal(a[s:s + CHUNK], b[s:s + CHUNK]) for s in range(0, a.size, CHUNK))


def _same_value(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Floats equal as values: NaN matches NaN, ±inf matches itself, and
    zeros match zeros (their sign is checked for max/min only)."""
    return (got == want) | (np.isnan(got) & np.isnan(want))


def per_group(problem: Problem, inputs: Arrays, outputs: Arrays) -> list[tuple[Problem, Arrays, Arrays]]:
    """[(the problem of one group, its inputs, its outputs)]: one per group
    of an SPMD collective over several groups (rank r holds input r and
    output r), else the problem itself."""
    if not problem.groups:
        return [(problem, inputs, outputs)]
    return [(sub, [inputs[r] for r in g], [outputs[r] for r in g]) for g, sub in _subproblems(problem)]


def _subproblems(problem: Problem) -> list[tuple[tuple[int, ...], Problem]]:
    """[(ranks of a group, the problem of that group alone)]."""
    return [(g, replace(problem, n_inputs=len(g), n_outputs=len(g) if problem.n_outputs else 0,
                        alias=tuple(range(len(g))) if problem.alias else (), groups=()))
            for g in problem.groups]


def check(problem: Problem, inputs: Arrays, outputs: Arrays) -> tuple[bool, float]:
    """(ok, worst error over all outputs, as a float). `inputs` must be the
    values the program started from (a copy taken before the run);
    `outputs` are the op's outputs (op_outputs() for an in-place run).
    Fails when the replicas of a multi-device result differ in any bit.
    Over several groups: each group against its own reference."""
    if problem.groups:
        ranks = sorted(r for g in problem.groups for r in g)
        ok, worst = ranks == list(range(len(outputs))) == list(range(len(inputs))), 0.0
        for sub, xs, ys in per_group(problem, inputs, outputs):
            good, w = check(sub, xs, ys)
            ok, worst = ok and good, max(worst, w)
        return ok, worst
    return Expected(problem, inputs, explicit_outputs(problem, len(outputs))).verify(outputs)[:2]


def explicit_outputs(problem: Problem, n: int) -> int | None:
    """An explicit program's claim of a collective whose outputs are on each
    device or on one (all_reduce's to_device) has as many as it has (n);
    else None: the collective's own count."""
    cls = BY_NAME.get("coll." + problem.op)
    if problem.collective or cls is None or cls.PLACEMENT.outputs != EACH_OR_TO_DEVICE:
        return None
    return n


CHUNK = 1 << 20  # elements per block: bounds the float64 temporaries of the reference and the check


def _elementwise(problem: Problem) -> bool:
    """Whether output element e depends on input element e alone (a
    collective without axes: all_reduce, reduce, broadcast), so that the
    reference is computed block by block of flat elements."""
    cls = BY_NAME.get("coll." + problem.op)
    return (cls is None or not cls.AXES) and tuple(problem.output_shape) == tuple(problem.shape)


class Expected:
    """What a problem's outputs must hold, computed once from its inputs:
    a check of several runs on the same inputs (coll-run --strategy=all)
    pays for the numpy reference and the tolerances once. Per distinct
    expectation it keeps the expected values in the element type (compared
    there, exactly) and, apart, the few elements that need the full rule of
    `check` (a tolerance above 0, or an overflow some order gives): the
    generated inputs have none."""

    def __init__(self, problem: Problem, inputs: Arrays, n_out: int | None = None) -> None:
        self.problem = problem
        cls = BY_NAME.get("coll." + problem.op)
        self.replicated = cls is not None and cls.REPLICATED
        self.same: bool | None = None
        # Several groups of ranks (an SPMD collective over one axis of a
        # grid): one expectation per group, its replicas compared within it.
        self.parts = [(g, Expected(sub, [inputs[r] for r in g])) for g, sub in _subproblems(problem)] \
            if problem.groups else None
        if self.parts is not None:
            return
        el = problem.element
        self.floating = el in EPS
        self.dtype = NUMPY_DTYPES[el]
        total = int(np.prod(problem.output_shape, dtype=np.int64))
        self.slots: list[int | None] | None = None
        self.groups: list[_Group] = []
        blocks: list[tuple[int, int | None]] = [(0, None)]
        if _elementwise(problem) and inputs and total > CHUNK:
            blocks = [(s, min(s + CHUNK, total)) for s in range(0, total, CHUNK)]
        flat = [np.asarray(x).reshape(-1) for x in inputs]
        for start, end in blocks:
            xs = inputs if end is None else [x[start:end] for x in flat]
            entries = self._entries(xs, n_out)
            ids: dict[int, int] = {}
            slots = [None if e is None else ids.setdefault(id(e), len(ids)) for e in entries]
            if self.slots is None:
                self.slots = slots
                firsts: dict[int, ExpectedOutput] = {}
                for e, g in zip(entries, slots):
                    if e is not None and g is not None:
                        firsts.setdefault(g, e)
                self.groups = [_Group(total if end is not None else np.size(firsts[g][0]), self.dtype)
                               for g in range(len(ids))]
                by_group: list[ExpectedOutput | None] = [firsts[g] for g in range(len(ids))]
            else:
                assert slots == self.slots, "a collective's reference changed its shape between blocks"
                by_group = [None] * len(ids)
                for e, g in zip(entries, slots):
                    if g is not None:
                        by_group[g] = e
            for grp, entry in zip(self.groups, by_group):
                assert entry is not None  # every group has its entry in every block
                ref, reduced = entry
                grp.add(start, self._judge(ref, reduced))
        for grp in self.groups:
            grp.close()

    def _entries(self, xs: Arrays, n_out: int | None) -> list[ExpectedOutput | None]:
        problem = self.problem
        if n_out is None:
            return _expect(problem, xs)
        return [(reference(problem, xs), list(xs))] * n_out

    def _judge(self, ref: np.ndarray, reduced: Arrays | None) -> Judged:
        """(want in the element type, exact_ieee, special: (positions, ref,
        want, tol, over) of the elements the full rule judges), all flat."""
        problem, el = self.problem, self.problem.element
        if not self.floating:
            return np.asarray(ref, self.dtype).reshape(-1), False, None
        if reduced is not None and problem.kind is not None:
            tol, over = tolerance(problem, reduced, ref)
            exact_ieee = problem.kind in ("max", "min")
            want = ref if exact_ieee else _round(ref, el)
        else:  # data movement: every value as it was, the sign of zero too
            return _stored(np.asarray(ref).reshape(-1), el), True, None
        ref, want, tol = (np.asarray(a, np.float64).reshape(-1) for a in (ref, want, tol))
        over = {k: np.asarray(v).reshape(-1) for k, v in over.items()}
        special = np.flatnonzero((tol > 0) | over["+inf"] | over["-inf"] | over["nan"])
        picked = None
        if special.size:
            picked = (special, ref[special], want[special], tol[special], {k: v[special] for k, v in over.items()})
        return _stored(want, el), exact_ieee, picked

    def verify(self, outputs: Arrays) -> tuple[bool, float, int]:
        """(ok, worst error, number of wrong elements) of the op's outputs
        (see `check`); `self.same`: whether the replicas of a replicated
        result hold the same bits. Replicas that hold the same bits
        checked against the same expectation are judged once."""
        if self.parts is not None:
            ok, worst, wrong, same = True, 0.0, 0, True
            for ranks, e in self.parts:
                o, w, n = e.verify([outputs[r] for r in ranks]
                                   if len(outputs) == len(self.problem.groups) * len(ranks) else [])
                ok, worst, wrong, same = ok and o, max(worst, w), wrong + n, same and bool(e.same)  # verify set it
            self.same = same
            return ok, worst, wrong
        assert self.slots is not None  # set in __init__ when there are no parts
        same = self.same = identical(outputs) if self.replicated else True
        ok, worst, wrong = same, 0.0, 0
        seen: dict[int, tuple[int, float]] = {}
        for y, g in zip(outputs, self.slots):
            if g is None:  # not defined by the collective (an SPMD reduce off its root)
                continue
            if not (same and g in seen):  # identical bits against the same values: the same verdict
                seen[g] = self.groups[g].compare(np.asarray(y).reshape(-1), self.problem.element, self.floating)
            bad, err = seen[g]
            wrong += bad
            worst = max(worst, err)
            ok = ok and bad == 0
        return ok and len(outputs) == len(self.slots), worst, wrong


def _stored(values: np.ndarray, element: str) -> np.ndarray:
    """float64 values that the element type represents, in its storage
    (bf16 through f32, as it always was; fp8 rounded once, with ml_dtypes)."""
    return to_stored(values.astype(np.float32) if element == "bf16" else values, element)


class _Group:
    """One expectation: flat expected values and the specially judged elements."""

    def __init__(self, size: int, dtype: np.dtype) -> None:
        self.want = np.empty(size, dtype)
        self.exact_ieee = False
        self.parts: list[tuple] | None = []  # None once closed
        self.special: tuple | None = None

    def add(self, start: int, judged: Judged) -> None:
        assert self.parts is not None, "add after close"
        want, self.exact_ieee, special = judged
        self.want[start:start + want.size] = want
        if special is not None:
            idx, *rest = special
            self.parts.append((idx + start, *rest))

    def close(self) -> None:
        if self.parts:
            self.special = (np.concatenate([p[0] for p in self.parts]), *[np.concatenate([p[i] for p in self.parts])
                                                                          for i in (1, 2, 3)],
                            {k: np.concatenate([p[4][k] for p in self.parts]) for k in self.parts[0][4]})
        self.parts = None

    def compare(self, y: np.ndarray, element: str, floating: bool) -> tuple[int, float]:
        """(wrong elements, worst error) of flat output `y`."""
        if y.size != self.want.size:
            return max(y.size, self.want.size), float("inf")
        wrong, worst = 0, 0.0
        special = self.special
        for s in range(0, y.size, CHUNK):
            got, want = y[s:s + CHUNK], self.want[s:s + CHUNK]
            if floating:
                if ELEMENTS[element].ml_dtype:
                    got, want = from_stored(got, element), from_stored(want, element)
                bad = ~_same_value(got, want)
                if self.exact_ieee:
                    bad |= (np.signbit(got) != np.signbit(want)) & ~np.isnan(want)
            else:
                bad = got != want
            if special is not None:  # judged below, by the full rule
                lo, hi = np.searchsorted(special[0], [s, s + got.size])
                bad[special[0][lo:hi] - s] = False
            n = int(np.count_nonzero(bad))
            if n:
                wrong += n
                if floating:
                    with np.errstate(invalid="ignore"):
                        err = np.abs(got[bad].astype(np.float64) - want[bad].astype(np.float64))
                    worst = max(worst, float("inf") if not np.all(np.isfinite(err)) else float(np.max(err)))
        if special is not None:
            idx, ref, want, tol, over = special
            got = as_float(y[idx], element)
            with np.errstate(invalid="ignore"):
                err = np.abs(got - ref)
                finite_ok = np.isfinite(ref) & np.isfinite(got) & (err <= tol)
            good = _same_value(got, want) | finite_ok
            if self.exact_ieee:
                good &= (np.signbit(got) == np.signbit(want)) | np.isnan(want)
            good |= (over["+inf"] & (got == np.inf)) | (over["-inf"] & (got == -np.inf)) | (over["nan"] & np.isnan(got))
            bad = ~good
            n = int(np.count_nonzero(bad))
            if n:
                wrong += n
                worst = max(worst, float(np.max(np.where(bad & np.isfinite(err), err, 0.0))),
                            float("inf") if np.any(bad & ~np.isfinite(err)) else 0.0)
        return wrong, worst if floating else float(wrong)
