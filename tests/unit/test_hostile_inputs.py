"""No crash, no traceback, on any input (issue 10, item 4): every tool ends
bad input in a located diagnostic and exit 1, and writes no output file.
Each case asserts the exact diagnostic."""
import io
import pickle
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import mpi

MODULES = {"opt": "coll.tools.coll_opt", "build": "coll.tools.coll_build",
           "run": "coll.tools.coll_run", "gen": "coll.tools.coll_gen"}


def tool(name, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", MODULES[name], *map(str, args)],
                          capture_output=True, timeout=300, input=stdin)


def good_text(n=2, shape=(8,), **kw):
    with make_context():
        return all_reduce_module(n, list(shape), "f32", "sum", **kw)


def args_for(name, path, out):
    return {"opt": [path, "--coll-lower-all-reduce", "-o", out],
            "build": [path, "--emit=gpu", "-o", out],
            "run": [path, "--backend=cpu", "--repeat=1", "--outputs", out]}[name]


def expect(name, path, out, stderr):
    r = tool(name, *args_for(name, path, out))
    err = r.stderr.decode()
    assert (r.returncode, err) == (1, stderr), err
    assert b"Traceback" not in r.stderr and not out.exists()


TOOLS = ("opt", "build", "run")


@pytest.mark.parametrize("name", TOOLS)
def test_deep_nesting(tmp_path, name):
    path = tmp_path / "deep.mlir"
    path.write_text("module {\n" * 300 + good_text() + "}\n" * 300)
    expect(name, path, tmp_path / "out", f"{path}:257:8: error: brackets nested deeper than 256 levels; "
                                         "expected at most 256\n")


@pytest.mark.parametrize("name", TOOLS)
def test_non_utf8_bytes(tmp_path, name):
    path = tmp_path / "bytes.mlir"
    path.write_bytes(good_text().encode().replace(b"kind", b"ki\xffnd", 1))
    # Every tool reads bytes like mlir-opt (non-UTF-8 comments are fine) and
    # reports the MLIR lexer's error.
    expect(name, path, tmp_path / "out", f"{path}:3:87: error: unexpected character\n")


@pytest.mark.parametrize("name", TOOLS)
def test_non_utf8_byte_quoted_in_the_parser_error(tmp_path, name):
    # The parser's message quotes the op name, bad byte included: it cannot
    # become a Python str as is (found by bench/fuzz.py: a traceback).
    path = tmp_path / "q.mlir"
    path.write_bytes(good_text().encode().replace(b'"coll.wait"', b'"coll.wa\xffit"', 1))
    out = tmp_path / "out"
    r = tool(name, *args_for(name, path, out))
    assert r.returncode == 1 and not out.exists()
    assert r.stderr.decode().startswith(f"{path}:4:5: error: unregistered operation 'coll.wa\ufffdit' found "
                                        "in dialect ('coll') that does not allow unknown operations\n")
    assert b"Traceback" not in r.stderr and b"internal error" not in r.stderr


@pytest.mark.parametrize("name", TOOLS)
def test_device_attribute_that_is_not_an_id(tmp_path, name):
    path = tmp_path / "dev.mlir"
    t = "memref<8xf32, #coll.device<true>>"
    path.write_text(f'func.func @f(%a: {t}, %b: memref<8xf32, #coll.device<1>>) {{\n'
                    f'  %t = "coll.copy"(%a, %b) : ({t}, memref<8xf32, #coll.device<1>>) -> !coll.token\n'
                    '  "coll.wait"(%t) : (!coll.token) -> ()\n  return\n}\n')
    expect(name, path, tmp_path / "out", f"{path}:2:8: error: copy source has memory space #coll.device<true>, "
                                         "which names no device; expected #coll.device<i> with an integer id i\n")


