// lit tests this checkout's code, whichever venv runs lit: `coll` resolves
// inside %root, and the venv's coll-opt console script imports it from there.
// RUN: %PYTHON -c "import coll, os; print(os.path.dirname(os.path.realpath(coll.__file__)))" | FileCheck %s --check-prefix=PKG -DROOT=%root
// RUN: %PYTHON -c "import os; print(os.path.realpath('%coll_pythonpath/coll'))" | FileCheck %s --check-prefix=PKG -DROOT=%root
// Through the symlink first on PYTHONPATH, not through a venv's editable install:
// RUN: %PYTHON -c "import coll; print(coll.__file__)" | FileCheck %s --check-prefix=FIRST -DPYPATH=%coll_pythonpath
// RUN: env PYTHONVERBOSE=1 coll-opt --help 2>&1 | FileCheck %s --check-prefix=SCRIPT -DPYPATH=%coll_pythonpath
// Upstream tools sit on PATH beside FileCheck.
// RUN: %PYTHON -c "import shutil; [print(t, shutil.which(t)) for t in ('FileCheck', 'mlir-opt', 'mlir-translate', 'not', 'FileCheck')]" | FileCheck %s --check-prefix=TOOLS

// PKG: {{^}}[[ROOT]]{{$}}
// FIRST: {{^}}[[PYPATH]]/coll/__init__.py{{$}}
// SCRIPT: [[PYPATH]]/coll/tools/coll_opt.py
// TOOLS: FileCheck {{.*}}/llvm/bin/FileCheck
// TOOLS-NEXT: mlir-opt {{.*}}/mlir/bin/mlir-opt
// TOOLS-NEXT: mlir-translate {{.*}}/mlir/bin/mlir-translate
// TOOLS-NEXT: not {{.*}}/llvm/bin/not
// TOOLS-NEXT: FileCheck {{.*}}/bin/FileCheck
