"""The collectives: one file each, listed once (COLLECTIVES).

A collective's file holds everything that is that collective's: its op
class (a registered OpView, ir/ops.py Collective), its strategies (functions
decorated with `@Cls.defines(name, needs=...)`), its default rule, the size
bound of its lowering, its specification for coll-check-semantics
(collectives/spec.py), its numpy reference, its shard mapping and its
coll-gen options. Every consumer (the verifier, the lowering, coll-gen,
coll-run's check, coll-check-semantics, coll-from-shard, the cost model's
candidates, the fuzzer, the benchmarks, the IRDL file) reads this list.
Adding a collective is one file here and its line below.
"""
from ..ir.ops import register_collectives
from .all_gather import AllGather
from .all_reduce import AllReduce
from .all_to_all import AllToAll
from .base import Collective
from .broadcast import Broadcast
from .permute import Permute
from .reduce import Reduce
from .reduce_scatter import ReduceScatter

COLLECTIVES: tuple[type[Collective], ...] = (AllReduce, ReduceScatter, AllGather, Reduce, Broadcast, AllToAll, Permute)
register_collectives(COLLECTIVES)
BY_NAME = {cls.NAME: cls for cls in COLLECTIVES}


def by_short_name(name: str) -> type[Collective] | None:
    """The class of 'all_reduce' (a claim's or coll-gen's name), or None."""
    return BY_NAME.get("coll." + name)
