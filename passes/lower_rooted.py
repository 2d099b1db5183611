"""Rooted collectives on whole buffers: reduce to one device and broadcast
from one, each `direct`, `ring` (chunked, pipelined along the ring) and
binomial `tree`. coll.reduce and coll.broadcast lower to these, and the
`tree` allreduce is a tree reduce then a tree broadcast.

srcs[i] lives on devs[i]; the root may be outside devs. Each returns the
tokens that finish writing the output(s); `after` are tokens to start after.
"""
from .chunking import chunks


def reduce_direct(e, srcs, devs, out, root, after=()):
    """Every source not on the root is copied there; one combine: the
    root's own input (read in place) first, then the copies in device order
    (IRDL: the rhs group holds one type)."""
    if len(srcs) == 1:
        return [] if srcs[0] == out else [e.copy(srcs[0], out, after)]
    own = [s for s, d in zip(srcs, devs) if d == root]
    recv = [e.scratch(root, e.numel) for d in devs if d != root]
    deps = [e.copy(s, r, after) for s, r in zip([s for s, d in zip(srcs, devs) if d != root], recv)]
    parts = own + recv
    return [e.combine(parts[0], parts[1:], out, deps + list(after))]


def reduce_ring(e, srcs, devs, out, root, after=()):
    """Chunk by chunk along the ring that ends at the root (or at devs[-1],
    then one copy to the root): each hop copies the partial to the next
    device, which combines its own slice into it."""
    n = len(srcs)
    order = [(devs.index(root) + 1 + k) % n for k in range(n)] if root in devs else list(range(n))
    done = []
    for s, size in chunks(e.numel, n):
        if not size:
            continue
        target = e.slice(out, s, size)
        part, tok = e.slice(srcs[order[0]], s, size), list(after)
        for k, i in enumerate(order[1:], 1):
            r = e.scratch(devs[i], size)
            tok = e.copy(part, r, [tok])
            dst = target if k == n - 1 and devs[i] == root else r
            tok = e.combine(r, [e.slice(srcs[i], s, size)], dst, [tok])
            part = dst
        if part != target:
            tok = e.copy(part, target, [tok])
        done.append(tok)
    return done


def reduce_tree(e, srcs, devs, out, root, after=()):
    """Binomial tree rooted at the root (rank q is devs[(r + q) % n]): in
    round d, rank q + d sends its partial to rank q, which combines
    (lower ranks first)."""
    n = len(srcs)
    r = devs.index(root) if root in devs else 0
    at = [(r + q) % n for q in range(n)]
    part, tok, own = [srcs[i] for i in at], [list(after)] * n, [False] * n
    d = 1
    while d < n:
        for q in range(0, n - d, 2 * d):
            dev = devs[at[q]]
            recv = e.scratch(dev, e.numel)
            t = e.copy(part[q + d], recv, [tok[q + d]])
            if q == 0 and dev == root:
                dst = out
            elif own[q]:
                dst = part[q]
            else:
                dst, own[q] = e.scratch(dev, e.numel), True
            tok[q] = e.combine(part[q], [recv], dst, [tok[q], t])
            part[q] = dst
        d *= 2
    if part[0] != out:
        tok[0] = e.copy(part[0], out, [tok[0]])
    return [tok[0]]


def _ranks(src, root, outs, devs):
    """[(buffer, device)]: the root's source first, then the outputs from
    the root's successor around the ring; and the root's own output, if any."""
    n = len(outs)
    if root in devs:
        r = devs.index(root)
        order = [(r + k) % n for k in range(1, n)]
        return [(src, root)] + [(outs[j], devs[j]) for j in order], outs[r]
    return [(src, root)] + list(zip(outs, devs)), None


def broadcast_direct(e, src, root, outs, devs, after=()):
    return [e.copy(src, o, after) for o in outs if o != src]


def broadcast_ring(e, src, root, outs, devs, after=()):
    """Chunk by chunk, hop by hop from the root around the ring."""
    ranks, own = _ranks(src, root, outs, devs)
    done = [e.copy(src, own, after)] if own is not None and own != src else []
    for s, size in chunks(e.numel, len(outs)):
        if not size:
            continue
        prev, tok = e.slice(src, s, size), list(after)
        for buf, _ in ranks[1:]:
            dst = e.slice(buf, s, size)
            tok = e.copy(prev, dst, [tok])
            prev = dst
        done.append(tok)
    return done


def broadcast_tree(e, src, root, outs, devs, after=()):
    """Binomial tree: in round d, ranks q < d send to rank q + d."""
    ranks, own = _ranks(src, root, outs, devs)
    done = [e.copy(src, own, after)] if own is not None and own != src else []
    tok = [list(after)] + [None] * (len(ranks) - 1)
    d = 1
    while d < len(ranks):
        for q in range(min(d, len(ranks) - d)):
            tok[q + d] = e.copy(ranks[q][0], ranks[q + d][0], [tok[q]])
        d *= 2
    return done + tok[1:]


REDUCE = {"direct": reduce_direct, "ring": reduce_ring, "tree": reduce_tree}
BROADCAST = {"direct": broadcast_direct, "ring": broadcast_ring, "tree": broadcast_tree}
