"""The allreduce strategies for devices that address each other's memory
(coll.peer_access, ir/peers.py): combines read peer buffers in place, so
small and medium buffers need no copies, or half of them.

Every combine reads its inputs in device order, x_0 first: each device
computes the same expression, so every replica gets the same bits.
"""
from ..ir.peers import peer_view
from .chunking import chunks


def oneshot(e):
    """Each output device runs one combine over all N inputs, read in place
    on their devices, into its result: N kernels, no copies."""
    n, devs = e.n, e.devices
    targets = [e.to_device] if e.to_device is not None else devs
    # In place, every device still reads every input: results go to scratch
    # first and into the outputs once all combines are done.
    in_place = any(y in e.x for y in e.y)
    done, results = [], []
    for y, dev in zip(e.y, targets):
        ins = [peer_view(e.x[i], dev) for i in range(n)]
        out = e.scratch(dev, e.numel) if in_place else y
        done.append(e.combine(ins[0], ins[1:], out))
        results.append(out)
    if in_place:
        for r, y in zip(results, e.y):
            e.copy(r, y, done)


def twoshot(e):
    """Reduce-scatter by peer reads: device c combines chunk c of all N
    inputs in place into its result slice. All-gather by peer writes: device
    c's reduced chunk is copied into the others' results. N kernels,
    N(N-1) copies of a chunk (single-device output: chunks go straight to
    the target)."""
    n, devs = e.n, e.devices
    for c, (s, size) in enumerate(chunks(e.numel, n)):
        if size == 0:
            continue
        owner = devs[c]
        ins = [peer_view(e.slice(e.x[i], s, size), owner) for i in range(n)]
        scratch = e.to_device is not None and owner != e.to_device
        out = e.result_slice(owner, s, size, default=e.scratch(owner, size) if scratch else None)
        done = e.combine(ins[0], ins[1:], out)
        e.deliver(owner, out, s, size, done, hops=[(c, j) for j in range(n) if j != c])
