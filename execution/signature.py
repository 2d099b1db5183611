"""What every runtime needs to call a compiled entry function: its argument
specs (shape, element type), which arguments are inputs, numpy array checks,
and memref descriptors for the C interface (`_mlir_ciface_<entry>`).

Array convention: f16 -> np.float16, f32/f64 -> float32/float64, iN ->
intN, i1 -> np.bool_. numpy has no bf16: a bf16 array is a np.uint16 array
holding the bf16 bit patterns (see `to_bf16`/`from_bf16`); an
`ml_dtypes.bfloat16` array is accepted too (same bits). fp8 (f8E4M3FN,
f8E5M2) likewise: np.uint8 arrays of bit patterns, or ml_dtypes.float8_e4m3fn
/ float8_e5m2 arrays (ir/kinds.py Element.ml_dtype; `to_stored`/`from_stored`).
"""
import ctypes
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from mlir import ir

from ..analysis.effects import effects
from ..analysis.order import argument_roles
from ..core import routes
from ..core.pipeline import run
from ..frontends import shard, tensor
from ..ir.kinds import ELEMENTS
from ..ir.ops import OPS
from ..ir.views import VIEW_OPS
from ..ir.walk import is_public
from .descriptors import Layout, span, staged

NUMPY_DTYPES = {name: np.dtype(e.numpy) for name, e in ELEMENTS.items()}



def to_bf16(values: npt.ArrayLike) -> np.ndarray:
    """float array -> uint16 bf16 bit patterns (round to nearest even)."""
    v = np.asarray(values, dtype=np.float32)
    bits = np.ascontiguousarray(v).reshape(-1).view(np.uint32)  # 1-d: arithmetic on 0-d gives scalars
    rounded = bits + (0x7FFF + ((bits >> 16) & 1))
    out = (rounded >> 16).astype(np.uint16)
    out[np.isnan(v.reshape(-1))] = 0x7FC0
    return out.reshape(v.shape)


def from_bf16(bits: npt.ArrayLike) -> np.ndarray:
    """uint16 bf16 bit patterns (or an ml_dtypes.bfloat16 array) -> float32."""
    b = np.asarray(bits)
    if b.dtype != np.uint16 and b.dtype.name != "bfloat16":
        raise TypeError(f"from_bf16 takes uint16 bf16 bit patterns (or ml_dtypes.bfloat16), got {b.dtype} "
                        "(to_bf16 makes them from floats)")
    flat = np.ascontiguousarray(b).reshape(-1).view(np.uint16)  # 1-d: arithmetic on 0-d gives scalars
    return (flat.astype(np.uint32) << 16).view(np.float32).reshape(b.shape)


def ml_dtype(element: str) -> np.dtype | None:
    """The ml_dtypes dtype whose bits an element stored as bit patterns
    (bf16, fp8) has, else None. Imports ml_dtypes (a dependency)."""
    name = ELEMENTS[element].ml_dtype if element in ELEMENTS else ""  # (numpy names too: float32)
    if not name:
        return None
    import ml_dtypes
    return np.dtype(getattr(ml_dtypes, name))


def to_stored(values: npt.ArrayLike, element: str) -> np.ndarray:
    """Float values as an array of `element` holds them (bf16, fp8: bit
    patterns), each rounded once to nearest even (fp8 with ml_dtypes:
    E4M3FN overflows to NaN, E5M2 to infinity)."""
    if element == "bf16":
        return to_bf16(values)
    ml = ml_dtype(element)
    with np.errstate(over="ignore", invalid="ignore"):
        if ml is None:
            return np.asarray(values).astype(NUMPY_DTYPES.get(element, element))
        return np.asarray(values).astype(ml).view(NUMPY_DTYPES[element])


def from_stored(a: npt.ArrayLike, element: str) -> np.ndarray:
    """An array of `element` as numbers: bf16 and fp8 bit patterns (or
    their ml_dtypes arrays) as float32 (exact), others as they are."""
    if element == "bf16":
        return from_bf16(a)
    ml = ml_dtype(element)
    if ml is None:
        return np.asarray(a)
    b = np.asarray(a)
    return np.ascontiguousarray(b).view(ml).astype(np.float32)


