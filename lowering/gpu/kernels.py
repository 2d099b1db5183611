"""The kernels of coll-to-gpu, as MLIR text, and the chip facts their
launches are sized by.

One kernel per (kind, element type, arity): `out = in0 (+) in1 (+) ...`,
elementwise over `n` elements. Every buffer argument is the address of the
buffer's element 0 (an `index`: the host adds the slice's offset), so one
kernel serves whole buffers and slices at any offset, and a launch passes 8
bytes per operand instead of a 5-word memref descriptor. (Upstream's
bare-pointer convention, `kernel-bare-ptr-calling-convention`, takes only
memrefs of static shape in 22.1.8, and one kernel serves every size.)

A kernel takes at most MAX_ARITY inputs: each input's pointer stays in
registers across the grid-stride loop and ptxas hoists loads, so registers
grow with the arity (ptxas 13.0, sm_90: 64 at 16 f32 inputs, 139 at 16 i8
inputs, 124 at 32 f32 inputs, spills from about 100 f32 inputs). A wider
combine is a left fold over a chain of kernels on one stream (`chain`):
the first combines MAX_ARITY inputs into an accumulator, each next one the
accumulator and MAX_ARITY - 1 more inputs, the last writes the output: the
same operations in the same order as one wide kernel, so the bits are the
same. f16, bf16 and fp8 are combined in f32 and rounded once, so their
accumulator is f32 (kernels `..._tof32`, `..._fromf32`). LLVM has no fp8
type: fp8 is loaded and stored as i8 and bitcast (ir/kinds.py
Element.llvm); nvvm.lower_to_llvm expands its conversions
(coll-fp8-conversions) before the upstream NVVM pipeline.

Body: a grid-stride loop over 16-byte vectors (`llvm.load {alignment =
16}` through a global-space pointer: `ld.global.v4.b32`-style loads),
each input loaded next to its use, then a grid-stride loop over the scalar
head and tail. The head is what aligns the lead operand (the first input
of the element type) to 16 bytes; the vector loop runs only when that
head aligns every operand, else all elements take the scalar loop. i1
buffers are stored as i8 (one byte per element, like numpy bool).

Strided kernels (`strided_<kind>_<type>_x<arity>`, same chains) move a
block along a non-leading axis, an op on strided views
(collectives/emit.py: rank 3 at most, innermost stride 1), in one launch:
the index space is d0 x d1 x w and element (i0, i1, c) of operand j is at
i0*s0_j + i1*s1_j + c from its address; a rank-2 view has d0 = 1, a
contiguous operand strides (d1*w, w). A strided copy is such a kernel of
arity 1 and kind COPY, one per element size (`strided_copy_i32_x1` moves
f32 and i32). Its parameters: Kernel.params().

The same body is also emitted as a plain `func.func` whose thread and block
ids are arguments (`cpu_func_text`): tests run it on the CPU, thread by
thread, to check the index arithmetic without a GPU.
"""
import re
from collections.abc import Mapping
from typing import NamedTuple

from mlir import ir
from mlir.dialects import gpu

from ...ir.kinds import ELEMENTS, KINDS

VECTOR_BYTES = 16
COPY = "copy"  # the kind of the strided copy kernels
KERNEL_MODULE = "coll_kernels"
MAX_ARITY = 16
# The lowest PTX version each newer chip takes (LLVM 22 NVPTX; below it llc
# stops with "PTX version 8.0 does not support target ...").
CHIP_FEATURES = {"sm_100": "+ptx86", "sm_100a": "+ptx86", "sm_100f": "+ptx88",
                 "sm_101": "+ptx86", "sm_101a": "+ptx86", "sm_101f": "+ptx88",
                 "sm_103": "+ptx88", "sm_103a": "+ptx88", "sm_103f": "+ptx88",
                 "sm_110": "+ptx90", "sm_110a": "+ptx90", "sm_110f": "+ptx90",
                 "sm_120": "+ptx87", "sm_120a": "+ptx87", "sm_120f": "+ptx88",
                 "sm_121": "+ptx88", "sm_121a": "+ptx88", "sm_121f": "+ptx88"}
