"""coll-check-results: after bufferization, no collective's result is
overwritten before every op that reads it has read it.

coll-bufferize (frontends/tensor.py) gives each tensor collective it
rewrites `coll.result_ids = [k0, k1, ..]`, one id per result, and every op
that reads result j `coll.result_readers = [.., kj, ..]` (linalg ops, loops and
collectives keep these attributes through upstream's one-shot-bufferize).
Upstream decides which buffers values share; this pass checks the
decision where a wrong one is silent: between a collective and the last op
of its block that reads its result, no op may write the collective's
output buffer for that result (a write by that last reader itself is its
own). A finding
is a located error at the writer, with notes at the collective and at the
reader it would starve. The tags are removed either way.

Writes are what analysis/effects.py says an op writes, compared by root
buffer and element range (analysis.effects.Resolver); an op whose writes
are not known counts as writing every buffer it is given.
"""
from typing import cast

from mlir import ir

from ..analysis.effects import Resolver, Unresolved, host_effects, view_uses
from ..core.errors import PassError
from ..core.registry import register
from ..ir.errors import Finding
from ..ir.ops import OpView, view
from ..ir.views import root_of
from ..ir.walk import ancestor_in, find_ops

# (root buffer or global name, first byte, last byte); (root, None, None): all of it.
Span = tuple[ir.Value | str, int | None, int | None]

RESULT_IDS = "coll.result_ids"
RESULT_READERS = "coll.result_readers"


def _span(resolver: Resolver, v: ir.Value) -> Span:
    """(root, first element, last element) of memref `v`; the whole root
    (None, None) when its layout is not static."""
    try:
        lay = resolver.layout(v)
    except Unresolved:
        return root_of(v)[0], None, None
    last = (lay.offset + sum((n - 1) * s for n, s in zip(lay.shape, lay.strides)) if all(lay.shape)
            else lay.offset - 1)
    return lay.root, lay.shift + lay.offset * lay.esize, lay.shift + last * lay.esize + lay.esize - 1


def _overlap(a: Span, b: Span) -> bool:
    if a[0] != b[0]:
        return False
    a_first, a_last, b_first, b_last = a[1], a[2], b[1], b[2]
    if a_first is None or a_last is None or b_first is None or b_last is None:  # a whole root
        return True
    return a_first <= b_last and b_first <= a_last


def _writes(op: ir.Operation) -> list[ir.Value] | None:
    """The memrefs `op` may write: a collective's outputs, a host op's
    writes; None when not known."""
    v = view(op)
    if v is not None:
        return [x for x in v.writes if isinstance(x.type, ir.MemRefType)]
    if op.name == "coll.wait":
        return []
    eff = host_effects(op)
    return None if eff is None else [w[0] for w in eff[1]]


def _check_function(f: ir.Operation, findings: list[Finding]) -> None:
    if not len(f.regions[0].blocks):
        return
    tagged = find_ops(f, lambda n: True)
    collectives: dict[int, tuple[ir.Operation, ir.Value]] = {}
    readers: dict[int, list[ir.Operation]] = {}
    for op in tagged:
        if RESULT_IDS in op.attributes:
            outs = [v for v in cast(OpView, view(op)).writes if isinstance(v.type, ir.MemRefType)]
            for k, out in zip(ir.DenseI64ArrayAttr(op.attributes[RESULT_IDS]), outs):
                collectives[k] = (op, out)
        if RESULT_READERS in op.attributes:
            for k in ir.DenseI64ArrayAttr(op.attributes[RESULT_READERS]):
                readers.setdefault(k, []).append(op)
    if not collectives:
        return
    resolver = Resolver(f)
    for k, (c, out) in sorted(collectives.items()):
        block = c.block
        ops = [o.operation for o in block.operations]
        at = {o: i for i, o in enumerate(ops)}
        me = at[c]
        tops = [(at[t], r) for r in readers.get(k, []) if (t := ancestor_in(r, block)) is not None and at[t] > me]
        if not tops:
            continue
        last = max(i for i, _ in tops)
        spans = [_span(resolver, out)]
        roots = {spans[0][0]}
        for o in ops[me + 1:last]:
            writes = _writes(o)
            if writes is None:  # not known: any buffer it is given, through its views
                touched = [v for v in roots if not isinstance(v, str)
                           and any(ancestor_in(u, block) == o for u, _ in view_uses(v))]
                hit = bool(touched)
            else:
                hit = any(_overlap(_span(resolver, w), s) for w in writes for s in spans)
            if hit:
                reader = next(r for i, r in sorted(tops, key=lambda x: x[0]) if i > at[o])
                findings.append((o.location, f"'{o.name}' overwrites the result of '{c.name}' before "
                                 f"'{reader.name}' reads it: bufferization placed a later value in the "
                                 "collective's output buffer",
                                 [(c.location, "the collective whose result is overwritten"),
                                  (reader.location, "a later op that reads that result")]))
                break


@register("coll-check-results",
          "After bufferization: refuse a program in which a collective's output buffer is written before every "
          "op that reads its result has read it (what coll-bufferize tagged); removes the tags")
def check_results(op: ir.Operation) -> None:
    findings: list[Finding] = []
    every = find_ops(op, lambda n: True)  # one walk: the functions, then every op's tags
    for f in every:
        if f.name == "func.func":
            _check_function(f, findings)
    for o in every:
        for name in (RESULT_IDS, RESULT_READERS):
            if name in o.attributes:
                del o.attributes[name]
    if findings:
        loc, msg, notes = findings[0]
        raise PassError(msg, loc, notes=notes, findings=findings)
