"""The pass listing of `mlc-opt --list-passes`: sections, filter and descriptions."""

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.passes import ModulePass

from mlc import pass_catalog
from mlc.pass_catalog import MLC_IR_DIALECTS, describe, dialect_modules, fitted
from mlc.registry import MLC_PASSES

PACKAGE = Path(__file__).parents[2] / "mlc"


def xdsl_dialects_imported_by_mlc() -> set[str]:
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found |= dialect_modules(node.module, [a.name for a in node.names])
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    found |= dialect_modules(alias.name, [])
    return found - {"utils"}


def test_mlc_ir_dialects_are_those_mlc_imports():
    assert xdsl_dialects_imported_by_mlc() == MLC_IR_DIALECTS


@pytest.fixture(scope="module")
def listed() -> dict[str, pass_catalog.ListedPass]:
    return {p.name: p for p in pass_catalog.catalog(include_all=True)}


def test_every_mlc_pass_is_in_its_section_with_a_description(listed):
    for name in MLC_PASSES:
        assert listed[name].section == "mlc"
        assert listed[name].description, name
        assert "docstring" not in listed[name].description, name


@pytest.mark.parametrize(
    ("name", "section"),
    [
        ("cse", "mlc"),  # mlc's replaces xDSL's, as `canonicalize` does
        ("dce", "xdsl"),
        ("lower-affine", "mlc"),  # mlc's replaces xDSL's, as `canonicalize` does
        ("convert-linalg-to-loops", "xdsl"),
        ("convert-scf-to-cf", "xdsl"),
        ("convert-arith-to-riscv", "other"),  # names and imports riscv
        ("x86-set-arch", "other"),  # imports only builtin, but names x86
        ("test-lower-linalg-to-snitch", "other"),
        ("test-constant-folding", "other"),  # xDSL's test pass
        ("printf-to-llvm", "other"),  # the printf dialect
        ("convert-scf-to-openmp", "other"),  # builds omp ops
        ("replace-incompatible-fpga", "other"),  # a target mlc does not have
        ("stencil-inlining", "other"),
        ("memref-streamify", "other"),
    ],
)
def test_sections(listed, name, section):
    assert listed[name].section == section


def test_xdsl_section_describes_every_pass(listed):
    for p in listed.values():
        if p.section == "xdsl":
            assert p.description, p.name


def test_listing_is_sorted_by_section_then_name():
    passes = pass_catalog.catalog(include_all=True)
    keys = [(list(pass_catalog.SECTIONS).index(p.section), p.name) for p in passes]
    assert keys == sorted(keys)
    assert len({p.name for p in passes}) == len(passes)


def test_default_listing_hides_other_passes_and_counts_them():
    text = pass_catalog.listing()
    every = pass_catalog.catalog(include_all=True)
    others = [p for p in every if p.section == "other"]
    assert f"\n{len(others)} more xDSL passes for other dialects: --list-passes=all\n" in text
    assert all(f"  {p.name} " not in text and f"  {p.name}\n" not in text for p in others)
    assert pass_catalog.listing() == text  # stable


def test_describe_takes_the_first_sentence_without_the_module_pointer():
    @dataclass(frozen=True)
    class Documented(ModulePass):
        """
        Fold things into other things (see the module docstring). More words
        on a second line.

        Another paragraph.
        """

        name = "documented"

    assert describe(Documented) == "Fold things into other things"


def test_describe_ignores_a_generated_dataclass_docstring():
    @dataclass(frozen=True)
    class Undocumented(ModulePass):
        name = "undocumented"
        size: int = 0

    assert Undocumented.__doc__
    assert describe(Undocumented) == ""


def test_fitted_cuts_long_lines_at_a_word():
    assert fitted("short") == "short"
    line = "word " * 40
    cut = fitted(line)
    assert len(cut) <= pass_catalog.LINE_WIDTH and cut.endswith("word...")
