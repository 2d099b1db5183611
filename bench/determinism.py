"""Determinism of the reductions (issue 37): every allreduce strategy, under
the default order contract and under order = "any", against numpy's
device-order sum ((x_0 + x_1) + x_2) ..., f16/bf16/fp8 accumulated in f32 and
rounded once (execution/check.py canonical), bit for bit; its error against
the float64 sum; and the time of the fastest strategy of each contract.

Inputs: N random arrays over 16 binades (standard normal times 2^k, k in
[-8, 8); fp8: k within its range, clear of its subnormals and of overflow
at N), so an association other than device order rounds differently
somewhere. Per point (N, element type, bytes per device) and strategy, for
each contract: `differ`, the elements of the worst replica whose bits are
not the canonical ones (goal: 0 under the default contract); `err`, the
worst |y - s| / (eps * sum_i |x_i|) against the float64 sum s (a recursive
sum is bounded by N - 1; one rounding at the end, as f16/bf16/fp8 have
under the contract, by 0.5 up to the f32 sums' own error); `ms`, the best of --rounds calls (wall time:
a large group's tiles run on every core). The
strategies that lower alike under both contracts (naive, all2all, oneshot,
twoshot: one combine in device order) run once. The summary gives, per
point, the fastest canonical strategy over the fastest any-order one (goal:
<= 1.1 from 1 MiB on the CPU) and what the CPU's cost model picks under
each contract. --mpi adds every MPI strategy under both contracts, and
`auto` (the mpi profile's pick), at 2..4 ranks: their bits, and their
median times from one mpirun per point (interleaved; naive, all2all run
once, as on the CPU), the fastest
canonical over the fastest any-order (goal: <= 1.2 from 1 MiB per rank).

  python bench/determinism.py [--devices 2 4 8] [--kib 1 64 1024 16384] [--types f32 bf16 f16 f8E4M3FN f8E5M2]
                              [--full] [--rounds 3] [--naive-max-kib 16384] [--json out.json]
                              [--mpi [--mpi-ranks 2 3 4] [--mpi-numel 4099 262144 4194304] [--mpi-types f32]]

--full: N = 2..8 and 1 KiB .. 64 MiB (every power of 4).
"""
import json

import numpy as np

from coll.analysis.cost_model import load_profile
from coll.collectives import AllReduce
from coll.execution import check
from coll.execution.signature import to_stored
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.kinds import ELEMENTS
from coll.ir.ops import ANY_ORDER, CANONICAL
from coll.lowering import cpu
from coll.passes.choose_strategy import Instance, candidates, pick
from coll.tools.args import ArgumentParser
from coll.tools.argtypes import count, output_path

# Where the two contracts lower alike: nothing to run twice.
SAME_UNDER_BOTH = ("naive", "all2all", "oneshot", "twoshot")
PEER = [s for s in AllReduce.STRATEGIES if AllReduce.needs(s)]  # not on MPI ranks


TYPES = [n for n, e in ELEMENTS.items() if not e.integer and n != "f64"]  # f16, bf16, fp8, f32


def inputs(n, numel, element, seed=0):
    """n arrays over 16 binades (fp8: the binades of its range clear of its
    subnormals and, summed over n, of overflow), stored as `element` is
    (bf16, fp8: bits)."""
    e = ELEMENTS[element]
    lo = max(-8, int(np.log2(e.tiny)) + 3)
    hi = min(8, int(np.log2(e.max_finite)) - int(np.ceil(np.log2(n))) - 3)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        v = rng.standard_normal(numel) * 2.0 ** rng.integers(lo, hi, numel)
        out.append(to_stored(v.astype(np.float32) if element == "bf16" else v, element))
    return out


def as_f64(a, element):
    return check.as_float(a, element)


def module(n, numel, element, strategy, order):
    with make_context():
        return collective_module("all_reduce", n, [numel], element, strategy=strategy,
                                 order=None if order == CANONICAL else order)


