"""coll-check-order against an element-by-element ground truth on random
programs (tests/unit/order_oracle.py): strided, transposed, reshaped,
reinterpreted and byte-shifted views of a few buffers, copies and combines
with random or nearly right tokens, host ops (memref.copy/load/store,
vector.load/store, linalg.fill, func.call) between them. Every op the truth
flags (race, unwritten scratch, never waited for) must be flagged, and no
other. The long run is bench/check_order_crosscheck.py (10,000 programs)."""
import collections
import re

from mlir import ir
from order_oracle import HOST_OP_NAMES, VIEW_OP_NAMES, crosscheck

from coll.passes.check_order import check_module

COUNT = 300


def test_random_programs_match_the_ground_truth(ctx):
    seen = collections.Counter()
    for seed in range(COUNT):
        r = crosscheck(seed, check_module, lambda text: ir.Module.parse(text).operation)
        assert not r["miss"] and not r["false_alarm"], (
            f"seed {seed}: truth {r['truth']}, coll-check-order {r['got']} {r['other']}\n{r['text']}")
        bad, late = r["truth"]
        seen["clean" if not bad and not late else "flagged"] += 1
        seen["ops"] += r["ops"]
        seen["flagged ops"] += len(bad | late)
        for name in VIEW_OP_NAMES + HOST_OP_NAMES:
            seen[name] += f" {name} " in r["text"]
        seen["constant subview offsets"] += bool(re.search(r"memref.subview %\w+\[%c", r["text"]))
    print(dict(seen))
    # Both answers occur often, and every view and host op is exercised.
    assert seen["clean"] >= COUNT // 10 and seen["flagged"] >= COUNT // 10
    assert seen["ops"] - seen["flagged ops"] >= seen["ops"] // 2
    for name in VIEW_OP_NAMES + HOST_OP_NAMES + ("constant subview offsets",):
        assert seen[name] >= 10, name
