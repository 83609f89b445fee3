"""`CompileError`: what `mlc.compile` raises for a program it cannot compile."""

# Defined beside the diagnostics it carries, so that the frontends, which sit below
# the compiler, raise it too (`mlc.import_onnx` raises a subclass).
from mlc.diagnostics import CompileError

__all__ = ["CompileError"]