@pytest.mark.parametrize("name", TOOLS)
def test_guard_is_not_fooled_by_strings_or_comments(tmp_path, name):
    crash = good_text().replace("array<i64: 0, 1>", "array<index: 0, 1>")
    path = tmp_path / "g.mlir"
    # A quote in a comment and '//' in a string, before the crashing pattern.
    path.write_text('// an odd " quote\n' + crash.replace('kind = "sum"', 'kind = "sum", note = "a//b"'))
    expect(name, path, tmp_path / "out", f"{path}:4:67: error: dense arrays of 'index' elements are not "
                                         "supported (they crash the MLIR parser); use i64\n")
    # The pattern inside a string or a comment is no error.
    ok = tmp_path / "ok.mlir"
    ok.write_text("// array<index: 0>\n" + good_text().replace('kind = "sum"', 'kind = "sum", note = "array<index"'))
    r = tool(name, *args_for(name, ok, tmp_path / "out"))
    assert r.returncode == 0, r.stderr


def test_a_parser_crash_outside_the_known_patterns_is_caught(monkeypatch):
    from coll.tools import parse_guard
    monkeypatch.setattr(parse_guard, "KNOWN_CRASHES", [])
    crash = good_text().replace("array<i64: 0, 1>", "array<index: 0, 1>")
    with pytest.raises(parse_guard.SourceError) as e:
        parse_guard.check_source(crash, "in.mlir")
    assert e.value.format() == ("in.mlir:1:1: error: the MLIR parser crashed on this input (SIGABRT); "
                                "the input was not parsed")
    assert parse_guard.crash_in_child("module {" * 20000 + "}" * 20000).endswith("(SIGSEGV)")
    assert parse_guard.crash_in_child(good_text()) is None


@pytest.mark.parametrize("name", TOOLS)
def test_huge_dimensions(tmp_path, name):
    path = tmp_path / "huge.mlir"
    path.write_text(good_text().replace("memref<8xf32>", "memref<9999999x9999999x99999xf32>"))
    expect(name, path, tmp_path / "out", f"{path}:3:10: error: input #0 memref<9999999x9999999x99999xf32> "
                                         "holds 39999592000080399996 bytes; expected fewer than 2^62 bytes\n")


def test_coll_run_refuses_what_does_not_fit_in_memory(tmp_path):
    path = tmp_path / "big.mlir"
    path.write_text(good_text().replace("memref<8xf32>", "memref<99999999999xf32>"))
    r = tool("run", path, "--backend=cpu")
    err = r.stderr.decode()
    assert r.returncode == 1 and err.startswith(
        f"{path}:2:3: error: coll-run of 2 inputs and 2 outputs of 99999999999xf32 needs about 2980.28 GiB, "
        "more than the "), err
    assert err.endswith(" GiB of memory available here; use smaller buffers or fewer devices\n")


def test_cpu_route_refuses_scratch_beyond_memory(monkeypatch):
    from coll.execution import memory
    from coll.lowering import cpu
    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    with pytest.raises(memory.MemoryLimit) as e:
        cpu.compile(good_text(3, (100,)), strategy="naive")
    assert str(e.value) == ("running @all_reduce on the CPU (6 argument buffers and 2400 bytes of scratch) "
                            "needs about 4800 bytes, more than the 1000 bytes of memory available here; "
                            "use smaller buffers or fewer devices")


# -- file-system errors ------------------------------------------------------

@pytest.mark.parametrize("name,prefix", [("opt", "coll-opt"), ("build", "coll-build"), ("run", "coll-run")])
def test_file_system_errors(tmp_path, name, prefix):
    good = tmp_path / "good.mlir"
    good.write_text(good_text())
    missing = tmp_path / "missing.mlir"
    expect(name, missing, tmp_path / "out",
           f"{prefix}: error: could not open input file '{missing}': No such file or directory\n")
    expect(name, tmp_path, tmp_path / "out", f"{prefix}: error: could not open input file '{tmp_path}': Is a directory\n")
    out = tmp_path / "no-dir" / "out"
    expect(name, good, out, f"{prefix}: error: could not write '{out}': No such file or directory\n")
    r = tool(name, *args_for(name, good, "/dev/full"))
    assert (r.returncode, r.stderr.decode()) == (1, f"{prefix}: error: could not write '/dev/full': No space left on device\n")


