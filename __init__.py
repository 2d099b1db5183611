"""coll: a collectives dialect on upstream MLIR (see README.md).

The collectives register their op classes first (coll/collectives/), so
that every layer, the verifier included, sees the whole op set whichever
coll module is imported first."""
# pytest also imports this file as a package named after the checkout's
# folder (the repository root is the package): only `coll` loads the op set.
if __name__ == "coll":
    from . import collectives  # noqa: F401
