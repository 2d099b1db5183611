"""The combine kernels of coll-to-gpu, as MLIR text.

One kernel per (kind, element type, arity): `out = in0 (+) in1 (+) ...`,
elementwise over `n` elements. Every buffer argument is a
`memref<?xT, strided<[1], offset: ?>>`, so one kernel serves whole buffers
and slices at any offset (the descriptor carries base pointer and offset).

Body: a grid-stride loop over 16-byte vectors (`vector.load {alignment =
16}`, which NVPTX turns into `ld.global.v4.b32`-style loads), then a
grid-stride loop over the scalar head and tail. The vector loop runs from
the first 16-byte-aligned element when every operand has the same address
modulo 16; otherwise all elements take the scalar loop. f16 and bf16 are
combined in f32 and rounded once (as on the CPU). i1 buffers are stored as
i8 (one byte per element, like numpy bool).

The same body is also emitted as a plain `func.func` whose thread and block
ids are arguments (`cpu_func_text`): tests run it on the CPU, thread by
thread, to check the index arithmetic without a GPU.
"""

from mlir import ir
from mlir.dialects import gpu

from ...ir.kinds import ELEMENTS, KINDS

VECTOR_BYTES = 16
KERNEL_MODULE = "coll_kernels"
# The lowest PTX version each newer chip takes (LLVM 22 NVPTX; below it llc
# stops with "PTX version 8.0 does not support target ...").
CHIP_FEATURES = {"sm_100": "+ptx86", "sm_100a": "+ptx86", "sm_100f": "+ptx88",
                 "sm_101": "+ptx86", "sm_101a": "+ptx86", "sm_101f": "+ptx88",
                 "sm_103": "+ptx88", "sm_103a": "+ptx88", "sm_103f": "+ptx88",
                 "sm_110": "+ptx90", "sm_110a": "+ptx90", "sm_110f": "+ptx90",
                 "sm_120": "+ptx87", "sm_120a": "+ptx87", "sm_120f": "+ptx88",
                 "sm_121": "+ptx88", "sm_121a": "+ptx88", "sm_121f": "+ptx88"}
DEFAULT_FEATURES = "+ptx80"  # the upstream default +ptx60 is rejected for sm_90


def features_for(chip):
    return CHIP_FEATURES.get(chip, DEFAULT_FEATURES)

ELEMENT_BYTES = {name: e.bytes for name, e in ELEMENTS.items()}


def stored_element(elem):
    """The element type a buffer holds in memory: i1 is one byte."""
    return ELEMENTS[elem].stored if elem in ELEMENTS else elem


def lanes(elem):
    """Elements per 16-byte vector."""
    return VECTOR_BYTES // ELEMENT_BYTES[stored_element(elem)]


def arg_type(elem):
    return f"memref<?x{stored_element(elem)}, strided<[1], offset: ?>>"


def kernel_name(kind, elem, arity):
    return f"combine_{kind}_{stored_element(elem)}_x{arity}"


def combine_op(kind, elem):
    if kind not in KINDS or elem not in ELEMENTS:
        raise ValueError(f"reduction kind '{kind}' is not valid for element type {elem}")
    return KINDS[kind].arith_op(elem)


