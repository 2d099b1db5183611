"""The passes of analysis/ (coll-stats, coll-timeline), as data: pass name -> "module:function",
the function that `@register` (core/registry.py) makes that pass, with its
description, options and anchor. The registry imports a pass's module only
when a pipeline uses the pass or a listing needs its options, so this file
imports nothing (an entry point of the `coll.passes` group in
pyproject.toml; the registry reads it without importing its package)."""

PASSES = {
    "coll-stats": "coll.analysis.stats:coll_stats",
    "coll-timeline": "coll.analysis.timeline:coll_timeline",
}
