"""Local work around a collective in the cost model: the collective's task
graph (taskgraph.py) with each rank's local work right before or after it
added as `local` tasks, either whole (after every copy and combine of the
rank, or before all of them: the program as written) or in tiles of rows
(each after the copies and combines that write its rows, or before the
first that reads them: what coll-mpi-overlap builds,
lowering/mpi/overlap.py), and both schedules simulated on a profile
(cost_model.simulate). The two times are what `--epilogues=auto` tiles
by under MPI.

A local task holds its rank's compute engine and, where the ranks' CPUs
copy the messages (a profile with `cores`), a core and the ports its CPU
serves (the receive port, both with `copy_cores` both): a rank that
computes copies no message meanwhile. A rank's tiles run one after
another.
A piece of the work costs its flops over `flops_per_s` plus its bytes
over the memory bandwidth (the profile's table by working set): the bytes
of each buffer's first touch in the run (`streamed`) at the run's working
set, and those of touches again (`reused`: a buffer an earlier op of the
run wrote or read, or an epilogue's rows of the collective's result, just
written) at the piece's own: a tile of rows finds them in cache, a whole
run streams them from memory again. What it leaves out: the collective's
side of that reuse (a prologue's rows read by the collective while in
cache), and any cost of cutting a contraction into tiles.
"""
import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from . import taskgraph
from .cost_model import Profile, simulate
from .taskgraph import Graph, Task


@dataclass(frozen=True)
class Local:
    """One run of local work, the same on every rank: its flops, bytes
    streamed and reused (the module docstring) and its distinct buffers'
    bytes, the rows it is cut into (`tile` rows a tile) and, per device,
    the function argument whose rows it reads after the collective (an
    epilogue) or writes before it (`before`: a prologue)."""
    flops: float
    streamed: float
    reused: float
    working_set: float
    rows: int
    row_bytes: int
    tile: int
    args: tuple[tuple[int, int], ...]  # (device, argument number)
    before: bool = False

    def tiles(self) -> list[tuple[int, int]]:
        return [(a, min(a + self.tile, self.rows)) for a in range(0, self.rows, self.tile)]

    def compute_bound(self, profile: Profile) -> bool:
        rate = profile.value("flops_per_s", self.working_set)
        mem = profile.value("memory_bandwidth_Bps", self.working_set) or math.inf
        return rate is not None and rate > 0 and self.flops / rate >= (self.streamed + self.reused) / mem

    def seconds(self, share: float, profile: Profile) -> float:
        """What `share` of its rows costs on one core, as one piece."""
        def mem(ws: float) -> float:
            return profile.value("memory_bandwidth_Bps", max(ws, 1.0)) or math.inf
        rate = profile.value("flops_per_s", self.working_set)
        return share * ((self.flops / rate if self.flops and rate else 0.0)
                        + self.streamed / mem(self.working_set) + self.reused / mem(self.working_set * share))


def with_local(graph: Graph, runs: Sequence[Local], profile: Profile, tiled: bool) -> Graph:
    """`graph` with `runs` as local tasks placed in each rank's program by
    dependent steps (taskgraph.steps: the projection posts a rank's
    messages step by step): an epilogue's tile after the step of the last
    of its rank's tasks that writes its rows, a prologue's before the step
    of the first that reads them (after the rank's own copies and combines
    of the steps before), the rank's tasks of later steps after the tile
    (a rank computing posts nothing) but an epilogue tile's next step's
    messages (coll-mpi-overlap puts it past the messages posted next);
    whole, after or before all of the rank's tasks."""
    tasks = [replace(t, deps=list(t.deps)) for t in graph.tasks]
    step = taskgraph.steps(graph)
    keys: list[float] = [float(s) for s in step]  # (where each task sits in a rank's program)
    for run in runs:
        for device, arg in run.args:
            mine = [i for i, t in enumerate(graph.tasks) if device in (t.device, t.src)]
            placed: list[tuple[float, Task, list[int]]] = []  # (key, tile, its rows' tasks)
            for a, b in (run.tiles() if tiled else [(0, run.rows)]):
                t = Task("local", device=device, seconds=run.seconds((b - a) / run.rows, profile))
                lo, hi = a * run.row_bytes, b * run.row_bytes
                rows = [i for i in mine if not tiled or any(
                    r == arg and x < hi and lo < y and (w or run.before) for r, x, y, w in graph.tasks[i].regions)]
                if run.before:
                    key = (min(step[i] for i in rows) if rows and tiled else 0) - 0.5
                else:
                    key = (max(step[i] for i in rows) if rows else 0) + 0.5
                placed.append((key, t, rows))
            # The rank's tiles one after another, in program order: by step;
            # within one, after the rank's own copies and combines (done
            # where they are) before those after messages (done at a wait).
            prev = -1
            for key, t, rows in sorted(placed, key=lambda p: (p[0], not all(_computes(graph.tasks[i]) for i in p[2]),
                                                              max(p[2], default=-1))):
                k = len(tasks)
                tasks.append(t)
                keys.append(key)
                t.deps = ([prev] if prev >= 0 else []) + (
                    [i for i in mine if keys[i] < key and _computes(graph.tasks[i])] if run.before else rows)
                for i in mine:  # (an epilogue's tile goes past the messages of the next step: posted first)
                    if keys[i] > key and (run.before or keys[i] > key + 0.5 or _computes(graph.tasks[i])):
                        tasks[i].deps.append(k)
                prev = k
    order = _topological(tasks, keys)
    at = {old: new for new, old in enumerate(order)}
    out = [replace(tasks[i], deps=[at[d] for d in tasks[i].deps]) for i in order]
    return replace(graph, tasks=out)


def _computes(t: Task) -> bool:
    """Whether the rank runs `t` itself, in program order: a combine or a
    copy on the rank (a memcpy), not a message it posts."""
    return t.kind == "combine" or (t.kind == "copy" and t.src == t.device)


def _topological(tasks: Sequence[Task], keys: Sequence[float]) -> list[int]:
    """The tasks in an order where each comes after what it waits for,
    otherwise by key."""
    waiting = [len(set(t.deps)) for t in tasks]
    users: list[list[int]] = [[] for _ in tasks]
    for i, t in enumerate(tasks):
        for d in set(t.deps):
            users[d].append(i)
    ready = [(keys[i], i) for i in range(len(tasks)) if not waiting[i]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for u in users[i]:
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, (keys[u], u))
    assert len(order) == len(tasks), "a cycle among the local tasks"
    return order


class Prediction(NamedTuple):
    tiles: float   # seconds, the runs in tiles
    whole: float   # seconds, the runs whole
    compute_bound: bool  # every run's flops take longer than its bytes


def predict(graph: Graph, runs: Sequence[Local], profile: Profile) -> Prediction:
    """The collective with `runs`, in tiles and whole."""
    return Prediction(simulate(with_local(graph, runs, profile, True), profile).total,
                      simulate(with_local(graph, runs, profile, False), profile).total,
                      all(r.compute_bound(profile) for r in runs))
