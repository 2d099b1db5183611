"""The chunking rule of the chunked strategies (docs/algorithm.md): chunk
boundaries on 16-byte multiples of the buffer wherever the element count
allows, so that every chunk but the edge one is whole 16-byte vectors."""

ALIGN_BYTES = 16  # a GPU combine's vector (gpu_kernels.VECTOR_BYTES)


def granule(numel: int, elem_bytes: int) -> int:
    """Elements per chunk unit: the largest of 32, 16, 8, 4, 2 that divides
    numel, when that is a whole number of 16-byte vectors; else one vector's
    worth of elements (16 / elem_bytes)."""
    vector = max(1, ALIGN_BYTES // elem_bytes)
    for f in (32, 16, 8, 4, 2):
        if numel % f == 0 and f >= vector:
            return f
    return vector


def chunks(numel: int, n: int, elem_bytes: int) -> list[tuple[int, int]]:
    """[(start, size)] of the n consecutive chunks of a numel-element buffer
    of `elem_bytes`-byte elements.

    With f = granule(...): the first `left` chunks have (base+1)*f elements,
    the rest base*f, where base, left = divmod(numel // f, n); the last
    non-empty chunk (chunk 0 when all are) also takes the numel % f
    elements left over. Some chunks may be empty when numel is small.
    """
    f = granule(numel, elem_bytes)
    units, rest = divmod(numel, f)
    base, left = divmod(units, n)
    sizes = [(base + 1) * f if c < left else base * f for c in range(n)]
    edge = max([c for c in range(n) if sizes[c]], default=0)
    sizes[edge] += rest
    out, start = [], 0
    for size in sizes:
        out.append((start, size))
        start += size
    assert start == numel
    return out
