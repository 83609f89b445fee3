"""
`CompiledObject`: what compiling a module for the host produces, and what the on-disk
cache keeps. Its own module because the JIT makes it, the cache stores it and the
runtime's own code (`mlc.backend.native`) both: none of them needs the others for it.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class CompiledObject:
    """
    A module compiled for the host: its machine code (an object file) and its optimised
    LLVM IR as bitcode, which is compact and turns back into text only when asked for.
    A module compiled in parts (`mlc.backend.split_codegen`) keeps its entry module's
    here and the other parts' in `parts`; all objects load into one engine.
    """

    object_code: bytes
    bitcode: bytes
    parts: tuple["CompiledObject", ...] = ()

    @property
    def objects(self) -> tuple[bytes, ...]:
        """Every object file, the entry module's first."""
        return (self.object_code, *(part.object_code for part in self.parts))
