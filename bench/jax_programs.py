"""The JAX programs coll is tested and measured against, in one place:
tests/unit/test_stablehlo_jax*.py export them at test time,
bench/xla_side_by_side.py times them under XLA and coll, and
tests/lit/stablehlo/Inputs/gen.py stores small ones for FileCheck.

    python bench/jax_programs.py OUTDIR [--names psum,pmax] [--n 64] [--devices 8]

writes, per program P: P.mlir (the StableHLO JAX lowers, generic form, as
coll reads it) and P.npz (its global inputs x0.., and JAX's outputs y0..
computed by XLA's CPU runtime on `--devices` host devices). It sets
XLA_FLAGS itself, so run it as its own process (the device count is fixed
when JAX starts). `n` is the elements of f32 (or i32) per device.
`matches` is how the tests and the benchmarks check coll's results
against XLA's.
"""
import os
import sys

import numpy as np

DEVICES = 8
NAMES = ("psum", "pmax", "pmin_i32", "psum_bf16", "all_gather", "psum_scatter", "all_to_all", "ppermute_ring",
         "ppermute_partial", "psum_2d", "ppermute_2d", "axis_index", "no_collective", "mlp_shard_map", "mlp_jit", "mlp_jit_2d",
         "megatron_mlp", "bf16_train_step", "sequence_parallel", "moe_all_to_all", "int_collectives",
         "bool_collectives", "pipeline_fori", "ring_attention", "fsdp_step", "scan_psum", "at_set",
         "take_along_grad", "while_psum")


def relative_error(y, want):
    """max |y - want| / max |want| (f32 compute against XLA's)."""
    scale = float(np.max(np.abs(want.astype(np.float64)), initial=0.0)) or 1.0
    return float(np.max(np.abs(y.astype(np.float64) - want), initial=0.0)) / scale


def matches(ys, want, layouts, tolerance):
    """'' when coll's results `ys` match XLA's `want` as the corpus asks
    (bitwise, or within `tolerance` relative to the largest value, bf16
    compared as floats), else what differs."""
    from coll.execution.check import as_float
    if len(ys) != len(want):
        return f"{len(ys)} results, XLA gives {len(want)}"
    for j, (y, w, lay) in enumerate(zip(ys, want, layouts)):
        if y.shape != w.shape or y.dtype != w.dtype:
            return f"y{j}: {y.shape} {y.dtype}, XLA gives {w.shape} {w.dtype}"
        if tolerance == "exact" or lay.element not in ("f64", "f32", "f16", "bf16"):
            if not np.array_equal(y, w):
                return f"y{j}: {np.count_nonzero(y != w)} of {y.size} elements differ"
            continue
        err = relative_error(as_float(y, lay.element), as_float(w, lay.element))
        if not err <= tolerance:
            return f"y{j}: relative error {err:.3g} > {tolerance}"
    return ""


def _jax(devices):
    flag = f"--xla_force_host_platform_device_count={devices}"
    if flag not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    return jax


