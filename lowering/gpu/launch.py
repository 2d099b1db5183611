"""Kernel launches with functions looked up once, at load (lower_to_llvm's last step).

Upstream's translation of `gpu.launch_func` (22.1.8, SelectObjectAttr) emits
`mgpuModuleGetFunction(module, name)` before every `mgpuLaunchKernel`: a
driver call (cuModuleGetFunction) per launch, 56 per call for a ring on 8
devices. So after gpu-lower-to-nvvm-pipeline, when the host is LLVM dialect,
every `gpu.binary` and `gpu.launch_func` is replaced here by what the
translation would make, with the lookup moved to load time:

  load    constructor `__coll_kernels_load` (priority 123, before
          `__coll_init`): mgpuModuleLoad (cubin, fatbin) or
          mgpuModuleLoadJIT (PTX) per binary, then mgpuModuleGetFunction
          per kernel into the table `__coll_functions`; the destructor
          unloads the modules after `__coll_fini` ran.
  call    per launch: the kernel's function pointer (loaded from the table
          once per host function, in its entry block), its arguments stored
          into a parameter struct (one per host function and signature, in
          its entry block: the driver copies the parameters when the launch
          is enqueued, or captured), `mgpuLaunchKernel`.

The object bytes stay in the module as `__coll_binary_<name>` globals with
`coll.kernel_target` / `coll.kernel_format` attributes, so `kernel_objects`
(lowering/gpu/nvvm.py) still finds them.
"""
from typing import Any, cast

from mlir import ir
from mlir.dialects import gpu, llvm

from ...core.errors import PassError

FUNCTIONS, MODULES = "__coll_functions", "__coll_modules"
LOAD, UNLOAD = "__coll_kernels_load", "__coll_kernels_unload"
BINARY_PREFIX = "__coll_binary_"
LOADER_PRIORITY = 123  # upstream's; __coll_init (124) runs after, __coll_fini before the unload
LAUNCH = "mgpuLaunchKernel"
LAUNCH_TYPE = "!llvm.ptr, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64"
# gpu::CompilationTarget (22.1.8): Offload = 1, Assembly = 2, Binary = 3, Fatbin = 4
ASSEMBLY = 2
FORMAT_NAMES = {1: "offload", 2: "isa", 3: "bin", 4: "fatbin"}


Binary = tuple[ir.Operation, str, Any]  # (gpu.binary, its name, its first object: a gpu.ObjectAttr, no stub)


def _ptr() -> ir.Type:
    return ir.Type.parse("!llvm.ptr")


def _i64(v: int) -> ir.Value:
    return llvm.mlir_constant(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v))


def _gep(base: ir.Value, indices: list[int], elem: str | ir.Type) -> ir.Value:
    return llvm.getelementptr(_ptr(), base, [], ir.DenseI32ArrayAttr.get(indices),
                              ir.TypeAttr.get(ir.Type.parse(elem) if isinstance(elem, str) else elem),
                              ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0))


def _binaries(module_op: ir.Operation) -> list[Binary]:
    """[(name, object attr)] of the gpu.binary ops (the first object of each:
    upstream's default #gpu.select_object)."""
    out: list[Binary] = []
    for op in module_op.regions[0].blocks[0].operations:
        if op.operation.name == "gpu.binary":
            name = ir.StringAttr(op.operation.attributes["sym_name"]).value
            objs = ir.ArrayAttr(op.operation.attributes["objects"])
            if "offloadingHandler" in op.operation.attributes:
                handler = str(op.operation.attributes["offloadingHandler"])
                if handler not in ("#gpu.select_object<0>", "#gpu.select_object"):
                    raise PassError(f"gpu.binary @{name}: offloading handler {handler} is not "
                                    "supported; expected the default #gpu.select_object",
                                    op.operation.location)
            out.append((op.operation, name, gpu.ObjectAttr(objs[0])))
    return out


def _launches(module_op: ir.Operation) -> list["gpu.LaunchFuncOp"]:
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.launch_func":
            found.append(cast(gpu.LaunchFuncOp, op.opview))
        return ir.WalkResult.ADVANCE
    module_op.walk(visit, ir.WalkOrder.POST_ORDER)  # (the default; the stubs have none)
    return found