def judge(xs, ys, element, want):
    """(differing elements of the worst replica, worst error in eps of sum |x|)."""
    bits = f"u{want.itemsize}"
    differ = max(int(np.sum(y.view(bits) != want.view(bits))) for y in ys)
    exact = sum(as_f64(x, element) for x in xs)
    scale = sum(np.abs(as_f64(x, element)) for x in xs) * ELEMENTS[element].eps
    err = max(float(np.max(np.abs(as_f64(y, element) - exact) / np.where(scale > 0, scale, 1.0))) for y in ys)
    return differ, err


def point(n, kib, element, rounds, naive_max_kib):
    numel = kib * 1024 // ELEMENTS[element].bytes
    xs = inputs(n, numel, element)
    want = check.canonical("sum", element, xs)
    rows = []
    for s in AllReduce.runnable(cpu.BACKEND.capabilities):
        if s == "naive" and kib > naive_max_kib:  # N(N-1) scratch buffers of the whole size
            continue
        for order in (CANONICAL,) if s in SAME_UNDER_BOTH else (CANONICAL, ANY_ORDER):
            prog = cpu.compile(module(n, numel, element, s, order))
            ys = [np.zeros_like(xs[0]) for _ in range(n)]
            times = prog.time(xs, ys, rounds)
            differ, err = judge(xs, ys, element, want)
            orders = [CANONICAL, ANY_ORDER] if s in SAME_UNDER_BOTH else [order]
            rows += [dict(n=n, kib=kib, type=element, strategy=s, order=o, differ=differ, err_eps=err,
                          ms=min(times) * 1e3) for o in orders]
    prof = load_profile("cpu")
    picks = {}
    for order in (CANONICAL, ANY_ORDER):
        coll = Instance(tuple(range(n)), numel, element, "sum", peer_access=True,
                        order=None if order == CANONICAL else order)
        picks[order] = pick(candidates(coll, prof))
    return rows, picks


def summarize(rows, picks):
    """Per point: the fastest of each contract, over every strategy and over
    those without peer access (what MPI ranks can run); ring, rhd and tree
    each in their two forms."""
    def best(order, peers=True):
        r = min((r for r in rows if r["order"] == order and (peers or r["strategy"] not in PEER)),
                key=lambda r: r["ms"])
        return r["strategy"], r["ms"]
    ms = {(r["strategy"], r["order"]): r["ms"] for r in rows}
    c, y, cn, yn = best(CANONICAL), best(ANY_ORDER), best(CANONICAL, False), best(ANY_ORDER, False)
    return dict(n=rows[0]["n"], kib=rows[0]["kib"], type=rows[0]["type"], canonical=c, any=y, ratio=c[1] / y[1],
                canonical_nopeer=cn, any_nopeer=yn, ratio_nopeer=cn[1] / yn[1],
                forms={s: ms[s, CANONICAL] / ms[s, ANY_ORDER] for s in ("ring", "rhd", "tree")},
                max_differ_canonical=max(r["differ"] for r in rows if r["order"] == CANONICAL),
                pick_canonical=picks[CANONICAL], pick_any=picks[ANY_ORDER])


