"""Memref descriptors of numpy arrays, for the C interface
(`_mlir_ciface_<entry>`): what both a runtime in this process
(signature.py, the CPU's ExecutionEngine) and an MPI rank
(lowering/mpi/worker.py) pass a compiled entry.

It imports nothing but the standard library and numpy, and nothing of
coll: an MPI rank loads it by its path, not as `coll.execution.descriptors`,
because importing the coll package loads MLIR (0.3 s of CPU a rank, about
1.3 s of each 4-rank mpirun on two cores, where a rank needs none of it).
"""
import ctypes
from functools import cache

import numpy as np

# A static strided layout, in elements: (offset, strides); None for the
# identity layout, or one the descriptor gives at run time (`?`).
Layout = tuple[int, tuple[int, ...]] | None


def span(shape: tuple[int, ...], layout: Layout) -> int:
    """Elements of the buffer an argument of `shape` and `layout` reaches into."""
    if layout is None or 0 in shape:
        return int(np.prod(shape, dtype=np.int64))
    offset, strides = layout
    return offset + sum((d - 1) * st for d, st in zip(shape, strides)) + 1


@cache
def descriptor_type(rank: int) -> type[ctypes.Structure]:
    """The ctypes struct of a rank-`rank` memref descriptor: allocated and
    aligned pointers, offset, sizes[rank], strides[rank]."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_longlong)]
    if rank:
        fields += [("sizes", ctypes.c_longlong * rank), ("strides", ctypes.c_longlong * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def descriptor(arr: np.ndarray) -> ctypes.Structure:
    """A ranked memref descriptor struct viewing `arr` (C-contiguous)."""
    rank = arr.ndim
    d = descriptor_type(rank)()
    d.allocated = d.aligned = arr.ctypes.data
    d.offset = 0
    if rank:
        d.sizes = (ctypes.c_longlong * rank)(*arr.shape)
        d.strides = (ctypes.c_longlong * rank)(*[s // arr.itemsize for s in arr.strides])
    return d


def staged(arr: np.ndarray, shape: tuple[int, ...], layout: Layout
           ) -> tuple[np.ndarray, ctypes.Structure, np.ndarray]:
    """(the array the program sees, its descriptor, what to keep alive) of
    `arr` for an argument of `shape` and `layout`. With a static layout, a
    zeroed buffer of its span holding `arr` at that offset and strides (the
    compiled code reads the offset and strides from the type, not the
    descriptor); else `arr`."""
    if layout is None:
        return arr, descriptor(arr), arr
    offset, strides = layout
    base = np.zeros(span(shape, layout), arr.dtype)
    view = np.lib.stride_tricks.as_strided(base[offset:], shape, [st * arr.itemsize for st in strides])
    view[...] = arr
    d = descriptor_type(arr.ndim)()
    d.allocated = d.aligned = base.ctypes.data
    d.offset = offset
    if arr.ndim:
        d.sizes = (ctypes.c_longlong * arr.ndim)(*shape)
        d.strides = (ctypes.c_longlong * arr.ndim)(*strides)
    return view, d, base
