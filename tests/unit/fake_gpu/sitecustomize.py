"""A fake GPU for bench/gpu_run.py's processes in the dry run
(tests/unit/test_gpu_run.py), loaded by Python at start-up when this folder
is on PYTHONPATH and COLL_FAKE_GPU names the bundle: torch is
tests/unit/fake_torch.py (numpy host memory), libcuda.so.1 the emulator's
driver build ($COLL_FAKE_CUDA), libmlir_cuda_runtime.so the emulator (already
in the bundle, where gpu_run.py loads it from), running kernels on the CPU."""
import ctypes
import os
import sys

if os.environ.get("COLL_FAKE_GPU"):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))  # tests/unit: fake_torch, gpu_emulator
    import fake_torch
    sys.modules["torch"] = fake_torch
    ctypes.CDLL(os.environ["COLL_FAKE_CUDA"], mode=ctypes.RTLD_GLOBAL)
    from gpu_emulator import Emulator
    _emu = Emulator(os.environ["COLL_FAKE_GPU"], build=False)
    _emu.lib.mgpuEmuReset(int(os.environ.get("COLL_FAKE_SEED", "1")), _emu._cb)
