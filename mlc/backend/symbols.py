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

import llvmlite.binding as llvm

_ELF_MAGIC = b"\x7fELF"
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym: name, info, other, shndx, value, size
_IGNORED = {"", "_GLOBAL_OFFSET_TABLE_"}


def undefined_symbols(object_code: bytes) -> list[str]:
    """Names the object uses but does not define (64-bit little-endian ELF only)."""
    if not object_code.startswith(_ELF_MAGIC) or object_code[4:6] != b"\x02\x01":
        return []
    sections = {}
    for section in llvm.ObjectFileRef.from_data(object_code).sections():
        sections[section.name()] = section.data()
    table, names = sections.get(b".symtab"), sections.get(b".strtab")
    if table is None or names is None:
        return []
    undefined = []
    for name_offset, _, _, section_index, _, _ in _SYMBOL.iter_unpack(table):
        name = names[name_offset : names.index(b"\0", name_offset)].decode()
        if section_index == 0 and name not in _IGNORED:
            undefined.append(name)
    return undefined


def unresolved_symbols(object_code: bytes) -> list[str]:
    """The undefined symbols of the object that this process does not provide."""
    return [name for name in undefined_symbols(object_code) if not llvm.address_of_symbol(name)]
