"""Cost model of explicit coll programs (strategy choice by prediction is
passes/choose_strategy.py).

A program (analysis/taskgraph.py) is list-scheduled on a machine profile:
every task starts when the tasks it waits for have finished and the
resources it needs are free, and takes

  copy      link_latency_s + bytes / link_bandwidth_Bps   (between devices)
  copy      link_latency_s + memory time   (same device, or no link_bandwidth:
            a memcpy, as on the CPU)
  combine   kernel_launch_s + memory time of its local bytes
            + peer bytes / link_bandwidth_Bps (inputs read in place in other
            devices' memory, coll.peer_access: they cross the link)
  alloc     alloc_s + bytes / alloc_bandwidth_Bps (first touch of fresh pages)
  local     its own seconds (local work around a collective, analysis/overlap.py:
            flops / flops_per_s + bytes / memory_bandwidth_Bps)
  join/wait 0
  memory time = bytes touched / memory_bandwidth_Bps, where bytes touched
  are every input + the output (a copy: 2 x bytes); the bytes in coll.alloc
  scratch go over scratch_bandwidth_Bps instead when the profile gives it.
  A copy reads a link_bandwidth_Bps table at its own working set (2 x its
  bytes, at most the program's): a message's rate depends on its size
  (protocols, caches). Memory bandwidth tables are read at the bytes of the
  task's data-sharing group (the tasks whose regions overlap: one chunk of
  a ring), not the whole program's: the runtime runs a group's ops back to
  back on its data.

and the prediction is when the last task ends, plus call_overhead_s.
Latency counts once per dependent step, bandwidth once per byte a resource
carries: an alpha-beta model evaluated on the program's own schedule.

Profile fields (JSON, analysis/profiles/<name>.json or any path):
  resources  none:  no contention, the prediction is the weighted critical
                    path of the token DAG.
             ports: a device has one send port, one receive port and one
                    compute engine; a copy holds its source's send port and
                    its target's receive port for its whole duration, a
                    combine its device's engine (exclusive use).
             switch: like ports, but copies on a port share its bandwidth
                    (a non-blocking switch such as NVSwitch, simulated by
                    analysis/switch_schedule.py); `order` does not apply. A combine
                    that reads peers takes its cost and shares no port.
             host:  everything runs on one engine (the CPU runtime: one
                    thread runs the ops one after the other).
  cores      (ports only, optional) the devices are processes sharing this
             many cores: a task of device d needs one core (any idle one:
             ranks are not pinned to cores), and a copy also
             holds its source's and its target's core (a shared-memory
             message is copied by the processes' CPUs), a combine its
             device's core. More ranks than cores then cost what they do:
             the messages of two ranks on one core run one after the other.
  wakeup_s   (ports with cores, optional; a number or a table by the
             message's working set) with more devices than cores, a copy
             between devices first waits this long holding nothing: its
             receiver must be scheduled (a rank that waits yields its core
             to the other ranks there), once per dependent step, not per
             message, and longer for a rendezvous than for an eager one.
  copy_cores both (default) or target: with `target` a copy holds only its
             target's core (the receiver copies a message out of shared
             memory, so two messages in opposite directions run at once;
             bench/calibrate_mpi.py measures which).
  flops_per_s (optional) one core's rate on a contraction of the local
             work (OpenBLAS's sgemm), for analysis/overlap.py.
  order      program: each resource serves tasks in program order (like a
                    FIFO stream, or the CPU runtime's straight-line code).
             ready: a resource serves tasks in the order they become ready
                    (greedy list scheduling).
  A number may instead be a table [[working_set_bytes, value], ...]:
  the value is interpolated (log-log) at the program's working set, so that
  one profile covers both cache-resident and DRAM-sized programs.
  pointer_level  {min_ops, max_buffer_bytes, <numbers>...}: the numbers that
                 replace the others for a program of at least min_ops copies
                 and combines on buffers of at most max_buffer_bytes (the
                 CPU runtime emits those at the pointer level, scratch in
                 one reused arena: lowering/cpu/pointer_level.py).
  Scratch bytes never cost more than the program's own working set does:
  a cache-resident program keeps its scratch in that cache too.
"""
import bisect
import heapq
import json
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from mlir import ir

