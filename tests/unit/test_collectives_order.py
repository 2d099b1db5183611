"""Every new strategy's program is proved ordered by coll-check-order, and
each of its token dependencies matters: dropping one is either reported by
the check or implied by other edges (test_order_mutation.py's method)."""
import pytest
from mlir import ir

from coll.ir.generate import collective_module
from coll.passes.check_order import check_module
from coll.passes.lower_collectives import lower_collectives
from test_order_mutation import body_ops, drop_operand, reaches, token_edges

CASES = [("reduce_scatter", s, [3, 12], {"axis": 1}) for s in ("ring", "direct")] + \
    [("all_gather", s, [5], {"axis": 0}) for s in ("ring", "direct")] + \
    [("reduce", s, [70], {"root": r}) for s in ("direct", "ring", "tree") for r in (1, 9)] + \
    [("broadcast", s, [70], {"root": r}) for s in ("direct", "ring", "tree") for r in (1, 9)] + \
    [("all_to_all", "direct", [12, 2], {"split_axis": 0, "concat_axis": 1})] + \
    [("all_reduce", s, [70], a) for s in ("rhd", "tree") for a in ({}, {"to_device": 1}, {"to_device": 9})]
IN_PLACE = [("all_reduce", s, [70], {}) for s in ("naive", "ring", "all2all", "rhd", "tree")] + \
    [("reduce", s, [70], {"root": 1}) for s in ("direct", "ring", "tree")] + \
    [("broadcast", s, [70], {"root": 2}) for s in ("direct", "ring", "tree")]


def lowered(op, n, strategy, shape, attrs, in_place=False):
    attrs = {k: (n if v == 9 else v) for k, v in attrs.items()}
    m = ir.Module.parse(collective_module(op, n, shape, "i32", strategy=strategy,
                                          in_place=in_place, **attrs))
    lower_collectives(m.operation)
    return str(m)


@pytest.mark.parametrize("op,strategy,shape,attrs,in_place,n",
                         [c + (False, n) for c in CASES for n in (3, 4)]
                         + [c + (True, 5) for c in IN_PLACE])
def test_every_dropped_dependency_is_caught_or_harmless(ctx, op, strategy, shape, attrs, in_place, n):
    if op in ("reduce_scatter", "all_to_all") and shape[attrs.get("axis", attrs.get("split_axis"))] % n:
        shape = [s * n if i == attrs.get("axis", attrs.get("split_axis")) else s for i, s in enumerate(shape)]
    text = lowered(op, n, strategy, shape, attrs, in_place)
    assert check_module(ir.Module.parse(text).operation) == []
    edges = token_edges(ir.Module.parse(text))
    assert edges
    for i, k in edges:
        m = ir.Module.parse(text)
        consumer = body_ops(m)[i]
        src = consumer.operands[k].owner.operation
        consumer = drop_operand(consumer, k)
        findings = check_module(m.operation)
        if findings:
            assert not reaches(src, consumer), f"false report: {findings[0].message}"
        else:
            assert reaches(src, consumer), f"dropping edge {k} of {consumer} went unnoticed"
