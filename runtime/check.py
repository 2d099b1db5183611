"""What a collective module computes, deterministic inputs for it, and the
numpy reference to check a run against (used by coll-run, tests, benches):
one reference per collective (`_EXPECT`), outputs in the op's order.

Checks: integers and i1 exactly (sum and prod wrap around like the
program); max and min exactly; float sum within (N+1)·eps·Σ|x_i| and float
prod within (N+1)·eps·|Π x_i|, eps of the element type (the order of the
reduction differs between strategies, and f16/bf16 partials are rounded
between ring steps).
"""
from dataclasses import dataclass, field

import numpy as np
from mlir import ir

from ..ir.ops import COLLECTIVES, Combine, view
from ..ir.walk import find_ops
from .signature import NUMPY_DTYPES, count_inputs, find_entry, from_bf16, read_signature, to_bf16

EPS = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23, "f64": 2.0 ** -52}
TINY = {"f16": 2.0 ** -14, "bf16": 2.0 ** -126, "f32": 2.0 ** -126, "f64": 2.0 ** -1022}


@dataclass
class Problem:
    """outputs[j] = (+)_i inputs[i] for every output j."""
    entry: str
    n_inputs: int
    n_outputs: int
    shape: tuple
    element: str
    kind: str          # None when the program has no reduction (one input)
    strategy: str = None  # requested in the module, if any
    collective: bool = False  # a collective op (else the explicit level)
    op: str = "all_reduce"    # which collective (its name without coll.)
    out_shape: tuple = None   # of each output argument (None: `shape`)
    attrs: dict = field(default_factory=dict)  # root, to_device, the axes
    alias: tuple = ()         # per op output: the input it is (in place), else None

    @property
    def output_shape(self):
        return self.shape if self.out_shape is None else self.out_shape

    @property
    def bytes_per_device(self):
        return int(np.prod(self.shape, dtype=np.int64)) * NUMPY_DTYPES[self.element].itemsize


def _ops(func, name):
    return find_ops(func, name)


def describe(module, entry=None):
    """The Problem of a parsed module at the collective or explicit level.
    Raises ValueError (with the op's location when there is one)."""
    func = find_entry(module, entry)
    name, specs = read_signature(func)
    found = _ops(func, lambda n: n in COLLECTIVES)
    if len(found) > 1:
        raise ValueError(f"@{name} holds {len(found)} collectives; coll-run checks one")
    if found:
        return _describe_collective(func, name, specs, view(found[0]))
    if not _ops(func, "coll.copy") and not _ops(func, "coll.combine"):
        raise ValueError(f"@{name} holds no collective, coll.copy or coll.combine: "
                         "nothing to check against numpy")
    kinds = {Combine.of(op).kind for op in _ops(func, "coll.combine")}
    if len(kinds) > 1:
        raise ValueError(f"@{name} combines with several kinds ({', '.join(sorted(kinds))})")
    kind = kinds.pop() if kinds else None
    n_in = count_inputs(func)
    if n_in is None:
        raise ValueError(f"@{name} is not an allreduce coll-run can check (no collective; "
                         "inputs and outputs not told apart)")
    n_out = len(specs) - n_in
    if n_out < 1:
        raise ValueError(f"@{name} has no output argument")
    if kind is None and n_in > 1:
        raise ValueError(f"@{name} has {n_in} inputs but no reduction")
    if len({s for s in specs}) != 1:
        raise ValueError(f"@{name}: all arguments must have one shape and element type")
    return Problem(name, n_in, n_out, specs[0].shape, specs[0].element, kind)


def _describe_collective(func, name, specs, c):
    what = c.op.name
    args = list(func.regions[0].blocks[0].arguments)
    ins = list(c.inputs)
    alias = tuple(ins.index(o) if o in ins else None for o in c.outputs)
    extra = [o for o, a in zip(c.outputs, alias) if a is None]
    if ins + extra != args or c.deps:
        raise ValueError(f"the operands of {what} must be the arguments of @{name}, in order "
                         "(inputs, then the outputs that are not inputs), with no deps")
    n_in = len(ins)
    if len({s for s in specs[:n_in]}) != 1 or len({s for s in specs[n_in:]}) > 1:
        raise ValueError(f"@{name}: inputs must have one shape and element type, outputs another")
    attrs = {k: v for k in ("root", "to_device", "scatter_axis", "gather_axis", "split_axis",
                            "concat_axis") if (v := _int_attr(c.op, k)) is not None}
    out_shape = tuple(ir.MemRefType(c.outputs[0].type).shape)
    return Problem(name, n_in, len(extra), specs[0].shape, specs[0].element,
                   c.kind if c.HAS_KIND else None, c.strategy, True, what[len("coll."):],
                   out_shape, attrs, alias)


def _int_attr(op, key):
    try:
        return ir.IntegerAttr(op.attributes[key]).value
    except (KeyError, ValueError):
        return None


