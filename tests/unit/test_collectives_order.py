"""Every collective's every strategy (coll.collectives COLLECTIVES, each
class's STRATEGIES; all_reduce's other forms are test_order_mutation.py's)
is proved ordered by coll-check-order, and each of its token dependencies
matters: dropping one is either reported by the check or implied by other
edges (test_order_mutation.py's method). The forms are the registry's
(registry_forms.py): each collective's sample and small sample, its root
outside the group, in place at N = 5; so a new collective or strategy is in
it without an edit."""
import pytest
from mlir import ir
from registry_forms import forms, strategies
from test_order_mutation import body_ops, drop_operand, reaches, token_edges

from coll.collectives import AllReduce
from coll.ir import peers
from coll.ir.generate import collective_module
from coll.passes.check_order import check_module
from coll.passes.lower_collectives import lower_collectives

CASES = [(cls, s, shape, attrs, False, n) for cls, s in strategies() if cls is not AllReduce for n in (3, 4)
         for _, shape, attrs, in_place in forms(cls, n) if not in_place] + \
    [(cls, s, shape, attrs, True, 5) for cls, s in strategies() if cls.IN_PLACE
     for _, shape, attrs, in_place in forms(cls, 5) if in_place]


def lowered(cls, n, strategy, shape, attrs, in_place=False):
    m = ir.Module.parse(collective_module(cls.short_name(), n, shape, "i32", strategy=strategy,
                                          in_place=in_place, **attrs))
    if cls.needs(strategy):
        peers.enable(m.operation)
    lower_collectives(m.operation)
    return str(m)


@pytest.mark.parametrize("cls,strategy,shape,attrs,in_place,n", CASES,
                         ids=[f"{c[0].short_name()}-{c[1]}-N{c[5]}-{'x'.join(map(str, c[2]))}-{c[3]}"
                              f"{'-in_place' if c[4] else ''}" for c in CASES])
def test_every_dropped_dependency_is_caught_or_harmless(ctx, cls, strategy, shape, attrs, in_place, n):
    text = lowered(cls, n, strategy, shape, attrs, in_place)
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


def _partly_in_place(n, k):
    """all_reduce over n devices whose output on device k alone is its input."""
    t = "memref<64xi32>"
    args = ", ".join([f"%x{i}: {t}" for i in range(n)] + [f"%y{i}: {t}" for i in range(n) if i != k])
    outs = [f"%x{i}" if i == k else f"%y{i}" for i in range(n)]
    return (f"module attributes {{coll.peer_access}} {{\nfunc.func @f({args}) {{\n"
            f'  %t = "coll.all_reduce"({", ".join([f"%x{i}" for i in range(n)] + outs)}) {{devices = array<i64: '
            f'{", ".join(map(str, range(n)))}>, kind = "sum", operandSegmentSizes = array<i32: {n}, {n}, 0>}} : '
            f'({", ".join([t] * 2 * n)}) -> !coll.token\n  "coll.wait"(%t) : (!coll.token) -> ()\n  return\n}}\n}}\n')


@pytest.mark.parametrize("strategy", AllReduce.STRATEGIES)
@pytest.mark.parametrize("k", [0, 1, 2])
def test_partly_in_place_all_reduce_is_ordered(ctx, strategy, k):
    # Found by an outside attack (2026-12-07): naive took a program in place
    # only where device 0 was, so device 1's in-place combine raced the copy
    # reading its input (the other devices' results: the sum, not x1).
    m = ir.Module.parse(_partly_in_place(3, k))
    for op in m.body.operations[0].regions[0].blocks[0].operations:
        if op.operation.name == "coll.all_reduce":
            op.operation.attributes["strategy"] = ir.StringAttr.get(strategy)
    lower_collectives(m.operation)
    assert check_module(m.operation) == []
