"""Just enough of torch, on numpy host memory, to run bench/gpu_run.py
against the mgpu emulator (tests only). "Device" tensors are numpy arrays;
data_ptr() is their host address, which the emulated runtime accepts.
bfloat16 is stored as uint16 bit patterns."""
import numpy as np


class _DType:
    def __init__(self, name, np_type, floating, bf16=False):
        self.name, self.np, self.is_floating_point, self.bf16 = name, np.dtype(np_type), floating, bf16

    def __repr__(self):
        return f"torch.{self.name}"


float16 = _DType("float16", np.float16, True)
bfloat16 = _DType("bfloat16", np.uint16, True, bf16=True)
float32 = _DType("float32", np.float32, True)
float64 = _DType("float64", np.float64, True)
bool = _DType("bool", np.bool_, False)  # noqa: A001 (torch's name)
int8 = _DType("int8", np.int8, False)
int16 = _DType("int16", np.int16, False)
int32 = _DType("int32", np.int32, False)
int64 = _DType("int64", np.int64, False)
uint8 = _DType("uint8", np.uint8, False)
_BY_NP = {d.np: d for d in (float16, float32, float64, bool, int8, int16, int32, int64, uint8)}


def _to_bf16(a):
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return ((bits + (0x7FFF + ((bits >> 16) & 1))) >> 16).astype(np.uint16)


def _from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class Tensor:
    def __init__(self, a, dtype=None):
        self.a = a
        self.dtype = dtype or _BY_NP[a.dtype]

    @property
    def shape(self):
        return self.a.shape

    def _values(self):
        return _from_bf16(self.a) if self.dtype.bf16 else self.a

    def data_ptr(self):
        return self.a.ctypes.data

    def __getitem__(self, index):
        return Tensor(self.a[index], self.dtype)

    def copy_(self, src):
        self.a[...] = src.a if src.dtype is self.dtype else src.to(self.dtype).a
        return self

    def __add__(self, scalar):
        return Tensor(self.a + self.a.dtype.type(scalar), self.dtype)

    def add_(self, other):
        add(self, other, out=self)
        return self

    def fill_(self, value):
        if self.dtype.bf16:
            self.a.fill(0x7FC0 if value != value else _to_bf16(np.float32(value)))
        else:
            self.a.fill(value)
        return self

    def view(self, dtype):
        return Tensor(self.a.view(dtype.np), dtype)

    def to(self, dtype):
        if dtype.bf16:
            return Tensor(_to_bf16(self._values()), dtype)
        return Tensor(self._values().astype(dtype.np), dtype)

    def float(self):
        return self.to(float32)

    def bool(self):
        return self.to(bool)

    def clone(self):
        return Tensor(self.a.copy(), self.dtype)

    def cpu(self):
        return self

    def numpy(self):
        if self.dtype.bf16:
            raise TypeError("numpy has no bfloat16: convert with .float() first")
        return self.a


def _binary(fn):
    def op(a, b, out=None):
        if a.dtype.bf16 or b.dtype.bf16:
            raise TypeError("bf16 arithmetic is not faked; compare via .float()")
        if out is None:
            return Tensor(fn(a.a, b.a))
        fn(a.a, b.a, out=out.a)
        return out
    return op


add, mul = _binary(np.add), _binary(np.multiply)
maximum, minimum = _binary(np.maximum), _binary(np.minimum)
bitwise_and, bitwise_or = _binary(np.bitwise_and), _binary(np.bitwise_or)
bitwise_xor = _binary(np.bitwise_xor)


def allclose(a, b, rtol=1e-5, atol=1e-8):
    return np.allclose(a._values(), b._values(), rtol=rtol, atol=atol)


def equal(a, b):
    return np.array_equal(a.a, b.a)


class Generator:
    def __init__(self, device=None):
        self.rng = np.random.default_rng(0)

    def manual_seed(self, seed):
        self.rng = np.random.default_rng(seed)
        return self


def _shape(shape):
    return tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)


def rand(shape, device=None, generator=None):
    return Tensor((generator or Generator()).rng.random(_shape(shape)).astype(np.float32))


def randint(low, high, shape, device=None, generator=None):
    return Tensor((generator or Generator()).rng.integers(low, high, _shape(shape)).astype(np.int64))


def _count(t):
    cuda._peak += t.a.nbytes  # "allocated": what the dry run's peak adds up
    return t


def empty(shape, dtype=float32, device=None):
    return _count(Tensor(np.empty(_shape(shape), dtype.np), dtype))


def empty_like(t):
    return _count(Tensor(np.empty_like(t.a), t.dtype))


class cuda:  # noqa: N801 (torch's name)
    @staticmethod
    def is_available():
        return True

    @staticmethod
    def init():
        pass

    @staticmethod
    def get_device_name(index=0):
        return "host emulator (fake torch)"

    @staticmethod
    def synchronize():
        """Raises as torch does once a kernel faulted (the emulator's
        mgpuEmuFaulted, where it is loaded)."""
        import ctypes
        faulted = getattr(ctypes.CDLL(None), "mgpuEmuFaulted", None)
        if faulted is not None and faulted():
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

    @staticmethod
    def empty_cache():
        pass

    _peak = 0

    @staticmethod
    def reset_peak_memory_stats():
        cuda._peak = 0

    @staticmethod
    def max_memory_allocated():
        return cuda._peak

    class Event:
        """Host time stands in for the GPU's: work is synchronous here."""
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self, stream=None):
            import time
            self.t = time.perf_counter()

        def synchronize(self):
            pass

        def elapsed_time(self, end):
            return (end.t - self.t) * 1e3  # milliseconds, as torch
