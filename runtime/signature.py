"""What every runtime needs to call a compiled entry function: its argument
specs (shape, element type), which arguments are inputs, numpy array checks,
and memref descriptors for the C interface (`_mlir_ciface_<entry>`).

Array convention: f16 -> np.float16, f32/f64 -> float32/float64, iN ->
intN, i1 -> np.bool_. numpy has no bf16: a bf16 array is a np.uint16 array
holding the bf16 bit patterns (see `to_bf16`/`from_bf16`); an
`ml_dtypes.bfloat16` array is accepted too (same bits).
"""
import ctypes
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from mlir import ir

from ..ir.kinds import ELEMENTS
from ..ir.ops import COLLECTIVES, OPS, view
from ..ir.walk import find_ops
from ..passes.check_order import effects
from ..ir.views import VIEW_OPS

NUMPY_DTYPES = {name: np.dtype(e.numpy) for name, e in ELEMENTS.items()}



def to_bf16(values):
    """float array -> uint16 bf16 bit patterns (round to nearest even)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = bits + (0x7FFF + ((bits >> 16) & 1))
    out = (rounded >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    out[nan] = 0x7FC0
    return out


def from_bf16(bits):
    """uint16 bf16 bit patterns (or an ml_dtypes.bfloat16 array) -> float32."""
    bits = np.ascontiguousarray(bits).view(np.uint16)
    return (bits.astype(np.uint32) << 16).view(np.float32)


@dataclass(frozen=True)
class ArgSpec:
    shape: tuple
    element: str  # 'f32', 'bf16', 'i1', ...
    # A static strided layout (elements): the argument is a window of a
    # larger buffer (a gradient bucket: memref<64xf32, strided<[1],
    # offset: 128>>). None: the identity layout, or one the descriptor
    # gives at run time (`?`).
    layout: tuple = None  # (offset, strides)

    @property
    def dtype(self):
        return NUMPY_DTYPES[self.element]

    @property
    def span(self):
        """Elements of the buffer the argument's layout reaches into."""
        if self.layout is None or 0 in self.shape:
            return int(np.prod(self.shape, dtype=np.int64))
        offset, strides = self.layout
        return offset + sum((d - 1) * st for d, st in zip(self.shape, strides)) + 1

    @property
    def nbytes(self):
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __str__(self):
        return "memref<" + "".join(f"{d}x" for d in self.shape) + self.element + ">"


def find_entry(module, entry=None):
    """The entry func.func: `entry` by name, else the one with
    llvm.emit_c_interface, else the only public function."""
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
                 lambda f: "sym_visibility" not in f.attributes):
        chosen = [f for f in funcs if pick(f)]
        if len(chosen) == 1:
            return chosen[0]
    raise ValueError(f"several functions could be the entry ({', '.join(names)}); name one")


WRITABLE = "bufferization.writable"


def to_buffers(module, entry=None):
    """A module in the tensor form, bufferized in place (the tensor frontend's route)
    as a runtime calls it: the entry's tensor arguments are the caller's
    arrays, so they are read-only (`bufferization.writable = false`: its
    collectives write fresh buffers, not the inputs), and its tensor
    results become output arguments after them. Returns the entry's number
    of inputs (its arguments before), or None when the module has no
    tensors (left alone). Raises ir.MLIRError with located diagnostics."""
    from ..core import routes
    from ..core.pipeline import run
    from ..frontends import tensor
    if not tensor.detect(module.operation):
        return None
    func = find_entry(module, entry)
    ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    old = list(ir.ArrayAttr(func.attributes["arg_attrs"])) if "arg_attrs" in func.attributes else []
    attrs = []
    for i, t in enumerate(ft.inputs):
        d = {a.name: a.attr for a in ir.DictAttr(old[i])} if i < len(old) else {}
        if isinstance(t, ir.RankedTensorType) and WRITABLE not in d:
            d[WRITABLE] = ir.BoolAttr.get(False)
        attrs.append(ir.DictAttr.get(d))
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    run(module.operation, routes.pipeline(tensor.route()))
    return len(ft.inputs)


