from pathlib import Path

import pytest

import coll
from coll.ir import make_context


# The package under test must be this checkout's: a venv's editable install
# may point at another clone, whose code would be tested silently.
def pytest_configure(config):
    here, imported = Path(__file__).resolve().parents[2], Path(coll.__file__).resolve().parent
    if imported != here:
        pytest.exit(f"these tests are {here}'s, but `import coll` gives {imported}: run them with this "
                    "checkout's own venv (`make setup` here, then .venv/bin/pytest)", returncode=4)


@pytest.fixture
def ctx():
    c = make_context()
    with c:
        yield c


# The back ends keep every program they compiled (JIT engines, their static
# scratch, their Context): each module's are dropped after it (tests within
# a module may share them). A worker now stays near 1 GB (it held ~10 GB
# while ir/types.py's memo tables kept every Context alive).
_CACHES = ("coll.lowering.cpu", "coll.lowering.mpi", "coll.lowering.gpu", "coll.frontends.run.global_arrays")


@pytest.fixture(autouse=True, scope="module")
def _drop_compiled_programs():
    yield
    import gc
    import sys
    for name in _CACHES:
        module = sys.modules.get(name)
        if module is not None:
            module.clear_cache()
    gc.collect()