DEFAULT_FEATURES = "+ptx80"  # the upstream default +ptx60 is rejected for sm_90


def features_for(chip: str) -> str:
    return CHIP_FEATURES.get(chip, DEFAULT_FEATURES)


# -- chips and occupancy ----------------------------------------------------------

class Chip(NamedTuple):
    sms: int             # multiprocessors of the chip's data-centre part
    threads_per_sm: int  # resident threads per multiprocessor
    blocks_per_sm: int   # resident blocks per multiprocessor


REGISTERS_PER_SM = 65536      # every chip from sm_50 on
REGISTER_UNIT = 8             # registers are allocated per thread in multiples of 8
# CUDA programming guide, compute capabilities table; SM counts of one part
# each: A100 (sm_80), A10 (sm_86), L40S (sm_89), H100/H200 SXM (sm_90), B200
# (sm_100), RTX PRO 6000 (sm_120); other chips get sm_90's. A GPU with other
# counts gets a grid that fills it less or more than once: the grid-stride
# loops stay correct.
CHIPS = {80: Chip(108, 2048, 32), 86: Chip(72, 1536, 16), 89: Chip(142, 1536, 24),
         90: Chip(132, 2048, 32), 100: Chip(148, 2048, 32), 120: Chip(188, 1536, 24)}


def chip_facts(chip: str) -> Chip:
    """The Chip of 'sm_90a' and the like (sm_90's for one not in the table)."""
    m = re.fullmatch(r"sm_(\d+)[a-z]?", chip)
    return CHIPS.get(int(m.group(1)) if m else 90, CHIPS[90])


def register_bound(arity: int) -> int:
    """Registers per thread a kernel of `arity` inputs stays within
    (tests/unit/test_gpu_resources.py checks it with ptxas -v on every
    kernel); the grids are sized by it. The strided kernels, scalar, need
    fewer (ptxas 13.0, sm_90: 32 for a copy, at most 64 at 16 inputs) but
    get the same bound: one rule, and it holds."""
    return 32 + 8 * arity


