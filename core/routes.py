"""Routes are pipeline text: print it, diff it, replay it with
`coll-opt --pass-pipeline=...`. Each frontend (frontends/) and back end
(lowering/) owns its part of the way down; this module holds what they
share: the explicit route (collective level -> explicit level), option
text and `pipeline`, which joins route parts into `builtin.module(...)`.
A route starts from any level at or above its own: passes with nothing to
do leave the IR alone.
"""
from collections.abc import Iterable, Sequence

from ..ir import STRATEGIES
from .pipeline import _element, text_of


def options_text(**values: object) -> str:
    """'{a=1 b=x}' for the options that are set (None: the pass default)."""
    items = [f"{k.replace('_', '-')}={v}" for k, v in values.items() if v is not None and v != ""]
    return "{" + " ".join(items) + "}" if items else ""


def explicit(strategy: str | None = None, threshold: int | None = None, profile: str | None = None,
             check_order: bool = False, check_semantics: bool = False,
             capabilities: Iterable[str] = ()) -> list[str]:
    """Collective level -> explicit level. `strategy` (not auto) overrides
    every collective's own; otherwise coll-choose-strategy decides, among
    the strategies the back end's `capabilities` (names) allow. The
    checks prove an explicit program ordered (coll-check-order) and that it
    computes what its coll.implements claims (coll-check-semantics)."""
    if strategy is not None and strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy '{strategy}'; expected one of: {', '.join(STRATEGIES)}")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0):
        raise ValueError(f"threshold must be None or an integer >= 0, got {threshold!r}")
    if strategy not in (None, "auto"):  # nothing to choose: what it is chosen by is moot
        profile, capabilities = None, ()
    caps = ",".join(sorted(capabilities)) or None
    options = options_text(strategy=strategy, threshold=threshold, profile=profile, capabilities=caps)
    elems = [f"coll-choose-strategy{options}", "coll-lower-collectives"]
    if check_order:
        elems.append("coll-check-order")
    if check_semantics:
        elems.append("coll-check-semantics")
    return elems


def pipeline(*parts: Sequence[str]) -> str:
    """'builtin.module(...)' of route parts (lists of elements)."""
    return text_of([_element(e) for part in parts for e in part])