from . import switch_schedule, taskgraph

COPY_CORES = ("both", "target")  # what a copy holds of the ranks' cores (profile doc above)
POOL = "cores"  # task_resources: (POOL, k) = any k of the profile's cores
TARGET_CORE = COPY_CORES[1]
PROFILE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "profiles")
# What a task holds while it runs: "host", ("send"/"recv"/"compute",
# device), (POOL, k); the device may be None (a task without one).
Resource = str | tuple[Any, ...]
# One resource's busy intervals: (starts, ends), sorted by start.
Busy = tuple[list[float], list[float]]
_NUMBERS = ("link_latency_s", "link_bandwidth_Bps", "kernel_launch_s", "memory_bandwidth_Bps",
            "scratch_bandwidth_Bps", "alloc_s", "alloc_bandwidth_Bps", "call_overhead_s", "wakeup_s",
            "flops_per_s")


@dataclass
class Profile:
    name: str
    resources: str = "none"
    order: str = "ready"
    params: dict[str, Any] = field(default_factory=dict)  # numbers, tables, pointer_level, cores, copy_cores

    def value(self, key: str, working_set: float) -> float | None:
        """Parameter `key` at `working_set` bytes (None: missing/unbounded)."""
        v = self.params.get(key)
        if not isinstance(v, list):
            return v
        return _interpolate(v, working_set)


def _interpolate(points: Sequence[Sequence[float]], x: float) -> float:
    pts = sorted((float(a), float(b)) for a, b in points)
    if x <= pts[0][0]:
        return pts[0][1]
    if x >= pts[-1][0]:
        return pts[-1][1]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            f = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
            if y0 <= 0 or y1 <= 0:  # a time of 0 (a rate never is): linear in y
                return y0 + f * (y1 - y0)
            return math.exp(math.log(y0) + f * (math.log(y1) - math.log(y0)))
    return pts[-1][1]


def profile_names() -> list[str]:
    return sorted(f[:-5] for f in os.listdir(PROFILE_DIR) if f.endswith(".json"))


def save_profile(data: dict[str, Any], path: str) -> None:
    """Writes profile `data` (what load_profile reads) as JSON to `path`
    (bench/calibrate_cpu.py, bench/calibrate_mpi.py)."""
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


def output_path_error(path: str) -> str | None:
    """Why a file cannot be written at `path`, or None: asked before a
    calibration or benchmark spends minutes measuring."""
    if not path:
        return "the output path is empty; expected a .json file path"
    if os.path.isdir(path):
        return f"'{path}' is a directory; expected a .json file path"
    folder = os.path.dirname(os.path.realpath(path))  # a link's target's folder
    if not os.path.isdir(folder):
        return f"the folder of '{path}' does not exist"
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        return f"'{path}' is not writable"
    try:  # what access() cannot tell (root, /proc, read-only mounts): a file there
        with tempfile.NamedTemporaryFile(dir=folder):
            pass
    except OSError as e:
        return f"'{path}' is not writable: {e.strerror or e}"
    return None