def op_outputs(problem, inputs, outputs):
    """The op's outputs, in its order, after a run that was given `inputs`
    and `outputs` (in place, an output is the input array it was)."""
    if not problem.alias:
        return list(outputs)
    rest = iter(outputs)
    return [inputs[a] if a is not None else next(rest) for a in problem.alias]


def make_inputs(problem, seed=0):
    """Deterministic inputs: floats in [-1, 1] (prod: magnitudes in
    [0.5, 1.5], so products neither overflow nor vanish), integers over their
    whole range, i1 uniform. bf16 as uint16 bits."""
    rng = np.random.default_rng(seed)
    shape, el = problem.shape, problem.element
    out = []
    for _ in range(problem.n_inputs):
        if el in EPS:
            if problem.kind == "prod":
                v = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
            else:
                v = rng.uniform(-1.0, 1.0, shape)
            out.append(to_bf16(v) if el == "bf16" else v.astype(NUMPY_DTYPES[el]))
        elif el == "i1":
            out.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            info = np.iinfo(NUMPY_DTYPES[el])
            out.append(rng.integers(info.min, info.max, shape, dtype=NUMPY_DTYPES[el], endpoint=True))
    return [np.asarray(x).reshape(shape) for x in out]  # rank 0: arrays, not scalars


def make_outputs(problem):
    return [np.zeros(problem.output_shape, NUMPY_DTYPES[problem.element])
            for _ in range(problem.n_outputs)]


_UFUNC = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def as_float(a, element):
    return from_bf16(a).astype(np.float64) if element == "bf16" else np.asarray(a, np.float64)


def _fold(problem, inputs):
    """(+)_i inputs[i] in numpy: float64 for floats, the element type (with
    wrap-around) for integers."""
    if problem.kind is None:
        return _values(problem, inputs)[0]
    fn = _UFUNC[problem.kind]
    vals = _values(problem, inputs)
    acc = vals[0].copy()
    for x in vals[1:]:
        fn(acc, x, out=acc)
    return acc


def _values(problem, inputs):
    if problem.element in EPS:
        return [as_float(x, problem.element) for x in inputs]
    return [np.array(x) for x in inputs]


def _n_out(problem):
    return len(problem.alias) if problem.alias else problem.n_outputs


def _ranks(problem):
    """N: the devices the collective spans."""
    return _n_out(problem) if problem.op == "broadcast" else problem.n_inputs


def _expect(problem, inputs):
    """[(expected output j, the inputs it reduces)] of the collective."""
    a, n = problem.attrs, _ranks(problem)
    op, vals = problem.op, _values(problem, inputs)
    if op in ("all_reduce", "reduce"):
        return [(_fold(problem, inputs), inputs)] * _n_out(problem)
    if op == "reduce_scatter":
        ax = a["scatter_axis"]
        parts = np.split(_fold(problem, inputs), n, axis=ax)
        return [(p, [np.split(x, n, axis=ax)[j] for x in inputs]) for j, p in enumerate(parts)]
    if op == "all_gather":
        return [(np.concatenate(vals, axis=a["gather_axis"]), None)] * n
    if op == "broadcast":
        return [(vals[0], None)] * n
    if op == "all_to_all":
        blocks = [np.split(x, n, axis=a["split_axis"]) for x in vals]
        return [(np.concatenate([b[j] for b in blocks], axis=a["concat_axis"]), None)
                for j in range(n)]
    raise ValueError(f"no reference for {op}")


def reference(problem, inputs):
    """The expected value of every output of an allreduce (the fold of the
    inputs); for other collectives see `_expect`."""
    return _fold(problem, inputs)


def tolerance(problem, inputs, ref):
    """Allowed |output - ref| per element (0 for exact checks)."""
    el, kind = problem.element, problem.kind
    if el not in EPS or kind in (None, "max", "min"):
        return 0.0
    n, eps = len(inputs), EPS[el]
    if kind == "sum":
        mag = sum(np.abs(as_float(x, el)) for x in inputs)
    else:
        mag = np.abs(ref)
    return (n + 1) * eps * mag + n * TINY[el]


def check(problem, inputs, outputs):
    """(ok, worst error over all outputs, as a float). `outputs` are the
    op's outputs (op_outputs() for an in-place run)."""
    if problem.collective:
        expected = _expect(problem, inputs)
    else:
        expected = [(reference(problem, inputs), inputs)] * len(outputs)
    worst, ok = 0.0, True
    for y, (ref, reduced) in zip(outputs, expected):
        if problem.element in EPS:
            tol = tolerance(problem, reduced, ref) if reduced is not None else 0.0
            got = as_float(y, problem.element)
            err = np.abs(got - ref)
            same_nan = np.isnan(got) & np.isnan(ref)
            bad = ~((err <= tol) | same_nan)
            worst = max(worst, float(np.max(np.where(same_nan, 0, err), initial=0.0)))
        else:
            bad = y != ref
            worst = max(worst, float(np.count_nonzero(bad)))
        ok = ok and not bool(np.any(bad))
    return ok and len(outputs) == len(expected), worst