def test_coll_run_outputs_over_its_own_files(tmp_path):
    # --outputs naming the program or the --inputs file replaced it with an npz.
    good = tmp_path / "good.mlir"
    good.write_text(good_text())
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x0=np.ones(8, np.float32), x1=np.ones(8, np.float32))
    for argv, message in ((["--outputs", good], f"--outputs '{good}' is the program"),
                          (["--inputs", inputs, "--outputs", tmp_path / "." / "in.npz"],
                           f"--outputs '{tmp_path / '.' / 'in.npz'}' is --inputs")):
        before = good.read_bytes(), inputs.read_bytes()
        r = tool("run", good, "--backend=cpu", "--repeat=1", *argv)
        assert (r.returncode, r.stderr.decode()) == (1, f"coll-run: error: {message}; expected another file\n")
        assert (good.read_bytes(), inputs.read_bytes()) == before


@pytest.mark.parametrize("argv,message", [
    (["--seed", "-1"], "argument --seed: -1 is out of range; expected 0..9223372036854775807"),
    (["--seed", str(2 ** 63)], f"argument --seed: {2 ** 63} is out of range; expected 0..9223372036854775807"),
    (["--seed", "x"], "argument --seed: 'x' is not an integer"),
    (["--repeat", "0"], "argument --repeat: 0 is out of range; expected 1..1000000"),
    # found by an outside attack: accepted, then timed until killed
    (["--repeat", "99999999999999999999999"], "argument --repeat: 99999999999999999999999 is out of range; "
                                              "expected 1..1000000"),
    (["--repeat", "1.5"], "argument --repeat: '1.5' is not an integer"),
])
def test_coll_run_count_flags(tmp_path, argv, message):
    good = tmp_path / "good.mlir"
    good.write_text(good_text())
    r = tool("run", good, "--backend=cpu", *argv)
    assert r.returncode == 1 and r.stdout == b"", r.stderr
    assert r.stderr.decode().startswith("usage: coll-run") and r.stderr.decode().endswith(f"coll-run: error: {message}\n")


def test_coll_gen_full_disk():
    r = subprocess.run(f"{sys.executable} -m coll.tools.coll_gen all-reduce --devices 2 > /dev/full",
                       shell=True, capture_output=True, timeout=120)
    assert (r.returncode, r.stderr.decode()) == (1, "coll-gen: error: could not write the module to stdout: "
                                                    "No space left on device\n")


@pytest.mark.parametrize("argv,message", [
    (["--name", ""], "invalid --name ''; expected a symbol name like all_reduce"),
    (["--threshold", str(2 ** 70)], f"--threshold {2 ** 70} does not fit in 64 bits"),
    (["--shape", "99999999999x99999999999"], "input #0 memref<99999999999x99999999999xf32> holds "
                                             "39999999999200000000004 bytes; expected fewer than 2^62 bytes (--shape)"),
])
def test_coll_gen_flags(argv, message):
    r = tool("gen", "all-reduce", "--devices", "2", *argv)
    assert (r.returncode, r.stderr.decode(), r.stdout) == (1, f"coll-gen: error: {message}\n", b"")


# -- coll-build: the verifiers of coll-opt, atomic output, tokens -------------------

@pytest.mark.parametrize("edit,message", [
    (("array<i64: 0, 1>", "array<i64: 1, 1>"), "3:10: error: device 1 is repeated (inputs #0 and #1); expected distinct devices"),
    # In place is the input on its own device; device 1's output may not be device 0's input.
    (('"coll.all_reduce"(%arg0, %arg1, %arg2, %arg3)', '"coll.all_reduce"(%arg0, %arg1, %arg2, %arg0)'),
     "3:10: error: output #1 (device 1) is input #0 (device 0); in place, an output must be the input on its own device"),
    (('%0 = "coll.all_reduce"(%arg0, %arg1, %arg2, %arg3)',
      '%c = memref.cast %arg0 : memref<8xf32> to memref<8xf32>\n    %0 = "coll.all_reduce"(%arg0, %arg1, %arg2, %c)'),
     "4:10: error: output #1 (device 1) is input #0 (device 0); in place, an output must be the input on its own device"),
])
@pytest.mark.parametrize("name", ("opt", "build"))
def test_coll_build_runs_the_verifiers(tmp_path, name, edit, message):
    path = tmp_path / "m.mlir"
    path.write_text(good_text().replace(*edit))
    out = tmp_path / "out"
    out.write_text("old")  # a failure leaves an existing output alone
    r = tool(name, *args_for(name, path, out))
    assert (r.returncode, r.stderr.decode()) == (1, f"{path}:{message}\n")
    assert out.read_text() == "old"


