"""
mlc's own dialects; the standard ones come from xDSL, with what mlc declares of them
that xDSL 0.74 leaves out (`arith_effects`), applied once by importing this package.
"""

from mlc.dialects import arith_effects  # noqa: F401