def mpi_points(ranks_list, sizes, types=("f32",), repeat=5):
    """Bits and times of every MPI strategy (and auto, the mpi profile's
    pick) under both contracts: one mpirun per point runs them all,
    interleaved (lowering/mpi launch), so the times compare within a run."""
    from coll.lowering import mpi
    ok, why = mpi.available()
    if not ok:
        print(f"MPI: not available ({why})")
        return [], []
    out, summary = [], []
    for ranks in ranks_list:
        for numel in sizes:
            for element in types:
                xs = inputs(ranks, numel, element)
                want = check.canonical("sum", element, xs)
                names = [(s, o) for s in ("auto",) + AllReduce.runnable(())
                         for o in ((CANONICAL,) if s in SAME_UNDER_BOTH else (CANONICAL, ANY_ORDER))]
                progs = [mpi.compile(module(ranks, numel, element, None if s == "auto" else s, o),
                                     timeout=120 + numel * ranks * 1e-6 * repeat) for s, o in names]
                runs = [(p, xs, [np.zeros_like(xs[0]) for _ in range(ranks)]) for p in progs]
                # Short points: 16 calls in a row per timed run (the barrier's skew swamps one).
                times = mpi.launch(runs, repeat, calls=16 if numel * ELEMENTS[element].bytes < 1 << 20 else 1)
                rows = []
                for (s, order), (prog, _, ys), ts in zip(names, runs, times):
                    differ, err = judge(xs, ys, element, want)
                    for o in [CANONICAL, ANY_ORDER] if s in SAME_UNDER_BOTH else [order]:
                        rows.append(dict(ranks=ranks, numel=numel, type=element, strategy=s,
                                         ran=prog.strategies[0], order=o, differ=differ, err_eps=err,
                                         ms=float(np.median(ts)) * 1e3))
                    print(f"mpi N={ranks} {element:>4} numel={numel:>8} {s:>8} ({prog.strategies[0]:>7}) "
                          f"{order:>9}: differ {differ:>6}  err {err:.3f} eps  {rows[-1]['ms']:9.3f} ms",
                          flush=True)
                out += rows

                def best(order):
                    r = min((r for r in rows if r["order"] == order and r["strategy"] != "auto"),
                            key=lambda r: r["ms"])
                    return r["strategy"], r["ms"]
                auto = {r["order"]: r for r in rows if r["strategy"] == "auto"}
                c, y = best(CANONICAL), best(ANY_ORDER)
                summary.append(dict(ranks=ranks, numel=numel, type=element,
                                    bytes=numel * ELEMENTS[element].bytes, canonical=c, any=y, ratio=c[1] / y[1],
                                    auto=(auto[CANONICAL]["ran"], auto[CANONICAL]["ms"], auto[ANY_ORDER]["ran"],
                                          auto[ANY_ORDER]["ms"])))
    for order in (CANONICAL, ANY_ORDER):
        runs_ = [r for r in out if r["order"] == order]
        print(f"mpi {order}: {sum(1 for r in runs_ if r['differ'])} of {len(runs_)} runs differ from canonical")
    print("\nmpi summary: median ms of the fastest canonical and the fastest any-order strategy "
          "(goal <= 1.2x from 1 MiB per rank), auto's picks")
    print(f"{'N':>2} {'type':>4} {'numel':>8} {'canonical':>19} {'any':>19} {'ratio':>5} {'auto canonical':>19} "
          f"{'auto any':>19}")
    for m in summary:
        cells = [f"{b[0]:>8} {b[1]:>8.3f}ms" for b in (m["canonical"], m["any"])]
        a = m["auto"]
        print(f"{m['ranks']:>2} {m['type']:>4} {m['numel']:>8} {cells[0]} {cells[1]} {m['ratio']:>5.2f} "
              f"{a[0]:>8} {a[1]:>8.3f}ms {a[2]:>8} {a[3]:>8.3f}ms")
    big = [m["ratio"] for m in summary if m["bytes"] >= 1 << 20]
    if big:
        print(f"mpi time canonical / any from 1 MiB: worst {max(big):.2f}x, median {float(np.median(big)):.2f}x")
    return out, summary