@dataclass(frozen=True)
class ArgSpec:
    shape: tuple[int, ...]
    element: str  # 'f32', 'bf16', 'i1', ...
    # A static strided layout (elements): the argument is a window of a
    # larger buffer (a gradient bucket: memref<64xf32, strided<[1],
    # offset: 128>>). None: the identity layout, or one the descriptor
    # gives at run time (`?`).
    layout: Layout = None  # (offset, strides)

    @property
    def dtype(self) -> np.dtype:
        return NUMPY_DTYPES[self.element]

    @property
    def span(self) -> int:
        """Elements of the buffer the argument's layout reaches into."""
        return span(self.shape, self.layout)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __str__(self) -> str:
        return "memref<" + "".join(f"{d}x" for d in self.shape) + self.element + ">"


def find_entry(module: ir.Module, entry: str | None = None) -> ir.OpView:
    """The entry func.func: `entry` by name, else the one with
    llvm.emit_c_interface, else the only public function (`func.func
    public` too, as JAX writes it), else the public @main."""
    funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
    names = [ir.StringAttr(f.attributes["sym_name"]).value for f in funcs]
    if entry is not None:
        if entry not in names:
            raise ValueError(f"no function @{entry} in the module (functions: {', '.join(names) or 'none'})")
        return funcs[names.index(entry)]
    if not funcs:
        if any(op.operation.name == "llvm.func" for op in module.body.operations):
            raise ValueError("the module is already in the LLVM dialect: its memref signature is lost; "
                             "give the module before coll-cpu-to-llvm")
        raise ValueError("the module has no func.func to run")
    for pick in (lambda f: "llvm.emit_c_interface" in f.attributes,
                 is_public,
                 lambda f: is_public(f) and ir.StringAttr(f.attributes["sym_name"]).value == "main"):
        chosen = [f for f in funcs if pick(f)]
        if len(chosen) == 1:
            return chosen[0]
    raise ValueError(f"several functions could be the entry ({', '.join(names)}); name one")


WRITABLE = "bufferization.writable"


def to_buffers(module: ir.Module, entry: str | None = None, ran: list[str] | None = None,
               tensors: bool | None = None) -> int | None:
    """A module in the tensor form, bufferized in place (the tensor frontend's route)
    as a runtime calls it: the entry's tensor arguments are the caller's
    arrays, so they are read-only (`bufferization.writable = false`: its
    collectives write fresh buffers, not the inputs; coll-entry), and its
    tensor results become output arguments after them. Returns the entry's
    number of inputs (its arguments before), or None when the module has no
    tensors (left alone). `ran`: a list the pipeline elements run are
    appended to; `tensors`: whether the module has tensors, when the caller
    knows (frontends/tensor.py detect). Raises ir.MLIRError with located
    diagnostics."""
    if not (tensor.detect(module.operation) if tensors is None else tensors):
        return None
    func = find_entry(module, entry)
    ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    name = ir.StringAttr(func.attributes["sym_name"]).value
    # A partitioned shard program: its shard collectives become coll's
    # (coll-from-shard, no partitioning) before it is bufferized.
    front = [f"coll-entry{routes.options_text(function=name)}"] + (
        shard.route(module.operation) if shard.partitioned(module.operation) else tensor.route())
    run(module.operation, routes.pipeline(front))
    if ran is not None:
        ran += front
    return len(ft.inputs)


def _inputs_of(func: ir.OpView) -> int | None:
    return count_inputs(func)


def _spec(t: ir.Type) -> ArgSpec:
    if not isinstance(t, ir.MemRefType) or not t.has_static_shape:
        raise ValueError(f"entry arguments must be statically shaped memrefs, got {t}")
    shape = tuple(t.shape)
    strides, offset = t.get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    identity = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape)))
    layout = None
    if dynamic not in (offset, *strides) and (offset, tuple(strides)) != (0, identity):
        if any(st < 0 for st in strides) or offset < 0:
            raise ValueError(f"entry argument layout {t} has a negative stride or offset")
        layout = (int(offset), tuple(int(st) for st in strides))
    return ArgSpec(shape, str(t.element_type), layout)