class _HostFunction:
    """Per host function: the parameter structs and function pointers, made
    in its entry block once."""

    def __init__(self, func: ir.Operation, table: dict[tuple[str, str], int]) -> None:
        self.entry = func.regions[0].blocks[0]
        self.first = self.entry.operations[0]
        self.table = table
        self.structs: dict[str, tuple[list[ir.Value], ir.Value]] = {}  # struct type text -> (fields, array)
        self.functions: dict[int, ir.Value] = {}  # table index -> loaded pointer
        self.null: ir.Value | None = None

    def _at_entry(self) -> ir.InsertionPoint:
        return ir.InsertionPoint(self.first)

    def function(self, index: int) -> ir.Value:
        if index not in self.functions:
            with self._at_entry():
                base = llvm.mlir_addressof(_ptr(), FUNCTIONS)
                self.functions[index] = llvm.load(_ptr(), _gep(base, [index], "!llvm.ptr"))
        return self.functions[index]

    def params(self, types: list[ir.Type]) -> tuple[list[ir.Value], ir.Value]:
        key = "!llvm.struct<(" + ", ".join(str(t) for t in types) + ")>"
        if key not in self.structs:
            with self._at_entry():
                one = _i64(1)
                struct = llvm.alloca(_ptr(), one, ir.TypeAttr.get(ir.Type.parse(key)), alignment=8)
                array = llvm.alloca(_ptr(), _i64(max(len(types), 1)), ir.TypeAttr.get(_ptr()),
                                    alignment=8)
                fields = []
                for i in range(len(types)):
                    field = _gep(struct, [0, i], key)
                    llvm.store(field, _gep(array, [i], "!llvm.ptr"))
                    fields.append(field)
            self.structs[key] = (fields, array)
        return self.structs[key]

    def null_ptr(self) -> ir.Value:
        if self.null is None:
            with self._at_entry():
                self.null = llvm.mlir_zero(_ptr())
        return self.null


def _int(value: ir.Value, width: int, what: str, loc: ir.Location) -> ir.Value:
    try:
        t = ir.IntegerType(value.type)
    except ValueError:
        t = None
    if t is None:
        raise PassError(f"gpu.launch_func: {what} of type {value.type}; expected an integer", loc)
    target = ir.IntegerType.get_signless(width)
    if t.width == width:
        return value
    return llvm.zext(target, value) if t.width < width else llvm.trunc(target, value)


def own_launches(module_op: ir.Operation) -> None:
    """Replaces gpu.binary / gpu.launch_func (LLVM-dialect host) by the
    load-time loader and per-launch calls described in the module doc."""
    binaries = _binaries(module_op)
    launches = _launches(module_op)
    if not binaries and not launches:
        return
    if any(l.clusterSizeX is not None or l.asyncObject is None for l in launches):
        # Cluster launches and synchronous ones (a stream made and synced per
        # launch: local work around a collective, lowering/gpu/local_buffers.py) stay
        # on upstream's path, lookups included.
        return
    by_name = {name: (op, obj) for op, name, obj in binaries}
    table: dict[tuple[str, str], int] = {}  # (binary, kernel) -> index
    hosts: dict[ir.Operation, _HostFunction] = {}  # host llvm.func -> _HostFunction
    with module_op.context, module_op.location:
        for launch in launches:
            op = launch.operation
            loc = op.location
            ref = str(launch.kernel)  # @binary::@kernel
            parts = [p.strip().lstrip("@").strip('"') for p in ref.split("::")]
            if len(parts) != 2 or parts[0] not in by_name:
                raise PassError(f"gpu.launch_func of {ref}: no gpu.binary of that name", loc)
            key = (parts[0], parts[1])
            index = table.setdefault(key, len(table))
            func = op.parent
            while func is not None and func.name != "llvm.func":
                func = func.parent
            assert func is not None  # (a launch is in a host llvm.func)
            host = hosts.get(func)
            if host is None:
                host = hosts[func] = _HostFunction(func, table)
            operands = list(launch.kernelOperands)
            fields, array = host.params([v.type for v in operands])
            fn = host.function(index)
            with ir.InsertionPoint(op), loc:
                for v, field in zip(operands, fields):
                    llvm.store(v, field)
                dims = [_int(v, 64, "a grid or block size", loc) for v in (
                    launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ,
                    launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ)]
                smem = launch.dynamicSharedMemorySize
                smem = _int(smem, 32, "the dynamic shared memory size", loc) if smem is not None else \
                    llvm.mlir_constant(ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0))
                llvm.call(None, [fn] + dims + [smem, launch.asyncObject, array, host.null_ptr(),
                                               _i64(len(operands))], [], [],
                          callee=ir.FlatSymbolRefAttr.get(LAUNCH))
            op.erase()
        _install(module_op, binaries, table)


