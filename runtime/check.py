"""What an allreduce module computes, deterministic inputs for it, and the
numpy reference to check a run against (used by coll-run, tests, benches).

Checks: integers and i1 exactly (sum and prod wrap around like the
program); max and min exactly; float sum within (N+1)·eps·Σ|x_i| and float
prod within (N+1)·eps·|Π x_i|, eps of the element type (the order of the
reduction differs between strategies, and f16/bf16 partials are rounded
between ring steps).
"""
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ..ir.ops import AllReduce, Combine
from ..ir.walk import find_ops
from ..lowering.spmd import RANK_INPUTS_ATTR, RANKS_ATTR
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
    collective: bool = False  # a coll.all_reduce (else the explicit level)

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
    reduces = _ops(func, "coll.all_reduce")
    if len(reduces) > 1:
        raise ValueError(f"@{name} holds {len(reduces)} coll.all_reduce ops; coll-run checks one")
    strategy = None
    if reduces:
        op = AllReduce.of(reduces[0])
        kind, strategy = op.kind, op.strategy
        args = list(func.regions[0].blocks[0].arguments)
        if list(op.op.operands) != args:
            raise ValueError(f"the operands of coll.all_reduce must be the arguments of @{name}, in order")
        n_in, n_out = len(op.inputs), len(op.outputs)
        if RANKS_ATTR in func.attributes:  # SPMD form: one rank's buffers
            ranks = ir.IntegerAttr(func.attributes[RANKS_ATTR]).value
            n_in, n_out, specs = n_in * ranks, n_out * ranks, specs * ranks
    else:
        if not _ops(func, "coll.copy") and not _ops(func, "coll.combine"):
            raise ValueError(f"@{name} holds no coll.all_reduce, coll.copy or coll.combine: "
                             "nothing to check against numpy")
        kinds = {Combine.of(op).kind for op in _ops(func, "coll.combine")}
        if len(kinds) > 1:
            raise ValueError(f"@{name} combines with several kinds ({', '.join(sorted(kinds))})")
        kind = kinds.pop() if kinds else None
        n_in = count_inputs(func)
        if RANKS_ATTR in func.attributes:
            # A per-rank program (coll-to-mpi): the global view is every rank's buffers.
            ranks = ir.IntegerAttr(func.attributes[RANKS_ATTR]).value
            k_in = ir.IntegerAttr(func.attributes[RANK_INPUTS_ATTR]).value
            n_in, specs = ranks * k_in, specs * ranks
        if n_in is None:
            raise ValueError(f"@{name} is not an allreduce coll-run can check (no coll.all_reduce; "
                             "inputs and outputs not told apart)")
        n_out = len(specs) - n_in
    if n_out < 1:
        raise ValueError(f"@{name} has no output argument")
    if kind is None and n_in > 1:
        raise ValueError(f"@{name} has {n_in} inputs but no reduction")
    if len({s for s in specs}) != 1:
        raise ValueError(f"@{name}: all arguments must have one shape and element type")
    return Problem(name, n_in, n_out, specs[0].shape, specs[0].element, kind, strategy, bool(reduces))


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
    return [np.zeros(problem.shape, NUMPY_DTYPES[problem.element]) for _ in range(problem.n_outputs)]


_UFUNC = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def as_float(a, element):
    return from_bf16(a).astype(np.float64) if element == "bf16" else np.asarray(a, np.float64)


def reference(problem, inputs):
    """(+)_i inputs[i] in numpy: float64 for floats, the element type (with
    wrap-around) for integers."""
    if problem.kind is None:
        return as_float(inputs[0], problem.element) if problem.element in EPS else inputs[0].copy()
    fn = _UFUNC[problem.kind]
    if problem.element in EPS:
        acc = as_float(inputs[0], problem.element)
        for x in inputs[1:]:
            acc = fn(acc, as_float(x, problem.element))
        return acc
    acc = inputs[0].copy()
    for x in inputs[1:]:
        fn(acc, x, out=acc)
    return acc


def tolerance(problem, inputs, ref):
    """Allowed |output - ref| per element (0 for exact checks)."""
    el, kind = problem.element, problem.kind
    if el not in EPS or kind in (None, "max", "min"):
        return 0.0
    n, eps = problem.n_inputs, EPS[el]
    if kind == "sum":
        mag = sum(np.abs(as_float(x, el)) for x in inputs)
    else:
        mag = np.abs(ref)
    return (n + 1) * eps * mag + n * TINY[el]


def check(problem, inputs, outputs):
    """(ok, worst error over all outputs, as a float)."""
    ref = reference(problem, inputs)
    tol = tolerance(problem, inputs, ref)
    worst, ok = 0.0, True
    for y in outputs:
        if problem.element in EPS:
            got = as_float(y, problem.element)
            err = np.abs(got - ref)
            same_nan = np.isnan(got) & np.isnan(ref)
            bad = ~((err <= tol) | same_nan)
            worst = max(worst, float(np.max(np.where(same_nan, 0, err), initial=0.0)))
        else:
            bad = y != ref
            worst = max(worst, float(np.count_nonzero(bad)))
        ok = ok and not bool(np.any(bad))
    return ok, worst
