"""coll-opt and coll-build with files as users expect: outputs get the mode
a plain open() gives (an existing file keeps its own), symlinks are written
through, nothing is written on failure, and any input bytes end in output
or a located diagnostic with exit 1, never a traceback."""
import os
import random
import re
import stat
import subprocess
import sys

import pytest

BIN = os.path.dirname(sys.executable)
GOOD = """func.func @f(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
"""
BAD = GOOD.replace('kind = "sum"', 'kind = "mean"')
LOCATED = re.compile(r"^\S+:\d+:\d+: error: ", re.M)


def _run(tool, *args, umask=0o022, stdin=None):
    return subprocess.run([os.path.join(BIN, tool), *map(str, args)], capture_output=True,
                          input=stdin, preexec_fn=lambda: os.umask(umask))


def _mode(p):
    return stat.S_IMODE(os.lstat(p).st_mode)


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "in.mlir"
    p.write_text(GOOD)
    return p


def _ok(r):
    assert r.returncode == 0, r.stderr.decode()
    assert b"Traceback" not in r.stderr


def _fails_cleanly(r, tool="coll-opt"):
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "Traceback" not in err
    return err


# --- modes, symlinks, all or nothing ---------------------------------------

@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_output_mode_is_what_open_gives(tmp_path, src, umask, mode):
    _ok(_run("coll-opt", src, "-o", tmp_path / "out.mlir", umask=umask))
    assert _mode(tmp_path / "out.mlir") == mode


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755])
def test_existing_output_keeps_its_mode(tmp_path, src, mode):
    out = tmp_path / "out.mlir"
    out.write_text("old")
    os.chmod(out, mode)
    _ok(_run("coll-opt", src, "-o", out))
    assert _mode(out) == mode and "func.func @f" in out.read_text()


def test_symlinked_output_is_written_through(tmp_path, src):
    (tmp_path / "real.mlir").write_text("old")
    link = tmp_path / "link.mlir"
    link.symlink_to("real.mlir")
    _ok(_run("coll-opt", src, "-o", link))
    assert link.is_symlink() and os.readlink(link) == "real.mlir"
    assert "func.func @f" in (tmp_path / "real.mlir").read_text()


def test_failure_writes_nothing_and_leaves_no_temp_file(tmp_path):
    (tmp_path / "in.mlir").write_text(BAD)
    out = tmp_path / "out.mlir"
    out.write_text("previous")
    err = _fails_cleanly(_run("coll-opt", tmp_path / "in.mlir", "-o", out))
    assert LOCATED.search(err)
    assert out.read_text() == "previous"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["in.mlir", "out.mlir"]


# --- file errors -------------------------------------------------------------

def test_missing_input(tmp_path):
    err = _fails_cleanly(_run("coll-opt", tmp_path / "nope.mlir"))
    assert err == f"coll-opt: error: could not open input file '{tmp_path / 'nope.mlir'}': No such file or directory\n"


def test_directory_as_input(tmp_path):
    err = _fails_cleanly(_run("coll-opt", tmp_path))
    assert err == f"coll-opt: error: could not open input file '{tmp_path}': Is a directory\n"


def test_missing_output_directory(tmp_path, src):
    out = tmp_path / "no" / "out.mlir"
    err = _fails_cleanly(_run("coll-opt", src, "-o", out))
    assert err == f"coll-opt: error: could not write '{out}': No such file or directory\n"
    assert not (tmp_path / "no").exists()


def test_directory_as_output(tmp_path, src):
    err = _fails_cleanly(_run("coll-opt", src, "-o", tmp_path))
    assert err == f"coll-opt: error: could not write '{tmp_path}': Is a directory\n"


# --- any bytes in, output or a located diagnostic out ------------------------

def test_non_utf8_bytes_in_a_comment_are_fine(tmp_path):
    p = tmp_path / "in.mlir"
    p.write_bytes(b"// caf\xe9 \xff\xfe\n" + GOOD.encode())
    r = _run("coll-opt", p, "--coll-lower-all-reduce")
    _ok(r)
    assert b'"coll.copy"' in r.stdout


def test_non_utf8_bytes_in_code_are_located(tmp_path):
    p = tmp_path / "in.mlir"
    p.write_bytes(GOOD.encode().replace(b"  return", b"  \xff\xfe return"))
    err = _fails_cleanly(_run("coll-opt", p, "-o", tmp_path / "out.mlir"))
    assert f"{p}:4:3: error: unexpected character" in err
    assert not (tmp_path / "out.mlir").exists()


def test_non_utf8_bytes_on_stdin_are_located():
    err = _fails_cleanly(_run("coll-opt", stdin=b"\xff\xfe garbage\n"))
    assert err.startswith("<stdin>:1:1: error: unexpected character")


def test_binary_garbage_is_located(tmp_path):
    p = tmp_path / "in.mlir"
    p.write_bytes(bytes(range(256)) * 4)
    err = _fails_cleanly(_run("coll-opt", p))
    assert LOCATED.search(err), err


