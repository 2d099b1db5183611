"""The fuzzer: structure-aware and byte-level mutations of coll modules and
npz inputs, run against every tool (fuzz/engine.py; bench/fuzz.py runs it)."""