def test_returned_token_is_refused_not_an_llvm_abort(tmp_path):
    path = tmp_path / "tok.mlir"
    path.write_text(good_text().replace(") attributes", ") -> !coll.token attributes")
                    .replace('"coll.wait"(%0) : (!coll.token) -> ()\n    return', "return %0 : !coll.token"))
    r = tool("build", path, "--emit=llvmir", "-o", tmp_path / "out")
    assert (r.returncode, r.stderr.decode()) == (
        1, f"{path}:4:5: error: coll-to-gpu: 'func.return' uses the !coll.token of 'coll.join'; tokens may "
           "only be used by coll ops (coll.join, coll.wait, coll.copy, coll.combine) when the program is lowered\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("space", ["#coll.device<0>", "#coll.device<true>", "#coll.device<-1>"])
def test_placed_declaration_is_refused_not_an_abort(tmp_path, space):
    # A declaration keeps its placement through coll-to-gpu; the LLVM type
    # converter then failed inside a succeeding pass and the bindings aborted.
    path = tmp_path / "decl.mlir"
    path.write_text(good_text().replace("module {", f"module {{\n  func.func private @g(memref<4xf32, {space}>)", 1))
    r = tool("build", path, "--emit=llvm", "-o", tmp_path / "out")
    assert (r.returncode, r.stderr.decode()) == (
        1, f"{path}:2:3: error: @g still has a #coll.device memory space in its signature after coll-to-gpu, "
           "which places only the buffers of coll ops; expected plain memrefs in it\n")
    assert not (tmp_path / "out").exists()


def test_nested_modules_are_refused_by_the_gpu_route(tmp_path):
    path = tmp_path / "nested.mlir"
    path.write_text("module {\n" + good_text() + "}\n")
    r = tool("build", path, "--emit=llvm", "-o", tmp_path / "out")
    assert (r.returncode, r.stderr.decode()) == (
        1, f"{path}:2:1: error: nested modules are not supported by the GPU route; expected the functions at "
           "the top level of the module\n")


# -- npz members for coll-run --inputs ----------------------------------------------

def _member(a, edit=None):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a)
    raw = buf.getvalue()
    return edit(raw) if edit else raw


def _zip(path, members):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, raw in members.items():
            z.writestr(name, raw)


X = np.zeros(8, np.float32)


@pytest.mark.parametrize("make,message", [
    (lambda p: np.savez(p, x0=np.array([None] * 8, dtype=object), x1=X),
     "'x0' holds Python objects (a pickle); expected float32[8]"),
    (lambda p: p.write_bytes(pickle.dumps({"x0": X, "x1": X})),
     "not an .npz archive (np.savez writes one; a plain .npy or a pickle is not)"),
    (lambda p: np.save(open(p, "wb"), X), "not an .npz archive (np.savez writes one; a plain .npy or a pickle is not)"),
    (lambda p: (np.savez(p, x0=X, x1=X), p.write_bytes(p.read_bytes()[:300])),
     "not an .npz archive (np.savez writes one; a plain .npy or a pickle is not)"),
    (lambda p: _zip(p, {"x0.npy": _member(X, lambda r: r[:-16]), "x1.npy": _member(X)}),
     "'x0' has 16 bytes of data but its header says float32[8] (32 bytes)"),
    (lambda p: _zip(p, {"x0.npy": _member(X) + b"\0" * (16 << 20), "x1.npy": _member(X)}),
     "'x0' has 16777248 bytes of data but its header says float32[8] (32 bytes)"),
    (lambda p: _zip(p, {"x0.npy": _member(X, lambda r: r.replace(b"(8,)", b"(99999999999,)")), "x1.npy": _member(X)}),
     "'x0' is float32[99999999999], expected float32[8]"),
    (lambda p: _zip(p, {"x0.npy": b"garbage", "x1.npy": _member(X)}),
     "'x0' is not a valid .npy array: EOF: reading magic string, expected 8 bytes got 7"),
])
def test_bad_npz_members(tmp_path, make, message):
    mod = tmp_path / "m.mlir"
    mod.write_text(good_text())
    npz = tmp_path / "in.npz"
    make(npz)
    r = tool("run", mod, "--backend=cpu", "--inputs", npz, "--outputs", tmp_path / "o.npz")
    assert (r.returncode, r.stderr.decode()) == (1, f"coll-run: error: {npz}: {message}\n")
    assert not (tmp_path / "o.npz").exists()