def read_signature(func: ir.OpView) -> tuple[str, list[ArgSpec]]:
    """(name, [ArgSpec]) of a func.func; it must return nothing."""
    ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    name = ir.StringAttr(func.attributes["sym_name"]).value
    if len(ft.results):
        raise ValueError(f"@{name} returns values; entry functions write their outputs in place")
    specs = [_spec(t) for t in ft.inputs]
    for s in specs:
        if s.element not in NUMPY_DTYPES:
            raise ValueError(f"unsupported element type {s.element}")
    return name, specs


# Upstream ops that only read the memref operands they take.
READ_ONLY_OPS = ("memref.load", "vector.load", "vector.transfer_read", "memref.dim",
                 "memref.extract_strided_metadata", "memref.extract_aligned_pointer_as_index",
                 "func.return", "memref.prefetch", "mpi.send", "mpi.isend")  # mpi: a per-rank program sends its inputs


def _writer(value: ir.Value) -> ir.Operation | None:
    """The first op that writes into `value` or a view of it, or may (an op
    coll does not know is taken to write), or None when nothing does."""
    for use in value.uses:
        op, i = use.owner.operation, use.operand_number
        name = op.name
        if name in VIEW_OPS:
            w = _writer(op.results[0]) if op.results else None
            if w is not None:
                return w
        elif name in OPS:
            v = OPS[name](op)
            if v.role(i) in v.WRITES:
                return op
        elif name not in READ_ONLY_OPS:
            # Upstream memory ops: what the order check knows they write.
            eff = effects(op)
            if eff is None or any(w[0] == op.operands[i] for w in eff[1]):
                return op
    return None


def _written(value: ir.Value) -> bool:
    return _writer(value) is not None


writer_of = _writer


def classify_arguments(func: ir.OpView) -> tuple[int | None, str | None]:
    """(number of inputs, why not) from what the program does with each
    argument (analysis/order.py argument_roles): an input is read
    before it is written, or never written (in place: also written); an
    output is only written; inputs come first. `why not` names the
    arguments when that does not hold."""
    roles = argument_roles(func)
    if None in roles:
        k = roles.index(None)
        return None, (f"what the program does with argument #{k} is not known (its pointer escapes, or an op "
                      "whose memory effects are not known takes it)")
    known = [role for role in roles if role is not None]  # every one (returned above otherwise)
    inputs = [r or not w for r, w in known]
    n = inputs.index(False) if False in inputs else len(inputs)
    if any(inputs[n:]):
        k = n + inputs[n:].index(True)
        how = "read before it is written" if known[k][0] else "never written"
        return None, (f"argument #{k} is an input ({how}) but comes after argument #{n}, which the program only "
                      "writes (an output); expected the inputs first, then the outputs")
    return n, None


def in_place_arguments(func: ir.OpView) -> list[int]:
    """The inputs the program also writes (in place), by index."""
    return [k for k, role in enumerate(argument_roles(func)) if role is not None and role[0] and role[1]]


def written_arguments(func: ir.OpView) -> tuple[int, ...]:
    """The arguments the program is known to write, by index (one whose
    pointer escapes, e.g. into an MPI call, is not counted)."""
    return tuple(k for k, role in enumerate(argument_roles(func)) if role is not None and role[1])


def _where(op: ir.Operation | ir.OpView) -> str:
    m = re.search(r'"([^"]*)":(\d+):(\d+)', str(op.location))
    return f"{m.group(1)}:{m.group(2)}:{m.group(3)}" if m else str(op.location)


where = _where


def count_inputs(func: ir.OpView) -> int | None:
    """Number of leading arguments that are only read, when the arguments
    are inputs first then outputs (as coll modules are); else None."""
    return classify_arguments(func)[0]


# Buffers the tools allocate start on a cache line: the CPU back end streams
# a result into several buffers with whole-line stores only where they are
# aligned alike (lowering/cpu/kernels.py), and malloc aligns buffers under
# 32 MiB to 16 bytes only (twoshot at 8 x 16 MiB: 14.3 against 11.0 ms).
BUFFER_ALIGN = 64


