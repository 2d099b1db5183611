# Two entry points (README): `make demo` and `make test`. Both set up
# everything first; setup is idempotent and cheap when already done.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# apt waits for a lock another apt holds (a fresh machine's unattended
# upgrades at boot, a second checkout's setup) instead of failing at once
APT     := DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600

.PHONY: setup demo test lint lit report clean

$(STAMP): pyproject.toml
	@command -v cc >/dev/null 2>&1 || { $(APT) update -qq && $(APT) install -y -qq gcc libc6-dev; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip setuptools
	$(BIN)/pip install -q -e '.[test,jax]'
	@touch $@

# MPI for the mpi back end (lowering/mpi/runtime.py): OpenMPI from apt when no MPI
# is on PATH (MPICH works too when it is the one present). Where it cannot
# be installed, the MPI tests skip and say why.
setup: $(STAMP)
	@command -v mpirun >/dev/null 2>&1 || command -v mpiexec >/dev/null 2>&1 || \
	  { $(APT) update -qq && $(APT) install -y -qq openmpi-bin libopenmpi-dev; } || \
	  echo "warning: could not install MPI (openmpi-bin libopenmpi-dev); the MPI tests will skip"

# Lower an example allreduce for 4 devices with every strategy, run it on
# CPU-simulated devices, check it against numpy, print a table.
demo: setup
	$(BIN)/coll-run examples/allreduce_4x.mlir --backend=cpu --strategy=all

SHUFFLE_SEEDS ?= 1 2 3

# lit + FileCheck, all of pytest, then the MPI collectives under mpirun with
# their programs in other valid orders of the token graph (coll-shuffle seeds;
# seed s: the grid of 2 + (s-1) % 3 ranks). The CPU grid
# (tests/unit/test_cpu_grid.py) runs every case under one of the seeds,
# each (collective, strategy) under all of them, in one pass.
# pytest runs on every core (pytest-xdist), a file per worker (--dist
# loadfile: a module's fixtures, such as an exported JAX corpus, are made
# once), but the files that start mpirun: those run after it, two files at
# a time (their ranks share the cores; their fault tests time the kills
# with bounds that hold at two: 1 min 40 s against 2 min 45 s one by one).
MPI_TESTS := $(wildcard tests/unit/test_mpi_*.py) tests/unit/test_shard_mpi.py \
             tests/unit/test_strided_args.py tests/unit/test_tensor_programs.py
test: setup lint
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/lit -sv tests/lit
	$(BIN)/pytest -q -n auto --dist loadfile $(addprefix --ignore=,$(MPI_TESTS)) tests/unit
	$(BIN)/pytest -q -n 2 --dist loadfile $(MPI_TESTS)
	for s in $(SHUFFLE_SEEDS); do \
	  echo "MPI collectives under coll-shuffle{seed=$$s}"; \
	  COLL_SHUFFLE_SEED=$$s $(BIN)/pytest -q tests/unit/test_mpi_collectives.py || exit 1; \
	done

# the package's subpackages (-p coll would recurse through build/typecheck/coll);
# its modules outside them (coll, coll.api) go by -m
PACKAGES := ir core collectives passes analysis frontends execution lowering tools fuzz

# The linter and the type checker (pyproject.toml [tool.ruff], [tool.mypy]).
# mypy reads the package as `coll` through build/typecheck/coll -> here.
lint: setup
	@mkdir -p build/typecheck && ln -sfn $(CURDIR) build/typecheck/coll
	$(BIN)/ruff check .
	$(BIN)/mypy -m coll -m coll.api $(addprefix -p coll.,$(PACKAGES))

# bench/report.md + bench/report/*.png: calibrates the CPU profile, then
# schedule quality, compile time, CPU runs and the auto validation grid.
# COMPILE_JSON=rows.json: the compile-time section from a run of
# bench/compile_time.py --json (the full N grid takes long) instead.
report: setup
	$(BIN)/python bench/report.py $(if $(COMPILE_JSON),--compile-json $(COMPILE_JSON))

clean:
	rm -rf $(VENV) build *.egg-info tests/lit/Output
