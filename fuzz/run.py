"""Running the fuzzer's jobs and classifying their outcomes.

A job runs in a worker process that calls the tools' entry points in a
loop, its stdout/stderr captured at the file-descriptor level (MLIR prints
there directly); a worker that dies (signal) or overruns the timeout is
recorded with its input and restarted (Runner). Every input must end in
success (exit 0) or a located diagnostic with exit code 1 (classify)."""
import base64
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coll.tools import coll_build

LOCATED = re.compile(r"^\S[^\n]*?:\d+:\d+: error: ", re.M)
OUTCOMES = ("succeeded", "diagnosed", "check_failed", "unlocated", "tracebacks", "crashes", "hangs",
            "bad_exit", "partial_output")
CHECK_FAILED = re.compile(r"^\S+ +\d+ .* FAIL \([^\n]*", re.M)  # a coll-run table row (and why): the program is wrong
# A tool-level error names the file or the flag it is about.
NAMED = re.compile(r"^coll-[\w-]+: error: (?!internal error)"
                   r".*(could not|'[^']+'|--[\w-]+|\S+\.(npz|npy|mlir|so))", re.M)
USAGE = re.compile(r"^usage: (.*\n)*coll-[\w -]+: error: ", re.M)  # argparse (tools/args.py), exit 1
FAILURES = ("unlocated", "tracebacks", "crashes", "hangs", "bad_exit", "partial_output")
RESTART_EVERY = 500  # inputs per worker, to bound leaks
MEMORY_LIMIT = 4 << 30  # bytes of address space per worker


# -- worker ---------------------------------------------------------------------

def worker(result_fd: int, workdir: str) -> None:
    """Reads one JSON job per stdin line; writes one JSON result per line to
    result_fd. Output of the tool goes to workdir/output (fds 1 and 2)."""
    out = os.path.join(workdir, "output")
    results = os.fdopen(result_fd, "w")
    for line in sys.stdin:
        job = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        written = None
        try:
            _selftest(job.get("selftest"))
            rc, written = run_job(job, workdir)
        except SystemExit as e:
            rc = e.code
        except BaseException:  # noqa: BLE001 - the point is to catch anything
            traceback.print_exc()
            rc = "traceback"
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        partial = bool(rc != 0 and written and os.path.isfile(written))
        results.write(json.dumps({"rc": rc, "partial": partial}) + "\n")
        results.flush()


def run_job(job: dict[str, Any], workdir: str) -> tuple[Any, str | None]:
    """Runs one job's tool in this process, as its command line would.
    Returns (exit code, the output file it may write)."""
    src = os.path.join(workdir, "input.mlir")
    dst = {"run": "out.npz", "build": "out.txt"}.get(job.get("tool", "opt"), "result.mlir")
    dst = os.path.join(workdir, dst)
    for path in (src, dst, os.path.join(workdir, "inputs.npz")):
        if os.path.isfile(path):
            os.unlink(path)
    from ..tools import coll_gen, coll_run  # lazy: coll_run adds ~75 ms to each start of this module
    tool = job.get("tool", "opt")
    if tool == "gen":
        return _exit_code(lambda: _main(coll_gen.main, ["coll-gen"] + job["argv"])), None
    data = job["text"].encode() if "text" in job else base64.b64decode(job["data"])
    with open(src, "wb") as f:
        f.write(data)
    fs = job.get("fs")
    if fs == "missing_input":
        src = os.path.join(workdir, "no-such-input.mlir")
    elif fs == "directory_input":
        src = workdir
    elif fs == "missing_output_dir":
        dst = os.path.join(workdir, "no-such-dir", os.path.basename(dst))
    elif fs == "full_disk":
        dst = "/dev/full"
    if tool == "opt":
        from coll.tools import coll_opt  # lazy: ~20 ms of start-up
        return coll_opt.run([src, "--pass-pipeline=" + job["pipeline"], "-o", dst]), dst
    if tool == "build":
        return coll_build.main([src, f"--emit={job['emit']}", f"--strategy={job['strategy']}", "-o", dst]), dst
    argv = ["coll-run", src, "--backend=cpu", f"--strategy={job['strategy']}", "--repeat=1", "--outputs", dst]
    if "npz" in job:
        npz = os.path.join(workdir, "inputs.npz")
        with open(npz, "wb") as f:
            f.write(base64.b64decode(job["npz"]))
        argv += ["--inputs", npz]
    try:
        return _exit_code(lambda: _main(coll_run.main, argv)), dst
    finally:
        from coll.lowering import cpu  # lazy: ~120 ms of start-up
        cpu.clear_cache()  # compiled engines would pile up in the worker


