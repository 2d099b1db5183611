"""Python dialect modules for the bindings' lookup (see coll.py)."""
