"""ir/types.py's memo tables keep the IR objects they were asked about, and
with them their Context: they keep the entries of the KEEP_CONTEXTS
contexts make_context made last (a pytest worker held 9 GB of dead
contexts, 2026-12-07)."""
import gc
import weakref

from mlir import ir

from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.ir.types import KEEP_CONTEXTS, built_facts, device_of, element_name, flat_type, token_type
from coll.lowering import cpu


def _use_the_tables() -> ir.Type:
    t = flat_type(ir.F32Type.get(), 8, device=1, offset=4)
    assert device_of(t) == 1 and element_name(t) == "f32" and str(token_type()) == "!coll.token"
    return t


def test_a_context_is_let_go_once_newer_ones_are_made():
    refs = []
    for _ in range(KEEP_CONTEXTS + 3):
        ctx = make_context()
        with ctx, ir.Location.unknown():
            _use_the_tables()
        refs.append(weakref.ref(ctx))
        del ctx
    gc.collect()
    alive = [r() is not None for r in refs]
    assert alive[:3] == [False] * 3 and sum(alive) <= KEEP_CONTEXTS, alive


def test_a_compiled_programs_context_goes_with_it():
    refs = []
    for n in range(KEEP_CONTEXTS + 3):
        with make_context():
            text = all_reduce_module(2, [8 + n], "f32", "sum")
        prog = cpu.compile(text, strategy="ring")
        refs.append(weakref.ref(prog._ctx))
        del prog
    cpu.clear_cache()
    gc.collect()
    assert not any(r() is not None for r in refs[:3])


def test_a_context_in_use_computes_its_entries_again():
    ctx = make_context()
    with ctx, ir.Location.unknown():
        t = _use_the_tables()
        assert built_facts(t) is not None
        for _ in range(KEEP_CONTEXTS + 1):
            make_context()  # (its entries dropped meanwhile)
        assert built_facts(t) is None
        again = _use_the_tables()
        assert again == t and built_facts(again) == (1, (8,), ir.F32Type.get())


def test_a_forked_child_making_contexts_does_not_crash():
    # tools/parse_guard.py parses in a forked child, which makes a context:
    # dropping the old ones there destroyed contexts whose threads (MLIR's
    # pool) exist only in the parent, a SIGSEGV (seen in the MPI suite).
    import os

    from mlir.passmanager import PassManager
    for _ in range(KEEP_CONTEXTS + 2):
        ctx = make_context()
        with ctx, ir.Location.unknown():
            m = ir.Module.parse("\n".join(f"func.func @f{k}(%a: i32) -> i32 {{\n  %b = arith.addi %a, %a : i32\n"
                                          f"  return %b : i32\n}}" for k in range(50)))
            PassManager.parse("builtin.module(func.func(canonicalize,cse))").run(m.operation)  # (the pool's threads)
            _use_the_tables()
        del m, ctx
    pid = os.fork()
    if pid == 0:
        try:
            for _ in range(KEEP_CONTEXTS + 2):
                with make_context(), ir.Location.unknown():
                    _use_the_tables()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
