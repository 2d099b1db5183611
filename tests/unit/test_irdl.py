"""ir/coll.irdl.mlir and docs/ops.md are generated from the registry
(collectives/irdl.py, collectives/reference_doc.py): the checked-in files
must be what the generators print today, and the generated dialect must
load and verify every op it defines."""
from pathlib import Path

import pytest
from mlir import ir

from coll.collectives import COLLECTIVES
from coll.collectives.irdl import generate
from coll.ir import IRDL_FILE, KINDS, make_context
from coll.ir.ops import OPS

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_irdl_file_is_current():
    assert IRDL_FILE.read_text() == generate(), (
        "ir/coll.irdl.mlir is stale: python -m coll.collectives.irdl > ir/coll.irdl.mlir")


def test_the_checked_in_op_reference_is_current():
    from coll.collectives.reference_doc import generate as reference
    assert (ROOT / "docs" / "ops.md").read_text() == reference(), (
        "docs/ops.md is stale: python -m coll.collectives.reference_doc > docs/ops.md")


def test_every_registered_op_is_defined_once():
    text = generate()
    for name in OPS:
        assert text.count(f"irdl.operation @{name[len('coll.'):]} {{") == 1, name


def test_the_kind_enum_is_the_kinds_table():
    text = generate()
    reducing = [cls for cls in COLLECTIVES if cls.HAS_KIND] + [OPS["coll.combine"]]
    assert text.count("irdl.any_of(" + ", ".join("%" + k for k in KINDS) + ")") == len(reducing)


def test_a_kind_outside_the_table_is_refused_by_the_generated_dialect():
    ok = '"coll.combine"(%a, %a, %a) {kind = "max", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token'
    text = "func.func @f(%a: memref<4xf32>) {\n %t = " + ok + "\n return\n}"
    with make_context():
        ir.Module.parse(text)  # a kind of the table verifies
        with pytest.raises(ir.MLIRError) as e:
            ir.Module.parse(text.replace('"max"', '"avg"'))
    assert "kind" in str(e.value)
