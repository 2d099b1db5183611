import pytest

from coll.ir import make_context


@pytest.fixture
def ctx():
    c = make_context()
    with c:
        yield c
