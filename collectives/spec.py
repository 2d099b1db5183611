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


def runs(shape: Sequence[int], axis: int | None, k: int, n: int) -> list[Run]:
    """block(shape, axis, k, n) with adjacent runs merged: the fewest
    contiguous runs that hold it (what a lowering copies piece by piece)."""
    out: list[Run] = []
    for start, length in block(shape, axis, k, n):
        if out and out[-1][0] + out[-1][1] == start:
            out[-1] = (out[-1][0], out[-1][1] + length)
        else:
            out.append((start, length))
    return out


def run_count(shape: Sequence[int], axis: int | None, n: int) -> int:
    """len(runs(shape, axis, k, n)) for every k, without building them: the
    rows before `axis`, one when they are adjacent (n == 1) or one row."""
    if axis is None:
        return 1 if numel(shape) else 0
    if numel(shape) == 0 or shape[axis] // n == 0:
        return 0
    rows = numel(shape[:axis])
    return 1 if n == 1 else rows


def segment_count(src: Block, dst: Block) -> int:
    """How many pieces aligned([runs a, runs b]) yields for two blocks of one
    shape, each given as (shape, axis, n), without building them: their run
    lengths are suffix products of that shape, so the shorter ones cut both."""
    return max(run_count(*src), run_count(*dst))


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
