"""mlc: a hackable, MLIR-style compiler for machine-learning programs."""

from mlc import optim
from mlc.autodiff.api import grad, value_and_grad
from mlc.autodiff.vjp import vjp
from mlc.backend.assertions import RuntimeCheckError
from mlc.compiler import CompileError, Executable, compile
from mlc.compiler.jit import jit
from mlc.frontends.onnx import import_onnx
from mlc.frontends.trace import trace
from mlc.ir import parse_module, print_module
from mlc.version import __version__

__all__ = [
    "CompileError",
    "Executable",
    "RuntimeCheckError",
    "__version__",
    "compile",
    "grad",
    "import_onnx",
    "jit",
    "optim",
    "parse_module",
    "print_module",
    "trace",
    "value_and_grad",
    "vjp",
]
