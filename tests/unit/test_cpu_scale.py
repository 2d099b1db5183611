"""The CPU code shape that scales (shared kernels, split functions, the
pointer-level program) computes bitwise what the inline form computes, and
runs 64 devices end to end.

Covering design: every strategy x a mix of (type, kind) pairs (floats
rounded in f16/bf16, integers, i1), N = 5, odd numel, through each form:
inline loops unsplit (the reference), shared kernels unsplit, the
pointer-level program in parts of 4 ops, and tiled loops split into
functions of 8 ops (buffers in the table, induction variable passed).
"""
import pytest
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from coll.execution import check
from coll.execution.program import read
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.ir.walk import find_ops
from coll.lowering import cpu
from coll.lowering.cpu import runtime as cpu_runtime
from coll.lowering.cpu.to_cpu import cpu_to_llvm, to_cpu
from coll.passes.lower_collectives import lower_collectives

STRATEGIES = ("naive", "ring", "all2all")
MIX = [("f32", "sum"), ("f16", "sum"), ("bf16", "prod"), ("f64", "min"), ("i32", "prod"),
       ("i8", "xor"), ("i1", "or"), ("f32", "max")]
FORMS = {"shared": dict(split=0), "pointer": dict(split=4, tile=0), "tiled-split": dict(tile=16, split=8)}


def compile_with(text, strategy, **options):
    with make_context() as ctx:
        program = read(text)
        module, name, specs, n_inputs = program.module, program.entry, program.specs, program.n_inputs
        lower_collectives(module.operation, strategy)
        to_cpu(module.operation, **options)
        cpu_to_llvm(module.operation)
        engine = ExecutionEngine(module, opt_level=cpu.OPT_LEVEL, shared_libs=cpu_runtime._runner_utils())
        prog = cpu.CpuProgram(engine, name, specs, n_inputs, [strategy], None, 0)
        prog._ctx = ctx
        return prog


def run(prog, problem, seed=0):
    inputs = check.make_inputs(problem, seed)
    outputs = check.make_outputs(problem)
    prog.run(inputs, outputs)
    return inputs, outputs


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype,kind", MIX)
def test_bitwise_same_as_inline(dtype, kind, strategy, form):
    with make_context():
        text = all_reduce_module(5, [3, 37], dtype, kind, strategy=strategy)
        problem = check.describe(ir.Module.parse(text))
    _, want = run(compile_with(text, strategy, kernels="inline", split=0), problem)
    inputs, got = run(compile_with(text, strategy, **FORMS[form]), problem)
    assert check.check(problem, inputs, got)[0]
    for w, g in zip(want, got):
        assert w.tobytes() == g.tobytes()


@pytest.mark.parametrize("strategy", ("ring", "all2all"))
def test_64_devices_end_to_end(strategy):
    with make_context():
        text = all_reduce_module(64, [256], "f32", "sum", strategy=strategy)
        problem = check.describe(ir.Module.parse(text))
    prog = cpu.compile(text, strategy=strategy)
    inputs, outputs = run(prog, problem)
    ok, worst = check.check(problem, inputs, outputs)
    assert ok, f"max error {worst}"
    cpu.clear_cache()


def test_64_devices_code_shape(ctx):
    """One kernel per signature, one copy function, functions of bounded
    size whatever N."""
    m = ir.Module.parse(all_reduce_module(64, [256], "f32", "sum", strategy="ring"))
    lower_collectives(m.operation)
    work = len(find_ops(m.operation, "coll.copy")) + len(find_ops(m.operation, "coll.combine"))
    to_cpu(m.operation)
    sizes, names = {}, []
    for f in m.body.operations:
        name = ir.StringAttr(f.attributes["sym_name"]).value
        names.append(name)
        n = 0

        def visit(_):
            nonlocal n
            n += 1
            return ir.WalkResult.ADVANCE
        f.operation.walk(visit)
        sizes[name] = n
    assert names.count("coll_combine_sum_f32_x2") == 1 and names.count("coll_copy") == 1
    parts = [n for n in names if n.startswith("all_reduce_part")]
    assert work > 1000 and len(parts) == -(-work // 128)
    assert max(sizes[p] for p in parts) < 8 * 128
    assert sizes["all_reduce"] < 8 * 128 + len(parts)
