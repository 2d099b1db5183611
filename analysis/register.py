"""The passes of analysis/ as data: pass name -> "module:function" (core/registry.py
reads this table and imports a module only when its pass is used)."""

PASSES = {
    "coll-stats": "coll.analysis.stats:coll_stats",
    "coll-timeline": "coll.analysis.timeline:coll_timeline",
}
