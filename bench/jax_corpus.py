"""The corpus: whole JAX programs written as JAX users write them (training
and inference steps, model parallel by hand with shard_map or by XLA with
jit + NamedSharding), one per pattern users bring. tests/unit/test_jax_corpus.py
exports them at test time and runs them through coll on cpu and under
mpirun against XLA; `--time` (below) times them against XLA.

    python bench/jax_corpus.py OUTDIR [--names a,b] [--devices 8] [--scale test|bench]
    python bench/jax_corpus.py --time [--names a,b] [--scale bench] [--rounds 3] [--repeat 5] [--parallel off]

The first writes, per program P: P.mlir (generic StableHLO with JAX's
locations), P.npz (inputs x0.. and XLA's outputs y0..; bf16 as uint16
bits) and P.inputs.npz (the inputs under JAX's names: `coll-run P.mlir
--inputs P.inputs.npz`). Each program runs on any even device count of at least 4 (2-D
meshes are 2 x devices/2). `--scale bench` uses realistic sizes (hidden
1024, batch 64).

`--time` times each program under XLA and under coll on the CPU back end
(8 simulated devices), in one process, interleaved round by round, and
prints per program: XLA's call (jitted, inputs placed, to
block_until_ready: as a JAX user calls it), coll's call as a user makes it
(global numpy arrays in, global arrays out: scatter, run, gather, the
replica check) and coll's bare compiled call (the SPMD function on
preallocated per-device buffers), medians of --repeat calls, the median
over rounds, and the ratios to XLA; the bare call's CPU time, on every
thread of the process (time.process_time: the devices' local work runs on
the async runtime's pool, coll-parallel-devices; what a shared machine's
other work does not inflate, but XLA's threads, in this process, still
busy after its calls, do: above the wall time at small --repeat);
last, the share of the bare call's time spent in collectives (coll-run
--profile's split, from the same program built to count it); then ok or
FAIL: coll's results against XLA's on the same inputs (TOLERANCE, as the
tests check them). A program coll refuses is listed with its error.
"""
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_programs import _jax, _stored, generic, matches  # noqa: E402 - XLA_FLAGS set before JAX starts, by _jax

# name -> the pattern it stands for (docs, the tests' table, the note).
PATTERNS = {
    "dp_mlp_step": "data-parallel step: MLP, softmax cross-entropy, jax.grad, pmean, SGD",
    "megatron_mlp": "Megatron tensor-parallel MLP: layernorm, column/row-parallel matmuls, gelu, psum",
    "bf16_dp_step": "bf16 activations with an f32 master copy, pmean of f32 gradients",
    "seq_parallel": "sequence parallel: all_gather over the sequence, psum_scatter back, jnp.var, "
                    "jnp.all(isfinite), a bool mask",
    "fsdp_step": "FSDP / ZeRO-3: all_gather params, grad, psum_scatter, .at[].set, take_along_axis",
    "pipeline_loop": "pipeline stages: ppermute in lax.fori_loop",
    "ring_attention": "ring attention: ppermute of K/V in lax.fori_loop",
    "moe_all_to_all": "MoE dispatch/combine with all_to_all and routing masks",
    "jit_mlp_bias": "jax.jit + NamedSharding: an MLP with biases on a 1-D mesh",
    "jit_block_2d": "jax.jit + NamedSharding: a transformer block (attention, layernorm) on a 2-D mesh",
    "jit_mlp_bias_tp": "jax.jit + NamedSharding: a tensor-parallel MLP with biases (W1 and b1 by columns, W2 by "
                       "rows) on a 1-D mesh",
    "jit_transformer_2d": "jax.jit + NamedSharding: a transformer block (multi-head attention, two layernorms, a "
                          "gelu MLP), the batch over dp, heads and hidden units over tp of a 2-D mesh",
    "mesh2d_step": "2-D mesh: psum over tp, pmean over dp, all_gather over dp",
    "int_bool": "ppermute/psum/pmax/pmin on int32 and an all_gather of bools",
}
NAMES = tuple(PATTERNS)
# What the comparison with XLA allows: "exact" (bitwise), or the largest
# error relative to the largest value.
TOLERANCE = {name: 1e-5 for name in NAMES} | {"bf16_dp_step": 1e-2, "int_bool": "exact"}