def _install(module_op: ir.Operation, binaries: list[Binary], table: dict[tuple[str, str], int]) -> None:
    body = module_op.regions[0].blocks[0]
    declared = {ir.StringAttr(op.operation.attributes["sym_name"]).value
                for op in body.operations if op.operation.name == "llvm.func"}
    decls = {LAUNCH: f"llvm.func @{LAUNCH}({LAUNCH_TYPE})",
             "mgpuModuleLoad": "llvm.func @mgpuModuleLoad(!llvm.ptr, i64) -> !llvm.ptr",
             "mgpuModuleLoadJIT": "llvm.func @mgpuModuleLoadJIT(!llvm.ptr, i32) -> !llvm.ptr",
             "mgpuModuleGetFunction": "llvm.func @mgpuModuleGetFunction(!llvm.ptr, !llvm.ptr) -> !llvm.ptr",
             "mgpuModuleUnload": "llvm.func @mgpuModuleUnload(!llvm.ptr)"}
    lines = [text for name, text in decls.items() if name not in declared]
    load, unload = [], []
    modules = {}
    for b, (_, name, obj) in enumerate(binaries):
        data = bytes(obj.object)
        gname = BINARY_PREFIX + name
        lines.append(f"llvm.mlir.global internal constant @{gname}({ir.StringAttr.get(data)}) "
                     f"{{addr_space = 0 : i32, alignment = 8 : i64, "
                     f"coll.kernel_target = {ir.StringAttr.get(str(obj.target))}, "
                     f"coll.kernel_format = \"{FORMAT_NAMES.get(obj.format, str(obj.format))}\"}} "
                     f": !llvm.array<{len(data)} x i8>")
        load.append(f"%bin{b} = llvm.mlir.addressof @{gname} : !llvm.ptr")
        if obj.format == ASSEMBLY:
            props = obj.properties
            opt = ir.IntegerAttr(props["O"]).value if props is not None and "O" in props else 0
            load += [f"%opt{b} = llvm.mlir.constant({opt} : i32) : i32",
                     f"%mod{b} = llvm.call @mgpuModuleLoadJIT(%bin{b}, %opt{b}) : (!llvm.ptr, i32) -> !llvm.ptr"]
        else:
            load += [f"%size{b} = llvm.mlir.constant({len(data)} : i64) : i64",
                     f"%mod{b} = llvm.call @mgpuModuleLoad(%bin{b}, %size{b}) : (!llvm.ptr, i64) -> !llvm.ptr"]
        load += [f"%mods{b} = llvm.mlir.addressof @{MODULES} : !llvm.ptr",
                 f"%mslot{b} = llvm.getelementptr %mods{b}[{b}] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr",
                 f"llvm.store %mod{b}, %mslot{b} : !llvm.ptr, !llvm.ptr"]
        unload += [f"%umods{b} = llvm.mlir.addressof @{MODULES} : !llvm.ptr",
                   f"%uslot{b} = llvm.getelementptr %umods{b}[{b}] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr",
                   f"%umod{b} = llvm.load %uslot{b} : !llvm.ptr -> !llvm.ptr",
                   f"llvm.call @mgpuModuleUnload(%umod{b}) : (!llvm.ptr) -> ()"]
        modules[name] = b
    for (bname, kname), k in sorted(table.items(), key=lambda kv: kv[1]):
        sname = f"__coll_kernel_name_{k}"
        lines.append(f"llvm.mlir.global private constant @{sname}({ir.StringAttr.get(kname + chr(0))}) "
                     f"{{addr_space = 0 : i32}} : !llvm.array<{len(kname.encode()) + 1} x i8>")
        b = modules[bname]
        load += [f"%name{k} = llvm.mlir.addressof @{sname} : !llvm.ptr",
                 f"%fn{k} = llvm.call @mgpuModuleGetFunction(%mod{b}, %name{k}) : (!llvm.ptr, !llvm.ptr) -> !llvm.ptr",
                 f"%fns{k} = llvm.mlir.addressof @{FUNCTIONS} : !llvm.ptr",
                 f"%fslot{k} = llvm.getelementptr %fns{k}[{k}] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr",
                 f"llvm.store %fn{k}, %fslot{k} : !llvm.ptr, !llvm.ptr"]
    for name, count in ((MODULES, len(binaries)), (FUNCTIONS, len(table))):
        arr = f"!llvm.array<{max(count, 1)} x ptr>"
        lines.append(f"llvm.mlir.global internal @{name}() {{addr_space = 0 : i32}} : {arr} {{\n"
                     f"  %z = llvm.mlir.zero : {arr}\n  llvm.return %z : {arr}\n}}")

    def func(name: str, ops: list[str]) -> str:
        return f"llvm.func internal @{name}() {{\n" + "".join(f"  {x}\n" for x in ops + ["llvm.return"]) + "}"
    lines += [func(LOAD, load), func(UNLOAD, unload),
              f"llvm.mlir.global_ctors ctors = [@{LOAD}], priorities = [{LOADER_PRIORITY} : i32], "
              "data = [#llvm.zero]",
              f"llvm.mlir.global_dtors dtors = [@{UNLOAD}], priorities = [{LOADER_PRIORITY} : i32], "
              "data = [#llvm.zero]"]
    parsed = ir.Module.parse("\n".join(lines))
    for view in list(parsed.body.operations):
        body.append(view.operation)
    for op, _, _ in binaries:
        op.erase()


def embedded_objects(module_op: ir.Operation) -> list[tuple[str, str, str, bytes]]:
    """[(name, target text, format, bytes)] of the binaries own_launches embedded."""
    found = []
    for view in module_op.regions[0].blocks[0].operations:
        op = view.operation
        if op.name == "llvm.mlir.global" and "coll.kernel_target" in op.attributes:
            name = ir.StringAttr(op.attributes["sym_name"]).value[len(BINARY_PREFIX):]
            data = ir.StringAttr(op.attributes["value"]).value_bytes
            found.append((name, ir.StringAttr(op.attributes["coll.kernel_target"]).value,
                          ir.StringAttr(op.attributes["coll.kernel_format"]).value, data))
    return found