def test_explicit_program_without_an_input(tmp_path):
    """Every argument written before it is read: no input of one
    collective's problem (was an IndexError in the check), so it runs as a
    program (`unchecked`: no coll.implements claims its copies). A program that reads an argument before it writes
    it (x0 copied out, then back) has that input."""
    path = tmp_path / "noin.mlir"
    t0, t1 = "memref<8xi32, #coll.device<0>>", "memref<8xi32, #coll.device<1>>"
    body = ("func.func @f(%a0: memref<8xi32>, %a1: memref<8xi32>) attributes {llvm.emit_c_interface} {\n"
            "%FILL"
            f"  %x0 = memref.memory_space_cast %a0 : memref<8xi32> to {t0}\n"
            f"  %x1 = memref.memory_space_cast %a1 : memref<8xi32> to {t1}\n"
            f'  %t0 = "coll.copy"(%x0, %x1) : ({t0}, {t1}) -> !coll.token\n'
            f'  %t1 = "coll.copy"(%x1, %x0, %t0) : ({t1}, {t0}, !coll.token) -> !coll.token\n'
            '  "coll.wait"(%t1) : (!coll.token) -> ()\n  return\n}\n')
    fill = "  %c = arith.constant 1 : i32\n  linalg.fill ins(%c : i32) outs(%a0 : memref<8xi32>)\n"
    path.write_text(body.replace("%FILL", fill))
    # (It has no input: it runs as a program, whose arguments are all passed
    # in. Its copies are claimed by no coll.implements: the plain program
    # would be the same copies, so it is unchecked, never `ok`: an outside
    # attack, 2026-12-07.)
    r = tool("run", path, "--backend=cpu", "--repeat=1")
    assert r.returncode == 0 and b"a program (no one collective on its arguments)" in r.stdout, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith(b" unchecked")
    assert b"no coll.implements claims as they are, so it would check nothing of them" in r.stderr, r.stderr
    path.write_text(body.replace("%FILL", ""))
    r = tool("run", path, "--backend=cpu", "--repeat=1")
    assert r.returncode == 0 and b"unchecked) of 1 x 8xi32 -> 2 output(s)" in r.stdout, r.stdout + r.stderr


def test_shard_file_without_a_function_is_located(tmp_path):
    # Found by bench/fuzz.py: the shard path of coll-run said "coll-run: error: ...".
    path = tmp_path / "g.mlir"
    path.write_text("shard.grid @g(shape = 4)\n")
    out = tmp_path / "out.npz"
    r = tool("run", path, "--backend=cpu", "--repeat=1", "--outputs", out)
    assert r.returncode == 1 and not out.exists()
    assert r.stderr.decode() == f"{path}:1:1: error: the module has no func.func to run\n"


@pytest.mark.parametrize("text", ["", "module {\n  func.func private @f()\n}\n"], ids=["empty", "declaration"])
def test_coll_build_refuses_a_module_with_nothing_to_build(tmp_path, text):
    # An outside attack: --emit=ptx and so wrote a 1-byte PTX and an empty
    # library, mpi-exe said so without a location; coll-run locates it.
    path = tmp_path / "g.mlir"
    path.write_text(text)
    for emit in ("ptx", "so", "mpi-exe"):
        out = tmp_path / f"out.{emit}"
        r = tool("build", path, f"--emit={emit}", "-o", out)
        assert r.returncode == 1 and not out.exists(), (emit, r.stderr)
        assert r.stderr.decode() == f"{path}:1:1: error: the module has no public func.func with a body to build\n"