def test_truncated_bytecode_is_located(tmp_path, src):
    bc = tmp_path / "in.mlirbc"
    _ok(_run("coll-opt", src, "--emit-bytecode", "-o", bc))
    data = bc.read_bytes()
    assert data.startswith(b"ML\xefR")
    bc.write_bytes(data[: len(data) // 2])
    err = _fails_cleanly(_run("coll-opt", bc))
    assert LOCATED.search(err), err


def test_bytecode_round_trip_keeps_the_module(tmp_path, src):
    bc = tmp_path / "in.mlirbc"
    _ok(_run("coll-opt", src, "--emit-bytecode", "-o", bc))
    assert _mode(bc) == 0o644
    text = _run("coll-opt", src).stdout
    back = _run("coll-opt", bc)
    _ok(back)
    assert back.stdout == text


@pytest.mark.parametrize("seed", range(12))
def test_random_bytes_never_crash(tmp_path, seed):
    rng = random.Random(seed)
    data = GOOD.encode()
    cut = rng.randrange(len(data))
    # Valid text up to a point, then noise: reaches past the lexer's first byte.
    p = tmp_path / "in.mlir"
    p.write_bytes(data[:cut] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))))
    r = _run("coll-opt", p, "-o", tmp_path / "out.mlir")
    err = r.stderr.decode()
    assert r.returncode in (0, 1) and "Traceback" not in err
    if r.returncode:
        assert LOCATED.search(err), err
        assert not (tmp_path / "out.mlir").exists()


# --- command line ------------------------------------------------------------

@pytest.mark.parametrize("flag", ["--mlir-bogus", "-bogus", "--no-such-pass", "-mlir-print-ir-afterall"])
def test_unknown_flags_exit_1(src, flag):
    err = _fails_cleanly(_run("coll-opt", src, flag))
    assert err.startswith(f"coll-opt: Unknown command line argument '{flag}'.  Try: 'coll-opt --help'")


def test_single_dash_spellings(tmp_path, src):
    out = tmp_path / "out.mlir"
    _ok(_run("coll-opt", src, "-pass-pipeline=builtin.module(coll-lower-all-reduce,cse)", "-o", out))
    two = _run("coll-opt", src, "--pass-pipeline=builtin.module(coll-lower-all-reduce,cse)")
    assert out.read_bytes() == two.stdout


# --- coll-build --------------------------------------------------------------

def test_coll_build_output_mode_symlink_and_existing_mode(tmp_path, src):
    out = tmp_path / "out.mlir"
    _ok(_run("coll-build", src, "--emit=gpu", "-o", out))
    assert _mode(out) == 0o644
    os.chmod(out, 0o600)
    link = tmp_path / "link.mlir"
    link.symlink_to("out.mlir")
    _ok(_run("coll-build", src, "--emit=gpu", "-o", link))
    assert link.is_symlink() and _mode(out) == 0o600 and "gpu.module" in out.read_text()
    assert sorted(f.name for f in tmp_path.iterdir()) == ["in.mlir", "link.mlir", "out.mlir"]


def test_coll_build_library_is_atomic(tmp_path, src):
    lib = tmp_path / "lib.so"
    _ok(_run("coll-build", src, "-o", lib))
    assert lib.read_bytes().startswith(b"\x7fELF")
    before = lib.read_bytes()
    (tmp_path / "bad.mlir").write_text(BAD)
    err = _fails_cleanly(_run("coll-build", tmp_path / "bad.mlir", "-o", lib))
    assert LOCATED.search(err), err
    assert lib.read_bytes() == before
    assert sorted(f.name for f in tmp_path.iterdir()) == ["bad.mlir", "in.mlir", "lib.so"]


@pytest.mark.parametrize("case", ["missing", "directory", "outdir", "non-utf8", "chip", "chip-name"])
def test_coll_build_errors(tmp_path, src, case):
    args = {
        "missing": [tmp_path / "nope.mlir", "--emit=gpu"],
        "directory": [tmp_path, "--emit=gpu"],
        "outdir": [src, "--emit=gpu", "-o", tmp_path / "no" / "out.mlir"],
        "non-utf8": [tmp_path / "bin.mlir", "--emit=gpu"],
        "chip": [src, "--emit=gpu", "--chip=sm_91"],
        "chip-name": [src, "--emit=gpu", "--chip=hopper"],
    }[case]
    (tmp_path / "bin.mlir").write_bytes(b"\xff\xfe\x00garbage")
    err = _fails_cleanly(_run("coll-build", *args))
    expected = {
        "missing": f"coll-build: error: could not open input file '{tmp_path / 'nope.mlir'}': No such file or directory\n",
        "directory": f"coll-build: error: could not open input file '{tmp_path}': Is a directory\n",
        "outdir": f"coll-build: error: could not write '{tmp_path / 'no' / 'out.mlir'}': No such file or directory\n",
        "non-utf8": f"{tmp_path / 'bin.mlir'}:1:1: error: unexpected character\n",
        "chip": "coll-build: error: --chip: the NVPTX backend does not know 'sm_91'; it knows: sm_20, ",
        "chip-name": "coll-build: error: --chip must be an NVPTX chip name such as sm_90, got 'hopper'\n",
    }[case]
    assert err.startswith(expected) if case == "chip" else err == expected
    if case == "chip":
        assert "sm_90, sm_90a, sm_100" in err
