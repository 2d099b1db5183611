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


def test_boxes_of_one_shape_match_enumeration():
    # The exact test of two boxes of one shape (a block's views side by side).
    r = random.Random(34)
    checked = 0
    for _ in range(5000):
        dims = [(r.randint(1, 4), r.randint(-9, 12)) for _ in range(r.randint(1, 3))]
        run = r.choice([1, 2, 3, 4])
        a, b = (r.randint(0, 30), dims, run), (r.randint(0, 30), dims, run)
        A, B = box(*a), box(*b)
        if A is None or B is None or A.dims != B.dims:
            continue
        assert overlaps(A, B) == bool(elements(*a) & elements(*b)), (a, b)
        checked += 1
    assert checked > 3000


def test_many_interleaved_rows_are_told_apart_without_listing_them():
    # Issue 34's all_to_all: 2-byte columns of 75000 rows, 8 bytes apart, far
    # past the listing budget (which answers "may overlap").
    cols = [box(c, [(75000, 8)], 2) for c in (0, 2, 4, 6)]
    assert not any(overlaps(a, b) for a, b in itertools.combinations(cols, 2))
    assert overlaps(cols[0], box(8 * 7000, [(75000, 8)], 2))
    assert overlaps(cols[0], box(1, [(75000, 8)], 2))
