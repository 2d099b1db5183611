"""Exact sets of byte offsets that strided views cover, and their overlap.

A view of a root buffer covers the bytes

    base + sum_k i_k * stride_k + [0, run)     for 0 <= i_k < count_k

(a strided box: `run` is the element size, or more once contiguous inner
dimensions are folded into it). Two boxes are intersected exactly by listing
their contiguous runs inside the intersection of their hulls, pruning every
dimension to the indices that can reach that window, so a strided subview
touches only its own elements, never the hull between them. The listing is
bounded (BUDGET runs per query); past it the answers fall back to the safe
side: "they may overlap" and "not covered".
"""
from bisect import bisect_right
from collections.abc import Iterable

BUDGET = 1 << 16

Dim = tuple[int, int]         # (count, stride)
Interval = tuple[int, int]    # [start, end)


class TooComplex(Exception):
    pass


class Box:
    """A normalised strided box: dims [(count, stride)] with strides > run,
    largest stride first; lo/hi bound it."""
    __slots__ = ("base", "dims", "run", "lo", "hi", "ext")

    def __init__(self, base: int, dims: list[Dim], run: int) -> None:
        self.base, self.dims, self.run = base, dims, run
        # ext[k]: extent of the box made of dims[k:] and the run
        ext = [run]
        for n, s in reversed(dims):
            ext.append(ext[-1] + (n - 1) * s)
        self.ext = ext[::-1]
        self.lo, self.hi = base, base + self.ext[0]

    def __repr__(self) -> str:
        return f"Box({self.base}, {self.dims}, {self.run})"

    @property
    def count(self) -> int:
        """Number of runs (with repeats when the box overlaps itself)."""
        c = 1
        for n, _ in self.dims:
            c *= n
        return c


def box(base: int, dims: Iterable[Dim], run: int) -> Box | None:
    """The Box of `base + sum i_k * s_k + [0, run)` over dims [(count, s)],
    or None when it is empty. Strides may be negative or zero."""
    if run <= 0:
        return None
    norm: list[Dim] = []
    for n, s in dims:
        if n <= 0:
            return None
        if n == 1 or s == 0:
            continue
        if s < 0:
            base, s = base + (n - 1) * s, -s
        norm.append((n, s))
    norm.sort(key=lambda d: d[1])
    # A dimension whose stride is at most the run extends the run: the union
    # of [i*s, i*s + run) over i is one interval. The sum is commutative, so
    # this holds whatever the other dimensions are.
    while norm and norm[0][1] <= run:
        n, s = norm.pop(0)
        run += (n - 1) * s
    # Merge (n1, s) and (n2, n1*s) into (n1*n2, s): fewer levels to walk.
    merged: list[Dim] = []
    for n, s in norm:
        if merged and s == merged[-1][0] * merged[-1][1]:
            merged[-1] = (merged[-1][0] * n, merged[-1][1])
        else:
            merged.append((n, s))
    merged.reverse()
    return Box(base, merged, run)


def runs(b: Box, lo: int, hi: int, budget: int = BUDGET) -> list[Interval]:
    """The runs [(start, end)] of box `b` that meet [lo, hi), sorted by start.
    Raises TooComplex past `budget` steps."""
    out: list[Interval] = []
    left = [budget]
    dims, ext = b.dims, b.ext

    def walk(base: int, k: int) -> None:
        if k == len(dims):
            if base < hi and base + b.run > lo:
                out.append((base, base + b.run))
            return
        n, s = dims[k]
        e = ext[k + 1]
        # base + i*s + [0, e) meets [lo, hi)
        i0 = max(0, -((base + e - 1 - lo) // s))
        i1 = min(n - 1, (hi - 1 - base) // s)
        left[0] -= max(0, i1 - i0 + 1)
        if left[0] < 0:
            raise TooComplex()
        for i in range(i0, i1 + 1):
            walk(base + i * s, k + 1)

    walk(b.base, 0)
    out.sort()
    return out


def _union(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted disjoint union of sorted intervals."""
    out: list[Interval] = []
    for s, e in intervals:
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _hits(d: int, b: Box, k: int, budget: list[int]) -> bool:
    """Is d = sum_{m >= k} t_m * s_m + w for some |t_m| < n_m, |w| < run
    (dims[k:] of `b`)? Then a copy of `b` shifted by d meets `b`. Only the
    t_k that leave d within the inner dims' reach are tried; raises
    TooComplex past `budget` of them."""
    if k == len(b.dims):
        return abs(d) < b.run
    n, s = b.dims[k]
    reach = b.ext[k + 1] - 1  # |sum over the inner dims and the run| is at most this
    t0, t1 = max(-(n - 1), -((reach - d) // s)), min(n - 1, (d + reach) // s)
    budget[0] -= max(0, t1 - t0 + 1)
    if budget[0] < 0:
        raise TooComplex()
    return any(_hits(d - t * s, b, k + 1, budget) for t in range(t0, t1 + 1))


def overlaps(a: Box, b: Box) -> bool:
    """Do boxes a and b share a byte? (True when too complex to tell.)
    Two boxes of one shape (a block's strided views side by side, however
    many rows) are told apart by their bases alone (_hits), in a few steps."""
    if a.hi <= b.lo or b.hi <= a.lo:
        return False
    if not a.dims and not b.dims:
        return True
    if a.dims == b.dims and a.run == b.run:
        try:
            return _hits(b.base - a.base, a, 0, [BUDGET])
        except TooComplex:
            return True
    lo, hi = max(a.lo, b.lo), min(a.hi, b.hi)
    try:
        ra = _union(runs(a, lo, hi))
        rb = _union(runs(b, lo, hi))
    except TooComplex:
        return True
    i = j = 0
    while i < len(ra) and j < len(rb):
        if ra[i][1] <= rb[j][0]:
            i += 1
        elif rb[j][1] <= ra[i][0]:
            j += 1
        else:
            return True
    return False


def covered(r: Box, boxes: Iterable[Box]) -> bool:
    """Is every byte of box r in the union of `boxes`? (False when too
    complex to tell.)"""
    if not r.dims:
        # The common case: one interval.
        parts: list[Interval] = []
        for b in boxes:
            if b.hi <= r.lo or r.hi <= b.lo:
                continue
            if not b.dims:
                parts.append((b.lo, b.hi))
                continue
            try:
                parts += runs(b, r.lo, r.hi)
            except TooComplex:
                return False
        parts.sort()
        pos = r.lo
        for s, e in parts:
            if s > pos:
                return False
            pos = max(pos, e)
            if pos >= r.hi:
                return True
        return pos >= r.hi
    try:
        need = _union(runs(r, r.lo, r.hi))
        parts = []
        for b in boxes:
            if b.hi > r.lo and r.hi > b.lo:
                parts += runs(b, r.lo, r.hi)
    except TooComplex:
        return False
    have = _union(sorted(parts))
    starts = [s for s, _ in have]
    for s, e in need:
        k = bisect_right(starts, s) - 1
        if k < 0 or have[k][1] < e:
            return False
    return True
