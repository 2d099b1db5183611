"""Call compiled coll GPU programs from Python: ctypes + numpy only.

No MLIR and no coll imports, so the file also runs alone on a GPU machine
without the MLIR wheels (bench/gpu_prepare.py copies it next to the
libraries it builds). Device memory comes from the CUDA driver API
(libcuda.so.1, present wherever an NVIDIA driver is), in the device's
primary context: the one libmlir_cuda_runtime.so uses, and torch and cupy
too, so their device pointers can be passed as well.

A program is a shared library exporting `_mlir_ciface_<entry>(desc*...)`:
one pointer to a memref descriptor per argument (allocated pointer,
aligned pointer, int64 offset, int64 sizes[rank], int64 strides[rank]).
Its buffers are device pointers. It returns after a host sync, so a wall
clock around the call measures it whole, host overhead included.

Programs built with graphs (the default, lowering/gpu/graph.c) run each
call as one CUDA graph, captured at the first call with a set of buffers
and replayed after: `set_graphs(False)` enqueues the same work op by op
instead; `set_timing(True)` records events around each call's work, and
`device_seconds()` is then the last call's GPU time (without the host's
enqueueing and sync); `graph_counts()` says how calls ran.
"""
import _ctypes
import ctypes
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

_CUDA: ctypes.CDLL | None = None


class CudaError(RuntimeError):
    pass


def _load_libcuda() -> ctypes.CDLL:
    global _CUDA
    if _CUDA is None:
        _CUDA = ctypes.CDLL("libcuda.so.1")
    return _CUDA


def available(device: int = 0) -> tuple[bool, str]:
    """(True, '') when a CUDA GPU can run programs here, else (False, why)."""
    try:
        lib = _load_libcuda()
    except OSError as e:
        return False, f"no CUDA driver (libcuda.so.1 cannot be loaded: {e})"
    rc = lib.cuInit(0)
    if rc:
        return False, f"cuInit failed with CUDA error {rc} (no usable GPU)"
    count = ctypes.c_int(0)
    rc = lib.cuDeviceGetCount(ctypes.byref(count))
    if rc or count.value == 0:
        return False, "the CUDA driver sees no GPU"
    if device >= count.value:
        return False, f"GPU {device} requested but only {count.value} present"
    return True, ""


def driver_version() -> int | None:
    """cuDriverGetVersion (e.g. 13000 for CUDA 13.0), or None."""
    try:
        lib = _load_libcuda()
    except OSError:
        return None
    v = ctypes.c_int(0)
    return v.value if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 else None


def device_name(device: int = 0) -> str | None:
    """The GPU's name, without making a context (a parent process that only
    orchestrates keeps none)."""
    lib = _load_libcuda()
    dev = ctypes.c_int(0)
    name = ctypes.create_string_buffer(256)
    if lib.cuInit(0) or lib.cuDeviceGet(ctypes.byref(dev), device) or lib.cuDeviceGetName(name, 256, dev):
        return None
    return name.value.decode(errors="replace")


class Driver:
    """The primary context of one GPU, and memory in it."""

    def __init__(self, device: int = 0) -> None:
        ok, why = available(device)
        if not ok:
            raise CudaError(why)
        self.lib = _load_libcuda()
        self.lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
        self.lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
        self.lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        self.lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        self.lib.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
        self.lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
        self.lib.cuMemsetD8_v2.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t]
        dev = ctypes.c_int(0)
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev), "cuDevicePrimaryCtxRetain")
        self.check(self.lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        name = ctypes.create_string_buffer(256)
        self.lib.cuDeviceGetName(name, 256, dev)
        self.name = name.value.decode(errors="replace")

    def check(self, rc: int, what: str) -> None:
        if rc:
            msg = ctypes.c_char_p()
            self.lib.cuGetErrorString(rc, ctypes.byref(msg))
            raise CudaError(f"{what} failed: {msg.value.decode() if msg.value else rc}")

    def alloc(self, nbytes: int) -> int:
        ptr = ctypes.c_uint64(0)
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(ptr), max(int(nbytes), 1)), "cuMemAlloc")
        return ptr.value

    def free(self, ptr: int) -> None:
        self.check(self.lib.cuMemFree_v2(ptr), "cuMemFree")

    def upload(self, ptr: int, arr: np.ndarray) -> None:
        arr = np.asarray(arr, order="C")  # not ascontiguousarray: a 0-d array stays 0-d
        self.check(self.lib.cuMemcpyHtoD_v2(ptr, arr.ctypes.data, arr.nbytes), "cuMemcpyHtoD")

    def download(self, arr: np.ndarray, ptr: int) -> None:
        assert arr.flags.c_contiguous
        self.check(self.lib.cuMemcpyDtoH_v2(arr.ctypes.data, ptr, arr.nbytes), "cuMemcpyDtoH")

    def fill(self, ptr: int, nbytes: int, byte: int) -> None:
        self.check(self.lib.cuMemsetD8_v2(ptr, byte, nbytes), "cuMemsetD8")

    def synchronize(self) -> None:
        self.check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")


