"""coll-predict: prints the cost model's prediction for each candidate
strategy of every collective (all_reduce, reduce_scatter, all_gather,
reduce, broadcast, all_to_all; and for every already explicit function),
as a table or JSON, on stderr or into a file. The IR is not changed."""
import json
import sys
from collections.abc import Iterable
from typing import Any, cast

from mlir import ir

from ..analysis import cost_model, taskgraph
from ..collectives.base import DEFAULT_THRESHOLD
from ..core.errors import PassError
from ..core.registry import choice as one_of
from ..core.registry import register
from ..ir.ops import COLLECTIVE_NAMES, CollectiveOp, view
from . import choose_strategy as choice
from .lower_collectives import reference_rule


def _collectives(func_op: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.operation.name in COLLECTIVE_NAMES:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE
    func_op.walk(visit, ir.WalkOrder.POST_ORDER)
    return found


def _has_explicit_ops(func_op: ir.Operation) -> bool:
    return any(t.kind in ("copy", "combine") for t in taskgraph.from_function(func_op).tasks)


def predictions(module_op: ir.Operation, profile: cost_model.Profile,
                capabilities: Iterable[str] = ()) -> list[dict[str, Any]]:
    """[{function, op, index, n, numel, dtype, bytes, reference, pick,
    candidates} for each collective (index: its place among the function's
    collectives; candidates: those the module and `capabilities` allow)]
    + [{function, explicit: {...}} for each explicit function]."""
    out: list[dict[str, Any]] = []
    for name, f in taskgraph.functions(module_op):
        ops = _collectives(f)
        for i, op in enumerate(ops):
            c = choice.Instance.of(op, capabilities)
            threshold = cast(CollectiveOp, view(op)).threshold
            threshold = DEFAULT_THRESHOLD if threshold is None else threshold
            cands = choice.candidates(c, profile)
            out.append({"function": name, "op": op.name[len("coll."):], "index": i,
                        "n": len(c.devices), "numel": c.numel, "dtype": c.elem, "bytes": c.nbytes(),
                        "reference": reference_rule(op.name, len(c.devices), c.numel, threshold),
                        "pick": choice.pick(cands), "candidates": cands})
        if not ops and _has_explicit_ops(f):
            out.append({"function": name, "explicit": cost_model.predict_function(f, profile)})
    return out


def format_table(preds: list[dict[str, Any]], profile_name: str) -> str:
    lines = [f"// coll-predict: profile {profile_name}"]
    head = f"{'strategy':9} {'copies':>7} {'kernels':>7} {'steps':>5} {'max_sent_B':>12} {'predicted_us':>13}"
    for p in preds:
        if "explicit" in p:
            e = p["explicit"]
            lines.append(f"@{p['function']}: explicit program")
            lines.append(head)
            lines.append(f"{'-':9} {e['copies']:>7} {e['kernels']:>7} {e['steps']:>5} "
                         f"{e['max_sent']:>12} {e['predicted_s'] * 1e6:>13.3f}")
            continue
        lines.append(f"@{p['function']} {p['op']} #{p['index']}: N={p['n']} numel={p['numel']} "
                     f"{p['dtype']} ({p['bytes']} B per device): pick {p['pick']} "
                     f"(reference rule: {p['reference']})")
        lines.append(head)
        for c in p["candidates"]:
            lines.append(f"{c['strategy']:9} {c['copies']:>7} {c['kernels']:>7} {c['steps']:>5} "
                         f"{c['max_sent']:>12} {c['predicted_s'] * 1e6:>13.3f}")
    return "\n".join(lines) + "\n"


def predict_pass(module_op: ir.Operation, profile: str = "nvlink-h200", file: str = "-", format: str = "table",
                 capabilities: Iterable[str] = ()) -> None:
    prof = cost_model.load_profile(profile)
    preds = predictions(module_op, prof, capabilities)
    if format == "json":
        text = json.dumps({"profile": prof.name, "predictions": preds}, indent=1) + "\n"
    else:
        text = format_table(preds, prof.name)
    if file == "-":
        sys.stderr.write(text)
    else:
        with open(file, "w") as f:
            f.write(text)


@register("coll-predict",
          "Print the cost model's predicted time of each strategy for every collective "
          "(and of every explicit function); stderr, or file=PATH; capabilities=peer_access,...: "
          "the back end's, as coll-choose-strategy takes them",
          anchor="builtin.module",
          profile=(str, "nvlink-h200"), file=(str, "-"), format=(one_of("table", "json"), "table"),
          capabilities=(str, ""))
def predict(module_op: ir.Operation, profile: str = "nvlink-h200", file: str = "-", format: str = "table",
            capabilities: str = "") -> None:
    caps = choice.parse_capabilities(capabilities)
    try:
        predict_pass(module_op, profile, file, format, caps)
    except ValueError as e:
        raise PassError(str(e)) from None
    except OSError as e:
        raise PassError(f"could not write '{file}': {e.strerror}") from None
