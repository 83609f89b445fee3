"""
The external symbols a JIT-compiled object needs, checked against the process.

MCJIT resolves an external symbol it cannot find to address 0, so code that calls a
function the process lacks (compiler-rt's, say, were `mlc.backend.half_conversions`
not to define the ones LLVM emits for f16) jumps to 0 and kills the process.
Reading the undefined symbols from the object's ELF symbol table lets the JIT refuse
such code at compile time instead. Other object formats are not read (their symbols
are not checked).
"""

import struct
from collections.abc import Sequence

import llvmlite.binding as llvm

_ELF_MAGIC = b"\x7fELF"
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym: name, info, other, shndx, value, size
_IGNORED = {"", "_GLOBAL_OFFSET_TABLE_"}


def _symbols(object_code: bytes) -> tuple[list[str], set[str]]:
    """The names the object uses but does not define, and those it defines (64-bit
    little-endian ELF only; nothing for other formats)."""
    if not object_code.startswith(_ELF_MAGIC) or object_code[4:6] != b"\x02\x01":
        return [], set()
    sections = {}
    for section in llvm.ObjectFileRef.from_data(object_code).sections():
        sections[section.name()] = section.data()
    table, names = sections.get(b".symtab"), sections.get(b".strtab")
    if table is None or names is None:
        return [], set()
    undefined: list[str] = []
    defined: set[str] = set()
    for name_offset, _, _, section_index, _, _ in _SYMBOL.iter_unpack(table):
        name = names[name_offset : names.index(b"\0", name_offset)].decode()
        if name in _IGNORED:
            continue
        if section_index == 0:
            undefined.append(name)
        else:
            defined.add(name)
    return undefined, defined


def undefined_symbols(object_code: bytes) -> list[str]:
    """Names the object uses but does not define (64-bit little-endian ELF only)."""
    return _symbols(object_code)[0]


def unresolved_symbols(objects: Sequence[bytes]) -> list[str]:
    """The symbols that the objects use, none of them defines, and this process lacks
    (objects loaded into one engine resolve each other's symbols)."""
    read = [_symbols(object_code) for object_code in objects]
    defined = set[str]().union(*(names for _, names in read))
    return [
        name
        for undefined, _ in read
        for name in undefined
        if name not in defined and not llvm.address_of_symbol(name)
    ]
