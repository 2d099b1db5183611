"""The vocabulary of the collectives' specifications (their `spec` hooks,
what coll-check-semantics proves a claimed program computes).

spec(claim, shape) -> {output index: [(start, end, kind, [(input i, d)])]}:
output elements e in [start, end) (row-major) hold (+)_kind over the listed
inputs of x_i[e - d] (kind None: exactly one input; no inputs: the
program writes none of them, they keep what they held); `shape` is that of
each input. A spec raises Unsupported for a malformed claim. A claim's
inputs and outputs are in device order.
"""


from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

# (start, length) of a contiguous run of elements (row-major).
Run = tuple[int, int]
# (start, end, kind or None, [(input i, d)]): outputs [start, end) hold (+)_kind x_i[e - d].
Piece = tuple[int, int, str | None, list[tuple[int, int]]]
# What a claim computes: output index -> its pieces.
Spec = dict[int, list[Piece]]
# A block of a shape: (shape, axis or None, n).
Block = tuple[Sequence[int], int | None, int]


class Claim(Protocol):
    """A claim as a spec reads it (passes/check_semantics.py _Spec: a
    coll.implements read against its collective's class)."""
    inputs: Sequence[object]
    outputs: Sequence[object]
    kind: str | None
    to_device: int | None
    collective: str | None
    out_shape: list[int]
    arrays: dict[str, list[int] | None]

    def axis(self, k: int) -> int: ...


class Unsupported(Exception):
    """A claim or a program the semantic check cannot follow (reported)."""


def n_outputs(claim: Claim, expected: int) -> None:
    if len(claim.outputs) != expected:
        raise Unsupported(f"claims {claim.collective} with {len(claim.outputs)} output buffer(s); "
                          f"expected {expected}")


def reduction_kind(claim: Claim, n: int) -> str | None:
    """The claim's kind (None over one input: a copy)."""
    if claim.kind is None:
        raise Unsupported(f"claims {claim.collective} without a reduction 'kind'")
    return claim.kind if n > 1 else None


def numel(shape: Iterable[int]) -> int:
    size = 1
    for d in shape:
        size *= d
    return size


def block(shape: Sequence[int], axis: int | None, k: int, n: int) -> list[Run]:
    """[(start, length)] (row-major) of block k of n along `axis` (None:
    the whole buffer is block 0 of 1)."""
    if axis is None:
        return [(0, numel(shape))] if k == 0 else []
    inner, w = numel(shape[axis + 1:]), shape[axis] // n
    span = shape[axis] * inner
    return [(o * span + k * w * inner, w * inner) for o in range(numel(shape[:axis]))] if w * inner else []


# A strided view of a flat buffer: (offset, sizes, strides), row-major, the
# last stride 1: the elements offset + sum_k i_k * strides[k].
View = tuple[int, tuple[int, ...], tuple[int, ...]]


def rows(shape: Sequence[int], axis: int | None, k: int, n: int) -> tuple[int, int, int, int] | None:
    """Block k of n along `axis` as (offset, rows, width, span): `rows` runs
    of `width` elements, `span` apart (what `block` lists, merged where
    adjacent, in O(1)); None when it is empty."""
    size = numel(shape)
    if axis is None:
        return (0, 1, size, size) if k == 0 and size else None
    inner, w = numel(shape[axis + 1:]), shape[axis] // n
    count = numel(shape[:axis])
    if not (w * inner * count):
        return None
    if count == 1 or n == 1:  # one run
        return k * w * inner, 1, count * w * inner, count * w * inner
    return k * w * inner, count, w * inner, shape[axis] * inner


def strided_pair(src: Block, k: int, dst: Block, m: int) -> tuple[View, View] | None:
    """Block k of `src` and block m of `dst` (each (shape, axis, n), blocks
    of one shape) as two strided views of equal sizes, rank 3
    at most: one copy moves one into the other, whatever the number of runs.
    None when the blocks are empty. Their widths are suffix products of that
    shape, so the narrower divides the wider: the wider one's rows are cut
    into narrower rows, an inner dimension of its view."""
    a, b = rows(*src[:2], k, src[2]), rows(*dst[:2], m, dst[2])
    if a is None or b is None:
        return None
    width = min(a[2], b[2])
    if max(a[2], b[2]) % width:
        raise ValueError(f"blocks of widths {a[2]} and {b[2]}: expected one to divide the other")
    # per side: [(size, stride)] outermost first
    dims = [[(count, span), (wide // width, width), (width, 1)] for _, count, wide, span in (a, b)]
    # The narrower side's rows are (rows of the wider) x (cut): regroup them.
    (ca, sa), (ma, _), _ = dims[0]
    (cb, sb), (mb, _), _ = dims[1]
    if ma > 1:
        dims[1] = [(ca, ma * sb), (ma, sb), (width, 1)]
    elif mb > 1:
        dims[0] = [(cb, mb * sa), (mb, sa), (width, 1)]
    sizes: list[int] = []
    strides_a: list[int] = []
    strides_b: list[int] = []
    for k, ((d, s), (_, t)) in enumerate(zip(dims[0], dims[1])):
        if d == 1 and k < 2:  # (the innermost stays: its stride 1 is the view's contract)
            continue
        if sizes and strides_a[-1] == d * s and strides_b[-1] == d * t:  # contiguous in both: merged
            sizes[-1] *= d
            strides_a[-1], strides_b[-1] = s, t
            continue
        sizes.append(d)
        strides_a.append(s)
        strides_b.append(t)
    return (a[0], tuple(sizes), tuple(strides_a)), (b[0], tuple(sizes), tuple(strides_b))


def aligned(runlists: Iterable[Iterable[Run]]) -> Iterator[tuple[list[int], int]]:
    """Splits equally long run lists into common segments:
    yields ([position in each], length)."""
    nonempty = [[r for r in runs if r[1]] for runs in runlists]  # empty runs hold nothing
    idx, off = [0] * len(nonempty), [0] * len(nonempty)
    while all(i < len(r) for r, i in zip(nonempty, idx)):
        length = min(r[i][1] - o for r, i, o in zip(nonempty, idx, off))
        yield [r[i][0] + o for r, i, o in zip(nonempty, idx, off)], length
        for j, r in enumerate(nonempty):
            off[j] += length
            if off[j] == r[idx[j]][1]:
                idx[j] += 1
                off[j] = 0


def pieces(out_runs: list[Run], in_runs: list[Run], kind: str | None, inputs: Sequence[int]) -> list[Piece]:
    """The spec pieces that put in_runs (of each of `inputs`) into out_runs."""
    return [(q, q + n, kind, [(i, q - p) for i in inputs]) for (q, p), n in aligned([out_runs, in_runs])]


def everywhere(shape: Sequence[int], kind: str | None, inputs: Iterable[int]) -> list[Piece]:
    """One piece: the whole output is (+)_kind of `inputs` at its positions."""
    return [(0, numel(shape), kind, [(i, 0) for i in inputs])]


def untouched(shape: Sequence[int]) -> list[Piece]:
    """One piece: the program writes no element of the output."""
    return [(0, numel(shape), None, [])]
