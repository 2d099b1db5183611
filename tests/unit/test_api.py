"""The Python API: loading the dialect, builders, verifier, passes by function."""
import os
import subprocess
import sys

import pytest
from mlir import ir
from mlir.dialects import func
from mlir.passmanager import PassManager

import coll.ir
from coll.core.pipeline import PipelineError, add_pass, build
from coll.ir import builders
from coll.ir.types import device_of, flat_type, token_type
from coll.ir.verifier import verify

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_load_dialect_is_idempotent():
    ctx = ir.Context()
    coll.ir.load_dialect(ctx)
    coll.ir.load_dialect(ctx)
    with ctx:
        assert str(token_type()) == "!coll.token"
        assert device_of(flat_type(ir.F32Type.get(), 4, 3)) == 3


def _explicit_module(kind="sum", elem="f32", devices=(0, 1)):
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        e = ir.Type.parse(elem)
        a_t, b_t = flat_type(e, 8, devices[0]), flat_type(e, 8, devices[1])
        fn = func.FuncOp("f", ir.FunctionType.get([a_t, b_t], []))
        with ir.InsertionPoint(fn.add_entry_block()):
            a, b = fn.entry_block.arguments
            r = builders.alloc(flat_type(e, 8, devices[1]))
            t = builders.copy(a, r)
            k = builders.combine(r, [b], b, kind, [t])
            builders.wait([builders.join([t, k])])
            func.ReturnOp([])
    return module


def test_builders_make_valid_explicit_ir(ctx):
    with ir.Location.unknown():
        m = _explicit_module()
    m.operation.verify()
    assert verify(m.operation) == []
    text = str(m)
    assert '"coll.combine"' in text and "operandSegmentSizes = array<i32: 1, 1, 1, 1>" in text
    # Printed IR parses back.
    assert str(ir.Module.parse(text)) == text


def test_verifier_reports_with_location(ctx):
    with ir.Location.file("gen.py", 7, 3):
        m = _explicit_module(kind="xor", elem="f32")
    findings = verify(m.operation)
    assert len(findings) == 1
    loc, msg = findings[0]
    assert "bitwise reduction kind 'xor'" in msg
    assert str(loc) == 'loc("gen.py":7:3)'


def test_all_reduce_builder_and_passes_by_function(ctx):
    with ir.Location.unknown():
        module = ir.Module.create()
        t = ir.MemRefType.get([64], ir.IntegerType.get_signless(32))  # chunks 32, 32
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("g", ir.FunctionType.get([t] * 4, []))
            with ir.InsertionPoint(fn.add_entry_block()):
                a = list(fn.entry_block.arguments)
                tok = builders.all_reduce(a[:2], a[2:], "max", [0, 1], strategy="all2all")
                builders.wait([tok])
                func.ReturnOp([])
        pm = PassManager("builtin.module")
        add_pass(pm, "coll-lower-all-reduce")
        pm.add("cse")
        pm.run(module.operation)
    text = str(module)
    assert "coll.all_reduce" not in text
    assert text.count('"coll.copy"') == 2 * 2 * 1
    assert 'kind = "max"' in text


def test_add_pass_rejects_bad_options(ctx):
    pm = PassManager("builtin.module")
    with pytest.raises(ValueError, match="expected one of: auto, naive, ring, all2all"):
        add_pass(pm, "coll-lower-all-reduce", strategy="direct")
    with pytest.raises(PipelineError, match="not a coll pass"):
        add_pass(pm, "cse")


def test_pass_failure_is_a_diagnostic(ctx):
    # A verifier failure inside a pipeline fails the run with the location.
    with ir.Location.file("bad.mlir", 3, 5):
        m = _explicit_module(kind="and", elem="f16")
    pm = build("builtin.module(coll-check-order)")
    with pytest.raises(ir.MLIRError) as e:
        pm.run(m.operation)
    diags = e.value.error_diagnostics
    assert 'bad.mlir":3:5' in str(diags[0].location)
    assert "bitwise reduction kind 'and'" in diags[0].message


def test_embed_frontend_example():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "embed_frontend.py"),
                          "--devices", "3", "--strategy", "ring"],
                         capture_output=True, text=True, check=True).stdout
    assert "linalg.fill" in out
    assert "coll.all_reduce" not in out
    assert out.count('"coll.copy"') == 2 * 3 * 2
    # The printed module is valid input for coll-opt.
    r = subprocess.run([os.path.join(os.path.dirname(sys.executable), "coll-opt"), "-", "--coll-check-order"],
                       input=out, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


RACY = """
func.func @f(%a0: memref<8xf32>, %a1: memref<8xf32>, %b0: memref<8xf32>, %b1: memref<8xf32>) {
  %x0 = memref.memory_space_cast %a0 : memref<8xf32> to memref<8xf32, #coll.device<0>>
  %x1 = memref.memory_space_cast %a1 : memref<8xf32> to memref<8xf32, #coll.device<1>>
  %y1 = memref.memory_space_cast %b1 : memref<8xf32> to memref<8xf32, #coll.device<1>>
  %s = "coll.alloc"() : () -> memref<8xf32, #coll.device<1>>
  %c = "coll.copy"(%x0, %s) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<1>>) -> !coll.token
  %k = "coll.combine"(%s, %x1, %y1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<8xf32, #coll.device<1>>, memref<8xf32, #coll.device<1>>, memref<8xf32, #coll.device<1>>) -> !coll.token
  "coll.wait"(%c, %k) : (!coll.token, !coll.token) -> ()
  return
}
"""


def test_frontend_gets_the_notes_of_a_pass(ctx):
    """run_pm (and run) raise MLIRError whose errors carry the notes a pass
    recorded (the bindings cannot emit notes from Python), and leave none
    behind."""
    from coll.core import errors
    from coll.core.pipeline import run_pm
    m = ir.Module.parse(RACY)
    pm = PassManager("builtin.module")
    add_pass(pm, "coll-check-order")
    with pytest.raises(ir.MLIRError) as e:
        run_pm(pm, m.operation)
    (d,) = e.value.error_diagnostics
    assert "coll.combine reads" in d.message and "before it is written" in d.message
    assert [n.message for n in d.notes] == ["written by this coll.copy, not ordered before the read"]
    assert str(d.notes[0].severity).endswith("NOTE") and ":7:" in str(d.notes[0].location)
    assert errors.take_notes(d.message) == []


def test_run_pm_verifies_once_at_the_end(ctx):
    """verify_each=False (the back ends' long upstream pipelines): a module
    that does not verify after the last pass is still a located error."""
    from coll.core.pipeline import run_pm
    m = ir.Module.parse('func.func @f() {\n  return\n}', ctx)
    bad = ir.Operation.create("func.return", loc=ir.Location.file("bad.mlir", 3, 5))
    m.body.append(bad)  # a return outside a function
    with pytest.raises(ir.MLIRError) as e:
        run_pm(PassManager.parse("builtin.module(canonicalize)"), m.operation, verify_each=False)
    (d,) = e.value.error_diagnostics
    assert "expects parent op 'func.func'" in d.message and '"bad.mlir":3:5' in str(d.location)
    good = ir.Module.parse('func.func @f() {\n  return\n}', ctx)
    run_pm(PassManager.parse("builtin.module(canonicalize)"), good.operation, verify_each=False)
