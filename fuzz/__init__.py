"""The fuzzer: structure-aware and byte-level mutations of coll modules and
npz inputs (generate.py), made into jobs for every tool (jobs.py), run in a
worker process and classified (run.py); engine.py is the driver and its
command line (bench/fuzz.py runs it)."""
