"""coll-build --emit=mpi-exe as a deliverable, under a plain mpirun as a
cluster user runs it (lowering/mpi/exe.py has the contract): the files the
note describes are the files it reads (in-place inputs too), --repeat runs
on the inputs as read, a missing, short, .npy or non-regular input file on
one rank stops every rank before anything runs, an output that one rank
cannot write leaves no output file on any rank, ranks in separate working
directories, usage errors. Each mpirun is about 1-2 s on 2 cores."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from coll.lowering import mpi

OK, WHY = mpi.available()
pytestmark = pytest.mark.skipif(not OK, reason=f"MPI back end not available: {WHY}")
TIMEOUT = 120


def _gen(*args):
    return subprocess.run([sys.executable, "-m", "coll.tools.coll_gen", *args], capture_output=True, text=True,
                          check=True).stdout


def _build(tmp_path, text, name="prog", *extra):
    src, exe = tmp_path / f"{name}.mlir", tmp_path / name
    src.write_text(text)
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_build", str(src), "--emit=mpi-exe", "-o", str(exe),
                        *extra], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return exe, r.stderr


def _mpirun(n, *args, cwd=None):
    from coll.lowering.mpi.toolchain import find
    r = subprocess.run(mpi.mpirun_command(find(), n) + [str(a) for a in args], capture_output=True, text=True,
                       timeout=TIMEOUT, cwd=cwd, stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout + r.stderr


def _note_bytes(note):
    """{rank: (input bytes, output bytes)} as the note says."""
    return {int(m.group(1)): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"rank (\d+): in \[[^\]]*\] \((\d+) bytes\) out \[[^\]]*\] \((\d+) bytes\)", note)}


@pytest.fixture(scope="module")
def in_place(tmp_path_factory):
    """An in-place all_reduce of 3 x 1000xi32 (the output is the input)."""
    tmp = tmp_path_factory.mktemp("inplace")
    exe, note = _build(tmp, _gen("all-reduce", "--devices", "3", "--shape", "1000", "--dtype", "i32",
                                 "--in-place"))
    return tmp, exe, note


def test_in_place_inputs_are_in_the_note_and_repeat_runs_on_the_inputs_as_read(in_place):
    # Found by an outside attack: the note listed no input for an in-place
    # all_reduce (the program read one anyway), and --repeat 3 wrote the
    # 4-fold sum.
    tmp, exe, note = in_place
    assert "rank 0: in [#0 1000xi32] (4000 bytes) out [#0 1000xi32] (4000 bytes)" in note, note
    # `PROG --layout` prints the same lines as the note (one FileLayout).
    layout = subprocess.run([str(exe), "--layout"], capture_output=True, text=True, check=True).stdout
    assert layout.splitlines() == [l.split(": note: ", 1)[-1] for l in note.strip().splitlines()]
    xs = [np.arange(1000, dtype=np.int32) * (r + 2) - 5 for r in range(3)]
    for r, (nin, _) in _note_bytes(note).items():  # laid out as the note says
        assert xs[r].nbytes == nin
        xs[r].tofile(tmp / f"x{r}.bin")
    for repeat in ("0", "3"):
        rc, out = _mpirun(3, exe, "--in", tmp / "x", "--out", tmp / f"y{repeat}_", "--repeat", repeat)
        assert rc == 0, out
        for r in range(3):
            assert np.array_equal(np.fromfile(tmp / f"y{repeat}_{r}.bin", np.int32), sum(xs)), (repeat, r)
    # The same prefix in and out: the result replaces the input file.
    rc, out = _mpirun(3, exe, "--in", tmp / "x", "--out", tmp / "x", "--repeat", "2")
    assert rc == 0 and np.array_equal(np.fromfile(tmp / "x0.bin", np.int32), sum(xs)), out


@pytest.mark.parametrize("fault", ["missing", "short", "long", "npy", "directory"])
def test_a_bad_input_file_on_one_rank_stops_every_rank_before_anything_runs(in_place, fault, tmp_path):
    # Found by an outside attack: when one rank could not read its file the
    # others still ran and wrote their outputs (exit 1, partial outputs).
    _, exe, _ = in_place
    x = np.arange(1000, dtype=np.int32)
    for r in range(3):
        x.tofile(tmp_path / f"in{r}.bin")
    bad = tmp_path / "in1.bin"
    os.remove(bad)
    if fault == "short":
        x[:999].tofile(bad)
    elif fault == "long":
        x.astype(np.int64).tofile(bad)  # written as the wrong element type
    elif fault == "npy":
        with open(bad, "wb") as f:
            np.save(f, x)
    elif fault == "directory":
        os.mkdir(bad)
    (tmp_path / "out").mkdir()
    rc, out = _mpirun(3, exe, "--in", tmp_path / "in", "--out", tmp_path / "out" / "y", "--repeat", "1")
    assert rc == 1, out
    why = {"missing": "cannot read .*in1.bin: No such file", "short": r"in1.bin holds 3996 bytes; expected exactly 4000",
           "long": r"in1.bin holds 8000 bytes; expected exactly 4000", "npy": r"in1.bin is a .npy file",
           "directory": r"in1.bin is not a regular file"}[fault]
    assert re.search(r"rank 1: error: .*" + why, out), out
    assert "error: 1 rank(s) could not read their inputs (see above): nothing was run, no file was written" in out
    assert "slowest of" not in out  # nothing was timed: nothing ran
    assert os.listdir(tmp_path / "out") == []


def test_ranks_in_separate_directories_and_an_output_one_rank_cannot_write(tmp_path):
    # Each rank in its own working directory (MPMD syntax), relative
    # prefixes, as on a cluster without a shared file system. A broadcast:
    # only the root reads, the others open no input file. Then rank 1's
    # directory has no folder for its output: no rank leaves an output
    # file, nor a temporary one.
    from coll.lowering.mpi.toolchain import find
    exe, note = _build(tmp_path, _gen("broadcast", "--devices", "3", "--shape", "4", "--dtype", "f64",
                                      "--root", "1"))
    sizes = _note_bytes(note)
    assert [sizes[r] for r in range(3)] == [(0, 32), (32, 32), (0, 32)], note
    dirs = [tmp_path / f"d{r}" for r in range(3)]
    for d in dirs:
        (d / "res").mkdir(parents=True)
    x = np.array([1.5, -2, 3e300, np.inf])
    x.tofile(dirs[1] / "in1.bin")
    base = mpi.mpirun_command(find(), 3)[:-2]  # mpirun and its options, without -n

    def mpmd(out):
        cmd = list(base)
        for r, d in enumerate(dirs):
            cmd += (([":"] if r else []) + ["-n", "1", "-wdir", str(d), str(exe), "--in", "in", "--out", out])
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        return r.returncode, r.stdout + r.stderr

    rc, out = mpmd("res/y")
    assert rc == 0, out
    for r, d in enumerate(dirs):
        assert np.array_equal(np.fromfile(d / "res" / f"y{r}.bin"), x), r
        os.remove(d / "res" / f"y{r}.bin")
    os.rmdir(dirs[1] / "res")
    rc, out = mpmd("res/y")
    assert rc == 1 and re.search(r"rank 1: error: cannot write res/y1.bin.coll-tmp-\d+", out), out
    # Found out before the run (its temporary file is made first).
    assert "error: 1 rank(s) could not write their outputs (see above): nothing was run, no file was written" in out
    assert [os.listdir(d / "res") for d in (dirs[0], dirs[2])] == [[], []]


@pytest.mark.parametrize("args, message", [
    (["--bogus"], "unknown argument '--bogus'"),
    (["--repeat"], "--repeat needs a value"),
    (["--repeat", "-1"], "--repeat takes an integer from 0 to 1000000000, got '-1'"),
    (["--repeat", "3x"], "--repeat takes an integer from 0 to 1000000000, got '3x'"),
    (["--out", ""], "--out needs a non-empty value"),
])
def test_usage_errors_exit_2_before_anything_runs(in_place, args, message, tmp_path):
    _, exe, _ = in_place
    rc, out = _mpirun(3, exe, *args, cwd=tmp_path)
    assert rc == 2 and f"error: {message}" in out and "usage: mpirun -n 3" in out, out
    assert out.count(f"error: {message}") == 1  # said once, by rank 0
    assert os.listdir(tmp_path) == []
    r = subprocess.run([str(exe), "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "exit status: 0 ran; 1 nothing was written" in r.stdout


def test_an_argument_with_a_static_strided_layout_is_refused_located(tmp_path):
    # The main allocates each argument as a dense buffer of its shape: a
    # window of a larger buffer would be read out of bounds.
    t = "memref<4xf32, strided<[1], offset: 4>>"
    src, exe = tmp_path / "w.mlir", tmp_path / "w"
    src.write_text(f"""// a window