def load_profile(spec: str) -> Profile:
    """A Profile from a name in analysis/profiles/ or a path to a JSON file.
    Raises ValueError saying what is wrong."""
    named = not (spec.endswith(".json") or os.sep in spec)
    path = os.path.join(PROFILE_DIR, spec + ".json") if named else spec
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        if named:
            raise ValueError(f"unknown profile '{spec}'; expected a path to a .json file "
                             f"or one of: {', '.join(profile_names())}") from None
        raise ValueError(f"profile '{path}' does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"profile '{path}' is a directory; expected a .json file") from None
    except OSError as e:
        raise ValueError(f"profile '{path}' cannot be read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError(f"profile '{path}' is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"profile '{path}' is not valid JSON: {e}") from None
    return profile_from_dict(data, default_name=spec)


# Times may be 0; a bandwidth divides, so it must be > 0.
_RATES = ("link_bandwidth_Bps", "memory_bandwidth_Bps", "scratch_bandwidth_Bps", "alloc_bandwidth_Bps",
          "flops_per_s")


def _number_ok(v: object, key: str) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:  # JSON integers have no bound: 10**400 is not a float
        if not math.isfinite(float(v)):
            return False
    except OverflowError:
        return False
    return v > 0 if key in _RATES else v >= 0


def _check_number(data: dict[str, Any], key: str, name: str) -> None:
    """A field is absent/null, a number, or a table [[working_set, value], ...]."""
    v = data.get(key)
    if v is None:
        return
    if isinstance(v, list):
        ok = bool(v) and all(isinstance(p, list) and len(p) == 2 and _number_ok(p[0], "working_set")
                             and p[0] > 0 and _number_ok(p[1], key) for p in v)
    else:
        ok = _number_ok(v, key)
    if not ok:
        what = "a positive number" if key in _RATES else "a number >= 0"
        raise ValueError(f"profile '{name}': '{key}' must be {what} or a list of "
                         f"[bytes, value] pairs, got {json.dumps(v)[:60]}")
    if isinstance(v, list) and len({p[0] for p in v}) != len(v):
        twice = sorted(p[0] for p in v if [q[0] for q in v].count(p[0]) > 1)[0]
        raise ValueError(f"profile '{name}': '{key}' has two values for working set {twice}; "
                         "expected one [bytes, value] pair per working set")


def profile_from_dict(data: object, default_name: str = "profile") -> Profile:
    if not isinstance(data, dict):
        raise ValueError(f"profile '{default_name}' must be a JSON object, got {type(data).__name__}")
    resources, order = data.get("resources", "none"), data.get("order", "ready")
    if resources not in ("none", "ports", "switch", "host"):
        raise ValueError(f"profile '{default_name}': resources must be none|ports|switch|host, got '{resources}'")
    if resources == "switch" and not data.get("link_bandwidth_Bps"):
        raise ValueError(f"profile '{default_name}': resources switch needs 'link_bandwidth_Bps'")
    if order not in ("program", "ready"):
        raise ValueError(f"profile '{default_name}': order must be program|ready, got '{order}'")
    if data.get("memory_bandwidth_Bps") is None:
        raise ValueError(f"profile '{default_name}' needs 'memory_bandwidth_Bps'")
    for key in _NUMBERS:
        _check_number(data, key, default_name)
    params = {k: data.get(k) for k in _NUMBERS}
    pointer = data.get("pointer_level")
    if pointer is not None:
        if not isinstance(pointer, dict) or not {"min_ops", "max_buffer_bytes"} <= set(pointer):
            raise ValueError(f"profile '{default_name}': pointer_level must be an object with "
                             "min_ops, max_buffer_bytes and the numbers it overrides")
        unknown = set(pointer) - set(_NUMBERS) - {"min_ops", "max_buffer_bytes"}
        if unknown:
            raise ValueError(f"profile '{default_name}': pointer_level has unknown keys "
                             f"{', '.join(sorted(unknown))}; expected some of: {', '.join(_NUMBERS)}")
        params["pointer_level"] = dict(pointer)
    cores = data.get("cores")
    if cores is not None and (isinstance(cores, bool) or not isinstance(cores, int) or cores < 1):
        raise ValueError(f"profile '{default_name}': cores must be a positive integer, got {json.dumps(cores)[:60]}")
    if cores is not None and resources != "ports":
        raise ValueError(f"profile '{default_name}': cores needs resources ports, got resources '{resources}'")
    if data.get("wakeup_s") is not None and cores is None:
        raise ValueError(f"profile '{default_name}': wakeup_s needs cores (it applies to programs with "
                         "more devices than cores)")
    params["cores"] = cores
    copy_cores = data.get("copy_cores", COPY_CORES[0])
    if copy_cores not in COPY_CORES:
        raise ValueError(f"profile '{default_name}': copy_cores must be {' or '.join(COPY_CORES)}, "
                         f"got '{copy_cores}'")
    params["copy_cores"] = copy_cores
    return Profile(data.get("name", default_name), resources, order, params)


def for_graph(profile: Profile, graph: taskgraph.Graph) -> Profile:
    """`profile` with its pointer_level numbers when `graph` takes that path."""
    pointer = profile.params.get("pointer_level")
    if not pointer:
        return profile
    ops = sum(1 for t in graph.tasks if t.kind in ("copy", "combine"))
    if ops < pointer["min_ops"] or graph.largest > pointer["max_buffer_bytes"]:
        return profile
    params = dict(profile.params)
    params.update({k: v for k, v in pointer.items() if k in _NUMBERS})
    return Profile(profile.name, profile.resources, profile.order, params)


# -- costs and the schedule -----------------------------------------------------

def message_set(task: taskgraph.Task, working_set: int) -> int:
    """The working set at which a copy's link numbers are read: its source
    and target bytes, within the program's (a message's rate depends on its
    own size: protocol, caches)."""
    return min(2 * task.bytes, working_set) or working_set


def task_cost(task: taskgraph.Task, profile: Profile, working_set: int) -> float:
    """Seconds `task` takes once it runs (see the module docstring)."""
    def v(key: str) -> float:
        return profile.value(key, working_set) or 0.0
    if task.kind == "copy":
        link = profile.value("link_bandwidth_Bps", message_set(task, working_set))
        if task.src != task.device and link:
            return v("link_latency_s") + task.bytes / link
        return v("link_latency_s") + memory_time(task, profile, working_set)
    if task.kind == "combine":
        link = profile.value("link_bandwidth_Bps", working_set)
        peer = sum(b for _, b in task.peer_reads) if link else 0
        return (v("kernel_launch_s") + memory_time(task, profile, working_set, peer)
                + (peer / link if peer and link else 0.0))  # peer is 0 without a link
    if task.kind == "alloc":
        bw = profile.value("alloc_bandwidth_Bps", working_set)
        return v("alloc_s") + (task.bytes / bw if bw else 0.0)
    return task.seconds  # (local; 0 for join and wait)


def memory_time(task: taskgraph.Task, profile: Profile, working_set: int, over_link: int = 0) -> float:
    """Bytes touched (less `over_link`, which the link carries) over memory
    bandwidth; scratch bytes over scratch_bandwidth_Bps when the profile has
    it (a runtime that keeps scratch in cache)."""
    # The bandwidth of the data this task shares with others (its group,
    # taskgraph.py): a ring's chunk stays in cache while its hops run.
    local = min(task.group_set or working_set, working_set)
    mem = profile.value("memory_bandwidth_Bps", local)
    assert mem is not None  # profile_from_dict requires it
    scratch = max(profile.value("scratch_bandwidth_Bps", working_set) or mem, mem)
    return ((task.touched - task.touched_scratch - over_link) / mem
            + task.touched_scratch / scratch)


def wakeup_delays(graph: taskgraph.Graph, profile: Profile) -> list[float]:
    """Per task the seconds it waits, holding nothing, once it is ready:
    wakeup_s for a copy between devices in a crowded round (see the module
    docstring), else 0. A round (the copies at one dependent copy step) is
    crowded when more devices take part in it than there are cores: in one
    that fewer ranks take part in (a tree's upper levels) every one of them
    holds a core while the others wait, and no receiver waits to be
    scheduled."""
    cores, ws = profile.params.get("cores"), graph.working_set
    if (profile.params.get("wakeup_s") is None or cores is None  # (pointer_level may set it)
            or len({t.device for t in graph.tasks if t.device is not None}) <= cores):
        return [0.0] * len(graph.tasks)
    rounds = taskgraph.steps(graph, counted=("copy",))
    busy: dict[int, set[int | None]] = {}
    for t, r in zip(graph.tasks, rounds):
        if t.kind == "copy" and t.src != t.device:
            busy.setdefault(r, set()).update((t.src, t.device))
    return [cast(float, profile.value("wakeup_s", message_set(t, ws)))  # wakeup_s is set: checked above
            if t.kind == "copy" and t.src != t.device and len(busy[r]) > cores else 0.0
            for t, r in zip(graph.tasks, rounds)]


def task_resources(task: taskgraph.Task, profile: Profile) -> tuple[Resource, ...]:
    if profile.resources == "host":
        return ("host",) if task.kind in ("copy", "combine", "alloc", "local") else ()
    if profile.resources == "ports":
        cores = profile.params.get("cores")
        # ("cores", k): k of the machine's cores, any free ones (the OS runs
        # a ready rank on whichever core is idle: ranks are not pinned when
        # there are more of them than cores).
        cpu: Callable[..., tuple[Resource, ...]] = (
            (lambda *ds: ((POOL, min(len(set(ds)), cores)),)) if cores else (lambda *ds: ()))
        if task.kind == "copy":
            holders = ((task.device,) if profile.params.get("copy_cores") == TARGET_CORE
                       else (task.src, task.device))
            return (("send", task.src), ("recv", task.device)) + cpu(*holders)
        if task.kind == "local":  # (a rank that computes copies no message meanwhile, where its CPU copies them)
            ports: tuple[Resource, ...] = () if not cores else (("recv", task.device),) if profile.params.get(
                "copy_cores") == TARGET_CORE else (("send", task.device), ("recv", task.device))
            return (("compute", task.device),) + ports + cpu(task.device)
        if task.kind == "combine":
            # Peer reads hold the senders' ports and the reader's.
            peers = sorted(cast(set[int], {h for h, _ in task.peer_reads}))  # peer views: placed buffers
            link: tuple[Resource, ...] = (("recv", task.device),) + tuple(("send", h) for h in peers) if peers else ()
            return (("compute", task.device),) + link + cpu(task.device)
    return ()


@dataclass
class Schedule:
    start: list[float]
    end: list[float]
    cost: list[float]
    total: float   # seconds, including call_overhead_s


def simulate(graph: taskgraph.Graph, profile: Profile) -> Schedule:
    """List-schedules `graph` on `profile`; returns a Schedule."""
    tasks, ws = graph.tasks, graph.working_set
    profile = for_graph(profile, graph)
    n = len(tasks)
    cost = [task_cost(t, profile, ws) for t in tasks]
    res = [task_resources(t, profile) for t in tasks]
    delay = wakeup_delays(graph, profile)
    start, end = [0.0] * n, [0.0] * n

    if profile.resources == "switch":
        link = profile.value("link_bandwidth_Bps", ws)
        assert link is not None  # profile_from_dict: resources switch needs it
        start, end = switch_schedule.simulate(tasks, cost, link,
                                    profile.value("link_latency_s", ws) or 0.0)
    elif profile.order == "program":
        # FIFO: a resource serves its tasks in program order (a topological
        # order), each after the one before it; pool cores: the k that are
        # free first.
        free: dict[Resource, float] = {}
        pool: list[Resource] = [("core", c) for c in range(_pool_size(profile, n))]
        for i in range(n):
            fixed, k = _split(res[i])
            cores = sorted(pool, key=lambda r: free.get(r, 0.0))[:k]
            ready = max((end[d] for d in tasks[i].deps), default=0.0) + delay[i]
            start[i] = max([ready] + [free.get(r, 0.0) for r in fixed + cores])
            end[i] = start[i] + cost[i]
            for r in fixed + cores:
                free[r] = end[i]
    else:
        # Greedy list scheduling: take tasks in the order they become ready;
        # each goes into the earliest window where all its resources are
        # idle (backfilling), as copies issued at once onto a switch would
        # share it.
        busy: dict[Resource, Busy] = {}
        waiting = [len(set(t.deps)) for t in tasks]
        users: list[list[int]] = [[] for _ in tasks]
        for i, t in enumerate(tasks):
            for d in set(t.deps):
                users[d].append(i)
        heap = [(delay[i], i) for i in range(n) if waiting[i] == 0]
        heapq.heapify(heap)
        pool_lists = [busy.setdefault(("core", c), ([], [])) for c in range(_pool_size(profile, n))]
        while heap:
            ready, i = heapq.heappop(heap)
            fixed, k = _split(res[i])
            lists = [busy.setdefault(r, ([], [])) for r in fixed]
            start[i], idle = _earliest_pool(ready, cost[i], lists, pool_lists, k)
            end[i] = start[i] + cost[i]
            for starts, ends in lists + idle:
                k = bisect.bisect_left(starts, start[i])
                starts.insert(k, start[i])
                ends.insert(k, end[i])
            for u in users[i]:
                waiting[u] -= 1
                if waiting[u] == 0:
                    heapq.heappush(heap, (max(end[d] for d in tasks[u].deps) + delay[u], u))
    overhead = profile.value("call_overhead_s", ws) or 0.0
    return Schedule(start, end, cost, max(end, default=0.0) + overhead)


def _pool_size(profile: Profile, tasks: int) -> int:
    """The cores the schedule draws on: the profile's, but no more than
    `tasks` tasks can hold at once (two each: a copy may hold both ranks'),
    so that a profile of 10**30 cores costs what one of enough cores does
    (an outside attack's: it ran out of memory building the pool)."""
    return min(profile.params.get("cores") or 0, 2 * tasks)


def _split(resources: Sequence[Resource]) -> tuple[list[Resource], int]:
    """(the named resources, how many pool cores) of task_resources."""
    fixed = [r for r in resources if r[0] != POOL]
    return fixed, sum(r[1] for r in resources if isinstance(r, tuple) and r[0] == POOL)


def _earliest_pool(t: float, cost: float, lists: list[Busy], pool: list[Busy], k: int) -> tuple[float, list[Busy]]:
    """Earliest time >= t at which every list is idle for [time, time + cost)
    and so are k of the `pool` lists; (time, those k lists)."""
    while True:
        t = _earliest(t, cost, lists)
        idle: list[Busy] = []
        later: list[float] = []
        for p in pool:
            starts, ends = p
            j = bisect.bisect_right(ends, t)
            if j < len(starts) and starts[j] < t + cost:
                later.append(ends[j])
            else:
                idle.append(p)
        if len(idle) >= k:
            return t, idle[:k]
        t = min(later)


def _earliest(t: float, cost: float, lists: list[Busy]) -> float:
    """Earliest time >= t at which [time, time + cost) overlaps no busy
    interval of any list (each list: disjoint intervals sorted by start)."""
    moved = True
    while moved:
        moved = False
        for starts, ends in lists:
            k = bisect.bisect_right(ends, t)  # first interval ending after t
            if k < len(starts) and starts[k] < t + cost:
                t, moved = ends[k], True
    return t


def summary(graph: taskgraph.Graph) -> dict[str, int]:
    """Copies between devices, kernels, dependent steps, max bytes sent."""
    sent: dict[int | None, int] = {}
    received: dict[int | None, int] = {}
    copies = kernels = 0
    for t in graph.tasks:
        if t.kind == "copy" and t.src != t.device:
            copies += 1
            sent[t.src] = sent.get(t.src, 0) + t.bytes
            received[t.device] = received.get(t.device, 0) + t.bytes
        elif t.kind == "combine":
            kernels += 1
            for home, b in t.peer_reads:
                sent[home] = sent.get(home, 0) + b
                received[t.device] = received.get(t.device, 0) + b
    return {"copies": copies, "kernels": kernels,
            "steps": max(taskgraph.steps(graph), default=0),
            "max_sent": max(sent.values(), default=0),
            "max_received": max(received.values(), default=0)}


def predict_function(func_op: ir.Operation, profile: Profile) -> dict[str, Any]:
    graph = taskgraph.from_function(func_op)
    return dict(summary(graph), predicted_s=simulate(graph, profile).total)