def parse_program(module_text, entry=None, keep_local_work=False):
    """Parses and verifies a module for a runtime (in the current Context):
    (module, entry name, argument specs, number of inputs). A module in the
    tensor form is bufferized first (`to_buffers`: the entry's tensor
    results become output arguments); an entry in SPMD form is expanded
    into its global view (`keep_local_work`: not when it has local work
    around its collectives; the mpi route runs that per rank). The entry
    gets the C interface the runtimes call."""
    from ..ir.verifier import verify_or_raise
    from ..frontends.spmd import has_local_work, is_spmd, rank_inputs, ranks_of, spmd_to_global
    module = ir.Module.parse(module_text)
    verify_or_raise(module.operation)
    tensor_inputs = to_buffers(module, entry)
    func = find_entry(module, entry)
    ranks, per_rank = 1, None
    # One rank's buffers: runtimes take the global view's.
    if is_spmd(func) and not (keep_local_work and has_local_work(func)):
        # Each rank's inputs, counted on one rank (a broadcast's global view
        # reads only its root's, yet every rank passes one); with local
        # work, the leading arguments no op writes.
        ranks = ranks_of(func)
        per_rank = rank_inputs(func) if has_local_work(func) else _inputs_of(func)
        spmd_to_global(module.operation)
        verify_or_raise(module.operation)
        func = find_entry(module, entry)
    name, specs = read_signature(func)
    if tensor_inputs is not None:  # the arguments it had; its results came after
        n_inputs = tensor_inputs * ranks
    elif per_rank is not None:
        n_inputs = ranks * per_rank
    else:
        n_inputs = _inputs_of(func)
    func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    return module, name, specs, n_inputs


def _inputs_of(func):
    n_inputs = count_inputs(func)
    collectives = find_ops(func, lambda n: n in COLLECTIVES)
    if len(collectives) == 1 and _leading_args(func, view(collectives[0]).inputs):
        n_inputs = len(view(collectives[0]).inputs)  # in place, inputs are written too
    elif n_inputs == 0 and all_in_place(func):
        n_inputs = len(list(func.regions[0].blocks[0].arguments))
    return n_inputs


def _leading_args(func, values):
    """Whether `values` are the function's first arguments, in order."""
    args = list(func.regions[0].blocks[0].arguments)
    return list(values) == args[:len(values)]


def _spec(t):
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


def read_signature(func):
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


def _writer(value):
    """The first op that writes into `value` or a view of it, or may (an op
    coll does not know is taken to write), or None when nothing does."""
    for use in value.uses:
        op, i = use.owner, use.operand_number
        op = getattr(op, "operation", op)
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


def _coll_reader(value):
    """The first coll op that reads `value` or a view of it, or None."""
    for use in value.uses:
        op, i = use.owner, use.operand_number
        op = getattr(op, "operation", op)
        if op.name in VIEW_OPS:
            r = _coll_reader(op.results[0]) if op.results else None
            if r is not None:
                return r
        elif op.name in OPS and OPS[op.name](op).role(i) in OPS[op.name].READS:
            return op
    return None


def _written(value):
    return _writer(value) is not None


writer_of = _writer


def all_in_place(func):
    """Is every argument both read by a coll op and written? Then each is
    its device's input and output (a collective lowered in place, without
    its coll.implements)."""
    args = list(func.regions[0].blocks[0].arguments)
    return bool(args) and all(_writer(a) is not None and _coll_reader(a) is not None for a in args)


def classify_arguments(func):
    """(number of inputs, why not) from what the program does with each
    argument: inputs are only read, outputs are written; inputs come first.
    `why not` names the argument and the op when that does not hold."""
    args = list(func.regions[0].blocks[0].arguments)
    writers = [_writer(a) for a in args]
    for k, (a, w) in enumerate(zip(args, writers)):
        if w is not None and w.name not in OPS and _coll_reader(a) is not None:
            return None, (f"argument #{k} is read by '{_coll_reader(a).name}' as an input but written by "
                          f"'{w.name}' at {_where(w)}; expected inputs that the program only reads")
    n = next((k for k, w in enumerate(writers) if w is not None), len(args))
    for k in range(n, len(args)):
        if writers[k] is None:
            return None, (f"argument #{k} is only read but comes after output argument #{n}; "
                          "expected the inputs (only read) first, then the outputs (written)")
    return n, None


def _where(op):
    m = re.search(r'"([^"]*)":(\d+):(\d+)', str(op.location))
    return f"{m.group(1)}:{m.group(2)}:{m.group(3)}" if m else str(op.location)


where = _where


def count_inputs(func):
    """Number of leading arguments that are only read, when the arguments
    are inputs first then outputs (as coll modules are); else None."""
    return classify_arguments(func)[0]


