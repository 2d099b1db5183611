"""Mutation testing of coll-check-order: drop each token dependency of a
correct lowered program, one at a time. Either the check reports an error,
or the order still holds through other edges (proved by an independent,
plain graph search), and then the check must pass. All_reduce here, every
strategy the registry lists (AllReduce.STRATEGIES), with its outputs on
every device, on one member, on the host and behind a padded join; every
other collective in test_collectives_order.py."""
import itertools

import pytest
from mlir import ir

from coll.collectives import AllReduce
from coll.ir import peers
from coll.ir.generate import all_reduce_module
from coll.ir.types import is_token
from coll.passes.check_order import check_module
from coll.passes.lower_collectives import lower_collectives

STRATEGIES = AllReduce.STRATEGIES


def lowered_text(n, strategy, to_device, numel=10):
    m = ir.Module.parse(all_reduce_module(n, [numel], "i32", "sum", to_device=to_device, strategy=strategy))
    if AllReduce.needs(strategy):
        peers.enable(m.operation)
    lower_collectives(m.operation)
    return str(m)


def pad_join(text):
    """The same program with its final coll.join waiting on every token, so
    that most of the join's edges are implied by others (harmless drops)."""
    m = ir.Module.parse(text)
    ops = body_ops(m)
    (join,) = [op for op in ops if op.name == "coll.join"]
    tokens = [r for op in ops for r in op.results if is_token(r.type) and op != join]
    with ir.InsertionPoint(join):
        new = ir.Operation.create("coll.join", results=[join.results[0].type],
                                  operands=tokens, loc=join.location)
    join.results[0].replace_all_uses_with(new.results[0])
    join.erase()
    return str(m)


def body_ops(module):
    (f,) = [op for op in module.body.operations if op.operation.name == "func.func"]
    return [op.operation for op in f.regions[0].blocks[0].operations]


def token_edges(module):
    """[(consumer op index, token operand index)] in block order. The token
    of a coll.implements names the program it claims, it orders nothing."""
    return [(i, k) for i, op in enumerate(body_ops(module)) if op.name != "coll.implements"
            for k, v in enumerate(op.operands) if is_token(v.type)]


def drop_operand(op, k):
    """Recreates `op` without operand k (fixing operandSegmentSizes)."""
    operands = list(op.operands)
    attrs = {name: op.attributes[name] for name in op.attributes}
    if "operandSegmentSizes" in attrs:
        seg = list(ir.DenseI32ArrayAttr(attrs["operandSegmentSizes"]))
        bound = 0
        for g, size in enumerate(seg):
            bound += size
            if k < bound:
                seg[g] -= 1
                break
        attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(seg)
    with ir.InsertionPoint(op):
        new = ir.Operation.create(op.name, results=[r.type for r in op.results],
                                  operands=operands[:k] + operands[k + 1:],
                                  attributes=attrs, loc=op.location)
    for old, r in zip(op.results, new.results):
        old.replace_all_uses_with(r)
    op.erase()
    return new


def reaches(src, dst):
    """Is `src` ordered before `dst` through token operands? (plain DFS)"""
    seen, stack = set(), [dst]
    while stack:
        op = stack.pop()
        for v in op.operands:
            if is_token(v.type) and not isinstance(v, ir.BlockArgument):
                p = v.owner.operation
                if p == src:
                    return True
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
    return False


CASES = list(itertools.product(STRATEGIES, (3, 4), ("multi", "to_member", "to_host", "padded")))


@pytest.mark.parametrize("strategy,n,out", CASES)
def test_every_dropped_dependency_is_caught_or_harmless(ctx, strategy, n, out):
    to_device = {"to_member": 1, "to_host": n}.get(out)
    text = lowered_text(n, strategy, to_device)
    if out == "padded":
        text = pad_join(text)
    assert check_module(ir.Module.parse(text).operation) == []
    edges = token_edges(ir.Module.parse(text))
    assert edges
    harmless = reported = 0
    for i, k in edges:
        m = ir.Module.parse(text)
        consumer = body_ops(m)[i]
        src = consumer.operands[k].owner.operation
        consumer = drop_operand(consumer, k)
        m.operation.verify()
        findings = check_module(m.operation)
        still_ordered = reaches(src, consumer)
        if findings:
            # An edge that other edges imply must not be reported.
            assert not still_ordered, f"false report after dropping edge {k} of {consumer}: {findings[0].message}"
            reported += 1
        else:
            assert still_ordered, f"dropping edge {k} of {consumer} went unnoticed"
            harmless += 1
    assert harmless + reported == len(edges)
    print(f"{strategy} N={n} {out}: {len(edges)} edges, {reported} reported, {harmless} harmless")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 16])
@pytest.mark.parametrize("to_device", [None, 0, "host"])
def test_lowered_programs_pass(ctx, strategy, n, to_device):
    to = n if to_device == "host" else to_device
    for numel in (3, 64 * n + 5):  # with and without empty chunks
        m = ir.Module.parse(lowered_text(n, strategy, to, numel))
        assert check_module(m.operation) == []
