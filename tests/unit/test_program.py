"""A program is analysed once (execution/program.py): each analysis walks
each state of the module at most once, and what lowering asks of the
module (its data ops, collectives, local work, the strategies chosen, the
traffic, the scratch) comes from one walk per state (Program.index)."""
from collections import Counter
from pathlib import Path

import pytest

from coll import api
from coll.execution.program import Program
from coll.ir import walk

ROOT = Path(__file__).resolve().parents[2]


def _walks(compile_it):
    walk.RECORD = []
    try:
        prog = compile_it()
        return prog, list(walk.RECORD)
    finally:
        walk.RECORD = None


def _generated(op, **kw):
    with api.make_context():
        return api.collective_module(op, devices=4, shape=[8, 4], dtype="f32", **kw)


CASES = {
    "all_reduce (global view)": lambda: _generated("all_reduce"),
    "reduce_scatter (global view)": lambda: _generated("reduce_scatter", axis=0),
    "tensor MLP (SPMD, tensor form)": lambda: (ROOT / "examples/tensor_mlp.mlir").read_text(),
    "explicit 2x2 grid (checked)": lambda: (ROOT / "examples/allreduce_2x2_grid.mlir").read_text(),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_analysis_walks_each_state_of_the_module_once(case):
    text = CASES[case]()
    api.backend("cpu").clear_cache()
    prog, walks = _walks(lambda: api.compile(text, backend="cpu"))
    twice = [(who, n) for (who, _), n in Counter(walks).items() if n > 1]
    assert not twice, f"walked the same module state more than once: {twice}"
    # lowering asks the Program; it does not walk the module itself
    assert not [who for who, _ in walks if who.startswith("coll.lowering.driver")], walks
    indexed = [state for who, state in walks if who == "coll.execution.program.index"]
    assert 1 <= len(indexed) <= 3 and len(set(indexed)) == len(indexed), walks
    assert prog.strategies is not None


def test_what_lowering_learnt_stays_on_the_program():
    text = _generated("all_reduce")
    from mlir import ir
    with api.make_context():
        program = Program.of(ir.Module.parse(text))
        low = api.lower(program, "cpu", strategy="ring")
        assert program.strategies == low.strategies == ["ring"]
        assert program.traffic == low.traffic > 0 and program.pipeline == low.pipeline


def test_the_recorder_sees_a_walk():
    from mlir import ir
    with api.make_context():
        module = ir.Module.parse(_generated("all_reduce"))
        walk.RECORD = []
        try:
            walk.find_ops(module.operation, "func.func")
            walk.find_ops(module.operation, "func.func")
            seen = list(walk.RECORD)
        finally:
            walk.RECORD = None
    assert len(seen) == 2 and seen[0] == seen[1] and seen[0][0].endswith("test_the_recorder_sees_a_walk")
