// Loops and scatters JAX 0.10.2 exported (Inputs/gen.py: bench/jax_programs.py
// at 8 devices), through the StableHLO route: pipeline stages (ppermute in
// lax.fori_loop) become an scf.for around coll.permute; the global view of
// the single-process back ends unrolls it (coll-spmd-to-global: eight
// permutes, no loop), the MPI route keeps it (coll-spmd-to-mpi: the sends in
// the loop). A while_loop around a psum (its trip count the data decides) is
// refused at the loop by both. .at[].set/add and the gradient of
// take_along_axis are scatters: loops of tensor.insert before the psum.
// REQUIRES: jaxlib
// DEFINE: %{route} = coll-from-stablehlo,coll-stablehlo-to-linalg,coll-widen-contractions,canonicalize,cse,linalg-fuse-elementwise-ops,coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},coll-check-results,coll-distinct-results,buffer-results-to-out-params{hoist-static-allocs modify-public-functions},coll-free-local-buffers,canonicalize,cse
// RUN: %PYTHON %S/Inputs/import.py %S/Inputs/pipeline_fori.mlir 'builtin.module(coll-from-stablehlo,coll-stablehlo-to-linalg)' | FileCheck %s --check-prefix=LOOP
// RUN: %PYTHON %S/Inputs/import.py %S/Inputs/pipeline_fori.mlir 'builtin.module(%{route},coll-spmd-to-global)' | FileCheck %s --check-prefix=GLOBAL
// RUN: %PYTHON %S/Inputs/import.py %S/Inputs/pipeline_fori.mlir 'builtin.module(%{route},coll-spmd-to-mpi)' | FileCheck %s --check-prefix=MPI
// RUN: not %PYTHON %S/Inputs/import.py %S/Inputs/while_psum.mlir 'builtin.module(%{route},coll-spmd-to-global)' 2>&1 | FileCheck %s --check-prefix=WHILE
// RUN: not %PYTHON %S/Inputs/import.py %S/Inputs/while_psum.mlir 'builtin.module(%{route},coll-spmd-to-mpi)' 2>&1 | FileCheck %s --check-prefix=WHILE-MPI
// RUN: %PYTHON %S/Inputs/import.py %S/Inputs/at_set.mlir 'builtin.module(coll-from-stablehlo,coll-stablehlo-to-linalg)' | FileCheck %s --check-prefix=SET
// RUN: %PYTHON %S/Inputs/import.py %S/Inputs/take_along_grad.mlir 'builtin.module(coll-from-stablehlo,coll-stablehlo-to-linalg)' | FileCheck %s --check-prefix=TAKE

// LOOP-LABEL: func.func @main
// LOOP: scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args(
// LOOP: linalg.matmul
// LOOP: math.tanh
// LOOP: "coll.permute"
// LOOP: scf.yield
// LOOP-NOT: stablehlo

// GLOBAL-LABEL: func.func @main
// GLOBAL-NOT: scf.for
// GLOBAL-COUNT-8: "coll.permute"
// GLOBAL-NOT: "coll.permute"
// GLOBAL-NOT: scf.for

// MPI-LABEL: func.func @main
// MPI: scf.for %{{.*}} = %c0 to %c8 step %c1
// MPI: scf.index_switch
// MPI: mpi.isend
// MPI-NOT: coll.permute

// (the verifier's, after bufferization: before coll-spmd-to-global's and
// coll-spmd-to-mpi's own refusals of the loop)
// WHILE: error: 'scf.while' holds this collective and passes its buffers through its regions, which the checks do not follow; expected it in straight-line code or an scf.for
// WHILE-MPI: error: 'scf.while' holds this collective and passes its buffers through its regions, which the checks do not follow; expected it in straight-line code or an scf.for

// SET-LABEL: func.func @main
// SET: scf.for
// SET: scf.if
// SET: tensor.insert
// SET: "coll.all_reduce"
// SET-NOT: stablehlo

// TAKE-LABEL: func.func @main
// TAKE: scf.for
// TAKE: scf.for
// TAKE: arith.addf
// TAKE: tensor.insert
// TAKE: "coll.all_reduce"
// TAKE-NOT: stablehlo
