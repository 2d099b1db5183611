"""analysis/regions.py against plain enumeration: random strided boxes
(negative, zero and overlapping strides included) list the same bytes, and
overlap and coverage answers match set arithmetic."""
import itertools
import random

from coll.analysis.regions import box, covered, overlaps


def elements(base, dims, run):
    out = set()
    for idx in itertools.product(*[range(n) for n, _ in dims]):
        start = base + sum(i * s for i, (_, s) in zip(idx, dims))
        out.update(range(start, start + run))
    return out


def random_box(r):
    dims = [(r.randint(1, 4), r.randint(-9, 12)) for _ in range(r.randint(0, 3))]
    return r.randint(0, 20), dims, r.choice([1, 1, 2, 4])


def test_boxes_match_enumeration():
    r = random.Random(7)
    checked = 0
    for _ in range(5000):
        a, b = random_box(r), random_box(r)
        others = [random_box(r) for _ in range(r.randint(0, 4))]
        ea, eb = elements(*a), elements(*b)
        A, B = box(*a), box(*b)
        assert (A is None) == (not ea) and (B is None) == (not eb)
        if A is None or B is None:
            continue
        assert elements(A.base, A.dims, A.run) == ea, (a, A)
        assert overlaps(A, B) == bool(ea & eb), (a, b)
        union = set().union(*[elements(*c) for c in others])
        assert covered(A, [c for c in map(lambda c: box(*c), others) if c]) == (ea <= union), (a, others)
        checked += 1
    assert checked > 4000


def test_strided_columns_do_not_overlap():
    # Columns 0, 2 and 1, 3 of a 4x8 f32 buffer: hulls overlap, bytes do not.
    even = box(0, [(4, 32), (2, 8)], 4)
    odd = box(4, [(4, 32), (2, 8)], 4)
    assert even.lo < odd.hi and odd.lo < even.hi
    assert not overlaps(even, odd)
    assert overlaps(even, box(8, [(4, 32), (2, 8)], 4))
    assert covered(box(0, [(4, 32)], 16), [even, odd])