def descriptor(ptr: int, shape: Sequence[int]) -> ctypes.Structure:
    """A memref descriptor for a contiguous buffer at address `ptr`."""
    rank = len(shape)
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    desc: Any = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})()  # (fields made here)
    desc.allocated = desc.aligned = ptr
    desc.offset = 0
    if rank:
        strides: list[int] = []
        s = 1
        for d in reversed(shape):
            strides.append(s)
            s *= d
        desc.sizes = (ctypes.c_int64 * rank)(*shape)
        desc.strides = (ctypes.c_int64 * rank)(*reversed(strides))
    return desc


def set_default_device(device: int, directory: str | os.PathLike) -> None:
    """Makes the upstream wrappers use GPU `device`: they create their one
    context for the default device on first use, which is when a program
    library is loaded. Must run before the first program is loaded."""
    lib = ctypes.CDLL(os.path.join(directory, "libmlir_cuda_runtime.so"), mode=ctypes.RTLD_GLOBAL)
    lib.mgpuSetDefaultDevice(ctypes.c_int32(device))


class Program:
    """A loaded shared library and its entry `_mlir_ciface_<entry>`."""

    def __init__(self, path: str | os.PathLike, entry: str, device: int = 0,
                 runtime_dir: str | os.PathLike | None = None) -> None:
        self.path = os.path.abspath(path)
        if device:
            set_default_device(device, runtime_dir or os.path.dirname(self.path))
        # The library's constructor loads its kernels (mgpuModuleLoad).
        self.lib = ctypes.CDLL(self.path, mode=ctypes.RTLD_GLOBAL)
        self.fn = getattr(self.lib, f"_mlir_ciface_{entry}")
        self.fn.restype = None
        self._keep: list[ctypes.Structure] | None = None

    def bind(self, pointers: Sequence[int], shapes: Sequence[Sequence[int]]) -> list[Any]:
        """Prepares a call on device buffers (one per argument, in order)."""
        descs = [descriptor(p, s) for p, s in zip(pointers, shapes)]
        self._keep = descs
        return [ctypes.byref(d) for d in descs]

    def call(self, args: Sequence[Any]) -> None:
        self.fn(*args)

    def time_calls(self, args: Sequence[Any], repeat: int, warmup: int = 2) -> list[float]:
        """Seconds of each of `repeat` calls, after `warmup` calls."""
        for _ in range(warmup):
            self.fn(*args)
        out = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            self.fn(*args)
            out.append(time.perf_counter() - t0)
        return out

    def _control(self, name: str) -> Any:
        fn = getattr(self.lib, name, None)
        if fn is None:
            raise CudaError(f"{os.path.basename(self.path)} has no CUDA graph controls ({name}): "
                            "built with graph=false")
        return fn

    def has_graphs(self) -> bool:
        return hasattr(self.lib, "coll_set_graphs")

    def set_graphs(self, on: bool) -> None:
        """Calls as one replayed CUDA graph (True, the default) or op by op."""
        self._control("coll_set_graphs")(ctypes.c_int32(1 if on else 0))

    def set_timing(self, on: bool) -> None:
        self._control("coll_set_timing")(ctypes.c_int32(1 if on else 0))

    def device_seconds(self) -> float | None:
        """GPU seconds of the last call (set_timing(True) first); None if
        not timed."""
        fn = self._control("coll_last_device_seconds")
        fn.restype = ctypes.c_double
        t = fn()
        return None if t < 0 else t

    def graph_counts(self) -> dict[str, int]:
        """{captures, replays, direct, refused}: how the calls since load ran."""
        out = (ctypes.c_int64 * 4)()
        self._control("coll_graph_counts")(out)
        return dict(zip(("captures", "replays", "direct", "refused"), out))

    def close(self) -> None:
        """Unloads the library (its destructor unloads the kernels while the
        context is still alive, avoiding a cuModuleUnload error at exit)."""
        if self.lib is not None:
            _ctypes.dlclose(self.lib._handle)
            self.lib = self.fn = None  # type: ignore[assignment]  # closed: no call may follow