def programs(n, devices=DEVICES, names=None):
    """{name: (jitted function, global input arrays)} for `names` (default
    all): each function runs on `devices` host devices; inputs hold small
    integers where the result is exact in any order (bitwise comparable),
    random floats in the MLPs, from a generator seeded by the name (only
    the programs asked for are made: at 64 MiB per device an input is
    512 MiB)."""
    jax = _jax(devices)
    import zlib

    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    d = devices
    mesh = jax.make_mesh((d,), ("x",))
    mesh2 = jax.make_mesh((2, d // 2), ("dp", "tp"))

    def smap(f, in_specs, out_specs, m=mesh):
        return jax.jit(jax.shard_map(f, mesh=m, in_specs=in_specs, out_specs=out_specs)), m, in_specs

    def small(*shape, dtype=np.float32):  # exact sums in any order
        return lambda rng: [rng.integers(-8, 8, shape).astype(dtype)]

    ring = [(i, (i + 1) % d) for i in range(d)]
    partial = [(0, d - 1), (d - 1, 0), (1, 2)]  # not a ring: the others receive zeros
    rows = max(n // 4, d)  # 2-D programs: rows x 4 per device
    table = {
        "psum": (smap(lambda a: jax.lax.psum(a, "x"), P("x"), P()), small(d * n)),
        "pmax": (smap(lambda a: jax.lax.pmax(a, "x"), P("x"), P()), small(d * n)),
        "pmin_i32": (smap(lambda a: jax.lax.pmin(a, "x"), P("x"), P()), small(d * n, dtype=np.int32)),
        "psum_bf16": (smap(lambda a: jax.lax.psum(a, "x"), P("x"), P()), small(d * n, dtype=jnp.bfloat16)),
        "all_gather": (smap(lambda a: jax.lax.all_gather(a, "x", axis=0, tiled=True), P("x"), P("x")),
                       small(d * n)),
        "psum_scatter": (smap(lambda a: jax.lax.psum_scatter(a, "x", scatter_dimension=0, tiled=True),
                              P("x"), P("x")), small(d * d * max(n // d, 1))),
        "all_to_all": (smap(lambda a: jax.lax.all_to_all(a, "x", 0, 0, tiled=True), P("x"), P("x")),
                       small(d * rows, 4)),
        "ppermute_ring": (smap(lambda a: jax.lax.ppermute(a, "x", ring), P("x"), P("x")), small(d * n)),
        "ppermute_partial": (smap(lambda a: jax.lax.ppermute(a, "x", partial), P("x"), P("x")), small(d * n)),
        "psum_2d": (smap(lambda a: jax.lax.psum(a, "tp"), P(("dp", "tp")), P("dp"), m=mesh2), small(d * n)),
        "ppermute_2d": (smap(lambda a: jax.lax.ppermute(a, "tp", [(i, (i + 1) % (d // 2)) for i in range(d // 2)]),
                             P(("dp", "tp")), P(("dp", "tp")), m=mesh2), small(d * n)),
        "axis_index": (smap(lambda a: jax.lax.psum(a * (jax.lax.axis_index("x") + 1).astype(a.dtype), "x"),
                            P("x"), P()), small(d * n)),
        # A shard_map whose devices never communicate: each rank its block.
        "no_collective": (smap(lambda a: a * 2 + 1, P("x"), P("x")), small(d * n)),
    }

    # A two-layer MLP, tensor parallel by hand (Megatron: W1 split by
    # columns, W2 by rows, one psum; relu), and the same with jit + NamedSharding
    # (XLA's partitioner inserts the collective; coll's shard route too).
    b, k = 8, 16
    h = d * max(n // (b * 4), 1)

    def mlp_inputs(rng):
        return [rng.standard_normal((b, k)).astype(np.float32),
                (rng.standard_normal((k, h)) / np.sqrt(k)).astype(np.float32),
                (rng.standard_normal((h, k)) / np.sqrt(h)).astype(np.float32)]

    def mlp_local(xb, a, c):  # jax.nn.relu: a call to a private function in the shard_map body
        return jax.lax.psum(jax.nn.relu(xb @ a) @ c, "x")

    def mlp(xb, a, c):
        return jnp.maximum(xb @ a, 0.0) @ c

    table["mlp_shard_map"] = (smap(mlp_local, (P(), P(None, "x"), P("x", None)), P()), mlp_inputs)
    sharded = lambda spec: NamedSharding(mesh, spec)
    jitted = jax.jit(mlp, in_shardings=(sharded(P()), sharded(P(None, "x")), sharded(P("x", None))),
                     out_shardings=sharded(P()))
    table["mlp_jit"] = ((jitted, None, None), mlp_inputs)
    # On a 2x4 mesh: the batch split over dp, the hidden layer over tp.
    sharded2 = lambda spec: NamedSharding(mesh2, spec)
    jitted2 = jax.jit(lambda xb, a, c: jax.nn.relu(xb @ a) @ c,
                      in_shardings=(sharded2(P("dp", None)), sharded2(P(None, "tp")), sharded2(P("tp", None))),
                      out_shardings=sharded2(P("dp", None)))
    table["mlp_jit_2d"] = ((jitted2, None, None), mlp_inputs)
    table.update(_training_and_inference(jax, jnp, np, smap, d))
    table.update(_loops_and_indexing(jax, d, n, smap, small))
    assert tuple(table) == NAMES, "NAMES lists the programs"
    unknown = sorted(set(names or ()) - set(table))
    if unknown:
        raise KeyError(f"unknown program(s) {', '.join(unknown)}; expected: {', '.join(table)}")
    return {name: (f, make(np.random.default_rng(zlib.crc32(name.encode()))))
            for name, (f, make) in table.items() if names is None or name in names}


def _training_and_inference(jax, jnp, np, smap, d):
    """Steps as JAX users write them (issue 33), for d devices on one axis
    "x": a Megatron tensor-parallel MLP (layernorm, column- then
    row-parallel matmuls, gelu, one psum); a data-parallel training step in
    bf16 with an f32 master copy (grad, psum of the grads, update); sequence
    parallelism (all_gather over the sequence, var, all(isfinite), a mask,
    a numpy padding mask it closes over, psum_scatter back); an MoE layer (top-1 routing, capacity, dispatch and
    combine by all_to_all); ppermute/psum/pmax/pmin on int32; bools gathered,
    pmax/pmin'ed (or, and) and psum'ed (JAX counts them in int32)."""
    from jax.sharding import PartitionSpec as P
    b, k, t, m, cap = 8, 16, 8, 8, 2  # batch, model dim; tokens, MoE dim, capacity per expert
    lax, nn = jax.lax, jax.nn

    def layernorm(x):
        mean = x.mean(-1, keepdims=True)
        return (x - mean) * lax.rsqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)

    def megatron(x, w1, w2):
        return lax.psum(nn.gelu(layernorm(x) @ w1) @ w2, "x")

    def train_step(w, x, y):
        def loss(w):
            h = nn.gelu(x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16))
            return jnp.mean((h.astype(jnp.float32) - y) ** 2)
        return w - 0.1 * lax.pmean(jax.grad(loss)(w), "x")

    real = np.arange(d * 4) < d * 4 - 3  # a padding mask the step closes over (the last 3 tokens)

    def sequence_parallel(x):
        full = lax.all_gather(x, "x", axis=0, tiled=True)
        scale = lax.rsqrt(jnp.var(full, axis=-1, keepdims=True) + 1e-5)
        y = jnp.where((full > 0) & real[:, None], full * scale, 0.0) * jnp.all(jnp.isfinite(full))
        return lax.psum_scatter(y, "x", scatter_dimension=0, tiled=True)

    def moe(x, router, w):
        logits = x @ router
        onehot = nn.one_hot(jnp.argmax(logits, axis=-1), d, dtype=x.dtype)
        slot = jnp.cumsum(onehot, axis=0) * onehot - 1.0  # the token's place at its expert
        dispatch = nn.one_hot(slot.astype(jnp.int32), cap, dtype=x.dtype) * ((slot >= 0) & (slot < cap))[..., None]
        sent = lax.all_to_all(jnp.einsum("tdc,tm->dcm", dispatch, x), "x", 0, 0, tiled=True)
        back = lax.all_to_all(nn.relu(jnp.einsum("dcm,mn->dcn", sent, w[0])), "x", 0, 0, tiled=True)
        return jnp.einsum("tdc,dcm,td->tm", dispatch, back, nn.softmax(logits, axis=-1))

    ring = [(i, (i + 1) % d) for i in range(d)]

    def ints(a):
        return lax.ppermute(a, "x", ring), lax.psum(a, "x"), lax.pmax(a, "x"), lax.pmin(a, "x")

    def bools(a):
        up = a > 0
        return lax.all_gather(up, "x", axis=0, tiled=True), lax.pmax(up, "x"), lax.pmin(up, "x"), lax.psum(up, "x")

    def normal(*shape, scale=1.0):
        return lambda rng: rng.standard_normal(shape).astype(np.float32) * np.float32(scale)

    def inputs(*makers):
        return lambda rng: [f(rng) for f in makers]

    small = lambda rng: [rng.integers(-8, 8, (d * 8,)).astype(np.int32)]  # noqa: E731
    return {
        "megatron_mlp": (smap(megatron, (P(), P(None, "x"), P("x", None)), P()),
                         inputs(normal(b, k), normal(k, 4 * d, scale=0.25), normal(4 * d, k, scale=0.25))),
        "bf16_train_step": (smap(train_step, (P(), P("x"), P("x")), P()),
                            inputs(normal(k, k, scale=0.25), normal(d * b, k), normal(d * b, k))),
        "sequence_parallel": (smap(sequence_parallel, P("x"), P("x")), inputs(normal(d * 4, k))),
        "moe_all_to_all": (smap(moe, (P("x"), P(), P("x")), P("x")),
                           inputs(normal(d * t, m), normal(m, d), normal(d, m, m, scale=0.3))),
        "int_collectives": (smap(ints, P("x"), (P("x"), P(), P(), P())), small),
        "bool_collectives": (smap(bools, P("x"), (P("x"), P(), P(), P())), small),
    }


def _loops_and_indexing(jax, d, n, smap, small):
    """Programs with loops around collectives (fori_loop, scan, while_loop)
    and with scatters (.at[].set/add, the gradient of take_along_axis)."""
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import PartitionSpec as P
    ring = [(i, (i + 1) % d) for i in range(d)]
    b, k = 4, 8  # rows per device, features

    def normal(*shapes, scale=1.0):
        return lambda rng: [(rng.standard_normal(s) * scale).astype(np.float32) for s in shapes]

    def pipeline(x, w):  # stage r applies its weight, then hands its rows to stage r + 1
        return jax.lax.fori_loop(0, d, lambda i, h: jax.lax.ppermute(jnp.tanh(h @ w), "x", ring), x)

    def ring_attention(q, kk, v):  # K/V blocks travel the ring; softmax accumulated online
        def step(i, c):
            o, m, l, kb, vb = c
            s = q @ kb.T / np.sqrt(k)
            m2 = jnp.maximum(m, s.max(axis=1))
            p = jnp.exp(s - m2[:, None])
            scale = jnp.exp(m - m2)
            o = o * scale[:, None] + p @ vb
            l = l * scale + p.sum(axis=1)
            return o, m2, l, jax.lax.ppermute(kb, "x", ring), jax.lax.ppermute(vb, "x", ring)
        init = (jnp.zeros_like(q), q[:, 0] * 0 - jnp.inf, q[:, 0] * 0, kk, v)  # varying over x, as the body's
        o, _, l, _, _ = jax.lax.fori_loop(0, d, step, init)
        return o / l[:, None]

    def fsdp_step(w, x):  # ZeRO-3: gather the weight, its gradient reduce-scattered back
        def loss(w):
            full = jax.lax.all_gather(w, "x", axis=0, tiled=True)
            return jnp.sum(jnp.tanh(x @ full) ** 2)
        return w - 0.1 * jax.grad(loss)(w)

    def scan_psum(x):  # a psum per row, the rows collected (dynamic_update_slice in the loop)
        return jax.lax.scan(lambda c, row: (c + row, jax.lax.psum(row * c, "x")), jnp.zeros_like(x[0]), x)[1]

    def at_set(a, i):  # i in [-len, 2 len): negative ones count from the end, the others past it are dropped
        b = a.at[i].set(7.0).at[(i + 1) % a.shape[0]].add(a[:i.shape[0]])
        return jax.lax.psum(b.at[jnp.array([0, 2])].multiply(3.0), "x")  # a constant JAX passes into the body

    def take_along_grad(a, idx, c):
        g = jax.grad(lambda a: jnp.sum(jnp.take_along_axis(a, idx, axis=1) ** 2 * c))(a)
        return jax.lax.psum(g, "x")

    def while_psum(x):  # a data-dependent trip count, the same on every device
        return jax.lax.while_loop(lambda y: jax.lax.pmax(jnp.max(y), "x") < 1000.0,
                                  lambda y: y + jax.lax.psum(y, "x") + 1.0, x)

    rows = max(n // k, 1)
    return {
        "pipeline_fori": (smap(pipeline, (P("x"), P("x")), P("x")), normal((d * b, k), (d * k, k), scale=0.5)),
        "ring_attention": (smap(ring_attention, (P("x"), P("x"), P("x")), P("x")), normal(*[(d * b, k)] * 3)),
        "fsdp_step": (smap(fsdp_step, (P("x"), P("x")), P("x")), normal((d * 2, k), (d * b, d * 2), scale=0.3)),
        "scan_psum": (smap(scan_psum, P(None, "x"), P(None, "x")), small(rows, d * k)),
        "at_set": (smap(at_set, (P("x"), P("x")), P()),
                   lambda rng: [*small(d * n)(rng), rng.integers(-n, 2 * n, (d * 4,)).astype(np.int32)]),
        "take_along_grad": (smap(take_along_grad, (P("x"), P("x"), P("x")), P()),
                            lambda rng: [*small(d * b, k)(rng), rng.integers(0, k, (d * b, 3)).astype(np.int32),
                                         *small(d * b, 3)(rng)]),
        "while_psum": (smap(while_psum, P("x"), P("x")), lambda rng: [rng.random(d * n).astype(np.float32)]),
    }


def placed(entry):
    """(function, its inputs placed as it wants them): shard_map wants
    its inputs laid out as its in_specs say (JAX 0.10)."""
    import jax
    from jax.sharding import NamedSharding
    (f, mesh, specs), xs = entry
    if mesh is None:
        return f, xs
    specs = specs if isinstance(specs, tuple) else (specs,)
    return f, [jax.device_put(x, NamedSharding(mesh, s)) for x, s in zip(xs, specs)]


def _stored(x):
    """An array as npz keeps it: bf16 as its uint16 bit patterns (coll's
    convention; npz has no bfloat16)."""
    import numpy as np
    x = np.asarray(x)
    return x.view(np.uint16) if x.dtype.name == "bfloat16" else x


def generic(f, xs, debug_info=False):
    """The StableHLO JAX lowers `f` to, in the generic form coll reads."""
    return f.lower(*xs).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True,
                                                                    enable_debug_info=debug_info)


def main(argv=None):
    from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
    from coll.tools.argtypes import count
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--names", default=None, help="comma-separated program names (default: all)")
    ap.add_argument("--n", type=count(1, 1 << 28), default=64, help="elements per device (default 64)")
    ap.add_argument("--devices", type=count(1, 64), default=DEVICES)
    ap.add_argument("--debug-info", action="store_true", help="keep JAX's locations (Python source lines)")
    ap.add_argument("--no-outputs", action="store_true", help="do not run the programs under XLA")
    ap.add_argument("--gspmd", action="store_true",
                    help="lower with GSPMD, not Shardy (jax_use_shardy_partitioner=False); files P_gspmd.*")
    a = ap.parse_args(argv)
    import numpy as np
    suffix = ""
    if a.gspmd:
        _jax(a.devices).config.update("jax_use_shardy_partitioner", False)
        suffix = "_gspmd"
    try:
        found = programs(a.n, a.devices, a.names.split(",") if a.names else None)
    except KeyError as e:
        print(f"jax_programs: {e.args[0]}", file=sys.stderr)
        return 2
    names = list(found)
    os.makedirs(a.outdir, exist_ok=True)
    for name in names:
        f, xs = placed(found[name])
        with open(os.path.join(a.outdir, f"{name}{suffix}.mlir"), "w") as fh:
            fh.write(generic(f, xs, a.debug_info))
        arrays = {f"x{i}": _stored(x) for i, x in enumerate(found[name][1])}
        if not a.no_outputs:
            ys = f(*xs)
            ys = ys if isinstance(ys, (tuple, list)) else [ys]
            arrays.update({f"y{j}": _stored(y) for j, y in enumerate(ys)})
        np.savez(os.path.join(a.outdir, f"{name}{suffix}.npz"), **arrays)
    return 0


if __name__ == "__main__":
    sys.exit(main())