def grid_blocks(chip: str, arity: int, threads: int) -> int:
    """Blocks that fill every multiprocessor once at the occupancy
    register_bound(arity) allows (the kernels loop over the rest)."""
    c = chip_facts(chip)
    regs = -(-register_bound(arity) // REGISTER_UNIT) * REGISTER_UNIT
    per_sm = min(c.threads_per_sm // threads, REGISTERS_PER_SM // (regs * threads), c.blocks_per_sm)
    return c.sms * max(1, per_sm)


# -- kernels ----------------------------------------------------------------------

ELEMENT_BYTES = {name: e.bytes for name, e in ELEMENTS.items()}


def stored_element(elem: str) -> str:
    """The element type a buffer holds in memory: i1 is one byte."""
    return ELEMENTS[elem].stored if elem in ELEMENTS else elem


def accumulator(elem: str) -> str:
    """The element type a combine computes in (ir/kinds.py: f16, bf16, fp8: f32)."""
    t = stored_element(elem)
    return ELEMENTS[t].compute or t


def lanes(elem: str) -> int:
    """Elements per 16-byte vector."""
    return VECTOR_BYTES // ELEMENT_BYTES[stored_element(elem)]


class Kernel(NamedTuple):
    """One kernel. `acc_in`: input 0 is an accumulator (of type
    accumulator(elem)); `acc_out`: so is the output. Both are no-ops where
    the accumulator is the element type itself. `strided`: the operands are
    strided views (module doc); kind COPY (arity 1, elem the integer type
    of the element's size) is the strided copy."""
    kind: str
    elem: str
    arity: int
    acc_in: bool = False
    acc_out: bool = False
    strided: bool = False

    @classmethod
    def make(cls, kind: str, elem: str, arity: int, acc_in: bool = False, acc_out: bool = False,
             strided: bool = False) -> "Kernel":
        t = stored_element(elem)
        same = accumulator(t) == t
        return cls(kind, t, arity, acc_in and not same, acc_out and not same, strided)

    @property
    def name(self) -> str:
        a = accumulator(self.elem)
        return (f"{'strided' if self.strided else 'combine'}_{self.kind}_{self.elem}_x{self.arity}"
                + (f"_from{a}" if self.acc_in else "") + (f"_to{a}" if self.acc_out else ""))

    @classmethod
    def parse(cls, name: str) -> "Kernel":
        """The Kernel named `name` (the inverse of .name)."""
        m = re.fullmatch(r"(combine|strided)_([a-z]+)_([A-Za-z0-9]+)_x(\d+)(_from\w+?)?(_to\w+)?", name)
        if not m:
            raise ValueError(f"not a combine kernel name: '{name}'")
        return cls(m.group(2), m.group(3), int(m.group(4)), bool(m.group(5)), bool(m.group(6)),
                   m.group(1) == "strided")

    def types(self) -> tuple[list[str], str]:
        """Stored element types of the inputs and of the output."""
        a = accumulator(self.elem)
        ins = [a if self.acc_in and k == 0 else self.elem for k in range(self.arity)]
        return ins, a if self.acc_out else self.elem

    def operands(self) -> list[str]:
        """The names of the address parameters: the inputs, then the output."""
        return [f"in{k}" for k in range(self.arity)] + ["out"]

    def params(self) -> list[str]:
        """The kernel's parameters (all index), in launch order: each
        operand's address of element 0 (inputs, then the output), then n;
        strided: each operand's strides (s0, s1) in the same order, then the
        sizes d0, d1, width instead of n."""
        names = self.operands()
        if not self.strided:
            return names + ["n"]
        return names + [f"{s}_{a}" for a in names for s in ("s0", "s1")] + ["d0", "d1", "w"]


def kernel_name(kind: str, elem: str, arity: int, strided: bool = False) -> str:
    return Kernel.make(kind, elem, arity, strided=strided).name


def copy_kernel(elem: str) -> Kernel:
    """The strided copy of elements of type `elem`: one kernel per element
    size (a copy moves bits), named by the integer type of that size."""
    return Kernel.make(COPY, f"i{8 * ELEMENT_BYTES[stored_element(elem)]}", 1, strided=True)


def chain(kind: str, elem: str, arity: int, strided: bool = False) -> list[tuple[Kernel, int, int]]:
    """[(Kernel, first input, inputs)] that fold `arity` inputs in device
    order, each kernel at most MAX_ARITY wide: one kernel when arity <=
    MAX_ARITY; otherwise the first writes the accumulator, the middle ones
    read and write it (as their input 0), the last reads it and writes the
    output."""
    if arity <= MAX_ARITY:
        return [(Kernel.make(kind, elem, arity, strided=strided), 0, arity)]
    out, start = [], 0
    while start < arity:
        first = start == 0
        take = MAX_ARITY if first else min(MAX_ARITY - 1, arity - start)
        last = start + take == arity
        out.append((Kernel.make(kind, elem, take + (0 if first else 1), acc_in=not first,
                                acc_out=not last, strided=strided), start, take))
        start += take
    return out


def every_kernel() -> list[Kernel]:
    """Every distinct Kernel a combine of any arity can need (chain() of
    arities up to 3 * MAX_ARITY has every shape of chain: first, middle and
    last kernels), for every kind and element type the kind applies to,
    contiguous and strided, and every strided copy."""
    out = {copy_kernel(elem) for elem in ELEMENTS}
    for kind in KINDS:
        for elem in ELEMENTS:
            try:
                combine_op(kind, elem)
            except ValueError:
                continue
            for arity in range(2, 3 * MAX_ARITY + 1):
                for strided in (False, True):
                    out.update(k for k, _, _ in chain(kind, elem, arity, strided))
    return sorted(out)


def combine_op(kind: str, elem: str) -> str:
    if kind not in KINDS or elem not in ELEMENTS:
        raise ValueError(f"reduction kind '{kind}' is not valid for element type {elem}")
    return KINDS[kind].arith_op(elem)


def _held(t: str) -> str:
    """The LLVM type a load or store of element type `t` moves (fp8: i8)."""
    return ELEMENTS[t].llvm if t in ELEMENTS else t


def _pointer_type(space: int) -> str:
    return f"!llvm.ptr<{space}>" if space else "!llvm.ptr"


def _pointers(k: Kernel, space: int) -> list[str]:
    """%p0.. (inputs, then the output): a pointer per operand address
    (generic -> global: what CUDA does with a kernel's pointer arguments)."""
    L = []
    for i, a in enumerate(k.operands()):
        g = f"%g{i}" if space else f"%p{i}"
        L += [f"%a{i} = arith.index_cast %{a} : index to i64",
              f"{g} = llvm.inttoptr %a{i} : i64 to !llvm.ptr"]
        if space:
            L.append(f"%p{i} = llvm.addrspacecast {g} : !llvm.ptr to {_pointer_type(space)}")
    return L


def _fold(k: Kernel, space: int, index: list[str], vector: bool, suffix: str) -> list[str]:
    """Lines that load every input of `k` at its element `index[j]` (i64
    values; the output's last) and fold them, in device order, each load
    next to its use (all loads first would keep every input live at once),
    and store the result."""
    ins, out_t = k.types()
    types = ins + [out_t]
    v = lanes(k.elem)
    ct = accumulator(k.elem)
    pt = _pointer_type(space)

    def ty(x: str) -> str:
        return f"vector<{v}x{x}>" if vector else x
    out = []
    acc: str | None = None
    for j, tj in enumerate(types):
        out.append(f"%e{j}{suffix} = llvm.getelementptr inbounds %p{j}[{index[j]}] : "
                   f"({pt}, i64) -> {pt}, {_held(tj)}")
        if j == k.arity:
            break
        align = VECTOR_BYTES if vector else ELEMENT_BYTES[tj]
        x = f"%x{j}{suffix}"
        held = _held(tj)
        out.append(f"{x} = llvm.load %e{j}{suffix} {{alignment = {align} : i64}} : {pt} -> {ty(held)}")
        if held != tj:
            out.append(f"%b{j}{suffix} = arith.bitcast {x} : {ty(held)} to {ty(tj)}")
            x = f"%b{j}{suffix}"
        if tj != ct:
            out.append(f"%w{j}{suffix} = arith.extf {x} : {ty(tj)} to {ty(ct)}")
            x = f"%w{j}{suffix}"
        if acc is None:
            acc = x
        else:
            out.append(f"%r{j}{suffix} = {combine_op(k.kind, ct)} {acc}, {x} : {ty(ct)}")
            acc = f"%r{j}{suffix}"
    if out_t != ct:
        out.append(f"%rt{suffix} = arith.truncf {acc} : {ty(ct)} to {ty(out_t)}")
        acc = f"%rt{suffix}"
    if _held(out_t) != out_t:
        out.append(f"%rb{suffix} = arith.bitcast {acc} : {ty(out_t)} to {ty(_held(out_t))}")
        acc = f"%rb{suffix}"
    align = VECTOR_BYTES if vector else ELEMENT_BYTES[out_t]
    out.append(f"llvm.store {acc}, %e{k.arity}{suffix} {{alignment = {align} : i64}} : {ty(_held(out_t))}, {pt}")
    return out


_GRID_STRIDE = ["%c0 = arith.constant 0 : index",
                "%gid0 = arith.muli %bid, %bdim : index",
                "%gid = arith.addi %gid0, %tid : index",
                "%stride = arith.muli %gdim, %bdim : index"]


def _body(k: Kernel, space: int) -> list[str]:
    """Kernel body lines of Kernel `k`; expects its params() and %tid,
    %bid, %bdim, %gdim (all index). `space`: the pointers' address space
    (1: global, on the GPU)."""
    if k.strided:
        return _strided_body(k, space)
    t = k.elem
    ins, out_t = k.types()
    types = ins + [out_t]
    v = lanes(t)
    lead = 1 if k.acc_in else 0  # the first operand of the element type sets the head
    L = _GRID_STRIDE + [f"%cv = arith.constant {v} : index",
                        f"%c16 = arith.constant {VECTOR_BYTES} : index"]
    L += [f"%c{b}b = arith.constant {b} : index" for b in sorted({ELEMENT_BYTES[x] for x in types})]
    # A pointer per operand and its address modulo 16.
    L += _pointers(k, space)
    L += [f"%m{i} = arith.remui %{a}, %c16 : index" for i, a in enumerate(k.operands())]
    # The head: elements up to the lead operand's first 16-byte boundary.
    # Vectors only when the lead's misalignment is a whole number of elements
    # and the head aligns every operand (equal misalignment, for one type).
    esize = ELEMENT_BYTES[t]
    L += [f"%ce = arith.constant {esize} : index",
          f"%me = arith.remui %m{lead}, %ce : index",
          "%ok0 = arith.cmpi eq, %me, %c0 : index",
          f"%hb0 = arith.subi %c16, %m{lead} : index",
          "%hb = arith.remui %hb0, %c16 : index",
          "%he = arith.divui %hb, %ce : index"]
    ok = "%ok0"
    for i, ti in enumerate(types):
        if i == lead:
            continue
        L += [f"%hx{i} = arith.muli %he, %c{ELEMENT_BYTES[ti]}b : index",
              f"%hy{i} = arith.addi %m{i}, %hx{i} : index",
              f"%hz{i} = arith.remui %hy{i}, %c16 : index",
              f"%eq{i} = arith.cmpi eq, %hz{i}, %c0 : index",
              f"%ok{i + 1} = arith.andi {ok}, %eq{i} : i1"]
        ok = f"%ok{i + 1}"
    L += [
        "%hn = arith.minui %he, %n : index",
        f"%h = arith.select {ok}, %hn, %n : index",
        "%rest = arith.subi %n, %h : index",
        "%nv = arith.divui %rest, %cv : index",
        "%vlen = arith.muli %nv, %cv : index",
        "%tail = arith.addi %h, %vlen : index",
        "%ntail = arith.subi %n, %tail : index",
        "%ns = arith.addi %h, %ntail : index",
    ]
    every = k.arity + 1
    # Vector loop over [h, h + nv*V).
    L += ["scf.for %j = %gid to %nv step %stride {",
          "  %jj = arith.muli %j, %cv : index",
          "  %iv = arith.addi %h, %jj : index",
          "  %i64v = arith.index_cast %iv : index to i64"]
    L += ["  " + x for x in _fold(k, space, ["%i64v"] * every, True, "v")] + ["}"]
    # Scalar loop over the head [0, h) and the tail [h + nv*V, n).
    L += ["scf.for %q = %gid to %ns step %stride {",
          "  %inhead = arith.cmpi ult, %q, %h : index",
          "  %qt0 = arith.subi %q, %h : index",
          "  %qt = arith.addi %tail, %qt0 : index",
          "  %is = arith.select %inhead, %q, %qt : index",
          "  %i64s = arith.index_cast %is : index to i64"]
    L += ["  " + x for x in _fold(k, space, ["%i64s"] * every, False, "s")] + ["}"]
    return L


def _strided_body(k: Kernel, space: int) -> list[str]:
    """The strided kernel: element (i0, i1, c) of the d0 x d1 x w index
    space is operand j's element i0*s0_j + i1*s1_j + c. One grid-stride
    loop over the d0*d1*w elements, scalar: every row of every operand
    starts at its own alignment (a vector loop would need a head per row
    and operand), and a block's rows may be a few elements wide; the
    divisions per element are the price of spreading any shape evenly."""
    names = k.operands()
    L = _GRID_STRIDE + ["%rows = arith.muli %d0, %d1 : index",
                        "%n = arith.muli %rows, %w : index"]
    L += _pointers(k, space)
    L += ["scf.for %q = %gid to %n step %stride {",
          "  %r = arith.divui %q, %w : index",
          "  %c = arith.remui %q, %w : index",
          "  %i0 = arith.divui %r, %d1 : index",
          "  %i1 = arith.remui %r, %d1 : index"]
    for j, a in enumerate(names):
        L += [f"  %o0_{j} = arith.muli %i0, %s0_{a} : index",
              f"  %o1_{j} = arith.muli %i1, %s1_{a} : index",
              f"  %o_{j} = arith.addi %o0_{j}, %o1_{j} : index",
              f"  %ix_{j} = arith.addi %o_{j}, %c : index",
              f"  %i64_{j} = arith.index_cast %ix_{j} : index to i64"]
    L += ["  " + x for x in _fold(k, space, [f"%i64_{j}" for j in range(len(names))], False, "s")]
    return L + ["}"]


KernelSpec = Kernel | tuple[str, str, int]  # a Kernel, or (kind, elem, arity)


def _kernel(k: KernelSpec) -> Kernel:
    k = k if isinstance(k, Kernel) else Kernel.make(*k)
    if k.kind != COPY:
        combine_op(k.kind, k.elem)
    elif k.arity != 1 or not k.strided:
        raise ValueError(f"a copy kernel is strided, of arity 1: {k}")
    return k


def gpu_func_text(*spec: KernelSpec | str | int) -> str:
    """`gpu.func @combine_... kernel` (to be placed in a gpu.module) of a
    Kernel, or of (kind, elem, arity)."""
    k = _kernel(spec[0] if len(spec) == 1 else spec)  # type: ignore[arg-type]  # (one spec, or its parts)
    head = [
        "%tid = gpu.thread_id x",
        "%bid = gpu.block_id x",
        "%bdim = gpu.block_dim x",
        "%gdim = gpu.grid_dim x",
    ]
    body = head + _body(k, 1) + ["gpu.return"]
    args = ", ".join(f"%{p}: index" for p in k.params())
    return (f"gpu.func @{k.name}({args}) kernel {{\n  " + "\n  ".join(body) + "\n}")


def cpu_func_text(*spec: KernelSpec | str | int) -> str:
    """The kernel body as `func.func` taking the thread/block ids as
    arguments (for CPU tests of the index arithmetic)."""
    k = _kernel(spec[0] if len(spec) == 1 else spec)  # type: ignore[arg-type]  # (one spec, or its parts)
    args = ", ".join(f"%{p}: index" for p in k.params() + ["tid", "bid", "bdim", "gdim"])
    body = _body(k, 0) + ["return"]
    return (f"func.func @{k.name}({args}) "
            "attributes {llvm.emit_c_interface} {\n  " + "\n  ".join(body) + "\n}")


# -- the gpu.module that holds them -----------------------------------------------

def kernel_module(module_op: ir.Operation, chip: str) -> ir.OpView:
    body = module_op.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name == "gpu.module" and \
                ir.StringAttr(op.attributes["sym_name"]).value == KERNEL_MODULE:
            return op
    target = ir.Attribute.parse(
        f'#nvvm.target<O = 3, chip = "{chip}", features = "{features_for(chip)}">')
    with ir.InsertionPoint(body), module_op.location:
        mod = gpu.GPUModuleOp(KERNEL_MODULE, targets=ir.ArrayAttr.get([target]))
        mod.regions[0].blocks.append()
    return mod


def add_kernels(module_op: ir.Operation, chip: str, needed: Mapping[str, KernelSpec]) -> None:
    if not needed:
        return
    mod = kernel_module(module_op, chip)
    block = mod.regions[0].blocks[0]
    have = {ir.StringAttr(op.attributes["sym_name"]).value for op in block.operations
            if "sym_name" in op.attributes}
    for name in sorted(needed):
        if name in have:
            continue
        text = ("module attributes {gpu.container_module} { gpu.module @m { "
                + gpu_func_text(needed[name]) + " } }")
        parsed = ir.Module.parse(text, module_op.context)
        kernel = parsed.body.operations[0].regions[0].blocks[0].operations[0]
        block.append(kernel.operation.detach_from_parent())