def _main(main: Callable[[], Any], argv: list[str]) -> Any:
    saved = sys.argv
    sys.argv = argv
    try:
        return main()
    finally:
        sys.argv = saved


def _exit_code(fn: Callable[[], Any]) -> Any:
    try:
        rc = fn()
    except SystemExit as e:
        rc = e.code
    return 0 if rc is None else rc


def _selftest(what: str) -> None:
    """Failures on demand, so tests can check that each one is detected."""
    if what == "abort":
        os.abort()
    if what == "sleep":
        time.sleep(3600)
    if what == "raise":
        raise RuntimeError("selftest")


def _limit_memory() -> None:
    try:
        import resource  # POSIX only: its ImportError is caught
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass


class Runner:
    """One worker subprocess, restarted after a crash, a hang, or
    RESTART_EVERY inputs."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.dir = tempfile.mkdtemp(prefix="coll-fuzz-")
        self.proc: subprocess.Popen[str] | None = None
        self.done = 0

    def start(self) -> None:
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coll.fuzz.run", str(w), self.dir],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(w,), text=True, preexec_fn=_limit_memory)
        os.close(w)
        self.results = r
        self.buf = b""
        self.done = 0

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        assert self.proc.stdin is not None  # a pipe
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        os.close(self.results)
        self.proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def output(self) -> str:
        try:
            return Path(self.dir, "output").read_text(errors="replace")
        except OSError:
            return ""

    def run(self, text: str, pipeline: str, selftest: str | None = None) -> tuple[str, str]:
        """(outcome, detail) of coll-opt on `text`."""
        return self.run_job({"text": text, "pipeline": pipeline, "selftest": selftest})

    def run_job(self, job: dict[str, Any]) -> tuple[str, str]:
        """(outcome, detail) of one job (see make_job)."""
        if self.proc is None or self.done >= RESTART_EVERY:
            self.stop()
            self.start()
        self.done += 1
        proc = self.proc
        assert proc is not None and proc.stdin is not None  # started above, with a pipe
        try:
            proc.stdin.write(json.dumps(job) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            ready = select.select([self.results], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                self.stop()
                return "hangs", f"no result after {self.timeout} s"
            chunk = os.read(self.results, 65536)
            if not chunk:
                code = proc.wait()
                detail = self.output()
                self.stop()
                sig = -code if code < 0 else None
                name = signal.Signals(sig).name if sig else f"exit {code}"
                return "crashes", f"worker died ({name})\n{detail[-4000:]}"
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        result = json.loads(line)
        if result.get("partial"):
            return ("partial_output",
                    f"exit code {result['rc']} but the output file was written\n{self.output()[-4000:]}")
        return classify(result["rc"], self.output(), job.get("tool", "opt"))


def classify(rc: Any, output: str, tool: str = "opt") -> tuple[str, str]:
    if rc == "traceback" or "Traceback (most recent call last)" in output:
        return "tracebacks", output[-4000:]
    if rc == 0:
        return "succeeded", ""
    if "internal error" in output:
        return "unlocated", output[-4000:]
    failed = CHECK_FAILED.search(output) if rc == 1 and tool == "run" else None
    if failed:
        return "check_failed", failed.group()
    if rc == 1 and USAGE.search(output):
        return "diagnosed", output.strip().split("\n")[-1]  # argparse: a flag it cannot take
    if rc == 1:
        m = LOCATED.search(output) or NAMED.search(output)
        if m:
            return "diagnosed", output[m.start():].split("\n", 1)[0]
        return "unlocated", output[-4000:]
    return "bad_exit", f"exit code {rc}\n{output[-4000:]}"


if __name__ == "__main__":
    worker(int(sys.argv[1]), sys.argv[2])