func.func @f(%x0: {t}, %x1: {t}) attributes {{llvm.emit_c_interface}} {{
  %t = "coll.all_reduce"(%x0, %x1, %x0, %x1) {{devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}} : ({t}, {t}, {t}, {t}) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}}
""")
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_build", str(src), "--emit=mpi-exe", "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and not exe.exists(), r.stderr
    assert r.stderr.startswith(f"{src}:2:1: error: mpi-exe takes arguments with the identity layout; argument 0 of "
                               "each rank is memref<4xf32> with the static layout offset 4, strides [1]"), r.stderr


def _mpmd(exe, dirs, args_of, user=None):
    """One rank per directory (MPMD syntax), rank r's arguments args_of(r);
    `user`: as that user (setpriv), e.g. one that cannot replace a file."""
    from coll.lowering.mpi.toolchain import find
    base = mpi.mpirun_command(find(), len(dirs))[:-2]
    if user is not None:
        base = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "env", "HOME=/tmp"] + \
            [a for a in base if a != "--allow-run-as-root"]
    cmd = list(base)
    for r, d in enumerate(dirs):
        cmd += ([":"] if r else []) + ["-n", "1", "-wdir", str(d), str(exe), *args_of(r)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout + r.stderr


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """An in-place all_reduce of 2 x 4xf32, and a directory per rank with its input."""
    tmp = tmp_path_factory.mktemp("pair")
    exe, _ = _build(tmp, _gen("all-reduce", "--devices", "2", "--shape", "4", "--dtype", "f32", "--in-place"))
    return exe


def _dirs(root, n=2):
    dirs = [root / f"d{r}" for r in range(n)]
    for r, d in enumerate(dirs):
        d.mkdir()
        (np.arange(4, dtype=np.float32) * (r + 1)).tofile(d / f"in{r}.bin")
    return dirs


def test_the_ranks_must_be_given_the_same_arguments(pair, tmp_path):
    # Found by an outside attack: --in on rank 0 alone ran (rank 1 took the
    # default inputs) and exited 0; another --repeat per rank hung.
    dirs = _dirs(tmp_path)
    for args_of in (lambda r: ["--in", "in"] if r == 0 else [],
                    lambda r: ["--in", "in", "--repeat", str(2 + 3 * r)],
                    lambda r: ["--in", "in"] + (["--out", "out"] if r == 1 else [])):
        rc, out = _mpmd(pair, dirs, args_of)
        assert rc == 2 and "error: the ranks were given different arguments" in out, out
        assert sorted(os.listdir(dirs[0]) + os.listdir(dirs[1])) == ["in0.bin", "in1.bin"], out


def test_a_usage_error_on_one_rank_is_said_by_that_rank(pair, tmp_path):
    # Found by an outside attack: only rank 0 said usage errors, so one on
    # rank 1 alone exited 2 with no message.
    dirs = _dirs(tmp_path)
    rc, out = _mpmd(pair, dirs, lambda r: ["--repeat", "x"] if r == 1 else [])
    assert rc == 2 and "rank 1: " in out and "error: --repeat takes an integer from 0 to 1000000000, got 'x'" in out, out


def test_i1_inputs_hold_0_or_1(tmp_path):
    # Found by an outside attack: bytes 02 and ff in an i1 file ran (and an
    # xor wrote bytes that are no booleans).
    exe, _ = _build(tmp_path, _gen("all-reduce", "--devices", "2", "--shape", "4", "--dtype", "i1", "--kind", "xor"))
    dirs = _dirs(tmp_path)
    np.array([1, 0, 1, 1], np.uint8).tofile(dirs[0] / "in0.bin")
    np.array([0, 1, 0x02, 1], np.uint8).tofile(dirs[1] / "in1.bin")
    rc, out = _mpmd(exe, dirs, lambda r: ["--in", "in", "--out", "out"])
    assert rc == 1 and "rank 1: error: in1.bin holds byte 0x02 at offset 2, in an i1 argument; expected 0 or 1" in out
    assert "out0.bin" not in os.listdir(dirs[0]), out


def test_an_output_path_that_is_no_file_stops_every_rank_before_the_run(pair, tmp_path):
    dirs = _dirs(tmp_path)
    (dirs[1] / "out1.bin").mkdir()
    rc, out = _mpmd(pair, dirs, lambda r: ["--in", "in", "--out", "out", "--repeat", "1"])
    assert rc == 1 and "rank 1: error: out1.bin exists and is not a regular file" in out, out
    assert "slowest of" not in out and os.listdir(dirs[0]) == ["in0.bin"], out


def test_an_existing_output_keeps_its_mode_and_a_link_stays_a_link(pair, tmp_path):
    # coll-opt and coll-build write through a link and keep a file's mode: so does mpi-exe.
    dirs = _dirs(tmp_path)
    (dirs[0] / "out0.bin").write_bytes(b"old")
    os.chmod(dirs[0] / "out0.bin", 0o600)
    (tmp_path / "shared").mkdir()
    os.symlink(tmp_path / "shared" / "res1.bin", dirs[1] / "out1.bin")
    rc, out = _mpmd(pair, dirs, lambda r: ["--in", "in", "--out", "out"])
    assert rc == 0, out
    want = np.arange(4, dtype=np.float32) * 3
    assert np.array_equal(np.fromfile(dirs[0] / "out0.bin", np.float32), want)
    assert os.stat(dirs[0] / "out0.bin").st_mode & 0o777 == 0o600
    assert os.path.islink(dirs[1] / "out1.bin")
    assert np.array_equal(np.fromfile(tmp_path / "shared" / "res1.bin", np.float32), want)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root to run the ranks as another user (setpriv)")
def test_an_output_one_rank_cannot_replace_leaves_every_output_as_it_was():
    # Found by an outside attack: when one rank could not rename its file
    # into place (a sticky directory holding another user's old output),
    # the other ranks' new files stayed, and their old ones were lost.
    root = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        os.chmod(root, 0o755)
        exe = root / "ip"
        shutil.copy(_build(root, _gen("all-reduce", "--devices", "2", "--shape", "4", "--dtype", "f32",
                                      "--in-place"), "prog")[0], exe)
        dirs = _dirs(root)
        os.chmod(dirs[0], 0o777)
        os.chmod(dirs[1], 0o1777)  # sticky: nobody cannot move root's file
        (dirs[0] / "out0.bin").write_bytes(b"STALE")
        os.chmod(dirs[0] / "out0.bin", 0o666)
        (dirs[1] / "out1.bin").write_bytes(b"old")
        for d in dirs:
            for f in d.iterdir():
                os.chmod(f, os.stat(f).st_mode | 0o444)
        rc, out = _mpmd(exe, dirs, lambda r: ["--in", "in", "--out", "out"], user=65534)
        assert rc == 1 and "rank 1: error: cannot replace out1.bin: Operation not permitted" in out, out
        assert "every output file is as it was" in out
        assert (dirs[0] / "out0.bin").read_bytes() == b"STALE" and (dirs[1] / "out1.bin").read_bytes() == b"old"
        assert sorted(os.listdir(dirs[0])) == ["in0.bin", "out0.bin"], os.listdir(dirs[0])
    finally:
        shutil.rmtree(root)


def test_in_for_a_program_that_reads_no_file_is_a_usage_error(tmp_path):
    # Found by an outside attack: a per-rank program in place (coll-to-mpi's
    # output) reads no file, and --in was ignored silently (zeros out, exit 0).
    src = tmp_path / "g.mlir"
    src.write_text(_gen("all-reduce", "--devices", "2", "--shape", "4", "--dtype", "f32", "--in-place"))
    per_rank = subprocess.run([sys.executable, "-m", "coll.tools.coll_opt", str(src), "--coll-lower-collectives",
                               "--coll-to-mpi"], capture_output=True, text=True, check=True).stdout
    exe, note = _build(tmp_path, per_rank, "pr")
    assert "rank 0: in [] (0 bytes)" in note, note
    rc, out = _mpirun(2, exe, "--in", tmp_path / "x", cwd=tmp_path)
    assert rc == 2 and "error: --in " in out and "this program reads no input file" in out, out
    assert out.count("this program reads no input file") == 1


def test_an_mpi_exe_is_built_for_any_node_and_a_library_for_this_host(tmp_path, monkeypatch):
    """An mpi-exe is copied to a cluster: opt and llc target the generic CPU
    (a newer builder's instructions would fault on older ranks); a library
    run here (coll-run's mpi back end) targets this host; COLL_MPI_CPU
    names the CPU of either."""
    from coll.ir import make_context
    from coll.ir.generate import collective_module
    from coll.lowering.mpi import toolchain
    from coll.tools import coll_build
    seen = []
    real = toolchain._run

    def record(cmd, *a, **k):
        seen.extend(c for c in cmd if str(c).startswith("-mcpu="))
        return real(cmd, *a, **k)
    monkeypatch.setattr(toolchain, "_run", record)
    monkeypatch.delenv("COLL_MPI_CPU", raising=False)
    with make_context():
        text = collective_module("all_reduce", 2, [8], "f32")
    src = tmp_path / "p.mlir"
    src.write_text(text)
    with pytest.raises(SystemExit) as done:
        coll_build.main([str(src), "--emit=mpi-exe", "-o", str(tmp_path / "p")])
    assert done.value.code == 0 and seen[-2:] == ["-mcpu=generic"] * 2  # (the executable's: after the library's)
    seen.clear()
    mpi.compile(text)
    assert seen == ["-mcpu=native"] * 2
    seen.clear()
    monkeypatch.setenv("COLL_MPI_CPU", "x86-64-v2")
    with pytest.raises(SystemExit) as done:
        coll_build.main([str(src), "--emit=mpi-exe", "-o", str(tmp_path / "q")])
    assert done.value.code == 0 and set(seen) == {"-mcpu=x86-64-v2"}
