"""The forms the registry-driven tests run a collective in, derived from its
class alone (coll.collectives COLLECTIVES: `sample`, `default_arrays`,
IN_PLACE and its PLACEMENT: a root, an output that may sit on `to_device`),
so that a new collective or strategy is in the mutation and order tests
without a test edit."""
from coll.collectives import COLLECTIVES
from coll.ir.ops import EACH_OR_TO_DEVICE


def forms(cls, n, size="uneven"):
    """[(label, shape, attrs, in_place)] of `cls` over n devices: its sample
    (with its default ARRAYS; rooted, the root inside the group), its small
    sample (fewer elements than devices: empty chunks), its root outside the
    group (device n), its single-device output on device 1 and outside the
    group, and in place where it may be."""
    shape, attrs = cls.sample(n, size)
    attrs = {**cls.default_arrays(n), **attrs}
    out = [("sample", shape, attrs, False)]
    small = cls.sample(n, "small")
    if small is not None and small[0] != shape:
        out.append(("small", small[0], {**cls.default_arrays(n), **small[1]}, False))
    if cls.ROOTED:
        out.append((f"root{n}", shape, {**attrs, "root": n}, False))
    if EACH_OR_TO_DEVICE in (cls.PLACEMENT.inputs, cls.PLACEMENT.outputs):
        out += [(f"to{r}", shape, {**attrs, "to_device": r}, False) for r in (1, n)]
    if cls.IN_PLACE:
        out.append(("in_place", shape, attrs, True))
    return out


def strategies(skip=()):
    """[(collective class, strategy)] of every collective's every strategy,
    less the (class, strategy) pairs in `skip` (another file's)."""
    return [(cls, s) for cls in COLLECTIVES for s in cls.STRATEGIES if (cls, s) not in skip]
