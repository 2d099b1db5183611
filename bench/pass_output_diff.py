"""Does a refactoring change what some coll passes produce? Runs them in two
checkouts on the same inputs and diffs their output IR (with locations) and
their errors.

Every call of the named passes is recorded, keyed by the pass, its options
and its input IR: a hook (a sitecustomize.py on PYTHONPATH, written here)
wraps the passes as they register, so nothing in the package changes. The
inputs are
  lit   every lit test of the checkout (`lit tests/lit`, or --lit folders):
        every input that reaches the passes, through coll-opt, coll-run,
        coll-build or any route;
  grid  every collective x strategy x N in --ns, lowered by
        coll-lower-collectives and run through coll-to-cpu under several
        option sets (default; no tiling; small tiles; inline kernels, no
        split; tiny split parts) and the cpu route; all_reduce also over
        kinds x element types; and shard programs of every shard
        collective (and all_slice, the process index ops) on 1-D grids of N
        and 2-D grids over each axis set, through coll-from-shard.

  python bench/pass_output_diff.py --base /path/to/other/checkout
        [--passes coll-to-cpu,coll-from-shard] [--ns 2..8] [--lit tests/lit/cpu,...] [--no-lit]
        [--keep DIR]

Prints the number of calls recorded on each side and every key whose output
differs or that only one side recorded; exit 1 if any.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# lit passes PYTHONPATH to its tests but no variable of ours: the hook
# carries its settings (filled in by capture()).
HOOK = r'''
import hashlib, os, sys
_dir = {dir!r}
_names = set({passes!r})
_root = {root!r}  # the checkout: lit's file names (in locations) hold it
if _dir:
    import coll.core.registry as _reg
    _register = _reg.register

    def _write(key, text):
        path = os.path.join(_dir, key)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)

    def register(name, description="", anchor="any", **options):
        wrap = _register(name, description, anchor, **options)
        if name not in _names:
            return wrap

        def deco(fn):
            def captured(op, *args, **kwargs):
                text = op.get_asm(enable_debug_info=True).replace(_root, "<root>")
                key = hashlib.sha1(repr((name, args, sorted(kwargs.items()), text)).encode()).hexdigest()
                try:
                    out = fn(op, *args, **kwargs)
                except Exception as e:
                    where = [(str(l), m) for l, m, _ in getattr(e, "findings", [])]
                    _write(key, f"{name} {args} {kwargs}\nERROR {type(e).__name__}: {e}\n{where}\n".replace(_root, "<root>"))
                    raise
                _write(key, f"{name} {args} {kwargs}\n" + op.get_asm(enable_debug_info=True).replace(_root, "<root>"))
                return out
            captured.__name__ = fn.__name__
            captured.__doc__ = fn.__doc__
            return wrap(captured)
        return deco
    _reg.register = register
'''

# The grid, run in the checkout under test (its own coll).
GRID = r'''
import sys
from mlir import ir
from coll.ir import make_context
from coll.ir.generate import collective_module, all_reduce_module
from coll.ir.ops import COLLECTIVE_OPS, PEER_ACCESS
from coll.ir import peers
from coll.core.registry import load_all
from coll.passes.lower_collectives import lower_collectives
from coll.lowering import lower

PASSES = load_all()
ns = [int(x) for x in sys.argv[1].split(",")]
VARIANTS = [{}, {"tile": 0}, {"tile": 4}, {"kernels": "inline", "split": 0}, {"split": 2}, {"tile": 0, "split": 3}]
calls = errors = 0


def run(name, text, **opts):
    global calls, errors
    calls += 1
    with make_context():
        m = ir.Module.parse(text)
        try:
            PASSES[name].fn(m.operation, **opts)
        except Exception as e:
            errors += 1
            print(f"  {name} {opts}: {type(e).__name__}: {str(e)[:150]}")


def explicit(text, peer):
    with make_context():
        m = ir.Module.parse(text)
        if peer:
            m.operation.attributes[peers.ATTR] = ir.UnitAttr.get()
        lower_collectives(m.operation)
        return str(m)


def cpu_grid(text, peer, variants):
    try:
        x = explicit(text, peer)
    except Exception as e:
        print(f"  not lowered: {str(e)[:100]}")
        return
    for v in variants:
        run("coll-to-cpu", x, **v)
    global calls, errors
    calls += 1
    with make_context():
        m = ir.Module.parse(x)
        try:
            lower(m.operation, "cpu", check_order=False)
        except Exception as e:
            errors += 1
            print(f"  cpu route: {type(e).__name__}: {str(e)[:150]}")


with make_context():
    for cls in COLLECTIVE_OPS:
        op = cls.short_name()
        for strategy in cls.STRATEGIES:
            for n in ns:
                kw = {"root": 1 % n} if cls.ROOTED else {}
                if cls.AXES:
                    kw["axis"] = 0  # every axis of the collective
                try:
                    text = collective_module(op, n, [n * 12], "f32", strategy=strategy, **kw)
                except ValueError as e:
                    print(f"  {op} {strategy} {n}: {e}")
                    continue
                cpu_grid(text, PEER_ACCESS in cls.needs(strategy), VARIANTS)
    for kind, dtype in [("sum", "f32"), ("max", "f32"), ("min", "bf16"), ("prod", "f64"), ("and", "i32"),
                        ("or", "i8"), ("xor", "i64"), ("xor", "i1"), ("sum", "f16")]:
        for strategy in ("ring", "naive"):
            try:
                text = all_reduce_module(4, [48], dtype, kind, strategy=strategy)
            except ValueError as e:
                print(f"  all_reduce {kind} {dtype}: {e}")
                continue
            cpu_grid(text, False, VARIANTS[:2])

# shard programs (partitioned already): every shard collective on 1-D grids
# and on 2-D grids over each axis set.
def shard_ops(shape, axes, g):
    """Lines of a function body on %x: tensor<A x B x f32> for each shard op."""
    a = "[" + ", ".join(map(str, axes)) + "]"
    lines, k = [], [0]

    def op(text):
        lines.append(f"  %v{k[0]} = {text}")
        k[0] += 1
    t = "tensor<24x6xf32>"
    op(f"shard.all_reduce %x on @g grid_axes = {a} reduction = max : {t} -> {t}")
    op(f"shard.all_reduce %x on @g grid_axes = {a} : {t} -> {t}")
    op(f"shard.all_gather %x on @g grid_axes = {a} gather_axis = 1 : {t} -> tensor<24x{6 * g}xf32>")
    if 24 % g == 0:
        op(f"shard.reduce_scatter %x on @g grid_axes = {a} reduction = min scatter_axis = 0 : {t} -> "
           f"tensor<{24 // g}x6xf32>")
        op(f"shard.all_to_all %x on @g grid_axes = {a} split_axis = 0 concat_axis = 1 : {t} -> "
           f"tensor<{24 // g}x{6 * g}xf32>")
        op(f"shard.all_slice %x on @g grid_axes = {a} slice_axis = 0 : {t} -> tensor<{24 // g}x6xf32>")
    root = "[" + ", ".join(str(shape[x] - 1) for x in axes) + "]"
    op(f"shard.broadcast %x on @g grid_axes = {a} root = {root} : ({t}) -> {t}")
    op(f"shard.reduce %x on @g grid_axes = {a} reduction = product root = {root} : ({t}) -> {t}")
    lines.append(f"  %i:{len(axes)} = shard.process_multi_index on @g axes = {a} : " + ", ".join(["index"] * len(axes)))
    lines.append("  %j = shard.process_linear_index on @g : index")
    lines.append(f"  %s:{len(shape)} = shard.grid_shape @g : " + ", ".join(["index"] * len(shape)))
    lines.append("  %sh = shard.sharding @g split_axes = [[0]] : !shard.sharding")
    return lines, k[0]


shapes = [([n], [[0]]) for n in ns] + [([2, n], [[0], [1], [0, 1], [1, 0]]) for n in ns if n <= 4]
for shape, axes_sets in shapes:
    for axes in axes_sets:
        g = 1
        for x in axes:
            g *= shape[x]
        body, count = shard_ops(shape, axes, g)
        grid = ", ".join(map(str, shape))
        results = ", ".join(f"%v{i}" for i in range(count))
        text = (f"shard.grid @g(shape = {'x'.join(map(str, shape))})\n"
                "func.func @f(%x: tensor<24x6xf32>) {\n" + "\n".join(body) + "\n  return\n}\n")
        run("coll-from-shard", text)
print(f"grid: {calls} pass calls, {errors} failed")
'''


def _pythonpath(checkout, work, hook_dir):
    """A folder whose `coll` is the checkout, first; then the hook."""
    folder = os.path.join(work, "path")
    os.makedirs(folder, exist_ok=True)
    link = os.path.join(folder, "coll")
    if not os.path.islink(link):
        os.symlink(os.path.realpath(checkout), link)
    return os.pathsep.join([folder, hook_dir])


def capture(checkout, work, passes, ns, lit_dirs):
    out = os.path.join(work, "calls")
    os.makedirs(out, exist_ok=True)
    hook = os.path.join(work, "hook")
    os.makedirs(hook, exist_ok=True)
    with open(os.path.join(hook, "sitecustomize.py"), "w") as f:
        f.write(HOOK.replace("{dir!r}", repr(out)).replace("{passes!r}", repr(list(passes)))
                .replace("{root!r}", repr(os.path.realpath(checkout))))
    env = dict(os.environ, PYTHONPATH=_pythonpath(checkout, work, hook))
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    grid = subprocess.run([sys.executable, "-c", GRID, ",".join(map(str, ns))], env=env, cwd=work,
                          capture_output=True, text=True)
    print("\n".join(f"{checkout}: {line}" for line in grid.stdout.strip().splitlines()))
    if grid.returncode:
        print(grid.stderr[-3000:])
    if lit_dirs:
        lit = os.path.join(os.path.dirname(sys.executable), "lit")
        proc = subprocess.run([lit, "-q"] + [os.path.join(checkout, d) for d in lit_dirs], env=env,
                              capture_output=True, text=True)
        print(f"{checkout}: lit exit {proc.returncode}" + (f"\n{proc.stdout[-3000:]}" if proc.returncode else ""))
    return {k: open(os.path.join(out, k)).read() for k in os.listdir(out) if not k.endswith(".tmp")}


def main(argv=None):
    from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
    from coll.tools.argtypes import checkout, counts
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", required=True, type=checkout(os.path.join("core", "registry.py")),
                   help="the other checkout (e.g. a clone at the commit before)")
    p.add_argument("--passes", default="coll-to-cpu,coll-from-shard")
    p.add_argument("--ns", default="2..8", type=counts(1, 64), help="device counts (1..64): A..B or a comma list")
    p.add_argument("--lit", default="tests/lit", help="comma-separated lit folders, relative to each checkout")
    p.add_argument("--no-lit", action="store_true")
    p.add_argument("--keep", default=None, help="keep the recorded calls under this folder")
    p.add_argument("--reuse-base", action="store_true", help="with --keep: take the base's calls recorded there "
                   "by an earlier run")
    args = p.parse_args(argv)
    ns = args.ns
    passes = args.passes.split(",")
    lit_dirs = [] if args.no_lit else args.lit.split(",")
    work = args.keep or tempfile.mkdtemp(prefix="pass_output_diff.")
    try:
        sides = []
        for name, c in (("base", args.base), ("this", HERE)):
            calls = os.path.join(work, name, "calls")
            if name == "base" and args.reuse_base and os.path.isdir(calls):
                sides.append({k: open(os.path.join(calls, k)).read() for k in os.listdir(calls)
                              if not k.endswith(".tmp")})
                continue
            sides.append(capture(c, os.path.join(work, name), passes, ns, lit_dirs))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    a, b = sides
    per_pass = {}
    for k, v in a.items():
        name = v.split(" ", 1)[0]
        per_pass[name] = per_pass.get(name, 0) + 1
    print(f"recorded: base {len(a)} distinct calls, this {len(b)} ({per_pass}); "
          f"errors: base {sum('ERROR' in v.split(chr(10), 2)[1] for v in a.values())}")
    bad = 0
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            bad += 1
            what = "only in base" if k not in b else "only here" if k not in a else "differs"
            first = (a.get(k) or b.get(k)).split("\n", 1)[0]
            print(f"{what}: {k} {first}")
            if what == "differs":
                la, lb = a[k].splitlines(), b[k].splitlines()
                i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
                print(f"  line {i}: base {la[i] if i < len(la) else '<end>'}\n  line {i}: this "
                      f"{lb[i] if i < len(lb) else '<end>'}")
    print("identical" if not bad else f"{bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
