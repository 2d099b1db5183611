"""coll-timeline: a picture of an explicit program, one lane per device.

A copy is an arrow from its source lane to its target lane, a combine a box
on its device's lane. Without a profile, tasks sit on their dependent step
(step k spans [k-1, k]), which shows the shape of the algorithm; with one,
at their predicted start and end (passes/cost_model.py).
"""
import io
import os
from typing import TYPE_CHECKING

from mlir import ir

from ..core.errors import PassError
from ..core.registry import register
from . import cost_model, taskgraph

if TYPE_CHECKING:
    from matplotlib.axes import Axes

COLORS = {"scratch": "tab:blue", "result": "tab:green", "local": "tab:gray",
          "combine": "tab:orange"}
MAX_ARROWS = 400  # above this, plain segments: arrowheads cost seconds each 1000
FORMATS = (".png", ".svg", ".pdf")  # what the Agg back end writes, named by the suffix


def file_error(path: str) -> str | None:
    """Why the picture cannot be written at exactly `path`, or None. The
    suffix names the format: given none it knows, matplotlib would write
    `path`.png instead (file= empty: './.png')."""
    expected = "expected a path ending in " + ", ".join(FORMATS)
    if not path:
        return f"file= is empty; {expected}"
    if os.path.isdir(path):
        return f"file '{path}' is a directory; {expected}"
    if os.path.splitext(path)[1].lower() not in FORMATS:
        return f"file '{path}' has no picture suffix; {expected}"
    return cost_model.output_path_error(path)  # its folder, writable


def placement(graph: taskgraph.Graph, profile: cost_model.Profile | None = None) -> list[tuple[float, float]]:
    """(start, end) per task, in steps (no profile) or microseconds."""
    if profile is None:
        steps = taskgraph.steps(graph)
        return [(s - 1, s) if t.kind in ("copy", "combine") else (s, s)
                for t, s in zip(graph.tasks, steps)]
    sched = cost_model.simulate(graph, profile)
    return [(a * 1e6, b * 1e6) for a, b in zip(sched.start, sched.end)]


def _copy_color(t: taskgraph.Task) -> str:
    if t.src == t.device:
        return COLORS["local"]
    return COLORS["scratch"] if t.to_scratch else COLORS["result"]


