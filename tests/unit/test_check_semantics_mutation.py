"""The mutation test of coll-check-semantics (test_check_semantics.py's, for
all_reduce's basic strategies) over every other lowering: every strategy of
every collective in the registry (coll.collectives COLLECTIVES, each class's
STRATEGIES) less those, at N = 3 and 4, in the forms the registry gives
(registry_forms.py: each collective's sample, padded; its small sample; its
root or single-device output outside the group; in place), so a new
collective or strategy is in it without an edit. Each single-operand
substitution in a copy or combine (a buffer operand replaced by another
buffer or view of the same type defined before it) must be reported exactly
when it changes what the program computes, as judged independently: numpy
runs the program element by element (random integers, a written-mask per
buffer, in program order) and compares its outputs with numpy's own
reading of the collective (np.split / np.concatenate along its axes).

Where a program has more substitutions than SAMPLE, a fixed-seed sample of
SAMPLE of them is judged (the count is printed), to keep the file within CI
time; the full set is the union over seeds."""
import random

import pytest
from mlir import ir
from registry_forms import forms as registry_forms
from registry_forms import strategies
from test_check_semantics import STRATEGIES as BASIC
from test_check_semantics import judge_substitutions, mutants, pad, simulate

from coll.collectives import AllReduce
from coll.ir import peers
from coll.ir.generate import collective_module
from coll.passes.check_semantics import check_module
from coll.passes.lower_collectives import lower_collectives

SAMPLE = 60


def lowered(cls, n, strategy, shape, attrs, in_place):
    m = ir.Module.parse(collective_module(cls.short_name(), n, shape, "i64", strategy=strategy,
                                          in_place=in_place, **attrs))
    if cls.needs(strategy):
        peers.enable(m.operation)
    lower_collectives(m.operation)
    return str(m)


def forms(cls, n):
    """(shape, attrs, in_place, padded) per form of `cls` at n devices: the
    registry's (the first padded), and a partial permutation where the
    collective has `pairs` (device n-1 receives nothing, device 0 sends
    nothing: outputs that nothing writes)."""
    out = [(shape, attrs, in_place, k == 0) for k, (_, shape, attrs, in_place) in enumerate(registry_forms(cls, n))]
    if "pairs" in cls.ARRAYS:
        ring = [v for i in range(n) for v in (i, (i + 1) % n)]
        out.append(([2, 3], {"pairs": ring[2:]}, False, False))
    return out


CASES = strategies(skip={(AllReduce, s) for s in BASIC})


@pytest.mark.parametrize("cls,strategy", CASES, ids=[f"{cls.short_name()}-{s}" for cls, s in CASES])
@pytest.mark.parametrize("n", [3, 4])
def test_every_substitution_is_reported_or_harmless(ctx, cls, strategy, n):
    op = cls.short_name()
    total = 0
    for shape, attrs, in_place, padded in forms(cls, n):
        text = lowered(cls, n, strategy, shape, attrs, in_place)
        if padded:
            text = pad(text)
        assert simulate(ir.Module.parse(text), 0, op, n, attrs)
        assert check_module(ir.Module.parse(text).operation) == []
        subs = mutants(text)  # none where no two buffers share a type (broadcast direct, root outside)
        total += len(subs)
        picked = subs if len(subs) <= SAMPLE else random.Random(n * 1000 + len(subs)).sample(subs, SAMPLE)
        reported, harmless = judge_substitutions(text, picked, f"{op} {strategy} N={n} {attrs}: ",
                                                 op=op, n=n, attrs=attrs)
        print(f"{op} {strategy} N={n} {attrs}{' in place' if in_place else ''}{' padded' if padded else ''}: "
              f"{len(subs)} substitutions, {len(picked)} judged, {reported} reported, {harmless} harmless")
    assert total
