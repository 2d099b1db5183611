"""Another MLIR frontend in miniature, embedding coll.

It owns its Context and PassManager, builds upstream ops around a
coll.all_reduce made with coll's builders, adds coll passes by function to
its own pipeline next to upstream passes, and prints the lowered module.

  python examples/embed_frontend.py [--devices 4] [--strategy ring]
"""
import argparse

from mlir import ir
from mlir.dialects import arith, func, linalg, memref
from mlir.passmanager import PassManager

import coll.ir
from coll.core.pipeline import add_pass
from coll.ir import builders


def build(devices, numel):
    """@step(%out0..): each device fills a gradient buffer, then all-reduces it."""
    module = ir.Module.create()
    f32 = ir.F32Type.get()
    buf = ir.MemRefType.get([numel], f32)
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp("step", ir.FunctionType.get([buf] * devices, []))
        with ir.InsertionPoint(fn.add_entry_block()):
            outs = list(fn.entry_block.arguments)
            grads = []
            for d in range(devices):  # the frontend's own (upstream) work
                g = memref.alloc(buf, [], [])
                linalg.fill(arith.constant(f32, float(d + 1)), outs=[g])
                grads.append(g)
            tok = builders.all_reduce(grads, outs, "sum", list(range(devices)))
            builders.wait([tok])
            for g in grads:
                memref.dealloc(g)
            func.ReturnOp([])
    return module


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--devices", type=int, default=4)
    p.add_argument("--numel", type=int, default=1024)
    p.add_argument("--strategy", default="ring")
    args = p.parse_args()

    ctx = ir.Context()
    coll.ir.load_dialect(ctx)  # our dialect in the frontend's own context
    with ctx, ir.Location.unknown():
        module = build(args.devices, args.numel)
        module.operation.verify()
        pm = PassManager("builtin.module")
        pm.add("canonicalize")
        add_pass(pm, "coll-lower-all-reduce", strategy=args.strategy)
        pm.add("cse")
        pm.run(module.operation)
        print(module)


if __name__ == "__main__":
    main()
