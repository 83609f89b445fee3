"""`CompileError`: what `mlc.compile` raises for a program it cannot compile."""

from mlc.diagnostics import DiagnosticError


class CompileError(DiagnosticError):
    """The program could not be compiled: one-line diagnostics with locations."""