def _body(kind, elem, arity):
    """Kernel body lines; expects %in0.., %out, %n, %tid, %bid, %bdim, %gdim."""
    t = stored_element(elem)
    esize, v = ELEMENT_BYTES[t], lanes(elem)
    mt = arg_type(elem)
    vt = f"vector<{v}x{t}>"
    wide = t in ("f16", "bf16")  # combined in f32
    ct, cvt = ("f32", f"vector<{v}xf32>") if wide else (t, vt)
    op = combine_op(kind, t)
    names = [f"in{k}" for k in range(arity)] + ["out"]
    L = [
        "%c0 = arith.constant 0 : index",
        f"%cv = arith.constant {v} : index",
        f"%ce = arith.constant {esize} : index",
        f"%c16 = arith.constant {VECTOR_BYTES} : index",
        "%gid0 = arith.muli %bid, %bdim : index",
        "%gid = arith.addi %gid0, %tid : index",
        "%stride = arith.muli %gdim, %bdim : index",
    ]
    # Address of element 0 of every operand, modulo 16.
    for k, a in enumerate(names):
        L += [
            f"%p{k} = memref.extract_aligned_pointer_as_index %{a} : {mt} -> index",
            f"%b{k}, %o{k}, %s{k}, %st{k} = memref.extract_strided_metadata %{a} : {mt} -> memref<{t}>, index, index, index",
            f"%ob{k} = arith.muli %o{k}, %ce : index",
            f"%ad{k} = arith.addi %p{k}, %ob{k} : index",
            f"%m{k} = arith.remui %ad{k}, %c16 : index",
        ]
    # Vectors only when all operands share the misalignment (and it is a
    # whole number of elements): then the same head aligns them all.
    L += ["%me = arith.remui %m0, %ce : index",
          "%ok0 = arith.cmpi eq, %me, %c0 : index"]
    for k in range(1, len(names)):
        L += [f"%eq{k} = arith.cmpi eq, %m0, %m{k} : index",
              f"%ok{k} = arith.andi %ok{k - 1}, %eq{k} : i1"]
    ok = f"%ok{len(names) - 1}"
    L += [
        "%hb0 = arith.subi %c16, %m0 : index",
        "%hb = arith.remui %hb0, %c16 : index",
        "%he = arith.divui %hb, %ce : index",
        "%hn = arith.minui %he, %n : index",
        f"%h = arith.select {ok}, %hn, %n : index",
        "%rest = arith.subi %n, %h : index",
        "%nv = arith.divui %rest, %cv : index",
        "%vlen = arith.muli %nv, %cv : index",
        "%tail = arith.addi %h, %vlen : index",
        "%ntail = arith.subi %n, %tail : index",
        "%ns = arith.addi %h, %ntail : index",
    ]

    def combine(vals, typ, ctyp, suffix):
        out = []
        if wide:
            for k in range(arity):
                out.append(f"%w{k}{suffix} = arith.extf %x{k}{suffix} : {typ} to {ctyp}")
            vals = [f"%w{k}{suffix}" for k in range(arity)]
        acc = vals[0]
        for k in range(1, arity):
            out.append(f"%r{k}{suffix} = {op} {acc}, {vals[k]} : {ctyp}")
            acc = f"%r{k}{suffix}"
        if wide:
            out.append(f"%rt{suffix} = arith.truncf {acc} : {ctyp} to {typ}")
            acc = f"%rt{suffix}"
        return out, acc

    # Vector loop over [h, h + nv*V).
    L += ["scf.for %j = %gid to %nv step %stride {",
          "  %jj = arith.muli %j, %cv : index",
          "  %iv = arith.addi %h, %jj : index"]
    for k in range(arity):
        L.append(f"  %x{k}v = vector.load %in{k}[%iv] {{alignment = {VECTOR_BYTES}}} : {mt}, {vt}")
    lines, acc = combine([f"%x{k}v" for k in range(arity)], vt, cvt, "v")
    L += ["  " + x for x in lines]
    L += [f"  vector.store {acc}, %out[%iv] {{alignment = {VECTOR_BYTES}}} : {mt}, {vt}", "}"]
    # Scalar loop over the head [0, h) and the tail [h + nv*V, n).
    L += ["scf.for %q = %gid to %ns step %stride {",
          "  %inhead = arith.cmpi ult, %q, %h : index",
          "  %qt0 = arith.subi %q, %h : index",
          "  %qt = arith.addi %tail, %qt0 : index",
          "  %is = arith.select %inhead, %q, %qt : index"]
    for k in range(arity):
        L.append(f"  %x{k}s = memref.load %in{k}[%is] : {mt}")
    lines, acc = combine([f"%x{k}s" for k in range(arity)], t, ct, "s")
    L += ["  " + x for x in lines]
    L += [f"  memref.store {acc}, %out[%is] : {mt}", "}"]
    return L


def _args(elem, arity):
    mt = arg_type(elem)
    return [f"%in{k}: {mt}" for k in range(arity)] + [f"%out: {mt}", "%n: index"]


def gpu_func_text(kind, elem, arity):
    """`gpu.func @combine_... kernel` (to be placed in a gpu.module)."""
    head = [
        "%tid = gpu.thread_id x",
        "%bid = gpu.block_id x",
        "%bdim = gpu.block_dim x",
        "%gdim = gpu.grid_dim x",
    ]
    body = head + _body(kind, elem, arity) + ["gpu.return"]
    args = ", ".join(_args(elem, arity))
    return (f"gpu.func @{kernel_name(kind, elem, arity)}({args}) kernel {{\n  "
            + "\n  ".join(body) + "\n}")


def cpu_func_text(kind, elem, arity):
    """The kernel body as `func.func` taking the thread/block ids as
    arguments (for CPU tests of the index arithmetic)."""
    args = ", ".join(_args(elem, arity) + ["%tid: index", "%bid: index",
                                          "%bdim: index", "%gdim: index"])
    body = _body(kind, elem, arity) + ["return"]
    return (f"func.func @{kernel_name(kind, elem, arity)}({args}) "
            "attributes {llvm.emit_c_interface} {\n  " + "\n  ".join(body) + "\n}")


# -- the gpu.module that holds them -----------------------------------------------

def kernel_module(module_op, chip):
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


def add_kernels(module_op, chip, needed):
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
                + gpu_func_text(*needed[name]) + " } }")
        parsed = ir.Module.parse(text, module_op.context)
        kernel = parsed.body.operations[0].regions[0].blocks[0].operations[0]
        block.append(kernel.operation.detach_from_parent())
