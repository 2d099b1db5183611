"""coll.permute: outputs[t] = inputs[s] for every (s, t) in `pairs`.

collective_permute (StableHLO), ppermute (JAX), pairwise send-receive.
`pairs = array<i64: s0, t0, s1, t1, ...>` lists (source, target) pairs as
positions in `devices` (0..N-1: the device index within the group, so an
SPMD permute over `groups` names the same pairs in every group). StableHLO's
source_target_pairs are process ids in its one group of every partition
(or replica): over devices = [0..N-1] they are these positions as they
are. Any permutation, partial ones included: no position is a source
twice or a target twice; (s, s) keeps a device's own buffer; a pair list
may be empty.

An output that no pair targets, and the zeros StableHLO gives it:
- memref form (destination-passing): the op does not write it; it keeps
  what it held, as the receive buffer of MPI_Sendrecv or NCCL's recv does.
  The claim says exactly that and coll-check-semantics proves that no op of
  the program writes it.
- tensor form (value semantics, what StableHLO and JAX produce): it holds
  zeros. coll-bufferize allocates that output and fills it with zeros
  (`zero_outputs`: a linalg.fill, local work before the collective) and
  the memref form leaves it alone.
Why not zeros in the explicit program itself: the explicit level has no op
that writes a constant (coll.alloc scratch is uninitialised), and a fill op
there would be one more op every back end, coll-check-order,
coll-check-semantics, coll-shuffle and the cost model must know; a copy
from a zeroed source needs such a source first. Zeroing as local work keeps
the explicit level as it is (copies only, fully proved) and this
collective one file; the local fill runs where local work runs: CPU, the
GPU route (as a kernel) and MPI's SPMD route (in place, per rank). The
MPI projection of a global view (coll-to-mpi) takes no local work, so a
partial permute in the tensor form reaches MPI in its SPMD form (what
shard_map programs are); coll-run, which checks one collective without
local work, runs the memref form.

One strategy, `direct`: one round of copies, x_s straight into y_t (a
local copy for (s, s)); under MPI each is one matched isend/irecv pair
(the per-rank projection, its tag unique per pair of ranks). No in-place
form: a device that sends and receives in one round would overwrite what
it still sends.
"""
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ir.ops import attr_ints, register_op
from . import spec
from .base import Collective, Expected, Fold, buffer_ops
from .emit import Emitter
from .spec import Claim, Spec


def pairs_of(flat: Sequence[int]) -> list[tuple[int, int]]:
    """[(source, target)] of a flat pairs list s0, t0, s1, t1, ..."""
    return list(zip(flat[0::2], flat[1::2]))


def pairs_error(flat: Sequence[int] | None, n: int) -> str | None:
    """What is wrong with a flat pairs list over a group of n devices, or None."""
    if flat is None:
        return "'pairs' must be an array<i64: s0, t0, s1, t1, ...> of (source, target) positions in 'devices'"
    if len(flat) % 2:
        return (f"'pairs' holds {len(flat)} values, an odd count; expected (source, target) pairs: "
                "array<i64: s0, t0, s1, t1, ...>")
    sources: dict[int, int] = {}
    targets: dict[int, int] = {}
    for k, (s, t) in enumerate(pairs_of(flat)):
        for what, p in (("source", s), ("target", t)):
            if not 0 <= p < n:
                return (f"pair #{k} ({s}, {t}) names {what} position {p}, outside the group of {n} devices; "
                        f"expected 0 <= position < {n} (positions in 'devices')")
        for what, p, seen in (("source", s, sources), ("target", t, targets)):
            if p in seen:
                return (f"position {p} is the {what} of pairs #{seen[p]} and #{k}; expected each device "
                        f"at most once as a {what}")
            seen[p] = k
    return None