def main():
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--devices", type=count(), nargs="+", default=[2, 4, 8])
    p.add_argument("--kib", type=count(), nargs="+", default=[1, 64, 1024, 16384])
    p.add_argument("--types", nargs="+", default=TYPES, choices=TYPES)
    p.add_argument("--full", action="store_true", help="N = 2..8, 1 KiB .. 64 MiB")
    p.add_argument("--rounds", type=count(), default=3)
    p.add_argument("--naive-max-kib", type=count(), default=16384,
                   help="naive only up to this size (its scratch is N(N-1) buffers)")
    p.add_argument("--mpi", action="store_true", help="also MPI: bits and times, 2..4 ranks")
    p.add_argument("--mpi-ranks", type=count(), nargs="+", default=[2, 3, 4])
    p.add_argument("--mpi-numel", type=count(), nargs="+", default=[4099, 1 << 18, 1 << 22],
                   help="elements per rank under MPI (4099: where auto picked tree; 1 and 16 MiB of f32)")
    p.add_argument("--mpi-types", nargs="+", default=["f32"], choices=TYPES)
    p.add_argument("--json", type=output_path(), default=None)
    a = p.parse_args()
    if a.full:
        a.devices, a.kib = list(range(2, 9)), [4 ** k for k in range(9)]
    print(f"{'N':>2} {'type':>8} {'KiB':>6} {'strategy':>8} {'order':>9} {'differ':>7} {'err/eps':>8} {'ms':>9}")
    rows, summary = [], []
    for n in a.devices:
        for kib in a.kib:
            for element in a.types:
                got, picks = point(n, kib, element, a.rounds, a.naive_max_kib)
                for r in got:
                    print(f"{r['n']:>2} {r['type']:>8} {r['kib']:>6} {r['strategy']:>8} {r['order']:>9} "
                          f"{r['differ']:>7} {r['err_eps']:>8.3f} {r['ms']:>9.3f}", flush=True)
                rows += got
                summary.append(summarize(got, picks))
    print("\nsummary: fastest canonical / fastest any order (goal <= 1.1 from 1 MiB), with and without "
          "peer access;\ncanonical / any form of ring, rhd, tree; max differing elements (canonical); cost "
          "model's picks (cpu), canonical / any")
    print(f"{'N':>2} {'type':>8} {'KiB':>6} {'canonical':>19} {'any':>19} {'ratio':>5} {'canonical':>19} "
          f"{'any':>19} {'ratio':>5} {'ring':>5} {'rhd':>5} {'tree':>5} {'differ':>6} {'picks':>17}")
    for s in summary:
        cells = [f"{b[0]:>8} {b[1]:>8.3f}ms" for b in (s["canonical"], s["any"])]
        nopeer = [f"{b[0]:>8} {b[1]:>8.3f}ms" for b in (s["canonical_nopeer"], s["any_nopeer"])]
        forms = " ".join(f"{s['forms'][k]:>5.2f}" for k in ("ring", "rhd", "tree"))
        print(f"{s['n']:>2} {s['type']:>8} {s['kib']:>6} {cells[0]} {cells[1]} {s['ratio']:>5.2f} {nopeer[0]} "
              f"{nopeer[1]} {s['ratio_nopeer']:>5.2f} {forms} {s['max_differ_canonical']:>6} "
              f"{s['pick_canonical'] + ' / ' + s['pick_any']:>17}")
    worst = max(s["max_differ_canonical"] for s in summary)
    print(f"\ncanonical: {worst} differing elements at worst (goal 0); "
          f"any order: {sum(1 for r in rows if r['order'] == ANY_ORDER and r['differ'])} of "
          f"{sum(1 for r in rows if r['order'] == ANY_ORDER)} runs differ")
    for t in dict.fromkeys(r["type"] for r in rows):
        worst_err = max(r["err_eps"] for r in rows if r["type"] == t and r["order"] == CANONICAL)
        print(f"{t}: worst error under the contract {worst_err:.3f} eps of sum |x| (one rounding: <= 0.5)")
    for key, what in (("ratio", "every strategy"), ("ratio_nopeer", "without peer access")):
        big = [s[key] for s in summary if s["kib"] >= 1024]
        if big:
            print(f"time canonical / any from 1 MiB, {what}: worst {max(big):.2f}x, "
                  f"median {float(np.median(big)):.2f}x")
    mpi_rows, mpi_summary = (mpi_points(a.mpi_ranks, a.mpi_numel, a.mpi_types, 4 * a.rounds) if a.mpi
                             else ([], []))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(rows=rows, summary=summary, mpi=mpi_rows, mpi_summary=mpi_summary), f, indent=1)


if __name__ == "__main__":
    main()
