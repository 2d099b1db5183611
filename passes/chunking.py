"""The chunking rule of docs/algorithm.md (ring and all2all)."""


def granule(numel):
    """The largest of 32, 16, 8, 4, 2 that divides numel, else 1."""
    for f in (32, 16, 8, 4, 2):
        if numel % f == 0:
            return f
    return 1


def chunks(numel, n):
    """[(start, size)] of the n consecutive chunks of a numel-element buffer.

    The first `left` chunks have (base+1)*f elements, the rest base*f; some
    may be empty when numel is small.
    """
    f = granule(numel)
    base, left = divmod(numel // f, n)
    out, start = [], 0
    for c in range(n):
        size = (base + 1) * f if c < left else base * f
        out.append((start, size))
        start += size
    assert start == numel
    return out
