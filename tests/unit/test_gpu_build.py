"""The GPU compile route without a GPU: the shared library, its entry symbol
and dependencies, runtime call counts against the explicit program, and
the errors of coll-to-gpu and coll-build."""
import subprocess
import sys

import pytest
from mlir import ir

from coll.analysis.stats import analyze
from coll.core import tools
from coll.core.errors import PassError
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.ir.walk import find_ops
from coll.lowering.gpu import nvvm
from coll.lowering.gpu.to_gpu import parse_device_map, to_gpu
from coll.passes.lower_collectives import lower_collectives


def _lowered(n, shape, dtype="f32", kind="sum", strategy="ring", **options):
    m = ir.Module.parse(all_reduce_module(n, shape, dtype, kind, strategy=strategy))
    lower_collectives(m.operation, strategy)
    stats = analyze(m.operation)["all_reduce"]
    to_gpu(m.operation, **options)
    return m, stats


def _symbols(path):
    out = subprocess.run([tools.tool("llvm-nm"), "-D", "--defined-only", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def _dynamic(path):
    return subprocess.run([tools.tool("llvm-readelf"), "-d", str(path)],
                          capture_output=True, text=True, check=True).stdout


def test_shared_library_exports_the_entry(tmp_path):
    with make_context():
        m, _ = _lowered(4, [1000])
        lib = tmp_path / "libprog.so"
        nvvm.compile_module(m.operation, lib)
    assert "_mlir_ciface_all_reduce" in _symbols(lib)
    dyn = _dynamic(lib)
    assert "[libmlir_cuda_runtime.so]" in dyn
    assert "[$ORIGIN]" in dyn


@pytest.mark.parametrize("strategy", ["naive", "ring", "all2all"])
@pytest.mark.parametrize("n", [2, 3, 8])
def test_runtime_calls_match_the_explicit_program(strategy, n):
    """Per call (the entry function): one mgpuMemcpy per copy, one
    mgpuLaunchKernel per combine, no stream, event or allocation made, each
    event recorded once, one host sync. The constructor makes one stream
    per device, the events and the pool; the destructor destroys them."""
    with make_context():
        m, stats = _lowered(n, [4096 + 3], strategy=strategy)
        nvvm.lower_to_llvm(m.operation, fmt="isa")
        text = nvvm.host_llvm_ir(m.operation)
    calls = nvvm.host_calls(text)
    call, init, fini = calls["all_reduce"], calls["__coll_init"], calls["__coll_fini"]
    assert call["mgpuMemcpy"] == stats["copies"] + stats["local_copies"]
    assert call["mgpuLaunchKernel"] == stats["kernels"]
    for made in ("mgpuStreamCreate", "mgpuEventCreate", "mgpuMemAlloc", "mgpuMemFree",
                 "mgpuStreamDestroy", "mgpuEventDestroy"):
        assert call[made] == 0, made
    assert call["mgpuStreamSynchronize"] == 1
    assert call["mgpuEventRecord"] == init["mgpuEventCreate"]
    assert call["mgpuStreamWaitEvent"] >= call["mgpuEventRecord"]
    assert init["mgpuStreamCreate"] == n == fini["mgpuStreamDestroy"]
    assert init["mgpuEventCreate"] == fini["mgpuEventDestroy"]
    assert init["mgpuMemAlloc"] == 1 == fini["mgpuMemFree"]
    nvvm.check_streams(text)


_INIT_FINI = ("define internal void @__coll_init() {{\n{}}}\n"
              "define internal void @__coll_fini() {{\n{}}}\n")


def test_check_streams_rejects_a_leak():
    with pytest.raises(PassError, match="makes 2 .mgpuStreamCreate. at load but destroys 1"):
        nvvm.check_streams(_INIT_FINI.format("call ptr @mgpuStreamCreate()\n" * 2,
                                             "call void @mgpuStreamDestroy(ptr %1)\n"))


def test_check_streams_rejects_a_stream_per_call():
    with pytest.raises(PassError, match="host function f calls mgpuStreamCreate"):
        nvvm.check_streams(_INIT_FINI.format("", "") + "define void @f() {\n"
                           "  %1 = call ptr @mgpuStreamCreate()\n"
                           "  call void @mgpuStreamDestroy(ptr %1)\n}\n")


def test_kernels_are_shared_across_functions():
    """Two functions reducing f32 with 2 inputs use one kernel."""
    with make_context():
        a = all_reduce_module(2, [64], "f32", "sum", name="a")
        b = all_reduce_module(2, [32], "f32", "sum", name="b")
        body = lambda t: t.split("\n", 1)[1].rsplit("}", 1)[0]
        m = ir.Module.parse("module {\n" + body(a) + body(b) + "}")
        lower_collectives(m.operation, "naive")
        names = to_gpu(m.operation)
        assert names == ["combine_sum_f32_x2"]
        text = str(m)
    assert text.count("gpu.func @combine_sum_f32_x2(") == 1
    assert text.count("@coll_kernels::@combine_sum_f32_x2") == 4


def test_ptx_has_vector_loads():
    with make_context():
        m, _ = _lowered(3, [1 << 12], dtype="bf16", kind="max", strategy="naive")
        nvvm.lower_to_llvm(m.operation, fmt="isa")
        ptx = nvvm.ptx_text(m.operation)
    assert ".visible .entry combine_max_bf16_x3(" in ptx
    assert ptx.count("ld.global.v4.b32") == 3


def test_nested_coll_ops_are_rejected():
    text = """
    func.func @f(%a: memref<4xf32>, %b: memref<4xf32>) {
      %x = memref.memory_space_cast %a : memref<4xf32> to memref<4xf32, #coll.device<0 : i64>>
      %y = memref.memory_space_cast %b : memref<4xf32> to memref<4xf32, #coll.device<1 : i64>>
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %c2 step %c1 {
        %t = "coll.copy"(%x, %y) : (memref<4xf32, #coll.device<0 : i64>>, memref<4xf32, #coll.device<1 : i64>>) -> !coll.token
        "coll.wait"(%t) : (!coll.token) -> ()
      }
      return
    }"""
    with make_context():
        m = ir.Module.parse(text)
        with pytest.raises(PassError, match="straight-line"):
            to_gpu(m.operation)


def test_device_map():
    assert parse_device_map("") == []
    assert parse_device_map("0,0,1") == [0, 0, 1]
    with pytest.raises(PassError, match="comma-separated"):
        parse_device_map("0;1")
    with make_context():
        m = ir.Module.parse(all_reduce_module(2, [8], "f32", "sum"))
        lower_collectives(m.operation, "naive")
        to_gpu(m.operation, device_map="3,3")
        assert "coll.gpu = 3 : i64" in str(m)


def test_coll_build_cli(tmp_path):
    with make_context():
        (tmp_path / "in.mlir").write_text(all_reduce_module(2, [8], "f32", "sum"))
    run = lambda *a: subprocess.run([sys.executable, "-m", "coll.tools.coll_build", *a],
                                    capture_output=True, text=True)
    r = run(str(tmp_path / "in.mlir"), "--emit=so")
    assert r.returncode == 1 and "needs -o" in r.stderr
    r = run(str(tmp_path / "in.mlir"), "--emit=gpu", "--device-map=0,1")
    assert r.returncode == 1
    assert "in.mlir:" in r.stderr and "must map to one GPU" in r.stderr
    assert "Traceback" not in r.stderr
    r = run(str(tmp_path / "in.mlir"), "--emit=so", "-o", str(tmp_path / "lib.so"))
    assert r.returncode == 0, r.stderr
    assert "_mlir_ciface_all_reduce" in _symbols(tmp_path / "lib.so")


def test_upstream_needs_the_memcpy_views():
    """Why coll-to-gpu legalizes slice copies: upstream gpu-to-llvm leaves a
    gpu.memcpy from a slice at an offset unconverted, without an error;
    lower_to_llvm legalizes first, and fails on any such leftover."""
    from mlir.passmanager import PassManager
    with make_context():
        # 14 floats on 3 devices: ring chunks of 4, 4, 6 (slices at offsets 4 and 8)
        m, _ = _lowered(3, [14], memcpy_views=False)
        PassManager.parse(nvvm.pipeline("sm_90", "isa")).run(m.operation)
        assert "gpu.memcpy" in str(m)
        assert [op.name for op in nvvm._leftovers(m.operation)].count("gpu.memcpy") > 0
        m, _ = _lowered(3, [14], memcpy_views=False)
        nvvm.lower_to_llvm(m.operation, fmt="isa")
        assert "gpu.memcpy" not in str(m)


def test_host_code_split_into_bounded_functions():
    """coll-to-gpu splits the host function into parts of `split` GPU ops:
    no function grows with N, the entry is table setup and calls, and every
    copy and combine is still issued once (through the parts)."""
    split = 16
    with make_context():
        m = ir.Module.parse(all_reduce_module(12, [4096], "f32", "sum", strategy="ring"))
        lower_collectives(m.operation)
        copies, combines = len(find_ops(m.operation, "coll.copy")), len(find_ops(m.operation, "coll.combine"))
        to_gpu(m.operation, split=split)
        funcs = [op.operation for op in m.body.operations if op.operation.name == "func.func"]
        names = [ir.StringAttr(f.attributes["sym_name"]).value for f in funcs]
        assert names[0] == "all_reduce"  # the entry stays first
        # Graphs (the default): the work is in the entry's body, split there.
        body = funcs[names.index("__coll_body_all_reduce")]
        parts = [f for f, name in zip(funcs, names) if name.startswith("__coll_body_all_reduce_part")]
        assert len(parts) >= (copies + combines) // split

        def size(f, names=None):
            count = 0

            def visit(op):
                nonlocal count
                count += 1
                if names is not None and op.name in names:
                    names[op.name] += 1
                return ir.WalkResult.ADVANCE
            f.walk(visit)
            return count
        issued = {"gpu.memcpy": 0, "gpu.launch_func": 0}
        sizes = [size(p, issued) for p in parts]
        assert issued == {"gpu.memcpy": copies, "gpu.launch_func": combines}
        assert max(sizes) < 40 * split  # a GPU op and what it rebuilds: about 30 ops
        assert size(body) < 20 * 24 + 4 * len(parts)  # per buffer a table store; a call per part
        assert size(funcs[0]) < 10 * 24 + 30  # the entry: the graph key (a few ops per buffer), the graph calls
        nvvm.lower_to_llvm(m.operation, fmt="isa")
        calls = nvvm.host_calls(nvvm.host_llvm_ir(m.operation))["all_reduce"]
    assert calls["mgpuMemcpy"] == copies and calls["mgpuLaunchKernel"] == combines


@pytest.mark.parametrize("fmt", ["isa", "bin"])
def test_kernel_objects_embedded_byte_for_byte(fmt):
    """lowering/gpu/launch.py replaces gpu.binary by its own global: the
    object's bytes unchanged (PTX with its NUL, or the cubin), its target
    and format kept, every launch through the function table."""
    from mlir.passmanager import PassManager

    from coll.lowering.gpu.launch import FUNCTIONS, embedded_objects, own_launches
    if fmt == "bin" and not nvvm.have_ptxas():
        pytest.skip("no ptxas on PATH")
    with make_context():
        m, _ = _lowered(3, [1000], strategy="all2all")
        PassManager.parse(nvvm.pipeline("sm_90", fmt)).run(m.operation)
        before = nvvm.kernel_objects(m.operation)
        own_launches(m.operation)
        after = embedded_objects(m.operation)
        text = str(m)
    assert [(n, t, d) for n, t, _, d in after] == before and len(before) == 1
    assert after[0][2] == fmt
    assert "gpu.binary" not in text and "gpu.launch_func" not in text
    # once in the host function (its entry block), once in the loader
    assert text.count(f"llvm.mlir.addressof @{FUNCTIONS}") == 2
    assert text.count("llvm.call @mgpuLaunchKernel(") == 3