def aligned_zeros(shape: int | Sequence[int], dtype: npt.DTypeLike) -> np.ndarray:
    """np.zeros(shape, dtype) whose data starts on a BUFFER_ALIGN boundary."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    raw = np.zeros(n * dtype.itemsize + BUFFER_ALIGN, np.uint8)
    skip = -raw.ctypes.data % BUFFER_ALIGN
    return raw[skip:skip + n * dtype.itemsize].view(dtype).reshape(shape)


def aligned_copy(x: npt.ArrayLike) -> np.ndarray:
    """A C-contiguous copy of `x` on a BUFFER_ALIGN boundary."""
    out = aligned_zeros(np.shape(x), np.asarray(x).dtype)
    np.copyto(out, x)
    return out


def as_array(arr: object, spec: ArgSpec, what: str, writable: bool = False) -> np.ndarray:
    """`arr` checked against `spec`: a C-contiguous array of the right shape
    and dtype (bf16, fp8: bit patterns or their ml_dtypes type). Raises ValueError."""
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{what}: expected a numpy array for {spec}, got {type(arr).__name__}")
    dtype = arr.dtype
    ml = ELEMENTS[spec.element].ml_dtype
    if ml and dtype.name == ml:
        arr = arr.view(spec.dtype)
    elif dtype != spec.dtype:
        hint = f" ({spec.element} arrays are {spec.dtype} bit patterns or ml_dtypes.{ml})" if ml else ""
        raise ValueError(f"{what}: dtype {dtype} does not match {spec} (expected {spec.dtype}){hint}")
    if tuple(arr.shape) != spec.shape:
        raise ValueError(f"{what}: shape {tuple(arr.shape)} does not match {spec}")
    if not arr.flags.c_contiguous:
        if writable:
            raise ValueError(f"{what}: must be C-contiguous (the program writes it in place)")
        arr = np.asarray(arr, order="C")  # not ascontiguousarray: a 0-d array stays 0-d
    if writable and not arr.flags.writeable:
        raise ValueError(f"{what}: the array is read-only, and the program writes it")
    return arr


def check_arrays(specs: Sequence[ArgSpec], n_inputs: int | None, inputs: Iterable[np.ndarray],
                 outputs: Iterable[np.ndarray], written: Iterable[int] = ()) -> list[np.ndarray]:
    """Checked arrays for a call, inputs then outputs. Raises ValueError for a
    wrong count, shape or dtype, or an output, or an input the program writes
    in place (`written`: argument indices, in_place_arguments), that is not
    C-contiguous and writable or overlaps another array (a copy would lose
    what the program writes; overlapping arrays would see each other's writes)."""
    inputs, outputs = list(inputs), list(outputs)
    if n_inputs is not None and (len(inputs), len(outputs)) != (n_inputs, len(specs) - n_inputs):
        raise ValueError(f"expected {n_inputs} inputs and {len(specs) - n_inputs} outputs, "
                         f"got {len(inputs)} inputs and {len(outputs)} outputs")
    if len(inputs) + len(outputs) != len(specs):
        raise ValueError(f"expected {len(specs)} arrays in all, got {len(inputs)} inputs and {len(outputs)} outputs")
    written = {k for k in written if k < len(inputs)}
    arrays = [as_array(a, s, f"input {i}" + (" (written in place)" if i in written else ""), writable=i in written)
              for i, (a, s) in enumerate(zip(inputs, specs))]
    out_specs = specs[len(inputs):]
    outs = [as_array(a, s, f"output {i}", writable=True) for i, (a, s) in enumerate(zip(outputs, out_specs))]
    every = arrays + outs
    for k, what in [(i, f"input {i}, which the program writes in place,") for i in sorted(written)] + \
            [(len(arrays) + i, f"output {i}") for i in range(len(outs))]:
        a = every[k]
        if any(a.size and b.size and np.may_share_memory(a, b) for j, b in enumerate(every) if j != k):
            raise ValueError(f"{what} overlaps another input or output array")
    return every


def staged_all(arrays: Sequence[np.ndarray], specs: Sequence[ArgSpec]
               ) -> tuple[list[np.ndarray], list[ctypes.Structure], list[np.ndarray]]:
    """[views], [descriptors], [buffers to keep alive]: descriptors.py
    `staged` of each."""
    got = [staged(a, s.shape, s.layout) for a, s in zip(arrays, specs)]
    return [g[0] for g in got], [g[1] for g in got], [g[2] for g in got]
