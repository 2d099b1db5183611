"""The bindings look up a Python module per dialect namespace whenever they
wrap a coll op or attribute, and retry the (failing) import every time when
none exists: a large cost per op. This module exists so the lookup succeeds
once and is cached. coll ops have no generated OpView classes (IRDL)."""