def draw_graph(ax: "Axes", graph: taskgraph.Graph, title: str, profile: cost_model.Profile | None = None) -> None:
    # matplotlib here, not at the top: only a picture needs it, and it is slow to import.
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Rectangle  # matplotlib: as above (~130 ms with collections)

    lane: dict[int | None, int] = {d: i for i, d in enumerate(graph.devices)}
    place = placement(graph, profile)
    span = max((b for _, b in place), default=1.0) or 1.0
    copies = [(t, p) for t, p in zip(graph.tasks, place) if t.kind == "copy"]
    arrows = len(copies) <= MAX_ARROWS
    segs: list[list[tuple[float, int]]] = []
    colors: list[str] = []
    for t, (a, b) in copies:
        y0, y1 = lane[t.src], lane[t.device]
        if arrows:
            ax.annotate("", xy=(b, y1), xytext=(a, y0),
                        arrowprops=dict(arrowstyle="-|>", color=_copy_color(t), lw=1.1,
                                        alpha=0.8, shrinkA=0, shrinkB=2))
        else:
            segs.append([(a, y0), (b, y1)])
            colors.append(_copy_color(t))
    if segs:
        ax.add_collection(LineCollection(segs, colors=colors, linewidths=0.6, alpha=0.6))
    min_w = span * 0.006  # keep short kernels visible
    for t, (a, b) in zip(graph.tasks, place):
        if t.kind == "combine":
            w = max(b - a, min_w)
            ax.add_patch(Rectangle((a, lane[t.device] - 0.18), w, 0.36, color=COLORS["combine"],
                                   ec="black", lw=0.4, zorder=3))
    n = len(graph.devices)
    ax.set_ylim(n - 0.5, -0.5)  # d0 on top
    ax.set_xlim(-0.02 * span, span * 1.02)
    ax.set_yticks(range(n))
    ax.set_yticklabels([f"d{d}" for d in graph.devices] if n <= 32 else
                       [f"d{d}" if i % max(1, n // 16) == 0 else "" for i, d in enumerate(graph.devices)])
    for y in range(n):
        ax.axhline(y, color="0.9", lw=0.6, zorder=0)
    if profile is None:
        ax.set_xlabel("dependent step")
        ax.set_xticks(range(0, int(span) + 1, max(1, int(span) // 20)))
        ax.grid(axis="x", color="0.85", lw=0.5)
    else:
        ax.set_xlabel(f"predicted time (us), profile {profile.name}")
    s = cost_model.summary(graph)
    extra = ""
    if profile is not None:
        extra = f", predicted {cost_model.simulate(graph, profile).total * 1e6:.1f} us"
    ax.set_title(f"{title}: {s['copies']} copies, {s['kernels']} combines, "
                 f"{s['steps']} steps{extra}", fontsize=10)


def _legend(ax: "Axes") -> None:
    # matplotlib here, not at the top: as in draw_graph.
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch  # matplotlib: as above
    ax.legend(handles=[Line2D([], [], color=COLORS["scratch"], marker=">", label="copy into scratch"),
                       Line2D([], [], color=COLORS["result"], marker=">", label="copy into result"),
                       Patch(color=COLORS["combine"], label="combine (kernel)")],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def draw(items: list[tuple[str, taskgraph.Graph]], path: str, profile: cost_model.Profile | None = None) -> None:
    """items: [(title, Graph)], one panel each, written to `path` (PNG/SVG/PDF)."""
    # matplotlib here, not at the top: as in draw_graph (and the back end is chosen first).
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after use("Agg"); pyplot: ~300 ms to import

    lanes = max((len(g.devices) for _, g in items), default=1)
    height = max(2.2, 0.35 * min(lanes, 32) + 1.4)
    fig, axes = plt.subplots(len(items) or 1, 1, figsize=(10, height * max(len(items), 1)),
                             squeeze=False)
    for ax, (title, g) in zip(axes[:, 0], items):
        draw_graph(ax, g, title, profile)
        _legend(ax)
    fig.tight_layout()
    picture = io.BytesIO()
    try:
        fig.savefig(picture, dpi=110, format=os.path.splitext(path)[1][1:].lower())
    finally:
        plt.close(fig)
    # A file beside the target, renamed into place: no partial picture on a
    # failed write (tools/output.py write_atomically does more, a layer above).
    target = os.path.realpath(path)
    tmp = f"{target}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # the umask applies, as for open(path, "w")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(picture.getvalue())
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def timeline_pass(module_op: ir.Operation, file: str = "timeline.png", profile: str = "", title: str = "") -> None:
    why = file_error(file)
    if why:
        raise PassError(why, module_op.location)
    prof = None
    if profile:
        try:
            prof = cost_model.load_profile(profile)
        except ValueError as e:
            raise PassError(str(e)) from None
    items: list[tuple[str, taskgraph.Graph]] = []
    for name, f in taskgraph.functions(module_op):
        g = taskgraph.from_function(f)
        if any(t.kind in ("copy", "combine") for t in g.tasks):
            items.append((f"{title} @{name}" if title else f"@{name}", g))
    if not items:
        raise PassError("no explicit coll ops to draw; "
                        "run coll-lower-all-reduce first")
    try:
        draw(items, file, prof)
    except OSError as e:
        raise PassError(f"could not write '{file}': {e.strerror}") from None


@register("coll-timeline",
          "Draw the explicit program as one lane per device (copies as arrows, combines as "
          "boxes) into file=PATH (.png, .svg or .pdf); by dependent step, or by predicted time with profile=NAME",
          anchor="builtin.module", file=(str, "timeline.png"), profile=(str, ""), title=(str, ""))
def coll_timeline(module_op: ir.Operation, file: str = "timeline.png", profile: str = "",
                  title: str = "") -> None:
    timeline_pass(module_op, file, profile, title)
