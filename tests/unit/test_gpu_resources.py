"""The kernels' resources, from ptxas itself (no GPU needed).

The kernels the GPU route can launch (every kind and element type it
applies to, the f32-accumulator variants of f16 and bf16, each contiguous
and strided, and the strided copies) at the arities ARITIES (the ends and
the middle of a chain's: registers grow with the arity, and all 1596
kernels cost a minute of LLVM and ptxas, six arities 44 s; COLL_EVERY_KERNEL=1
takes every arity) are compiled in one gpu.module for sm_90, and
`ptxas -v` must report for each: no stack frame and no spills, and at most
the registers per thread of its arity's bound. The lowering sizes its grids
by that bound (gpu_kernels.grid_blocks: blocks that fill every
multiprocessor once), so a kernel above it would run in more than one wave.
"""
import os
import re
import shutil
import subprocess

import pytest
from mlir import ir

from coll.lowering.gpu import kernels as K
from coll.lowering.gpu import nvvm

CHIP = "sm_90"
# Registers per thread, by arity: what the grids assume (register_bound).
BOUND = {a: 32 + 8 * a for a in range(1, K.MAX_ARITY + 1)}  # 1: the strided copies
ARITIES = (1, 2, K.MAX_ARITY // 2, K.MAX_ARITY)

_PROPS = re.compile(
    r"Compiling entry function '(\w+)' for '\w+'\n.*?Function properties for \1\n"
    r"\s*(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads\n"
    r".*?Used (\d+) registers", re.S)


def test_the_lowering_assumes_the_stated_bound():
    assert {a: K.register_bound(a) for a in BOUND} == BOUND


def test_every_kernel_is_listed():
    """The kernels of any combine up to MAX_DEVICES inputs are among those
    compiled below."""
    from coll.ir import MAX_DEVICES
    every = set(K.every_kernel())
    for kind, elem in (("sum", "f16"), ("max", "bf16"), ("xor", "i1"), ("prod", "f64")):
        for arity in (2, 3, K.MAX_ARITY, K.MAX_ARITY + 1, 100, 257, MAX_DEVICES):
            for strided in (False, True):
                assert {k for k, _, _ in K.chain(kind, elem, arity, strided)} <= every
    assert {K.copy_kernel(elem) for elem in ("i1", "bf16", "f32", "f64")} <= every


@pytest.fixture(scope="module")
def ptxas_report(tmp_path_factory):
    if not shutil.which("ptxas"):
        pytest.skip("ptxas is not on PATH")
    kernels = [k for k in K.every_kernel() if os.environ.get("COLL_EVERY_KERNEL") or k.arity in ARITIES]
    with ir.Context():
        target = f'#nvvm.target<O = 3, chip = "{CHIP}", features = "{K.features_for(CHIP)}">'
        m = ir.Module.parse(f"module attributes {{gpu.container_module}} {{ gpu.module @coll_kernels "
                            f"[{target}] {{\n" + "\n".join(K.gpu_func_text(k) for k in kernels)
                            + "\n} }")
        nvvm.lower_to_llvm(m.operation, CHIP, "isa")
        ptx = nvvm.ptx_text(m.operation)
    path = tmp_path_factory.mktemp("ptx") / "kernels.ptx"
    path.write_text(ptx)
    r = subprocess.run(["ptxas", "-v", f"-arch={CHIP}", str(path), "-o", "/dev/null"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    return kernels, {name: tuple(map(int, rest)) for name, *rest in _PROPS.findall(r.stderr)}


def test_no_spills_and_registers_within_the_bound(ptxas_report):
    kernels, report = ptxas_report
    assert sorted(report) == sorted(k.name for k in kernels)
    # fp8 among them: every kind, contiguous and strided, the f32-accumulator ends of a chain
    fp8 = [k for k in kernels if k.elem in ("f8E4M3FN", "f8E5M2")]
    assert {k.kind for k in fp8} == {"sum", "prod", "max", "min"} and any(k.acc_in for k in fp8)
    over = []
    for k in kernels:
        stack, spill_stores, spill_loads, registers = report[k.name]
        assert (stack, spill_stores, spill_loads) == (0, 0, 0), k.name
        if registers > BOUND[k.arity]:
            over.append(f"{k.name}: {registers} registers > {BOUND[k.arity]}")
    assert not over, "\n".join(over)


def test_grids_fill_the_chip_once_at_the_bound():
    """sm_90 (132 multiprocessors, 2048 threads and 65536 registers each):
    blocks of 256 threads, as many per multiprocessor as the bound lets
    reside (registers are allocated in units of 8 per thread)."""
    assert K.grid_blocks("sm_90", 2, 256) == 132 * 5    # 48 registers: 5 blocks
    assert K.grid_blocks("sm_90", 4, 256) == 132 * 4    # 64: 4
    assert K.grid_blocks("sm_90", 8, 256) == 132 * 2    # 96: 2
    assert K.grid_blocks("sm_90", 16, 256) == 132 * 1   # 160: 1
    assert K.grid_blocks("sm_80", 2, 256) == 108 * 5
    assert K.grid_blocks("sm_90a", 2, 256) == K.grid_blocks("sm_90", 2, 256)
    # sm_86: 1536 threads per multiprocessor: 6 blocks of 256 at most.
    assert K.grid_blocks("sm_86", 2, 128) == 72 * 10    # 48 registers x 128 threads: 10 blocks
    assert K.grid_blocks("sm_86", 2, 512) == 72 * 2     # 1536 // 512 = 3, 65536 // (48 * 512) = 2
