"""The fuzzer's jobs: one input for one tool, as a dict the worker runs
(fuzz/run.py): the tool, its mutated module (fuzz/generate.py) or coll-gen
flags, an npz input for coll-run, a file-system error. Job i depends only
on (seed, i)."""
import base64
import io
import json
import pickle
import random
import re
import zipfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from coll.ir import KINDS
from coll.ir.types import ELEMENT_TYPES

from . import classes
from .generate import (
    INTERESTING,
    MUTATORS,
    STRATEGIES,
    STRUCTURED,
    WEIGHTS,
    corrupt_bytes,
    make_input,
    parse_or_none,
    random_pipeline,
)

TOOLS = ("opt", "run", "build", "gen")
TOOL_WEIGHTS = (8, 2, 2, 1)


# -- npz inputs for coll-run ----------------------------------------------------

def _npz(arrays: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def npz_input(text: str, rng: random.Random) -> tuple[bytes, str]:
    """(npz bytes, what) for `text`'s problem: valid, or corrupted."""
    from coll.execution.check import describe, make_inputs  # lazy: ~60 ms of start-up (fuzz/run.py's workers)
    problem, parsed = None, parse_or_none(text)  # never parse a crashing text here
    if parsed is not None:
        with parsed[0]:
            try:
                problem = describe(parsed[1])
            except Exception:  # noqa: BLE001 - any module coll-run would refuse anyway
                problem = None
    arrays = {}
    # (describe reads an unverified module: an SPMD function may claim 2^31
    # ranks, which coll-run's verifier refuses before making any input)
    if problem is not None and max(problem.n_inputs, 1) * np.prod(problem.shape, dtype=object) <= 1 << 16:
        arrays = {f"x{i}": a for i, a in enumerate(make_inputs(problem, rng.randrange(100)))}
    what = rng.choice(("valid", "truncated", "flipped", "object", "pickle", "npy", "lying", "dtype",
                       "missing", "extra", "huge", "fortran", "empty", "bomb", "garbage", "nan"))
    if not arrays:
        arrays = {"x0": np.zeros(4, np.float32)}
    data = _npz(arrays)
    first = sorted(arrays)[0]
    if what == "truncated":
        data = data[:rng.randrange(len(data))]
    elif what == "flipped":
        b = bytearray(data)
        for _ in range(rng.choice((1, 3, 10))):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        data = bytes(b)
    elif what == "object":
        arrays[first] = np.array([None] * max(arrays[first].size, 1), dtype=object)
        data = _npz(arrays)
    elif what == "pickle":
        data = pickle.dumps(arrays)
    elif what == "npy":
        buf = io.BytesIO()
        np.save(buf, arrays[first])
        data = buf.getvalue()
    elif what in ("lying", "huge", "fortran", "bomb", "garbage"):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name, a in arrays.items():
                buf = io.BytesIO()
                np.lib.format.write_array(buf, a)
                raw = buf.getvalue()
                if name == first:
                    if what == "lying":
                        raw = raw[:max(len(raw) - rng.choice((1, 4, 16)), 10)]
                    elif what == "huge":
                        raw = re.sub(rb"'shape': \([^)]*\)", b"'shape': (99999999999, 99999999)", raw, count=1)
                    elif what == "fortran":
                        raw = raw.replace(b"'fortran_order': False", b"'fortran_order': True ")
                    elif what == "bomb":
                        raw += b"\0" * (8 << 20)
                    else:
                        raw = bytes(rng.randrange(256) for _ in range(rng.choice((0, 6, 64))))
                z.writestr(name + ".npy", raw)
        data = out.getvalue()
    elif what == "dtype":
        arrays[first] = arrays[first].astype(np.float64 if arrays[first].dtype != np.float64 else np.int8)
        data = _npz(arrays)
    elif what == "missing":
        arrays.pop(first)
        data = _npz(arrays)
    elif what == "extra":
        arrays["y9"] = np.zeros(3)
        data = _npz(arrays)
    elif what == "empty":
        data = b""
    elif what == "nan" and arrays[first].dtype.kind == "f" and arrays[first].size:
        arrays[first] = arrays[first].copy()
        arrays[first].flat[0] = rng.choice((np.nan, np.inf, -np.inf, -0.0))
        data = _npz(arrays)
    return data, what


# -- coll-gen's flags -------------------------------------------------------------

def gen_argv(rng: random.Random) -> list[str]:
    argv = ["all-reduce", "--devices", rng.choice(INTERESTING + ("5", "8"))]
    if rng.random() < 0.8:
        argv += ["--shape", rng.choice(("4x100", "", "scalar", "0", "7", "3x0x2", "99999999999",
                                        "99999999999x99999999999", "4x-1", "x", "1e3", "4X4", " 4",
                                        "18446744073709551616", "2x" * 50 + "2"))]
    if rng.random() < 0.5:
        argv += ["--dtype", rng.choice(ELEMENT_TYPES)]
    if rng.random() < 0.5:
        argv += ["--kind", rng.choice(tuple(KINDS))]
    for flag in ("--to-device", "--threshold"):
        if rng.random() < 0.3:
            argv += [flag, rng.choice(INTERESTING)]
    if rng.random() < 0.3:
        argv += ["--strategy", rng.choice(STRATEGIES)]
    if rng.random() < 0.2:
        argv += ["--name", rng.choice(("f", "", "a\"b", "1x", "_ok", "a b", "é", "x" * 300))]
    return argv


# -- jobs: one input for one tool -------------------------------------------------

FS_ERRORS = ("missing_input", "directory_input", "missing_output_dir", "full_disk")


def make_job(seeds: Sequence[str], seed: int, i: int, tools: Sequence[str] = TOOLS) -> dict[str, Any]:
    """The job of input i (a dict the worker runs): deterministic in (seed, i)."""
    rng = random.Random(f"{seed}:{i}:tools")
    weights = [w for t, w in zip(TOOLS, TOOL_WEIGHTS) if t in tools]
    tool = rng.choices([t for t in TOOLS if t in tools], weights)[0]
    if tool == "gen":
        return {"tool": "gen", "argv": gen_argv(rng)}
    text, pipeline = make_input(seeds, seed, i)
    r = rng.random()
    category = "text"
    if r < 0.3:
        category = "structured"
        text = rng.choice(seeds)
        for _ in range(rng.choice((1, 1, 2))):
            text = rng.choice(STRUCTURED)(text, rng)
    elif r < 0.5:  # the classes of issue 23: generated, sometimes mutated once more
        gen = rng.choice(classes.GENERATORS)
        category = "class:" + gen.__name__
        text = gen(rng)
        if rng.random() < 0.3:
            text = rng.choices(MUTATORS, WEIGHTS)[0](text, rng)
        pipeline = random_pipeline(rng, text)
    job = {"tool": tool, "pipeline": pipeline, "category": category,
           "data": base64.b64encode(text.encode()).decode()}
    if rng.random() < 0.1:
        job["category"] = "bytes"
        job["data"] = base64.b64encode(corrupt_bytes(text.encode(), rng)).decode()
    if rng.random() < 0.04:
        job["category"] = "fs"
        job["fs"] = rng.choice(FS_ERRORS)
    if tool == "run":
        job["strategy"] = rng.choice(STRATEGIES)
        if rng.random() < 0.5:
            data, what = npz_input(text, rng)
            job["npz"] = base64.b64encode(data).decode()
            job["category"] = "npz:" + what
    if tool == "build":
        job["emit"] = rng.choice(("gpu", "gpu", "llvm", "ptx", "llvmir"))
        job["strategy"] = rng.choice(STRATEGIES)
    return job


def describe_job(job: dict[str, Any]) -> tuple[str, str]:
    """(input as text, the rest of the job in words)."""
    if job["tool"] == "gen":
        return " ".join(job["argv"]), "coll-gen " + " ".join(job["argv"])
    text = base64.b64decode(job["data"]).decode("utf-8", "replace")
    rest = {k: v for k, v in job.items() if k not in ("data", "npz")}
    return text, json.dumps(rest)
