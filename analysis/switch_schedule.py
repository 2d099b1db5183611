"""Event-driven schedule for `resources: switch` profiles (cost_model.py).

Devices hang off a non-blocking switch (NVSwitch): a copy between devices
waits its latency, then streams its bytes through its source's send port and
its target's receive port. Copies sharing a port share its bandwidth: each
active copy moves at link_bandwidth / (the larger of the number of active
copies on its send port and on its receive port). Kernels (combines) run one
at a time per device, in the order they become ready; other tasks take their
cost and hold nothing.

Symmetric collectives finish many copies at the same instant, so the loop
runs once per distinct finishing time, not once per copy.
"""
import heapq
import math
from collections.abc import Sequence

from .taskgraph import Task

READY, JOIN, DONE = 0, 1, 2


def simulate(tasks: Sequence[Task], cost: Sequence[float], link_bandwidth: float,
             latency: float) -> tuple[list[float], list[float]]:
    """(start, end) lists for `tasks` (taskgraph.Task) with per-task `cost`
    (seconds, used for everything but the streaming of network copies)."""
    n = len(tasks)
    start, end = [0.0] * n, [0.0] * n
    waiting = [len(set(t.deps)) for t in tasks]
    users: list[list[int]] = [[] for _ in tasks]
    for i, t in enumerate(tasks):
        for d in set(t.deps):
            users[d].append(i)
    events = [(0.0, READY, i) for i in range(n) if waiting[i] == 0]
    heapq.heapify(events)
    compute_free: dict[int | None, float] = {}
    flows: dict[int, float] = {}  # task -> bytes left
    now = 0.0

    def is_flow(t: Task) -> bool:
        return t.kind == "copy" and t.src != t.device

    def finish(i: int, t: float) -> None:
        end[i] = t
        for u in users[i]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(events, (t, READY, u))

    while events or flows:
        rates = _rates(tasks, flows, link_bandwidth)
        t_flow = min((now + flows[i] / r for i, r in rates.items()), default=math.inf)
        t_next = min(t_flow, events[0][0] if events else math.inf)
        dt = t_next - now
        done = [i for i, r in rates.items() if flows[i] <= r * dt * (1 + 1e-9) + 1e-9]
        for i, r in rates.items():
            flows[i] -= r * dt
        now = t_next
        for i in done:
            del flows[i]
            finish(i, now)
        while events and events[0][0] <= now:
            _, what, i = heapq.heappop(events)
            t = tasks[i]
            if what == READY:
                if is_flow(t):
                    start[i] = now
                    heapq.heappush(events, (now + latency, JOIN, i))
                elif t.kind == "combine":
                    start[i] = max(now, compute_free.get(t.device, 0.0))
                    compute_free[t.device] = start[i] + cost[i]
                    heapq.heappush(events, (start[i] + cost[i], DONE, i))
                else:
                    start[i] = now
                    heapq.heappush(events, (now + cost[i], DONE, i))
            elif what == JOIN:
                if t.bytes:
                    flows[i] = float(t.bytes)
                else:
                    finish(i, now)
            else:
                finish(i, now)
    return start, end


def _rates(tasks: Sequence[Task], flows: dict[int, float], bandwidth: float) -> dict[int, float]:
    sends: dict[int | None, int] = {}
    recvs: dict[int | None, int] = {}
    for i in flows:
        t = tasks[i]
        sends[t.src] = sends.get(t.src, 0) + 1
        recvs[t.device] = recvs.get(t.device, 0) + 1
    return {i: bandwidth / max(sends[tasks[i].src], recvs[tasks[i].device]) for i in flows}
