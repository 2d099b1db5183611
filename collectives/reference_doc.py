"""docs/ops.md, the op reference, generated from the registry: every op
class's own words (its docstring) and facts (operand groups, attributes,
strategies and what they need, in place, rooted, nccl-tests' bus factor).
Checked in; tests/unit/test_irdl.py fails when it is not current.
Regenerate with

    python -m coll.collectives.reference_doc > docs/ops.md
"""
import inspect
from collections.abc import Callable
from typing import Any

from ..ir.kinds import ELEMENTS, KINDS
from ..ir.ops import OPS, CollectiveOp, OpView
from . import COLLECTIVES
from .base import Collective
from .irdl import _signature

HEADER = """\
# The coll ops

Generated from the registry (`python -m coll.collectives.reference_doc >
docs/ops.md`; `collectives/*.py` for the collectives, `ir/ops.py` for the
explicit level); the IRDL definition, `ir/coll.irdl.mlir`, is generated from
the same classes. Every op prints in generic form. What IRDL cannot say
(devices, shapes, kinds against element types, slices, tokens) the verifier
checks (`ir/verifier.py`).

Reduction kinds: {kinds}.
Element types: {elements}
(bitwise kinds on integers and i1 only; i1 only with the bitwise kinds;
f16, bf16 and the fp8 types `f8E4M3FN`, `f8E5M2` are combined in f32 and
rounded once; bf16 and fp8 arrays are their uint16/uint8 bit patterns, or
ml_dtypes arrays).

Every collective: operands `(inputs..., outputs..., deps...)` with
`operandSegmentSizes`, one result token, then (tensor form: no outputs)
one tensor per output; `devices` (the group, one device per input), an
optional `strategy` (`auto` or one of its own) and, in SPMD functions,
`groups`.
"""


def _doc(cls: type) -> str:
    return " ".join((inspect.getdoc(cls) or "").split("\n\n")[0].split())


def _collective(cls: type[Collective]) -> str:
    groups, _, attrs = _signature(cls)
    needed = [a for a, _ in attrs]
    lines = [f"## `{cls.NAME}`", "", _doc(cls), ""]
    lines.append(f"- required attributes: {', '.join(f'`{a}`' for a in needed)}")
    optional = dict(cls.ATTRS)
    optional.update(cls.ARRAYS if not set(cls.ARRAYS) <= set(needed) else {})
    if optional:
        lines.append("- optional attributes: " + "; ".join(f"`{a}` ({d})" for a, d in optional.items()))
    facts = []
    if cls.ROOTED:
        facts.append("rooted (`root` may be outside the group)")
    if cls.IN_PLACE:
        facts.append("an output may be its device's input (in place)")
    if cls.REPLICATED:
        facts.append("its outputs are replicas, bit for bit")
    if cls.DIVIDED_AXES:
        facts.append(f"the group size must divide {', '.join(f'`{a}`' for a in cls.DIVIDED_AXES)}")
    if facts:
        lines.append("- " + "; ".join(facts))
    strategies = [f"`{s}`" + (f" (needs {', '.join(sorted(cls.needs(s)))})" if cls.needs(s) else "")
                  for s in cls.STRATEGIES]
    lines.append(f"- strategies: {', '.join(strategies)}; without a profile, "
                 f"`auto` is the default rule ({_doc_of(cls.reference_rule)})")
    lines.append(f"- nccl-tests bus bandwidth factor at N = 8: {cls.busbw(8):g}")
    return "\n".join(lines) + "\n"


def _doc_of(fn: Callable[..., Any]) -> str:
    doc = " ".join((inspect.getdoc(fn) or "").split("\n\n")[0].split())
    return doc.rstrip(".") or "its own"


def _explicit(cls: type[OpView]) -> str:
    groups, results, attrs = _signature(cls)
    ops = ", ".join(f"{n}{'...' if v else ''}" for n, _, v in groups)
    res = ", ".join(n for n, _, _ in results) or "none"
    lines = [f"## `{cls.NAME}`", "", _doc(cls), "",
             f"- operands: ({ops}); results: {res}"]
    if attrs:
        lines.append(f"- required attributes: {', '.join(f'`{a}`' for a, _ in attrs)}")
    return "\n".join(lines) + "\n"


def generate() -> str:
    """The text of docs/ops.md."""
    head = HEADER.format(kinds=", ".join(f"`{k}`" for k in KINDS), elements=", ".join(f"`{e}`" for e in ELEMENTS))
    parts = [head, "# Collective level\n"] + [_collective(c) for c in COLLECTIVES]
    parts += ["# Explicit level\n"] + [_explicit(c) for c in OPS.values() if not issubclass(c, CollectiveOp)]
    return "\n".join(parts)


if __name__ == "__main__":
    print(generate(), end="")