@register_op
class Permute(Collective):
    """outputs[t] = inputs[s] for every (source, target) pair; an output no
    pair targets is not written (tensor form: zeros)."""
    NAME = "coll.permute"
    HAS_KIND = False
    ARRAYS = {"pairs": "(source, target) positions in 'devices', flattened: s0, t0, s1, t1, ..."}
    EMITTER = Emitter

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return pairs_of(attr_ints(self.operation, "pairs") or [])

    def check_attributes(self, n: int) -> str | None:
        return pairs_error(attr_ints(self.operation, "pairs"), n)

    @classmethod
    def parse_array(cls, name: str, text: str, n: int) -> list[int]:
        """coll-gen --pairs: '0:1,1:2,2:0' (source:target positions),
        'shift:K' (every i to i+K mod N) or 'none'; default shift:1."""
        if name != "pairs":
            return super().parse_array(name, text, n)
        text = text.strip()
        if text in ("", "none"):
            return []
        if text.startswith("shift:"):
            try:
                k = int(text[len("shift:"):])
            except ValueError:
                raise ValueError(f"invalid --pairs '{text}'; expected shift:K with an integer K") from None
            return [v for i in range(n) for v in (i, (i + k) % n)]
        flat: list[int] = []
        for item in text.split(","):
            s, _, t = item.partition(":")
            try:
                flat += [int(s), int(t)]
            except ValueError:
                raise ValueError(f"invalid --pairs '{text}'; expected source:target positions like 0:1,1:2, "
                                 "shift:K or none") from None
        msg = pairs_error(flat, n)  # here, before a position too large for an i64 reaches the IR
        if msg:
            raise ValueError(f"invalid --pairs '{text}': {msg}")
        return flat

    @classmethod
    def default_arrays(cls, n: int) -> dict[str, list[int]]:
        """A ring shift by one (what JAX's ppermute examples use)."""
        return {"pairs": [v for i in range(n) for v in (i, (i + 1) % n)]}

    def zero_outputs(self, spmd: bool = False) -> list[int]:
        targets = {t for _, t in self.pairs}
        n = len(self.devices or [])
        if spmd:  # whether this rank receives is known at run time: fill, a receive overwrites it
            return [0] if len(targets) < n else []
        return [j for j in range(n) if j not in targets]

    @classmethod
    def busbw(cls, n: int) -> float:
        return 1.0 if n > 1 else 0.0

    @staticmethod
    def estimated_ops(strategy: str, n: int, shape: Sequence[int],
                      axes: Sequence[int] = ()) -> tuple[int, str, str]:
        return 2 * n + buffer_ops(n), f"({n} devices)", ""

    @staticmethod
    def spec(claim: Claim, shape: list[int]) -> Spec:
        """y_t = x_s for each pair (s, t); an output no pair targets is not
        written by the program."""
        n = len(claim.inputs)
        spec.n_outputs(claim, n)
        flat = claim.arrays.get("pairs")
        msg = pairs_error(flat, n)
        if msg:
            raise spec.Unsupported(f"claims permute with wrong pairs: {msg}")
        to = {t: s for s, t in pairs_of(flat or [])}  # not None: pairs_error said so
        return {j: spec.everywhere(shape, None, [to[j]]) if j in to else spec.untouched(shape) for j in range(n)}

    @staticmethod
    def reference(x: list[np.ndarray], values: list[np.ndarray], fold: Fold, attrs: dict[str, Any], n: int,
                  n_out: int) -> Expected:
        """Zeros where nothing is received: the tensor form's value, and
        what an untouched output of a run holds (check.make_outputs)."""
        to = {t: s for s, t in pairs_of(attrs["pairs"])}
        return [(values[to[j]] if j in to else np.zeros_like(values[0]), None) for j in range(n)]


@Permute.defines("direct")
def direct(e: Emitter) -> None:
    """One round: x_s straight into y_t for every pair."""
    if not e.numel:
        return
    for s, t in e.c.pairs:
        e.copy(e.x[s], e.y[t])
