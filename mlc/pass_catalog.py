"""
The pass listing of `mlc-opt --list-passes`: mlc's own passes, then the xDSL passes that
work on the IR mlc's pipeline is made of, each with a one-line description;
`--list-passes=all` adds the rest of xDSL's.

An xDSL pass *applies to mlc's dialects* when

- every xDSL dialect its module imports (the ops it matches and builds) is one of
  `MLC_IR_DIALECTS`, the dialects mlc's own modules import (`tests/unit/test_pass_catalog.py`
  keeps the two equal);
- neither its name nor its module path names another registered dialect or a target of
  `OTHER_TARGETS` (`x86-set-arch`, `test-lower-linalg-to-snitch`, `xdsl.backend.riscv...`,
  `replace-incompatible-fpga`);
- it is not one of xDSL's `test-` passes (MLIR's grammar for passes that exist for tests).

A description is the first sentence of the pass class's docstring, without a trailing
"(see the module docstring)", cut to fit a line of `LINE_WIDTH`; xDSL passes of the second
section whose docstrings say nothing useful take theirs from `XDSL_DESCRIPTIONS`.
"""

import ast
import inspect
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xdsl.passes import ModulePass

from mlc.registry import MLC_PASSES, dialect_factories, pass_factories

MLC_IR_DIALECTS = frozenset(
    {
        "affine",
        "arith",
        "builtin",
        "cf",
        "func",
        "gpu",
        "linalg",
        "llvm",
        "math",
        "memref",
        "scf",
        "tensor",
        "vector",
    }
)
"""The xDSL dialects of mlc's IR at some stage (`ml` and mlc's `linalg` parser aside)."""

XDSL_DESCRIPTIONS = {
    "dce": "Erase unused operations that have no side effects",
    "gpu-map-parallel-loops": "Map `scf.parallel` loops to GPU grid and block ids",
    "loop-hoist-memref": "Hoist a load/store pair of one memref location out of a loop",
    "lower-affine": "Lower `affine` ops to `arith`, `scf` and `memref`",
    "memref-to-gpu": "Turn `memref.alloc`/`dealloc` into `gpu.alloc`/`dealloc`",
    "reconcile-unrealized-casts": "Remove chains of `builtin.unrealized_conversion_cast`s",
    "scf-for-loop-range-folding": "Fold arithmetic on a loop's induction variable into its bounds",
    "scf-parallel-loop-tiling": "Tile the innermost `scf.parallel` loops by the given sizes",
}
"""Descriptions of listed xDSL passes whose docstrings give none (or only a name)."""

OTHER_TARGETS = frozenset({"fpga"})
"""Targets, not dialects, that an xDSL pass's name may be for."""

LINE_WIDTH = 120

SECTIONS = {
    "mlc": "mlc passes:",
    "xdsl": "xDSL passes for mlc's dialects:",
    "other": "other xDSL passes (other dialects and targets, xDSL's tests):",
}

MODULE_POINTER = re.compile(r"\s*\((see )?(the )?module( docstring)?\)")


@dataclass(frozen=True)
class ListedPass:
    name: str
    section: str  # a key of SECTIONS
    description: str


def describe(cls: type[ModulePass]) -> str:
    """The first sentence of the class docstring, or "" (a dataclass's generated one too)."""
    doc = cls.__doc__ or ""
    if not doc.strip() or doc.startswith(f"{cls.__name__}("):
        return ""
    paragraph = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    sentence = re.split(r"(?<=[.!?])\s", paragraph, maxsplit=1)[0]
    return MODULE_POINTER.sub("", sentence).rstrip(".")


def imported_dialects(module_name: str) -> set[str]:
    """The `xdsl.dialects` modules a (loaded) module imports, by dialect module name."""
    module = sys.modules[module_name]
    found: set[str] = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= dialect_modules(node.module, [alias.name for alias in node.names])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found |= dialect_modules(alias.name, [])
    return found - {"utils"}  # xdsl.dialects.utils: parsing helpers, no dialect


def dialect_modules(module: str, names: Iterable[str]) -> set[str]:
    """`from xdsl.dialects import a, b` -> {a, b}; `xdsl.dialects.x.y` -> {x}."""
    for package in ("xdsl.dialects.experimental", "xdsl.dialects"):
        if module == package:
            return set(names)
        if module.startswith(f"{package}."):
            return {module.removeprefix(f"{package}.").split(".")[0]}
    return set()


def names_foreign_dialect(cls: type[ModulePass], foreign: frozenset[str]) -> bool:
    """Whether the pass's name or module path names one of the `foreign` dialects."""
    name = f"-{cls.name}-"
    if any(f"-{dialect.replace('_', '-')}-" in name for dialect in foreign):
        return True
    return bool(set(cls.__module__.split(".")) & foreign)


def applies_to_mlc(cls: type[ModulePass], foreign: frozenset[str]) -> bool:
    if cls.name.startswith("test-") or names_foreign_dialect(cls, foreign):
        return False
    return imported_dialects(cls.__module__) <= MLC_IR_DIALECTS


def catalog(include_all: bool = False) -> list[ListedPass]:
    """Every pass to list, section by section, sorted by name within each."""
    factories: dict[str, Callable[[], type[ModulePass]]] = pass_factories()
    foreign = (frozenset(dialect_factories()) - MLC_IR_DIALECTS - {"ml"}) | OTHER_TARGETS
    listed: list[ListedPass] = []
    for name in sorted(factories):
        cls = factories[name]()
        if name in MLC_PASSES:
            listed.append(ListedPass(name, "mlc", describe(cls)))
        elif applies_to_mlc(cls, foreign):
            description = XDSL_DESCRIPTIONS.get(name) or describe(cls)
            listed.append(ListedPass(name, "xdsl", description))
        elif include_all:
            listed.append(ListedPass(name, "other", describe(cls)))
    return sorted(listed, key=lambda p: (list(SECTIONS).index(p.section), p.name))


def render(passes: list[ListedPass], hidden: int = 0) -> str:
    """The listing as text: a heading per section, names aligned, then a hint if `hidden`."""
    width = max((len(p.name) for p in passes), default=0) + 2
    lines: list[str] = []
    for section, heading in SECTIONS.items():
        members = [p for p in passes if p.section == section]
        if not members:
            continue
        lines += [*([""] if lines else []), heading]
        lines += [fitted(f"  {p.name:<{width}}{p.description}".rstrip()) for p in members]
    if hidden:
        lines += ["", f"{hidden} more xDSL passes for other dialects: --list-passes=all"]
    return "\n".join(lines) + "\n"


def fitted(line: str) -> str:
    """`line`, cut at a word and ended with "..." if it is longer than `LINE_WIDTH`."""
    if len(line) <= LINE_WIDTH:
        return line
    return line[: LINE_WIDTH - 3].rsplit(" ", 1)[0].rstrip(",;:") + "..."


def listing(include_all: bool = False) -> str:
    """What `mlc-opt --list-passes` (`include_all`: `--list-passes=all`) prints."""
    passes = catalog(include_all)
    hidden = 0 if include_all else len(pass_factories()) - len(passes)
    return render(passes, hidden)