def as_array(arr, spec, what, writable=False):
    """`arr` checked against `spec`: a C-contiguous array of the right shape
    and dtype (bf16: uint16 bits or ml_dtypes.bfloat16). Raises ValueError."""
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{what}: expected a numpy array for {spec}, got {type(arr).__name__}")
    dtype = arr.dtype
    if spec.element == "bf16" and dtype.name == "bfloat16":
        arr = arr.view(np.uint16)
    elif dtype != spec.dtype:
        hint = " (bf16 arrays are uint16 bit patterns or ml_dtypes.bfloat16)" if spec.element == "bf16" else ""
        raise ValueError(f"{what}: dtype {dtype} does not match {spec} (expected {spec.dtype}){hint}")
    if tuple(arr.shape) != spec.shape:
        raise ValueError(f"{what}: shape {tuple(arr.shape)} does not match {spec}")
    if not arr.flags.c_contiguous:
        if writable:
            raise ValueError(f"{what}: output arrays must be C-contiguous (written in place)")
        arr = np.ascontiguousarray(arr)
    if writable and not arr.flags.writeable:
        raise ValueError(f"{what}: output array is read-only")
    return arr


def check_arrays(specs, n_inputs, inputs, outputs):
    """Checked arrays for a call, inputs then outputs. Raises ValueError for a
    wrong count, shape or dtype, or an output that overlaps another array."""
    inputs, outputs = list(inputs), list(outputs)
    if n_inputs is not None and (len(inputs), len(outputs)) != (n_inputs, len(specs) - n_inputs):
        raise ValueError(f"expected {n_inputs} inputs and {len(specs) - n_inputs} outputs, "
                         f"got {len(inputs)} inputs and {len(outputs)} outputs")
    if len(inputs) + len(outputs) != len(specs):
        raise ValueError(f"expected {len(specs)} arrays in all, got {len(inputs)} inputs and {len(outputs)} outputs")
    arrays = [as_array(a, s, f"input {i}") for i, (a, s) in enumerate(zip(inputs, specs))]
    out_specs = specs[len(inputs):]
    outs = [as_array(a, s, f"output {i}", writable=True) for i, (a, s) in enumerate(zip(outputs, out_specs))]
    for i, o in enumerate(outs):
        others = arrays + outs[:i] + outs[i + 1:]
        if any(o.size and b.size and np.may_share_memory(o, b) for b in others):
            raise ValueError(f"output {i} overlaps another input or output array")
    return arrays + outs


@lru_cache(maxsize=None)
def descriptor_type(rank):
    """The ctypes struct of a rank-`rank` memref descriptor: allocated and
    aligned pointers, offset, sizes[rank], strides[rank]."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_longlong)]
    if rank:
        fields += [("sizes", ctypes.c_longlong * rank), ("strides", ctypes.c_longlong * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def staged(arr, spec):
    """(the array the program sees, its descriptor, what to keep alive).
    For an argument with a static layout, a zeroed buffer of its span
    holding `arr` at that offset and strides (the compiled code reads the
    offset and strides from the type, not the descriptor); else `arr`."""
    if spec.layout is None:
        return arr, descriptor(arr), arr
    offset, strides = spec.layout
    base = np.zeros(spec.span, arr.dtype)
    view = np.lib.stride_tricks.as_strided(base[offset:], spec.shape, [st * arr.itemsize for st in strides])
    view[...] = arr
    d = descriptor_type(arr.ndim)()
    d.allocated = d.aligned = base.ctypes.data
    d.offset = offset
    if arr.ndim:
        d.sizes = (ctypes.c_longlong * arr.ndim)(*spec.shape)
        d.strides = (ctypes.c_longlong * arr.ndim)(*strides)
    return view, d, base


def staged_all(arrays, specs):
    """[views], [descriptors], [buffers to keep alive]: `staged` of each."""
    got = [staged(a, s) for a, s in zip(arrays, specs)]
    return [g[0] for g in got], [g[1] for g in got], [g[2] for g in got]


def descriptor(arr):
    """A ranked memref descriptor struct viewing `arr` (C-contiguous)."""
    rank = arr.ndim
    d = descriptor_type(rank)()
    d.allocated = d.aligned = arr.ctypes.data
    d.offset = 0
    if rank:
        d.sizes = (ctypes.c_longlong * rank)(*arr.shape)
        d.strides = (ctypes.c_longlong * rank)(*[s // arr.itemsize for s in arr.strides])
    return d