def programs(devices=8, scale="test", names=None):
    """{name: (jitted function, [global inputs placed as it wants them])}."""
    jax = _jax(devices)
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    d = devices
    big = scale == "bench"
    hid, batch, feat = (1024, 64, 1024) if big else (8 * d, 2 * d, 16)
    seq, heads_dim = (512, 128) if big else (2 * d, 8)
    mesh = jax.make_mesh((d,), ("x",))
    mesh2 = jax.make_mesh((2, d // 2), ("dp", "tp"))

    def smap(f, m, in_specs, out_specs):
        return jax.jit(jax.shard_map(f, mesh=m, in_specs=in_specs, out_specs=out_specs, check_vma=False)), m, in_specs

    def normal(rng, *shape, scale_=1.0, dtype=np.float32):
        return (rng.standard_normal(shape) * scale_).astype(dtype)

    def layernorm(x, g, b):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.var(x, axis=-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g + b

    def xent(logits, onehot):
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * onehot, axis=-1))

    table = {}

    # -- data parallel: each device its batch, the whole model; pmean of grads.
    def dp_step(w1, w2, x, y, lr):  # lr: a scalar argument (0-d)
        def loss(p):
            h = jax.nn.relu(x @ p[0])
            return xent(h @ p[1], y)
        l, g = jax.value_and_grad(loss)((w1, w2))
        g = jax.lax.pmean(g, "x")
        return w1 - lr * g[0], w2 - lr * g[1], jax.lax.pmean(l, "x")

    def dp_inputs(rng):
        labels = rng.integers(0, 10, d * batch)
        return [normal(rng, feat, hid, scale_=feat ** -0.5), normal(rng, hid, 10, scale_=hid ** -0.5),
                normal(rng, d * batch, feat), np.eye(10, dtype=np.float32)[labels], np.float32(0.1)]
    table["dp_mlp_step"] = (smap(dp_step, mesh, (P(), P(), P("x"), P("x"), P()), (P(), P(), P())), dp_inputs)

    # -- Megatron: W1 split by columns, W2 by rows, one psum; layernorm, gelu, residual.
    def megatron(x, g, b, w1, b1, w2):
        h = jax.nn.gelu(layernorm(x, g, b) @ w1 + b1)
        return x + jax.lax.psum(h @ w2, "x")

    def megatron_inputs(rng):
        return [normal(rng, batch, feat), 1 + normal(rng, feat, scale_=0.1), normal(rng, feat, scale_=0.1),
                normal(rng, feat, hid, scale_=feat ** -0.5), normal(rng, hid, scale_=0.1),
                normal(rng, hid, feat, scale_=hid ** -0.5)]
    table["megatron_mlp"] = (smap(megatron, mesh, (P(), P(), P(), P(None, "x"), P("x"), P("x", None)), P()),
                             megatron_inputs)

    # -- bf16 compute, f32 master weights and gradients.
    def bf16_step(w, x, y):
        def loss(w32):
            h = jnp.tanh(x.astype(jnp.bfloat16) @ w32.astype(jnp.bfloat16))
            return jnp.mean((h.astype(jnp.float32) - y) ** 2)
        g = jax.lax.pmean(jax.grad(loss)(w), "x")
        return w - 0.5 * g, (x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16))

    table["bf16_dp_step"] = (smap(bf16_step, mesh, (P(), P("x"), P("x")), (P(), P("x"))),
                             lambda rng: [normal(rng, feat, hid, scale_=feat ** -0.5), normal(rng, d * batch, feat),
                                          normal(rng, d * batch, hid, scale_=0.5)])

    # -- sequence parallel: the sequence split over devices, gathered for
    # attention scores, scattered back; a finite check and a mask.
    def seq_par(x, wq):
        full = jax.lax.all_gather(x, "x", axis=0, tiled=True)          # [seq, f]
        scores = (x @ wq) @ full.T / np.sqrt(feat)                      # [seq/d, seq]
        p = jax.nn.softmax(scores, axis=-1)
        mixed = p @ full                                                # [seq/d, f]
        out = jax.lax.psum_scatter(jnp.tile(mixed, (d, 1)), "x", scatter_dimension=0, tiled=True)
        ok = jnp.all(jnp.isfinite(out))
        mask = jnp.var(x, axis=-1, keepdims=True) > 0.5
        return jnp.where(mask & ok, out, 0.0), ok

    table["seq_parallel"] = (smap(seq_par, mesh, (P("x"), P()), (P("x"), P())),
                             lambda rng: [normal(rng, seq, feat), normal(rng, feat, feat, scale_=feat ** -0.5)])

    # -- FSDP: params stored sharded, gathered to compute, grads scattered.
    def fsdp(w_shard, x, labels):
        def loss(ws):
            w = jax.lax.all_gather(ws, "x", axis=0, tiled=True)           # [feat, 10]
            logp = jax.nn.log_softmax(x @ w)
            return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))
        g = jax.grad(loss)(w_shard)
        g = jax.lax.psum_scatter(jnp.tile(g, (d, 1)), "x", scatter_dimension=0, tiled=True) / d
        g = g.at[0].set(0.0)  # a frozen row
        return w_shard - 0.1 * g

    table["fsdp_step"] = (smap(fsdp, mesh, (P("x"), P("x"), P("x")), P("x")),
                          lambda rng: [normal(rng, feat, 10, scale_=0.3), normal(rng, d * batch, feat),
                                       rng.integers(0, 10, d * batch).astype(np.int32)])

    # -- pipeline: every device a stage; activations move on by ppermute.
    ring = [(i, (i + 1) % d) for i in range(d)]

    def pipeline(w, x):
        def stage(_, h):
            return jax.lax.ppermute(jnp.tanh(h @ w), "x", ring)
        return jax.lax.fori_loop(0, d, stage, x)

    table["pipeline_loop"] = (smap(pipeline, mesh, (P("x"), P("x")), P("x")),
                              lambda rng: [normal(rng, d * feat, feat, scale_=feat ** -0.5), normal(rng, d * batch, feat)])

    # -- ring attention: K and V blocks travel around the ring.
    def ring_attn(q, k, v):
        def step(_, carry):
            k, v, acc, den = carry
            s = jnp.exp(q @ k.T / np.sqrt(heads_dim))
            return (jax.lax.ppermute(k, "x", ring), jax.lax.ppermute(v, "x", ring), acc + s @ v, den + s.sum(-1))
        z = jnp.zeros((q.shape[0], heads_dim), q.dtype)
        _, _, acc, den = jax.lax.fori_loop(0, d, step, (k, v, z, jnp.zeros(q.shape[0], q.dtype)))
        return acc / den[:, None]

    table["ring_attention"] = (smap(ring_attn, mesh, (P("x"), P("x"), P("x")), P("x")),
                               lambda rng: [normal(rng, seq, heads_dim, scale_=0.3) for _ in range(3)])

    # -- MoE: top-1 routing to one expert per device, all_to_all there and back.
    def moe(x, wr, we):
        tokens = x.shape[0]
        choice = jnp.argmax(x @ wr, axis=-1)                               # [t]
        onehot = jax.nn.one_hot(choice, d, dtype=x.dtype)                 # [t, d] routing mask
        dispatched = onehot.T[:, :, None] * x[None]                        # [d, t, f]
        arrived = jax.lax.all_to_all(dispatched, "x", 0, 0, tiled=True)   # [d, t, f]: from every device
        out = jnp.tanh(arrived @ we[0])
        back = jax.lax.all_to_all(out, "x", 0, 0, tiled=True)
        return jnp.sum(back * onehot.T[:, :, None], axis=0).reshape(tokens, -1)

    table["moe_all_to_all"] = (smap(moe, mesh, (P("x"), P(), P("x")), P("x")),
                               lambda rng: [normal(rng, d * batch, feat), normal(rng, feat, d),
                                            normal(rng, d, feat, feat, scale_=feat ** -0.5)])

    # -- jit + NamedSharding: XLA's partitioner (or coll's route) places the collectives.
    def mlp_bias(x, w1, b1, w2, b2):
        return jax.nn.relu(x @ w1 + b1) @ w2 + b2

    sh = lambda m, spec: NamedSharding(m, spec)  # noqa: E731
    jit_mlp = jax.jit(mlp_bias, in_shardings=(sh(mesh, P("x", None)), sh(mesh, P()), sh(mesh, P()),
                                              sh(mesh, P()), sh(mesh, P())), out_shardings=sh(mesh, P("x", None)))
    table["jit_mlp_bias"] = ((jit_mlp, None, None), lambda rng: [
        normal(rng, d * batch, feat), normal(rng, feat, hid, scale_=feat ** -0.5), normal(rng, hid, scale_=0.1),
        normal(rng, hid, feat, scale_=hid ** -0.5), normal(rng, feat, scale_=0.1)])

    def block(x, g, b, wq, wk, wv, wo):
        h = layernorm(x, g, b)
        q, k, v = h @ wq, h @ wk, h @ wv
        p = jax.nn.softmax(jnp.einsum("bsf,btf->bst", q, k) / np.sqrt(feat), axis=-1)
        return x + jnp.einsum("bst,btf->bsf", p, v) @ wo

    w_sh = sh(mesh2, P(None, "tp"))
    jit_block = jax.jit(block, in_shardings=(sh(mesh2, P("dp", None, None)), sh(mesh2, P()), sh(mesh2, P()),
                                             w_sh, w_sh, w_sh, sh(mesh2, P("tp", None))),
                        out_shardings=sh(mesh2, P("dp", None, None)))
    table["jit_block_2d"] = ((jit_block, None, None), lambda rng: [
        normal(rng, 4, seq, feat), 1 + normal(rng, feat, scale_=0.1), normal(rng, feat, scale_=0.1)]
        + [normal(rng, feat, feat, scale_=feat ** -0.5) for _ in range(4)])

    jit_tp = jax.jit(mlp_bias, in_shardings=(sh(mesh, P()), sh(mesh, P(None, "x")), sh(mesh, P("x")),
                                             sh(mesh, P("x", None)), sh(mesh, P())), out_shardings=sh(mesh, P()))
    table["jit_mlp_bias_tp"] = ((jit_tp, None, None), lambda rng: [
        normal(rng, batch, feat), normal(rng, feat, hid, scale_=feat ** -0.5), normal(rng, hid, scale_=0.1),
        normal(rng, hid, feat, scale_=hid ** -0.5), normal(rng, feat, scale_=0.1)])

    def layernorm_stats(x, g, b):
        # Flax's LayerNorm's statistics (mean of squares), not jnp.var: its
        # bool mask, used by two layernorms, is still coll's i1 storage bug
        # (megatron_mlp).
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x), axis=-1, keepdims=True) - jnp.square(mu)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g + b

    def transformer(x, g1, b1, wq, wk, wv, wo, g2, b2, w1, w2):
        heads = 4  # reshapes of the activations: [batch, seq, heads, feat / heads]
        split = lambda t: t.reshape(*t.shape[:2], heads, -1)  # noqa: E731
        h = layernorm_stats(x, g1, b1)
        q, k, v = split(h @ wq), split(h @ wk), split(h @ wv)
        p = jax.nn.softmax(jnp.einsum("bshd,bthd->bhst", q, k) / np.sqrt(q.shape[-1]), axis=-1)
        x = x + jnp.einsum("bhst,bthd->bshd", p, v).reshape(x.shape) @ wo
        return x + jax.nn.gelu(layernorm_stats(x, g2, b2) @ w1) @ w2

    cols, rows, rep = sh(mesh2, P(None, "tp")), sh(mesh2, P("tp", None)), sh(mesh2, P())
    jit_transformer = jax.jit(transformer, in_shardings=(sh(mesh2, P("dp")), rep, rep, cols, cols, cols, rows, rep,
                                                         rep, cols, rows), out_shardings=sh(mesh2, P("dp")))
    table["jit_transformer_2d"] = ((jit_transformer, None, None), lambda rng: [
        normal(rng, 4, seq, feat), 1 + normal(rng, feat, scale_=0.1), normal(rng, feat, scale_=0.1)]
        + [normal(rng, feat, feat, scale_=feat ** -0.5) for _ in range(4)]
        + [1 + normal(rng, feat, scale_=0.1), normal(rng, feat, scale_=0.1),
           normal(rng, feat, hid, scale_=feat ** -0.5), normal(rng, hid, feat, scale_=hid ** -0.5)])

    # -- 2-D mesh: tensor parallel inside, data parallel across.
    def mesh2d(w1, w2, x, y):
        def loss(p):
            h = jnp.tanh(x @ p[0])
            o = jax.lax.psum(h @ p[1], "tp")
            return jnp.mean((o - y) ** 2)
        l, (g1, g2) = jax.value_and_grad(loss)((w1, w2))
        g1, g2, l = jax.lax.pmean(g1, "dp"), jax.lax.pmean(g2, "dp"), jax.lax.pmean(l, "dp")
        return w1 - 0.1 * g1, w2 - 0.1 * g2, l, jax.lax.all_gather(x, "dp", tiled=True)

    table["mesh2d_step"] = (smap(mesh2d, mesh2, (P(None, "tp"), P("tp", None), P("dp", None), P("dp", None)),
                                 (P(None, "tp"), P("tp", None), P(), P())),
                            lambda rng: [normal(rng, feat, hid, scale_=feat ** -0.5),
                                         normal(rng, hid, feat, scale_=hid ** -0.5),
                                         normal(rng, 2 * batch, feat), normal(rng, 2 * batch, feat)])

    def ints(a, m):
        return (jax.lax.ppermute(a, "x", ring), jax.lax.psum(a, "x"), jax.lax.pmax(a, "x"), jax.lax.pmin(a, "x"),
                jax.lax.all_gather(m, "x", tiled=True))

    table["int_bool"] = (smap(ints, mesh, (P("x"), P("x")), (P("x"), P(), P(), P(), P())),
                         lambda rng: [rng.integers(-1000, 1000, d * 8).astype(np.int32),
                                      rng.integers(0, 2, d * 4).astype(bool)])

    assert tuple(table) == NAMES, "NAMES lists the programs"
    unknown = sorted(set(names or ()) - set(table))
    if unknown:
        raise KeyError(f"unknown program(s) {', '.join(unknown)}; expected: {', '.join(table)}")
    out = {}
    for name, ((f, m, specs), make) in table.items():
        if names is not None and name not in names:
            continue
        xs = make(np.random.default_rng(zlib.crc32(name.encode())))
        placed = xs  # jit places its arguments by its in_shardings; shard_map wants them placed (JAX 0.10)
        if m is not None:
            specs = specs if isinstance(specs, tuple) else (specs,)
            placed = [jax.device_put(x, NamedSharding(m, s)) for x, s in zip(xs, specs)]
        out[name] = (f, xs, placed)
    return out


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def time_table(names, scale, rounds, repeat, devices=8, parallel="on"):
    """Prints the --time table (see the module's doc)."""
    import time

    import numpy as np

    found = programs(devices, scale, names)
    from coll.frontends import stablehlo
    from coll.frontends.run import global_arrays
    load = os.getloadavg()[0]
    print(f"# {devices} devices (XLA: host devices; coll: simulated devices, cpu back end, parallel={parallel}), "
          f"scale {scale}, {rounds} rounds x {repeat} calls, load {load:.2f}")
    print(f"{'program':16s} {'XLA ms':>9s} {'coll call':>10s} {'coll bare':>10s} {'call/XLA':>9s} {'bare/XLA':>9s}"
          f" {'bare CPU ms':>12s} {'collectives':>11s}  check")
    for name, (f, xs, placed) in found.items():
        try:
            prog = global_arrays.compile(generic(f, placed), stablehlo, backend="cpu", parallel=parallel)
        except Exception as e:  # noqa: BLE001 - a refused program is a row
            print(f"{name:16s} refused: {str(e).splitlines()[0][:120]}")
            continue
        jax_inputs = placed
        ins, outs = prog._scatter(prog._check(xs))
        bare = prog.program.program

        def xla():
            t = time.perf_counter()
            ys = f(*jax_inputs)
            for y in (ys if isinstance(ys, (tuple, list)) else [ys]):
                y.block_until_ready()
            return time.perf_counter() - t

        def call():
            t = time.perf_counter()
            prog.run(xs)
            return time.perf_counter() - t

        def compiled():
            t = time.perf_counter()
            bare.run(ins, outs)
            return time.perf_counter() - t

        def compiled_cpu():  # this thread and the pool's (OpenBLAS: one thread, the caller)
            t = time.process_time()
            bare.run(ins, outs)
            return time.process_time() - t
        want = f(*jax_inputs)
        differs = matches([np.asarray(y) for y in prog.run(xs)],
                          [_stored(y) for y in (want if isinstance(want, (tuple, list)) else [want])],
                          prog.outputs, TOLERANCE[name])
        fns = {"xla": xla, "call": call, "bare": compiled, "cpu": compiled_cpu}
        for fn in fns.values():  # warm: compile, first-touch
            fn()
        per = {k: [] for k in fns}
        for _ in range(rounds):
            for k, fn in fns.items():
                per[k].append(_median([fn() for _ in range(repeat)]))
        t = {k: _median(v) * 1e3 for k, v in per.items()}
        print(f"{name:16s} {t['xla']:9.3f} {t['call']:10.3f} {t['bare']:10.3f} {t['call'] / t['xla']:9.2f} "
              f"{t['bare'] / t['xla']:9.2f} {t['cpu']:12.3f} {_collective_share(f, placed, xs, repeat, parallel):>11s}"
              f"  {'FAIL (' + differs + ')' if differs else 'ok'}", flush=True)