@pytest.mark.skipif(not mpi.available()[0], reason="MPI back end not available")
def test_mpi_refuses_a_function_without_collectives_located(tmp_path):
    # An outside attack: mpi-exe and coll-run --backend=mpi gave a KeyError
    # (nothing says how many ranks a function without a collective has).
    path = tmp_path / "f.mlir"
    path.write_text("module {\n  func.func @f() {\n    return\n  }\n}\n")
    want = (f"{path}:2:3: error: @f has no collective and no coll.ranks: the MPI back end needs to know its "
            "ranks; expected a collective over devices or an SPMD function\n")
    r = tool("build", path, "--emit=mpi-exe", "-o", tmp_path / "x")
    assert (r.returncode, r.stderr.decode()) == (1, want) and not (tmp_path / "x").exists()
    r = tool("run", path, "--backend=mpi", "--repeat=1")
    assert (r.returncode, r.stderr.decode()) == (1, want)


def test_gpu_host_code_of_local_work_builds(tmp_path):
    # Found by bench/fuzz.py: an SPMD function with local work gave an
    # unlocated error from the host-code check of the GPU route. Its host
    # code is built now: the local kernels on a stream made at load, the
    # local buffers in the pool (the check that no call makes a stream passes).
    path = tmp_path / "local.mlir"
    path.write_text("""func.func @local(%arg0: memref<8xf32>, %arg1: memref<8xf32>) attributes {coll.ranks = 2 : i64} {
  %alloc = memref.alloc() : memref<8xf32>
  linalg.add ins(%arg0, %arg0 : memref<8xf32>, memref<8xf32>) outs(%alloc : memref<8xf32>)
  %0 = "coll.all_reduce"(%arg1, %alloc) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%0) : (!coll.token) -> ()
  memref.dealloc %alloc : memref<8xf32>
  return
}
""")
    out = tmp_path / "out.ll"
    r = tool("build", path, "--emit=llvmir", "-o", out)
    assert r.returncode == 0, r.stderr.decode()
    from coll.lowering.gpu.nvvm import host_calls
    calls = host_calls(out.read_text())["local"]
    # the local buffers (one per rank) are slots of the pool, allocated at load
    assert calls["mgpuStreamCreate"] == 0 and calls["mgpuMemAlloc"] == calls["mgpuMemFree"] == 0
    assert calls["mgpuLaunchKernel"] == 2 + 2  # linalg.add per rank, a combine per device


