"""mlc: a hackable, MLIR-style compiler for machine-learning programs."""

from mlc.ir import parse_module, print_module

__version__ = "0.1.0"

__all__ = ["__version__", "parse_module", "print_module"]