def _collective_share(f, placed, xs, repeat, parallel="on"):
    """The share of a bare call's time in its collectives, measured on the
    same program built to count it (coll-run --profile: clock reads around
    each run of copies and combines, epilogues unfused)."""
    from coll.frontends import stablehlo
    from coll.frontends.run import global_arrays
    prog = global_arrays.compile(generic(f, placed), stablehlo, backend="cpu", split=True, parallel=parallel)
    ins, outs = prog._scatter(prog._check(xs))
    times = prog.program.program.time(ins, outs, repeat)
    split = prog.program.program.split()
    if not split or not split[1]:
        return "-"
    return f"{100 * split[0] / sum(times):.0f}%"


def main(argv=None):
    from coll.tools.args import ArgumentParser
    from coll.tools.argtypes import count
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--names", default=None, help="comma-separated program names (default: all)")
    ap.add_argument("--devices", type=count(4, 64), default=8)
    ap.add_argument("--scale", choices=("test", "bench"), default="test")
    ap.add_argument("--time", action="store_true", help="time each program under XLA and coll (no OUTDIR)")
    ap.add_argument("--rounds", type=count(1, 100), default=3)
    ap.add_argument("--repeat", type=count(1, 10000), default=5)
    ap.add_argument("--parallel", choices=("on", "off"), default="on",
                    help="--time: the devices' local work on every core (coll-parallel-devices), or on one")
    a = ap.parse_args(argv)
    if a.time:
        time_table(a.names.split(",") if a.names else None, a.scale, a.rounds, a.repeat, a.devices, a.parallel)
        return 0
    if a.outdir is None:
        ap.error("expected OUTDIR (or --time)")
    if a.devices % 2:
        ap.error(f"--devices {a.devices}: expected an even count (2-D meshes are 2 x devices/2)")
    import numpy as np
    try:
        found = programs(a.devices, a.scale, a.names.split(",") if a.names else None)
    except KeyError as e:
        print(f"jax_corpus: {e.args[0]}", file=sys.stderr)
        return 2
    from coll.frontends import stablehlo
    from coll.frontends.run.global_arrays import npz_names
    from coll.ir import make_context
    os.makedirs(a.outdir, exist_ok=True)
    for name, (f, xs, placed) in found.items():
        text = generic(f, placed, debug_info=True)
        with open(os.path.join(a.outdir, f"{name}.mlir"), "w") as fh:
            fh.write(text)
        ys = f(*placed)
        ys = ys if isinstance(ys, (tuple, list)) else [ys]
        arrays = {f"x{i}": _stored(x) for i, x in enumerate(xs)}
        arrays.update({f"y{j}": _stored(y) for j, y in enumerate(ys)})
        np.savez(os.path.join(a.outdir, f"{name}.npz"), **arrays)
        with make_context():  # the inputs under the names coll-run --inputs reads
            inputs = stablehlo.layouts(stablehlo.parse(text).operation).inputs
        np.savez(os.path.join(a.outdir, f"{name}.inputs.npz"),
                 **dict(zip(npz_names(inputs, "x"), (_stored(x) for x in xs))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