@pytest.mark.parametrize("where,value", [(182, 0x8D), (323, 0xD7)])
def test_corrupt_bytecode_is_an_error_not_an_abort(tmp_path, where, value):
    # Found by an outside attack: one flipped byte made upstream's bytecode
    # reader abort (StorageUniquer assertion) or raise a nanobind
    # conversion error; the bytecode is now parsed in a child first.
    text = subprocess.run([sys.executable, "-m", "coll.tools.coll_gen", "all-reduce", "--devices", "2",
                           "--shape", "16"], capture_output=True, text=True, check=True).stdout
    (tmp_path / "m.mlir").write_text(text)
    good = tmp_path / "m.mlirbc"
    subprocess.run([sys.executable, "-m", "coll.tools.coll_opt", str(tmp_path / "m.mlir"), "--emit-bytecode",
                    "-o", str(good)], check=True)
    data = bytearray(good.read_bytes())
    data[where] = value
    bad = tmp_path / "bad.mlirbc"
    bad.write_bytes(bytes(data))
    for tool, extra in (("coll_opt", []), ("coll_run", ["--backend=cpu"]),
                        ("coll_build", ["--emit=ptx", "-o", str(tmp_path / "x.ptx")])):
        r = subprocess.run([sys.executable, "-m", f"coll.tools.{tool}", str(bad), *extra],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 1, (tool, r.returncode, r.stderr)
        assert f"{bad}: error: " in r.stderr and "malformed" in r.stderr, (tool, r.stderr)
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x.ptx").exists()


NOT_WAITED = """func.func @main(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}
"""
# The same as one rank's function (SPMD), its token only joined.
NOT_WAITED_SPMD = """func.func @main(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 2 : i64} {
  %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  %j = "coll.join"(%t) : (!coll.token) -> !coll.token
  return
}
"""
NOT_WAITED_ERROR = ("{src}:2:8: error: nothing waits for the token of this coll.all_reduce (no coll.wait takes it, nor a "
                    "coll.join or a later op that is waited for); expected a coll.wait of it before the function "
                    "returns\n")


@pytest.mark.parametrize("form", ["global", "spmd"])
@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_coll_run_refuses_a_collective_nothing_waits_for(tmp_path, backend, form):
    # An outside attack: coll-run ran (and called `ok`) a collective that
    # coll-check-order refuses (a lone collective's lowering, and an SPMD
    # function on MPI, are not order-checked); a second: through a
    # coll.join nothing waits for, and as one rank's function on MPI.
    if backend == "mpi" and not mpi.available()[0]:
        pytest.skip("no MPI here")
    src = tmp_path / "p.mlir"
    text = NOT_WAITED if form == "global" else NOT_WAITED_SPMD
    src.write_text(text)
    r = tool("run", src, f"--backend={backend}", "--repeat=1")
    assert r.returncode == 1 and r.stdout == b"", (r.stdout, r.stderr)
    assert r.stderr.decode() == NOT_WAITED_ERROR.format(src=src), r.stderr
    waited = text.replace("  return", '  "coll.wait"(%t) : (!coll.token) -> ()\n  return')
    src.write_text(waited)
    r = tool("run", src, f"--backend={backend}", "--repeat=1")
    assert r.returncode == 0 and r.stdout.rstrip().endswith(b" ok"), (r.stdout, r.stderr)


# rank r's %a is all_reduce'd into %y while a fill writes it: a race.
RACY_SPMD = """func.func @main(%a: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 2 : i64} {
  %f = arith.constant 7.0 : f32
  %t = "coll.all_reduce"(%a, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  linalg.fill ins(%f : f32) outs(%a : memref<8xf32>)
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
"""


@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_coll_run_refuses_a_race_on_every_back_end(tmp_path, backend):
    # An outside attack (2026-12-08): the CPU refused it (coll-check-order),
    # MPI ran it, `unchecked` with the race as notes, exit 0.
    if backend == "mpi" and not mpi.available()[0]:
        pytest.skip("no MPI here")
    src, out = tmp_path / "p.mlir", tmp_path / "o.npz"
    src.write_text(RACY_SPMD)
    r = tool("run", src, f"--backend={backend}", "--repeat=1", "--outputs", out)
    assert r.returncode == 1 and r.stdout == b"" and not out.exists(), (r.stdout, r.stderr)
    err = r.stderr.decode()
    assert err.startswith(f"{src}:4:3: error: coll-check-order: linalg.fill writes %arg0[0, 8) while an unordered op "
                          "may still read it\n"), err
    assert f"{src}:3:8: note: read by this coll." in err
    src.write_text(RACY_SPMD.replace('  "coll.wait"(%t) : (!coll.token) -> ()\n', "").replace(
        "  linalg.fill", '  "coll.wait"(%t) : (!coll.token) -> ()\n  linalg.fill'))
    r = tool("run", src, f"--backend={backend}", "--repeat=1")
    assert r.returncode == 0 and r.stdout.rstrip().endswith(b" ok"), (r.stdout, r.stderr)


@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_coll_run_refuses_a_race_in_a_branch(tmp_path, backend):
    # A second attack (2026-12-08): local work in an scf.if was not
    # order-checked by coll-run (the driver checked straight-line functions
    # only): the race ran, `ok`.
    if backend == "mpi" and not mpi.available()[0]:
        pytest.skip("no MPI here")
    src = tmp_path / "p.mlir"
    src.write_text(RACY_SPMD.replace(
        "  linalg.fill ins(%f : f32) outs(%a : memref<8xf32>)\n",
        "  %c = arith.constant true\n  scf.if %c {\n    linalg.fill ins(%f : f32) outs(%a : memref<8xf32>)\n  }\n"))
    r = tool("run", src, f"--backend={backend}", "--repeat=1")
    assert r.returncode == 1 and r.stdout == b"", (r.stdout, r.stderr)
    assert r.stderr.decode().startswith(f"{src}:5:3: error: coll-check-order: scf.if writes %arg0"), r.stderr
