"""coll-run and coll-build run coll-check-semantics on explicit-level input
they did not lower themselves, for every collective: a correct program
(lowered here, as a user's coll-opt would) runs and matches numpy (coll-run
reads the collective from its claim); a wrong one (one operand substituted,
see test_check_semantics_mutation.py) is rejected, located, before anything
runs or is written; a program without a claim runs with a warning that
nothing proved it. In process (tools' run functions), to keep it fast."""
import itertools

import pytest
from mlir import ir
from test_check_semantics import apply, body_ops, mutants

from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.ops import Implements
from coll.passes.check_order import check_module as order_findings
from coll.passes.check_semantics import check_module
from coll.passes.lower_collectives import lower_collectives
from coll.tools import coll_build, coll_run

FORMS = [("all_reduce", [8], {}, False), ("all_reduce", [8], {"to_device": 3}, False),
         ("reduce_scatter", [2, 6], {"axis": 1}, False), ("all_gather", [2, 3], {"axis": 1}, False),
         ("reduce", [8], {"root": 3}, False), ("reduce", [8], {"root": 1}, True),
         ("broadcast", [8], {"root": 1}, True), ("broadcast", [8], {"root": 3}, False),
         ("all_to_all", [3, 6], {"split_axis": 1, "concat_axis": 0}, False)]
IDS = [f"{op}-{'-'.join(f'{k}{v}' for k, v in a.items())}{'-in_place' if ip else ''}" for op, _, a, ip in FORMS]


def explicit(op, shape, attrs, in_place, strategy=None):
    with make_context():
        m = ir.Module.parse(collective_module(op, 3, shape, "f32", strategy=strategy, in_place=in_place,
                                              **attrs))
        lower_collectives(m.operation)
        return str(m)


def wrong(text):
    """`text` with the first operand substitution that keeps the program
    ordered (coll-check-order passes) and that coll-check-semantics reports."""
    with make_context():
        for i, k, r in mutants(text):
            m = apply(text, i, k, r)
            if not order_findings(m.operation) and check_module(m.operation):
                return str(m)
        # Data movement has none (a substituted operand races too): swap the
        # buffers that two devices place, the sources of a gather swapped.
        # Where every such swap reads a claimed output before it is written
        # (an in-place broadcast), coll-check-order already refuses it.
        first = ir.Module.parse(text)  # kept alive while its claim is read
        claim = [Implements.of(op) for op in body_ops(first) if op.name == Implements.NAME][0]
        group = "inputs" if len(claim.inputs) > 1 else "outputs"
        count = len(getattr(claim, group))
        found = None
        for a, b in itertools.combinations(range(count), 2):
            m = ir.Module.parse(text)
            claim = [Implements.of(op) for op in body_ops(m) if op.name == Implements.NAME][0]
            two = getattr(claim, group)
            casts = [[u.owner for u in two[i].uses if u.owner.name == "memref.memory_space_cast"][0] for i in (a, b)]
            casts[0].operands[0], casts[1].operands[0] = two[b], two[a]
            if check_module(m.operation) or order_findings(m.operation):
                found = found or str(m)
                if not order_findings(m.operation):
                    return str(m)
        assert found is not None
        return found


CAUGHT = (": error: coll-check-semantics: ", ": error: coll-check-order: ")


def run_tool(main, argv, capsys):
    try:
        code = main(argv)
    except coll_run.Failure as f:
        print(str(f), file=__import__("sys").stderr)
        code = 1
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("op,shape,attrs,in_place", FORMS, ids=IDS)
def test_coll_run_checks_and_runs_explicit_input(tmp_path, capsys, op, shape, attrs, in_place):
    good = tmp_path / "good.mlir"
    good.write_text(explicit(op, shape, attrs, in_place))
    code, out, err = run_tool(coll_run.run, [str(good), "--backend=cpu", "--repeat=1", "--dump-pass-pipeline"], capsys)
    assert code == 0, err
    assert "coll-check-order,coll-check-semantics" in err and "warning" not in err
    assert f": {op} " in out.splitlines()[0]
    assert out.splitlines()[-1].split()[-1] == "ok", out
    bad = tmp_path / "bad.mlir"
    bad.write_text(wrong(good.read_text()))
    code, out, err = run_tool(coll_run.run, [str(bad), "--backend=cpu", "--repeat=1"], capsys)
    assert code == 1 and out == ""
    first = err.splitlines()[0]
    assert first.startswith(f"{bad}:") and any(c in first for c in CAUGHT[:1 + in_place]), err


@pytest.mark.parametrize("op,shape,attrs,in_place", FORMS[::2], ids=IDS[::2])
def test_coll_build_checks_explicit_input(tmp_path, capsys, op, shape, attrs, in_place):
    good = tmp_path / "good.mlir"
    good.write_text(explicit(op, shape, attrs, in_place))
    out = tmp_path / "out.mlir"
    code, _, err = run_tool(coll_build._main, [str(good), "--emit=gpu", "-o", str(out)], capsys)
    assert code == 0 and "gpu.container_module" in out.read_text(), err
    bad = tmp_path / "bad.mlir"
    bad.write_text(wrong(good.read_text()))
    target = tmp_path / "bad_out.mlir"
    code, _, err = run_tool(coll_build._main, [str(bad), "--emit=gpu", "-o", str(target)], capsys)
    assert code == 1 and not target.exists()
    assert any(c in err.splitlines()[0] for c in CAUGHT[:1 + in_place]), err


def test_coll_build_checks_an_explicit_function_next_to_a_collective(tmp_path, capsys):
    # One function at the collective level, one a user's wrong explicit
    # program: the route checks the module once it is all explicit.
    theirs = wrong(explicit("all_gather", [2, 3], {"axis": 1}, False)).replace("@all_gather", "@theirs")
    ours = collective_module_text("all_reduce")
    body = lambda t: t[t.index("{") + 1:t.rindex("}")]  # noqa: E731 - the module's functions
    src = tmp_path / "mixed.mlir"
    src.write_text("module {" + body(ours) + body(theirs) + "}")
    code, _, err = run_tool(coll_build._main, [str(src), "--emit=gpu", "-o", str(tmp_path / "o.mlir")], capsys)
    assert code == 1 and ": error: coll-check-semantics: " in err.splitlines()[0], err


def collective_module_text(op):
    with make_context():
        return str(ir.Module.parse(collective_module(op, 3, [8], "f32")))


def test_coll_run_warns_on_an_explicit_program_without_a_claim(tmp_path, capsys):
    text = explicit("all_reduce", [8], {}, False)
    lines = [line for line in text.splitlines() if '"coll.implements"' not in line]
    src = tmp_path / "noclaim.mlir"
    src.write_text("\n".join(lines))
    code, out, err = run_tool(coll_run.run, [str(src), "--backend=cpu", "--repeat=1"], capsys)
    # Nothing says what it computes: it runs unchecked (issue 23 item 5), and says why.
    assert code == 0 and out.splitlines()[-1].split()[-1] == "unchecked", err
    (warning,) = [line for line in err.splitlines() if "warning:" in line]
    assert warning.startswith(f"{src}:") and "belongs to no coll.implements claim, so nothing checks" in warning
