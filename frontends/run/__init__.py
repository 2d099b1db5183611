"""Running frontends' programs on global arrays: scatter the inputs over the
devices by the frontend's layouts, run the SPMD function on a target
(lowering/cpu or lowering/mpi), gather the results and check the replicas
(global_arrays.py; shard.py for upstream shard programs). This sits above
lowering/ (docs/architecture.md, layers)."""
